"""The decision's section: what each seat accepted (or its latest position), what ``duel validate`` said, the
citations not to rely on, and the agreed revision's diff (docs/protocol.md section 11)."""

from __future__ import annotations

from ... import report_text as words
from ...decision import FlaggedCitation, SeatPosition
from ..blocks import (
    Alert,
    Aside,
    Block,
    Cell,
    Code,
    Diff,
    Group,
    Inline,
    Items,
    Paragraph,
    Per,
    Position,
    SeatName,
    Section,
    Span,
    Strong,
    Untrusted,
)
from ..data import Report
from .common import turn

__all__ = ["decision", "document_change", "position"]


def decision(report: Report) -> Section:
    """The decision, or why there is none, with each seat's position in full; then the checks on it."""
    facts = report.decision
    if facts.agreed:
        lead: Inline = (
            Strong(("Agreed.",)),
            " Every seat's latest turn accepts the consensus. What each accepted, in full:",
        )
    else:
        why = Untrusted(words.no_decision(report))
        lead = (Strong(("No agreed decision:",)), " ", why, ". Each seat's latest position, in full:")
    blocks: list[Block] = [Paragraph(lead)]
    for seat_position in facts.positions:
        name = Per(
            (Strong((Untrusted(report.name_of(seat_position.seat)),)),),
            (SeatName(seat_position.seat, report.name_of(seat_position.seat)),),
        )
        blocks.append(position(report, seat_position, name))
    blocks.append(_validation(report))
    if facts.flagged:
        blocks.append(_flagged(report, facts.flagged))
    if (unchecked := words.unchecked(report)) is not None:
        blocks.append(Paragraph((Untrusted(unchecked), "."), style="note"))
    page_class = "decision agreed" if facts.agreed else "decision"
    return Section(title=("Decision",), blocks=tuple(blocks), page_class=page_class, page_lines=True)


def document_change(report: Report) -> Section | None:
    """What the duel comes to for its document, right after the outcome: the agreed revision's diff and the
    ``duel apply`` command that brings it to the document; else each seat's alternative, not agreed, credited to
    the seat that proposed it; None when there is neither."""
    facts = report.decision
    if facts.revision is not None:
        revision = facts.revision
        summary = (Untrusted(words.revision_summary(revision)), ".")
        blocks: list[Block] = [Diff(("Revision ", Code(revision.id)), summary, revision.diff)]
        if revision.apply is not None:
            blocks.append(
                Paragraph(
                    ("Apply it: ", Code(revision.apply), " (with ", Code("--check"), " first to see it applies).")
                )
            )
        return Section(title=("The change agreed",), blocks=tuple(blocks), page_class="change", page_lines=True)
    if not facts.alternatives:
        return None
    alternatives = tuple(
        Diff(
            (Untrusted(alternative.name), "'s alternative ", Code(alternative.id)),
            (
                Untrusted(f"{', '.join(alternative.files)}: +{alternative.added} −{alternative.removed}"),
                "; not agreed.",
            ),
            alternative.diff,
        )
        for alternative in facts.alternatives
    )
    return Section(
        title=("Alternatives on the table, not agreed",), blocks=alternatives, page_class="change", page_lines=True
    )


def position(report: Report, seat_position: SeatPosition, label: Span) -> Position:
    """A seat's Position in full, after ``label``, its turn and its stance."""
    stance = Untrusted(seat_position.stance or "no stance")
    lead = (label, ", turn ", turn(report, seat_position.turn), ", ", stance, ":")
    return Position(seat_position.text, empty="no Position", lead=lead)


def _validation(report: Report) -> Group:
    """What ``duel validate`` said: its problems listed under it, and its notes."""
    said = words.validation(report)
    valid = (Code("duel validate"), " ", said)
    markdown: Inline = (*valid, ".") if report.decision.valid is not False else (Strong((*valid, ":")),)
    listed: list[Inline | Cell] = [
        (Code(p.code), " ", Untrusted(p.message)) for p in report.decision.validation_problems
    ]
    listed += [
        Cell(("Note: ", Untrusted(note), "."), "muted", marked=True) for note in report.decision.validation_notes
    ]
    lead = Paragraph((Per(markdown, (Code("duel validate"), " ", Untrusted(said), ".")),))
    return Group((lead, Items(tuple(listed))) if listed else (lead,))


def _flagged(report: Report, flagged: tuple[FlaggedCitation, ...]) -> Alert:
    """The citations `duel verify` found not to rely on, and which deciding turns rest on each."""
    lead = (Strong(("⚠ Citations not to rely on",)), " (", Code("duel verify"), f": {words.flagged_counts(flagged)}):")
    items = tuple(
        (
            Per(("turn ",), ("Turn ",)),
            turn(report, c.turn),
            " (",
            SeatName(c.seat, report.name_of(c.seat)),
            "), ",
            Strong((Untrusted(c.verdict),)),
            ": ",
            Untrusted(c.url or c.item, links=True),
            *((" ", Aside(("(", Untrusted(c.reason), ")"))) if c.reason else ()),
            "; ",
            *_resting(report, c),
            ".",
        )
        for c in flagged
    )
    return Alert(lead, items)


def _resting(report: Report, citation: FlaggedCitation) -> Inline:
    """`deciding turns 4 and 5 rest on it`, each turn linked; `no deciding turn rests on it`."""
    numbers = citation.deciding_turns
    if not numbers:
        return ("no deciding turn rests on it",)
    several = len(numbers) > 1
    linked: list[Span] = []
    for index, number in enumerate(numbers):  # as and_list joins words: `4`, `4 and 5`, `4, 5 and 6`
        linked += [("" if not index else " and " if index == len(numbers) - 1 else ", "), turn(report, number)]
    return (f"deciding turn{'s' if several else ''} ", *linked, f" rest{'' if several else 's'} on it")
