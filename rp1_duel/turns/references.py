"""What a support item or an Addresses target cites: a URL, a principle, a conjecture, a turn or the source.

Pure parsing of one item's text against the names the source may be cited by, the URLs a
turn mentions anywhere (``duel verify`` opens them all), and the turns a running text names
(``duel report --assess`` checks a model's).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..vocabulary import CONJECTURE_TAG

__all__ = [
    "Reference",
    "TurnMention",
    "heading_candidates",
    "is_conjecture",
    "parse_reference",
    "trim_url",
    "turns_in_text",
    "urls_in_line",
]

_URL = re.compile(r"^(?:<https?://[^\s>]+>|https?://\S+|\[[^\]]*\]\(https?://[^)\s]+\))", re.IGNORECASE)
_PRINCIPLE = re.compile(r"^principle\s*:\s*(.*)$", re.IGNORECASE | re.DOTALL)
_TURN = re.compile(r"^turn\s+#?(\d+)\b", re.IGNORECASE)
# The tag in exact case, first in the text, inline markers around it aside, then a space or the end:
# `[CONJECTURE](https://…)` stays a link.
_CONJECTURE = re.compile(r"^[*_`]*" + re.escape(CONJECTURE_TAG) + r"[*_`]*(?=\s|$)")
_LINES = re.compile(r"^:(\d+)(?:\s*[-\u2013\u2014]\s*(\d+))?(?!\d)")
_OTHER_DOCUMENT = re.compile(r"^(\S+?\.(?:md|markdown))(?=$|[#:\s\"\u201c])", re.IGNORECASE)
_OPEN_QUOTES = '"\u201c\u201e'
_CLOSE_QUOTES = '"\u201d\u201c'
_BEFORE_EXCERPT = " \t:,\u2014\u2013-"
_HEADING_DESCRIPTION = re.compile(r"\s[\u2014\u2013-]\s|\s\(|:\s")
_LONGEST_HEADING = 300
# A URL in running text: up to whitespace or a character that ends an autolink or a quote; a `)` that
# closes a Markdown link is trimmed after, as one the URL does not open.
_URL_IN_TEXT = re.compile(r"https?://[^\s<>\[\]`\"]+", re.IGNORECASE)
# Punctuation that ends a sentence, not a URL (GitHub's autolinks leave it out the same way).
_URL_TRAILING = ".,;:!?*_~'"
_CODE_SPAN = re.compile(r"(`+)[^`]*?\1")
# Turns named in running text: `Turn 3`, `turn #3`, `Turns 2 and 4`, `Turns 2, 3 and 5`, `Turns 2-4`.
_TURNS_IN_TEXT = re.compile(
    r"\bturns?\s+#?\d{1,9}(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*|\s*[-\u2013]\s*)"
    r"(?:turns?\s+)?#?\d{1,9})*(?!\d)",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")


@dataclass(kw_only=True, frozen=True)
class Reference:
    """What a support item or an Addresses target cites."""

    kind: str  # "url", "principle", "conjecture", "turn", "source"; "other-document" or "unknown" when invalid
    text: str
    turn: int | None = None
    heading: str | None = None  # as written, a description possibly after it
    lines: tuple[int, int] | None = None
    excerpt: str | None = None
    document: str | None = None  # the file an "other-document" reference names
    url: str | None = None  # the address a "url" reference names, without `<>`, link text or trailing punctuation

    @property
    def has_locator(self) -> bool:
        """Whether the reference says where: a heading, a line range or a quoted excerpt."""
        return self.heading is not None or self.lines is not None or self.excerpt is not None


def parse_reference(text: str, source_names: Sequence[str]) -> Reference:
    """What one support item or Addresses target cites, given the names the source may be cited by."""
    text = text.strip()
    url = _URL.match(text)
    if url:
        return Reference(kind="url", text=text, url=_address(url.group()), excerpt=_excerpt(text[url.end() :]))
    principle = _PRINCIPLE.match(text)
    if principle:
        return Reference(kind="principle" if principle.group(1).strip() else "unknown", text=text)
    conjecture = _CONJECTURE.match(text)
    if conjecture:
        return Reference(kind="conjecture" if text[conjecture.end() :].strip() else "unknown", text=text)
    turn = _TURN.match(text)
    if turn:
        return Reference(kind="turn", text=text, turn=int(turn.group(1)), excerpt=_excerpt(text[turn.end() :]))
    cited = text.removeprefix("./")
    for name in source_names:
        rest = cited[len(name) :]
        if (
            name
            and cited[: len(name)].casefold() == name.casefold()
            and (not rest or rest[0] in "#: \t" + _OPEN_QUOTES)
        ):
            return _source_reference(text, rest)
    other = _OTHER_DOCUMENT.match(cited)
    if other:
        return Reference(kind="other-document", text=text, document=other.group(1))
    return Reference(kind="unknown", text=text)


def is_conjecture(text: str) -> bool:
    """Whether a claim or a support item is tagged a conjecture: it begins with `[CONJECTURE]`."""
    return _CONJECTURE.match(text.lstrip()) is not None


def _source_reference(text: str, rest: str) -> Reference:
    heading = lines = None
    if rest.startswith("#"):
        quote = next((i for i, char in enumerate(rest) if char in _OPEN_QUOTES), len(rest))
        heading, rest = rest[1:quote].strip(), rest[quote:]
    elif found := _LINES.match(rest):
        start = int(found.group(1))
        lines, rest = (start, int(found.group(2) or start)), rest[found.end() :]
    return Reference(kind="source", text=text, heading=heading, lines=lines, excerpt=_excerpt(rest))


def _excerpt(rest: str) -> str | None:
    """A quoted excerpt at the start of `rest` (separators aside); up to the last closing quote."""
    rest = rest.lstrip(_BEFORE_EXCERPT)
    if not rest or rest[0] not in _OPEN_QUOTES:
        return None
    body = rest[1:]
    close = max(body.rfind(quote) for quote in _CLOSE_QUOTES)
    return body if close < 0 else body[:close]


def _address(written: str) -> str:
    """The address of a URL as a support item writes it: bare, `<…>` or `[text](…)`."""
    if written.startswith("<"):
        return written[1:-1]
    if written.startswith("["):
        return written[written.rindex("(") + 1 : -1]
    return trim_url(written)


def trim_url(url: str) -> str:
    """A bare URL without the sentence punctuation after it, and without a `)` it does not open."""
    while url and (url[-1] in _URL_TRAILING or (url[-1] == ")" and url.count("(") < url.count(")"))):
        url = url[:-1]
    return url


def urls_in_line(line: str) -> list[str]:
    """The URLs a line of Markdown mentions, in order, code spans aside."""
    prose = _CODE_SPAN.sub(" ", line)
    urls = (trim_url(found.group()) for found in _URL_IN_TEXT.finditer(prose))
    return [url for url in urls if url.partition("://")[2]]


def heading_candidates(written: str) -> list[str]:
    """The heading as written, then shorter prefixes cut where a description may begin."""
    # Headings are short: cuts past the first few hundred characters would only cost time.
    cuts = [match.start() for match in _HEADING_DESCRIPTION.finditer(written[:_LONGEST_HEADING])]
    return [written] + [written[:cut] for cut in reversed(cuts)]


@dataclass(kw_only=True, frozen=True)
class TurnMention:
    """A turn a running text names, with the excerpt quoted right after it, if any."""

    turn: int
    excerpt: str | None
    start: int  # where the mention begins in the text
    end: int  # where it ends: after its number, or after the excerpt's closing quote


def turns_in_text(text: str) -> list[TurnMention]:
    """Every turn ``text`` names, in order. A quote right after a single turn (`Turn 3 "…"`, separators
    aside, up to the next closing quote and within its paragraph) is its excerpt; a list of turns has none."""
    found = []
    for match in _TURNS_IN_TEXT.finditer(text):
        numbers = list(_DIGITS.finditer(match.group()))
        if len(numbers) == 1:
            excerpt, end = _quoted_after(text, match.end())
            found.append(TurnMention(turn=int(numbers[0].group()), excerpt=excerpt, start=match.start(), end=end))
            continue
        for index, number in enumerate(numbers):
            start = match.start() if index == 0 else match.start() + number.start()
            found.append(
                TurnMention(turn=int(number.group()), excerpt=None, start=start, end=match.start() + number.end())
            )
    return found


def _quoted_after(text: str, position: int) -> tuple[str | None, int]:
    """The quote that starts at ``position`` (separators aside) and where it ends; else (None, position)."""
    start = position
    while start < len(text) and text[start] in _BEFORE_EXCERPT:
        start += 1
    if start >= len(text) or text[start] not in _OPEN_QUOTES:
        return None, position
    close = min((found for quote in _CLOSE_QUOTES if (found := text.find(quote, start + 1)) >= 0), default=-1)
    if close < 0 or "\n\n" in text[start:close]:
        return None, position
    return text[start + 1 : close], close + 1
