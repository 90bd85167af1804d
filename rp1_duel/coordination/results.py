"""What the lock service's ops return in process, and their JSON form at the edge.

A join returns a :class:`Seat` handle; every op that changes something takes it, and a
:class:`LeaseToken` where a lease is needed, so the two secrets cannot be swapped. Each
result has ``to_dict()`` emitting the protocol's fields (docs/protocol.md section 5):
times are wall-clock epoch seconds in process (shown, never judged) and ISO 8601 only there. Results are plain records
(read them, do not change them). Those that no other result extends are NamedTuples: building
a dataclass, a frozen one most of all, costs ``duel tools`` start-up time that nothing here needs.

This module holds what a status, a wait and a watcher need; the handles and the fields every answer
carries are in :mod:`._result_core`, and the answers of the ops that change a duel (join, claim,
refresh, release, append) in a module each, so that a polled status does not build them, nor a lock
op a status.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from ..clock import Instant, iso
from ..schedule import Schedule
from ..vocabulary import ACTIVE
from . import policy
from ._result_core import DuelResult, LeaseToken, Seat, check_handles, common_fields
from ._state import DuelState, Participant
from ._store import EventCursor

if TYPE_CHECKING:
    from .events import Event

__all__ = [
    "DuelInfo",
    "DuelResult",
    "LeaseToken",
    "LockView",
    "Observation",
    "ParticipantView",
    "Seat",
    "StatusResult",
    "WaitResult",
    "check_handles",
    "common_fields",
]


class ParticipantView(NamedTuple):
    """What anyone may see of a participant (never its token hash)."""

    id: str
    seat: int
    display_name: str
    harness: str
    model_id: str
    joined_at: float
    last_seen_at: float

    @classmethod
    def of(cls, state: DuelState, p: Participant) -> ParticipantView:
        """The view of ``p``, its last sighting on the wall clock."""
        return cls(
            id=p.id,
            seat=p.seat,
            display_name=p.display_name,
            harness=p.harness,
            model_id=p.model_id,
            joined_at=p.joined_at,
            last_seen_at=state.wall_time(p.last_seen_mono),
        )

    def to_dict(self) -> dict[str, Any]:
        """The protocol's JSON object of a participant, times in ISO 8601."""
        return {
            "id": self.id,
            "seat": self.seat,
            "display_name": self.display_name,
            "harness": self.harness,
            "model_id": self.model_id,
            "joined_at": iso(self.joined_at),
            "last_seen_at": iso(self.last_seen_at),
        }


class DuelInfo(NamedTuple):
    """What anyone may see of a duel: its source, topic, status, outcome and settings."""

    id: str
    source_path: str
    topic: str
    topic_slug: str
    debate_path: str
    status: str
    outcome: str | None
    pending_outcome: str | None
    reason: str | None
    created_at: float
    closed_at: float | None
    schedule: Schedule
    lease_seconds: int
    peer_wait_seconds: int
    turn_timeout_seconds: int
    invalid_reason: str | None

    def to_dict(self) -> dict[str, Any]:
        """The ``duel`` object of a status, times in ISO 8601."""
        return {
            "id": self.id,
            "source_path": self.source_path,
            "topic": self.topic,
            "topic_slug": self.topic_slug,
            "debate_path": self.debate_path,
            "status": self.status,
            "outcome": self.outcome,
            "pending_outcome": self.pending_outcome,
            "reason": self.reason,
            "created_at": iso(self.created_at),
            "closed_at": iso(self.closed_at),
            "max_turns": self.schedule.max_turns,
            "lease_seconds": self.lease_seconds,
            "peer_wait_seconds": self.peer_wait_seconds,
            "turn_timeout_seconds": self.turn_timeout_seconds,
            "invalid_reason": self.invalid_reason,
            "seats": self.schedule.seats,
            **({"chair": True} if self.schedule.chair else {}),  # only when set: other duels' JSON is unchanged
        }


class LockView(NamedTuple):
    """What anyone may see of the lease: its owner, its expiry and the last fence."""

    owner_participant_id: str | None
    lease_expires_at: float | None
    fence: int

    def to_dict(self) -> dict[str, Any]:
        """The ``lock`` object of a status."""
        return {
            "owner_participant_id": self.owner_participant_id,
            "lease_expires_at": iso(self.lease_expires_at),
            "fence": self.fence,
        }


@dataclass(kw_only=True)
class StatusResult(DuelResult):
    """A duel as anyone may see it: the duel, its participants, the lock and whose turn it is."""

    duel: DuelInfo
    participants: tuple[ParticipantView, ...]
    lock: LockView
    turn_count: int
    next_turn_seat: int | None  # 0: the chair's
    next_turn: int  # its number: turn_count + 1, or turn_count with a chair (turns count from 0)
    turn_deadline: float | None
    peer_wait_until: float | None
    candidate_convergence: bool

    @staticmethod
    def fields_of(state: DuelState, participant: Participant | None, now: Instant, debate_path: str) -> dict[str, Any]:
        """The fields of a status of ``state`` at ``now``, for a result that extends it."""
        live = policy.live_lease(state, now)
        deadline = policy.turn_deadline(state)
        return dict(
            **common_fields(state, participant, now),
            duel=DuelInfo(
                id=state.id,
                source_path=state.source_path,
                topic=state.topic,
                topic_slug=state.topic_slug,
                debate_path=debate_path,
                status=state.status,
                outcome=state.outcome,
                pending_outcome=state.pending_outcome,
                reason=state.reason,
                created_at=state.created_at,
                closed_at=state.closed_at,
                schedule=state.schedule,
                lease_seconds=state.lease_seconds,
                peer_wait_seconds=state.peer_wait_seconds,
                turn_timeout_seconds=state.turn_timeout_seconds,
                invalid_reason=state.invalid_reason,
            ),
            participants=tuple(ParticipantView.of(state, p) for p in sorted(state.participants, key=lambda p: p.seat)),
            lock=LockView(
                live.owner if live else None, state.wall_time(live.expires_mono) if live else None, state.fence
            ),
            turn_count=len(state.turns),
            next_turn=policy.next_turn_number(state),
            next_turn_seat=policy.next_turn_seat(state) if state.status == ACTIVE else None,
            turn_deadline=state.wall_time(deadline) if deadline is not None else None,
            peer_wait_until=None if policy.all_seated(state) else state.wall_time(policy.peer_wait_until(state)),
            candidate_convergence=state.candidate_convergence,
        )

    @classmethod
    def of(cls, state: DuelState, participant: Participant | None, now: Instant, debate_path: str) -> StatusResult:
        """The status of ``state`` at ``now``, with ``participant``'s next step when given."""
        return cls(**cls.fields_of(state, participant, now, debate_path))

    def participant(self, participant_id: str | None) -> ParticipantView | None:
        """The view of the participant of that id, or None."""
        return next((p for p in self.participants if p.id == participant_id), None)

    def to_dict(self) -> dict[str, Any]:
        """The status JSON (docs/protocol.md section 5)."""
        return {
            **super().to_dict(),
            "duel": self.duel.to_dict(),
            "participants": [p.to_dict() for p in self.participants],
            "lock": self.lock.to_dict(),
            "turn_count": self.turn_count,
            **({"next_turn": self.next_turn} if self.duel.schedule.chair else {}),
            "next_turn_seat": self.next_turn_seat,
            "turn_deadline": iso(self.turn_deadline),
            "peer_wait_until": iso(self.peer_wait_until),
            "candidate_convergence": self.candidate_convergence,
        }


class Observation(NamedTuple):
    """What a watcher reads at once: the duel's status and its events after a cursor."""

    status: StatusResult
    events: list[Event]  # in order (docs/protocol.md section 9)
    cursor: EventCursor  # where the next read starts


@dataclass(kw_only=True)
class WaitResult(StatusResult):
    """A status after a wait: how long it waited, and whether anything changed."""

    waited_seconds: float
    changed: bool

    def to_dict(self) -> dict[str, Any]:
        """The status JSON with ``waited_seconds`` and ``changed``."""
        return {**super().to_dict(), "waited_seconds": self.waited_seconds, "changed": self.changed}
