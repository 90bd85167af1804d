"""Who spent what in one bench run: each seat's tokens and estimated cost, from its ``usage`` events.

Read from the store, not from the seats' ``--json`` summaries: a seat interrupted by a cap prints none,
and its requests were paid for all the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..coordination import DuelService, UsageRecorded
from ..errors import DuelError
from ..participant import cost_usd, total
from ..vocabulary import EventType

__all__ = ["SeatSpend", "duel_spend", "spent_usd"]


@dataclass(frozen=True, kw_only=True)
class SeatSpend:
    """One seat's spend in one run, as ``result.json`` lists it."""

    seat: str  # its label: "seat 1", "the chair", "single"
    model: str  # as requested
    served: str | None  # what the API said answered its last draft; None: it did not say, or no request
    tokens_in: int  # every input token, cached ones included
    tokens_out: int
    usd: float | None  # priced as the model requested; None for a model the price table does not know
    costliest_draft_usd: float = 0.0  # the most one turn's requests cost: what a later share must cover

    def to_json(self) -> dict[str, Any]:
        """The fields ``result.json`` holds for a seat."""
        return {
            "seat": self.seat,
            "model": self.model,
            "served": self.served,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "usd": self.usd,
        }


def spent_usd(spends: Sequence[SeatSpend]) -> float:
    """What the seats spent together, an unpriced seat counting nothing (a bench refuses unpriced models)."""
    return sum(spend.usd or 0.0 for spend in spends)


def duel_spend(service: DuelService, *, target: str, models: Mapping[int, tuple[str, str]]) -> list[SeatSpend]:
    """Each seat's spend in the duel about ``target``, in seat order; ``models`` maps a seat number to
    its label and requested model. A duel never created (no seat taken) spent nothing."""
    try:
        status = service.status(target=target)
        events = service.events(status.duel.id, (EventType.USAGE,))
    except DuelError:
        status, events = None, []
    ids = {view.seat: view.id for view in status.participants} if status else {}
    found = []
    for seat, (label, model) in models.items():
        drafts = [
            event.data
            for event in events
            if isinstance(event.data, UsageRecorded) and event.participant_id == ids.get(seat)
        ]
        usage = total(draft.usage for draft in drafts)
        served = next((d.provenance.served_model for d in reversed(drafts) if d.provenance), None)
        costs = [cost_usd(model, draft.usage) or 0.0 for draft in drafts]
        found.append(
            SeatSpend(
                seat=label,
                model=model,
                served=served,
                tokens_in=usage.all_input_tokens,
                tokens_out=usage.output_tokens,
                usd=cost_usd(model, usage),
                costliest_draft_usd=max(costs, default=0.0),
            )
        )
    return found
