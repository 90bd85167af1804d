"""What ``duel validate`` reports about an artifact, one :class:`Problem` each (a leaf both checks share)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Problem"]


@dataclass(kw_only=True, frozen=True)
class Problem:
    """One thing wrong with an artifact: its record or rule code, what is wrong, and where."""

    code: str
    message: str
    line: int | None = None
    turn: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """As ``duel validate --json`` writes it: the fields that are set."""
        found = {"code": self.code, "message": self.message, "line": self.line, "turn": self.turn}
        return {k: v for k, v in found.items() if v is not None}
