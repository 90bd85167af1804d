"""What a join answers: the seat handle, the duel it joined and that duel's settings.

In a module of its own because a claim, refresh or release does not need it, and each
dataclass a ``duel tools`` process builds costs it about a quarter of a millisecond
(bench/bench_startup.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..clock import Instant, iso
from ..schedule import Schedule
from . import policy
from ._result_core import DuelResult, Seat, common_fields
from ._state import DuelState, Participant


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
