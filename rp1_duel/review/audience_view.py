"""The audience as a report shows it: each question with the addressed seat's answer, and the final thoughts.

A question is due at one turn of the seat it asks (docs/protocol.md section 4, "The audience"): its
answer is that turn's ``- Q3: …`` item under **Audience Answers**. The service refuses a due turn
without one, so a written turn lacking it is a record edited by hand; a turn not written is one the duel
ended before, or, while it is open, one still to come. Final thoughts are shown as the audience's:
they change no outcome (section 11, "The audience").

Pure, as :mod:`rp1_duel.review.report` is: it reads the front matter and the replayed history.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..audience import FinalThought, Question, labelled_answer
from ..record import History
from ..vocabulary import ACTIVE

__all__ = [
    "ANSWERED",
    "ANSWER_STATUSES",
    "DUE",
    "ENDED_FIRST",
    "NOT_IN_TURN",
    "AudienceView",
    "QuestionView",
    "audience_view",
]

# What became of a question: answered in its due turn; due, that turn not yet written (the duel is open);
# the duel ended before that turn; or that turn written without its answer (a record edited by hand).
ANSWERED, DUE, ENDED_FIRST, NOT_IN_TURN = "answered", "due", "ended_first", "not_in_turn"
ANSWER_STATUSES = (ANSWERED, DUE, ENDED_FIRST, NOT_IN_TURN)


@dataclass(kw_only=True, frozen=True)
class QuestionView:
    """A question as asked, and the addressed seat's answer in its due turn (None without one)."""

    id: int
    round: int
    by: str
    to_seat: int
    due_turn: int
    text: str
    asked_at: str
    answer: str | None
    status: str  # ANSWER_STATUSES


@dataclass(frozen=True)
class AudienceView:
    """The audience's questions, in the order asked, and its final thoughts, in the order given."""

    questions: tuple[QuestionView, ...]
    final_thoughts: tuple[FinalThought, ...]


def audience_view(
    questions: tuple[Question, ...], final_thoughts: tuple[FinalThought, ...], history: History, status: str
) -> AudienceView | None:
    """The audience of a record whose duel has ``status``; None when it asked nothing and said nothing."""
    if not questions and not final_thoughts:
        return None
    return AudienceView(tuple(_answered(q, history, status) for q in questions), final_thoughts)


def _answered(question: Question, history: History, status: str) -> QuestionView:
    answer = None
    if question.due_turn in history.numbers:
        answer = _answer(question, history)
        state = ANSWERED if answer else NOT_IN_TURN
    else:
        state = DUE if status == ACTIVE else ENDED_FIRST
    return QuestionView(
        id=question.id,
        round=question.round,
        by=question.by,
        to_seat=question.to_seat,
        due_turn=question.due_turn,
        text=question.text,
        asked_at=question.asked_at,
        answer=answer,
        status=state,
    )


def _answer(question: Question, history: History) -> str | None:
    """The due turn's answer to ``question``, on one line: its first ``- Q<id>: …`` item, as the rules read it."""
    for item in history.turn(question.due_turn).answers:
        found = labelled_answer(item.text)
        if found is not None and found[0] == question.id:
            return " ".join(found[1].split()) or None
    return None
