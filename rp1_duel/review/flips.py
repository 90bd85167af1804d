"""The flip ledger: every time a seat's stance moved between its turns, and the reason the turn cites for
moving (docs/protocol.md section 11, "Against the openings").

Research on multi-agent debate finds seats talked out of a correct opening and sliding into agreement
without saying why; the ledger lets a reader (and ``duel bench score``) see each move and its stated cause.
Pure: from a record's replayed history.

Decisions (section 11):

- The stance is the position the ledger follows: a Position's words change every turn, its stance only
  when the seat moves. A move is any change, up or down the scale (toward consensus or away from it).
- A turn whose heading names no known stance (a chair's ``CHAIR``, a misspelt one) moves nothing: the seat's
  last known stance carries on, and the next turn with one is compared against it.
- The reason is the turn's Stance Revision Support, its items joined by ``; `` (the section the protocol
  gives for saying why a stance changed); empty when the turn cites none, which the bench counts as silent.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..record import History
from ..vocabulary import STANCES

__all__ = ["REASON_SEPARATOR", "Flip", "flip_ledger"]

REASON_SEPARATOR = "; "


@dataclass(kw_only=True, frozen=True)
class Flip:
    """One move of a seat's stance: in which turn, from what to what, and the reason that turn cites."""

    seat: int
    turn: int
    from_stance: str
    to_stance: str
    reason: str  # the turn's Stance Revision Support items, joined; "" when it cites none


def flip_ledger(history: History) -> tuple[Flip, ...]:
    """Each move of a seat's stance between its turns in ``history``, in turn order."""
    last: dict[int, str] = {}  # seat -> its last known stance
    flips = []
    for number, turn in zip(history.numbers, history.turns, strict=True):
        stance = turn.stance
        if stance is None or stance not in STANCES:  # a chair names CHAIR: no stance
            continue
        seat = history.schedule.speaker(number)
        before = last.get(seat)
        if before is not None and before != stance:
            reason = REASON_SEPARATOR.join(item.text.strip() for item in turn.stance_revision_support)
            flips.append(Flip(seat=seat, turn=number, from_stance=before, to_stance=stance, reason=reason))
        last[seat] = stance
    return tuple(flips)
