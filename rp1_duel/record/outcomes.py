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


# Which row of section 8's table reached an outcome (``duel report`` says why).
BOTH_ACCEPTING = "both_accepting"
BOTH_DISSENTING = "both_dissenting"
LAST_TURN_BLOCKED = "last_turn_blocked"  # turn max_turns written with a blocking item or a DISSENTING stance left
LAST_TURN = "last_turn"  # turn max_turns written without either


@dataclass(frozen=True)
class Decision:
    """The outcome `turns` reach, the rule that reached it, and the turns it looked at."""

    outcome: Outcome | None
    rule: str | None
    latest: tuple[int, ...]  # 1-based numbers of each seat's latest turn (seat 1's first); () before both wrote
    candidate_convergence: bool


def decide(turns: Sequence[TurnSummary], max_turns: int) -> Decision:
    """The outcome reached after `turns` (in order), if any, with the rule and turns that decided it."""
    latest = {turn.seat: number for number, turn in enumerate(turns, start=1)}  # later turns overwrite earlier ones
    if 1 not in latest or 2 not in latest:
        return Decision(None, None, (), False)  # an outcome needs a turn from each seat
    numbers = (latest[1], latest[2])
    pair = (turns[numbers[0] - 1], turns[numbers[1] - 1])
    blocked = any(turn.has_blocking for turn in pair)
    stances = {turn.stance for turn in pair}
    convergent = not blocked and stances <= set(_CONVERGENT)
    if stances == {ACCEPTING_CONSENSUS} and not blocked:
        return Decision(ACCEPTED_CONSENSUS, BOTH_ACCEPTING, numbers, convergent)
    if stances == {DISSENTING}:
        return Decision(DISSENT, BOTH_DISSENTING, numbers, convergent)
    if len(turns) >= max_turns:
        if blocked or DISSENTING in stances:
            return Decision(DISSENT, LAST_TURN_BLOCKED, numbers, convergent)
        return Decision(MAX_TURNS, LAST_TURN, numbers, convergent)
    return Decision(None, None, numbers, convergent)


def evaluate(turns: Sequence[TurnSummary], max_turns: int) -> Evaluation:
    """The outcome reached after `turns` (in order), if any, and candidate convergence."""
    decision = decide(turns, max_turns)
    return Evaluation(decision.outcome, decision.candidate_convergence)
