"""The seat behind `duel mcp`, in one process (issue 37, items 1, 2 and 5; docs/protocol.md, "duel mcp"):
a wait never races the peer, every wait is bounded, and what the seat says of itself is true."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rp1_duel.coordination import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.mcp_server import AgentSeat, SeatDefaults
from rp1_duel.settings import DuelSettings
from rp1_duel.vocabulary import CLAIM_LOCK, WAIT_TURN

from helpers import Player, claim, join, make_turn

ALICE = ("Alice", "claude-code", "claude-x")
BOB = ("Bob", "codex", "gpt-x")


def agent_seat(service: DuelService, source: Path, *, wait_seconds: float = 45.0) -> AgentSeat:
    defaults = SeatDefaults(
        target=str(source),
        name=ALICE[0],
        harness=ALICE[1],
        model=ALICE[2],
        topic=None,
        settings=DuelSettings(lease_seconds=30),
        wait_seconds=wait_seconds,
    )
    return AgentSeat(service, defaults)


@pytest.fixture
def alice(service: DuelService, source: Path) -> Iterator[AgentSeat]:
    seat = agent_seat(service, source, wait_seconds=4.0)
    yield seat
    seat.stop()


def seated(alice: AgentSeat, service: DuelService, source: Path) -> Player:
    """Alice through her tools, Bob through the service; Alice's first turn appended: Bob's turn."""
    alice.join()
    bob = join(service, source, BOB[0], harness=BOB[1], model_id=BOB[2])
    alice.claim()
    alice.append(make_turn(1, *ALICE))
    return bob


def test_a_wait_after_the_peer_already_moved_returns_at_once(alice, service, source):
    bob = seated(alice, service, source)
    assert alice.seen_step == WAIT_TURN  # what the append told her
    service.append(bob.seat, claim(service, bob), make_turn(2, *BOB), release=True)  # between her release and wait
    started = time.monotonic()
    answer = alice.wait(30)
    assert time.monotonic() - started < 1.5  # not the whole timeout
    assert (answer["changed"], answer["next_step"], answer["waited_seconds"]) == (True, CLAIM_LOCK, 0.0)


def test_a_wait_told_the_step_it_last_saw_returns_at_once_when_it_moved_on(alice, service, source):
    bob = seated(alice, service, source)
    service.append(bob.seat, claim(service, bob), make_turn(2, *BOB), release=True)
    alice.status()  # what this seat last saw is now its own turn: only the caller's word says otherwise
    answer = alice.wait(30, next_step=WAIT_TURN)
    assert (answer["changed"], answer["next_step"]) == (True, CLAIM_LOCK)


def test_a_wait_on_the_seats_own_turn_returns_at_once_and_asks_it_to_act(alice, service, source):
    bob = seated(alice, service, source)
    service.append(bob.seat, claim(service, bob), make_turn(2, *BOB), release=True)
    alice.status()
    lines: list[str] = []
    answer = alice.wait(30, progress=lambda _seconds, line: lines.append(line))
    assert (answer["changed"], answer["next_step"], lines) == (False, CLAIM_LOCK, [])
    assert answer["next_step_words"] == "it is your turn: call duel_claim"


@pytest.mark.slow  # waits its whole bound
def test_a_wait_ends_at_its_bound_saying_nothing_changed_and_what_to_call(alice, service, source):
    seated(alice, service, source)
    lines: list[str] = []
    started = time.monotonic()
    answer = alice.wait(600, progress=lambda _seconds, line: lines.append(line))  # capped at the server's 4 s
    assert 3.5 <= time.monotonic() - started < 15
    assert (answer["changed"], answer["next_step"]) == (False, WAIT_TURN)
    assert answer["next_step_words"] == "another seat has the floor: call duel_wait"
    assert lines and all("your turn" not in line for line in lines)


@pytest.mark.slow  # waits through three slices
def test_an_idle_wait_does_not_rewrite_the_state(alice, service, source, debate_dir):
    seated(alice, service, source)
    alice.wait(0.1)  # the first wait marks the seat present
    state = next((debate_dir / ".duel" / "duels").glob("*/state.json"))
    before = (state.stat().st_mtime_ns, state.read_bytes())
    alice.wait(4.5)  # three slices, no change
    assert (state.stat().st_mtime_ns, state.read_bytes()) == before


def test_a_refused_first_join_pins_no_name(service, source):
    seat = agent_seat(service, source)
    try:
        with pytest.raises(DuelError) as refused:
            seat.join(name="Al/ice")  # a name the service refuses
        assert refused.value.code == "INVALID_ARGUMENT"
        joined = seat.join(name="Alice")
        assert (joined["seat"], joined["participant_count"]) == (1, 1)
    finally:
        seat.stop()
    restarted = agent_seat(service, source)  # a server started again under that name resumes the seat
    try:
        assert restarted.join()["seat"] == 1
    finally:
        restarted.stop()


def test_a_refused_close_keeps_the_floor(alice, service, source):
    bob = seated(alice, service, source)
    service.append(bob.seat, claim(service, bob), make_turn(2, *BOB), release=True)
    alice.claim()
    with pytest.raises(DuelError) as refused:
        alice.close(outcome="ACCEPTED_CONSENSUS")  # not what the turns imply
    assert refused.value.code == "OUTCOME_MISMATCH"
    assert alice.status()["floor_held_by_you"] is True
    alice.append(make_turn(3, *ALICE))  # the floor was kept: the turn goes in


def test_the_floor_is_said_held_only_while_the_lease_lives(alice, service, source):
    bob = seated(alice, service, source)
    service.append(bob.seat, claim(service, bob), make_turn(2, *BOB), release=True)
    alice.claim()
    assert alice.status()["floor_held_by_you"] is True
    assert alice.seat is not None and alice.lease is not None
    service.release_lock(alice.seat, alice.lease)  # the lease ends behind the seat's back
    assert alice.status()["floor_held_by_you"] is False
    assert alice.lease is None
