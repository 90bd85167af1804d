"""Figures: the numbers a claim states, and whether a page (or the source, or a turn) states them too.

Pure. :func:`stated_figures` reads the figures of a claim; a :class:`FigureIndex` answers, for
a text built once and asked often, which of them it does not state. Decisions
(docs/protocol.md section 10, "Figures on the page"):

- A figure is a number written with ASCII digits: an integer (thousands grouped by `,`, a space,
  a no-break or thin space, the same separator throughout: `1,200` = `1 200` = `1200`), a decimal
  (`.` is always the decimal point; `1.50` = `1.5`), with what it measures:
  a percentage (`40%`, `40 %`, `40 percent`, `40 per cent`, `40 pct`), money (`$`, `€`, `£`, `¥`, `₹`
  or an ISO code before it, `USD 5,000`; a code, `dollars` or `euros` after it), a duration
  (`ms`, `s`, `min`, `h`, `day`, `week`, `month`, `year` in their usual spellings, `15-minute`
  included) or a ratio (`3x`, `3×`, `3 times`, `3-fold`). `thousand`, `million`, `billion`,
  `trillion` and the attached `k`, `K`, `M`, `mn`, `B`, `bn`, `tn` (and `m`, `b` after a currency)
  scale it: `1.5 million` = `1,500,000`, `$1.2bn` = `$1,200,000,000`. Signs are wording.
- Not figures of a claim: a year (four digits from 1800 to 2100 alone: write a count in that
  range with a separator, `2,000`); a number glued to letters (`4th`, `2FA`, `IPv6`, `x86`), to
  `.`, `:`, `/`, `#`, `@` or a backslash (`1.2.3`, `design.md:12`, `24/7`, `#42`), or after a
  letter and a hyphen (`RFC-2616`); the number after a label (`Turn 3`, `Seat 2`, `section 4`,
  `lines 12-18`, `point 2`, `Q3`, `v2`, … and the lists and ranges after them: `Turns 2 and 4`);
  dates (`2024-05-01`) and times (`10:30`); anything in a URL; and every figure of a claim that
  begins with `[CONJECTURE]`.
- Found: the text states the same value, with the same measure when the claim names one
  (a claim's `40%` is found as `40 percent`, never as a bare `40` or `40 ms`; a claim's bare
  `1,200` is found whatever follows it on the page). The indexed text keeps every number it holds
  (its years and labels too), and, for the figures its digits miss, its number words: `fifteen
  minutes` states `15 minutes`, `twenty-five` 25, `two million` 2,000,000, `twelve hundred` 1,200.
- Cost: linear in the text. The index is built by one scan for numbers (a single regular expression
  that starts with a character class and never backtracks across the text), each distinct token
  read once; a scan for numbers after a currency code, and one for the number words of the values
  still missing, run only when a figure is missing after the first: never one search per spelling.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from .references import is_conjecture

__all__ = ["Figure", "FigureIndex", "figures_in", "stated_figures"]

# The number itself, after its first digit: 1 to 3 digits then groups of 3 behind one separator, or a run
# of digits; then decimals (a second `.` makes it a version or an address: not a figure).
_NUMBER = (
    r"[0-9]{0,2}(?:(?:,[0-9]{3})+(?![0-9])|(?: [0-9]{3})+(?![0-9])|(?:\u00a0[0-9]{3})+(?![0-9])"
    r"|(?:\u202f[0-9]{3})+(?![0-9])|(?:\u2009[0-9]{3})+(?![0-9])|[0-9]*)(?:\.[0-9]+)*"
)
_SCALES = r"(?:[ \u00a0]?(?i:thousand|million|billion|trillion)|mn|bn|tn|[kKMBmb])(?![a-zA-Z])"
_WORD = r"(?:[ \u00a0-]?(?:%|\u00d7|[Pp]er[ -]cent|[a-zA-Z]+))"
_CURRENCY_CODES = ("USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "CNY", "INR")
# A scan starts at a digit or a currency sign (a character class first: the engine skips to the
# next candidate without trying the pattern at every position); a code before the number has its own.
_SCAN = re.compile(
    r"[$\u20ac\u00a3\u00a5\u20b90-9](?:(?<=[$\u20ac\u00a3\u00a5\u20b9])[ \u00a0]?[0-9]|(?<=[0-9]))"
    + _NUMBER
    + f"(?:{_SCALES})?{_WORD}?"
)
_CODE_SCAN = re.compile(f"(?:{'|'.join(_CURRENCY_CODES)})[ \u00a0]?[0-9]{_NUMBER}(?:{_SCALES})?{_WORD}?")
# One token of either scan, read into its parts.
_TOKEN = re.compile(
    r"(?P<currency>[$\u20ac\u00a3\u00a5\u20b9]|[A-Z]{3})?[ \u00a0]?"
    r"(?P<integer>[0-9]+(?:[ ,\u00a0\u202f\u2009][0-9]{3})*)(?P<fraction>\.[0-9]+)?(?P<dotted>\.[0-9]+)*"
    r"(?:(?:[ \u00a0]?(?P<scale>(?i:thousand|million|billion|trillion))|(?P<suffix>mn|bn|tn|[kKMBmb]))(?![a-zA-Z]))?"
    r"(?P<gap>[ \u00a0-]?)(?P<word>%|\u00d7|[Pp]er[ -]cent|[a-zA-Z]+)?"
)
_CODE_BEFORE = re.compile(f"(?<![a-zA-Z])({'|'.join(_CURRENCY_CODES)})[ \u00a0]?$")

_SCALE_ZEROS: Final = {
    "thousand": 3,
    "million": 6,
    "billion": 9,
    "trillion": 12,
    "k": 3,
    "K": 3,
    "M": 6,
    "mn": 6,
    "m": 6,
    "B": 9,
    "bn": 9,
    "b": 9,
    "tn": 12,
}
_MONEY_ONLY_SUFFIXES = ("m", "b")  # `5m` is five metres or minutes as often as five million
_CURRENCY_SIGNS: Final = {"$": "USD", "\u20ac": "EUR", "\u00a3": "GBP", "\u00a5": "JPY", "\u20b9": "INR"}
# Every spelling of a measure (lower case) -> the measure.
_UNITS: Final = {
    **dict.fromkeys(("%", "percent", "per cent", "per-cent", "pct"), "%"),
    **dict.fromkeys(("ms", "msec", "msecs", "millisecond", "milliseconds"), "ms"),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), "s"),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), "min"),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), "h"),
    **dict.fromkeys(("day", "days"), "day"),
    **dict.fromkeys(("week", "weeks"), "week"),
    **dict.fromkeys(("month", "months"), "month"),
    **dict.fromkeys(("year", "years", "yr", "yrs"), "year"),
    **dict.fromkeys(("x", "\u00d7", "times", "fold"), "x"),
    **dict.fromkeys(("dollar", "dollars"), "USD"),
    **dict.fromkeys(("euro", "euros"), "EUR"),
    **{code.lower(): code for code in _CURRENCY_CODES},
}
_SEPARATORS = str.maketrans("", "", ", \u00a0\u202f\u2009")
_NOT_BEFORE = frozenset(".:/#@\\_")
_YEARS = range(1800, 2101)

# What a claim numbers rather than measures, masked before its figures are read.
_LABELS = (
    "turns?|seats?|sections?|lines?|chapters?|pages?|steps?|items?|points?|arguments?|rules?|phases?|rounds?"
    "|questions?|options?|cases?|examples?|edits?|figures?|tables?|appendix|appendices|rfcs?|iso|version"
    "|issues?|no\\.?|number|v|q"
)
_NOT_FIGURES = re.compile(
    r"https?://\S+"
    rf"|\b(?i:{_LABELS})\s*#?[0-9]+(?:\s*(?i:,|and|&|or|to|through|-|\u2013|\u2014)\s*#?[0-9]+)*(?![0-9])"
    r"|\u00a7+\s*[0-9]+(?:\.[0-9]+)*"
    r"|[:#][0-9]+(?:\s*[-\u2013\u2014]\s*[0-9]+)?"
    r"|\b[0-9]+/[0-9]+\b"
    r"|\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b"
    r"|\b[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?\b"
)

# Number words, for the figures a page writes out.
_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORD_SCALES: Final = {"hundred": 2, "thousand": 3, "million": 6, "billion": 9, "trillion": 12}
_MORE_WORDS = "|".join((*_ONES[1:10], *_WORD_SCALES))
_TENS_BEFORE = re.compile(f"(?:{'|'.join(_TENS)})[ -]$")


@dataclass(frozen=True)
class Figure:
    """A figure as a text states it: as written, its value (a canonical decimal) and what it measures."""

    text: str
    value: str  # `1200`, `1.5`: no separators, no leading or trailing zeros
    unit: str | None  # `%`, a currency code, a duration (`min`), `x`; None for a bare number


def stated_figures(claim: str) -> tuple[Figure, ...]:
    """The figures a claim states, once each, in order; none for a claim tagged `[CONJECTURE]`."""
    return () if is_conjecture(claim) else figures_in(claim)


def figures_in(text: str) -> tuple[Figure, ...]:
    """The figures a text states as a claim states them (labels, years and the like aside), once each, in order."""
    text = _NOT_FIGURES.sub(lambda found: " " * len(found.group()), text)
    found: dict[tuple[str, str | None], Figure] = {}
    for match in _SCAN.finditer(text):
        start, end = match.span()
        if start and text[start].isdigit() and _glued_before(text, start):  # `US$5` is money
            continue
        code = _CODE_BEFORE.search(text, max(0, start - 4), start) if text[start].isdigit() else None
        read = _read(match.group(), code.group(1) if code else None, claim=True)
        if read is not None and not (end < len(text) and text[end].isalpha()):
            written, value, unit = read
            found.setdefault((value, unit), Figure(code.group() + written if code else written, value, unit))
    return tuple(found.values())


class FigureIndex:
    """Every number a text states, by value, with the measures stated with it: built on first use, in
    one pass over the text; one more for the numbers after a currency code, and one for number words,
    each only when a figure asked for is still missing."""

    def __init__(self, text: str):
        self._text = text
        self._units: dict[str, set[str | None]] | None = None
        self._codes_read = False  # whether the numbers after a currency code are indexed
        self._words_read: set[str] = set()  # values whose number words were looked for

    def missing(self, figures: Iterable[Figure]) -> tuple[Figure, ...]:
        """The figures this text does not state, in the order given."""
        absent = [figure for figure in figures if not self._holds(figure)]
        if not self._codes_read and any(figure.unit in _CURRENCY_CODES for figure in absent):
            self._read_codes()
            absent = [figure for figure in absent if not self._holds(figure)]
        wanted = {figure.value for figure in absent} - self._words_read
        if wanted:
            self._read_words(wanted)
            absent = [figure for figure in absent if not self._holds(figure)]
        return tuple(absent)

    def _holds(self, figure: Figure) -> bool:
        units = self._index().get(figure.value)
        return units is not None and (figure.unit is None or figure.unit in units)

    def _index(self) -> dict[str, set[str | None]]:
        if self._units is None:
            self._units = {}
            self._add((None, token) for token in set(_SCAN.findall(self._text)))
        return self._units

    def _add(self, tokens: Iterable[tuple[str | None, str]]) -> None:
        index = self._index()
        for code, token in tokens:
            read = _read(token, code, claim=False)
            if read is not None:
                index.setdefault(read[1], set()).add(read[2])

    def _read_codes(self) -> None:
        """Index the numbers a currency code comes before (`USD 5,000`), in one pass over the text."""
        self._codes_read = True
        self._add({(token[:3], token[3:]) for token in _CODE_SCAN.findall(self._text)})

    def _read_words(self, values: set[str]) -> None:
        """Index the number words that could spell ``values``, in one pass over the text."""
        self._words_read |= values
        spellings = sorted({(s, v) for v in values for s in _spellings(v)}, key=lambda sv: -len(sv[0]))
        if not spellings:
            return
        words = "|".join(f"(?P<w{i}>{'[ -]'.join(spelling.split())})" for i, (spelling, _) in enumerate(spellings))
        # `twenty` is not read out of `twenty-five`, nor `two` out of `two million`.
        pattern = re.compile(f"(?:{words})(?![a-z])(?![ -](?:{_MORE_WORDS})(?![a-z])){_WORD}?")
        lowered = self._text.lower()
        index = self._index()
        for match in pattern.finditer(lowered):
            start = match.start()
            if start and (lowered[start - 1].isalpha() or _TENS_BEFORE.search(lowered, max(0, start - 9), start)):
                continue  # `five` of `twenty-five` is not 5
            said = next(i for i, (spelling, _) in enumerate(spellings) if match.group(f"w{i}") is not None)
            rest = lowered[match.end(f"w{said}") : match.end()].lstrip(" \u00a0-")
            index.setdefault(spellings[said][1], set()).add(_UNITS.get(rest))


def _glued_before(text: str, start: int) -> bool:
    """Whether the number at ``start`` is part of a word, a path, an address or a label (`v2`, `:12`, `RFC-2616`)."""
    before = text[start - 1]
    if before.isalnum() or before in _NOT_BEFORE:
        return True
    if before == "-" and start > 1 and text[start - 2].isalpha():
        return True
    return before == "," and start > 1 and text[start - 2].isdigit()


def _read(token: str, code: str | None, *, claim: bool) -> tuple[str, str, str | None] | None:
    """A scanned token as a figure (its text, value and measure); None when it is none (for a claim: a
    year, an ordinal, a number glued to a word). Called once per distinct number of a page: kept cheap."""
    number, gap, word = token.partition(" ")
    if (
        not claim
        and number.replace(",", "").isdigit()
        and (not word or (word.isalpha() and word.lower() not in _SCALE_ZEROS))
    ):
        # Most numbers of a page: a count and the word after it. `word` is ASCII: the scan took it.
        return token, number.replace(",", "").lstrip("0") or "0", _UNITS.get(word.lower()) if word else None
    parts = _TOKEN.fullmatch(token)
    if parts is None:
        return None
    sign, integer, fraction, dotted, scale_word, suffix, gap, word = parts.groups()
    if dotted:
        return None
    currency = _CURRENCY_SIGNS.get(sign, sign) if sign else code
    if suffix in _MONEY_ONLY_SUFFIXES and currency is None:
        if claim:
            return None  # `5m`: glued to a letter
        suffix = None
    unit = _UNITS.get(word.lower()) if word else None
    if claim and word and unit is None and not gap:
        return None  # `4th`, `2FA`: glued to a word
    digits = integer.translate(_SEPARATORS)
    if claim and not fraction and digits == integer and len(digits) == 4 and int(digits) in _YEARS:
        decade = unit == "s" and not gap  # `1990s`
        if decade or not (scale_word or suffix or currency or unit):
            return None  # a year
    zeros = _SCALE_ZEROS[scale_word.lower()] if scale_word else _SCALE_ZEROS.get(suffix or "", 0)
    value = _value(digits, (fraction or ".")[1:], zeros)
    written = token if unit or not word else token[: parts.start("gap")]  # the next word is not the figure's
    return written.strip(), value, currency or unit


def _value(integer: str, fraction: str, zeros: int) -> str:
    """``integer.fraction`` times ten to the ``zeros``, as a canonical decimal: `1.50` -> `1.5`, `1.2`, 6 -> `1200000`."""
    digits = integer + fraction
    point = len(integer) + zeros
    digits = digits.ljust(point, "0")
    whole, part = digits[:point].lstrip("0") or "0", digits[point:].rstrip("0")
    return f"{whole}.{part}" if part else whole


def _spellings(value: str) -> list[str]:
    """How ``value`` may be written in words: a number under a hundred, times a scale (`fifteen`,
    `twenty five`, `two million`, `twelve hundred`); none for a decimal."""
    if not value.isdigit():
        return []
    number = int(value)
    found = [_words(number)] if number < 100 else []
    for scale, zeros in _WORD_SCALES.items():
        times, left = divmod(number, 10**zeros)
        if not left and 0 < times < 100:
            found.append(f"{_words(times)} {scale}")
    return found


def _words(number: int) -> str:
    if number < 20:
        return _ONES[number]
    tens, ones = divmod(number, 10)
    return _TENS[tens - 2] + (f" {_ONES[ones]}" if ones else "")
