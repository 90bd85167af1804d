"""NOVELTY's index: earlier positions and claims, asked "does this repeat one?" quickly.

Exact repeats hit a set of word sequences; near repeats (token-set Jaccard similarity of
0.8 or more) go through prefix filtering, the set-similarity-join trick, and a length
filter, and only the surviving candidates are compared exactly.
"""

from __future__ import annotations

import math
import re
import zlib
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .matching import normalize_text

if TYPE_CHECKING:
    from .grammar import ParsedTurn

__all__ = ["NoveltyIndex"]

NOVELTY_THRESHOLD = 0.8
_WORD = re.compile(r"[^\W_]+")
# Frequent words go last in the token order, so they rarely land in a prefix and the
# posting lists that are probed stay short.
_COMMON_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "do",
        "for",
        "from",
        "has",
        "have",
        "if",
        "in",
        "is",
        "it",
        "its",
        "not",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "which",
        "will",
        "with",
        "would",
        "you",
        "i",
        "our",
        "they",
        "should",
        "must",
        "may",
        "more",
        "than",
        "no",
        "all",
        "any",
    ]
)


def _words(text: str) -> list[str]:
    return _WORD.findall(normalize_text(text))


def _rank(token: str) -> tuple[bool, int, str]:
    return (token in _COMMON_WORDS, zlib.crc32(token.encode("utf-8")), token)


def _prefix_length(size: int) -> int:
    # Two sets with Jaccard >= t share a token within each one's first |s| - ceil(t|s|) + 1.
    return size - math.ceil(NOVELTY_THRESHOLD * size - 1e-9) + 1


class NoveltyIndex:
    """Earlier positions and claims, answering "does this repeat one?" in sublinear time."""

    def __init__(self, texts: Iterable[str] = ()):
        self._sequences: dict[str, int] = {}  # word sequence -> its first record
        self._sets: list[frozenset[str]] = []
        self._postings: defaultdict[str, list[int]] = defaultdict(list)
        for text in texts:
            self.add(text)

    def __len__(self) -> int:
        return len(self._sets)

    def add(self, text: str) -> int | None:
        """Index ``text``; returns its record number (what :meth:`match` answers), None when it has no words."""
        words = _words(text)
        if not words:
            return None
        record = len(self._sets)
        self._sequences.setdefault(" ".join(words), record)
        tokens = frozenset(words)
        self._sets.append(tokens)
        for token in sorted(tokens, key=_rank)[: _prefix_length(len(tokens))]:
            self._postings[token].append(record)
        return record

    def add_turn(self, turn: ParsedTurn) -> None:
        """Index a turn's position and each of its claims."""
        self.add(turn.position)
        for claim in turn.claims:
            self.add(claim)

    def repeats(self, text: str) -> bool:
        """Whether ``text`` repeats an indexed text, exactly or nearly (see :meth:`match`)."""
        return self.match(text) is not None

    def match(self, text: str) -> int | None:
        """The record number of an indexed text that ``text`` repeats (the earliest exact repeat,
        else the first near one found), or None."""
        words = _words(text)
        if not words:
            return None
        exact = self._sequences.get(" ".join(words))
        if exact is not None:
            return exact
        tokens = frozenset(words)
        size = len(tokens)
        smallest, largest = NOVELTY_THRESHOLD * size, size / NOVELTY_THRESHOLD
        seen: set[int] = set()
        for token in sorted(tokens, key=_rank)[: _prefix_length(size)]:
            for record in self._postings.get(token, ()):
                if record in seen:
                    continue
                seen.add(record)
                other = self._sets[record]
                if smallest - 1e-9 <= len(other) <= largest + 1e-9 and _jaccard(tokens, other) >= NOVELTY_THRESHOLD:
                    return record
        return None


def _jaccard(first: frozenset[str], second: frozenset[str]) -> float:
    common = len(first & second)
    return common / (len(first) + len(second) - common)
