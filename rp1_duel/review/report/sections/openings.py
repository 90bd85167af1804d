"""The openings' vote: what a vote of the openings alone would have decided, and whether the debate changed it
(docs/protocol.md section 11)."""

from __future__ import annotations

from ...flips import Flip
from ..blocks import (
    Aside,
    Block,
    Cell,
    Code,
    Inline,
    Paragraph,
    Per,
    SeatName,
    Section,
    Strong,
    Subheading,
    Table,
    Untrusted,
)
from ..data import Report
from .common import turn

__all__ = ["openings"]


def openings(report: Report) -> Section | None:
    """The vote's explanation (in bold when the debate changed it), then each seat's opening: its turn, stance,
    vote and first line; then the flip ledger. None when no seat opened."""
    facts = report.openings
    if not any(vote.turn is not None for vote in facts.votes):
        return None
    said = Untrusted(facts.explanation)
    rows: list[tuple[Inline | Cell, ...]] = []
    for vote in facts.votes:
        name = (SeatName(vote.seat, report.name_of(vote.seat)),)
        if vote.turn is None:
            rows.append((name, ("—",), ("—",), ("no turn",), Cell(("—",), "", marked=False)))
            continue
        stance = vote.stance or "no stance"
        shown = (Per((Untrusted(stance),), (Code(stance),)),)
        rows.append(
            (name, (turn(report, vote.turn),), shown, (vote.vote or "",), (Untrusted(vote.first_line, links=True),))
        )
    head = ("Participant", "Opening turn", "Stance", "Vote", "Position, first line")
    table = Table(head=head, rows=tuple(rows), columns=("", "n", "", "", "text"), grouped=False)
    lead = Paragraph((Strong((said,)),) if facts.changed else (said,))
    return Section(
        title=("Against the openings' vote",),
        blocks=(lead, table, *_ledger(report, facts.flips)),
        page_class="openings",
    )


def _ledger(report: Report, flips: tuple[Flip, ...]) -> tuple[Block, ...]:
    """The flip ledger: each stance a seat moved from its opening on, and the reason its turn cites for it."""
    title = Subheading(("Flip ledger: every stance change and the reason its turn cites",))
    if not flips:
        return (title, Paragraph(("No seat changed its stance.",), style="note"))
    rows = tuple(
        (
            (SeatName(flip.seat, report.name_of(flip.seat)),),
            (turn(report, flip.turn),),
            (Per((Untrusted(flip.from_stance),), (Code(flip.from_stance),)),),
            (Per((Untrusted(flip.to_stance),), (Code(flip.to_stance),)),),
            (Untrusted(flip.reason, links=True),) if flip.reason else (Aside(("none cited",)),),
        )
        for flip in flips
    )
    head = ("Participant", "Turn", "From", "To", "Reason cited")
    return (title, Table(head=head, rows=rows, columns=("", "n", "", "", "text"), grouped=False))
