"""The source document under debate: read with one decoding policy, indexed for citations.

Turns cite the source by heading (`design.md#Lease semantics`), by line range
(`design.md:12-18`) and by quoted excerpt (`design.md "leases expire"`). Everything a
lookup needs is computed once, when the document is built.

The one decoding policy (join, append, the participant and ``duel validate`` all read
the source through :func:`read_source`): the bytes must be UTF-8; a leading BOM is
dropped; CRLF and lone CR become LF. ``source_sha256`` hashes the raw bytes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from ..digest import sha256_hex
from ..files import MAX_SOURCE_BYTES, read_bounded
from .markdown import headings, normalize_newlines, split_lines

# The matching of citations loads when a turn is checked: a join reads the source for its hash and topic alone.
if TYPE_CHECKING:
    from .figures import FigureIndex
    from .matching import SearchableText

__all__ = ["SourceDocument", "SourceUnreadable", "github_anchor", "read_source"]


class SourceUnreadable(Exception):
    """The source cannot be read or is not UTF-8; ``reason`` fits in a message."""

    def __init__(self, path: str, *, reason: str):
        super().__init__(f"cannot read {path}: {reason}")
        self.path = path
        self.reason = reason


def decode_source(data: bytes) -> str:
    """UTF-8 (strict), BOM dropped, line ends made LF. Raises UnicodeDecodeError."""
    text = data.decode("utf-8")
    return normalize_newlines(text.removeprefix("\ufeff"))


def github_anchor(heading: str) -> str:
    """GitHub's anchor for a heading: `design.md#lease-semantics` resolves too, and a report links a turn by it."""
    words = re.sub(r"[^\w\- ]", "", heading.lower())
    return words.replace(" ", "-")


@dataclass(kw_only=True, frozen=True)
class SourceDocument:
    """The source's text with its lines and headings, answering what a citation of it may name."""

    path: str
    text: str  # decoded by the one policy: LF line ends, no BOM
    sha256: str = ""  # of the raw bytes, when read from a file
    raw: str = field(default="", repr=False)  # the bytes decoded, BOM and line ends kept: what edits rewrite
    name: str = field(init=False)
    lines: list[str] = field(init=False, repr=False, compare=False)
    headings: list[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Frozen: derived fields are set once here and never change afterwards.
        lines = split_lines(self.text)
        derived = {
            "name": os.path.basename(self.path) or self.path,
            "lines": lines,
            "headings": [heading.text for heading in headings(lines)],
        }
        for attribute, value in derived.items():
            object.__setattr__(self, attribute, value)

    # Built on first use: a join reads the source for its topic and hash alone.
    @cached_property
    def _searchable(self) -> SearchableText:
        from .matching import SearchableText

        return SearchableText(self.text)

    @cached_property
    def figures(self) -> FigureIndex:
        """The numbers the source states (FIGURE_NOT_IN_SOURCE, CLOSING_NEW_MATERIAL); indexed on first use."""
        from .figures import FigureIndex  # the lock service reads sources for every join: it pays only when asked

        return FigureIndex(self.text)

    @cached_property
    def _heading_keys(self) -> frozenset[str]:
        from .matching import normalize_text, without_markup

        keys = {normalize_text(h) for h in self.headings}
        keys |= {without_markup(k) for k in keys}
        keys |= {github_anchor(k) for k in keys}
        return frozenset(keys)

    @classmethod
    def from_bytes(cls, data: bytes, path: str) -> SourceDocument:
        """Raises UnicodeDecodeError when ``data`` is not UTF-8."""
        text = decode_source(data)
        return cls(path=str(path), text=text, sha256=sha256_hex(data), raw=data.decode("utf-8"))

    @property
    def first_heading(self) -> str | None:
        """The document's first heading, or None when it has none."""
        return self.headings[0] if self.headings else None

    def has_heading(self, text: str) -> bool:
        """Whether ``text`` names a heading: as written, without inline markup, or as its GitHub anchor."""
        from .matching import normalize_text, without_markup

        key = normalize_text(text)
        return bool(key) and (key in self._heading_keys or without_markup(key) in self._heading_keys)

    def has_lines(self, start: int, end: int) -> bool:
        """Whether lines ``start`` to ``end`` (1-based, inclusive) exist."""
        return 1 <= start <= end <= len(self.lines)

    def contains_excerpt(self, excerpt: str) -> bool:
        """Whether ``excerpt`` occurs in the text, word for word (see :class:`SearchableText`)."""
        return self._searchable.contains(excerpt)

    def numbered(self) -> str:
        """The text with a right-aligned line number before each line."""
        width = len(str(len(self.lines)))
        return "\n".join(f"{number:>{width}} | {line}".rstrip() for number, line in enumerate(self.lines, 1))


def read_source(path: str | os.PathLike[str]) -> SourceDocument:
    """Read and decode the source at ``path``; raises :class:`SourceUnreadable`."""
    where = os.fspath(path)
    try:
        data = read_bounded(where, MAX_SOURCE_BYTES)
        if b"\x00" in data:  # valid UTF-8, but no text document holds one, and no turn may quote it
            raise SourceUnreadable(where, reason="holds a NUL byte: not a text document")
        return SourceDocument.from_bytes(data, where)
    except UnicodeDecodeError:
        raise SourceUnreadable(where, reason="not UTF-8") from None
    except ValueError as exc:
        raise SourceUnreadable(where, reason=str(exc)) from None
    except OSError as exc:
        raise SourceUnreadable(where, reason=exc.strerror or str(exc)) from None
