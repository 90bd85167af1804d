"""The lock service's "may this happen now?" rules, called directly with a state and a
moment (docs/protocol.md sections 4 and 8): refresh, every write's lease check, append
and close. Claims are covered through the service in test_lock_service.py."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from rp1_duel.clock import Instant
from rp1_duel.coordination import policy
from rp1_duel.coordination._state import DuelState, Lease, Participant, TurnRecord
from rp1_duel.errors import DuelError

from helpers import DUEL

T = 1_000.0  # monotonic seconds: what every rule compares
NOW = Instant(wall=1_800_000_000.0, mono=T, boot="boot-1")
ALICE = Participant(
    id="p-a",
    seat=1,
    display_name="Alice",
    harness="h",
    model_id="m",
    token_sha256="x",
    joined_at=0.0,
    last_seen_mono=0.0,
)
BOB = Participant(
    id="p-b", seat=2, display_name="Bob", harness="h", model_id="m", token_sha256="y", joined_at=0.0, last_seen_mono=0.0
)


def state(turns: int = 0, **changes: Any) -> DuelState:
    base = DuelState(
        id="d",
        source_path="/s.md",
        source_sha256="0",
        topic="T",
        topic_slug="t",
        target_key="k",
        artifact="d.md",
        created_at=0.0,
        created_mono=0.0,
        schedule=DUEL,
        lease_seconds=60,
        peer_wait_seconds=900,
        turn_timeout_seconds=300,
        participants=[replace(ALICE), replace(BOB)],
        turns=[
            TurnRecord(
                n=n,
                participant_id="p-a" if n % 2 else "p-b",
                seat=2 - n % 2,
                stance="OPEN_TO_DEBATE",
                has_blocking=False,
                sha256="h",
                appended_at=0.0,
            )
            for n in range(1, turns + 1)
        ],
        turn_started_mono=T - 100,
        boot_id=NOW.boot,
        wall_offset=NOW.wall_offset,
    )
    return replace(base, **changes)


def lease(
    owner: Participant = ALICE, expires: float = T + 30, *, for_timeout: bool = False, granted: float = T - 30
) -> Lease:
    return Lease(
        owner=owner.id, token="1-secret", fence=1, granted_mono=granted, expires_mono=expires, for_timeout=for_timeout
    )


def code(refusal: DuelError | None) -> str | None:
    return refusal.code if refusal else None


@pytest.mark.parametrize(
    ("held", "token", "expected"),
    [
        (lease(), "1-secret", ("refreshed", T + 60)),
        (lease(expires=T - 1), "1-secret", ("lease_expired", T - 1)),
        (lease(), "1-wrong", ("lease_not_held", None)),
        (lease(), None, ("lease_not_held", None)),
        (lease(owner=BOB), "1-secret", ("lease_not_held", None)),
        (None, "1-secret", ("lease_not_held", None)),
    ],
)
def test_refresh_moves_only_a_live_lease_of_the_caller(held, token, expected):
    decision = policy.decide_refresh(state(lease=held), ALICE, token, NOW)
    assert (decision.reason, decision.expires_mono) == expected
    assert decision.refreshed is (expected[0] == "refreshed")


@pytest.mark.parametrize(
    ("held", "token", "expected"),
    [
        (lease(), "1-secret", None),
        (lease(expires=T), "1-secret", "LEASE_EXPIRED"),  # expiry is exclusive
        (lease(), "1-other", "LEASE_NOT_HELD"),
        (lease(owner=BOB), "1-secret", "LEASE_NOT_HELD"),
        (None, None, "LEASE_NOT_HELD"),
    ],
)
def test_every_write_rechecks_owner_token_and_expiry(held, token, expected):
    checked = policy.check_lease(state(lease=held), ALICE, token, NOW)
    assert (checked.code if isinstance(checked, DuelError) else None) == expected


@pytest.mark.parametrize(
    ("duel", "caller", "held", "expected"),
    [
        (state(0), ALICE, lease(), None),
        (state(1), BOB, lease(owner=BOB), None),
        (state(1), ALICE, lease(), "NOT_YOUR_TURN"),
        (state(0), ALICE, lease(for_timeout=True), "LEASE_NOT_HELD"),
        (state(2, pending_outcome="DISSENT"), ALICE, lease(), "DUEL_CLOSED"),
    ],
)
def test_append_needs_an_ordinary_lease_on_the_callers_turn_before_any_outcome(duel, caller, held, expected):
    assert code(policy.refuse_append(duel, caller, held)) == expected


def test_a_broken_record_allows_only_an_invalidated_close():
    broken = state(2, invalid_reason="turn 1 was changed after it was accepted")
    refusal = policy.refuse_broken_record(broken)
    assert refusal is not None
    assert (refusal.code, refusal.details["next_step"]) == ("ARTIFACT_TAMPERED", "close")
    assert policy.refuse_broken_record(state(2)) is None


@pytest.mark.parametrize(
    ("duel", "held", "outcome", "reason", "expected"),
    [
        # the outcome the turns reached, and only that one
        (state(6, pending_outcome="MAX_TURNS"), lease(), "MAX_TURNS", None, (None, None)),
        (state(6, pending_outcome="MAX_TURNS"), lease(), "DISSENT", None, ("OUTCOME_MISMATCH", None)),
        (state(2), lease(), "ACCEPTED_CONSENSUS", None, ("OUTCOME_MISMATCH", None)),
        # INVALIDATED: with a reason before any outcome; never over a reached outcome
        (state(2), lease(), "INVALIDATED", " gave up ", (None, "gave up")),
        (state(2), lease(), "INVALIDATED", None, ("INVALID_ARGUMENT", None)),
        (state(6, pending_outcome="MAX_TURNS"), lease(), "INVALIDATED", "r", ("OUTCOME_MISMATCH", None)),
        # a broken record: INVALIDATED only, its reason first
        (state(2, invalid_reason="tampered"), lease(), "INVALIDATED", None, (None, "tampered")),
        (state(2, invalid_reason="tampered"), lease(), "INVALIDATED", "r", (None, "tampered; r")),
        (state(2, invalid_reason="tampered"), lease(), "DISSENT", None, ("ARTIFACT_TAMPERED", None)),
        # a timeout lease closes TIMEOUT only, and an ordinary lease never does
        # ... and its reason names the seat and the turn, whoever closes
        (
            state(0, participants=[replace(ALICE)]),
            lease(for_timeout=True),
            "TIMEOUT",
            "r",
            (None, "seat 2 was not taken by the end of the peer wait, before turn 1; r"),
        ),
        (
            state(0, participants=[replace(ALICE)]),
            lease(for_timeout=True),
            "INVALIDATED",
            "r",
            ("OUTCOME_MISMATCH", None),
        ),
        (state(1), lease(), "TIMEOUT", None, ("TIMEOUT_REJECTED", None)),
    ],
)
def test_close_is_decided_by_outcome_lease_and_record(duel, held, outcome, reason, expected):
    decision = policy.decide_close(duel, ALICE, held, outcome=outcome, reason=reason, now=NOW)
    assert (code(decision.refusal), decision.reason) == expected


@pytest.mark.parametrize(
    ("turns", "started", "bob_seen", "expected"),
    [
        # Bob's turn 2 is past its deadline (T - 100): TIMEOUT stands, whether or not the late writer is back
        (1, T - 400, T - 60, (None, None)),
        (1, T - 400, T - 10, (None, None)),
        # the peer joined since the grant and turn 1 is the caller's: debate instead, with the lease
        (0, T - 10, T - 10, ("TIMEOUT_REJECTED", "ordinary")),
        # the peer's turn and its deadline still ahead: nothing to time out, the lease is given up
        (1, T - 100, T - 60, ("TIMEOUT_REJECTED", "released")),
    ],
)
def test_a_timeout_close_stands_once_the_turn_deadline_passed(turns, started, bob_seen, expected):
    duel = state(turns, participants=[replace(ALICE), replace(BOB, last_seen_mono=bob_seen)], turn_started_mono=started)
    decision = policy.decide_close(
        duel, ALICE, lease(for_timeout=True, granted=T - 30), outcome="TIMEOUT", reason=None, now=NOW
    )
    assert (code(decision.refusal), decision.lease_after) == expected
    if decision.refusal is not None:
        expected_step = "compose_turn" if decision.lease_after == "ordinary" else "wait_turn"
        assert decision.refusal.details["next_step"] == expected_step


def test_a_timeout_reason_names_the_late_seat_and_its_turn_for_every_reader():
    # Bob's turn 2 is past its deadline: the reason says so whoever closes, Bob himself included.
    duel = state(1, participants=[replace(ALICE), replace(BOB)], turn_started_mono=T - 400)
    for closer in (ALICE, BOB):
        decision = policy.decide_close(
            duel, closer, lease(closer, for_timeout=True), outcome="TIMEOUT", reason=None, now=NOW
        )
        assert decision.reason == "seat 2 (Bob) did not finish turn 2 by its deadline"
    panel = state(0, participants=[replace(ALICE)], schedule=replace(duel.schedule, seats=3))
    assert policy.timeout_reason(panel) == (
        "seat 2 and seat 3 were not taken by the end of the peer wait, before turn 1"
    )


# The turn deadline is T + 200 (turn_timeout_seconds 300, begun at T - 100); Alice writes turn 1.
@pytest.mark.parametrize(
    ("now", "held", "expected"),
    [
        (NOW, lease(), ("refreshed", T + 60)),
        (Instant(NOW.wall + 170, T + 170, "boot-1"), lease(expires=T + 200), ("refreshed", T + 200)),  # capped
        (Instant(NOW.wall + 200, T + 200, "boot-1"), lease(expires=T + 260), ("turn_deadline_passed", T + 260)),
        (
            Instant(NOW.wall + 200, T + 200, "boot-1"),
            lease(expires=T + 260, for_timeout=True),
            ("refreshed", T + 260),
        ),  # a timeout lease is not bound by the deadline it follows
    ],
)
def test_a_refresh_never_carries_a_lease_past_the_turn_deadline(now, held, expected):
    decision = policy.decide_refresh(state(0, lease=held), ALICE, "1-secret", now)
    assert (decision.reason, decision.expires_mono) == expected


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (Instant(NOW.wall + 199, T + 199, "boot-1"), (None, "wait_turn", False)),
        (Instant(NOW.wall + 200, T + 200, "boot-1"), ("TURN_DEADLINE_PASSED", "claim_timeout", True)),
    ],
)
def test_past_the_turn_deadline_the_writer_cannot_append_and_the_peer_may_time_it_out(now, expected):
    duel = state(0, lease=lease(expires=T + 300))  # a lease granted before leases were capped
    checked = policy.check_lease(duel, ALICE, "1-secret", now)
    refusal = checked.code if isinstance(checked, DuelError) else None
    assert (refusal, policy.next_step(duel, BOB, now), policy.timeout_due(duel, BOB, now)) == expected


def test_a_lease_to_write_a_turn_ends_at_the_turn_deadline():
    late = Instant(NOW.wall + 180, T + 180, "boot-1")
    assert policy.new_lease(state(0), ALICE, late, for_timeout=False).expires_mono == T + 200
    assert policy.new_lease(state(0), ALICE, late, for_timeout=True).expires_mono == T + 240
    assert policy.decide_claim(
        state(0), ALICE, Instant(NOW.wall + 200, T + 200, "boot-1"), for_timeout=False
    ).reason == ("turn_deadline_passed")


# -- clocks (section 4, "Clocks") ------------------------------------------------------------
# The state below was written at T in boot-1: Alice's lease has 30 s left, the turn began
# 100 s ago, Bob was last seen 60 s ago. Each row reads it at another moment.
DAY, HOUR = 86_400.0, 3_600.0


def written_at_t(**changes: object) -> DuelState:
    written: dict[str, object] = {
        "participants": [replace(ALICE), replace(BOB, last_seen_mono=T - 60)],
        "turn_started_mono": T - 100,
        "lease": lease(),
    }
    return state(1, **{**written, **changes})


@pytest.mark.parametrize(
    ("duel", "now", "expected"),
    [
        # (lease live, its seconds left, turn seconds elapsed, Bob idle seconds)
        (written_at_t(), NOW, (True, 30, 100, 60)),
        (written_at_t(), Instant(NOW.wall + 10, T + 10, "boot-1"), (True, 20, 110, 70)),
        # the wall clock set (NTP, a suspend, a person): the monotonic clock alone judges
        (written_at_t(), Instant(NOW.wall + HOUR, T, "boot-1"), (True, 30, 100, 60)),
        (written_at_t(), Instant(NOW.wall - DAY, T + 31, "boot-1"), (False, -1, 131, 91)),
        # a reboot 200 s later: the lease is over; the rest is carried over on the wall clock
        (written_at_t(), Instant(NOW.wall + 200, 10.0, "boot-2"), (False, 0, 300, 260)),
        # ... and a wall clock set back across it never makes time run backwards
        (written_at_t(), Instant(NOW.wall - DAY, 10.0, "boot-2"), (False, 0, 0, 0)),
        # an unknown boot (a version 1 state, times on the wall clock): judged on the wall clock
        (
            written_at_t(
                boot_id=None,
                wall_offset=0.0,
                lease=lease(expires=NOW.wall + 30),
                turn_started_mono=NOW.wall - 100,
                participants=[replace(ALICE), replace(BOB, last_seen_mono=NOW.wall - 60)],
            ),
            Instant(NOW.wall + 10, 50.0, "boot-1"),
            (True, 20, 110, 70),
        ),
        # no lease ever has more than lease_seconds left, whatever the file says
        (written_at_t(lease=lease(expires=T + DAY)), NOW, (True, 60, 100, 60)),
    ],
)
def test_times_are_read_on_the_monotonic_clock_of_the_boot_that_wrote_them(duel, now, expected):
    policy.reanchor(duel, now)
    assert duel.lease is not None and duel.turn_started_mono is not None
    bob = duel.participant("p-b")
    assert bob is not None
    seen = (
        duel.lease.live(now),
        duel.lease.expires_mono - now.mono,
        now.mono - duel.turn_started_mono,
        now.mono - bob.last_seen_mono,
    )
    assert seen == pytest.approx(expected)
    assert duel.boot_id == now.boot


@pytest.mark.parametrize(
    ("wall_set", "shown"),
    [
        (0.0004, NOW.wall + 30),  # jitter between reading two clocks: every process shows the same time
        (HOUR, NOW.wall + HOUR + 30),  # the wall clock was set: shown times follow it, what they mean does not
    ],
)
def test_times_are_shown_on_the_wall_clock_as_it_reads_now(wall_set, shown):
    duel = written_at_t()
    now = Instant(NOW.wall + wall_set, T, "boot-1")
    policy.reanchor(duel, now)
    assert duel.lease is not None
    assert duel.wall_time(duel.lease.expires_mono) == pytest.approx(shown, abs=1e-6)


# -- taking a seat over with another model (section 3) ---------------------------------------


@pytest.mark.parametrize(
    ("turns", "bob_seen", "with_token", "expected"),
    [
        (1, T - 10, True, None),  # Bob has not written: his token may correct his model
        (1, T - 10, False, "SEAT_TAKEN"),  # without it, not while Bob is around
        (1, T - 60, False, None),  # ... but once his seat could be reclaimed anyway
        (2, T - 10, True, "DUEL_FULL"),  # Bob wrote turn 2: his model is fixed
        (2, T - 600, False, "DUEL_FULL"),
    ],
)
def test_a_seat_is_taken_over_only_before_its_first_turn_and_only_with_its_token_or_once_idle(
    turns, bob_seen, with_token, expected
):
    duel = state(turns, participants=[replace(ALICE), replace(BOB, last_seen_mono=bob_seen)])
    bob = duel.participant("p-b")
    assert bob is not None
    assert code(policy.refuse_takeover(duel, bob, "m2", with_token=with_token, now=NOW)) == expected


@pytest.mark.parametrize(("turns", "with_token"), [(2, True), (1, False)])
def test_a_refused_takeover_advises_the_name_flag_of_each_front(turns, with_token):
    duel = state(turns, participants=[replace(ALICE), replace(BOB, last_seen_mono=T - 10)])
    bob = duel.participant("p-b")
    assert bob is not None
    refused = policy.refuse_takeover(duel, bob, "m2", with_token=with_token, now=NOW)
    assert refused is not None
    assert "--name in duel join, --participant-name in duel tools join" in refused.message
