"""The duel's current revision: the source with every edit in force applied, byte for byte.

Edits (:mod:`rp1_duel.turns._edits`) always apply to the source as the duel recorded it, never
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

import bisect
import functools
import hashlib
import itertools
import re
import unicodedata
from array import array
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from ..vocabulary import RuleCode
from ._edits import Edit, EditSection
from ._patch import unified_diff
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


@dataclass(kw_only=True, frozen=True)
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
        # Where each edit applies, found once and shared with every revision amended from this one
        # (the same source): a duel's turns then cost time in their own edits, not in every edit in
        # force (bench/bench_revision.py), and checking a turn, then recording it, locates its edits once.
        self._located: dict[Edit, _Change | EditProblem] = {}

    def amended(self, section: EditSection) -> Revision:
        """The revision after a turn's section: its edits replace those of the same name, its withdrawals remove."""
        edits = dict(self.edits)
        for name, _ in section.withdrawn:
            edits.pop(name, None)
        edits.update((edit.name, edit) for edit in section.edits)
        revised = Revision(self.source, edits)
        revised._located = self._located
        return revised

    @functools.cached_property
    def _applied(self) -> tuple[str, tuple[EditProblem, ...], tuple[_Change, ...]]:
        changes: list[_Change] = []
        problems: list[EditProblem] = []
        for edit in self.edits.values():
            if edit not in self._located:
                self._located[edit] = _locate(self.source, edit)
            change = self._located[edit]
            if isinstance(change, EditProblem):
                problems.append(change)
            else:
                changes.append(change)
        problems += _overlaps(changes)
        if problems:
            return self.source, tuple(problems), ()
        pieces, at = [], 0
        # In source order; at one offset an insert's text goes before a replace's.
        ordered = tuple(sorted(changes, key=lambda c: (c.start, c.end > c.start)))
        for change in ordered:
            pieces += [self.source[at : change.start], change.text]
            at = change.end
        text = "".join([*pieces, self.source[at:]])
        if len(text) > len(self.source) + MAX_GROWTH:
            message = f"the revised document would grow by more than {MAX_GROWTH // 1024} KiB"
            return self.source, (EditProblem(RuleCode.EDIT_TOO_LARGE, "", message),), ()
        return text, (), ordered

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

    def diff(self, path: str, *, whole_match: bool = False) -> str:
        """A unified diff from the source to this revision, as ``git apply`` and ``patch -p1`` take
        it (``a/PATH``, ``b/PATH``); empty when nothing changes. Only the lines the edits touch are
        removed and added. ``whole_match``: the diff as the service wrote it before (difflib matching the
        whole documents, which could show lines no edit touched removed and added again)."""
        hunks = self._whole_match_hunks if whole_match else self._hunks
        return f"--- a/{path}\n+++ b/{path}\n{hunks}" if hunks else ""

    def patch(self, path: str, *, whole_match: bool = False) -> str:
        """:meth:`diff` with git's header: ``diff --git`` and an ``index`` line naming the blobs of the source
        and of this revision, so ``git apply -3`` can merge it into a document that moved on; empty when
        nothing changes."""
        diff = self.diff(path, whole_match=whole_match)
        if not diff:
            return ""
        blobs = f"{git_blob_id(self.source)}..{git_blob_id(self.text)}"
        return f"diff --git a/{path} b/{path}\nindex {blobs} 100644\n{diff}"

    @functools.cached_property
    def _hunks(self) -> str:
        """The diff's hunks, found once: :meth:`diff` and :meth:`counts` both ask, and the path is in the header only.
        The lines no edit touched are matched as they are, so the patch adds only lines an edit wrote or changed."""
        before, after = _PATCH_LINE.findall(self.source), _PATCH_LINE.findall(self.text)
        return _diff_hunks(
            before, after, kept=_untouched(self.source, self.text, self._applied[2], before=before, after=after)
        )

    @functools.cached_property
    def _whole_match_hunks(self) -> str:
        """The hunks as difflib matches the whole documents (see :meth:`diff`)."""
        return _diff_hunks(_PATCH_LINE.findall(self.source), _PATCH_LINE.findall(self.text))

    def counts(self, *, whole_match: bool = False) -> tuple[int, int]:
        """Lines added and removed, as :meth:`diff` shows them."""
        body = self.diff("-", whole_match=whole_match).split("\n")[2:]  # after the --- and +++ lines
        return sum(line.startswith("+") for line in body), sum(line.startswith("-") for line in body)


def _diff_hunks(before: list[str], after: list[str], kept: list[tuple[int, int, int]] | None = None) -> str:
    """The hunks of a unified diff of two documents' lines (``kept``: see :func:`~._patch.unified_diff`)."""
    if before == after:
        return ""
    lines = itertools.islice(unified_diff(before, after, "", "", kept=kept), 2, None)  # after the --- and +++ lines
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _untouched(
    source: str, text: str, changes: tuple[_Change, ...], *, before: list[str], after: list[str]
) -> list[tuple[int, int, int]]:
    """The runs of whole lines no change touches, as (source line, revised line, count), in order: the
    source's text between two changes is the revision's, so its whole lines are too. A line the change
    before it or after it runs into (no line end between them) is touched."""
    source_starts = [0, *itertools.accumulate(map(len, before))]  # where each line starts, and the end
    text_starts = [0, *itertools.accumulate(map(len, after))]
    runs, at, shift = [], 0, 0  # shift: where the revision has the source's text at ``at``, less ``at``
    for start, end, text_length in [*((c.start, c.end, len(c.text)) for c in changes), (len(source), len(source), 0)]:
        first = bisect.bisect_left(source_starts, at)  # the first line starting in the stretch
        last = bisect.bisect_right(source_starts, start) - 1  # past the last line ending in it
        if first < last and source_starts[first] == at and at + shift > 0 and text[at + shift - 1] != "\n":
            first += 1  # the change before runs into it
        if first < last and not before[last - 1].endswith("\n") and source_starts[last] + shift != len(text):
            last -= 1  # the change after runs on from it
        if first < last:
            runs.append((first, bisect.bisect_left(text_starts, source_starts[first] + shift), last - first))
        at, shift = end, shift + text_length - (end - start)
    return runs


def git_blob_id(text: str) -> str:
    """The id git gives a file holding ``text`` (UTF-8): the SHA-1 of its blob, as ``git hash-object`` prints it."""
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


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
    start, end = index.span(first, first + len(needle) - 1)
    text = edit.text.replace("\n", newline)
    if edit.kind == "delete" and _whole_lines(source, start, end):
        end += len(_LINE.match(source, end).group()) if end < len(source) else 0  # type: ignore[union-attr]
    return _Change(start=start, end=end, text=text, name=edit.name)


def _whole_lines(source: str, start: int, end: int) -> bool:
    """Whether ``source[start:end]`` runs from a line's start to a line's end."""
    starts_line = start == 0 or source[start - 1] in "\r\n" or (start == 1 and source[0] == "\ufeff")
    return starts_line and (end == len(source) or source[end] in "\r\n")


def _insertion(source: str, edit: Edit, newline: str) -> _Change | EditProblem:
    """An insert: new lines right after the heading ``edit.find`` names, set off by blank lines."""
    raw, lines, names, ends = _outline(source)
    wanted = normalize_text(edit.find)
    found = names.get(wanted, [])
    if len(found) != 1:
        code = RuleCode.EDIT_NOT_FOUND if not found else RuleCode.EDIT_AMBIGUOUS
        how = "no heading of the source reads" if not found else "more than one heading of the source reads"
        return EditProblem(code, edit.name, f"edit {edit.name}: {how} {_short(edit.find)!r}")
    index = found[0].line if atx_heading(lines[found[0].line]) else found[0].line + 1  # setext: after its underline
    at = ends[index]
    before = "" if raw[index].endswith(("\n", "\r")) else newline
    after = "" if index + 1 >= len(lines) or not lines[index + 1].strip() else newline
    text = before + newline + edit.text.replace("\n", newline) + newline + after
    return _Change(start=at, end=at, text=text, name=edit.name)


@functools.lru_cache(maxsize=8)
def _outline(source: str) -> tuple[list[str], list[str], dict[str, list[Heading]], list[int]]:
    """The source's lines with their ends, without them (and the BOM), its headings by the two
    forms an insert may name each by, and where each line ends in the source."""
    raw = _LINE.findall(source)
    lines = [line.rstrip("\r\n") for line in raw]
    if lines:
        lines[0] = lines[0].removeprefix("\ufeff")
    names: dict[str, list[Heading]] = {}
    for heading in headings(lines):
        normalized = normalize_text(heading.text)
        for name in dict.fromkeys((normalized, without_markup(normalized))):
            names.setdefault(name, []).append(heading)
    return raw, lines, names, list(itertools.accumulate(map(len, raw)))


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


@dataclass(kw_only=True, frozen=True)
class _Index:
    """The source compared as quotes are, each character mapped back to the source characters it came from.

    Most folded characters come from one source character each, at a fixed distance from it; only
    the units that do not (a run of whitespace, a BOM, a character with combining marks, one that
    folds to several) are listed, so the map costs memory in them, not in the source's length.
    """

    text: str
    at: array[int]  # where each listed unit's folded text starts, in source order
    length: array[int]  # its folded length
    starts: array[int]  # the source characters it came from: starts[k] to ends[k]
    ends: array[int]

    def span(self, first: int, last: int) -> tuple[int, int]:
        """The source span the folded characters ``first`` to ``last`` (inclusive) came from."""
        return self._origin(first)[0], self._origin(last)[1]

    def _origin(self, offset: int) -> tuple[int, int]:
        unit = bisect.bisect_right(self.at, offset) - 1  # the last unit starting at or before it
        if unit < 0:
            return offset, offset + 1
        if offset < self.at[unit] + self.length[unit]:
            return self.starts[unit], self.ends[unit]
        start = self.ends[unit] + offset - self.at[unit] - self.length[unit]
        return start, start + 1


# What a lone ASCII character folds to: whitespace to a space, letters to lower case.
_ASCII_FOLDS: Final = {
    **{ord(char): char.lower() for char in map(chr, range(128)) if char.isupper()},
    **{ord(char): " " for char in map(chr, range(128)) if char.isspace()},
}


@functools.lru_cache(maxsize=8)
def _index(source: str) -> _Index:
    # One scan finds the units that are not one character for one (see _Index); the stretches
    # between them fold a character at a time with str.translate: a 16 MiB source must not cost
    # a Python step per character (issue 42). Each unit folds as it always did: whitespace runs to
    # a space, a BOM to nothing, a character and its combining marks together (_fold).
    folds, units = _ASCII_FOLDS, [r"\s\s+", "\ufeff"]
    if not source.isascii():
        characters = set(source)
        others = {char: _fold(char) for char in characters if not char.isascii() and not char.isspace()}
        others.pop("\ufeff", None)
        folds = {**folds, **{ord(char): " " for char in characters if char.isspace()}}
        folds.update((ord(char), folded) for char, folded in others.items())
        marks = "".join(re.escape(char) for char in sorted(others) if unicodedata.combining(char))
        longer = "".join(re.escape(char) for char, folded in sorted(others.items()) if len(folded) != 1)
        units += [f"[{longer}]" + (f"[{marks}]*" if marks else "")] if longer else []
        units += [f"[{marks}]+"] if marks else []
    pieces: list[str] = []
    at, length, starts, ends = array("q"), array("q"), array("q"), array("q")
    done = folded = 0
    for unit in re.finditer("|".join(units), source):
        start, end = unit.span()
        if start > done and unicodedata.combining(source[start]) and not _unit_boundary(source[start - 1]):
            start -= 1  # marks belong to the character before them
        between = source[done:start].translate(folds)
        text = " " if source[start].isspace() else "" if source[start] == "\ufeff" else _fold(source[start:end])
        pieces += [between, text]
        folded += len(between)
        for column, value in ((at, folded), (length, len(text)), (starts, start), (ends, end)):
            column.append(value)
        folded += len(text)
        done = end
    pieces.append(source[done:].translate(folds))
    return _Index(text="".join(pieces), at=at, length=length, starts=starts, ends=ends)


def _unit_boundary(char: str) -> bool:
    """Whether a combining mark after ``char`` starts a unit of its own: after whitespace or a BOM."""
    return char.isspace() or char == "\ufeff"


def _fold(unit: str) -> str:
    if unit.isascii():
        return unit.casefold()
    unit = unicodedata.normalize("NFC", unit)
    return "".join(_TYPOGRAPHIC.get(char, "..." if char == "…" else char) for char in unit).casefold()
