"""The audience: questions to named seats and final thoughts (docs/protocol.md section 4, "The audience").

Plain records and pure rules, free of the Markdown parser and of I/O, so every layer may use
them: the lock service admits a question (:func:`admission`), the state and the artifact's front
matter keep what was admitted, and the turn rules check that the addressed seat's due turn answers
it (:func:`answer_problem`).

A question is asked between rounds: its round is the number of whole panel rounds written when it
was asked, at most :data:`QUESTIONS_PER_ROUND` are admitted a round, and it is due at the addressed
seat's next turn, the one after that when the seat holds the floor already (it may be writing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .schedule import Schedule
from .vocabulary import ErrorCode

__all__ = [
    "FINAL_THOUGHTS_PER_DUEL",
    "FINAL_THOUGHT_CHARS",
    "MIN_ANSWER_WORDS",
    "QUESTIONS_PER_ROUND",
    "QUESTION_CHARS",
    "Admission",
    "FinalThought",
    "Question",
    "admission",
    "answer_problem",
    "completed_rounds",
    "final_thought_refusal",
    "labelled_answer",
]

QUESTIONS_PER_ROUND = 2
QUESTION_CHARS = 300  # a question is one line, short enough to answer in a turn
FINAL_THOUGHT_CHARS = 1000
# Final thoughts are anyone's (no token): ten a duel, one an author, keep the header well inside its limit.
FINAL_THOUGHTS_PER_DUEL = 10
MIN_ANSWER_WORDS = 8  # fewer words do not answer anything: "Yes." or "We disagree." is a dodge
_SAME_WORDS = 0.8  # an answer whose words are the question's (token-set Jaccard) restates it, as NOVELTY measures
# Patterns as text, compiled at first use (re caches them): `duel tools status` loads this module with every state.
_WORD = r"[\w'’-]+"
_ANSWER_LABEL = r"(?s)\s*Q(\d{1,4})\s*[:.)]\s*(.*)"


@dataclass(kw_only=True, frozen=True)
class Question:
    """An admitted question: ``id`` counts from 1 in the duel; ``due_turn`` is the turn that must answer it."""

    id: int
    round: int
    to_seat: int
    by: str
    text: str
    due_turn: int
    asked_at: str  # ISO 8601 UTC

    def to_json(self) -> dict[str, Any]:
        """As the state and the front matter keep it."""
        return {
            "id": self.id,
            "round": self.round,
            "to": self.to_seat,
            "by": self.by,
            "text": self.text,
            "due_turn": self.due_turn,
            "asked_at": self.asked_at,
        }

    @classmethod
    def from_json(cls, data: Any) -> Question:
        """Read back; ValueError for anything the service never writes."""
        fields = data if isinstance(data, dict) else {}
        numbers = [fields.get(name) for name in ("id", "round", "to", "due_turn")]
        texts = [fields.get(name) for name in ("by", "text", "asked_at")]
        if not all(type(n) is int and n >= 0 for n in numbers) or not all(isinstance(t, str) for t in texts):
            raise ValueError("a question's fields are not what the service writes")
        return cls(
            id=fields["id"],
            round=fields["round"],
            to_seat=fields["to"],
            by=fields["by"],
            text=fields["text"],
            due_turn=fields["due_turn"],
            asked_at=fields["asked_at"],
        )


@dataclass(frozen=True)
class FinalThought:
    """What an audience member said at the close: shown in the report, never changing the outcome."""

    by: str
    text: str
    at: str  # ISO 8601 UTC

    def to_json(self) -> dict[str, Any]:
        """As the state and the front matter keep it."""
        return {"by": self.by, "text": self.text, "at": self.at}

    @classmethod
    def from_json(cls, data: Any) -> FinalThought:
        """Read back; ValueError for anything the service never writes."""
        if not isinstance(data, dict) or not all(isinstance(data.get(name), str) for name in ("by", "text", "at")):
            raise ValueError("a final thought's fields are not what the service writes")
        return cls(data["by"], data["text"], data["at"])


def final_thought_refusal(given: Sequence[FinalThought], by: str) -> tuple[str, str] | None:
    """Why ``by`` may add no final thoughts to a duel that has ``given`` (code, message), or None: one an author
    (names compared case-folded), :data:`FINAL_THOUGHTS_PER_DUEL` a duel."""
    if any(thought.by.casefold() == by.casefold() for thought in given):
        return ErrorCode.QUESTION_REFUSED, f"{by} has added final thoughts to this duel already: one each"
    if len(given) >= FINAL_THOUGHTS_PER_DUEL:
        return ErrorCode.QUESTIONS_FULL, f"the duel has its {FINAL_THOUGHTS_PER_DUEL} final thoughts already"
    return None


def completed_rounds(schedule: Schedule, turns_written: int) -> int:
    """How many whole panel rounds the first ``turns_written`` turns hold (a chair's turns count for none)."""
    numbers = range(schedule.first, schedule.first + turns_written)
    panel_turns = sum(1 for n in numbers if schedule.panel_index(n) is not None)
    return panel_turns // schedule.seats


@dataclass(frozen=True)
class Admission:
    """Whether a question is admitted: its round and due turn, or the refusal's code and message."""

    round: int
    due_turn: int | None = None
    refusal: tuple[str, str] | None = None  # (code, message)


def admission(
    schedule: Schedule,
    *,
    turns_written: int,
    asked: list[Question],
    to_seat: int,
    floor_held_by: int | None,
) -> Admission:
    """Admit a question to ``to_seat`` now, or refuse it (pure: the service supplies the duel's state).

    ``floor_held_by`` is the seat holding a live lease to write, if any: a question to it is due at its
    following turn, since the one it writes may be finished already."""
    done = completed_rounds(schedule, turns_written)
    if not 1 <= to_seat <= schedule.seats:
        refusal = (ErrorCode.INVALID_ARGUMENT, f"questions go to a panel seat, 1 to {schedule.seats}")
        return Admission(done, refusal=refusal)
    if done < 1:
        return Admission(done, refusal=(ErrorCode.QUESTION_REFUSED, "questions come after the opening round"))
    if sum(1 for q in asked if q.round == done) >= QUESTIONS_PER_ROUND:
        message = f"round {done} has its {QUESTIONS_PER_ROUND} questions already; ask after the next round"
        return Admission(done, refusal=(ErrorCode.QUESTIONS_FULL, message))
    start = schedule.number_after(turns_written) + (floor_held_by == to_seat)
    due = next((n for n in range(start, schedule.last + 1) if schedule.speaker(n) == to_seat), None)
    if due is None:
        return Admission(done, refusal=(ErrorCode.QUESTION_REFUSED, f"seat {to_seat} has no turn left to answer in"))
    return Admission(done, due_turn=due)


def _words(text: str) -> set[str]:
    return {word.casefold() for word in re.findall(_WORD, text)}


def labelled_answer(item: str) -> tuple[int, str] | None:
    """An **Audience Answers** item as the question's id and the answer (``- Q3: …``), or None without a label."""
    labelled = re.match(_ANSWER_LABEL, item)
    return None if labelled is None else (int(labelled.group(1)), labelled.group(2))


def answer_problem(question: Question, answer: str | None) -> str | None:
    """Why ``answer`` does not answer ``question`` (None when it does): it must be there, say something
    in at least :data:`MIN_ANSWER_WORDS` words, and not merely restate the question. Whether it is a
    good answer is the reader's call, as it is for any claim."""
    label = f"Q{question.id}"
    if answer is None:
        return f"audience question {label} to this seat is not answered: add `- {label}: …` under **Audience Answers**"
    words = re.findall(_WORD, answer)
    if len(words) < MIN_ANSWER_WORDS:
        return f"the answer to {label} says too little ({len(words)} words; at least {MIN_ANSWER_WORDS})"
    asked, said = _words(question.text), _words(answer)
    if asked and len(asked & said) / len(asked | said) >= _SAME_WORDS:
        return f"the answer to {label} restates the question instead of answering it"
    return None
