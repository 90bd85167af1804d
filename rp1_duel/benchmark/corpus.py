"""The bench's corpus: design documents with seeded defects, and the predicates that say each one is fixed.

A corpus is a folder with one folder per document: ``document.md`` (what the seats see), ``fixed.md`` (the same
document fixed by hand) and ``defects.json``, the sidecar the seats never see (docs/bench.md, "The corpus"). A
predicate is a pure function of a document's text, so a revision is scored by reading it, never by asking a model.

Matching is forgiving where a careful reviewer's wording would differ in form only: case, runs of white space
(a phrase wrapped over two lines) and Markdown emphasis or code marks (``*``, ``` ` ```) are ignored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DuelError
from ..files import NotReadable, read_bounded
from ..turns import atx_heading, fenced_lines, split_lines
from ..vocabulary import ErrorCode

__all__ = [
    "DEFECT_KINDS",
    "DOCUMENT_KINDS",
    "PREDICATE_KINDS",
    "CorpusDocument",
    "Defect",
    "Predicate",
    "corpus_directory",
    "load_corpus",
    "section_text",
]

DOCUMENT_KINDS = ("adr", "rfc", "runbook", "api-spec")
DEFECT_KINDS = ("contradiction", "missing-failure-mode", "wrong-figure", "unsafe-default", "step-out-of-order")
PREDICATE_KINDS = ("absent", "present", "figure", "section_has")
MAX_DEFECTS = 4
_FILE_LIMIT = 1024 * 1024  # a design document is a few KiB; a corpus file larger than this is a mistake
_MARKS = re.compile(r"[*`]")


def _normalized(text: str) -> str:
    """``text`` as predicates compare it: casefolded, emphasis and code marks dropped, white space runs made one space."""
    return " ".join(_MARKS.sub("", text).split()).casefold()


def _heading_key(heading: str) -> tuple[int, str] | None:
    """A heading line as (level, normalized title), or None if it is no ATX heading."""
    found = atx_heading(heading.strip())
    return None if found is None else (found[0], _normalized(found[1]))


def section_text(text: str, heading: str) -> str | None:
    """The section of ``text`` under ``heading`` (``"## Timeouts"``: same level, same title), down to the next
    heading of its level or higher, its subsections included; None if ``text`` has no such heading."""
    wanted = _heading_key(heading)
    lines = split_lines(text)
    fenced = fenced_lines(lines)
    start: int | None = None
    for index, line in enumerate(lines):
        found = None if fenced[index] else _heading_key(line)
        if found is None:
            continue
        if start is not None and wanted is not None and found[0] <= wanted[0]:
            return "\n".join(lines[start:index])
        if start is None and found == wanted:
            start = index
    return None if start is None else "\n".join(lines[start:])


def _figure_pattern(figure: str) -> re.Pattern[str]:
    """The figure as a whole number: ``30`` is not found in ``300`` nor in ``3.30``, but is in ``30s``."""
    return re.compile(r"(?<![\d.,])" + re.escape(_normalized(figure)) + r"(?!\d|[.,]\d)")


@dataclass(frozen=True)
class Predicate:
    """A checkable test that a defect is fixed: ``absent`` (``phrase`` must disappear from the document),
    ``present`` (``phrase`` must appear), ``figure`` (the wrong figure ``phrase`` no longer appears in ``section``,
    which must remain) or ``section_has`` (``section`` gains the item ``phrase``)."""

    kind: str
    phrase: str
    section: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in PREDICATE_KINDS:
            raise ValueError(f"unknown predicate kind {self.kind!r}")
        if (self.section is None) != (self.kind in {"absent", "present"}):
            raise ValueError(f"a {self.kind} predicate {'needs' if self.section is None else 'takes no'} section")

    def holds(self, text: str) -> bool:
        """True when ``text`` is fixed by this predicate's test."""
        if self.kind == "absent":
            return _normalized(self.phrase) not in _normalized(text)
        if self.kind == "present":
            return _normalized(self.phrase) in _normalized(text)
        section = section_text(text, self.section or "")
        if section is None:  # a fix keeps the section; deleting it fixes nothing
            return False
        if self.kind == "figure":
            return _figure_pattern(self.phrase).search(_normalized(section)) is None
        return _normalized(self.phrase) in _normalized(section)


@dataclass(frozen=True, kw_only=True)
class Defect:
    """A seeded defect: its id in the document, its kind (:data:`DEFECT_KINDS`), the heading of the section it is
    in, what is wrong, and the predicate that holds once it is fixed."""

    id: str
    kind: str
    where: str
    description: str
    fixed_when: Predicate


@dataclass(frozen=True, kw_only=True)
class CorpusDocument:
    """One document of the corpus: its name (its folder's), its kind (:data:`DOCUMENT_KINDS`), the text the seats
    see, the hand-fixed text, and its labelled defects."""

    name: str
    kind: str
    text: str
    fixed_text: str
    defects: tuple[Defect, ...]

    def fixed(self, text: str) -> frozenset[str]:
        """The ids of the defects whose predicate holds on ``text`` (a revision of this document)."""
        return frozenset(defect.id for defect in self.defects if defect.fixed_when.holds(text))


def corpus_directory() -> Path:
    """The corpus shipped with duel (package data)."""
    return Path(__file__).resolve().parent / "corpus"


def _string(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-empty string")
    return value


def _heading(value: Any, what: str) -> str:
    if _heading_key(_string(value, what)) is None:
        raise ValueError(f"{what} must be a Markdown heading like '## Timeouts', not {value!r}")
    return str(value)


def _parse_predicate(value: Any) -> Predicate:
    """A sidecar's ``fixed_when`` object as a :class:`Predicate`; ValueError saying what is wrong."""
    if not isinstance(value, dict) or not value.keys() & set(PREDICATE_KINDS):
        raise ValueError(f"fixed_when must name one of {', '.join(PREDICATE_KINDS)}")
    if "section_has" in value:
        inner = value["section_has"]
        if not isinstance(inner, dict) or set(inner) != {"section", "item"}:
            raise ValueError("section_has must be an object with exactly 'section' and 'item'")
        return Predicate("section_has", _string(inner["item"], "item"), _heading(inner["section"], "section"))
    if "figure" in value:
        if set(value) != {"figure", "section"}:
            raise ValueError("a figure predicate has exactly 'figure' and 'section'")
        return Predicate("figure", _string(value["figure"], "figure"), _heading(value["section"], "section"))
    if len(value) != 1:
        raise ValueError("fixed_when holds exactly one predicate")
    [(kind, phrase)] = value.items()
    return Predicate(kind, _string(phrase, kind))


def _parse_defect(value: Any) -> Defect:
    """One entry of a sidecar's ``defects`` as a :class:`Defect`; ValueError saying what is wrong."""
    fields = {"id", "kind", "where", "description", "fixed_when"}
    if not isinstance(value, dict) or set(value) != fields:
        raise ValueError(f"a defect has exactly the fields {', '.join(sorted(fields))}")
    if value["kind"] not in DEFECT_KINDS:
        raise ValueError(f"unknown defect kind {value['kind']!r} (one of {', '.join(DEFECT_KINDS)})")
    return Defect(
        id=_string(value["id"], "id"),
        kind=value["kind"],
        where=_heading(value["where"], "where"),
        description=_string(value["description"], "description"),
        fixed_when=_parse_predicate(value["fixed_when"]),
    )


def _parse_sidecar(value: Any) -> tuple[str, tuple[Defect, ...]]:
    """A whole ``defects.json`` as (document kind, defects); ValueError saying what is wrong."""
    if not isinstance(value, dict) or set(value) != {"kind", "defects"}:
        raise ValueError("the sidecar is an object with exactly 'kind' and 'defects'")
    if value["kind"] not in DOCUMENT_KINDS:
        raise ValueError(f"unknown document kind {value['kind']!r} (one of {', '.join(DOCUMENT_KINDS)})")
    entries = value["defects"]
    if not isinstance(entries, list) or not 1 <= len(entries) <= MAX_DEFECTS:
        raise ValueError(f"'defects' is a list of 1 to {MAX_DEFECTS} defects")
    defects = tuple(_parse_defect(entry) for entry in entries)
    if len({defect.id for defect in defects}) != len(defects):
        raise ValueError("two defects share an id")
    return value["kind"], defects


def _read_text(path: Path) -> str:
    try:
        return read_bounded(path, _FILE_LIMIT).decode("utf-8")
    except FileNotFoundError:
        raise DuelError(ErrorCode.CORPUS_INVALID, f"corpus: {path}: missing") from None
    except (OSError, NotReadable, UnicodeDecodeError) as error:
        raise DuelError(ErrorCode.CORPUS_INVALID, f"corpus: {path}: unreadable ({error})") from None


def _load_document(folder: Path) -> CorpusDocument:
    """The corpus document in ``folder``; a missing, unreadable or malformed file is ``CORPUS_INVALID`` naming it."""
    text, fixed_text = _read_text(folder / "document.md"), _read_text(folder / "fixed.md")
    sidecar = folder / "defects.json"
    try:
        kind, defects = _parse_sidecar(json.loads(_read_text(sidecar)))
    except ValueError as error:  # json.JSONDecodeError is one
        message = " ".join(str(error).split())
        raise DuelError(ErrorCode.CORPUS_INVALID, f"corpus: {sidecar}: {message}") from None
    return CorpusDocument(name=folder.name, kind=kind, text=text, fixed_text=fixed_text, defects=defects)


def load_corpus(directory: Path | None = None) -> tuple[CorpusDocument, ...]:
    """Every document of the corpus in ``directory`` (None: the shipped one), sorted by name. A folder that is not
    a corpus, or holds no document, is ``CORPUS_INVALID``; files beside the document folders are ignored."""
    root = corpus_directory() if directory is None else directory
    try:
        folders = sorted(entry for entry in root.iterdir() if entry.is_dir() and not entry.name.startswith("."))
    except OSError as error:
        raise DuelError(ErrorCode.CORPUS_INVALID, f"corpus: {root}: not a readable folder ({error.strerror})") from None
    if not folders:
        raise DuelError(ErrorCode.CORPUS_INVALID, f"corpus: {root}: holds no document folder")
    return tuple(_load_document(folder) for folder in folders)
