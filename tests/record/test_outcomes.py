"""Outcomes of docs/protocol.md section 8, from the latest turn of each seat."""

from __future__ import annotations

import pytest

from rp1_duel.record.outcomes import Evaluation, TurnSummary, decide_panel, evaluate
from rp1_duel.schedule import Schedule
from rp1_duel.vocabulary import ACCEPTED_CONSENSUS, DISSENT, MAX_TURNS, OUTCOMES

from helpers import panel

OPEN, CONV, ACCEPT, DISS, REV = "OPEN_TO_DEBATE", "CONVERGING", "ACCEPTING_CONSENSUS", "DISSENTING", "REVISING"


def debate(*turns: tuple[str, bool]) -> list[TurnSummary]:
    """Turns in order, seats alternating from seat 1: (stance, has_blocking)."""
    return [
        TurnSummary(seat=1 + index % 2, stance=stance, has_blocking=blocking)
        for index, (stance, blocking) in enumerate(turns)
    ]


def test_outcomes_are_the_five_protocol_names_in_order():
    assert OUTCOMES == ("ACCEPTED_CONSENSUS", "DISSENT", "MAX_TURNS", "TIMEOUT", "INVALIDATED")


def test_no_outcome_before_both_seats_have_written():
    assert evaluate([], panel(2, 6)) == Evaluation(None, candidate_convergence=False)
    assert evaluate(debate((ACCEPT, False)), panel(2, 6)) == Evaluation(None, candidate_convergence=False)
    assert evaluate(debate((DISS, False)), panel(2, 2)) == Evaluation(None, candidate_convergence=False)


def test_accepted_consensus_when_both_latest_accept_without_blocking():
    assert evaluate(debate((OPEN, True), (ACCEPT, False), (ACCEPT, False)), panel(2, 6)) == Evaluation(
        ACCEPTED_CONSENSUS, candidate_convergence=True
    )


def test_no_consensus_while_a_latest_turn_blocks():
    assert evaluate(debate((ACCEPT, True), (ACCEPT, False)), panel(2, 6)) == Evaluation(
        None, candidate_convergence=False
    )


def test_consensus_looks_only_at_each_seats_latest_turn():
    # Seat 1 accepted earlier, but its latest turn only converges.
    assert evaluate(debate((ACCEPT, False), (ACCEPT, False), (CONV, False)), panel(2, 6)) == Evaluation(
        None, candidate_convergence=True
    )


def test_dissent_when_both_latest_dissent():
    assert evaluate(debate((DISS, False), (DISS, False)), panel(2, 6)) == Evaluation(
        DISSENT, candidate_convergence=False
    )
    assert evaluate(debate((DISS, True), (OPEN, False), (DISS, False), (DISS, True)), panel(2, 6)).outcome == DISSENT


@pytest.mark.parametrize(
    "last_two",
    [
        ((CONV, True), (CONV, False)),
        ((CONV, False), (OPEN, True)),
        ((DISS, False), (CONV, False)),
        ((ACCEPT, False), (DISS, False)),
        ((ACCEPT, True), (ACCEPT, False)),
    ],
)
def test_dissent_at_max_turns_while_blocking_or_dissenting_remains(last_two):
    turns = debate((OPEN, False), (OPEN, False), *last_two)
    assert evaluate(turns, panel(2, 4)).outcome == DISSENT
    assert evaluate(turns, panel(2, 5)).outcome is None  # the same turns before the last turn is written


@pytest.mark.parametrize(
    "last_two", [((CONV, False), (CONV, False)), ((OPEN, False), (REV, False)), ((ACCEPT, False), (CONV, False))]
)
def test_max_turns_when_the_last_turn_is_written_without_consensus_or_dissent(last_two):
    assert evaluate(debate((OPEN, True), (DISS, True), *last_two), panel(2, 4)).outcome == MAX_TURNS


def test_consensus_on_the_last_turn_wins_over_max_turns():
    assert evaluate(debate((OPEN, False), (ACCEPT, False), (ACCEPT, False)), panel(2, 3)).outcome == ACCEPTED_CONSENSUS


def test_both_dissenting_on_the_last_turn_is_dissent():
    assert evaluate(debate((DISS, False), (DISS, False)), panel(2, 2)).outcome == DISSENT


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ((CONV, False), (CONV, False), True),
        ((CONV, False), (ACCEPT, False), True),
        ((ACCEPT, False), (ACCEPT, False), True),
        ((CONV, True), (CONV, False), False),
        ((CONV, False), (ACCEPT, True), False),
        ((CONV, False), (OPEN, False), False),
        ((REV, False), (CONV, False), False),
        ((DISS, False), (ACCEPT, False), False),
    ],
)
def test_candidate_convergence_needs_both_latest_turns_converging_without_blocking(first, second, expected):
    assert evaluate(debate(first, second), panel(2, 6)).candidate_convergence is expected


def test_candidate_convergence_uses_latest_turns_of_each_seat():
    assert evaluate(debate((CONV, False), (OPEN, False), (CONV, False), (CONV, False)), panel(2, 6)) == Evaluation(
        None, candidate_convergence=True
    )
    assert evaluate(debate((CONV, False), (CONV, False), (CONV, True)), panel(2, 6)) == Evaluation(
        None, candidate_convergence=False
    )


def test_seats_is_required_by_the_outcome_rules():
    three_accepting = debate((ACCEPT, False), (ACCEPT, False), (ACCEPT, False))  # seats 1, 2, 1
    with pytest.raises(TypeError):
        decide_panel(three_accepting, 6)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Schedule(max_turns=6, chair=False)  # type: ignore[call-arg]
    # The seats given decide: two seats have both accepted, a panel of three still waits for seat 3.
    assert evaluate(three_accepting, panel(2, 6)).outcome == ACCEPTED_CONSENSUS
    assert evaluate(three_accepting, panel(3, 6)).outcome is None
