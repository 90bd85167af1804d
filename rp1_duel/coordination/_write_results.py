"""What the lock ops answer: join, claim, refresh and release (append, seal, commit and the
audience's ops: :mod:`._record_results`).

Results like those of :mod:`.results` (plain records, ``to_dict()`` giving the protocol's
JSON), kept apart because building these classes costs start-up time that a polled
``duel tools status`` or ``wait`` does not need, and a lock op not the record ops' (a
dataclass costs a quarter of a millisecond): each op loads the module of its answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..clock import Instant, iso
from ..schedule import Schedule
from . import policy
from ._state import DuelState, Participant
from .results import DuelResult, LeaseToken, Seat, common_fields


@dataclass(kw_only=True)
class JoinResult(DuelResult):
    """What a join answers: the seat handle, the duel it joined and that duel's settings."""

    seat: Seat
    source_path: str
    source_sha256: str
    target_key: str
    topic: str
    topic_slug: str
    debate_path: str
    schedule: Schedule
    lease_seconds: int
    peer_wait_until: float
    settings_note: str | None = None  # joining an existing duel: which of its settings differ from those asked

    @classmethod
    def of(
        cls,
        state: DuelState,
        participant: Participant,
        *,
        token: str,
        now: Instant,
        debate_path: str,
        settings_note: str | None = None,
    ) -> JoinResult:
        """The answer to ``participant``'s join of ``state``, handing it ``token``."""
        return cls(
            **common_fields(state, participant, now),
            seat=Seat(state.id, participant.id, token, participant.seat),
            source_path=state.source_path,
            source_sha256=state.source_sha256,
            target_key=state.target_key,
            topic=state.topic,
            topic_slug=state.topic_slug,
            debate_path=debate_path,
            schedule=state.schedule,
            lease_seconds=state.lease_seconds,
            peer_wait_until=state.wall_time(policy.peer_wait_until(state)),
            settings_note=settings_note,
        )

    def to_dict(self) -> dict[str, Any]:
        """The join's JSON: the seat's token and number, the source, the topic and the settings."""
        return {
            **super().to_dict(),
            "participant_token": self.seat.token,
            "seat": self.seat.number,
            "source_path": self.source_path,
            "source_sha256": self.source_sha256,
            "target_key": self.target_key,
            "topic": self.topic,
            "topic_slug": self.topic_slug,
            "debate_path": self.debate_path,
            "max_turns": self.schedule.max_turns,
            "seats": self.schedule.seats,
            **({"chair": True} if self.schedule.chair else {}),  # only when set: other duels' JSON is unchanged
            "lease_seconds": self.lease_seconds,
            "peer_wait_until": iso(self.peer_wait_until),
            **({"settings_note": self.settings_note} if self.settings_note else {}),
        }


@dataclass(kw_only=True)
class ClaimResult(DuelResult):
    """What a claim answers: the lease when granted, else why not and when to try again."""

    acquired: bool
    lease: LeaseToken | None  # when acquired
    lease_expires_at: float | None
    owner_participant_id: str | None
    retry_after_seconds: float | None  # when refused
    wait_until: float | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The claim JSON: ``acquired``, the lease token and expiry, or the reason and retry time."""
        return {
            **super().to_dict(),
            "acquired": self.acquired,
            "lease_token": self.lease.value if self.lease else None,
            "lease_expires_at": iso(self.lease_expires_at),
            "owner_participant_id": self.owner_participant_id,
            "retry_after_seconds": self.retry_after_seconds,
            "wait_until": iso(self.wait_until),
            "reason": self.reason,
        }


@dataclass(kw_only=True)
class RefreshResult(DuelResult):
    """What a refresh answers: the lease's new expiry, or why it was not refreshed."""

    refreshed: bool
    lease: LeaseToken | None  # when refreshed
    lease_expires_at: float | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The refresh JSON: ``refreshed``, the lease token and expiry, and the reason."""
        return {
            **super().to_dict(),
            "refreshed": self.refreshed,
            "lease_token": self.lease.value if self.lease else None,
            "lease_expires_at": iso(self.lease_expires_at),
            "reason": self.reason,
        }


@dataclass(kw_only=True)
class ReleaseResult(DuelResult):
    """What a release answers: whether the lease was released and the duel closed, with which outcome."""

    released: bool
    closed: bool
    outcome: str | None
    reason: str | None

    def to_dict(self) -> dict[str, Any]:
        """The release JSON: ``released``, ``closed``, the outcome and the reason."""
        return {
            **super().to_dict(),
            "released": self.released,
            "closed": self.closed,
            "outcome": self.outcome,
            "reason": self.reason,
        }
