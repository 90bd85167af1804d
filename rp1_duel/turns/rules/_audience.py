"""The audience family: a turn answers the audience's questions due at it (docs/protocol.md section 4,
"The audience"). What a question is, when it is due and what makes an answer are
:mod:`rp1_duel.audience`'s; this family holds the turn to them.

Where the protocol is silent, this family decides:
- An Audience Answers item begins with the label of the question it answers (`Q3: …`); an item without one
  is a violation. When two items answer one question, the first counts.
- An item answering a question not due at this turn is a violation, with or without questions due.
- An answer missing is reported at the Audience Answers label, or without a line when there is none.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ...audience import Question, answer_problem, labelled_answer
from ...vocabulary import AUDIENCE_ANSWERS, RuleCode
from ._checked import Checked, Rule, TurnViolation, panel_turn

__all__ = ["RULES", "AudienceContext", "questions_note"]


@dataclass(frozen=True)
class AudienceContext:
    """The audience's questions due at this turn."""

    questions: tuple[Question, ...] = ()


def questions_note(audience: AudienceContext | None) -> str:
    """The audience's questions this turn must answer, each under **Audience Answers** as ``Q<id>: …``."""
    if audience is None or not audience.questions:
        return ""
    asked = "".join(f"- Q{q.id} (from {q.by}): {q.text}\n" for q in audience.questions)
    return (
        "The audience asked you these questions; this turn must answer each, in a section **Audience Answers** "
        "after Stance Revision Support, one item each beginning with its label (`- Q1: …`), in at least a "
        f"sentence of your own:\n{asked}"
    )


def _questions_unanswered(checked: Checked) -> Iterator[TurnViolation]:
    code, due = RuleCode.QUESTION_UNANSWERED, checked.ctx.audience.questions if checked.ctx.audience else ()
    section = checked.turn.sections.get(AUDIENCE_ANSWERS)
    answers: dict[int, tuple[str, int | None]] = {}
    for item in checked.turn.answers:
        labelled = labelled_answer(item.text)
        if labelled is None:
            message = "an Audience Answers item begins with the question it answers: `Q3: …`"
            yield checked.violation(code, message, item.line, AUDIENCE_ANSWERS)
            continue
        number, answer = labelled
        answers.setdefault(number, (answer, item.line))
    for number, (_, line) in answers.items():
        if number not in {question.id for question in due}:
            message = f"answers Q{number}, which is no audience question due at this turn"
            yield checked.violation(code, message, line, AUDIENCE_ANSWERS)
    for question in due:
        text, line = answers.get(question.id, (None, section.line if section else None))
        problem = answer_problem(question, text)
        if problem:
            yield checked.violation(code, problem, line, AUDIENCE_ANSWERS)


RULES = (
    Rule(
        code=RuleCode.QUESTION_UNANSWERED,
        text="every audience question due at this turn has an item `Q<id>: …` under"
        " **Audience Answers** that says something in at least 8 words and does not merely restate the question;"
        " no item answers a question not due at this turn",
        applies=panel_turn,
        check=_questions_unanswered,
    ),
)
