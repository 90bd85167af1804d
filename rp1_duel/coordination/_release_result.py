"""What a release answers (a join's: :mod:`._join_result`; the record ops': :mod:`._record_results`).

A result like those of :mod:`.results` (a plain record, ``to_dict()`` giving the protocol's JSON), in a
module of its own: each lock op builds the class of its answer alone (a dataclass costs a ``duel tools``
process a quarter of a millisecond; bench/bench_startup.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._result_core import DuelResult


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
