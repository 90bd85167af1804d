"""Every "may this happen now?" of the lock service, as pure functions.

Each takes a :class:`~rp1_duel.coordination._state.DuelState`, the caller and a moment
(an :class:`~rp1_duel.clock.Instant`), and returns a decision record (or the refusal, a
:class:`~rp1_duel.errors.DuelError` value, never raised here). Nothing here reads files
or clocks, so every rule of docs/protocol.md sections 3, 4 and 8 is checked by handing
in a state and a time.

Durations are judged on the monotonic clock alone: ``now.mono`` against the state's
``*_mono`` times, once :func:`reanchor` has put them on ``now``'s boot. Moments in the
decisions are monotonic too; results show them with ``DuelState.wall_time``.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Literal, NamedTuple

from ..clock import Instant, iso
from ..errors import DuelError, invalid_argument
from ..schedule import CHAIR_SEAT
from ..settings import DuelSettings
from ..vocabulary import (
    ACTIVE,
    CLAIM_LOCK,
    CLAIM_TIMEOUT,
    CLOSE,
    CLOSE_TIMEOUT,
    CLOSED_STEP,
    COMMIT_OPENING,
    COMPOSE_TURN,
    INVALIDATED,
    RELEASE_LOCK,
    TIMEOUT,
    WAIT_PEER,
    WAIT_TURN,
    ErrorCode,
    NextStep,
    Role,
)
from ._state import DuelState, Lease, Participant
from .identity import same_secret

__all__ = [
    "ClaimDecision",
    "CloseDecision",
    "RefreshDecision",
    "all_seated",
    "awaiting_commitments",
    "check_lease",
    "commitment_of",
    "decide_claim",
    "decide_close",
    "decide_refresh",
    "free_seat",
    "live_lease",
    "new_lease",
    "next_step",
    "next_turn_number",
    "next_turn_seat",
    "peer_wait_until",
    "reanchor",
    "reclaimable_from",
    "refresh_interval",
    "refuse_append",
    "refuse_broken_record",
    "refuse_commit",
    "refuse_full",
    "refuse_if_closed",
    "refuse_role",
    "refuse_signer_declaration",
    "refuse_takeover",
    "retry_after",
    "seat_reclaimable",
    "settings_note",
    "timeout_due",
    "timeout_reason",
    "turn_deadline",
    "uncommitted_seats",
]

# -- time --------------------------------------------------------------------------------

WALL_SET_SECONDS = 1.0  # a smaller change of the wall clock's offset is jitter between two reads


def reanchor(state: DuelState, now: Instant) -> None:
    """Put the state's monotonic times on ``now``'s boot, in place (section 4, "Clocks").

    The one function here that changes its state: the service calls it on every state
    it reads, and the next write keeps the result. In the same boot the times stand, and
    only the wall offset follows a wall clock that was set. From another boot, or from an
    unknown one (a version 1 state, a system without boot ids), the times are carried
    over through the wall clock, the only clock that spans boots; a lease of another boot
    is over, for its holder died with that boot. Either way no past moment lies ahead of
    ``now`` and no lease has more than ``lease_seconds`` left.
    """
    same_boot = state.boot_id is not None and state.boot_id == now.boot
    rebooted = state.boot_id is not None and now.boot is not None and not same_boot
    shift = 0.0 if same_boot else state.wall_offset - now.wall_offset
    if not same_boot or abs(now.wall_offset - state.wall_offset) >= WALL_SET_SECONDS:
        state.boot_id, state.wall_offset = now.boot, now.wall_offset

    def past(mono: float) -> float:
        return min(mono + shift, now.mono)

    state.created_mono = past(state.created_mono)
    if state.turn_started_mono is not None:
        state.turn_started_mono = past(state.turn_started_mono)
    for participant in state.participants:
        participant.last_seen_mono = past(participant.last_seen_mono)
    lease = state.lease
    if lease is not None:
        lease.granted_mono = past(lease.granted_mono)
        expires = now.mono if rebooted else lease.expires_mono + shift
        lease.expires_mono = min(expires, now.mono + state.lease_seconds)


def refresh_interval(lease_seconds: int) -> float:
    """How often a live participant shows it is there: a third of a lease, at least 1 s."""
    return max(1.0, lease_seconds / 3)


# -- reading the state -------------------------------------------------------------------


def live_lease(state: DuelState, now: Instant) -> Lease | None:
    """The lease in force: unexpired, and one to write a turn no later than the turn's deadline."""
    lease = state.lease
    if lease is None or not lease.live(now) or (not lease.for_timeout and turn_deadline_passed(state, now)):
        return None
    return lease


def next_turn_number(state: DuelState) -> int:
    """The number of the turn to write: turns count from 1, or from 0 with a chair."""
    return state.schedule.number_after(len(state.turns))


def next_turn_seat(state: DuelState) -> int:
    """The seat that writes the next turn; :data:`CHAIR_SEAT` (0) for the chair."""
    return state.schedule.speaker(next_turn_number(state))


def seat_name(seat: int) -> str:
    """How messages name a seat: ``the chair`` or ``seat 2``."""
    return "the chair" if seat == CHAIR_SEAT else f"seat {seat}"


def all_seated(state: DuelState) -> bool:
    """Every seat (the chair's too) is taken: the first turn begins then, and the peer wait is over."""
    return len(state.participants) >= state.schedule.seats + state.schedule.chair


def awaiting_commitments(state: DuelState) -> bool:
    """A sealed duel's opening round has begun and some seat has not committed its opening: no opening
    may be appended until every seat has (section 4, "Sealed openings")."""
    return (
        state.schedule.sealed(next_turn_number(state))
        and all_seated(state)
        and len(state.commitments) < state.schedule.seats
    )


def commitment_of(state: DuelState, seat: int) -> str | None:
    """The SHA-256 ``seat`` committed its sealed opening to, or None."""
    return next((c.sha256 for c in state.commitments if c.seat == seat), None)


def uncommitted_seats(state: DuelState) -> list[int]:
    """The seats whose sealed opening is not committed yet, in seat order."""
    committed = {c.seat for c in state.commitments}
    return [seat for seat in state.schedule.openings if seat not in committed]


def must_close(state: DuelState) -> bool:
    """An outcome is reached (or the record is broken): only a close may follow."""
    return state.pending_outcome is not None or state.invalid_reason is not None


def turn_deadline(state: DuelState) -> float | None:
    """When the turn under way must be written by (monotonic), or None when no turn is under way."""
    if state.status != ACTIVE or state.turn_started_mono is None or must_close(state):
        return None
    return state.turn_started_mono + state.turn_timeout_seconds


def turn_deadline_passed(state: DuelState, now: Instant) -> bool:
    """The turn under way can no longer be written: it is lost, and the duel ends TIMEOUT."""
    deadline = turn_deadline(state)
    return deadline is not None and now.mono >= deadline


def peer_wait_until(state: DuelState) -> float:
    """When the wait for every seat to be taken ends (monotonic)."""
    return state.created_mono + state.peer_wait_seconds


def timeout_due(state: DuelState, caller: Participant, now: Instant) -> bool:
    """Whether the ``--for-timeout`` path is open to ``caller`` (section 4, (a) and (b)).

    Past the turn deadline it is open to every participant: the writer's lease ended at
    the deadline, and its own process may end the duel it can no longer write in. A
    silent seat ends the duel: the others do not go on without it (docs/protocol.md section 12).
    """
    if state.status != ACTIVE or must_close(state):
        return False
    holder = live_lease(state, now)
    if holder is not None and holder.owner != caller.id:
        return False
    if not all_seated(state):
        return now.mono >= peer_wait_until(state)
    return turn_deadline_passed(state, now)


def next_step(state: DuelState, caller: Participant, now: Instant) -> NextStep:
    """What ``caller`` should do next (section 4, ``next_step``)."""
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
    if timeout_due(state, caller, now):
        return CLAIM_TIMEOUT
    if not all_seated(state):
        return WAIT_PEER
    if awaiting_commitments(state):
        return COMMIT_OPENING if caller.seat in uncommitted_seats(state) else WAIT_TURN
    return CLAIM_LOCK if next_turn_seat(state) == caller.seat else WAIT_TURN


def reclaimable_from(state: DuelState, seat_holder: Participant) -> float:
    """When an idle seat may be handed over: a lease after its holder was last seen."""
    return seat_holder.last_seen_mono + state.lease_seconds


def seat_reclaimable(state: DuelState, seat_holder: Participant, now: Instant) -> bool:
    """A seat may be handed over when it holds no live lease and has been idle for a lease."""
    lease = live_lease(state, now)
    if lease is not None and lease.owner == seat_holder.id:
        return False
    return now.mono >= reclaimable_from(state, seat_holder)


def has_written(state: DuelState, participant: Participant) -> bool:
    """Whether ``participant`` has an accepted turn."""
    return any(turn.participant_id == participant.id for turn in state.turns)


def settings_note(state: DuelState, asked: DuelSettings) -> str | None:
    """Which of the duel's settings differ from those a join of the existing duel asked for: the
    duel's stand, fixed by the join that created it (section 2), and the joiner is told so."""
    has = state.schedule
    pairs = [
        ("max_turns", has.max_turns, asked.max_turns),
        ("lease_seconds", state.lease_seconds, asked.lease_seconds),
        ("peer_wait_seconds", state.peer_wait_seconds, asked.peer_wait_seconds),
        ("turn_timeout_seconds", state.turn_timeout_seconds, asked.turn_timeout_seconds),
        ("seats", has.seats, asked.seats),
        ("chair", has.chair, asked.chair),
        ("sealed_openings", has.sealed_openings, asked.sealed_openings),
        ("on_fabrication", has.on_fabrication, asked.on_fabrication),
    ]
    differ = [
        f"{name} {_in_words(ours)} (not {_in_words(theirs)})"
        for name, ours, theirs in pairs
        if theirs is not None and ours != theirs
    ]
    return f"the duel's own settings apply: {', '.join(differ)}" if differ else None


def _in_words(value: object) -> str:
    """A setting as a person says it: a flag on or off, not a Python bool."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


# The service answers both fronts, whose name flags differ.
_ANOTHER_NAME = "--name in duel join, --participant-name in duel tools join"


def refuse_takeover(
    state: DuelState, holder: Participant, model_id: str, *, with_token: bool, now: Instant
) -> DuelError | None:
    """May a join with ``holder``'s name and harness but ``model_id`` take its seat over? (section 3)

    Only before the holder's first turn (its turns are signed with its model), and only by
    whoever holds the seat's token, or by anyone once the seat could be reclaimed anyway.
    """
    seated = f"{holder.display_name} ({holder.harness} / {holder.model_id})"
    if has_written(state, holder):
        return DuelError(
            ErrorCode.DUEL_FULL,
            f"seat {holder.seat} is held by {seated}, which has written turns: "
            f"its model is fixed; join under another name ({_ANOTHER_NAME})",
        )
    if with_token or seat_reclaimable(state, holder, now):
        return None
    return DuelError(
        ErrorCode.SEAT_TAKEN,
        f"seat {holder.seat} is held by {seated}, which has written no turn yet: pass its token to take it "
        f"over with model {model_id}, or join under another name ({_ANOTHER_NAME})",
        {"seat": holder.seat, "reclaimable_at": iso(state.wall_time(reclaimable_from(state, holder)))},
    )


def refuse_role(seated: Participant | None, role: str) -> DuelError | None:
    """A participant resumes, or takes over, the seat of its own role only."""
    if seated is None or (seated.seat == CHAIR_SEAT) == (role == Role.CHAIR):
        return None
    held = "the chair" if seated.seat == CHAIR_SEAT else f"panel seat {seated.seat}"
    return invalid_argument(
        f"{seated.display_name} ({seated.harness}) holds {held}: join with --role "
        f"{Role.CHAIR if seated.seat == CHAIR_SEAT else Role.PANELIST}, or with another name",
        flag="--role",
    )


def refuse_full(state: DuelState, role: str) -> DuelError | None:
    """A new participant needs a free seat of its role: DUEL_FULL otherwise."""
    if role == Role.CHAIR:
        holder = state.seat_holder(CHAIR_SEAT)
        return (
            None
            if holder is None
            else DuelError(
                ErrorCode.DUEL_FULL, f"duel {state.id} already has a chair: {holder.display_name} ({holder.harness})"
            )
        )
    if free_seat(state, role) <= state.schedule.seats:
        return None
    count = "two" if state.schedule.seats == 2 else str(state.schedule.seats)
    open_chair = (
        " panelists; the chair's seat is open (--role chair)"
        if state.schedule.chair and not all_seated(state)
        else " participants"
    )
    return DuelError(
        ErrorCode.DUEL_FULL,
        f"duel {state.id} already has {count}{open_chair}: to debate this document too, start another duel "
        "with --topic (a topic of your own)",
    )


def free_seat(state: DuelState, role: str) -> int:
    """The seat a new participant of ``role`` takes: the chair's, else the next panel seat in join order."""
    if role == Role.CHAIR:
        return CHAIR_SEAT
    return sum(1 for p in state.participants if p.seat != CHAIR_SEAT) + 1


def refuse_signer_declaration(state: DuelState, seated: Participant | None, signer: str) -> DuelError | None:
    """Why a join may not declare ``signer`` for the seat ``seated`` holds (None: a new seat), per
    docs/protocol.md section 6: a seat keeps the signer it declared, declares none after signing
    turns without one, and one signer holds one seat."""
    if seated is not None:
        seat = seat_name(seated.seat)
        if seated.signer is not None and seated.signer != signer:
            return invalid_argument(f"{seat} declared signer {seated.signer}: it cannot change", flag="--signer")
        if seated.signer is None and any(t.seat == seated.seat and t.signature for t in state.turns):
            return invalid_argument(
                f"{seat} signed turns without a declared signer: too late to declare one", flag="--signer"
            )
    mine = seated.seat if seated is not None else None
    holder = next((p for p in state.participants if p.signer == signer and p.seat != mine), None)
    if holder is not None:
        return invalid_argument(
            f"{seat_name(holder.seat)} declared signer {signer}: one signer holds one seat", flag="--signer"
        )
    return None


def refuse_if_closed(state: DuelState) -> DuelError | None:
    """``DUEL_CLOSED`` once the duel is closed, else None."""
    if state.status == ACTIVE:
        return None
    return DuelError(
        ErrorCode.DUEL_CLOSED,
        f"duel {state.id} is closed ({state.outcome})",
        {"outcome": state.outcome, "next_step": CLOSED_STEP},
    )


# -- claim ---------------------------------------------------------------------------------


class ClaimDecision(NamedTuple):  # NamedTuples: frozen dataclasses cost `duel tools` start-up
    """What a claim gets: a fresh grant, the caller's own lease back, or a refusal."""

    grant: bool
    reason: str
    same_lease: bool = False
    for_timeout: bool = False
    wait_until: float | None = None  # monotonic, like every moment here


def decide_claim(state: DuelState, caller: Participant, now: Instant, *, for_timeout: bool) -> ClaimDecision:
    """Whether ``caller`` gets the lease now, to write a turn or (``for_timeout``) to close TIMEOUT (section 4)."""
    lease = live_lease(state, now)
    if lease is not None and lease.owner == caller.id:
        return ClaimDecision(grant=True, reason="already_held", same_lease=True, for_timeout=lease.for_timeout)
    if lease is not None:
        return ClaimDecision(grant=False, reason="lease_held_by_peer", wait_until=lease.expires_mono)
    if for_timeout:
        if timeout_due(state, caller, now):
            return ClaimDecision(grant=True, reason="timeout_due", for_timeout=True)
        return ClaimDecision(grant=False, reason="timeout_not_due", wait_until=_timeout_moment(state))
    if must_close(state):
        return ClaimDecision(grant=True, reason="close_due")
    if not all_seated(state):
        return ClaimDecision(grant=False, reason="waiting_for_peer", wait_until=peer_wait_until(state))
    if awaiting_commitments(state):
        return ClaimDecision(grant=False, reason="waiting_for_commitments", wait_until=turn_deadline(state))
    if next_turn_seat(state) != caller.seat:
        return ClaimDecision(grant=False, reason="not_your_turn", wait_until=turn_deadline(state))
    if turn_deadline_passed(state, now):
        return ClaimDecision(grant=False, reason="turn_deadline_passed")
    return ClaimDecision(grant=True, reason="your_turn")


def _timeout_moment(state: DuelState) -> float | None:
    return peer_wait_until(state) if not all_seated(state) else turn_deadline(state)


def retry_after(decision: ClaimDecision, now: Instant) -> float:
    """Look again when something is due, but at least every 5 s (``wait`` tells sooner)."""
    left = (decision.wait_until - now.mono) if decision.wait_until is not None else 5.0
    return round(min(max(left, 0.1), 5.0), 3)


def lease_expiry(state: DuelState, now: Instant, *, for_timeout: bool) -> float:
    """A lease lasts ``lease_seconds``, but one to write a turn never outlives the turn's deadline."""
    expires = now.mono + state.lease_seconds
    deadline = None if for_timeout else turn_deadline(state)
    return expires if deadline is None else min(expires, deadline)


def new_lease(state: DuelState, caller: Participant, now: Instant, *, for_timeout: bool) -> Lease:
    """The lease a grant hands out: the next fence, never reused."""
    fence = state.fence + 1
    return Lease(
        owner=caller.id,
        token=f"{fence}-{os.urandom(12).hex()}",  # what secrets.token_hex(12) is, without importing secrets
        fence=fence,
        granted_mono=now.mono,
        expires_mono=lease_expiry(state, now, for_timeout=for_timeout),
        for_timeout=for_timeout,
    )


# -- sealed openings --------------------------------------------------------------------------


def refuse_commit(state: DuelState, caller: Participant, now: Instant) -> DuelError | None:
    """Whether ``caller`` may commit its sealed opening now (section 4, "Sealed openings"): a panelist
    of a sealed duel, every seat taken, the opening round begun and not yet revealed, its deadline ahead."""
    if not state.schedule.sealed_openings:
        return invalid_argument("this duel's openings are not sealed: write the opening as any turn")
    step = next_step(state, caller, now)
    if awaiting_commitments(state) and turn_deadline_passed(state, now):
        return DuelError(ErrorCode.TURN_DEADLINE_PASSED, "the opening round's deadline has passed", {"next_step": step})
    if step == COMMIT_OPENING:
        return None
    if caller.seat == CHAIR_SEAT:
        why = "the chair writes no opening"
    elif commitment_of(state, caller.seat) is not None or next_turn_number(state) > state.schedule.seats:
        why = f"{seat_name(caller.seat)}'s opening is committed already"
    elif not all_seated(state):
        why = "not every seat is taken yet"
    else:
        why = f"turn {next_turn_number(state)} comes before the opening round"
    return DuelError(ErrorCode.NOT_YOUR_TURN, f"no sealed opening to commit: {why}", {"next_step": step})


# -- refresh and every write --------------------------------------------------------------


def holds(lease: Lease | None, caller: Participant, lease_token: str | None) -> bool:
    """Whether ``lease`` is ``caller``'s and ``lease_token`` is its token (compared in constant time)."""
    return (
        lease is not None
        and lease.owner == caller.id
        and bool(lease_token)
        and same_secret(lease_token or "", lease.token)
    )


class RefreshDecision(NamedTuple):
    """What a refresh gets: the lease's new expiry, or why it was not refreshed."""

    refreshed: bool
    reason: Literal["refreshed", "lease_expired", "lease_not_held", "turn_deadline_passed"]
    expires_mono: float | None  # the new expiry (at most the turn deadline), or the old one of a lease held


def decide_refresh(state: DuelState, caller: Participant, lease_token: str | None, now: Instant) -> RefreshDecision:
    """Whether ``caller``'s lease may be extended now: only a live lease it holds, before the turn's deadline."""
    lease = state.lease
    if lease is None or not holds(lease, caller, lease_token):
        return RefreshDecision(refreshed=False, reason="lease_not_held", expires_mono=None)
    if not lease.for_timeout and turn_deadline_passed(state, now):
        return RefreshDecision(refreshed=False, reason="turn_deadline_passed", expires_mono=lease.expires_mono)
    if not lease.live(now):
        return RefreshDecision(refreshed=False, reason="lease_expired", expires_mono=lease.expires_mono)
    return RefreshDecision(
        refreshed=True, reason="refreshed", expires_mono=lease_expiry(state, now, for_timeout=lease.for_timeout)
    )


def check_lease(state: DuelState, caller: Participant, lease_token: str | None, now: Instant) -> Lease | DuelError:
    """Every write re-checks owner, token, the turn deadline and expiry at the moment it writes."""
    lease = state.lease
    if lease is None or not holds(lease, caller, lease_token):
        return DuelError(ErrorCode.LEASE_NOT_HELD, "you do not hold the lease of this duel (claim-lock first)")
    deadline = turn_deadline(state)
    if not lease.for_timeout and deadline is not None and now.mono >= deadline:
        return DuelError(
            ErrorCode.TURN_DEADLINE_PASSED,
            f"the deadline of turn {next_turn_number(state)} passed at {iso(state.wall_time(deadline))}: "
            "it can no longer be written; the duel ends TIMEOUT (claim-lock --for-timeout, then close)",
            {"next_step": CLAIM_TIMEOUT},
        )
    if not lease.live(now):
        expired = iso(state.wall_time(lease.expires_mono))
        return DuelError(ErrorCode.LEASE_EXPIRED, f"your lease expired at {expired}; claim-lock again")
    return lease


# -- append --------------------------------------------------------------------------------


def refuse_append(state: DuelState, caller: Participant, lease: Lease) -> DuelError | None:
    """Whether the lease holder may append a turn now (before the record is read)."""
    if lease.for_timeout:
        return DuelError(ErrorCode.LEASE_NOT_HELD, "a timeout lease only allows release-lock --close --outcome TIMEOUT")
    if state.pending_outcome is not None:
        return DuelError(
            ErrorCode.DUEL_CLOSED,
            f"the duel has reached {state.pending_outcome}: "
            f"close it with release-lock --close --outcome {state.pending_outcome}",
            {"outcome": state.pending_outcome, "next_step": CLOSE},
        )
    if next_turn_seat(state) != caller.seat:
        return DuelError(
            ErrorCode.NOT_YOUR_TURN,
            f"turn {next_turn_number(state)} belongs to {seat_name(next_turn_seat(state))}",
            {"next_step": RELEASE_LOCK},
        )
    return None


def refuse_broken_record(state: DuelState, code: str = ErrorCode.ARTIFACT_TAMPERED) -> DuelError | None:
    """Once the record is broken (tampered, source lost), only an INVALIDATED close remains."""
    if state.invalid_reason is None:
        return None
    return DuelError(
        code,
        f"{state.invalid_reason}: the duel can only be closed INVALIDATED",
        {"reason": state.invalid_reason, "next_step": CLOSE},
    )


# -- close ---------------------------------------------------------------------------------


class CloseDecision(NamedTuple):
    """A close goes ahead with ``reason`` recorded, or is refused.

    A refused TIMEOUT close with a timeout lease changes that lease (docs/protocol.md
    section 4): ``lease_after`` says whether it becomes an ordinary lease (the turn is
    the caller's) or is released (the peer's turn: the peer came back).
    """

    refusal: DuelError | None
    reason: str | None = None
    lease_after: Literal["ordinary", "released"] | None = None


def decide_close(
    state: DuelState, caller: Participant, lease: Lease, *, outcome: str, reason: str | None, now: Instant
) -> CloseDecision:
    """May the lease holder close with ``outcome`` (and ``reason``) now? (section 8)"""
    if lease.for_timeout and outcome != TIMEOUT:
        return CloseDecision(DuelError(ErrorCode.OUTCOME_MISMATCH, "a timeout lease only allows --outcome TIMEOUT"))
    if outcome != INVALIDATED and (broken := refuse_broken_record(state)):
        return CloseDecision(broken)
    given = reason.strip() if reason else None
    if outcome == TIMEOUT:
        return _decide_timeout_close(state=state, caller=caller, lease=lease, reason=given, now=now)
    if outcome == INVALIDATED:
        if state.invalid_reason is None and state.pending_outcome is not None:
            return CloseDecision(_mismatch(state, outcome))
        if not given and state.invalid_reason is None:
            return CloseDecision(invalid_argument("closing INVALIDATED needs --reason"))
    elif outcome != state.pending_outcome:
        return CloseDecision(_mismatch(state, outcome))
    recorded = "; ".join(r for r in (state.invalid_reason, given) if r) or None
    return CloseDecision(None, reason=recorded)


def _mismatch(state: DuelState, outcome: str) -> DuelError:
    return DuelError(
        ErrorCode.OUTCOME_MISMATCH,
        f"the turns imply {state.pending_outcome or 'no outcome yet'}, not {outcome}",
        {"expected": state.pending_outcome},
    )


def timeout_reason(state: DuelState) -> str:
    """Who the duel timed out on, by seat and turn: the recorded reason of every TIMEOUT begins with it.

    Never "the peer": whoever reads the record, the closing seat included, sees which seat it was.
    """
    if not all_seated(state):
        taken = {p.seat for p in state.participants}
        seats = [*([CHAIR_SEAT] if state.schedule.chair else []), *range(1, state.schedule.seats + 1)]
        empty = [seat_name(seat) for seat in seats if seat not in taken]
        many = "were" if len(empty) > 1 else "was"
        return f"{' and '.join(empty)} {many} not taken by the end of the peer wait, before turn 1"
    if awaiting_commitments(state):
        silent = [_who(state, seat) for seat in uncommitted_seats(state)]
        many = "their sealed openings" if len(silent) > 1 else "its sealed opening"
        return f"{' and '.join(silent)} did not commit {many} by the deadline of turn {next_turn_number(state)}"
    seat, number = next_turn_seat(state), next_turn_number(state)
    return f"{_who(state, seat)} did not finish turn {number} by its deadline"


def _who(state: DuelState, seat: int) -> str:
    """``seat 2 (Bob)``: a seat and its holder's name, as reasons name them."""
    holder = state.seat_holder(seat)
    return seat_name(seat) if holder is None else f"{seat_name(seat)} ({holder.display_name})"


def _decide_timeout_close(
    state: DuelState, *, caller: Participant, lease: Lease, reason: str | None, now: Instant
) -> CloseDecision:
    if lease.for_timeout and _timeout_still_valid(state, now):
        return CloseDecision(None, reason="; ".join(r for r in (timeout_reason(state), reason) if r))
    lease_after: Literal["ordinary", "released"] | None = None
    step = next_step(state, caller, now)
    if lease.for_timeout and next_turn_seat(state) == caller.seat:
        lease_after, step = "ordinary", COMPOSE_TURN  # the peer came back and the turn is ours
    elif lease.for_timeout:
        lease_after, step = "released", next_step(replace(state, lease=None), caller, now)
    refusal = DuelError(ErrorCode.TIMEOUT_REJECTED, "no timeout is due: the peer is here", {"next_step": step})
    return CloseDecision(refusal, lease_after=lease_after)


def _timeout_still_valid(state: DuelState, now: Instant) -> bool:
    """At close time: still short of a participant, or the turn under way is past its deadline.

    A peer that joined since the grant started turn 1 (the caller's): debate instead. A
    late writer seen again changes nothing: its turn is lost, it can no longer append.
    """
    return not all_seated(state) or turn_deadline_passed(state, now)
