"""The debate record: rendering it from the state, and reading its turns back.

The artifact is Markdown with YAML front matter. Each turn sits between markers, a
signed turn followed by its signature line::

    <!-- duel:turn n=N sha256=HEX prev=HEX -->
    ---
    ## Turn N — …
    <!-- /duel:turn -->
    <!-- duel:signature n=N ssh=BASE64 -->

``sha256`` hashes exactly the lines between the two markers (UTF-8), so anyone can
recheck the chain with a text editor and ``sha256sum``; the signature line is outside
them, so a turn hashes the same signed or not (:mod:`rp1_duel.record.signatures`).
A closed duel's seals, one line a sealing seat, end the Terminal Conclusion::

    <!-- duel:seal seat=S ssh=BASE64 -->
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..confinement import is_markdown
from ..digest import sha256_hex
from ..schedule import CHAIR_SEAT, Schedule
from ..settings import ON_FABRICATION, SETTINGS
from ..turns import front_matter_end, normalize_newlines

# A join renders an artifact without an audience, rulings or signatures: their modules load when a
# record has them (bench/bench_startup.py).
if TYPE_CHECKING:
    from ..audience import FinalThought, Question
    from .rulings import Ruling

if TYPE_CHECKING:
    from .families import Provisional

__all__ = [
    "GENESIS",
    "Conclusion",
    "FrontMatter",
    "FrontMatterError",
    "ParsedArtifact",
    "ParticipantEntry",
    "Seal",
    "TurnBlock",
    "conclusion_text",
    "decode_artifact",
    "display_source_path",
    "front_matter_mapping",
    "parse",
    "parse_conclusion",
    "render",
    "sha256_text",
    "turn_block",
    "turns_region",
]

GENESIS = "0" * 64
TEMPLATE = Path(__file__).parent.parent / "templates" / "debate-artifact.md"
OPEN_CONCLUSION = "_The duel is still open._"

# At most 9 digits: int() refuses longer digit strings, and no duel has that many turns.
_OPEN = re.compile(r"^<!-- duel:turn n=(\d{1,9}) sha256=([0-9a-f]{64}) prev=([0-9a-f]{64}) -->$")
_CLOSE = "<!-- /duel:turn -->"
_SIGNATURE = re.compile(r"^<!-- duel:signature n=(\d{1,9}) ssh=([A-Za-z0-9+/=]+) -->$")
_RULING_OPEN = re.compile(r"^<!-- duel:ruling r=(\d{1,9}) sha256=([0-9a-f]{64}) prev=([0-9a-f]{64}) -->$")
_RULING_CLOSE = "<!-- /duel:ruling -->"
RULINGS_HEADING = "## Rulings"
_SEAL = re.compile(r"^<!-- duel:seal seat=(\d{1,3}) ssh=([A-Za-z0-9+/=]+) -->$")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


MAX_FRONT_MATTER_CHARS = 64 * 1024
_LATER = ("signer", "persona")  # participant fields written only when set
MAX_FRONT_MATTER_DEPTH = 16  # the service writes three: the fields, the participants, a participant's fields


class FrontMatterError(ValueError):
    """The front matter is missing, not YAML, or lacks a field; the message says which."""


@dataclass(kw_only=True, frozen=True)
class ParticipantEntry:
    """A participant as the artifact records it (never a token)."""

    id: str
    seat: int
    display_name: str
    harness: str
    model_id: str
    joined_at: str | None
    signer: str | None = None  # the principal it declared at its join; written only when declared
    persona: str | None = None  # the persona its model plays; written only when it plays one


@dataclass(kw_only=True, frozen=True)
class FrontMatter:
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
        for key, value in asdict(self).items():
            if key in _AUDIENCE_FIELDS:
                continue
            written = self.schedule.fields() if key == "schedule" else {key: value}
            if key == "participants":  # fields added since are written only when set: older records read as before
                written = {
                    key: [{k: v for k, v in entry.items() if k not in _LATER or v is not None} for entry in value]
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
        required = [
            "max_turns" if name == "schedule" else name
            for name in cls.__dataclass_fields__
            if name not in _AUDIENCE_FIELDS
        ]
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


_NOT_YAML_PRINTABLE = re.compile(r"[\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


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
    text = json.dumps(value, ensure_ascii=False)
    return _NOT_YAML_PRINTABLE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


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


@dataclass(kw_only=True, frozen=True)
class Conclusion:
    """What the close writes under ``## Terminal Conclusion``."""

    outcome: str
    closed_at: str
    candidate_convergence: bool
    reason: str | None
    summary: str | None
    revision: tuple[tuple[str, str], ...] = ()  # rows on the document's revision (record.ending)
    reason_row: bool = False  # a `Reason | —` row with no reason, as closes before wrote it: kept, read back as written
    # Every seat of one model family (record.families), as the close found it; None: not so, or closed before the label.
    provisional: Provisional | None = None
    provisional_row: str | None = None  # the row's value as read, when it reads as no label: kept as written

    @property
    def labelled(self) -> bool:
        """Whether the close wrote a ``Provisional`` row (read as a label or not): a record without one was
        closed before the label, or its seats were not all of one family."""
        return self.provisional is not None or self.provisional_row is not None


_STANDARD_ROWS = ("Field", "Outcome", "Closed at", "Candidate convergence", "Reason", "Provisional")


@dataclass(kw_only=True, frozen=True)
class TurnBlock:
    """One turn as the artifact holds it: its marker's number and hashes, its text, its signature."""

    n: int
    sha256: str  # as recorded in the marker
    prev: str
    text: str  # the lines between the markers, "---" line included
    line: int  # 1-based line of the opening marker
    signature: str | None = None  # base64 body of the SSH signature on the line after the block

    @property
    def actual_sha256(self) -> str:
        """The SHA-256 of the text as it stands, to compare with the one the marker records."""
        return sha256_text(self.text)

    @property
    def body(self) -> str:
        """The turn as the participant wrote it, without the service's ``---`` line."""
        return self.text.removeprefix("---\n")


@dataclass(frozen=True)
class Seal:
    """A seat's signature over a closed duel's ending (:func:`rp1_duel.record.signatures.close_message`)."""

    seat: int
    signature: str  # base64 body of the SSH signature


@dataclass(kw_only=True, frozen=True)
class ParsedArtifact:
    """An artifact split into its parts by :func:`parse`, each kept as written."""

    front_matter: str | None  # raw YAML between the fences
    blocks: list[TurnBlock]
    problems: list[str]  # structural problems: stray or unclosed markers
    conclusion: str | None  # the text under "## Terminal Conclusion", its seal lines left out
    seals: tuple[Seal, ...] = ()
    rulings: tuple[RulingBlock, ...] = ()  # under "## Rulings" (docs/protocol.md section 10, "Rulings")


@dataclass(kw_only=True, frozen=True)
class RulingBlock:
    """One ruling as the artifact holds it: its marker's number and hashes, and its text."""

    r: int
    sha256: str  # as recorded in the marker
    prev: str
    text: str  # the lines between the markers
    line: int  # 1-based line of the opening marker

    @property
    def actual_sha256(self) -> str:
        """The SHA-256 of the text as it stands, to compare with the one the marker records."""
        return sha256_text(self.text)


def decode_artifact(data: bytes, *, strict: bool) -> str:
    """An artifact's text; raises UnicodeDecodeError. ``strict``, for the tamper check, keeps the
    bytes the service wrote as they are; else, for a checkout, a BOM is dropped and line ends made
    LF, so a CRLF checkout reads as the LF text that was written."""
    text = data.decode("utf-8")
    return text if strict else normalize_newlines(text.removeprefix("\ufeff"))


def sha256_text(text: str) -> str:
    """The SHA-256, in hex, of ``text`` as UTF-8."""
    return sha256_hex(text.encode("utf-8"))


def turn_text(body: str) -> str:
    """What the service writes between the markers for a normalised turn body."""
    return "---\n" + body


def turn_block(n: int, body: str, prev: str) -> TurnBlock:
    """The block the service writes for turn ``n``'s normalised ``body`` after the hash ``prev``."""
    text = turn_text(body)
    return TurnBlock(n=n, sha256=sha256_text(text), prev=prev, text=text, line=0)


def display_source_path(source_path: str, *, artifact_path: str | os.PathLike[str]) -> str:
    """The source path the artifact records: relative to the artifact when both share a
    directory below the filesystem root (so every clone reads the same), else absolute."""
    folder = os.path.dirname(os.path.realpath(artifact_path))
    if os.path.commonpath([source_path, folder]) == os.path.sep:
        return source_path
    return os.path.relpath(source_path, folder)


def render(
    front: FrontMatter,
    *,
    lease_seconds: int,
    turns: list[TurnBlock] | str,
    conclusion: Conclusion | None = None,
    seals: Sequence[Seal] = (),
    rulings: Sequence[Ruling] = (),
) -> str:
    """The whole artifact. ``turns`` may be raw text kept verbatim (a tampered record); ``seals``
    end a closed duel's conclusion; ``rulings`` follow the turns, under their heading, once there are some."""
    turns_text = turns if isinstance(turns, str) else "\n".join(_block_text(b) for b in turns)
    if rulings:
        from .rulings import chained, ruling_text

        turns_text = (
            turns_text.strip("\n")
            + f"\n\n{RULINGS_HEADING}\n\n"
            + "\n".join(
                f"<!-- duel:ruling r={ruling.r} sha256={sha} prev={prev} -->\n{ruling_text(ruling)}{_RULING_CLOSE}\n"
                for ruling, sha, prev in chained(rulings)
            )
        )
    values = {
        "topic": front.topic,
        "duel_id": front.duel_id,
        "source_path": front.source_path,
        "source_sha256": front.source_sha256,
        "status": front.status,
        "outcome": front.outcome or "—",
        "created_at": front.created_at,
        "closed_at": front.closed_at or "—",
        "max_turns": str(front.schedule.max_turns),
        "seats_row": ("" if front.schedule.seats == 2 else f"\n| Seats | {front.schedule.seats} |")
        + ("\n| Chair | yes |" if front.schedule.chair else ""),
        "lease_seconds": str(lease_seconds),
        "participants_table": _participants_table(front.participants),
        "turns": turns_text.strip("\n") or "_No turns yet._",
        "conclusion": OPEN_CONCLUSION if conclusion is None else conclusion_text(conclusion, seals),
    }
    body = _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), _template())
    return f"---\n{front.to_yaml()}---\n\n{body.rstrip()}\n"


@functools.cache
def _template() -> str:
    return TEMPLATE.read_text(encoding="utf-8")


def _block_text(block: TurnBlock) -> str:
    signed = f"<!-- duel:signature n={block.n} ssh={block.signature} -->\n" if block.signature else ""
    return f"<!-- duel:turn n={block.n} sha256={block.sha256} prev={block.prev} -->\n{block.text}{_CLOSE}\n{signed}"


def _cell(value: str) -> str:
    return value.replace("|", "\\|")


def _participants_table(participants: tuple[ParticipantEntry, ...]) -> str:
    if not participants:
        return "_Nobody has joined yet._"
    rows = ["| Seat | Participant | Harness | Model | ID | Joined |", "|---|---|---|---|---|---|"]
    rows.extend(
        f"| {p.seat or 'chair'} | {_cell(p.display_name)} | {_cell(p.harness)} | {_cell(p.model_id)} "
        f"| `{p.id}` | {p.joined_at} |"
        for p in sorted(participants, key=lambda p: p.seat)
    )
    return "\n".join(rows)


_SUMMARY_HEADING = "### Summary"
_ROW = re.compile(r"^\| ([A-Za-z ]+) \| (.*) \|$")


def conclusion_text(conclusion: Conclusion, seals: Sequence[Seal] = ()) -> str:
    """What the artifact holds under ``## Terminal Conclusion``. Without ``seals``, the text a
    seal's ``conclusion`` hash covers: as :func:`parse` reads it back."""
    rows = [
        "| Field | Value |",
        "|---|---|",
        f"| Outcome | {conclusion.outcome} |",
        f"| Closed at | {conclusion.closed_at} |",
        f"| Candidate convergence | {'yes' if conclusion.candidate_convergence else 'no'} |",
        *([f"| Reason | {_cell(conclusion.reason or '—')} |"] if conclusion.reason or conclusion.reason_row else []),
        *([f"| Provisional | {_cell(shown)} |"] if (shown := _provisional_value(conclusion)) else []),
        *(f"| {label} | {_cell(value)} |" for label, value in conclusion.revision),
    ]
    text = "\n".join(rows)
    if conclusion.summary and conclusion.summary.strip():
        text += f"\n\n{_SUMMARY_HEADING}\n\n" + conclusion.summary.strip()
    if seals:
        text += "\n\n" + "\n".join(f"<!-- duel:seal seat={seal.seat} ssh={seal.signature} -->" for seal in seals)
    return text


def _provisional_value(conclusion: Conclusion) -> str | None:
    if conclusion.provisional is not None:
        from .families import provisional_text  # loaded by a close, not by a join (tests/cli/test_op_imports.py)

        return provisional_text(conclusion.provisional)
    return conclusion.provisional_row


def _read_label(value: str | None) -> Provisional | None:
    if value is None:
        return None
    from .families import read_provisional  # as _provisional_value

    return read_provisional(value)


def parse_conclusion(text: str | None) -> Conclusion | None:
    """Read back what :func:`_conclusion` wrote under ``## Terminal Conclusion``; None for an open
    duel or a conclusion without its Outcome row. Never raises: the text is not hashed, so it may be anything."""
    if not text:
        return None
    table, _, summary = text.partition(f"\n{_SUMMARY_HEADING}\n")
    matches = (_ROW.match(line.strip()) for line in table.split("\n"))
    found = [(row.group(1), row.group(2).replace("\\|", "|")) for row in matches if row]
    rows: dict[str, str] = {}
    for label, value in found:
        rows.setdefault(label, value)
    revision = tuple((label, value) for label, value in found if label not in _STANDARD_ROWS)
    if "Outcome" not in rows:
        return None
    reason, label = rows.get("Reason"), rows.get("Provisional")
    found_label = _read_label(label)
    return Conclusion(
        outcome=rows["Outcome"],
        closed_at=rows.get("Closed at", ""),
        candidate_convergence=rows.get("Candidate convergence") == "yes",
        reason=None if reason in (None, "—") else reason,
        summary=summary.strip() or None,
        revision=revision,
        reason_row=reason == "—",
        provisional=found_label,
        provisional_row=label if label is not None and found_label is None else None,
    )


def parse(text: str) -> ParsedArtifact:
    """Split an artifact into front matter, turn blocks and conclusion; never raises."""
    lines = text.split("\n")
    front_matter, start = _split_front_matter(lines)
    scan = _BlockScan()
    for i in range(start, len(lines)):
        if scan.opened is not None:
            scan.inside(i, lines[i])
        elif lines[i] == "## Terminal Conclusion":
            scan.conclude(i + 1, lines)
            break
        else:
            scan.outside(i, lines[i])
    if scan.opened is not None:
        scan.problems.append(f"line {scan.opened[0] + 1}: turn {scan.opened[1].group(1)} is never closed")
    return ParsedArtifact(
        front_matter=front_matter,
        blocks=scan.blocks,
        problems=scan.problems,
        conclusion=scan.conclusion,
        seals=tuple(scan.seals),
        rulings=tuple(scan.rulings),
    )


def _split_front_matter(lines: list[str]) -> tuple[str | None, int]:
    """The raw YAML between the opening fences, if any, and the index of the first line after them."""
    if lines and lines[0] == "---":
        after = front_matter_end(lines)
        if after is not None:
            return "\n".join(lines[1 : after - 1]) + "\n", after
    return None, 0


@dataclass(kw_only=True)
class _BlockScan:
    """The state of :func:`parse` going down the lines after the front matter."""

    blocks: list[TurnBlock] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    conclusion: str | None = None
    seals: list[Seal] = field(default_factory=list)
    rulings: list[RulingBlock] = field(default_factory=list)
    opened: tuple[int, re.Match[str]] | None = None  # the opening marker of the block being read
    ruling: bool = False  # the block being read is a ruling
    closed_at: int = -1  # the line of the last closing marker: only the next one may hold its signature
    body: list[str] = field(default_factory=list)

    def outside(self, i: int, line: str) -> None:
        """A line between blocks: an opening marker, a signature line, or text (stray markers noted)."""
        match = _OPEN.match(line)
        ruled = None if match else _RULING_OPEN.match(line)
        signed = None if match or ruled else _SIGNATURE.match(line)
        if match or ruled:
            self.opened, self.body, self.ruling = (i, cast("re.Match[str]", match or ruled)), [], ruled is not None
        elif signed:
            self._sign(i, signed)
        elif line == _CLOSE or line.startswith("<!-- duel:"):
            self.problems.append(f"line {i + 1}: stray turn marker")

    def _sign(self, i: int, signed: re.Match[str]) -> None:
        from .signatures import SIGNATURE_BODY

        block = self.blocks[-1] if self.blocks and self.closed_at == i - 1 else None
        if block is None or int(signed.group(1)) != block.n or not SIGNATURE_BODY.fullmatch(signed.group(2)):
            self.problems.append(f"line {i + 1}: signature line not right after the closing marker of its turn")
        else:
            self.blocks[-1] = replace(block, signature=signed.group(2))

    def conclude(self, start: int, lines: list[str]) -> None:
        """The lines from ``start`` on: the conclusion, and the seal lines that end it."""
        from .signatures import SIGNATURE_BODY

        text = []
        for i in range(start, len(lines)):
            sealed = _SEAL.match(lines[i])
            if sealed and SIGNATURE_BODY.fullmatch(sealed.group(2)):
                self.seals.append(Seal(int(sealed.group(1)), sealed.group(2)))
            elif lines[i].startswith("<!-- duel:"):
                self.problems.append(f"line {i + 1}: stray marker in the Terminal Conclusion")
            else:
                text.append(lines[i])
        self.conclusion = "\n".join(text).strip()

    def inside(self, i: int, line: str) -> None:
        """A line of the open block: its closing marker, a misplaced marker, or a line of its text."""
        if self.opened is None:
            return
        first, opener = self.opened
        if self.ruling and line == _RULING_CLOSE:
            text = "".join(s + "\n" for s in self.body)
            self.rulings.append(
                RulingBlock(
                    r=int(opener.group(1)), sha256=opener.group(2), prev=opener.group(3), text=text, line=first + 1
                )
            )
            self.opened = None
        elif line == _CLOSE and not self.ruling:
            text = "".join(s + "\n" for s in self.body)
            self.blocks.append(
                TurnBlock(
                    n=int(opener.group(1)), sha256=opener.group(2), prev=opener.group(3), text=text, line=first + 1
                )
            )
            self.opened, self.closed_at = None, i
        elif _OPEN.match(line) or line.startswith("<!-- duel:"):
            self.problems.append(f"line {i + 1}: turn marker inside turn {opener.group(1)}")
        else:
            self.body.append(line)


def turns_region(text: str) -> str:
    """The raw text from the first turn marker to the last closing one and the signature
    line right after it, if any (tampered records)."""
    first = text.find("<!-- duel:turn ")
    last = text.rfind(_CLOSE)
    if first < 0 or last < first:
        return ""
    end = last + len(_CLOSE)
    if text.startswith("\n<!-- duel:signature ", end):
        line_end = text.find("\n", end + 1)
        end = len(text) if line_end < 0 else line_end
    return text[first:end] + "\n"
