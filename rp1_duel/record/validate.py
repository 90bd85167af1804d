"""``duel validate``: check a committed artifact on its own, for review in git and CI.

Everything the service enforced while the duel ran is replayed from the file alone:
structure, front matter, the hash chain, every turn against the rules (with the source,
when it can be found from the recorded path), turn order and count, and that the
recorded outcome is the one the turns imply. Linear in the number of turns.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..vocabulary import ACCEPTED_CONSENSUS, ACTIVE, CLOSED, DISSENT, INVALIDATED, MAX_TURNS, TIMEOUT, RecordCode
from .artifact import FrontMatter
from .history import RecordFile, chain_problems, claimants
from .outcomes import TurnSummary, evaluate


@dataclass(frozen=True)
class Problem:
    code: str
    message: str
    line: int | None = None
    turn: int | None = None

    def to_dict(self) -> dict[str, Any]:
        found = {"code": self.code, "message": self.message, "line": self.line, "turn": self.turn}
        return {k: v for k, v in found.items() if v is not None}


@dataclass
class ArtifactReport:
    path: str
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    turns: int = 0
    status: str | None = None
    outcome: str | None = None
    implied_outcome: str | None = None

    @property
    def valid(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "valid": self.valid,
            "turns": self.turns,
            "status": self.status,
            "outcome": self.outcome,
            "implied_outcome": self.implied_outcome,
            "problems": [p.to_dict() for p in self.problems],
            "notes": self.notes,
        }


def validate_file(path: str | os.PathLike[str]) -> ArtifactReport:
    """Replay a committed artifact on its own (docs/protocol.md, ``duel validate``)."""
    path = Path(path)
    report = ArtifactReport(str(path))
    add = report.problems.append
    try:
        record = RecordFile.read(path)
    except (OSError, UnicodeDecodeError) as exc:
        add(Problem(RecordCode.UNREADABLE, f"cannot read the artifact: {exc}"))
        return report
    for problem in record.parsed.problems:
        add(Problem(RecordCode.STRUCTURE, problem))
    front = record.front
    if front is None:
        add(Problem(RecordCode.FRONT_MATTER, record.front_problem or "no front matter", 1))
        return report
    report.status, report.outcome = front.status, front.outcome
    if record.source is None:
        report.notes.append(f"source {front.source_path} not found: source locators were not checked")
    elif record.source.sha256 != front.source_sha256:
        report.notes.append(f"source {front.source_path} changed since the duel began: "
                            "locators checked against today's text")
    blocks = record.parsed.blocks
    for chained in chain_problems(blocks):
        add(Problem(chained.code, chained.message, chained.block.line, chained.block.n))
    history = record.history(upto=0)
    for number, (block, turn_report) in enumerate(zip(blocks, history.replay_checked(blocks, claimants(front)), strict=True), 1):
        for violation in turn_report.violations:
            line = block.line + 1 + violation.line if violation.line else block.line
            add(Problem(violation.code, f"turn {number}: {violation.message}", line, number))
    report.turns = len(blocks)
    _check_outcome(front, history.summaries(), report)
    return report


def _check_outcome(front: FrontMatter, summaries: list[TurnSummary], report: ArtifactReport) -> None:
    add = report.problems.append
    max_turns = front.max_turns
    if len(summaries) > max_turns:
        add(Problem(RecordCode.TURN_COUNT, f"{len(summaries)} turns exceed max_turns {max_turns}"))
    # Nothing may follow the turn that reached an outcome. An outcome needs the two
    # seats' latest turns, so checking each prefix looks at two turns: linear overall.
    implied = None
    for count in range(2, len(summaries) + 1):
        implied = evaluate(summaries[count - 2:count], max_turns - (count - 2)).outcome
        if implied is not None and count < len(summaries):
            add(Problem(RecordCode.TURN_COUNT, f"turns follow turn {count}, which had already reached an outcome"))
            break
    report.implied_outcome = implied
    status, outcome = front.status, front.outcome
    if status == ACTIVE:
        if outcome is not None:
            add(Problem(RecordCode.OUTCOME_MISMATCH, f"an ACTIVE duel records outcome {outcome}"))
        return
    if status != CLOSED:
        add(Problem(RecordCode.FRONT_MATTER, f"status is {status!r}, not ACTIVE or CLOSED", 1))
        return
    if outcome in (ACCEPTED_CONSENSUS, DISSENT, MAX_TURNS):
        if outcome != implied:
            add(Problem(RecordCode.OUTCOME_MISMATCH, f"recorded {outcome}, but the turns imply {implied or 'no outcome'}"))
    elif outcome == TIMEOUT:
        if implied is not None:
            add(Problem(RecordCode.OUTCOME_MISMATCH, f"recorded TIMEOUT, but the turns had reached {implied}"))
    elif outcome != INVALIDATED:
        add(Problem(RecordCode.OUTCOME_MISMATCH, f"unknown outcome {outcome!r}"))


def collect(paths: list[str]) -> list[Path]:
    """Files as given; folders searched for duel artifacts (Markdown with duel front matter)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for candidate in sorted(path.rglob("*.md")):
                if ".duel" in candidate.parts:
                    continue
                with open(candidate, "rb") as handle:
                    if handle.read(16).startswith(b"---\nduel_id:"):
                        found.append(candidate)
        else:
            found.append(path)
    return found
