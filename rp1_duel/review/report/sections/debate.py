"""What the debate left: the rulings on cited sources, the unresolved items' table, the agreements
(docs/protocol.md section 11)."""

from __future__ import annotations

from collections.abc import Sequence

from ... import report_text as words
from ..blocks import Aside, Cell, Code, Items, SeatName, Section, Span, Strong, Table, Untrusted
from ..data import Report, UnresolvedEntry
from .common import turn, turns

__all__ = ["agreements", "items_table", "rulings"]


def rulings(report: Report) -> Section | None:
    """The service's rulings on cited sources, at the top: what was found, and which claims no view shows."""
    if not report.rulings:
        return None
    items = tuple(
        (
            f"Ruling {ruling.r}: turn ",
            turn(report, ruling.turn),
            f", {ruling.where} (",
            SeatName(ruling.seat, report.name_of(ruling.seat)),
            "): ",
            Strong((ruling.verdict,)),
            " ",
            Code(ruling.url),
            ": ",
            Untrusted(ruling.shown_evidence),
            " (by ",
            Untrusted(ruling.by),
            ")",
            *(("; ", Strong(("its claim is redacted",))) if ruling.redacts else ()),
        )
        for ruling in report.rulings
    )
    return Section(title=("Rulings on cited sources",), blocks=(Items(items),))


def items_table(report: Report, items: Sequence[UnresolvedEntry]) -> Table:
    """Unresolved items: who raised each and when, its tag, the turns that answered it, and its status."""
    rows = tuple(
        (
            (Untrusted(item.text, links=True),),
            (SeatName(item.seat, report.name_of(item.seat)),),
            (turn(report, item.raised_in),),
            Cell((words.tag(item),), "tag-blocking", marked=item.blocking),
            turns(report, item.answered_in),
            Cell((words.unresolved_status(item),), "open", marked=item.open),
        )
        for item in items
    )
    head = ("Item", "By", "Raised in", "Tag", "Answered in", "Status")
    return Table(head=head, rows=rows, columns=("text", "", "n", "", "", ""))


def agreements(report: Report) -> Section | None:
    """What the seats agreed on, in which turns, and who."""
    if not report.agreements:
        return None
    items = []
    for agreement in report.agreements:
        everyone = words.everyone(report, agreement.seats)
        who: list[Span] = [everyone] if everyone else []
        for seat in () if everyone else agreement.seats:
            who += [", ", SeatName(seat, report.name_of(seat))] if who else [SeatName(seat, report.name_of(seat))]
        plural = "turn" if len(agreement.turns) == 1 else "turns"
        said = Aside((f"({plural} ", *turns(report, agreement.turns), "; ", *who, ")"))
        items.append((Untrusted(agreement.text, links=True), " ", said))
    return Section(title=(f"Agreements ({len(report.agreements)})",), blocks=(Items(tuple(items)),))
