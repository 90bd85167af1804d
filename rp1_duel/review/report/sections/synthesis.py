"""The chair's synthesis: its text whole, each seat's final stance beside it, and where the chair departs from
one (docs/protocol.md section 11)."""

from __future__ import annotations

from ... import report_text as words
from ..blocks import (
    HTML,
    MARKDOWN,
    Block,
    Box,
    Group,
    Inline,
    Items,
    Only,
    Paragraph,
    Per,
    Prose,
    SeatName,
    Section,
    Strong,
    Subheading,
    Table,
    Untrusted,
)
from ..data import Report
from .common import turn

__all__ = ["synthesis"]

_STANCES = "Each seat's final stance:"


def synthesis(report: Report) -> Section | None:
    """The synthesis beside the final stances (side by side on the page), then what it lists as agreed and
    still open, and its departures; None without a chair's synthesis."""
    view = report.synthesis
    if view is None:
        return None
    rows = tuple(
        (
            (str(s.seat),),
            (SeatName(s.seat, s.name),),
            words.final_stance(s.stance, _strong, _plain),
            (turn(report, s.turn),),
        )
        for s in view.final_stances
    )
    table = Table(
        head=("Seat", "Participant", "Final stance", "Turn"), rows=rows, columns=("n", "", "", "n"), box="fit"
    )
    said = Box(
        (
            Only(HTML, Paragraph(("Turn ", turn(report, view.turn), ":"), style="note")),
            Box((Prose(view.text, empty="no Synthesis"),), "summary"),
        )
    )
    beside = Box((Only(MARKDOWN, Paragraph((_STANCES,))), Only(HTML, Paragraph((_STANCES,), style="note")), table))
    blocks: list[Block] = [Box((said, beside), "pair")]
    blocks += [
        _listed(title, items) for title, items in (("Agreed", view.agreed), ("Still open", view.still_open)) if items
    ]
    blocks.append(_departures(view.departures))
    title = Per(("The chair's synthesis (turn ", turn(report, view.turn), ")"), ("The chair's synthesis",))
    return Section(title=(title,), blocks=tuple(blocks))


def _strong(text: str) -> Inline:
    return (Strong((Untrusted(text),)),)


def _plain(text: str) -> Inline:
    return (Untrusted(text),)


def _listed(title: str, items: tuple[str, ...]) -> Group:
    return Group((Subheading((title,)), _items(items)))


def _items(items: tuple[str, ...]) -> Items:
    return Items(tuple((Untrusted(item, links=True),) for item in items))


def _departures(departures: tuple[str, ...]) -> Group:
    """Where the synthesis overrules a seat's final stance; `none` when nowhere."""
    note = Untrusted(words.DEPARTURES_NOTE)  # escaped as recorded text is, as the page always has
    lead: Inline = (Strong(("Departures",)), " (", note, "):" if departures else "): none.")
    listed: Block = _items(departures) if departures else Only(HTML, Paragraph(("none (", note, ")"), style="note"))
    return Group((Only(MARKDOWN, Paragraph(lead)), Only(HTML, Subheading(("Departures",))), listed))
