"""The report's header (its title, outcome, alerts, and a warning when the record does not verify) and its footer
(the record's hashes, and how the report was computed) (docs/protocol.md section 11)."""

from __future__ import annotations

from ....record import Provisional
from ....vocabulary import ACCEPTED_CONSENSUS
from ... import report_text as words
from ..blocks import (
    HTML,
    MARKDOWN,
    Alert,
    Badge,
    Block,
    Code,
    Inline,
    Items,
    Only,
    Paragraph,
    Section,
    Span,
    Strong,
    Untrusted,
)
from ..data import Report

__all__ = ["footer", "header"]

COMPUTED = (
    " · computed by `duel report` from the record: structure and hash chain checked, turn rules not"
    " (`duel validate` checks them)."
)


def header(report: Report) -> Section:
    """The title; the outcome (a badge on the page, its cautions beside it) and why; alerts; a warning when the
    record does not verify; on the page, the duel's id, its times and its source."""
    facts = report.outcome
    outcome = facts.outcome or "OPEN"
    cautions = words.cautions(report)
    # Never green over a fabricated citation or a record that does not validate.
    tone = "caution" if cautions and outcome == ACCEPTED_CONSENSUS else outcome
    badges: list[Span] = [Badge((outcome,), tone)]
    for caution in cautions:
        badges += [" ", Badge(("⚠ ", Untrusted(caution)), "warning")]
    explanation = Untrusted(facts.explanation)
    blocks: list[Block] = [
        Only(MARKDOWN, Paragraph((Strong((Untrusted(words.headline(report)),)), "  \n", explanation))),
        Only(HTML, Paragraph((*badges, " ", Untrusted(" · ".join(words.facts(report)))))),
        Only(HTML, Paragraph((explanation,))),
    ]
    if report.provisional is not None:
        blocks.append(Paragraph(_provisional(report.provisional)))
    if report.alerts:
        blocks.append(Items(tuple(("⚠ ", Untrusted(alert.text), ".") for alert in report.alerts), css="alerts"))
    if not report.intact:
        said = Untrusted("; ".join(report.problems))
        lead = (Strong(("This record does not verify:",)), " ", said, ". Run `duel validate` before trusting it.")
        blocks.append(Only(MARKDOWN, Alert(lead, ())))
        page: Inline = (
            Strong(("This record does not verify.",)),
            " Run ",
            Code("duel validate"),
            " before trusting it.",
        )
        blocks.append(Only(HTML, Alert(page, tuple((Untrusted(problem),) for problem in report.problems))))
    closed = (", closed ", Untrusted(words.moment(report.closed_at))) if report.closed_at else ()
    made = ("Duel ", Code(report.duel_id), " · created ", Untrusted(words.moment(report.created_at)), *closed)
    blocks.append(Only(HTML, Paragraph((*made, " · source ", Code(words.source_named(report))), style="facts")))
    return Section(title=(Untrusted(words.title(report)),), blocks=tuple(blocks), kind="header")


def _provisional(found: Provisional) -> Inline:
    """`Provisional: every seat is a claude model (…): …`."""
    models = Untrusted(", ".join(found.models))
    return (
        Strong(("Provisional:",)),
        " every seat is a ",
        Untrusted(found.family),
        " model (",
        models,
        "), and debaters of one model family tend to agree with each other: read the outcome as one model's view.",
    )


def footer(report: Report) -> Section:
    """The record's identity and hashes, how the report was computed, and the report's notes."""
    notes = tuple(("Note: ", Untrusted(note), ".") for note in report.notes)
    said: list[Span] = [
        "Duel ",
        Code(report.duel_id),
        " · source ",
        Code(words.source_named(report)),
        " (sha256 ",
        Code(report.source_sha256[:12]),
        ") · chain head ",
        Code(report.head_sha256[:12]),
        COMPUTED,
    ]
    for note in notes:
        said += [" ", *note]
    page: list[Block] = [
        Paragraph(
            (
                "Source sha256 ",
                Code(report.source_sha256),
                " · chain head ",
                Code(report.head_sha256),
                ". Computed by ",
                Code("duel report"),
                " from the record: its structure and hash chain are checked here, the turn rules by ",
                Code("duel validate"),
                ".",
            )
        )
    ]
    if report.notes:
        page.append(Items(tuple((Untrusted(note),) for note in report.notes)))
    return Section(
        title=(),
        blocks=(Only(MARKDOWN, Paragraph(tuple(said), style="small")), *(Only(HTML, b) for b in page)),
        kind="footer",
    )
