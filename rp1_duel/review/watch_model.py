"""``duel watch``'s model: what the view shows of a duel at one moment, and the words for it.

Pure functions of a status and a clock, shared by the follower (:mod:`.watch`) and the terminal's
display (:mod:`.terminal`); it imports neither, so the terminal, loaded only on a terminal, never
imports the follower back (docs/protocol.md section 2, "duel watch").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from ..clock import iso
from ..coordination import StatusResult
from ..schedule import Schedule
from ..vocabulary import ACTIVE, EventType
from .listing import present

__all__ = [
    "EventLine",
    "SeatView",
    "TimeFormat",
    "WatchView",
    "countdown",
    "epoch",
    "outcome_line",
    "situation",
    "view_of",
]

TimeFormat = Callable[[float], str]


@dataclass(kw_only=True, frozen=True)
class EventLine:
    """One logged event as the view shows it: its sequence number, time, type and words."""

    seq: int
    ts: str  # as logged: ISO 8601 UTC
    kind: EventType | str  # the event's type (a str: one this version does not know)
    text: str


def epoch(timestamp: str) -> float:
    """An ISO 8601 UTC time as the protocol writes it (``…Z``), in epoch seconds."""
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


@dataclass(kw_only=True, frozen=True)
class SeatView:
    """One seat as the view shows it: who sits there, when it was last seen, and its part now."""

    seat: int
    name: str
    harness: str
    model_id: str
    present: bool  # seen within a lease (duel list's rule)
    seen_ago: float
    holds_floor: bool
    writes_next: bool
    stance: str | None  # of its latest turn


@dataclass(kw_only=True, frozen=True)
class WatchView:
    """A duel as the live view shows it at one moment."""

    duel_id: str
    topic: str
    debate_path: str
    closed: bool
    outcome: str | None
    reason: str | None
    pending_outcome: str | None
    invalid_reason: str | None
    turn_count: int
    seats: tuple[SeatView, ...]
    floor: str | None  # who holds a live lease
    lease_left: float | None
    deadline_at: float | None  # of the turn under way
    deadline_left: float | None
    peer_wait_left: float | None  # while a seat is still free
    candidate_convergence: bool
    schedule: Schedule  # who writes which turn; with a chair, seat 0 writes turn 0


def view_of(status: StatusResult, now: float, stances: Mapping[str, str] | None = None) -> WatchView:
    """The view at ``now`` (wall clock) of a status read earlier: a lease or a deadline may
    have run out since, and the view says so without reading again. ``stances`` maps
    participant ids to the stance of their latest turn."""
    duel, lock = status.duel, status.lock
    live = lock.lease_expires_at is not None and now < lock.lease_expires_at
    holder = lock.owner_participant_id if live else None
    seats = tuple(
        SeatView(
            seat=p.seat,
            name=p.display_name,
            harness=p.harness,
            model_id=p.model_id,
            present=present(p, duel, now),
            seen_ago=max(0.0, now - p.last_seen_at),
            holds_floor=p.id == holder,
            writes_next=status.next_turn_seat == p.seat
            and duel.pending_outcome is None
            and duel.invalid_reason is None,
            stance=(stances or {}).get(p.id),
        )
        for p in status.participants
    )

    def left(moment: float | None) -> float | None:
        return None if moment is None else moment - now

    return WatchView(
        duel_id=duel.id,
        topic=duel.topic,
        debate_path=duel.debate_path,
        closed=duel.status != ACTIVE,
        outcome=duel.outcome,
        reason=duel.reason,
        pending_outcome=duel.pending_outcome,
        invalid_reason=duel.invalid_reason,
        turn_count=status.turn_count,
        seats=seats,
        floor=next((s.name for s in seats if s.holds_floor), None),
        lease_left=left(lock.lease_expires_at) if live else None,
        deadline_at=status.turn_deadline,
        deadline_left=left(status.turn_deadline),
        peer_wait_left=left(status.peer_wait_until),
        candidate_convergence=status.candidate_convergence,
        schedule=duel.schedule,
    )


def countdown(seconds: float) -> str:
    """``4:05`` or ``1:02:09``: time left, rounded up to the second."""
    whole = max(0, int(-(-seconds // 1)))
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def situation(view: WatchView, time_of: TimeFormat = iso) -> tuple[str, ...]:
    """What must happen next, by when, and who holds the floor; or the outcome and the record."""
    if view.closed:
        return outcome_line(view), f"record: {view.debate_path}"
    floor = (
        f"floor: {view.floor}, lease {countdown(view.lease_left)} left"
        if (view.floor and view.lease_left is not None)
        else "floor: free"
    )
    if view.invalid_reason:
        return f"the record is invalid ({view.invalid_reason}): a participant must close the duel INVALIDATED", floor
    if view.pending_outcome:
        turns = f"{view.turn_count} turn{'' if view.turn_count == 1 else 's'}"
        return f"{view.pending_outcome} reached after {turns}: a participant must close the duel", floor
    if view.peer_wait_left is not None:  # not every seat is taken
        wait, alone = view.peer_wait_left, len(view.seats) < 2
        joined, total = len(view.seats), view.schedule.seats + view.schedule.chair
        missing = total - joined
        awaited = (
            "a second participant"
            if total == 2
            else f"{missing} more participant{'' if missing == 1 else 's'} ({joined} of {total} joined)"
        )
        return (
            f"waiting for {awaited}, {countdown(wait)} left"
            if wait > 0
            else f"{'nobody' if alone else 'not everyone'} came: a TIMEOUT close is due"
        ), floor
    writer = next((s.name for s in view.seats if s.writes_next), "?")
    schedule = view.schedule
    turn = f"turn {schedule.number_after(view.turn_count)} of {schedule.last} is {writer}'s"
    if view.deadline_left is None or view.deadline_at is None:
        return turn, floor
    if view.deadline_left <= 0:
        return f"{turn}, past its deadline: a TIMEOUT close is due", floor
    return f"{turn}, due by {time_of(view.deadline_at)} ({countdown(view.deadline_left)} left)", floor


def outcome_line(view: WatchView) -> str:
    """The closed duel's outcome, after how many of its turns, and why."""
    reason = f" ({view.reason})" if view.reason else ""
    return f"outcome: {view.outcome} after {view.turn_count} of {view.schedule.turn_count} turns{reason}"
