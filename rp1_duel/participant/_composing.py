"""One draft of a turn, composed by a seat's provider (a model, a person or a script) by the turn
deadline: a model's requests retried through overloads and cut streams, and the usage of every
request logged as a ``usage`` event with who answered it (docs/protocol.md sections 4 and 9)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..coordination import Provenance, Usage, same_model
from ..vocabulary import EventType
from .budget import budget_stop, sent_ceiling
from .metering import RequestMeter
from .providers import ProviderError
from .reporter import DEBATING
from .retry import RetryPolicy, compose_with_retries
from .usage import recorded

if TYPE_CHECKING:
    from ..coordination import DuelService, Seat
    from ._deadlines import Deadlines
    from .providers import Composition, Provider, TurnRequest
    from .reporter import Reporter

__all__ = ["Composer", "end_writer"]


def end_writer(provider: Provider) -> None:
    """End what a person writes in (their editor, a child process of this one): the turn is given up."""
    stop = getattr(provider, "stop", None)  # a person's provider only: a model or a script holds no process
    if stop is not None:
        stop()


@dataclass(kw_only=True)
class Composer:
    """Composes the drafts of one seat and logs what each cost."""

    provider: Provider
    service: DuelService
    seat: Seat
    reporter: Reporter
    deadlines: Deadlines
    retry_policy: RetryPolicy = field(default_factory=RetryPolicy)
    budget_usd: float | None = None  # duel join --budget-usd: this seat's money cap in this duel
    # The other models the API answered as, each said once.
    _served_others: set[str] = field(default_factory=set, init=False)

    def compose(
        self, request: TurnRequest, deadline: float, lost: threading.Event, number: int, *, repairing: tuple[str, ...]
    ) -> Composition | None:
        """One draft (``repairing`` the rule codes the one before broke), retried through overloads and cut
        streams until the turn deadline and abandoned at it (None); the usage of every request it sent logged,
        a draft that failed included, with who answered it."""
        provider, report = self.provider, self.reporter
        if not provider.remote:
            # A person's or a script's draft sends no request; its usage event still says who wrote it, and how long it took.
            started = time.monotonic()
            written = self.deadlines.run(lambda: provider.compose(request, report.progress), deadline)
            if written is None:
                end_writer(provider)  # the deadline passed: a person's editor closes with the turn
            self._record_usage(number, Usage(seconds=time.monotonic() - started), repairing=repairing)
            return written
        report.composing()
        meter = RequestMeter(request, report.progress)
        try:
            composition = self.deadlines.run(
                lambda: compose_with_retries(
                    lambda: self._attempt(request, meter, number),
                    self.retry_policy,
                    deadline,
                    clock=self.deadlines.wall,
                    sleep=lambda seconds: not lost.wait(seconds),
                    on_retry=report.retrying,
                ),
                deadline,
            )
        except ProviderError:
            self._record_usage(number, meter.spent(), repairing=repairing)
            raise
        if composition is None:
            self._record_usage(number, meter.spent(), repairing=repairing)
            return None
        served = composition.served_model
        usage = self._record_usage(number, meter.answered(composition.usage), repairing=repairing, served=served)
        report.composed(usage)
        self._notice_served_model(served)
        return replace(composition, usage=usage)

    def _attempt(self, request: TurnRequest, meter: RequestMeter, number: int) -> Composition:
        """One request, sent only when it cannot pass the seat's cap: what the seat's usage events recorded in
        this duel, this draft's failed requests and the request's worst case (``BUDGET_EXCEEDED`` otherwise)."""
        if self.budget_usd is not None:
            seat = self.seat
            spent = recorded(self.service.events(seat.duel_id, (EventType.USAGE,)), seat.participant_id)
            stop = budget_stop(
                request,
                cap_usd=self.budget_usd,
                spent=spent + meter.spent(),
                model=self.provider.model,
                ceiling=sent_ceiling(self.provider, request.max_tokens),
                number=number,
            )
            if stop is not None:
                raise stop
        return meter.attempt(self.provider.compose)

    def _record_usage(
        self, number: int, usage: Usage, *, repairing: tuple[str, ...], served: str | None = None
    ) -> Usage:
        usage = replace(usage, repairs=int(bool(repairing)))
        provider = self.provider
        if usage.requests or not provider.remote:
            provenance = Provenance(
                provider=provider.name,
                requested_model=provider.model,
                served_model=served,
                reasoning=provider.reasoning,
            )
            self.service.record_usage(self.seat, number, usage, provenance=provenance, repair_codes=repairing)
        return usage

    def _notice_served_model(self, served: str | None) -> None:
        """A line, once per model, when the API says another model answered than the one asked for."""
        asked = self.provider.model
        if served is None or same_model(asked, served) or served in self._served_others:
            return
        self._served_others.add(served)
        self.reporter.state(
            DEBATING, f"asked for {asked}, the API answered as {served}: logged, and `duel report` names it"
        )
