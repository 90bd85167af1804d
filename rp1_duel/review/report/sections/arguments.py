"""What the turns brought: their novel arguments, and everything they cite with its verdict (both folded in a
comment) (docs/protocol.md section 11)."""

from __future__ import annotations

import re

from ... import report_text as words
from ..blocks import (
    HTML,
    MARKDOWN,
    Aside,
    Block,
    Code,
    Emphasis,
    Entry,
    Fold,
    Inline,
    Items,
    Only,
    Paragraph,
    PathLink,
    Per,
    SeatName,
    Section,
    Span,
    Table,
    Untrusted,
)
from ..data import CitationRow, NovelArgument, Report
from .common import turn

__all__ = ["citations", "novel_arguments"]


def novel_arguments(report: Report) -> Section | None:
    """Each novel argument: its turn, who, its claim; its support (on the page, listed under it)."""
    if not report.novel_arguments:
        return None
    title = f"Novel arguments ({len(report.novel_arguments)})"
    entries = tuple(_argument(report, argument) for argument in report.novel_arguments)
    return Section(
        title=(Per((), (title,)),),
        blocks=(
            Fold(
                summary=(title,), blocks=(Items(entries),), left_out=(f"{len(entries)} novel arguments",), gives_way=2
            ),
        ),
    )


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
    return Entry(text=said, sub=support, sub_css="muted")


def citations(report: Report) -> Section | None:
    """What the turns cite, how many of each kind, each with the verdict of a verification sidecar that shows
    them; whether URLs were checked at all."""
    if not report.citations:
        return None
    facts = report.verification
    verified = facts is not None and facts.shown
    kinds = words.citation_kinds(report)
    unchecked: Inline = (
        ("No verification sidecar: URLs were not checked (", Code("duel verify"), " checks them).")
        if facts is None
        else ()
    )
    rows = tuple(_citation_row(report, c, verified=verified) for c in report.citations)
    head = ("Turn", "Section", "Kind", "Item", *(("Verdict",) if verified else ()))
    table = Table(head=head, rows=rows, columns=("n", "", "", "text", ""))
    folded: list[Block] = [Only(MARKDOWN, Paragraph(unchecked))] if unchecked else []
    blocks = (
        Only(HTML, Paragraph((kinds, ". ", *unchecked), style="note")),
        Fold(summary=(kinds,), blocks=(*folded, table), left_out=(kinds,), gives_way=1),
    )
    return Section(title=(Per((), ("Citations",)),), blocks=blocks)


def _citation_row(report: Report, c: CitationRow, *, verified: bool) -> tuple[Inline, ...]:
    href = words.citation_href(report, c)
    item = Untrusted(c.item, links=True) if href is None else PathLink(c.item, href)
    row: tuple[Inline, ...] = ((turn(report, c.turn),), (Untrusted(c.section or "—"),), (c.kind,), (item,))
    return (*row, (_verdict(c),)) if verified else row


def _verdict(c: CitationRow) -> Span:
    """The sidecar's verdict and confidence, its reason shown on hover on the page; `—` for none."""
    if c.verdict is None:
        return Per((Untrusted("—"),), (Aside(("—",)),))
    label = f"{c.verdict} ({c.confidence})" if c.confidence else c.verdict
    css = "verdict verdict-" + re.sub(r"[^a-z_]", "", c.verdict.casefold())  # a class name: letters only
    return Per((Untrusted(label),), (Aside((Untrusted(label),), css=css, title=c.reason or ""),))
