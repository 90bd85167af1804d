"""Whether a duel has reached an outcome, from its turns (docs/protocol.md section 8).

Pure: the service calls `evaluate` after every append, and ``duel validate`` on every
prefix of a record, with the stances and blocking flags of the turns written so far.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..vocabulary import (
    ACCEPTED_CONSENSUS,
    ACCEPTING_CONSENSUS,
    CONVERGING,
    DISSENT,
    DISSENTING,
    MAX_TURNS,
    Outcome,
)

_CONVERGENT = (CONVERGING, ACCEPTING_CONSENSUS)


def seat_of(number: int) -> int:
    """Seat 1 writes odd turns, seat 2 even ones (docs/protocol.md section 4)."""
    return 1 if number % 2 else 2


@dataclass(frozen=True)
class TurnSummary:
    seat: int
    stance: str
    has_blocking: bool


@dataclass(frozen=True)
class Evaluation:
    outcome: Outcome | None  # never TIMEOUT or INVALIDATED: those come only from a close
    candidate_convergence: bool


def evaluate(turns: Sequence[TurnSummary], max_turns: int) -> Evaluation:
    """The outcome reached after `turns` (in order), if any, and candidate convergence."""
    latest = {turn.seat: turn for turn in turns}  # later turns overwrite earlier ones
    if 1 not in latest or 2 not in latest:
        return Evaluation(None, False)  # an outcome needs a turn from each seat
    pair = (latest[1], latest[2])
    blocked = any(turn.has_blocking for turn in pair)
    stances = {turn.stance for turn in pair}
    convergent = not blocked and stances <= set(_CONVERGENT)
    if stances == {ACCEPTING_CONSENSUS} and not blocked:
        return Evaluation(ACCEPTED_CONSENSUS, convergent)
    if stances == {DISSENTING}:
        return Evaluation(DISSENT, convergent)
    if len(turns) >= max_turns:
        return Evaluation(DISSENT if blocked or DISSENTING in stances else MAX_TURNS, convergent)
    return Evaluation(None, convergent)
