"""``duel watch``: a running duel as it happens, on a terminal or through a pipe.

The :class:`Follower` reads through the lock service's read-only side: one ``stat()`` of
the duel's state file every :data:`POLL_SECONDS`, and only when it changed, the state and
the events logged since the last read (a seek, not a re-read). It takes no lock and writes
nothing, so watching cannot slow the participants down. What a line says for an event is a
pure function of the event, as the view's model (:mod:`.watch_model`) is of a status and a
clock (docs/protocol.md section 2, "duel watch").
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Protocol

from ..clock import iso
from ..coordination import (
    LOG_START,
    CandidateConvergence,
    CitationsVerified,
    DuelClosed,
    DuelSealed,
    DuelService,
    Event,
    EventData,
    FinalThoughtsAdded,
    LockAcquired,
    LockRefreshed,
    LockReleased,
    Observation,
    OpeningCommitted,
    ParticipantRegistered,
    ParticipantResumed,
    ParticipantWaiting,
    ProviderFailed,
    QuestionAsked,
    RecordInvalidated,
    RulingWritten,
    SeatReclaimed,
    SeatTakenOver,
    SourceChanged,
    TurnAppended,
    TurnRejected,
    UnknownEvent,
    UsageRecorded,
    input_figure,
)
from ..errors import DuelError, invalid_argument
from ..printable import printable
from ..record import FrontMatter, parse, read_artifact_text
from ..turns import parse_turn
from ..vocabulary import ACTIVE, ErrorCode, Verdict
from .watch_model import EventLine, TimeFormat, WatchView, epoch, outcome_line, view_of

__all__ = [
    "Appended",
    "Display",
    "Follower",
    "PlainDisplay",
    "appended",
    "display_for",
    "event_line",
    "follow",
    "headline",
    "pick_duel",
]

POLL_SECONDS = 0.1  # a stat() ten times a second: a change shows within 0.1 s
REDRAW_SECONDS = 1.0  # the countdowns move once a second
HEADLINE_CHARS = 80
CANDIDATES_SHOWN = 5  # closed duels named when none is active, the latest first

# -- choosing the duel ----------------------------------------------------------------------


def pick_duel(service: DuelService, duel_id: str | None, *, closed_use: str | None = "watch a closed one") -> str:
    """``duel_id``, else the only active duel of the debate dir (only the latest duel of
    each source and topic, the ones the index names, can be active). With none active, the
    refusal names the latest closed ones for ``closed_use`` (`pass --duel-id to …`), or
    none when a closed duel is of no use to the command."""
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
        hint = f": pass --duel-id to {closed_use}{recent} (duel list shows them all)" if closed_use else ""
        raise DuelError(ErrorCode.DUEL_NOT_FOUND, f"no active duel in {root}{hint}", {"candidates": closed})
    if len(active) > 1:
        raise invalid_argument(
            f"{len(active)} duels are active in {root}: pass --duel-id, one of {', '.join(active)}", candidates=active
        )
    return active[0]


# -- what a line says for an event -------------------------------------------------------------


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def headline(position: str, width: int = HEADLINE_CHARS) -> str:
    """A Position's first sentence on one line, cut to ``width`` characters with an ellipsis."""
    sentence = _SENTENCE_END.split(" ".join(position.split()), 1)[0]
    return sentence if len(sentence) <= width else sentence[: width - 1].rstrip() + "…"


def event_line(
    event: Event,
    names: Mapping[str, str],
    headlines: Mapping[int, str],
    time_of: TimeFormat = iso,
    *,
    questions: Mapping[int, str] | None = None,
) -> EventLine:
    """One line for one logged event (docs/protocol.md section 9). ``names`` maps participant
    ids to display names, ``headlines`` turn numbers to their Position's headline, ``questions``
    the audience's question ids to their text. An event this reader cannot read, or one with a
    time that is not one, is shown as its type and data."""
    pid = event.participant_id
    who = "the service" if pid is None else names.get(pid, pid)
    data = event.data
    try:
        text = (
            None
            if isinstance(data, UnknownEvent)
            else _describe(data, who, headlines, time_of) or _describe_audience(data, questions or {})
        )
    except ValueError:  # a hand-edited time
        text = None
    if text is None:
        text = f"{event.type} {json.dumps(event.data.to_json(), ensure_ascii=False)}"
    return EventLine(seq=event.seq, ts=event.ts, kind=event.type, text=text)


def _describe(data: EventData, who: str, headlines: Mapping[int, str], time_of: TimeFormat) -> str | None:
    return (
        _describe_seat(data, who, time_of)
        or _describe_turn(data, who, headlines)
        or _describe_record(data, who)
        or _describe_check(data, who)
    )  # None: a type given no words yet, shown as its data


def _describe_audience(data: EventData, questions: Mapping[int, str]) -> str | None:
    """The audience holds no seat: its events name who asked or spoke, not a participant."""
    if isinstance(data, QuestionAsked):
        text = f": {questions[data.id]}" if questions.get(data.id) else ""
        return f"{data.by} asked seat {data.to_seat} Q{data.id} (due at turn {data.due_turn}){text}"
    if isinstance(data, FinalThoughtsAdded):
        return f"{data.by} added final thoughts (shown in the report; they change no outcome)"
    return None


def _describe_seat(data: EventData, who: str, time_of: TimeFormat) -> str | None:
    if isinstance(data, ParticipantRegistered):
        return f"{who} joined seat {data.seat} ({data.harness} / {data.model_id})"
    if isinstance(data, ParticipantWaiting):
        return f"{who} waits for every seat to be taken until {time_of(epoch(data.until))}"
    if isinstance(data, ParticipantResumed):
        return f"{who} resumed seat {data.seat}"
    if isinstance(data, SeatReclaimed):
        return f"{who} reclaimed seat {data.seat}, idle for a lease"
    if isinstance(data, SeatTakenOver):
        return f"{who} took seat {data.seat} over with model {data.model_id} (was {data.previous_model_id})"
    if isinstance(data, LockAcquired):
        purpose = ", to close TIMEOUT" if data.for_timeout else ""
        return f"{who} holds the floor{purpose} (lease {data.fence}, until {time_of(epoch(data.expires_at))})"
    if isinstance(data, LockRefreshed):
        return f"{who} refreshed lease {data.fence} until {time_of(epoch(data.expires_at))}"
    if isinstance(data, LockReleased):
        return f"{who} released the floor (lease {data.fence})"
    return None


def _describe_turn(data: EventData, who: str, headlines: Mapping[int, str]) -> str | None:
    if isinstance(data, TurnAppended):
        number = data.turn_number
        notes = (["signed"] if data.signed else []) + [f"removed {wrapper}" for wrapper in data.stripped]
        if data.revision is not None:
            added, removed = data.revision_lines
            notes.append(f"revision {data.revision}: +{added} -{removed} lines")
        said = f": {headlines[number]}" if headlines.get(number) else ""
        return f"turn {number} by {who} ({data.stance}){said}" + (f" [{', '.join(notes)}]" if notes else "")
    if isinstance(data, TurnRejected):
        return _rejected(data.turn_number, who, data.codes)
    if isinstance(data, OpeningCommitted):
        waiting = "; the openings are revealed next" if data.committed == data.seats else ""
        return (
            f"{who} committed a sealed opening, turn {data.turn_number} (sha256 {data.sha256[:12]}…): "
            f"{data.committed} of {data.seats}{waiting}"
        )
    return None


def _describe_record(data: EventData, who: str) -> str | None:
    if isinstance(data, CandidateConvergence):
        return f"candidate convergence at turn {data.turn_number}"
    if isinstance(data, RecordInvalidated):
        return f"the record is invalid: {data.reason}"
    if isinstance(data, DuelClosed):
        reason = f" ({data.reason})" if data.reason else ""
        return f"{who} closed the duel: {data.outcome}{reason}"
    if isinstance(data, SourceChanged):
        return "the source file changed on disk: turns are still checked against the version pinned at the join"
    if isinstance(data, DuelSealed):
        return f"{who} sealed the ending for seat {data.seat}"
    if isinstance(data, RulingWritten):
        redacted = "; its claim is redacted from every view" if data.verdict == Verdict.FABRICATED else ""
        return f"ruling {data.r} on turn {data.turn_number}, {data.where}: {data.verdict} ({data.url}){redacted}"
    return None


def _describe_check(data: EventData, who: str) -> str | None:
    if isinstance(data, CitationsVerified):
        number, verdicts = data.turn_number, data.verdicts
        checked = f"draft {verdicts.draft} of turn {number}" if verdicts.draft else f"turn {number}"
        found = ", ".join(f"{count} {verdict}" for verdict, count in verdicts.counts.items())
        sent_back = "; sent back for repair" if verdicts.sent_back else ""
        return f"{who} checked the URLs {checked} cites: {found}{sent_back}"
    if isinstance(data, ProviderFailed):
        failed = f"{who} aborted" if data.by_a_person else f"{who}'s model failed"
        if data.code == ErrorCode.BUDGET_EXCEEDED:  # no model failed: the seat stopped itself
            failed = f"{who} reached its money cap"
        return (
            f"{failed} writing turn {data.turn_number} ({data.code}): {data.message}; "
            f"seat {data.seat} stopped, and its turn times out at its deadline unless it is run again"
        )
    if isinstance(data, UsageRecorded):
        return _describe_usage(data, who)
    return None


def _rejected(number: int, who: str, codes: Sequence[str]) -> str:
    return f"a draft of turn {number} by {who} was rejected: {', '.join(codes)}"


def _describe_usage(data: UsageRecorded, who: str) -> str:
    # `duel join` checks its drafts before appending, so its rejected draft is logged only as the codes the next
    # draft repairs: said first, in the words of a rejected append.
    rejected = f"{_rejected(data.turn_number, who, data.repair_codes)}; " if data.repair_codes else ""
    return rejected + _draft_usage(data, who)


def _draft_usage(data: UsageRecorded, who: str) -> str:
    used, provenance = data.usage, data.provenance
    if not used.requests and provenance is not None:  # a person or a script: no model was asked
        return f"{who} ({provenance.provider}) wrote a draft of turn {data.turn_number} in {used.seconds:.1f} s"
    retries = f", {used.retries} retries" if used.retries else ""
    about = "~" if used.output_estimated else ""
    other = ""
    if provenance is not None and provenance.served_other:
        other = f"; asked for {provenance.requested_model}, answered as {provenance.served_model}"
    return (
        f"{who}'s model on turn {data.turn_number}: input {'~' if used.input_estimated else ''}{input_figure(used)}, "
        f"{about}{used.output_tokens:,} out, {used.seconds:.1f} s{retries}{other}"
    )


# -- reading a duel as it changes ------------------------------------------------------------


def read_headlines(artifact: str, numbers: Collection[int]) -> dict[int, str]:
    """The headlines of turns ``numbers``, from the artifact; none when it cannot be read
    (the turns are then shown without)."""
    try:
        text = read_artifact_text(artifact)
    except (OSError, ValueError):
        return {}
    return {block.n: headline(parse_turn(block.body).position) for block in parse(text).blocks if block.n in numbers}


def read_questions(artifact: str) -> dict[int, str]:
    """The audience's questions by id, from the artifact's front matter; none when it cannot be read
    (the questions are then shown without their text)."""
    try:
        front = FrontMatter.parse(parse(read_artifact_text(artifact)).front_matter)
    except (OSError, ValueError):  # FrontMatterError is a ValueError
        return {}
    return {question.id: question.text for question in front.questions}


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
        """One line for each event ``seen`` brought, with the headlines of the turns it appended and the
        text of the questions it asked."""
        artifact = seen.status.duel.debate_path
        turns = [turn.number for turn in appended(seen.events)]
        headlines = read_headlines(artifact, turns) if turns else {}
        asked = any(isinstance(event.data, QuestionAsked) for event in seen.events)
        questions = read_questions(artifact) if asked else {}
        return [event_line(event, self.names, headlines, time_of, questions=questions) for event in seen.events]


@dataclass(frozen=True)
class Appended:
    """A turn a ``turn_appended`` event announces: who wrote it, its number and its stance."""

    participant_id: str
    number: int
    stance: str


def appended(events: Iterable[Event]) -> list[Appended]:
    """The turns the ``turn_appended`` events among ``events`` announce."""
    return [
        Appended(event.participant_id, event.data.turn_number, event.data.stance)
        for event in events
        if isinstance(event.data, TurnAppended) and event.participant_id is not None
    ]


class Display(Protocol):
    """Where :func:`follow` shows a duel: a terminal's live panel, or plain lines through a pipe."""

    def time_of(self, moment: float) -> str:
        """``moment`` (epoch seconds) as this display writes a time."""
        ...

    def event(self, line: EventLine) -> None:
        """Show one logged event."""
        ...

    def show(self, view: WatchView) -> None:
        """Show the duel as it stands in ``view``."""
        ...

    def pause(self) -> None:
        """Take a live panel off the screen until the next event or view, so a prompt can be read there."""
        ...

    def close(self, view: WatchView) -> None:
        """Show the closed duel's last view."""
        ...

    def stop(self) -> None:
        """Tidy up the display, however the following ended."""
        ...


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
    first = follower.poll()
    if first is None:  # never: the first poll always reads
        raise RuntimeError(f"the first poll of {duel_id} read nothing")
    seen: Observation | None = first
    status = first.status
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
        """``moment`` as an ISO 8601 UTC time, the way the log writes it."""
        return iso(moment)

    def _write(self, text: str) -> None:
        self.stream.write(printable(text) + "\n")  # names, positions and reasons are the peers' text
        self.stream.flush()

    def event(self, line: EventLine) -> None:
        """Write the event as ``<ISO time> <text>``."""
        self._write(f"{line.ts} {line.text}")

    def show(self, view: WatchView) -> None:
        """Nothing: the countdowns are for a terminal; a pipe gets events only."""

    def pause(self) -> None:
        """Nothing: no panel is drawn through a pipe (a question is asked on the terminal, above the lines)."""

    def close(self, view: WatchView) -> None:
        """Write the outcome line and where the record is."""
        self._write(f"{outcome_line(view)}; record: {view.debate_path}")

    def stop(self) -> None:
        """Nothing to tidy: every line is already written."""


def display_for(stream: IO[str]) -> Display:
    """The live terminal view when ``stream`` is a terminal, else one plain line per event."""
    if not stream.isatty():
        return PlainDisplay(stream)
    from .terminal import TerminalDisplay  # rich is paid for on a terminal only

    return TerminalDisplay(stream)
