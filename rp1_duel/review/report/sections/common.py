"""What many sections write alike: a turn number linked to its heading in the artifact (plain in a report that
links nothing)."""

from __future__ import annotations

from ... import report_text as words
from ..blocks import Inline, TurnLink
from ..data import Report

__all__ = ["turn", "turns"]


def turn(report: Report, number: int) -> TurnLink | str:
    """Turn ``number``, linked to its heading in the artifact when the report links."""
    href = words.turn_href(report, number)
    return str(number) if href is None else TurnLink(number, href)


def turns(report: Report, numbers: tuple[int, ...]) -> Inline:
    """Turns, linked and comma-separated; `—` for none."""
    if not numbers:
        return ("—",)
    linked: list[str | TurnLink] = []
    for number in numbers:
        linked += [", ", turn(report, number)] if linked else [turn(report, number)]
    return tuple(linked)
