"""The one line scanner for Markdown: line splitting, code fences, front matter, headings.

Every reader of Markdown in the project (the source, a turn, the artifact) scans lines
with these functions, so "what is a heading" and "what is inside a fence" have one
answer. mistune parses section bodies (:mod:`rp1_duel.turns.grammar`); it has no line
numbers, so where a line matters it is found here.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["FENCE", "Heading", "atx_heading", "fenced_lines", "front_matter_end", "headings", "split_lines"]

# Every pattern here and in the turn parser runs in linear time: no two unbounded
# repeats that can match the same characters sit next to each other (a hostile turn
# must not cost quadratic time inside the duel's lock). Where that cannot be said in a
# regex, the scan is written with string methods.
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# Lines that cannot be the text of a setext heading (list items, quotes, tables, …).
_NOT_PARAGRAPH = re.compile(r"^\s*([-*+>|#]|\d{1,9}[.)])(\s|$)|^ {4}")
_FRONT_MATTER_CLOSERS = {"---": ("---", "..."), "+++": ("+++",)}


class Heading(NamedTuple):
    """A heading of a Markdown text: its level, its text and the line it is on (a tuple, built by every join's
    scan of its source, costs start-up less than a dataclass)."""

    level: int
    text: str
    line: int  # its 0-based index in the lines


def normalize_newlines(text: str) -> str:
    """Every line end made LF: CRLF and lone CR, as Windows and old Mac editors save them."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_lines(text: str) -> list[str]:
    """Lines as an editor numbers them: CRLF or CR end a line, a final newline adds none."""
    text = normalize_newlines(text)
    if not text:
        return []
    return text.removesuffix("\n").split("\n")


def fenced_lines(lines: list[str]) -> list[bool]:
    """For each line, whether it belongs to a fenced code block (fence lines included)."""
    inside: list[bool] = []
    fence = ""
    for line in lines:
        opener = FENCE.match(line)
        if fence:
            inside.append(True)
            closes = opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence)
            if closes and not line.strip().lstrip(fence[0]):
                fence = ""
        elif opener and not (opener.group(1)[0] == "`" and "`" in line[opener.end() :]):
            # A backtick fence's info string holds no backtick (CommonMark): "```a`" is text.
            inside.append(True)
            fence = opener.group(1)
        else:
            inside.append(False)
    return inside


def front_matter_end(lines: list[str], start: int = 0, end: int | None = None) -> int | None:
    """If a front matter block (``---``…``---``/``...``, or ``+++``…``+++``) opens at ``start``,
    the index of the line after it; else None."""
    end = len(lines) if end is None else end
    if start >= end:
        return None
    closers = _FRONT_MATTER_CLOSERS.get(lines[start].strip())
    if closers is None:
        return None
    for index in range(start + 1, end):
        if lines[index].strip() in closers:
            return index + 1
    return None


def atx_heading(line: str) -> tuple[int, str] | None:
    """``(level, text)`` of an ATX heading line (``## Text``, an optional closing ``##``), else None."""
    rest = line.lstrip(" ")
    if len(line) - len(rest) > 3:
        return None
    text = rest.lstrip("#")
    level = len(rest) - len(text)
    if not 1 <= level <= 6 or (text and text[0] not in " \t"):
        return None
    text = text.strip(" \t")
    unclosed = text.rstrip("#")
    if unclosed and unclosed != text and unclosed[-1] in " \t":
        text = unclosed.rstrip(" \t")
    return level, text


def headings(lines: list[str]) -> list[Heading]:
    """ATX and setext headings outside code fences and after any YAML front matter."""
    found: list[Heading] = []
    fenced = fenced_lines(lines)
    start = front_matter_end(lines) if lines and lines[0].strip() == "---" else None
    start = start or 0
    for index in range(start, len(lines)):
        if fenced[index]:
            continue
        line = lines[index]
        atx = atx_heading(line)
        if atx:
            found.append(Heading(atx[0], atx[1], index))
            continue
        above = index - 1
        underline = _SETEXT_UNDERLINE.match(line)
        if (
            underline
            and above >= start
            and not fenced[above]
            and lines[above].strip()
            and not _NOT_PARAGRAPH.match(lines[above])
            and not atx_heading(lines[above])
        ):
            level = 1 if underline.group(1)[0] == "=" else 2
            found.append(Heading(level, lines[above].strip(), above))
    return found
