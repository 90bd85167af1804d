"""Lease and turn-order rules: pure functions of a :class:`DuelState` and a time.

Nothing here reads files or clocks, so every rule of PROTOCOL.md sections 3 and 4
can be checked by handing in a state and a moment.
"""

from __future__ import annotations

from dataclasses import dataclass

from .state import ACTIVE, DuelState, Lease, Participant

# next_step words (PROTOCOL.md section 4)
WAIT_PEER = "wait_peer"
CLAIM_LOCK = "claim_lock"
WAIT_TURN = "wait_turn"
COMPOSE_TURN = "compose_turn"
RELEASE_LOCK = "release_lock"
CLOSE = "close"
CLAIM_TIMEOUT = "claim_timeout"
CLOSE_TIMEOUT = "close_timeout"
CLOSED_STEP = "closed"


def live_lease(state: DuelState, now: float) -> Lease | None:
    lease = state.lease
    return lease if lease is not None and lease.live(now) else None


def next_turn_seat(state: DuelState) -> int:
    return 1 if len(state.turns) % 2 == 0 else 2


def must_close(state: DuelState) -> bool:
    """An outcome is reached (or the record is broken): only a close may follow."""
    return state.pending_outcome is not None or state.invalid_reason is not None


def turn_deadline(state: DuelState) -> float | None:
    if state.status != ACTIVE or state.turn_started_at is None or must_close(state):
        return None
    return state.turn_started_at + state.turn_timeout_seconds


def peer_wait_until(state: DuelState) -> float:
    return state.created_at + state.peer_wait_seconds


def timeout_due(state: DuelState, caller: Participant, now: float) -> bool:
    """Whether the ``--for-timeout`` path is open to ``caller`` (section 4, (a) and (b))."""
    if state.status != ACTIVE or must_close(state):
        return False
    holder = live_lease(state, now)
    if holder is not None and holder.owner != caller.id:
        return False
    if len(state.participants) < 2:
        return now >= peer_wait_until(state)
    deadline = turn_deadline(state)
    return next_turn_seat(state) != caller.seat and deadline is not None and now >= deadline


def next_step(state: DuelState, caller: Participant, now: float) -> str:
    if state.status != ACTIVE:
        return CLOSED_STEP
    if must_close(state):
        return CLOSE
    lease = live_lease(state, now)
    if lease is not None and lease.owner == caller.id:
        if lease.for_timeout:
            return CLOSE_TIMEOUT
        return COMPOSE_TURN if next_turn_seat(state) == caller.seat else RELEASE_LOCK
    if lease is not None:
        return WAIT_TURN
    if len(state.participants) < 2:
        return CLAIM_TIMEOUT if timeout_due(state, caller, now) else WAIT_PEER
    if next_turn_seat(state) == caller.seat:
        return CLAIM_LOCK
    return CLAIM_TIMEOUT if timeout_due(state, caller, now) else WAIT_TURN


@dataclass(frozen=True)
class ClaimDecision:
    """What a claim gets: a fresh grant, the caller's own lease back, or a refusal."""

    grant: bool
    reason: str
    same_lease: bool = False
    for_timeout: bool = False
    wait_until: float | None = None


def decide_claim(state: DuelState, caller: Participant, now: float, for_timeout: bool) -> ClaimDecision:
    lease = live_lease(state, now)
    if lease is not None and lease.owner == caller.id:
        return ClaimDecision(True, "already_held", same_lease=True, for_timeout=lease.for_timeout)
    if lease is not None:
        return ClaimDecision(False, "lease_held_by_peer", wait_until=lease.expires_at)
    if for_timeout:
        if timeout_due(state, caller, now):
            return ClaimDecision(True, "timeout_due", for_timeout=True)
        return ClaimDecision(False, "timeout_not_due", wait_until=_timeout_moment(state, caller))
    if must_close(state):
        return ClaimDecision(True, "close_due")
    if len(state.participants) < 2:
        return ClaimDecision(False, "waiting_for_peer", wait_until=peer_wait_until(state))
    if next_turn_seat(state) != caller.seat:
        return ClaimDecision(False, "not_your_turn", wait_until=turn_deadline(state))
    return ClaimDecision(True, "your_turn")


def _timeout_moment(state: DuelState, caller: Participant) -> float | None:
    if len(state.participants) < 2:
        return peer_wait_until(state)
    if next_turn_seat(state) != caller.seat:
        return turn_deadline(state)
    return None  # it is the caller's own turn: no timeout will ever be due


def timeout_still_valid(state: DuelState, caller: Participant, lease: Lease) -> bool:
    """At close time: has the peer shown up since the timeout lease was granted?"""
    if len(state.participants) < 2:
        return True
    if next_turn_seat(state) == caller.seat:
        return False  # a peer joined and the turn is the caller's: debate instead
    peer = next(p for p in state.participants if p.id != caller.id)
    return peer.last_seen_at <= lease.granted_at


def seat_reclaimable(state: DuelState, seat_holder: Participant, now: float) -> bool:
    """A seat may be handed over when it holds no live lease and has been idle for a lease."""
    lease = live_lease(state, now)
    if lease is not None and lease.owner == seat_holder.id:
        return False
    return now - seat_holder.last_seen_at >= state.lease_seconds
