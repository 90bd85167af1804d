"""Disputed sources (docs/protocol.md section 10, "Challenges" and "Corrections"): a challenge, one item of
a turn's **Source Challenges** section (``Turn 3 https://…: the claim it fails to support``), and a
correction, one item of **Source Corrections** (``Replacing https://old… with https://new…: why``). Pure
parsing; the rules (:mod:`.rules`) check what they name."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .grammar import parse_turn
from .references import urls_in_line

__all__ = ["MIN_CLAIM_WORDS", "Challenge", "Correction", "challenged", "read_challenge", "read_correction"]

MIN_CLAIM_WORDS = 3  # "the claim it fails to support" is named, not waved at
_ITEM = re.compile(r"^\s*Turn\s+(\d{1,4})\b[\s,]*(.*)$", re.IGNORECASE | re.DOTALL)
_SEPARATOR = re.compile(r"^\s*[:—–-]\s*")
_CORRECTION = re.compile(r"^\s*Replacing\s+(\S+)\s+with\s+(\S+)\s*(.*)$", re.IGNORECASE | re.DOTALL)


@dataclass(kw_only=True, frozen=True)
class Challenge:
    """Turn ``turn``'s citation ``url`` challenged: ``claim`` is what it fails to support ("" when not named)."""

    turn: int
    url: str | None  # None: the item names no URL
    claim: str
    line: int | None


def challenged(turn: str) -> list[Challenge]:
    """The challenges of a turn's text that name a URL: the sources to check once it is appended."""
    return [
        found
        for item in parse_turn(turn).challenges
        if (found := read_challenge(item.text, item.line)) is not None and found.url is not None
    ]


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
    return Challenge(turn=int(found.group(1)), url=url, claim=" ".join(claim.split()), line=line)


@dataclass(kw_only=True, frozen=True)
class Correction:
    """A seat's source ``old`` replaced by ``new``, and why ("" when not said)."""

    old: str
    new: str
    why: str
    line: int | None


def read_correction(text: str, line: int | None) -> Correction | None:
    """The correction an item holds; None when it does not read ``Replacing URL with URL: why``."""
    found = _CORRECTION.match(text)
    if found is None:
        return None
    old, new = urls_in_line(found.group(1)), urls_in_line(found.group(2))
    if not old or not new:
        return None
    why = _SEPARATOR.sub("", found.group(3)).strip()
    return Correction(old=old[0], new=new[0], why=" ".join(why.split()), line=line)
