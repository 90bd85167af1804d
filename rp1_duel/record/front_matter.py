"""The artifact's YAML header (docs/protocol.md section 6, "Front matter"), written and read back.

Apart from :mod:`.artifact` (the turns, the conclusion, parsing a whole record): a join writes
a header and reads no record, and a ``duel tools join`` process builds these two records and
none of the parser's (bench/bench_startup.py). :mod:`.artifact` names them too.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from ..confinement import is_markdown
from ..schedule import CHAIR_SEAT, Schedule
from ..settings import ON_FABRICATION, SETTINGS

if TYPE_CHECKING:
    from ..audience import FinalThought, Question

__all__ = [
    "MAX_FRONT_MATTER_CHARS",
    "FrontMatter",
    "FrontMatterError",
    "ParticipantEntry",
    "display_source_path",
    "front_matter_mapping",
]

MAX_FRONT_MATTER_CHARS = 64 * 1024
_LATER = ("signer", "persona")  # participant fields written only when set
MAX_FRONT_MATTER_DEPTH = 16  # the service writes three: the fields, the participants, a participant's fields


class FrontMatterError(ValueError):
    """The front matter is missing, not YAML, or lacks a field; the message says which."""


# The two records are NamedTuples, not frozen dataclasses: a join builds both, and a dataclass of this size costs a
# ``duel tools`` process half a millisecond to build (bench/bench_startup.py).
class ParticipantEntry(NamedTuple):
    """A participant as the artifact records it (never a token)."""

    id: str
    seat: int
    display_name: str
    harness: str
    model_id: str
    joined_at: str | None
    signer: str | None = None  # the principal it declared at its join; written only when declared
    persona: str | None = None  # the persona its model plays; written only when it plays one


class FrontMatter(NamedTuple):
    """The artifact's YAML header (docs/protocol.md section 6), typed."""

    duel_id: str
    topic: str
    topic_slug: str
    source_path: str  # as recorded: relative to the artifact when they share a tree
    source_sha256: str
    schedule: Schedule  # max_turns, and seats and chair when a panel or a chair is there to say
    status: str
    outcome: str | None
    created_at: str
    closed_at: str | None
    participants: tuple[ParticipantEntry, ...]
    # The audience (section 4, "The audience"): written under ``audience`` only once there is one.
    questions: tuple[Question, ...] = ()
    final_thoughts: tuple[FinalThought, ...] = ()

    def to_yaml(self) -> str:
        """The header as the artifact writes it between its ``---`` fences, one field a line."""
        # JSON scalars and flow collections are valid YAML, and need no YAML library to write;
        # characters YAML refuses to read raw (DEL, C1 controls, U+FFFE…) are written escaped.
        lines = []
        for key, value in self._asdict().items():
            if key in _AUDIENCE_FIELDS:
                continue
            written = self.schedule.fields() if key == "schedule" else {key: value}
            if key == "participants":  # fields added since are written only when set: older records read as before
                written = {
                    key: [
                        {k: v for k, v in entry._asdict().items() if k not in _LATER or v is not None}
                        for entry in value
                    ]
                }
            lines += [_yaml_field(name, item) for name, item in written.items()]
        audience = {
            "questions": [question.to_json() for question in self.questions],
            "final_thoughts": [thought.to_json() for thought in self.final_thoughts],
        }
        if self.questions or self.final_thoughts:
            lines.append("audience:\n")
            lines += [_yaml_field(key, items, indent="  ") for key, items in audience.items() if items]
        return "".join(lines)

    @classmethod
    def parse(cls, raw: str | None) -> FrontMatter:
        """Read the YAML between the fences; raises :class:`FrontMatterError`."""
        meta = front_matter_mapping(raw)
        required = ["max_turns" if name == "schedule" else name for name in cls._fields if name not in _AUDIENCE_FIELDS]
        missing = [name for name in required if name not in meta]
        if missing:
            raise FrontMatterError(f"front matter lacks {', '.join(missing)}")
        try:
            max_turns = int(meta["max_turns"])
        except (TypeError, ValueError):
            raise FrontMatterError("max_turns is not a number") from None
        schedule = Schedule.recorded({**meta, "max_turns": max_turns})
        seats, allowed = schedule.seats, SETTINGS["seats"]
        if not (type(seats) is int and allowed.low <= seats <= allowed.high):
            raise FrontMatterError(f"seats is not a whole number from {allowed.low} to {allowed.high}")
        if type(schedule.chair) is not bool or type(schedule.sealed_openings) is not bool:
            raise FrontMatterError("chair or sealed_openings is not true or false")
        if schedule.on_fabrication not in ON_FABRICATION:
            raise FrontMatterError(f"on_fabrication is not one of {', '.join(ON_FABRICATION)}")
        if schedule.chair and max_turns < 2 * seats:
            raise FrontMatterError(f"max_turns is below two rounds ({2 * seats}), the fewest a chaired duel has")
        entries = meta["participants"]
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise FrontMatterError("participants is not a list of participants")
        nested = next(
            (name for name in required if name != "participants" and isinstance(meta[name], (list, dict))), None
        )
        if nested is not None:
            raise FrontMatterError(f"{nested} is not a single value")
        if not is_markdown(str(meta["source_path"])):  # a join debates Markdown only: any other file is forged
            raise FrontMatterError("source_path does not name a Markdown file (.md or .markdown)")
        return cls(
            duel_id=str(meta["duel_id"]),
            topic=str(meta["topic"]),
            topic_slug=str(meta["topic_slug"]),
            source_path=str(meta["source_path"]),
            source_sha256=str(meta["source_sha256"]),
            schedule=schedule,
            status=str(meta["status"]),
            outcome=_optional(meta["outcome"]),
            created_at=str(meta["created_at"]),
            closed_at=_optional(meta["closed_at"]),
            participants=tuple(_entry(e, schedule) for e in entries),
            **_audience(meta.get("audience")),
        )


def _yaml_field(name: str, value: Any, *, indent: str = "") -> str:
    """``name: value`` as the header writes it: a scalar on its line; a list of mappings (the participants,
    the audience's questions) one field a line, so a reviewer reads it in a pull request's diff."""
    if not (isinstance(value, list) and value and all(isinstance(item, dict) for item in value)):
        return f"{indent}{name}: {_yaml_json(value)}\n"
    lines = [f"{indent}{name}:\n"]
    for item in value:
        fields = [f"{_yaml_key(key)}: {_yaml_json(field)}" for key, field in item.items()]
        lines += [f"{indent}  {'- ' if at == 0 else '  '}{field}\n" for at, field in enumerate(fields)]
    return "".join(lines)


def _yaml_key(key: str) -> str:
    """A field's name bare when it is one of ours (``display_name``), else quoted as JSON."""
    return key if _BARE_KEY.fullmatch(key) else _yaml_json(key)


_BARE_KEY = re.compile(r"[a-z][a-z_]*")


def _yaml_json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)  # escapes C0 itself
    if text.isascii() and "\x7f" not in text:  # the usual value: nothing YAML refuses
        return text
    return _not_yaml_printable().sub(lambda found: f"\\u{ord(found.group()):04x}", text)


@functools.cache
def _not_yaml_printable() -> re.Pattern[str]:
    """What YAML refuses to read raw: DEL, C1, lone surrogates, U+FFFE and U+FFFF. Compiled on first need: the
    surrogates' range costs a join a third of a millisecond, and most values are ASCII."""
    return re.compile(r"[\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def front_matter_mapping(raw: str | None) -> dict[str, Any]:
    """The front matter as YAML gives it, untyped; raises :class:`FrontMatterError`."""
    if raw is None:
        raise FrontMatterError("no YAML front matter: not a duel artifact")
    if len(raw) > MAX_FRONT_MATTER_CHARS:
        raise FrontMatterError(f"front matter is longer than {MAX_FRONT_MATTER_CHARS} characters")
    import yaml  # paid for only by readers of whole artifacts

    try:
        _refuse_what_the_service_never_writes(yaml.scan(raw, yaml.SafeLoader))
        meta = yaml.load(raw, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise FrontMatterError(f"front matter is not valid YAML: {first}") from None
    if not isinstance(meta, dict):
        raise FrontMatterError("front matter is not a mapping of fields")
    return meta


def _refuse_what_the_service_never_writes(tokens: Iterable[Any]) -> None:
    """Anchors, aliases and deep nesting, refused from the tokens (an iterative scan) before YAML composes
    them: an alias bomb would expand, and nesting thousands deep would exhaust the recursive composer's stack."""
    import yaml

    opening = (
        yaml.FlowSequenceStartToken,
        yaml.FlowMappingStartToken,
        yaml.BlockSequenceStartToken,
        yaml.BlockMappingStartToken,
    )
    closing = (yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken, yaml.BlockEndToken)
    depth = 0
    for token in tokens:
        if isinstance(token, (yaml.AnchorToken, yaml.AliasToken)):
            raise FrontMatterError("front matter uses YAML anchors or aliases, which the service never writes")
        depth += isinstance(token, opening) - isinstance(token, closing)
        if depth > MAX_FRONT_MATTER_DEPTH:
            raise FrontMatterError(f"front matter is nested deeper than {MAX_FRONT_MATTER_DEPTH} levels")


_AUDIENCE_FIELDS = ("questions", "final_thoughts")


def _audience(raw: Any) -> dict[str, Any]:
    """The ``audience`` mapping's questions and final thoughts, each as the service writes them."""
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not set(raw) <= {"questions", "final_thoughts"}:
        raise FrontMatterError("audience is not a mapping of questions and final_thoughts")
    questions, thoughts = raw.get("questions", []), raw.get("final_thoughts", [])
    if not isinstance(questions, list) or not isinstance(thoughts, list):
        raise FrontMatterError("audience questions or final_thoughts is not a list")
    from ..audience import FinalThought, Question

    try:
        return {
            "questions": tuple(Question.from_json(item) for item in questions),
            "final_thoughts": tuple(FinalThought.from_json(item) for item in thoughts),
        }
    except ValueError as exc:
        raise FrontMatterError(f"audience: {exc}") from None


def _optional(value: Any) -> str | None:
    return None if value is None else str(value)


def _entry(raw: dict[str, Any], schedule: Schedule) -> ParticipantEntry:
    seat, seats = raw.get("seat"), schedule.seats
    lowest = CHAIR_SEAT if schedule.chair else 1
    if any(isinstance(value, (list, dict)) for value in raw.values()) or not (
        isinstance(seat, int) and lowest <= seat <= seats
    ):
        seats_allowed = "1 or 2" if seats == 2 and not schedule.chair else f"from {lowest} to {seats}"
        raise FrontMatterError(f"a participant's fields are not single values, or its seat is not {seats_allowed}")
    return ParticipantEntry(
        id=str(raw.get("id", "")),
        seat=seat if isinstance(seat, int) else 0,
        display_name=str(raw.get("display_name", "")),
        harness=str(raw.get("harness", "")),
        model_id=str(raw.get("model_id", "")),
        joined_at=_optional(raw.get("joined_at")),
        signer=_optional(raw.get("signer")),
        persona=_optional(raw.get("persona")),
    )


def display_source_path(source_path: str, *, artifact_path: str | os.PathLike[str]) -> str:
    """The source path the artifact records: relative to the artifact when both share a
    directory below the filesystem root (so every clone reads the same), else absolute."""
    folder = os.path.dirname(os.path.realpath(artifact_path))
    if os.path.commonpath([source_path, folder]) == os.path.sep:
        return source_path
    return os.path.relpath(source_path, folder)
