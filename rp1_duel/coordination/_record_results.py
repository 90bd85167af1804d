"""What the ops that write the record answer: append, seal, commit-opening and the audience's ops.

Apart from the lock ops' answers (:mod:`._claim_result`…) so that a claim, refresh or release (a ``duel tools``
process each) does not build these classes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._result_core import DuelResult


@dataclass(kw_only=True)
class AppendResult(DuelResult):
    """What an append answers: the turn's number, stance and hash, and what the duel reached."""

    turn_number: int
    stance: str
    turn_sha256: str
    signed: bool
    candidate_convergence: bool
    terminal_outcome: str | None
    debate_path: str

    def to_dict(self) -> dict[str, Any]:
        """The append JSON: the turn's number, stance, hash and signature, and any outcome reached."""
        return {
            **super().to_dict(),
            "turn_number": self.turn_number,
            "stance": self.stance,
            "turn_sha256": self.turn_sha256,
            "signed": self.signed,
            "candidate_convergence": self.candidate_convergence,
            "terminal_outcome": self.terminal_outcome,
            "debate_path": self.debate_path,
        }


@dataclass(kw_only=True)
class SealResult(DuelResult):
    """What a seal answers: whether this call sealed the ending, and which seats have sealed it."""

    sealed: bool  # False: the seat had sealed it already
    outcome: str | None
    sealed_seats: list[int]
    debate_path: str

    def to_dict(self) -> dict[str, Any]:
        """The seal JSON: ``sealed``, the outcome, the seats that sealed it and the record's path."""
        return {
            **super().to_dict(),
            "sealed": self.sealed,
            "outcome": self.outcome,
            "sealed_seats": self.sealed_seats,
            "debate_path": self.debate_path,
        }


@dataclass(kw_only=True)
class CommitResult(DuelResult):
    """What a sealed opening's commit answers: its turn and hash, and which seats are still to commit."""

    turn_number: int
    turn_sha256: str
    already_committed: bool  # the same opening was committed before: nothing changed
    waiting_for_seats: list[int]  # the seats whose openings are not committed yet

    def to_dict(self) -> dict[str, Any]:
        """The commit JSON: the opening's number and hash, and the seats still to commit."""
        return {
            **super().to_dict(),
            "turn_number": self.turn_number,
            "turn_sha256": self.turn_sha256,
            "already_committed": self.already_committed,
            "waiting_for_seats": self.waiting_for_seats,
        }


@dataclass(kw_only=True)
class AudienceResult(DuelResult):
    """What the audience's ops answer: the question admitted (its id, round and due turn), or the final thoughts."""

    question: dict[str, Any] | None = None
    final_thought: dict[str, Any] | None = None
    debate_path: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON: the question or the final thought as the artifact records it, and the record's path."""
        found = {"question": self.question} if self.question else {"final_thought": self.final_thought}
        return {**super().to_dict(), **found, "debate_path": self.debate_path}
