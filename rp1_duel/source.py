"""The source document under debate, indexed for the checks turns make against it.

Turns cite the source by heading (`design.md#Lease semantics`), by line range
(`design.md:12-18`) and by quoted excerpt (`design.md "leases expire"`). A source is
validated against many times per debate, so everything a lookup needs is computed
once, when the document is built.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

# Typographic variants that agents (and editors) substitute freely for ASCII ones.
_TYPOGRAPHIC = {
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
    **dict.fromkeys("\u2013\u2014\u2012\u2015\u2212", "-"),
    "\u2026": "...",
}
# A regex finds them: str.translate walks a 50 KB text one dict lookup per character.
_TYPOGRAPHIC_CHARACTER = re.compile("[" + "".join(_TYPOGRAPHIC) + "]")
# Inline Markdown markers that change no words: `**expire**` still says "expire".
_INLINE_MARKUP = ("*", "_", "`")

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# Lines that cannot be the text of a setext heading (list items, quotes, tables, …).
_NOT_PARAGRAPH = re.compile(r"^\s*([-*+>|#]|\d{1,9}[.)])(\s|$)|^ {4}")


def normalize_text(s: str) -> str:
    """Fold case, typographic quotes and dashes, and runs of whitespace, for comparisons."""
    if not s.isascii():
        s = _TYPOGRAPHIC_CHARACTER.sub(lambda found: _TYPOGRAPHIC[found.group()], s)
    return " ".join(s.casefold().split())


def _without_markup(normalized: str) -> str:
    for marker in _INLINE_MARKUP:
        normalized = normalized.replace(marker, "")
    return " ".join(normalized.split())


class SearchableText:
    """A text that answers "is this excerpt in it?" word for word, built once, asked often.

    Whitespace, case, typographic quotes and dashes aside; inline emphasis and code
    markers (`*`, `_`, `` ` ``) aside too, since quoting `**must**` as "must" changes no word.
    """

    __slots__ = ("_normalized", "_unmarked")

    def __init__(self, text: str):
        self._normalized = normalize_text(text)
        self._unmarked = _without_markup(self._normalized)

    def contains(self, excerpt: str) -> bool:
        needle = normalize_text(excerpt)
        if not needle:
            return False
        return needle in self._normalized or _without_markup(needle) in self._unmarked


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading, so `design.md#lease-semantics` resolves too."""
    words = re.sub(r"[^\w\- ]", "", heading.lower())
    return words.replace(" ", "-")


def split_lines(text: str) -> list[str]:
    """Lines as an editor numbers them: CRLF or CR end a line, a final newline adds none."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text:
        return []
    return text.removesuffix("\n").split("\n")


def fenced_lines(lines: list[str]) -> list[bool]:
    """For each line, whether it belongs to a fenced code block (fence lines included)."""
    inside: list[bool] = []
    fence = ""
    for line in lines:
        opener = _FENCE.match(line)
        if fence:
            inside.append(True)
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                if not line.strip().lstrip(fence[0]):
                    fence = ""
        elif opener:
            inside.append(True)
            fence = opener.group(1)
        else:
            inside.append(False)
    return inside


def _front_matter_end(lines: list[str]) -> int:
    """Index of the first line after YAML front matter (0 when there is none)."""
    if not lines or lines[0].strip() != "---":
        return 0
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            return index + 1
    return 0


def _find_headings(lines: list[str]) -> list[str]:
    headings: list[str] = []
    fenced = fenced_lines(lines)
    start = _front_matter_end(lines)
    for index in range(start, len(lines)):
        if fenced[index]:
            continue
        line = lines[index]
        atx = _ATX_HEADING.match(line)
        if atx:
            headings.append((atx.group(2) or "").strip())
            continue
        above = index - 1
        if (
            _SETEXT_UNDERLINE.match(line)
            and above >= start
            and not fenced[above]
            and lines[above].strip()
            and not _NOT_PARAGRAPH.match(lines[above])
            and not _ATX_HEADING.match(lines[above])
        ):
            headings.append(lines[above].strip())
    return headings


@dataclass(frozen=True)
class SourceDocument:
    path: str
    text: str
    name: str = field(init=False)
    lines: list[str] = field(init=False, repr=False, compare=False)
    headings: list[str] = field(init=False, repr=False, compare=False)
    _searchable: SearchableText = field(init=False, repr=False, compare=False)
    _heading_keys: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Frozen: derived fields are set once here and never change afterwards.
        lines = split_lines(self.text)
        headings = _find_headings(lines)
        keys = {normalize_text(h) for h in headings}
        keys |= {_without_markup(k) for k in keys}
        keys |= {_slug(k) for k in keys}
        derived = {
            "name": os.path.basename(self.path) or self.path,
            "lines": lines,
            "headings": headings,
            "_searchable": SearchableText(self.text),
            "_heading_keys": frozenset(keys),
        }
        for attribute, value in derived.items():
            object.__setattr__(self, attribute, value)

    @classmethod
    def from_text(cls, text: str, path: str) -> SourceDocument:
        return cls(path=str(path), text=text.replace("\r\n", "\n").replace("\r", "\n"))

    @classmethod
    def from_path(cls, path: str | os.PathLike[str]) -> SourceDocument:
        with open(path, "rb") as handle:
            raw = handle.read()
        # utf-8-sig drops a BOM; undecodable bytes become U+FFFD rather than failing a debate.
        return cls.from_text(raw.decode("utf-8-sig", errors="replace"), os.fspath(path))

    def has_heading(self, text: str) -> bool:
        key = normalize_text(text)
        return bool(key) and (key in self._heading_keys or _without_markup(key) in self._heading_keys)

    def has_lines(self, start: int, end: int) -> bool:
        return 1 <= start <= end <= len(self.lines)

    def contains_excerpt(self, excerpt: str) -> bool:
        return self._searchable.contains(excerpt)

    def numbered(self) -> str:
        width = len(str(len(self.lines)))
        return "\n".join(
            f"{number:>{width}} | {line}".rstrip() for number, line in enumerate(self.lines, 1)
        )
