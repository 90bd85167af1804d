"""A challenge of a cited source (docs/protocol.md section 10, "Challenges"): one item of a turn's
**Source Challenges** section, ``Turn 3 https://…: the claim it fails to support``. Pure parsing; the
rules (:mod:`.rules`) check that the citation exists and that a claim is named."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .references import urls_in_line

__all__ = ["MIN_CLAIM_WORDS", "Challenge", "read_challenge"]

MIN_CLAIM_WORDS = 3  # "the claim it fails to support" is named, not waved at
_ITEM = re.compile(r"^\s*Turn\s+(\d{1,4})\b[\s,]*(.*)$", re.IGNORECASE | re.DOTALL)
_SEPARATOR = re.compile(r"^\s*[:—–-]\s*")


@dataclass(frozen=True)
class Challenge:
    """Turn ``turn``'s citation ``url`` challenged: ``claim`` is what it fails to support ("" when not named)."""

    turn: int
    url: str | None  # None: the item names no URL
    claim: str
    line: int | None


def read_challenge(text: str, line: int | None) -> Challenge | None:
    """The challenge an item holds; None when it does not begin with the turn it challenges."""
    found = _ITEM.match(text)
    if found is None:
        return None
    rest = found.group(2).strip()
    urls = urls_in_line(rest.split(None, 1)[0]) if rest else []
    url = urls[0] if urls else None
    after = rest.split(None, 1)[1] if url and len(rest.split(None, 1)) > 1 else ("" if url else rest)
    claim = _SEPARATOR.sub("", after).strip().strip("\"“”'")
    return Challenge(int(found.group(1)), url, " ".join(claim.split()), line)
