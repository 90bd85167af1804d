"""What a refresh answers (a join's: :mod:`._join_result`; the record ops': :mod:`._record_results`).

A result like those of :mod:`.results` (a plain record, ``to_dict()`` giving the protocol's JSON), in a
module of its own: each lock op builds the class of its answer alone (a dataclass costs a ``duel tools``
process a quarter of a millisecond; bench/bench_startup.py).
"""

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
