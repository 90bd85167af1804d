r"""Raw HTML in Markdown, found where a CommonMark renderer (GitHub's among them) reads it.

Reviewers read the artifact rendered. Raw HTML there hides text (`<details>`, a comment)
or swallows all that follows (an unclosed `<pre>`, `<script>`, `<!--`): the peer's later
turns and the Terminal Conclusion. Where a reading is ambiguous, this scanner says HTML:

- Counted wherever they stand, closed or not: every start of an HTML block (`<!--`, `<?`,
  `<!DOCTYPE`, `<![CDATA[`; `<div`, `</pre`, … followed by a space, `>` or the line's end)
  and every complete tag (`<span onclick="…">`, `</b>`, `<u8>` in `Vec<u8>`).
- Text: `a < b`, `x<y`, entities (`&lt;`), an escaped `\<`, autolinks (`<https://…>`,
  `<user@example.com>`): a `<…>` without spaces that holds `:` or `@` is never a tag.
- Code hides HTML only where no renderer can read it otherwise. A fenced block counts when
  every fence-like line of the text is at the left margin (an indented fence may belong to
  a list item, which ends it early). A code span counts when it opens and closes on one
  line, holds no `|` (a table splits cells first) and does not open inside a URL (GitHub
  links `https://…` up to the next space, backticks included); otherwise the paragraph is
  read as if it had no code spans. Indented code blocks do not count: whether four spaces
  make code depends on the list around them.

Linear time: one pass per paragraph (two when its code spans are ambiguous), jumping with
`str.find` and patterns without adjacent unbounded repeats; a tag's look-ahead stops at the
next `<` outside quotes, and a quoted value at the next quote of its kind.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .markdown import fenced_lines

__all__ = ["RawHtml", "find_raw_html", "html_snippet"]

# HTML block start conditions 1 and 6 (CommonMark 0.30 and 0.31 together).
_BLOCK_TAGS = frozenset(
    (
        "address",
        "article",
        "aside",
        "base",
        "basefont",
        "blockquote",
        "body",
        "caption",
        "center",
        "col",
        "colgroup",
        "dd",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "frame",
        "frameset",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "header",
        "hr",
        "html",
        "iframe",
        "legend",
        "li",
        "link",
        "main",
        "menu",
        "menuitem",
        "nav",
        "noframes",
        "ol",
        "optgroup",
        "option",
        "p",
        "param",
        "pre",
        "script",
        "search",
        "section",
        "source",
        "style",
        "summary",
        "table",
        "tbody",
        "td",
        "textarea",
        "tfoot",
        "th",
        "thead",
        "title",
        "tr",
        "track",
        "ul",
    )
)
_STARTS = ("<!--", "<?", "<![CDATA[")  # comments, processing instructions, CDATA: HTML at once
_SPECIAL = re.compile(r"[<`\\]")
_BACKTICKS = re.compile(r"`+")
_SPACE = re.compile(r"[ \t\n\v\f]*")
_TAG_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*")
_ATTRIBUTE_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_.:-]*")
_UNQUOTED_VALUE = re.compile(r"[^ \t\n\v\f\"'=<>`]+")
_POINTY = re.compile(r"<[^\s<>]*>")
_WORD_BREAK = re.compile(r"[\s<]")
_URL_MARK = re.compile(r"://|www\.", re.IGNORECASE)
_FENCE_PREFIX = " \t>-+*.)0123456789"  # indentation, quote and list markers
SNIPPET_CHARS = 40


@dataclass(frozen=True)
class RawHtml:
    """A piece of raw HTML found in a text: where it starts and how it begins."""

    offset: int  # in the text scanned
    line: int  # from 1
    snippet: str  # how it starts, on one line, shortened


def find_raw_html(text: str) -> list[RawHtml]:
    """Every piece of raw HTML in ``text`` (LF line ends), in order."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    found: list[RawHtml] = []
    for first, last in _paragraphs(lines, _code_lines(lines)):
        base = starts[first]
        paragraph = text[base : starts[last] + len(lines[last])]
        spans = _scan(paragraph, code_spans=True)
        if spans is None:  # an ambiguous code span: read the paragraph as if it had none
            spans = _scan(paragraph, code_spans=False) or []
        for at, end in spans:
            number = bisect.bisect_right(starts, base + at)
            found.append(RawHtml(base + at, number, html_snippet(_shown(paragraph, at, end))))
    return found


def _shown(text: str, at: int, end: int) -> str:
    """A tag shows itself; a comment and the like show what they hold, up to their close."""
    if text[at + 1] not in "!?":
        return text[at:end]
    shown = text[at : at + SNIPPET_CHARS + 1]
    closer = "-->" if shown.startswith("<!--") else ">"
    close = shown.find(closer, 3)
    return shown if close < 0 else shown[: close + len(closer)]


def html_snippet(raw: str) -> str:
    """The first line of ``raw``, shortened for a message."""
    first = raw.split("\n", 1)[0].strip()
    return first if len(first) <= SNIPPET_CHARS else first[: SNIPPET_CHARS - 1] + "\u2026"


def _code_lines(lines: list[str]) -> list[bool]:
    """Lines every renderer reads as code: fenced blocks, when every fence sits at the left margin."""
    for line in lines:
        rest = line.lstrip(_FENCE_PREFIX)
        if len(rest) < len(line) and rest.startswith(("```", "~~~")):
            return [False] * len(lines)
    return fenced_lines(lines)


def _paragraphs(lines: list[str], code: list[bool]) -> Iterator[tuple[int, int]]:
    """(first, last) line indexes of each run of non-blank lines outside code."""
    first = None
    for index, line in enumerate(lines):
        inside = not code[index] and line.strip(" \t") != ""
        if inside and first is None:
            first = index
        elif not inside and first is not None:
            yield first, index - 1
            first = None
    if first is not None:
        yield first, len(lines) - 1


def _scan(text: str, *, code_spans: bool) -> list[tuple[int, int]] | None:
    """(start, end) of each piece of raw HTML, left to right as CommonMark's inline parser goes;
    None when code spans are on and one of them is ambiguous."""
    found: list[tuple[int, int]] = []
    urls: _UrlWords | None = None
    pos = 0
    while (special := _SPECIAL.search(text, pos)) is not None:
        at = special.start()
        char = text[at]
        if char == "\\":
            pos = at + 2  # an escaped character is text (`\<`, `` \` ``); nothing else escapes
        elif char == "`":
            run = _match(_BACKTICKS, text, at)
            if not code_spans:
                pos = run
                continue
            urls = urls or _UrlWords(text)
            closer = _closer(text, run, run - at)
            if closer is None or text.find("|", run, closer) >= 0 or urls.holds(at):
                return None
            pos = closer + run - at
        elif (end := _start_end(text, at)) is not None:
            found.append((at, end))
            pos = end
        elif (pointy := _POINTY.match(text, at)) and (":" in pointy.group() or "@" in pointy.group()):
            # An autolink, or text: a tag without spaces holds neither `:` nor `@`. An autolink
            # takes its backticks along, so reading them as code-span markers would be unsafe.
            if code_spans and "`" in pointy.group():
                return None
            pos = pointy.end()
        elif (end := _tag_end(text, at)) is not None:
            found.append((at, end))
            pos = end
        else:
            pos = at + 1
    return found


def _match(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where ``pattern`` (which may match nothing) stops matching from ``pos``."""
    found = pattern.match(text, pos)
    return pos if found is None else found.end()


def _start_end(text: str, at: int) -> int | None:
    """After a start that is HTML whatever follows: a comment, a processing instruction, CDATA, a declaration."""
    start = next((start for start in _STARTS if text.startswith(start, at)), None)
    if start is not None:
        return at + len(start)
    letter = text[at + 2 : at + 3]
    return at + 3 if text.startswith("<!", at) and letter.isascii() and letter.isalpha() else None


def _tag_end(text: str, at: int) -> int | None:
    """After a complete open or closing tag, or the name of a tag that opens an HTML block."""
    closing = text.startswith("</", at)
    name = _TAG_NAME.match(text, at + 2 if closing else at + 1)
    if name is None:
        return None
    end = _closing_tag_end(text, name.end()) if closing else _open_tag_end(text, name.end())
    if end is None and name.group().lower() in _BLOCK_TAGS and _ends_block_start(text, name.end()):
        end = name.end()  # an HTML block opens here, closed or not
    return end


def _closer(text: str, start: int, length: int) -> int | None:
    """Where a run of exactly ``length`` backticks starts after ``start`` on the same line."""
    line_end = text.find("\n", start)
    line_end = len(text) if line_end < 0 else line_end
    pos = start
    while (at := text.find("`", pos, line_end)) >= 0:
        pos = _match(_BACKTICKS, text, at)
        if pos - at == length:
            return at
    return None


class _UrlWords:
    """Whether a position lies in a word holding `://` or `www.`, which GitHub may link whole."""

    def __init__(self, text: str):
        self.breaks = [m.start() for m in _WORD_BREAK.finditer(text)]
        self.marks = [m.start() for m in _URL_MARK.finditer(text)]

    def holds(self, at: int) -> bool:
        mark = bisect.bisect_left(self.marks, at) - 1
        if mark < 0:
            return False
        before = bisect.bisect_left(self.breaks, at) - 1
        return before < 0 or self.breaks[before] < self.marks[mark]


def _open_tag_end(text: str, pos: int) -> int | None:
    """After a tag name: attributes, optional spaces, an optional `/`, then `>`."""
    while True:
        spaced = _match(_SPACE, text, pos)
        if text.startswith(">", spaced):
            return spaced + 1
        if text.startswith("/>", spaced):
            return spaced + 2
        attribute = _ATTRIBUTE_NAME.match(text, spaced) if spaced > pos else None
        if attribute is None:
            return None
        pos = attribute.end()
        equals = _match(_SPACE, text, pos)
        if text.startswith("=", equals):
            value_end = _value_end(text, _match(_SPACE, text, equals + 1))
            if value_end is None:
                return None
            pos = value_end


def _value_end(text: str, pos: int) -> int | None:
    quote = text[pos : pos + 1]
    if quote in ('"', "'"):
        close = text.find(quote, pos + 1)
        return None if close < 0 else close + 1
    value = _UNQUOTED_VALUE.match(text, pos)
    return None if value is None else value.end()


def _closing_tag_end(text: str, pos: int) -> int | None:
    spaced = _match(_SPACE, text, pos)
    return spaced + 1 if text.startswith(">", spaced) else None


def _ends_block_start(text: str, pos: int) -> bool:
    return pos == len(text) or text[pos] in " \t\n>" or text.startswith("/>", pos)
