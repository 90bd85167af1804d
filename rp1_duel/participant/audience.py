"""A model in the audience, ``duel join --role audience`` (docs/protocol.md section 4, "The audience").

It takes no seat: it watches the duel, and after each round it may ask one seat one question,
through the same :meth:`~rp1_duel.coordination.service.DuelService.ask` a person's ``duel ask``
uses (two a round are admitted, whoever asks first); at the close it adds its final thoughts. Its
answers are read as data: a question is only a seat number and one line of text, checked by the
service like any other.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..audience import FINAL_THOUGHT_CHARS, QUESTION_CHARS, completed_rounds
from ..coordination import DuelService, StatusResult
from ..errors import DuelError
from ..record import RecordFile
from ..vocabulary import ACTIVE, ErrorCode
from . import prompt
from .providers import Provider, TurnRequest

__all__ = ["AUDIENCE_SYSTEM", "AudienceMember", "AudienceRun", "read_question"]

WAIT_SLICE_SECONDS = 30.0  # a wait returns on any change anyway; this only bounds each call
DUEL_WAIT_SECONDS = 900.0  # how long to wait for the duel to be created, as a seat waits for its peers
AUDIENCE_SYSTEM = (
    "You are in the audience of a structured debate between AI participants about a Markdown document. "
    "You take no side and write no turn. Between rounds you may ask one participant one question that "
    "would make the debate better: a point they skipped, a claim they did not support, a consequence "
    "nobody weighed. At the end you give your final thoughts. Your words never change the outcome."
)
_TO = re.compile(r"^\s*to:\s*seat\s+(\d{1,2})\b", re.IGNORECASE | re.MULTILINE)
_QUESTION = re.compile(r"^\s*question:\s*(.+)$", re.IGNORECASE | re.MULTILINE)


def read_question(answer: str) -> tuple[int, str] | None:
    """The seat and question a model's answer names (``To: seat 2`` / ``Question: …``); None for no question."""
    to, asked = _TO.search(answer), _QUESTION.search(answer)
    if to is None or asked is None:
        return None
    text = " ".join(asked.group(1).split())[:QUESTION_CHARS]
    return int(to.group(1)), text


@dataclass(kw_only=True)
class AudienceRun:
    """What an audience member did: the questions admitted and refused, its final thoughts, the outcome."""

    duel_id: str
    asked: list[dict[str, Any]] = field(default_factory=list)
    refused: list[dict[str, str]] = field(default_factory=list)
    final_thoughts: str | None = None
    outcome: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """As ``duel join --role audience --json`` prints it."""
        return {
            "duel_id": self.duel_id,
            "role": "audience",
            "asked": self.asked,
            "refused": self.refused,
            "final_thoughts": self.final_thoughts,
            "outcome": self.outcome,
        }


class AudienceMember:
    """Asks after each round and gives final thoughts at the close, as ``name``, with ``provider``'s model."""

    def __init__(
        self,
        service: DuelService,
        provider: Provider,
        *,
        name: str,
        target: str,
        topic: str | None,
        say: Callable[[str], None],
    ):
        self.service = service
        self.provider = provider
        self.name = name
        self.target = target
        self.topic = topic
        self.say = say
        self.requests = 0  # a script plays its file of this index

    def run(self) -> AudienceRun:
        """Watch the duel to its close; raises a provider's failure or the store's."""
        self.say(self.provider.preflight())
        duel_id = self._find_duel()
        run = AudienceRun(duel_id=duel_id)
        asked_rounds = self._rounds_asked(duel_id)
        while True:
            stamp = self.service.state_stamp(duel_id)
            status = self.service.status(duel_id)
            if status.status != ACTIVE:
                self._final_thoughts(status, run)
                return run
            done = completed_rounds(status.duel.schedule, status.turn_count)
            if done >= 1 and done not in asked_rounds and status.duel.pending_outcome is None:
                asked_rounds.add(done)
                self._ask(status, done, run)
            self.service.next_stamp(duel_id, stamp, WAIT_SLICE_SECONDS)

    def _find_duel(self) -> str:
        """The duel about the target, waited for while nobody has created it yet."""
        waited = 0.0
        while True:
            try:
                return self.service.find_duel(self.target, topic=self.topic)
            except DuelError as exc:
                if exc.code != ErrorCode.DUEL_NOT_FOUND or waited >= DUEL_WAIT_SECONDS:
                    raise
            if waited == 0:
                self.say("waiting for the duel to begin")
            time.sleep(1.0)
            waited += 1.0

    def _rounds_asked(self, duel_id: str) -> set[int]:
        """The rounds this member asked in already (a resumed member asks no second question in them)."""
        record = self._record(duel_id)
        front = record.front if record else None
        return {q.round for q in front.questions if q.by == self.name} if front else set()

    def _record(self, duel_id: str) -> RecordFile | None:
        try:
            return RecordFile.read(self.service.status(duel_id).duel.debate_path, find_source=False)
        except (OSError, UnicodeDecodeError, ValueError):
            return None

    def _request(self, status: StatusResult, instruction: str, max_tokens: int) -> str:
        record = self._record(status.duel.id)
        blocks = record.history().shown_blocks() if record and record.front else []  # a redacted claim stays hidden
        request = TurnRequest(
            system=AUDIENCE_SYSTEM,
            history=prompt.history_text(blocks),
            instruction=instruction,
            cache_key=status.duel.id,
            max_tokens=max_tokens,
            own_turns_before=self.requests,
        )
        self.requests += 1
        return self.provider.compose(request, lambda _progress: None).text

    def _ask(self, status: StatusResult, done: int, run: AudienceRun) -> None:
        seats = "; ".join(f"seat {p.seat}: {p.display_name}" for p in status.participants if p.seat >= 1)
        instruction = (
            f"Round {done} of the debate on {status.duel.topic!r} is over. The participants: {seats}. Ask one of them "
            "one question (at most 300 characters) that its next turn must answer, as two lines:\n"
            "To: seat N\nQuestion: your question\n"
            "or answer `No question` if the debate needs none."
        )
        found = read_question(self._request(status, instruction, 2000))
        if found is None:
            self.say(f"round {done}: no question")
            return
        seat, text = found
        try:
            asked = self.service.ask(status.duel.id, to_seat=seat, question=text, by=self.name).to_dict()["question"]
        except DuelError as exc:
            if exc.code not in (
                ErrorCode.QUESTIONS_FULL,
                ErrorCode.QUESTION_REFUSED,
                ErrorCode.INVALID_ARGUMENT,
            ):
                raise
            run.refused.append({"code": exc.code, "message": exc.message})
            self.say(f"round {done}: question to seat {seat} refused ({exc.code}): {exc.message}")
            return
        run.asked.append(asked)
        self.say(f"round {done}: asked seat {seat} Q{asked['id']} (due at turn {asked['due_turn']}): {text}")

    def _final_thoughts(self, status: StatusResult, run: AudienceRun) -> None:
        run.outcome = status.duel.outcome
        instruction = (
            f"The debate closed: {status.duel.outcome} ({status.duel.reason or 'no reason recorded'}). Give your "
            "final thoughts as the audience in one paragraph of at most 150 words: what the debate settled, what "
            "it missed, and whom it convinced you of. They are shown in the report and change nothing."
        )
        said = " ".join(self._request(status, instruction, 2000).split())[:FINAL_THOUGHT_CHARS]
        if not said:
            return
        try:
            self.service.add_final_thoughts(status.duel.id, by=self.name, text=said)
        except DuelError as exc:
            run.refused.append({"code": exc.code, "message": exc.message})
            self.say(f"final thoughts refused ({exc.code}): {exc.message}")
            return
        run.final_thoughts = said
        self.say("added final thoughts")
