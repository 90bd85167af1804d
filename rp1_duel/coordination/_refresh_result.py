"""What a refresh answers, in a module of its own: each op builds the class of its answer alone (:mod:`._result_core`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..clock import iso
from ._result_core import DuelResult, LeaseToken


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
