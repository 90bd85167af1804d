"""``duel watch``: a running duel as it happens, on a terminal or through a pipe.

The :class:`Follower` reads through the lock service's read-only side: one ``stat()`` of
the duel's state file every :data:`POLL_SECONDS`, and only when it changed, the state and
the events logged since the last read (a seek, not a re-read). It takes no lock and writes
nothing, so watching cannot slow the participants down. What a line says for an event,
the view's model and its words are pure functions of a status, the events and a clock
(docs/protocol.md section 2, "duel watch").
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any, Protocol

from ..clock import iso
from ..coordination.results import Observation, StatusResult
from ..coordination.service import DuelService
from ..coordination.storage import LOG_START
from ..errors import DuelError, invalid_argument
from ..record.artifact import parse
from ..record.history import read_artifact_text
from ..schedule import Schedule
from ..turns.grammar import parse_turn
from ..vocabulary import ACTIVE, ErrorCode
from .listing import present

POLL_SECONDS = 0.1  # a stat() ten times a second: a change shows within 0.1 s
REDRAW_SECONDS = 1.0  # the countdowns move once a second
HEADLINE_CHARS = 80
CANDIDATES_SHOWN = 5  # closed duels named when none is active, the latest first

TimeFormat = Callable[[float], str]


# -- choosing the duel ----------------------------------------------------------------------


def pick_duel(service: DuelService, duel_id: str | None) -> str:
    """``duel_id``, else the only active duel of the debate dir (only the latest duel of
    each source and topic, the ones the index names, can be active)."""
    if duel_id:
        return duel_id
    active: list[str] = []
    closed: list[str] = []
    for candidate in service.latest_duel_ids():
        try:
            (active if service.status(candidate).status == ACTIVE else closed).append(candidate)
        except DuelError as exc:
            if exc.code != ErrorCode.DUEL_NOT_FOUND:
                raise
    root = service.debate.root
    if not active and not closed:
        raise DuelError(ErrorCode.DUEL_NOT_FOUND, f"no duel in {root}")
    if not active:
        recent = "".join(f", {duel}" for duel in closed[-CANDIDATES_SHOWN:][::-1])
        raise DuelError(
            ErrorCode.DUEL_NOT_FOUND,
            f"no active duel in {root}: pass --duel-id to watch a closed one{recent} (duel list shows them all)",
            {"candidates": closed},
        )
    if len(active) > 1:
        raise invalid_argument(
            f"{len(active)} duels are active in {root}: pass --duel-id, one of {', '.join(active)}", candidates=active
        )
    return active[0]


# -- what a line says for an event -------------------------------------------------------------


@dataclass(frozen=True)
class EventLine:
    seq: int
    ts: str  # as logged: ISO 8601 UTC
    kind: str  # the event's type
    text: str


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def headline(position: str, width: int = HEADLINE_CHARS) -> str:
    """A Position's first sentence on one line, cut to ``width`` characters with an ellipsis."""
    sentence = _SENTENCE_END.split(" ".join(position.split()), 1)[0]
    return sentence if len(sentence) <= width else sentence[: width - 1].rstrip() + "…"


def epoch(timestamp: str) -> float:
    """An ISO 8601 UTC time as the protocol writes it (``…Z``), in epoch seconds."""
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def event_line(
    event: Mapping[str, Any], names: Mapping[str, str], headlines: Mapping[int, str], time_of: TimeFormat = iso
) -> EventLine:
    """One line for one logged event (docs/protocol.md section 9). ``names`` maps participant
    ids to display names, ``headlines`` turn numbers to their Position's headline. An event
    this reader does not know, or one missing a field, is shown as its type and data."""
    kind = str(event.get("type"))
    pid = event.get("participant_id")
    who = names.get(pid, pid) if isinstance(pid, str) else "the service"
    data = event.get("data")
    if not isinstance(data, dict):
        data = {}
    try:
        text = _describe(kind, who, data, headlines, time_of)
    except (KeyError, TypeError, ValueError):
        text = None
    if text is None:
        text = f"{kind} {json.dumps(data, ensure_ascii=False)}"
    seq = event.get("seq")
    return EventLine(seq if isinstance(seq, int) else -1, str(event.get("ts", "")), kind, text)


def _describe(
    kind: str, who: str, data: Mapping[str, Any], headlines: Mapping[int, str], time_of: TimeFormat
) -> str | None:
    if kind == "participant_registered":
        return f"{who} joined seat {data['seat']} ({data['harness']} / {data['model_id']})"
    if kind == "participant_waiting":
        return f"{who} waits for a second participant until {time_of(epoch(data['until']))}"
    if kind == "participant_resumed":
        return f"{who} resumed seat {data['seat']}"
    if kind == "seat_reclaimed":
        return f"{who} reclaimed seat {data['seat']}, idle for a lease"
    if kind == "seat_taken_over":
        return f"{who} took seat {data['seat']} over with model {data['model_id']} (was {data['previous_model_id']})"
    if kind == "lock_acquired":
        purpose = ", to close TIMEOUT" if data["for_timeout"] else ""
        return f"{who} holds the floor{purpose} (lease {data['fence']}, until {time_of(epoch(data['expires_at']))})"
    if kind == "lock_refreshed":
        return f"{who} refreshed lease {data['fence']} until {time_of(epoch(data['expires_at']))}"
    if kind == "lock_released":
        return f"{who} released the floor (lease {data['fence']})"
    if kind == "turn_appended":
        number = int(data["turn_number"])
        notes = (["signed"] if data.get("signed") else []) + [f"removed {w}" for w in data.get("stripped", [])]
        said = f": {headlines[number]}" if headlines.get(number) else ""
        return f"turn {number} by {who} ({data['stance']}){said}" + (f" [{', '.join(notes)}]" if notes else "")
    if kind == "turn_rejected":
        return f"a draft of turn {data['turn_number']} by {who} was rejected: {', '.join(data['codes'])}"
    if kind == "candidate_convergence":
        return f"candidate convergence at turn {data['turn_number']}"
    if kind == "record_invalidated":
        return f"the record is invalid: {data['reason']}"
    if kind == "duel_closed":
        reason = f" ({data['reason']})" if data.get("reason") else ""
        return f"{who} closed the duel: {data['outcome']}{reason}"
    if kind == "citations_verified":
        number = int(data["turn_number"])
        checked = f"draft {data['draft']} of turn {number}" if data.get("draft") else f"turn {number}"
        found = ", ".join(f"{count} {verdict}" for verdict, count in data["counts"].items())
        sent_back = "; sent back for repair" if data.get("sent_back") else ""
        return f"{who} checked the URLs {checked} cites: {found}{sent_back}"
    if kind == "usage":
        cached = f" ({data['cache_read_tokens']} cached)" if data.get("cache_read_tokens") else ""
        retries = f", {data['retries']} retries" if data.get("retries") else ""
        return (
            f"{who}'s model on turn {data['turn_number']}: {data['input_tokens']} tokens in{cached}, "
            f"{data['output_tokens']} out, {float(data['seconds']):.1f} s{retries}"
        )
    return None


# -- the view's model -----------------------------------------------------------------------


@dataclass(frozen=True)
class SeatView:
    seat: int
    name: str
    harness: str
    model_id: str
    present: bool  # seen within a lease (duel list's rule)
    seen_ago: float
    holds_floor: bool
    writes_next: bool
    stance: str | None  # of its latest turn


@dataclass(frozen=True)
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
            p.seat,
            p.display_name,
            p.harness,
            p.model_id,
            present(p, duel.lease_seconds, now),
            max(0.0, now - p.last_seen_at),
            p.id == holder,
            status.next_turn_seat == p.seat and duel.pending_outcome is None and duel.invalid_reason is None,
            (stances or {}).get(p.id),
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
        return f"{view.pending_outcome} reached after {view.turn_count} turns: a participant must close the duel", floor
    if view.peer_wait_left is not None:  # not every seat is taken
        wait, alone = view.peer_wait_left, len(view.seats) < 2
        awaited = "a second participant" if alone else f"more participants ({len(view.seats)} joined)"
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
    reason = f" ({view.reason})" if view.reason else ""
    return f"outcome: {view.outcome} after {view.turn_count} of {view.schedule.turn_count} turns{reason}"


# -- reading a duel as it changes ------------------------------------------------------------


def read_headlines(artifact: str, numbers: Collection[int]) -> dict[int, str]:
    """The headlines of turns ``numbers``, from the artifact; none when it cannot be read
    (the turns are then shown without)."""
    try:
        text = read_artifact_text(artifact)
    except (OSError, ValueError):
        return {}
    return {block.n: headline(parse_turn(block.body).position) for block in parse(text).blocks if block.n in numbers}


_UNREAD = (-1, -1, -1)


class Follower:
    """One duel through the service's read-only side, read only when its state file changed.

    Every change of a duel rewrites its state file, the events of refreshes and rejected
    drafts included (they only leave ``rev`` alone, so they wake no ``wait``): its stamp is
    the one signal needed, and the events file itself is never polled.
    """

    def __init__(self, service: DuelService, duel_id: str):
        self.service = service
        self.duel_id = duel_id
        self.cursor = LOG_START
        self.stamp: Hashable = _UNREAD
        self.names: dict[str, str] = {}
        self.stances: dict[str, str] = {}  # participant id -> the stance of its latest turn

    def poll(self) -> Observation | None:
        """The status and the new events, or None when nothing changed since the last poll."""
        stamp = self.service.state_stamp(self.duel_id)
        if stamp == self.stamp:
            return None
        self.stamp = stamp  # taken before reading: a write landing meanwhile is read at the next poll
        seen = self.service.observe(self.duel_id, self.cursor)
        self.cursor = seen.cursor
        self.names.update((p.id, p.display_name) for p in seen.status.participants)
        self.stances.update((turn.participant_id, turn.stance) for turn in appended(seen.events))
        return seen

    def lines(self, seen: Observation, time_of: TimeFormat = iso) -> list[EventLine]:
        turns = [turn.number for turn in appended(seen.events)]
        headlines = read_headlines(seen.status.duel.debate_path, turns) if turns else {}
        return [event_line(event, self.names, headlines, time_of) for event in seen.events]


@dataclass(frozen=True)
class Appended:
    participant_id: str
    number: int
    stance: str


def appended(events: Iterable[Mapping[str, Any]]) -> list[Appended]:
    """The turns the ``turn_appended`` events among ``events`` announce (well-formed ones)."""
    found = []
    for event in events:
        data = event.get("data")
        if event.get("type") == "turn_appended" and isinstance(data, dict):
            pid, number, stance = event.get("participant_id"), data.get("turn_number"), data.get("stance")
            if isinstance(pid, str) and isinstance(number, int) and isinstance(stance, str):
                found.append(Appended(pid, number, stance))
    return found


class Display(Protocol):
    def time_of(self, moment: float) -> str: ...
    def event(self, line: EventLine) -> None: ...
    def show(self, view: WatchView) -> None: ...
    def close(self, view: WatchView) -> None: ...
    def stop(self) -> None: ...


def follow(
    service: DuelService,
    duel_id: str,
    display: Display,
    *,
    poll_seconds: float = POLL_SECONDS,
    redraw_seconds: float = REDRAW_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
) -> WatchView:
    """Show the duel on ``display`` until it closes (at once for a closed one); return its last view."""
    follower = Follower(service, duel_id)
    seen = follower.poll()
    assert seen is not None  # the first poll always reads
    status = seen.status
    drawn_at = float("-inf")
    try:
        while True:
            if seen is not None:
                status = seen.status
                for line in follower.lines(seen, display.time_of):
                    display.event(line)
            now = service.clock().wall
            view = view_of(status, now, follower.stances)
            if view.closed:
                display.close(view)
                return view
            if seen is not None or now - drawn_at >= redraw_seconds:
                display.show(view)
                drawn_at = now
            sleep(poll_seconds)
            seen = follower.poll()
    finally:
        display.stop()


# -- through a pipe (the terminal's display is in .terminal) ----------------------------------


class PlainDisplay:
    """Through a pipe: one line per event, as ``<ISO time> <text>``, flushed; no ANSI codes."""

    def __init__(self, stream: IO[str]):
        self.stream = stream

    def time_of(self, moment: float) -> str:
        return iso(moment)

    def _write(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def event(self, line: EventLine) -> None:
        self._write(f"{line.ts} {line.text}")

    def show(self, view: WatchView) -> None:
        """Nothing: the countdowns are for a terminal; a pipe gets events only."""

    def close(self, view: WatchView) -> None:
        self._write(f"{outcome_line(view)}; record: {view.debate_path}")

    def stop(self) -> None:
        """Nothing to tidy: every line is already written."""


def display_for(stream: IO[str]) -> Display:
    """The live terminal view when ``stream`` is a terminal, else one plain line per event."""
    if not stream.isatty():
        return PlainDisplay(stream)
    from .terminal import TerminalDisplay  # rich is paid for on a terminal only

    return TerminalDisplay(stream)
