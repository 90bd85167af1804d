"""Who wrote each turn, and with what; and what a report's headline names beside the outcome (docs/protocol.md
section 11, "Provenance and the headline's alerts").

A turn's provenance is read off its ``usage`` events (section 9), one a draft: the provider, the model asked for,
the model the API says answered, the reasoning level, the drafts' tokens, cost, retries and seconds, and its
repairs (with its ``turn_rejected`` events). The alerts are what an outcome must never hide: a TIMEOUT's seat and
turn, a seat that stopped (``provider_failed``), a model that answered in another's place, a turn accepted only
after repairs. Pure, as :mod:`rp1_duel.review.report` is: built from the replayed history, the seats and the events.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final

from ..coordination import Event, ProviderFailed, TurnRejected, UsageRecorded, same_model, seat_name
from ..participant import PricedUsage, summary, total
from ..record import History
from ..schedule import CHAIR_SEAT
from ..vocabulary import TIMEOUT
from .decision import and_list

__all__ = [
    "ALERT_KINDS",
    "MODEL_MISMATCH",
    "REPAIRED",
    "SEAT_STOPPED",
    "TIMED_OUT",
    "Alert",
    "TurnProvenance",
    "alerts",
    "turn_provenance",
]

# What an alert is about, in the order the headline names them.
TIMED_OUT: Final = "timeout"
SEAT_STOPPED: Final = "seat_stopped"
MODEL_MISMATCH: Final = "model_mismatch"
REPAIRED: Final = "repaired"
ALERT_KINDS = (TIMED_OUT, SEAT_STOPPED, MODEL_MISMATCH, REPAIRED)


@dataclass(kw_only=True, frozen=True)
class TurnProvenance:
    """One turn's drafts, from its ``usage`` and ``turn_rejected`` events: who answered, with what, at what cost."""

    turn: int
    seat: int
    written: bool  # the record holds it; a turn that timed out or whose seat stopped does not
    provider: str | None  # None: not recorded (an agent through `duel tools`, or a log from before provenance)
    requested_model: str | None  # as logged; else the seat's model in the front matter
    served_model: str | None  # what the API said of the last draft; None: it did not say, or not recorded
    reasoning: str | None  # None: the model's default, or not recorded
    usage: PricedUsage | None  # every draft's requests summed, priced as the model asked for; None: no usage event
    repairs: int
    repair_codes: tuple[str, ...]  # sorted: the rule codes the rejected drafts broke, as far as they were logged

    @property
    def model_mismatch(self) -> bool:
        """Whether the API said another model answered than the one asked for (events.same_model)."""
        requested, served = self.requested_model, self.served_model
        return requested is not None and served is not None and not same_model(requested, served)

    def to_json(self) -> dict[str, Any]:
        """The fields in order, the usage as the participants' is written, then ``model_mismatch``."""
        found = asdict(self)
        found["usage"] = None if self.usage is None else self.usage.to_json()
        return {**found, "model_mismatch": self.model_mismatch}


@dataclass(kw_only=True, frozen=True)
class Alert:
    """What the headline names beside the outcome: its kind (:data:`ALERT_KINDS`), the seat and turns, in words."""

    kind: str
    seat: int
    turns: tuple[int, ...]  # () for a seat never taken
    text: str


def turn_provenance(
    events: Sequence[Event], history: History, models: Mapping[int, str], env: Mapping[str, str]
) -> tuple[TurnProvenance, ...]:
    """Each turn of the record, and each other turn a draft was logged for, in order; ``models``: each seat's
    model as the front matter names it, for turns whose events do not say."""
    drafts: dict[int, list[UsageRecorded]] = {}
    rejected: dict[int, list[TurnRejected]] = {}
    for event in events:
        if isinstance(event.data, UsageRecorded):
            drafts.setdefault(event.data.turn_number, []).append(event.data)
        elif isinstance(event.data, TurnRejected):
            rejected.setdefault(event.data.turn_number, []).append(event.data)
    speaker, written = history.schedule.speaker, set(history.numbers)
    return tuple(
        _turn(
            number,
            speaker(number),
            drafts.get(number, []),
            rejected.get(number, []),
            written=number in written,
            model=models.get(speaker(number)),
            env=env,
        )
        for number in sorted(written | set(drafts))
    )


def _turn(
    number: int,
    seat: int,
    drafts: Sequence[UsageRecorded],
    rejected: Sequence[TurnRejected],
    *,
    written: bool,
    model: str | None,
    env: Mapping[str, str],
) -> TurnProvenance:
    known = next((draft.provenance for draft in reversed(drafts) if draft.provenance is not None), None)
    requested = known.requested_model if known else model
    usage = summary(total(d.usage for d in drafts), requested or "", env) if drafts else None
    codes = {code for draft in drafts for code in draft.repair_codes} | {c for r in rejected for c in r.codes}
    # A seat either repairs its drafts before appending (`duel join`: usage events say so) or has its appends
    # refused (`duel tools`, `duel mcp`: turn_rejected events): the larger count is the turn's repairs.
    repairs = max(sum(draft.usage.repairs for draft in drafts), len(rejected))
    return TurnProvenance(
        turn=number,
        seat=seat,
        written=written,
        provider=known.provider if known else None,
        requested_model=requested,
        served_model=known.served_model if known else None,
        reasoning=known.reasoning if known else None,
        usage=usage,
        repairs=repairs,
        repair_codes=tuple(sorted(codes)),
    )


def alerts(
    provenance: Sequence[TurnProvenance],
    events: Sequence[Event],
    history: History,
    *,
    outcome: str | None,
    names: Mapping[int, str],
) -> tuple[Alert, ...]:
    """What the headline names, in :data:`ALERT_KINDS` order: the seat and turn a TIMEOUT fell on, each seat that
    stopped, each seat an API answered for with another model, each turn of the record accepted after repairs;
    ``names``: the name in each seat the front matter names."""
    return (
        *(_timeouts(history, names) if outcome == TIMEOUT else ()),
        *_stopped(events, history, names),
        *_mismatches(provenance, names),
        *_repaired(provenance, names),
    )


def _timeouts(history: History, names: Mapping[int, str]) -> list[Alert]:
    """Who a TIMEOUT fell on, as the close's reason names them (section 8): each seat not taken before turn 1,
    else the seat due to write the record's next turn."""
    schedule = history.schedule
    seats = [*([CHAIR_SEAT] if schedule.chair else []), *range(1, schedule.seats + 1)]
    empty = [seat for seat in seats if seat not in names]
    if not history.turns and empty:
        late = "was not taken by the end of the peer wait"
        return [
            Alert(kind=TIMED_OUT, seat=seat, turns=(), text=f"TIMEOUT before turn 1: {seat_name(seat)} {late}")
            for seat in empty
        ]
    number = history.next_number
    seat = schedule.speaker(number)
    text = f"TIMEOUT on turn {number}: {_who(seat, names)} did not finish it by its deadline"
    return [Alert(kind=TIMED_OUT, seat=seat, turns=(number,), text=text)]


def _stopped(events: Sequence[Event], history: History, names: Mapping[int, str]) -> list[Alert]:
    """Each ``provider_failed``: the seat stopped there; the turn in the record says it was run again."""
    found = []
    for failed in (event.data for event in events if isinstance(event.data, ProviderFailed)):
        again = "; run again, it wrote the turn" if failed.turn_number in history.numbers else ""
        text = f"{_who(failed.seat, names)} stopped at turn {failed.turn_number}: {failed.why}{again}"
        found.append(Alert(kind=SEAT_STOPPED, seat=failed.seat, turns=(failed.turn_number,), text=_capital(text)))
    return found


def _mismatches(provenance: Sequence[TurnProvenance], names: Mapping[int, str]) -> list[Alert]:
    """One alert per seat and pair of models asked for and answered as, with every turn it happened in."""
    turns: dict[tuple[int, str, str], list[int]] = {}
    for turn in provenance:
        if turn.model_mismatch and turn.requested_model and turn.served_model:
            turns.setdefault((turn.seat, turn.requested_model, turn.served_model), []).append(turn.turn)
    found = []
    for (seat, requested, served), numbers in turns.items():
        which = f"turn{'s' if len(numbers) > 1 else ''} {and_list([str(n) for n in numbers])}"
        text = f"{_who(seat, names)} asked for {requested}; the API answered as {served} ({which})"
        found.append(Alert(kind=MODEL_MISMATCH, seat=seat, turns=tuple(numbers), text=_capital(text)))
    return found


def _repaired(provenance: Sequence[TurnProvenance], names: Mapping[int, str]) -> list[Alert]:
    """Each turn of the record accepted after repairs, with the rule codes they repaired."""
    found = []
    for turn in provenance:
        if turn.written and turn.repairs:
            why = ", ".join(turn.repair_codes) or "the violations were not logged"
            repairs = f"{turn.repairs} repair{'' if turn.repairs == 1 else 's'}"
            name = names.get(turn.seat)
            who = f"{seat_name(turn.seat)}, {name}" if name else seat_name(turn.seat)
            found.append(
                Alert(
                    kind=REPAIRED,
                    seat=turn.seat,
                    turns=(turn.turn,),
                    text=f"Turn {turn.turn} ({who}) was accepted after {repairs} ({why})",
                )
            )
    return found


def _who(seat: int, names: Mapping[int, str]) -> str:
    """`seat 2 (Bob)`, `the chair (Ada)`, or `seat 2` for a seat the front matter names no one for."""
    name = names.get(seat)
    return f"{seat_name(seat)} ({name})" if name else seat_name(seat)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
