"""``duel list``: every duel of a debate dir, open or closed, and which have gone silent.

Read through the lock service's read-only side (each duel's state, no event log, no
lock, no write). The rows are pure functions of a status and the time: when a
participant counts as present, when an open duel is silent, how long ago is said
(docs/protocol.md section 2, "duel list").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from ..clock import Instant, iso
from ..coordination import DuelInfo, DuelService, ParticipantView, StatusResult
from ..errors import DuelError
from ..schedule import Schedule
from ..vocabulary import ACTIVE, ErrorCode

__all__ = [
    "ListedDuel",
    "ListedParticipant",
    "UnreadableDuel",
    "ago",
    "columns",
    "duels_table",
    "list_duels",
    "listed",
    "local_time",
    "present",
]

OPEN, CLOSED = "open", "closed"
UNREADABLE = "unreadable"


def present(participant: ParticipantView, duel: DuelInfo, now: float) -> bool:
    """In an open duel and seen within a lease: the idleness after which its seat may be reclaimed
    (section 3). A live participant is seen at least every third of a lease, waiting or writing;
    nobody is present in a closed duel, however lately it was seen."""
    return duel.status == ACTIVE and now - participant.last_seen_at < duel.lease_seconds


@dataclass(kw_only=True, frozen=True)
class ListedParticipant:
    """One participant of a listed duel: its seat, who it is, when it was last seen, and whether it is present."""

    seat: int
    display_name: str
    harness: str
    model_id: str
    last_seen_at: float
    present: bool

    def to_dict(self) -> dict[str, Any]:
        """The participant as ``duel list --json`` writes it."""
        return {
            "seat": self.seat,
            "display_name": self.display_name,
            "harness": self.harness,
            "model_id": self.model_id,
            "last_seen_at": iso(self.last_seen_at),
            "present": self.present,
        }


@dataclass(kw_only=True, frozen=True)
class ListedDuel:
    """One row of ``duel list``."""

    duel_id: str
    topic: str
    status: str  # open or closed
    outcome: str | None
    pending_outcome: str | None  # reached by the turns, not yet closed (None once closed)
    turn_count: int
    schedule: Schedule  # the TURNS column's limit is its turn_count: max_turns, and a chair's three turns
    participants: tuple[ListedParticipant, ...]
    created_at: float
    last_activity_at: float
    idle_seconds: float
    silent: bool
    debate_path: str

    def to_dict(self) -> dict[str, Any]:
        """The row as ``duel list --json`` writes it."""
        return {
            "duel_id": self.duel_id,
            "topic": self.topic,
            "status": self.status,
            "outcome": self.outcome,
            "pending_outcome": self.pending_outcome,
            "turn_count": self.turn_count,
            "max_turns": self.schedule.max_turns,
            "participants": [p.to_dict() for p in self.participants],
            "created_at": iso(self.created_at),
            "last_activity_at": iso(self.last_activity_at),
            "idle_seconds": round(self.idle_seconds, 3),
            "silent": self.silent,
            "debate_path": self.debate_path,
        }


@dataclass(frozen=True)
class UnreadableDuel:
    """A duel folder whose state cannot be read: listed with why, never skipped."""

    duel_id: str
    code: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        """The row as ``duel list --json`` writes it: the folder, and why it cannot be read."""
        return {"duel_id": self.duel_id, "status": UNREADABLE, "error": {"code": self.code, "message": self.message}}


def listed(status: StatusResult, now: Instant) -> ListedDuel:
    """The row of a duel at ``now``.

    Last activity is the latest of the creation, the close and every participant's last
    seen mark: every op a participant authenticates marks it seen, claims, refreshes,
    appends (rejected ones too) and waits with its token included. An open duel is silent
    when that is a lease ago or more: nobody is there to take a turn or claim the timeout,
    so it will not end by itself.
    """
    duel = status.duel
    participants = tuple(
        ListedParticipant(
            seat=p.seat,
            display_name=p.display_name,
            harness=p.harness,
            model_id=p.model_id,
            last_seen_at=p.last_seen_at,
            present=present(p, duel, now.wall),
        )
        for p in status.participants
    )
    last = max([duel.created_at, duel.closed_at or duel.created_at, *(p.last_seen_at for p in participants)])
    idle = max(0.0, now.wall - last)
    is_open = duel.status == ACTIVE
    return ListedDuel(
        duel_id=duel.id,
        topic=duel.topic,
        status=OPEN if is_open else CLOSED,
        outcome=duel.outcome,
        pending_outcome=duel.pending_outcome if is_open else None,
        turn_count=status.turn_count,
        schedule=duel.schedule,
        participants=participants,
        created_at=duel.created_at,
        last_activity_at=last,
        idle_seconds=idle,
        silent=is_open and idle >= duel.lease_seconds,
        debate_path=duel.debate_path,
    )


def list_duels(service: DuelService) -> list[ListedDuel | UnreadableDuel]:
    """Every duel of the service's debate dir, oldest first; unreadable ones last.

    A folder with no state yet is a join creating its duel (or one killed doing so): not a
    duel, so not listed."""
    rows: list[ListedDuel] = []
    broken: list[UnreadableDuel] = []
    for duel_id in service.duel_ids():
        try:
            rows.append(listed(service.status(duel_id), service.clock()))
        except DuelError as exc:
            if exc.code != ErrorCode.DUEL_NOT_FOUND:
                broken.append(UnreadableDuel(duel_id, exc.code, exc.message))
    return [*sorted(rows, key=lambda row: (row.created_at, row.duel_id)), *broken]


# -- the human table ------------------------------------------------------------------------


def ago(seconds: float) -> str:
    """A duration as people say it: ``12s``, ``5m``, ``3h``, ``2d`` (rounded down)."""
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def local_time(ts: float, tz: tzinfo | None = None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """A moment for people: in the local time zone (``tz`` in tests)."""
    return datetime.fromtimestamp(ts, tz).strftime(fmt)


HEADER = ("DUEL", "STATUS", "OUTCOME", "TURNS", "PARTICIPANTS", "LAST ACTIVITY", "")


def duels_table(rows: Sequence[ListedDuel | UnreadableDuel], tz: tzinfo | None = None) -> str:
    """The rows as aligned columns, a header first; ``SILENT`` flags a silent open duel."""
    cells = [HEADER]
    for row in rows:
        if isinstance(row, UnreadableDuel):
            cells.append((row.duel_id, UNREADABLE, row.code, "", "", "", row.message))
            continue
        outcome = row.outcome or (f"{row.pending_outcome} pending" if row.pending_outcome else "—")
        cells.append(
            (
                row.duel_id,
                row.status,
                outcome,
                f"{row.turn_count}/{row.schedule.turn_count}",
                ", ".join(p.display_name for p in row.participants) or "—",
                f"{local_time(row.last_activity_at, tz)} ({ago(row.idle_seconds)} ago)",
                "SILENT" if row.silent else "",
            )
        )
    return columns(cells)


def columns(lines: Sequence[Sequence[str]]) -> str:
    """Rows of cells as aligned columns, two spaces apart, no trailing blanks (a header is its first row)."""
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in lines
    )
