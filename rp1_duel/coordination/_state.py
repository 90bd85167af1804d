"""The coordination state of one duel, as stored in ``.duel/duels/<id>/state.json``.

Plain data and its JSON form; the rules that read it live in
:mod:`rp1_duel.coordination.policy`.
Times that are only shown (``*_at``) are wall-clock epoch seconds, ISO 8601 only at the
edges. Times that durations are measured from (``*_mono``) are monotonic seconds of the
boot ``boot_id``; ``wall_offset`` turns them into wall-clock times for display
(docs/protocol.md section 4, "Clocks").
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from types import UnionType
from typing import TYPE_CHECKING, Any, Union, cast, get_args, get_origin, get_type_hints

from ..clock import Instant
from ..errors import DuelError
from ..schedule import Schedule
from ..settings import ON_FABRICATION, SETTINGS
from ..vocabulary import ACTIVE, CLOSED, OUTCOMES, ErrorCode

if TYPE_CHECKING:
    from ..audience import FinalThought, Question
    from ..record import Ruling

STATE_VERSION = 2


@dataclass(kw_only=True)
class Participant:
    """A seat's holder: who it is, the hash of its token, and when it joined and was last seen."""

    id: str
    seat: int
    display_name: str
    harness: str
    model_id: str
    token_sha256: str
    joined_at: float
    last_seen_mono: float
    signer: str | None = None  # the principal it declared at its join: who its signatures must name
    persona: str | None = None  # the persona its model plays (a name, or "custom"), as its join said

    @property
    def identity(self) -> tuple[str, str, str]:
        """Name, harness and model id: what a join matches a returning participant by."""
        return (self.display_name, self.harness, self.model_id)


@dataclass(kw_only=True)
class Lease:
    """The floor: who holds it, its token and fence, and when it expires (monotonic seconds)."""

    owner: str
    token: str  # kept in the owner-only state so a holder can be handed its own lease back
    fence: int
    granted_mono: float
    expires_mono: float
    for_timeout: bool = False

    def live(self, now: Instant) -> bool:
        """Whether the lease has not expired at ``now``."""
        return now.mono < self.expires_mono


@dataclass(kw_only=True)
class TurnRecord:
    """What the state keeps of an accepted turn: its number, writer, stance, hash and signature."""

    n: int
    participant_id: str
    seat: int
    stance: str
    has_blocking: bool
    sha256: str
    appended_at: float
    signature: str | None = None  # base64 body of the writer's SSH signature (record.signatures)


@dataclass
class SealRecord:
    """A seat's signature over the ending of its closed duel (record.signatures.close_message)."""

    seat: int
    signature: str


@dataclass
class Commitment:
    """A seat's sealed opening, committed before any opening is revealed: the SHA-256 its turn block will have."""

    seat: int
    sha256: str
    committed_at: float


@dataclass(kw_only=True, eq=False)  # nothing compares two states; every op would pay to build __eq__
class DuelState:
    """Everything the service knows of one duel, as ``state.json`` keeps it."""

    id: str
    source_path: str
    source_sha256: str
    topic: str
    topic_slug: str
    target_key: str
    artifact: str  # file name inside the debate dir
    created_at: float
    created_mono: float
    schedule: Schedule  # a chair, if any, holds seat 0 besides the seats
    lease_seconds: int
    peer_wait_seconds: int
    turn_timeout_seconds: int
    status: str = ACTIVE
    outcome: str | None = None
    reason: str | None = None
    closed_at: float | None = None
    participants: list[Participant] = field(default_factory=list)
    lease: Lease | None = None
    fence: int = 0
    turns: list[TurnRecord] = field(default_factory=list)
    turn_started_mono: float | None = None
    pending_outcome: str | None = None
    candidate_convergence: bool = False
    invalid_reason: str | None = None  # tampered record or vanished source: only INVALIDATED remains
    conclusion_sha256: str | None = None  # of the conclusion the close wrote: what a seal covers
    source_changed_sha256: str | None = None  # the source file's hash when a change was last noticed
    seals: list[SealRecord] = field(default_factory=list)
    commitments: list[Commitment] = field(default_factory=list)  # sealed openings (section 4), seat by seat
    questions: list[Question] = field(default_factory=list)  # the audience's, as admitted (section 4)
    final_thoughts: list[FinalThought] = field(default_factory=list)
    rulings: list[Ruling] = field(default_factory=list)  # on cited sources, written into the record (section 10)
    rev: int = 0
    event_seq: int = 0
    event_bytes: int = 0
    boot_id: str | None = None  # the boot the *_mono times belong to; None: unknown (read as the wall clock)
    wall_offset: float = 0.0  # the wall-clock time at monotonic 0 of that boot, as last set
    version: int = STATE_VERSION

    def participant(self, participant_id: str) -> Participant | None:
        """The participant of that id, or None."""
        return next((p for p in self.participants if p.id == participant_id), None)

    def seat_holder(self, seat: int) -> Participant | None:
        """The participant holding ``seat``, or None while it is free."""
        return next((p for p in self.participants if p.seat == seat), None)

    def wall_time(self, mono: float) -> float:
        """The wall-clock time to show for a monotonic moment of this state."""
        return mono + self.wall_offset

    def to_json(self) -> bytes:
        """The state file's bytes: compact UTF-8 JSON, fields in declaration order."""
        # Records are flat dataclasses: their __dict__ is the JSON (asdict's deep copies cost more).
        return json.dumps(self, default=_fields, ensure_ascii=False, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, data: bytes, where: str) -> DuelState:
        """The state that ``data`` (read from ``where``) holds; ``STATE_CORRUPT`` when it holds none."""
        try:
            return _parse_state(cls, data)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise corrupt(where, exc) from None


def _parse_state(kind: type[DuelState], data: bytes) -> DuelState:
    """A state file's JSON, upgraded and checked field by field (raises what :meth:`DuelState.from_json` catches)."""
    raw = json.loads(data)
    if raw.get("version") == 1:
        _upgrade_v1(raw)
    if raw.get("version") != STATE_VERSION:
        raise ValueError(f"unknown state version {raw.get('version')!r}")
    if not isinstance(raw["participants"], list) or not isinstance(raw["turns"], list):
        raise TypeError("participants and turns must be lists")
    raw["participants"] = [_build(Participant, p) for p in raw["participants"]]
    raw["lease"] = _build(Lease, raw["lease"]) if raw["lease"] is not None else None
    raw["turns"] = [_build(TurnRecord, t) for t in raw["turns"]]
    raw["seals"] = [_build(SealRecord, seal) for seal in _list(raw.get("seals", []))]
    raw["commitments"] = [_build(Commitment, c) for c in _list(raw.get("commitments", []))]
    if raw.get("questions") or raw.get("final_thoughts"):  # the audience's records load with a duel that has one
        from ..audience import FinalThought, Question

        raw["questions"] = [Question.from_json(q) for q in _list(raw.get("questions", []))]
        raw["final_thoughts"] = [FinalThought.from_json(t) for t in _list(raw.get("final_thoughts", []))]
    if raw.get("rulings"):  # likewise rulings
        from ..record import Ruling

        raw["rulings"] = [Ruling.from_json(r) for r in _list(raw["rulings"])]
    shape = {name: raw.pop(name) for name in _SCHEDULE_KEYS if name in raw}
    raw["schedule"] = Schedule.recorded(_checked(Schedule, shape))
    state: DuelState = _build(kind, raw)
    _check_values(state)
    return state


_SCHEDULE_KEYS = ("max_turns", "seats", "chair", "sealed_openings", "on_fabrication")
_ONLY_WHEN_SET = (
    "commitments",
    "questions",
    "final_thoughts",
    "rulings",
)  # absent while empty: older states read as before


def _list(value: object) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError("seals, commitments, questions and final thoughts must be lists")
    return value


def _fields(record: object) -> dict[str, Any]:
    """A record's fields as JSON keeps them. The schedule's are where state files always had
    them: ``max_turns`` before the other settings, ``seats`` after them, ``chair`` only in a
    duel that has one, ``sealed_openings`` only in one whose openings are sealed; ``commitments``,
    ``questions`` and ``final_thoughts`` only once there are some, so other duels' state files read as before."""
    if not isinstance(record, DuelState):
        to_json = getattr(record, "to_json", None)  # a question, final thought or ruling: its own JSON form
        return cast("dict[str, Any]", to_json()) if to_json is not None else vars(record)
    found: dict[str, Any] = {}
    for name, value in vars(record).items():
        if name == "schedule":
            found["max_turns"] = value.max_turns
        elif name in _ONLY_WHEN_SET and not value:
            continue
        else:
            found[name] = value
        if name == "turn_timeout_seconds":
            found["seats"] = record.schedule.seats
            if record.schedule.chair:
                found["chair"] = True
            if record.schedule.sealed_openings:
                found["sealed_openings"] = True
            if record.schedule.on_fabrication != "redact":
                found["on_fabrication"] = record.schedule.on_fabrication
    return found


def _upgrade_v1(raw: dict[str, Any]) -> None:
    """Version 1 kept wall-clock times only. They are read as the monotonic times of an
    unknown boot whose clock is the wall clock (offset 0): judged on the wall clock until
    the first write re-anchors them on this boot's monotonic clock."""
    raw.update(
        version=2,
        boot_id=None,
        wall_offset=0.0,
        created_mono=raw["created_at"],
        turn_started_mono=raw.pop("turn_started_at"),
    )
    for participant in raw["participants"]:
        participant["last_seen_mono"] = participant.pop("last_seen_at")
    if raw["lease"] is not None:
        raw["lease"]["granted_mono"] = raw["lease"].pop("granted_at")
        raw["lease"]["expires_mono"] = raw["lease"].pop("expires_at")


def _build(kind: type, raw: dict[str, Any]) -> Any:
    return kind(**_checked(kind, raw))


def _checked(kind: type, raw: dict[str, Any]) -> dict[str, Any]:
    """``raw``, whose fields must be ``kind``'s, each of its type."""
    if not isinstance(raw, dict):
        raise TypeError(f"{kind.__name__} is not an object")
    allowed = _allowed_types(kind)
    for name, value in raw.items():
        types = allowed.get(name)
        if types is None:
            raise ValueError(f"unexpected field {kind.__name__}.{name}")
        # A shallow type check: a hand-edited state must fail here, not deep in a rule.
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise ValueError(f"{kind.__name__}.{name} holds a {type(value).__name__}")
    return raw


# Records a state keeps in lists, checked as lists here: their classes load only with a state that has some.
_LISTED_RECORDS: dict[str, Any] = {"Question": object, "FinalThought": object, "Ruling": object}


@cache
def _allowed_types(kind: type) -> dict[str, tuple[type, ...]]:
    """Field name -> the JSON types it may hold (nested records are built before this check)."""
    allowed = {}
    for name, hint in get_type_hints(kind, localns=_LISTED_RECORDS).items():
        args = get_args(hint) if get_origin(hint) in (Union, UnionType) else (hint,)
        types: list[type] = []
        for arg in args:
            if arg is float:
                types += [int, float]
            elif get_origin(arg) is list:
                types.append(list)
            else:
                types.append(arg)
        allowed[name] = tuple(types)
    return allowed


def corrupt(where: str, exc: BaseException | str) -> DuelError:
    """``STATE_CORRUPT`` for the state file at ``where``, with the first line of what was wrong."""
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return DuelError(
        ErrorCode.STATE_CORRUPT,
        f"state file {where} is unreadable ({reason}); it was left as it is",
        {"path": where},
    )


def _seats_problem(state: DuelState) -> bool:
    """Panelists hold seats 1..k (k at most ``seats``), in join order; the chair, if the duel has one, seat 0."""
    seats = sorted(p.seat for p in state.participants)
    if state.schedule.chair and seats[:1] == [0]:
        seats = seats[1:]
    return len(seats) > state.schedule.seats or seats != list(range(1, len(seats) + 1))


DUEL_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,80}")
_HEX = re.compile(r"[0-9a-f]+")
_PARTICIPANT_ID = re.compile(r"p-[0-9a-f]{8}")
_BOOT_ID = re.compile(r"[0-9A-Za-z-]{1,64}")


def _check_values(state: DuelState) -> None:
    """State is data, not authority: every field that reaches a path, a heading or the
    artifact is checked as strictly as the join that wrote it (another local user may
    have written this file)."""
    from .identity import name_problem, signer_problem, single_line_problem, slugify

    def hex_of(value: str, length: int) -> bool:
        return len(value) == length and _HEX.fullmatch(value) is not None

    problems = [
        (not DUEL_ID.fullmatch(state.id), "id"),
        (state.artifact != f"{state.id}.md", "artifact"),
        (not os.path.isabs(state.source_path) or "\x00" in state.source_path, "source_path"),
        (not hex_of(state.source_sha256, 64), "source_sha256"),
        (not state.topic or single_line_problem(state.topic, 200) is not None, "topic"),
        (state.topic_slug != slugify(state.topic), "topic_slug"),
        (not hex_of(state.target_key, 32), "target_key"),
        (state.status not in (ACTIVE, CLOSED), "status"),
        (state.outcome is not None and state.outcome not in OUTCOMES, "outcome"),
        (state.pending_outcome is not None and state.pending_outcome not in OUTCOMES, "pending_outcome"),
        (not SETTINGS["seats"].low <= state.schedule.seats <= SETTINGS["seats"].high, "seats"),
        (state.schedule.on_fabrication not in ON_FABRICATION, "on_fabrication"),
        (_seats_problem(state), "participants"),
        (state.boot_id is not None and not _BOOT_ID.fullmatch(state.boot_id), "boot_id"),
    ]
    for p in state.participants:
        problems += [
            (not _PARTICIPANT_ID.fullmatch(p.id), "participant id"),
            (name_problem(p.display_name) is not None, "participant display_name"),
            (name_problem(p.harness) is not None, "participant harness"),
            (name_problem(p.model_id, 128, allow_slash=True) is not None, "participant model_id"),
            (not hex_of(p.token_sha256, 64), "participant token_sha256"),
            (p.signer is not None and signer_problem(p.signer) is not None, "participant signer"),
            (p.persona is not None and name_problem(p.persona) is not None, "participant persona"),
        ]
    problems += [
        (state.conclusion_sha256 is not None and not hex_of(state.conclusion_sha256, 64), "conclusion_sha256"),
        (state.source_changed_sha256 is not None and not hex_of(state.source_changed_sha256, 64), "source_changed"),
        (len({seal.seat for seal in state.seals}) != len(state.seals), "seals"),
        (len({c.seat for c in state.commitments}) != len(state.commitments), "commitments"),
    ]
    problems += [
        (not (1 <= c.seat <= state.schedule.seats and hex_of(c.sha256, 64)), "commitment") for c in state.commitments
    ]
    if state.questions or state.final_thoughts:
        from ..audience import FINAL_THOUGHT_CHARS, QUESTION_CHARS

        problems += [
            (
                not 1 <= q.to_seat <= state.schedule.seats
                or name_problem(q.by) is not None
                or not q.text
                or single_line_problem(q.text, QUESTION_CHARS) is not None,
                "question",
            )
            for q in state.questions
        ]
        problems += [
            (name_problem(t.by) is not None or single_line_problem(t.text, FINAL_THOUGHT_CHARS) is not None, "thought")
            for t in state.final_thoughts
        ]
    signed = [t.signature for t in state.turns if t.signature is not None] + [seal.signature for seal in state.seals]
    if signed:  # the signatures module is loaded only for a duel with signed turns or seals
        from ..record import SIGNATURE_BODY

        problems += [(not SIGNATURE_BODY.fullmatch(signature), "signature") for signature in signed]
    problems += [(state.seat_holder(seal.seat) is None, "seal") for seal in state.seals]
    bad = next((name for failed, name in problems if failed), None)
    if bad is not None:
        raise ValueError(f"field {bad} holds a value no join writes")
