"""A duel's events, typed: one frozen dataclass per type of docs/protocol.md section 9.

An :class:`Event` is the envelope (``seq``, ``ts``, ``duel_id``, ``participant_id``) around its
``data``, one of the :class:`EventData` types below (the envelope in :mod:`._event_core`, those of
leases in :mod:`._lease_events`, which a lock op loads alone, those of seats in :mod:`._seat_events`
and :mod:`._seat_return_events`, which a join loads);
``to_json()`` and ``from_json()`` are the only places an event is a dict, where the log is
written and read. Whether an event wakes ``wait``
belongs to its type (``wakes``). Times stay as logged, ISO 8601 UTC: they are shown, never judged.
:class:`Usage`, the counts a ``usage`` event carries, is the one value of what a model used, from
the provider through the participant's loop to the report; it lives in :mod:`.counts`, so that
``duel tools status`` can show usage without building every event type here.

A type this version does not know (a newer writer's), or data that does not fit its type (a
hand-edited log), is read as an :class:`UnknownEvent` carrying the data as logged: readers skip it
or show it as it is, and never fail on it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..vocabulary import ErrorCode, EventType
from ._event_core import (
    Event,
    EventData,
    Unfit,
    UnknownEvent,
    _bool,
    _int,
    _optional_int,
    _optional_str,
    _str,
    _strs,
    read_data,
    read_fields,
)
from ._lease_events import LockAcquired, LockRefreshed, LockReleased
from ._seat_events import ParticipantRegistered, ParticipantWaiting
from ._seat_return_events import ParticipantResumed, SeatReclaimed, SeatTakenOver
from .counts import Usage

__all__ = [
    "CandidateConvergence",
    "CheckedCitation",
    "CitationVerdicts",
    "CitationsVerified",
    "DuelClosed",
    "DuelSealed",
    "Event",
    "EventData",
    "FinalThoughtsAdded",
    "LockAcquired",
    "LockRefreshed",
    "LockReleased",
    "OpeningCommitted",
    "ParticipantRegistered",
    "ParticipantResumed",
    "ParticipantWaiting",
    "Provenance",
    "ProviderFailed",
    "QuestionAsked",
    "RecordInvalidated",
    "RulingWritten",
    "SeatReclaimed",
    "SeatTakenOver",
    "SourceChanged",
    "TurnAppended",
    "TurnRejected",
    "Unfit",
    "UnknownEvent",
    "UsageRecorded",
    "event_of",
    "parse_event",
    "read_data",
    "read_fields",
    "same_model",
]


def _objects(data: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    value = data.get(name)
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise Unfit(f"{name} is not a list of objects")
    return value


def _counts(data: Mapping[str, Any], name: str) -> dict[str, int]:
    value = data.get(name)
    if not isinstance(value, dict) or not all(isinstance(count, int) for count in value.values()):
        raise Unfit(f"{name} is not an object of counts")
    return dict(value)


# -- the data of each type ---------------------------------------------------------------------


@dataclass(kw_only=True, frozen=True)
class TurnAppended(EventData):
    """A turn was accepted: its number, stance, hash, whether it is signed, the wrappers removed,
    and, while edits are in force, the revision after it and its size (lines added, removed)."""

    event_type = EventType.TURN_APPENDED
    turn_number: int
    stance: str  # empty for a chair's turn
    sha256: str
    signed: bool = False
    stripped: tuple[str, ...] = ()  # the wrappers `duel join` removed (vocabulary.WRAPPERS)
    revision: str | None = None
    revision_lines: tuple[int, int] = (0, 0)

    def to_json(self) -> dict[str, Any]:
        """The fields in order; the revision's only while edits are in force, so other logs read as before."""
        found = super().to_json()
        if self.revision is None:
            del found["revision"], found["revision_lines"]
        return found

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TurnAppended:
        """The data of its JSON object (raises :class:`Unfit`)."""
        lines = data.get("revision_lines", [0, 0])
        if not (isinstance(lines, list) and len(lines) == 2 and all(type(n) is int for n in lines)):
            raise Unfit("revision_lines is not two counts")
        return cls(
            turn_number=_int(data, "turn_number"),
            stance=_str(data, "stance"),
            sha256=_str(data, "sha256"),
            signed=_bool(data, "signed"),
            stripped=_strs(data, "stripped", ()),
            revision=_optional_str(data, "revision"),
            revision_lines=(lines[0], lines[1]),
        )


@dataclass(frozen=True)
class TurnRejected(EventData):
    """A turn was refused, with the rule codes it broke (bookkeeping: it wakes no one)."""

    event_type = EventType.TURN_REJECTED
    wakes = False
    turn_number: int
    codes: tuple[str, ...]  # sorted


@dataclass(frozen=True)
class CandidateConvergence(EventData):
    """A turn made every seat's stance agree: the duel may be converging."""

    event_type = EventType.CANDIDATE_CONVERGENCE
    turn_number: int


@dataclass(frozen=True)
class RecordInvalidated(EventData):
    """Logged by the service itself: the event's ``participant_id`` is None."""

    event_type = EventType.RECORD_INVALIDATED
    reason: str


@dataclass(frozen=True)
class DuelSealed(EventData):
    """A seat signed the closed duel's ending (section 6, "Sealed endings"; bookkeeping: it wakes no one)."""

    event_type = EventType.DUEL_SEALED
    wakes = False
    seat: int


@dataclass(kw_only=True, frozen=True)
class OpeningCommitted(EventData):
    """A seat committed its sealed opening (section 4, "Sealed openings"): the hash its turn ``turn_number``
    must have when revealed, and how many of the ``seats`` openings are committed now. It wakes the others:
    the last commitment opens the reveal."""

    event_type = EventType.OPENING_COMMITTED
    seat: int
    turn_number: int
    sha256: str
    committed: int
    seats: int


@dataclass(kw_only=True, frozen=True)
class QuestionAsked(EventData):
    """The audience asked seat ``to_seat`` question ``id`` after round ``round``: its turn ``due_turn`` must
    answer it (section 4, "The audience"). The text is in the artifact's front matter; ``participant_id``
    is ``null`` (the audience holds no seat)."""

    event_type = EventType.QUESTION_ASKED
    id: int
    to_seat: int
    round: int
    due_turn: int
    by: str


@dataclass(frozen=True)
class FinalThoughtsAdded(EventData):
    """An audience member added final thoughts to the closed duel (bookkeeping: it wakes no one)."""

    event_type = EventType.FINAL_THOUGHTS
    wakes = False
    by: str


@dataclass(kw_only=True, frozen=True)
class RulingWritten(EventData):
    """The service wrote ruling ``r`` into the record: ``verdict`` on ``turn_number``'s citation ``url`` in
    ``where`` (section 10, "Rulings"); a ``fabricated`` one redacts that claim."""

    event_type = EventType.RULING_WRITTEN
    r: int
    turn_number: int
    where: str
    verdict: str
    url: str


@dataclass(frozen=True)
class SourceChanged(EventData):
    """Logged by the service: the source file on disk no longer has the pinned hash (section 6, "The source")."""

    event_type = EventType.SOURCE_CHANGED
    wakes = False
    sha256: str  # the file's hash now


@dataclass(frozen=True)
class DuelClosed(EventData):
    """The duel closed with ``outcome``, and the reason given if any."""

    event_type = EventType.DUEL_CLOSED
    outcome: str
    reason: str | None = None


# A snapshot's date stamp after a model's alias: claude-sonnet-4-5-20250929, gpt-4o-2024-08-06.
_DATE_STAMP = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})")


def same_model(requested: str, served: str) -> bool:
    """Whether the model an API says answered is the one asked for (section 9, ``usage``, decision): the same
    id, or one of them is the other with a snapshot's date stamp appended, as an API names the snapshot an alias
    points to (``claude-sonnet-4-5`` answered as ``claude-sonnet-4-5-20250929``). Two different stamps differ."""
    if requested == served:
        return True
    shorter, longer = sorted((requested, served), key=len)
    return longer.startswith(shorter) and _DATE_STAMP.fullmatch(longer[len(shorter) :]) is not None


@dataclass(kw_only=True, frozen=True)
class Provenance:
    """Who answered one draft of a turn: the seat's provider (``anthropic``, ``openai``, ``human``, ``scripted``),
    the model it asked for, the model the API says answered (None: it did not say) and the reasoning level
    asked for (None: the model's default)."""

    provider: str
    requested_model: str
    served_model: str | None
    reasoning: str | None

    @property
    def served_other(self) -> bool:
        """Whether the API said another model answered than the one asked for (:func:`same_model`)."""
        return self.served_model is not None and not same_model(self.requested_model, self.served_model)


@dataclass(kw_only=True, frozen=True)
class UsageRecorded(EventData):
    """What the requests of one draft of a turn used, and who answered it; its JSON is flat: the turn
    number, the counts, then the provenance and the codes the draft repairs, when logged."""

    event_type = EventType.USAGE
    wakes = False
    turn_number: int
    usage: Usage
    provenance: Provenance | None = None  # None: logged by an earlier version, or by a caller that gave none
    repair_codes: tuple[str, ...] = ()  # sorted: the rule codes the draft before this one broke; () for a first draft

    def to_json(self) -> dict[str, Any]:
        """The turn number and the counts, then what is known of the draft; a log without it reads as before."""
        found = {"turn_number": self.turn_number, **self.usage.to_json()}
        if self.provenance is not None:
            found.update(vars(self.provenance))
        if self.repair_codes:
            found["repair_codes"] = list(self.repair_codes)
        return found

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UsageRecorded:
        """The data of its JSON object (raises :class:`Unfit`); without a ``provider``, no provenance."""
        provenance = None
        if "provider" in data:
            provenance = Provenance(
                provider=_str(data, "provider"),
                requested_model=_str(data, "requested_model"),
                served_model=_optional_str(data, "served_model"),
                reasoning=_optional_str(data, "reasoning"),
            )
        return cls(
            turn_number=_int(data, "turn_number"),
            usage=Usage.from_json(data),
            provenance=provenance,
            repair_codes=_strs(data, "repair_codes", ()),
        )


@dataclass(kw_only=True, frozen=True)
class ProviderFailed(EventData):
    """A seat's model failed for good while writing turn ``turn_number``: the seat stops, and its
    turn will time out. Logged by that seat before it exits (it wakes the others, so they can say so)."""

    event_type = EventType.PROVIDER_FAILED
    seat: int
    turn_number: int
    code: str  # a PROVIDER_* error code, or BUDGET_EXCEEDED (section 2)
    message: str

    @property
    def by_a_person(self) -> bool:
        """Whether a person in the seat aborted the turn (``HUMAN_ABORTED``): no model failed."""
        return self.code == ErrorCode.HUMAN_ABORTED

    @property
    def why(self) -> str:
        """Why the seat stopped, as a close's reason and the report say it: ``its model failed (CODE): MESSAGE``,
        ``the person aborted (HUMAN_ABORTED): MESSAGE`` or ``it reached its money cap (BUDGET_EXCEEDED): MESSAGE``."""
        if self.by_a_person:
            failed = "the person aborted"
        elif self.code == ErrorCode.BUDGET_EXCEEDED:  # no model failed: the seat stopped itself before a request
            failed = "it reached its money cap"
        else:
            failed = "its model failed"
        return f"{failed} ({self.code}): {self.message}"


@dataclass(kw_only=True, frozen=True)
class CheckedCitation:
    """One URL citation of a ``citations_verified`` event, and its verdict (section 10)."""

    line: int | None
    item: str
    url: str | None
    verdict: str  # a vocabulary.Verdict
    confidence: str | None
    reason: str


@dataclass(kw_only=True, frozen=True)
class CitationVerdicts:
    """What ``duel join --verify`` found in the URL citations of a turn, or of a draft of it."""

    writer: str  # the participant whose turn or draft it is
    draft: int | None  # 1 for the checker's own first draft, 2 for its first repair…; None: an accepted turn
    sent_back: bool  # the draft went back for repair
    voters: tuple[str, ...]  # () when checked mechanically only
    counts: Mapping[str, int]  # verdict -> how many, in vocabulary.VERDICTS order
    citations: tuple[CheckedCitation, ...]

    def to_json(self) -> dict[str, Any]:
        """The verdicts as JSON, each citation an object."""
        return {
            "writer": self.writer,
            "draft": self.draft,
            "sent_back": self.sent_back,
            "voters": list(self.voters),
            "counts": dict(self.counts),
            "citations": [vars(citation) for citation in self.citations],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CitationVerdicts:
        """The data of its JSON object (raises :class:`Unfit`)."""
        return cls(
            writer=_str(data, "writer"),
            draft=_optional_int(data, "draft"),
            sent_back=_bool(data, "sent_back"),
            voters=_strs(data, "voters"),
            counts=_counts(data, "counts"),
            citations=tuple(read_fields(CheckedCitation, item) for item in _objects(data, "citations")),
        )


@dataclass(frozen=True)
class CitationsVerified(EventData):
    """What ``duel join --verify`` found in the citations of a turn or draft (bookkeeping: it wakes no one)."""

    event_type = EventType.CITATIONS_VERIFIED
    wakes = False
    turn_number: int
    verdicts: CitationVerdicts

    def to_json(self) -> dict[str, Any]:
        """The turn number and the verdicts, flat."""
        return {"turn_number": self.turn_number, **self.verdicts.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CitationsVerified:
        """The data of its JSON object (raises :class:`Unfit`)."""
        return cls(_int(data, "turn_number"), CitationVerdicts.from_json(data))


def parse_event(line: str | bytes) -> Event:
    """One line of a log (raises ValueError when it is not an event: not JSON, not an object, no envelope)."""
    return event_of(json.loads(line))


def event_of(raw: object) -> Event:
    """The event a log line's decoded JSON holds (raises :class:`Unfit` when it is not an object or has no envelope)."""
    if not isinstance(raw, dict):
        raise Unfit("an event is not a JSON object")
    return Event.from_json(raw)
