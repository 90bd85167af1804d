"""Whether a duel has reached an outcome, from its turns (docs/protocol.md section 8).

Pure: the service calls `evaluate` after every append, and ``duel validate`` on every
prefix of a record, with the stances and blocking flags of the turns written so far.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..schedule import CHAIR_SEAT, CHAIR_TURNS, Schedule
from ..vocabulary import (
    ACCEPTED_CONSENSUS,
    ACCEPTING_CONSENSUS,
    CONVERGING,
    DISSENT,
    DISSENTING,
    MAX_TURNS,
    Outcome,
)

__all__ = [
    "BOTH_ACCEPTING",
    "BOTH_DISSENTING",
    "LAST_TURN",
    "LAST_TURN_BLOCKED",
    "Decision",
    "Evaluation",
    "TurnSummary",
    "decide",
    "decide_panel",
    "evaluate",
]

_CONVERGENT = (CONVERGING, ACCEPTING_CONSENSUS)


@dataclass(kw_only=True, frozen=True)
class TurnSummary:
    """One turn as the outcome rules read it: the seat that wrote it, its stance, whether it blocks,
    and the revision of the source it accepts (None when unknown)."""

    seat: int
    stance: str
    has_blocking: bool
    revision: str | None = None


@dataclass(frozen=True)
class Evaluation:
    """The outcome a duel's turns have reached, if any, and whether it is a candidate for convergence."""

    outcome: Outcome | None  # never TIMEOUT or INVALIDATED: those come only from a close
    candidate_convergence: bool


# Which row of section 8's table reached an outcome (``duel report`` says why).
BOTH_ACCEPTING = "both_accepting"
BOTH_DISSENTING = "both_dissenting"
LAST_TURN_BLOCKED = "last_turn_blocked"  # turn max_turns written with a blocking item or a DISSENTING stance left
LAST_TURN = "last_turn"  # turn max_turns written without either


@dataclass(kw_only=True, frozen=True)
class Decision:
    """The outcome `turns` reach, the rule that reached it, and the turns it looked at."""

    outcome: Outcome | None
    rule: str | None
    latest: tuple[int, ...]  # 1-based numbers of each seat's latest turn (seat 1's first); () before all wrote
    candidate_convergence: bool


def decide(turns: Sequence[TurnSummary], schedule: Schedule) -> Decision:
    """The outcome reached after `turns` (in order), if any, with the rule and turns that decided it.

    With a chair the phases are fixed: the panel's turns decide, and only once the chair's
    synthesis follows the closing round (``latest`` then counts from turn 0).
    """
    if not schedule.chair:
        return decide_panel(turns, schedule.max_turns, seats=schedule.seats)
    numbers = [number for number, turn in enumerate(turns) if turn.seat != CHAIR_SEAT]  # turn 0 is the chair's
    panel = decide_panel([turns[number] for number in numbers], schedule.max_turns, seats=schedule.seats)
    latest = tuple(numbers[index - 1] for index in panel.latest)
    if len(turns) < schedule.max_turns + CHAIR_TURNS:  # the synthesis (turn max_turns + 2) is not written yet
        return Decision(outcome=None, rule=None, latest=latest, candidate_convergence=panel.candidate_convergence)
    return Decision(
        outcome=panel.outcome, rule=panel.rule, latest=latest, candidate_convergence=panel.candidate_convergence
    )


def decide_panel(turns: Sequence[TurnSummary], max_turns: int, *, seats: int) -> Decision:
    """:func:`decide` over the panel's turns alone, no chair's among them.

    With more than two seats every rule reads the latest turn of every seat ("both" is
    "all"): a single dissenter does not end the duel early, it ends it DISSENT at turn
    ``max_turns`` if it still dissents then (docs/protocol.md section 12).
    """
    latest = {turn.seat: number for number, turn in enumerate(turns, start=1)}  # later turns overwrite earlier ones
    if any(seat not in latest for seat in range(1, seats + 1)):
        return Decision(
            outcome=None, rule=None, latest=(), candidate_convergence=False
        )  # an outcome needs a turn from each seat
    numbers = tuple(latest[seat] for seat in range(1, seats + 1))
    last = [turns[number - 1] for number in numbers]
    blocked = any(turn.has_blocking for turn in last)
    stances = {turn.stance for turn in last}
    convergent = not blocked and stances <= set(_CONVERGENT)
    # Consensus on the exact text: every seat's latest turn accepts one revision. An edit after a
    # seat accepted leaves that seat's acceptance on the older revision until it accepts again.
    agreed = len({turn.revision for turn in last if turn.revision is not None}) <= 1
    if stances == {ACCEPTING_CONSENSUS} and not blocked and agreed:
        return Decision(
            outcome=ACCEPTED_CONSENSUS, rule=BOTH_ACCEPTING, latest=numbers, candidate_convergence=convergent
        )
    if stances == {DISSENTING}:
        return Decision(outcome=DISSENT, rule=BOTH_DISSENTING, latest=numbers, candidate_convergence=convergent)
    if len(turns) >= max_turns:
        if blocked or DISSENTING in stances:
            return Decision(outcome=DISSENT, rule=LAST_TURN_BLOCKED, latest=numbers, candidate_convergence=convergent)
        return Decision(outcome=MAX_TURNS, rule=LAST_TURN, latest=numbers, candidate_convergence=convergent)
    return Decision(outcome=None, rule=None, latest=numbers, candidate_convergence=convergent)


def evaluate(turns: Sequence[TurnSummary], schedule: Schedule) -> Evaluation:
    """The outcome reached after `turns` (in order), if any, and candidate convergence."""
    decision = decide(turns, schedule)
    return Evaluation(decision.outcome, decision.candidate_convergence)
