"""What a release answers, in a module of its own: each op builds the class of its answer alone (:mod:`._result_core`)."""

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
