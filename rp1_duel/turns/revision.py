"""The duel's current revision: the source with every edit in force applied, byte for byte.

Edits (:mod:`rp1_duel.turns.edits`) always apply to the source as the duel recorded it, never
to one another's results: the set in force is a map from edit name to edit, amended turn by
turn, so the order turns proposed them never matters. Each edit's find text must occur in the
source exactly once, compared as quotes are (case, Unicode form, typographic quotes and
dashes, runs of whitespace aside; emphasis and code markers count: an edit rewrites exact
characters), and no two edits may touch the same text. The result keeps the source's bytes
everywhere else: its BOM, its line ends (new text takes the source's), a missing final newline.

A revision's id is ``r-`` and the first 12 hex digits of the SHA-256 of the revised document;
with no edit in force it is the source's own (docs/protocol.md section 7, "Proposed edits").
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import itertools
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from ..vocabulary import RuleCode
from .edits import Edit, EditSection
from .markdown import Heading, atx_heading, headings
from .matching import normalize_text, without_markup

__all__ = ["MAX_GROWTH", "EditProblem", "Revision", "revision_id"]

MAX_GROWTH: Final = 1024 * 1024  # the revised document may be at most this much larger than the source
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
# A patch's lines end at LF only: git apply and patch read a lone CR as part of its line.
_PATCH_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
_TYPOGRAPHIC = {**dict.fromkeys("“”„‟″«»", '"'), **dict.fromkeys("‘’‚‛′", "'"), **dict.fromkeys("–—‒―−", "-")}


def revision_id(document: str) -> str:
    """The id of a revised document's text: ``r-`` and 12 hex digits of its SHA-256."""
    return "r-" + hashlib.sha256(document.encode("utf-8", "surrogatepass")).hexdigest()[:12]


@dataclass(frozen=True)
class EditProblem:
    """Why an edit in force does not apply: a rule code, the edit's name, and what is wrong."""

    code: str
    name: str
    message: str


@dataclass(frozen=True)
class _Change:
    start: int
    end: int  # == start for an insert
    text: str
    name: str


class Revision:
    """The edits in force over one source (its text as read: BOM and line ends kept)."""

    def __init__(self, source: str, edits: Mapping[str, Edit] | None = None):
        self.source = source
        self.edits: Mapping[str, Edit] = dict(edits or {})
        # Where each edit applies, by name, found once and handed on to amended revisions: a duel's
        # turns then cost time in their own edits, not in every edit in force (bench/bench_revision.py).
        self._located: dict[str, _Change | EditProblem] = {}

    def amended(self, section: EditSection) -> Revision:
        """The revision after a turn's section: its edits replace those of the same name, its withdrawals remove."""
        edits = dict(self.edits)
        for name, _ in section.withdrawn:
            edits.pop(name, None)
        edits.update((edit.name, edit) for edit in section.edits)
        revised = Revision(self.source, edits)
        revised._located = {name: found for name, found in self._located.items() if edits.get(name) is self.edits[name]}
        return revised

    @functools.cached_property
    def _applied(self) -> tuple[str, tuple[EditProblem, ...]]:
        changes: list[_Change] = []
        problems: list[EditProblem] = []
        for name, edit in self.edits.items():
            if name not in self._located:
                self._located[name] = _locate(self.source, edit)
            change = self._located[name]
            if isinstance(change, EditProblem):
                problems.append(change)
            else:
                changes.append(change)
        problems += _overlaps(changes)
        if problems:
            return self.source, tuple(problems)
        pieces, at = [], 0
        # In source order; at one offset an insert's text goes before a replace's.
        for change in sorted(changes, key=lambda c: (c.start, c.end > c.start)):
            pieces += [self.source[at : change.start], change.text]
            at = change.end
        text = "".join([*pieces, self.source[at:]])
        if len(text) > len(self.source) + MAX_GROWTH:
            message = f"the revised document would grow by more than {MAX_GROWTH // 1024} KiB"
            return self.source, (EditProblem(RuleCode.EDIT_TOO_LARGE, "", message),)
        return text, ()

    @property
    def problems(self) -> tuple[EditProblem, ...]:
        """Why the edits in force do not apply; empty when they do."""
        return self._applied[1]

    @property
    def text(self) -> str:
        """The revised document (the source itself while an edit does not apply)."""
        return self._applied[0]

    @property
    def id(self) -> str:
        """The revised document's id; with no edit in force, the source's own."""
        return revision_id(self.text)

    def diff(self, path: str) -> str:
        """A unified diff from the source to this revision, as ``git apply`` and ``patch -p1`` take
        it (``a/PATH``, ``b/PATH``); empty when nothing changes."""
        before, after = _PATCH_LINE.findall(self.source), _PATCH_LINE.findall(self.text)
        if before == after:
            return ""
        lines = difflib.unified_diff(before, after, f"a/{path}", f"b/{path}", lineterm="\n")
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)

    def counts(self) -> tuple[int, int]:
        """Lines added and removed, as :meth:`diff` shows them."""
        body = self.diff("-").split("\n")[2:]  # after the --- and +++ lines
        return sum(line.startswith("+") for line in body), sum(line.startswith("-") for line in body)


@functools.lru_cache(maxsize=8)
def _newline(source: str) -> str:
    crlf = source.count("\r\n")
    return "\r\n" if crlf and crlf >= source.count("\n") - crlf else "\n"


def _locate(source: str, edit: Edit) -> _Change | EditProblem:
    """Where ``edit`` changes ``source``, or why it cannot."""
    newline = _newline(source)
    if edit.kind == "insert":
        return _insertion(source, edit, newline)
    index = _index(source)
    needle = normalize_text(edit.find)
    if not needle:
        return EditProblem(
            RuleCode.EDIT_NOT_FOUND, edit.name, f"edit {edit.name} finds nothing: its find text is empty"
        )
    first = index.text.find(needle)
    if first < 0:
        return EditProblem(
            RuleCode.EDIT_NOT_FOUND, edit.name, f"edit {edit.name}: {_short(edit.find)!r} is not in the source"
        )
    if index.text.find(needle, first + 1) >= 0:
        return EditProblem(
            RuleCode.EDIT_AMBIGUOUS,
            edit.name,
            f"edit {edit.name}: {_short(edit.find)!r} occurs more than once in the source: quote more of it",
        )
    start, end = index.starts[first], index.ends[first + len(needle) - 1]
    text = edit.text.replace("\n", newline)
    if edit.kind == "delete" and _whole_lines(source, start, end):
        end += len(_LINE.match(source, end).group()) if end < len(source) else 0  # type: ignore[union-attr]
    return _Change(start, end, text, edit.name)


def _whole_lines(source: str, start: int, end: int) -> bool:
    """Whether ``source[start:end]`` runs from a line's start to a line's end."""
    starts_line = start == 0 or source[start - 1] in "\r\n" or source[:start] == "\ufeff"
    return starts_line and (end == len(source) or source[end] in "\r\n")


def _insertion(source: str, edit: Edit, newline: str) -> _Change | EditProblem:
    """An insert: new lines right after the heading ``edit.find`` names, set off by blank lines."""
    raw, lines, names = _outline(source)
    wanted = normalize_text(edit.find)
    found = [heading for heading, as_read in names if wanted in as_read]
    if len(found) != 1:
        code = RuleCode.EDIT_NOT_FOUND if not found else RuleCode.EDIT_AMBIGUOUS
        how = "no heading of the source reads" if not found else "more than one heading of the source reads"
        return EditProblem(code, edit.name, f"edit {edit.name}: {how} {_short(edit.find)!r}")
    index = found[0].index if atx_heading(lines[found[0].index]) else found[0].index + 1  # setext: after its underline
    at = sum(len(line) for line in raw[: index + 1])
    before = "" if raw[index].endswith(("\n", "\r")) else newline
    after = "" if index + 1 >= len(lines) or not lines[index + 1].strip() else newline
    text = before + newline + edit.text.replace("\n", newline) + newline + after
    return _Change(at, at, text, edit.name)


@functools.lru_cache(maxsize=8)
def _outline(source: str) -> tuple[list[str], list[str], list[tuple[Heading, tuple[str, str]]]]:
    """The source's lines with their ends, without them (and the BOM), and its headings, each with
    the two forms an insert may name it by."""
    raw = _LINE.findall(source)
    lines = [line.rstrip("\r\n") for line in raw]
    if lines:
        lines[0] = lines[0].removeprefix("\ufeff")
    names = []
    for heading in headings(lines):
        normalized = normalize_text(heading.text)
        names.append((heading, (normalized, without_markup(normalized))))
    return raw, lines, names


def _overlaps(changes: list[_Change]) -> list[EditProblem]:
    """Two edits touching the same text, or inserting at one place (which would go first?)."""
    found = []
    ordered = sorted(changes, key=lambda c: (c.start, c.end))
    for before, after in itertools.pairwise(ordered):
        same_point = before.start == before.end == after.start == after.end
        if after.start < before.end or same_point:
            message = f"edits {before.name} and {after.name} change the same text of the source"
            found.append(EditProblem(RuleCode.EDIT_OVERLAP, after.name, message))
    return found


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 60 else flat[:57] + "..."


@dataclass(frozen=True)
class _Index:
    """The source compared as quotes are, each character mapped back to the source characters it came from."""

    text: str
    starts: list[int]
    ends: list[int]


@functools.lru_cache(maxsize=8)
def _index(source: str) -> _Index:
    text: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(source)
    while i < n:
        char = source[i]
        j = i + 1
        if char.isspace():
            while j < n and source[j].isspace():
                j += 1
            folded = " "
        elif char == "\ufeff":
            i = j
            continue
        else:
            while j < n and unicodedata.combining(source[j]):
                j += 1
            folded = _fold(source[i:j])
        text.append(folded)
        starts += [i] * len(folded)
        ends += [j] * len(folded)
        i = j
    return _Index("".join(text), starts, ends)


def _fold(unit: str) -> str:
    if unit.isascii():
        return unit.casefold()
    unit = unicodedata.normalize("NFC", unit)
    return "".join(_TYPOGRAPHIC.get(char, "..." if char == "…" else char) for char in unit).casefold()
