"""The stances: a chart of each turn's stance by seat, each change of stance and why; and every turn in a table
(folded in a comment) (docs/protocol.md section 11)."""

from __future__ import annotations

from ....schedule import CHAIR_SEAT
from ..blocks import (
    HTML,
    MARKDOWN,
    Aside,
    Block,
    Chart,
    Emphasis,
    Entry,
    Fold,
    Group,
    Inline,
    Items,
    Only,
    Paragraph,
    PathLink,
    Per,
    SeatName,
    Section,
    Span,
    Strong,
    Subheading,
    Table,
    Untrusted,
)
from ..data import Report, TimelineEntry
from .common import turn

__all__ = ["stances", "turns_table"]


def stances(report: Report) -> Section:
    """The chart, then each change of stance with the support the turn gives for it."""
    if not report.timeline:
        return Section(title=("Stances",), blocks=(Paragraph(("No turns yet.",)),))
    blocks: list[Block] = [_chart(report)]
    changes = tuple(_change(report, entry) for entry in report.timeline if entry.changed)
    if changes:
        lead = "Stance changes"
        blocks.append(
            Group((Only(MARKDOWN, Paragraph((f"{lead}:",))), Only(HTML, Subheading((lead,))), Items(changes)))
        )
    return Section(title=("Stances",), blocks=tuple(blocks))


def _chart(report: Report) -> Chart:
    """The chart's data; its rounds are the panel's (turns 1–2, 3–4, … for two seats; a chair's turns left out,
    so its closing round comes one later)."""
    seats = report.schedule.seats
    panel_turns = sum(1 for entry in report.timeline if entry.seat != CHAIR_SEAT)
    turn_of = report.schedule.turn_of
    rounds = tuple(f"{turn_of(seats * r + 1)}-{turn_of(seats * (r + 1))}" for r in range(-(-panel_turns // seats)))
    names = tuple(report.name_of(seat) for seat in range(1, seats + 1))
    return Chart(names=names, timeline=report.timeline, turn_count=report.turn_count, rounds=rounds)


def _change(report: Report, entry: TimelineEntry) -> Entry:
    """`turn 4, Alice: CONVERGING → ACCEPTING_CONSENSUS, because: …`; on the page, its support listed."""
    support = tuple((Untrusted(item, links=True),) for item in entry.revision_support)
    joined: list[Span] = []
    for item in support:
        joined += ["; ", *item] if joined else list(item)
    none = "no revision support given"
    said: Inline = (
        Per(("turn ", str(entry.turn)), (Aside(("Turn ", turn(report, entry.turn)), css="changed"),)),
        ", ",
        SeatName(entry.seat, report.name_of(entry.seat)),
        ": ",
        Untrusted(entry.previous_stance or "no stance"),
        " → ",
        Untrusted(entry.stance or "no stance"),
        ", because:",
        Per((" ", *(joined or [none])), () if support else (" ", Emphasis((none,)))),
    )
    return Entry(text=said, sub=support, anchor=f"revision-{entry.turn}")


def turns_table(report: Report) -> Section | None:
    """Every turn: who wrote it, its stance (a changed one marked, linked to why on the page), its blocking
    items and its Position's first sentence; folded under the stances in a comment."""
    if not report.timeline:
        return None
    rows = tuple(
        (
            (turn(report, e.turn),),
            (SeatName(e.seat, report.name_of(e.seat)),),
            (_stance(e),),
            (str(e.blocking),),
            (Untrusted(e.headline, links=True),),
        )
        for e in report.timeline
    )
    head = ("Turn", "Participant", "Stance", "Blocking", "Position")
    table = Table(head=head, rows=rows, columns=("n", "", "", "n", "text"))
    return Section(
        title=(Per((), ("Turns",)),),
        blocks=(
            Fold(summary=("Stances as a table",), blocks=(table,), left_out=("The stances as a table",), gives_way=3),
        ),
    )


def _stance(entry: TimelineEntry) -> Span:
    stance = entry.stance or "no stance"
    if not entry.changed:
        return Untrusted(stance)
    return Per(
        (Strong((Untrusted(stance),)), " (changed)"), (PathLink(stance, f"#revision-{entry.turn}", css="changed"),)
    )
