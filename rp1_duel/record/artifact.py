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

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, cast

from ..digest import sha256_hex
from ..turns import front_matter_end, normalize_newlines

# The header and the writer have modules of their own, which a join loads without this one; they are named here too.
from .front_matter import (
    MAX_FRONT_MATTER_CHARS,
    FrontMatter,
    FrontMatterError,
    ParticipantEntry,
    display_source_path,
    front_matter_mapping,
)
from .rendering import (
    RULING_CLOSE,
    SUMMARY_HEADING,
    TURN_CLOSE,
    conclusion_text,
    render,
)

if TYPE_CHECKING:
    from .families import Provisional

__all__ = [
    "GENESIS",
    "MAX_FRONT_MATTER_CHARS",
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

# At most 9 digits: int() refuses longer digit strings, and no duel has that many turns.
_OPEN = re.compile(r"^<!-- duel:turn n=(\d{1,9}) sha256=([0-9a-f]{64}) prev=([0-9a-f]{64}) -->$")
_SIGNATURE = re.compile(r"^<!-- duel:signature n=(\d{1,9}) ssh=([A-Za-z0-9+/=]+) -->$")
_RULING_OPEN = re.compile(r"^<!-- duel:ruling r=(\d{1,9}) sha256=([0-9a-f]{64}) prev=([0-9a-f]{64}) -->$")
_SEAL = re.compile(r"^<!-- duel:seal seat=(\d{1,3}) ssh=([A-Za-z0-9+/=]+) -->$")


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


_ROW = re.compile(r"^\| ([A-Za-z ]+) \| (.*) \|$")


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
    table, _, summary = text.partition(f"\n{SUMMARY_HEADING}\n")
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
        elif line == TURN_CLOSE or line.startswith("<!-- duel:"):
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
        if self.ruling and line == RULING_CLOSE:
            text = "".join(s + "\n" for s in self.body)
            self.rulings.append(
                RulingBlock(
                    r=int(opener.group(1)), sha256=opener.group(2), prev=opener.group(3), text=text, line=first + 1
                )
            )
            self.opened = None
        elif line == TURN_CLOSE and not self.ruling:
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
    last = text.rfind(TURN_CLOSE)
    if first < 0 or last < first:
        return ""
    end = last + len(TURN_CLOSE)
    if text.startswith("\n<!-- duel:signature ", end):
        line_end = text.find("\n", end + 1)
        end = len(text) if line_end < 0 else line_end
    return text[first:end] + "\n"
