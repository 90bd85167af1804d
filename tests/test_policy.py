"""The lock service's "may this happen now?" rules, called directly with a state and a
moment (docs/protocol.md sections 4 and 8): refresh, every write's lease check, append
and close. Claims are covered through the service in test_lock_service.py."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rp1_duel.coordination import policy
from rp1_duel.coordination.state import DuelState, Lease, Participant, TurnRecord
from rp1_duel.errors import DuelError

NOW = 1_000.0
ALICE = Participant("p-a", 1, "Alice", "h", "m", "x", 0.0, 0.0)
BOB = Participant("p-b", 2, "Bob", "h", "m", "y", 0.0, 0.0)


def state(turns: int = 0, **changes: object) -> DuelState:
    base = DuelState(
        id="d", source_path="/s.md", source_sha256="0", topic="T", topic_slug="t", target_key="k",
        artifact="d.md", created_at=0.0, max_turns=6, lease_seconds=60, peer_wait_seconds=900,
        turn_timeout_seconds=300, participants=[replace(ALICE), replace(BOB)],
        turns=[TurnRecord(n, "p-a" if n % 2 else "p-b", 2 - n % 2, "OPEN_TO_DEBATE", False, "h", 0.0)
               for n in range(1, turns + 1)],
        turn_started_at=0.0,
    )
    return replace(base, **changes)


def lease(owner: Participant = ALICE, expires_at: float = NOW + 30, for_timeout: bool = False,
          granted_at: float = NOW - 30) -> Lease:
    return Lease(owner.id, "1-secret", 1, granted_at, expires_at, for_timeout)


def code(refusal: DuelError | None) -> str | None:
    return refusal.code if refusal else None


@pytest.mark.parametrize(
    ("held", "token", "expected"),
    [
        (lease(), "1-secret", ("refreshed", NOW + 60)),
        (lease(expires_at=NOW - 1), "1-secret", ("lease_expired", NOW - 1)),
        (lease(), "1-wrong", ("lease_not_held", None)),
        (lease(), None, ("lease_not_held", None)),
        (lease(owner=BOB), "1-secret", ("lease_not_held", None)),
        (None, "1-secret", ("lease_not_held", None)),
    ],
)
def test_refresh_moves_only_a_live_lease_of_the_caller(held, token, expected):
    decision = policy.decide_refresh(state(lease=held), ALICE, token, NOW)
    assert (decision.reason, decision.expires_at) == expected
    assert decision.refreshed is (expected[0] == "refreshed")


@pytest.mark.parametrize(
    ("held", "token", "expected"),
    [
        (lease(), "1-secret", None),
        (lease(expires_at=NOW), "1-secret", "LEASE_EXPIRED"),  # expiry is exclusive
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
        (state(0, participants=[replace(ALICE)]), lease(for_timeout=True), "TIMEOUT", None, (None, None)),
        (state(0, participants=[replace(ALICE)]), lease(for_timeout=True), "INVALIDATED", "r",
         ("OUTCOME_MISMATCH", None)),
        (state(1), lease(), "TIMEOUT", None, ("TIMEOUT_REJECTED", None)),
    ],
)
def test_close_is_decided_by_outcome_lease_and_record(duel, held, outcome, reason, expected):
    decision = policy.decide_close(duel, ALICE, held, outcome, reason, NOW)
    assert (code(decision.refusal), decision.reason) == expected


@pytest.mark.parametrize(
    ("turns", "bob_seen", "expected"),
    [
        (1, NOW - 60, (None, None)),  # the peer's turn and the peer silent since the grant: TIMEOUT stands
        (1, NOW - 10, ("TIMEOUT_REJECTED", "released")),  # the peer came back on its own turn
        (2, NOW - 60, ("TIMEOUT_REJECTED", "ordinary")),  # the turn is the caller's: debate instead
    ],
)
def test_a_timeout_close_is_rejected_once_the_peer_is_back(turns, bob_seen, expected):
    duel = state(turns, participants=[replace(ALICE), replace(BOB, last_seen_at=bob_seen)], turn_started_at=NOW - 100)
    decision = policy.decide_close(duel, ALICE, lease(for_timeout=True, granted_at=NOW - 30), "TIMEOUT", None, NOW)
    assert (code(decision.refusal), decision.lease_after) == expected
    if decision.refusal is not None:
        expected_step = "compose_turn" if decision.lease_after == "ordinary" else "wait_turn"
        assert decision.refusal.details["next_step"] == expected_step
