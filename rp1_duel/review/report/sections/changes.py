"""What the debate changed (each seat's opening and final position, how it moved, what it took up and held open)
and how it ended (the blocking items left, the close's summary, the verification sidecar's standing)
(docs/protocol.md section 11)."""

from __future__ import annotations

from collections.abc import Sequence

from ... import report_text as words
from ...decision import SeatChange, SeatPosition
from ..blocks import (
    HTML,
    MARKDOWN,
    Aside,
    Block,
    Box,
    Card,
    Cards,
    Group,
    Inline,
    Items,
    Only,
    Paragraph,
    Per,
    Prose,
    SeatName,
    Section,
    Span,
    Strong,
    Subheading,
    Table,
    Untrusted,
)
from ..data import Report
from .common import turn
from .debate import items_table
from .decision import position

__all__ = ["changes", "how_it_ended"]

_EVERY_ITEM = "Every unresolved item, and what became of it"


def changes(report: Report) -> Section | None:
    """Each seat's opening and final position (a table and a line each in a comment, a box each on the page),
    then every unresolved item and what became of it; None when no seat wrote a turn."""
    if not report.changes:
        return None
    rows = tuple(
        (
            (SeatName(change.seat, report.name_of(change.seat)),),
            _position_cell(report, change.opening),
            _position_cell(report, change.final),
        )
        for change in report.changes
    )
    blocks: list[Block] = [
        Only(MARKDOWN, Table(head=("Participant", "Opening", "Final"), rows=rows, columns=("", "", ""))),
        Only(MARKDOWN, Items(tuple(_moved_line(report, change) for change in report.changes))),
        Cards(tuple(_seat_card(report, change) for change in report.changes)),
    ]
    if report.unresolved:  # the one table of them: its lead counts the open ones
        still = [item for item in report.unresolved if item.open]
        blocking = sum(1 for item in still if item.blocking)
        blocks += [
            Subheading((f"{_EVERY_ITEM} ({len(still)} open, {blocking} of them blocking)",)),
            items_table(report, report.unresolved),
        ]
    return Section(title=("What the debate changed",), blocks=tuple(blocks))


def _position_cell(report: Report, seat_position: SeatPosition) -> Inline:
    stance = Untrusted(seat_position.stance or "no stance")
    return ("turn ", turn(report, seat_position.turn), ", ", stance, ": ", Untrusted(seat_position.text))


def _moved_line(report: Report, change: SeatChange) -> Inline:
    """`**Alice** moved toward consensus: …. Took up from others: …. Held open: ….`"""
    moved = [
        (
            Untrusted(r.previous or "no stance"),
            " → ",
            Untrusted(r.stance or "no stance"),
            " in turn ",
            turn(report, r.turn),
        )
        for r in change.revisions
    ]
    adopted = [("“", Untrusted(q.text), "” (turn ", turn(report, q.turn), ")") for q in change.adopted]
    held = [("“", Untrusted(q.text), "” (raised in turn ", turn(report, q.turn), ")") for q in change.held]
    return (
        Strong((SeatName(change.seat, report.name_of(change.seat)),)),
        " moved toward consensus: ",
        *_joined(moved),
        ". Took up from others: ",
        *_joined(adopted),
        ". Held open: ",
        *_joined(held),
        ".",
    )


def _joined(parts: Sequence[Inline]) -> Inline:
    """Parts `; `-separated; `none` for none."""
    if not parts:
        return ("none",)
    out: list[Span] = []
    for part in parts:
        out += ["; ", *part] if out else list(part)
    return tuple(out)


def _seat_card(report: Report, change: SeatChange) -> Card:
    """A seat's opening and final positions side by side, then how it moved, what it took up and held open."""
    pair = Box(
        (
            Box((position(report, change.opening, "Opening"),)),
            Box((position(report, change.final, "Final"),)),
        ),
        "pair",
    )
    moved = tuple(
        (
            Untrusted(r.previous or "no stance"),
            " → ",
            Untrusted(r.stance or "no stance"),
            " in turn ",
            turn(report, r.turn),
            *((": ", Aside(_joined([(Untrusted(s, links=True),) for s in r.support]))) if r.support else ()),
        )
        for r in change.revisions
    )
    adopted = tuple((Untrusted(q.text, links=True), " (turn ", turn(report, q.turn), ")") for q in change.adopted)
    held = tuple((Untrusted(q.text, links=True), " (raised in turn ", turn(report, q.turn), ")") for q in change.held)
    listed = (
        _listed("Moved toward consensus:", moved),
        _listed("Took up from others:", adopted),
        _listed("Held open:", held),
    )
    return Card((SeatName(change.seat, report.name_of(change.seat)),), (pair, *listed))


def _listed(title: str, items: tuple[Inline, ...]) -> Block:
    if not items:
        return Paragraph((Strong((title,)), " ", Aside(("none",))))
    return Group((Paragraph((Strong((title,)),)), Items(items)))


def how_it_ended(report: Report) -> Section | None:
    """The blocking items left, the close's summary and the verification sidecar's standing, under no heading in
    a comment; None when there is none of them."""
    facts = report.outcome
    blocks: list[Block] = []
    if facts.blocking:
        items = tuple(
            (
                "turn ",
                turn(report, quote.turn),
                " (",
                SeatName(report.schedule.speaker(quote.turn), report.name_of(report.schedule.speaker(quote.turn))),
                "): ",
                Untrusted(quote.text, links=True),
            )
            for quote in facts.blocking
        )
        blocks.append(Group((Paragraph(("Blocking items left:",)), Items(items))))
    if facts.summary:
        lead = "Close summary:"
        said = (Only(MARKDOWN, Paragraph((lead,))), Only(HTML, Paragraph((lead,), style="note")), Prose(facts.summary))
        blocks.append(Box(said, "summary"))
    if report.verification is not None:
        blocks.append(Paragraph((Untrusted(words.verification(report.verification)), ".")))
    return Section(title=(Per((), ("How it ended",)),), blocks=tuple(blocks)) if blocks else None
