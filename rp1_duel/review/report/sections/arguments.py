"""What the turns brought: their novel arguments (folded in a comment) (docs/protocol.md section 11)."""

from __future__ import annotations

from ..blocks import (
    Emphasis,
    Entry,
    Fold,
    Inline,
    Items,
    Per,
    SeatName,
    Section,
    Span,
    Untrusted,
)
from ..data import NovelArgument, Report
from .common import turn

__all__ = ["novel_arguments"]


def novel_arguments(report: Report) -> Section | None:
    """Each novel argument: its turn, who, its claim; its support (on the page, listed under it)."""
    if not report.novel_arguments:
        return None
    title = f"Novel arguments ({len(report.novel_arguments)})"
    entries = tuple(_argument(report, argument) for argument in report.novel_arguments)
    return Section((Per((), (title,)),), (Fold((title,), (Items(entries),)),))


def _argument(report: Report, argument: NovelArgument) -> Entry:
    support = tuple((Untrusted(item, links=True),) for item in argument.support)
    joined: list[Span] = []
    for item in support:
        joined += ["; ", *item] if joined else list(item)
    claim = Per(
        (Untrusted(argument.claim),) if argument.claim.split() else ("no claim",),
        (Untrusted(argument.claim, links=True),) if argument.claim else (Emphasis(("no claim",)),),
    )
    said: Inline = (
        Per(("turn ",), ("Turn ",)),
        turn(report, argument.turn),
        ", ",
        SeatName(argument.seat, report.name_of(argument.seat)),
        ": ",
        claim,
        Per((" (support: ", *(joined or ["no support"]), ")"), ()),
    )
    return Entry(said, sub=support, sub_css="muted")
