"""The run layout ``duel bench run --out OUT`` writes and ``duel bench score OUT`` reads (docs/bench.md).

``OUT/bench.json`` is the plan; ``OUT/<document>/duel-<k>/`` and ``OUT/<document>/single-<k>/`` are
the runs, each done once its ``result.json`` is there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..files import write_atomic
from .spend import SeatSpend, spent_usd

__all__ = [
    "BUDGET",
    "CAPS",
    "CONDITIONS",
    "ERROR",
    "RESULT",
    "WALL_CLOCK",
    "RunResult",
    "RunSpec",
    "is_done",
    "read_result",
    "write_result",
]

RESULT: Final = "result.json"
CONDITIONS: Final = ("duel", "single")
# Why a run was cut short (result.json's "stopped"): the bench's own caps, or a seat that failed.
BUDGET: Final = "budget"
WALL_CLOCK: Final = "wall-clock"
ERROR: Final = "error"
CAPS: Final = (BUDGET, WALL_CLOCK)


@dataclass(frozen=True, kw_only=True)
class RunSpec:
    """One run of the bench: a corpus document, a condition (``duel`` or ``single``) and its number k (from 1)."""

    document: str
    condition: str
    number: int
    directory: Path  # OUT/<document>/<condition>-<k>

    @property
    def key(self) -> str:
        """How the run is named in lines and the ledger: ``<document>/<condition>-<k>``."""
        return f"{self.document}/{self.condition}-{self.number}"


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """How one run ended: what ``result.json`` holds."""

    spec: RunSpec
    seats: tuple[SeatSpend, ...]
    seconds: float
    outcome: str | None = None  # the duel's outcome; for a single run, None
    record: str | None = None  # debates/<file>.md, relative to the run's folder; None without a record
    revised: str | None = None  # "revised.md" when the agreed revision (or the single seat's edits) changed it
    stopped: str | None = None  # None, BUDGET, WALL_CLOCK or ERROR
    error: str | None = None  # one line, when stopped on an error

    @property
    def usd(self) -> float:
        """What its seats spent together."""
        return spent_usd(self.seats)

    def to_json(self) -> dict[str, Any]:
        """``result.json``, in the shared layout's field order."""
        return {
            "document": self.spec.document,
            "condition": self.spec.condition,
            "run": self.spec.number,
            "outcome": self.outcome,
            "record": self.record,
            "revised": self.revised,
            "seats": [seat.to_json() for seat in self.seats],
            "seconds": round(self.seconds, 3),
            "stopped": self.stopped,
            "error": self.error,
        }


def write_result(result: RunResult) -> None:
    """Write the run's ``result.json`` at once (a crash leaves it whole or absent): the run is then done."""
    text = json.dumps(result.to_json(), indent=2) + "\n"
    write_atomic(result.spec.directory / RESULT, text.encode("utf-8"), mode=0o644)


def read_result(directory: Path) -> dict[str, Any] | None:
    """A run folder's ``result.json``, or None when it has none (or one that cannot be read: the run is redone)."""
    try:
        found = json.loads((directory / RESULT).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def is_done(directory: Path) -> bool:
    """Whether a resumed bench skips the run: it has a result, and no cap of the bench cut it short (a run a cap
    stopped is redone, so the next session completes what the last one's budget or clock left)."""
    found = read_result(directory)
    return found is not None and found.get("stopped") not in CAPS
