"""The audience's section: each question, who asked it and when, with the addressed seat's answer or why
there is none; then the final thoughts, labelled as the audience's (docs/protocol.md section 11)."""

from __future__ import annotations

from ...audience_view import DUE, ENDED_FIRST, NOT_IN_TURN, QuestionView
from ..blocks import (
    MARKDOWN,
    Block,
    Card,
    Cards,
    Emphasis,
    Inline,
    Items,
    Only,
    Paragraph,
    Per,
    Position,
    SeatName,
    Section,
    Strong,
    Subheading,
    Untrusted,
)
from ..data import Report
from .common import turn

__all__ = ["FINAL_THOUGHTS_LABEL", "audience", "unanswered"]

FINAL_THOUGHTS_LABEL = "Final thoughts (the audience's; they change no outcome)"


def audience(report: Report) -> Section | None:
    """The questions (a list in a comment, a box each on the page), then the audience's final thoughts."""
    view = report.audience
    if view is None:
        return None
    blocks: list[Block] = [
        Only(MARKDOWN, Items(tuple(_question_item(report, q) for q in view.questions))),
        Cards(tuple(_question_card(report, q) for q in view.questions)),
    ]
    if view.final_thoughts:
        thoughts = tuple(
            (Per((Untrusted(t.by),), (Strong((Untrusted(t.by),)),)), ": ", Untrusted(t.text, links=True))
            for t in view.final_thoughts
        )
        blocks += [Subheading((FINAL_THOUGHTS_LABEL,)), Items(thoughts)]
    return Section(title=("The audience",), blocks=tuple(blocks))


def _question_item(report: Report, question: QuestionView) -> Inline:
    said: Inline = (
        (SeatName(question.to_seat, report.name_of(question.to_seat)), " answered: ", Untrusted(question.answer))
        if question.answer
        else (Emphasis((Untrusted(unanswered(question) or ""),)),)
    )
    lead = (Strong((f"Q{question.id}",)), ", ", *asked(report, question), ": ", Untrusted(question.text))
    return (*lead, "  \n  ", *said)  # a hard line break, the answer indented under its question


def _question_card(report: Report, question: QuestionView) -> Card:
    heading = (f"Q{question.id}. ", Untrusted(question.text, links=True))
    if question.answer:
        name = SeatName(question.to_seat, report.name_of(question.to_seat))
        lead = Paragraph((*asked(report, question), "; ", name, " answered:"), style="note")
        return Card(heading, (lead, Position(question.answer, empty="")), heading_class="question")
    why = Paragraph((Untrusted(unanswered(question) or ""),), style="pending")
    return Card(heading, (Paragraph((*asked(report, question), "."), style="note"), why), heading_class="question")


def asked(report: Report, question: QuestionView) -> Inline:
    """`asked by Dana after round 1, to Alice (seat 1), due at turn 3`: the due turn linked when the record
    has it."""
    due = str(question.due_turn) if question.status in (DUE, ENDED_FIRST) else turn(report, question.due_turn)
    return (
        "asked by ",
        Untrusted(question.by),
        f" after round {question.round}, to ",
        Untrusted(report.name_of(question.to_seat)),
        f" (seat {question.to_seat}), due at turn ",
        due,
    )


def unanswered(question: QuestionView) -> str | None:
    """Why a question has no answer in the record, or None when it has one."""
    return {
        ENDED_FIRST: "not answered: the duel ended first",
        NOT_IN_TURN: f"not answered: turn {question.due_turn} does not answer it",
        DUE: f"not answered yet: turn {question.due_turn} is still to be written",
    }.get(question.status)
