"""What the lock ops answer: claim, refresh and release (a join: :mod:`._join_result`; append, seal,
commit and the audience's ops: :mod:`._record_results`).

Results like those of :mod:`.results` (plain records, ``to_dict()`` giving the protocol's
JSON), kept apart because building these classes costs start-up time that a polled
``duel tools status`` or ``wait`` does not need, and a lock op not the record ops' (a
dataclass costs a quarter of a millisecond): each op loads the module of its answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..clock import iso
from .results import DuelResult, LeaseToken


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
