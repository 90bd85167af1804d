"""What a claim answers, in a module of its own: each op builds the class of its answer alone (:mod:`._result_core`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..clock import iso
from ._result_core import DuelResult, LeaseToken


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
