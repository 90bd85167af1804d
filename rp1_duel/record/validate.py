"""``duel validate``: check a committed artifact on its own, for review in git and CI.

Everything the service enforced while the duel ran is replayed from the file alone:
structure, front matter, the hash chain, every turn against the rules (with the source,
when it can be found from the recorded path), turn order and count, and that the
recorded outcome is the one the turns imply. Linear in the number of turns.
"""

from __future__ import annotations

import os
import re
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


def validate_file(path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> ArtifactReport:
    """Replay a committed artifact on its own (docs/protocol.md section 6, ``duel validate``).

    The source is read only inside ``root`` (default: the artifact's git work tree, else
    the folder above the artifact's folder), and only the version the duel recorded.
    """
    path = Path(path)
    report = ArtifactReport(str(path))
    add = report.problems.append
    try:
        record = RecordFile.read(path, root=root)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).splitlines()[0]
        add(Problem(RecordCode.UNREADABLE, f"cannot read the artifact: {reason}"))
        return report
    for problem in record.parsed.problems:
        add(Problem(RecordCode.STRUCTURE, problem))
    front = record.front
    if front is None:
        add(Problem(RecordCode.FRONT_MATTER, record.front_problem or "no front matter", 1))
        return report
    report.status, report.outcome = front.status, front.outcome
    if record.source_note:
        report.notes.append(record.source_note)
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
    """Files as given; folders searched for duel artifacts.

    Every ``*.md`` outside ``.duel/`` is read (a bounded prefix) and kept when it looks
    like an artifact: a ``duel_id`` key near the top or a turn marker anywhere, whatever
    its line ends, BOM or key order. A file that looks like one and then fails to parse
    is reported invalid, never skipped.
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            found.append(path)
            continue
        for candidate in sorted(path.rglob("*.md")):
            if ".duel" in candidate.relative_to(path).parts or not candidate.is_file():
                continue
            if looks_like_artifact(candidate):
                found.append(candidate)
    return found


def looks_like_artifact(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        return True  # unreadable: let validation say so rather than skip it
    return _TURN_MARKER.search(head) is not None or _DUEL_ID_KEY.search(head[:4096]) is not None


_SNIFF_BYTES = 1024 * 1024
_DUEL_ID_KEY = re.compile(rb"(?m)^(?:\xef\xbb\xbf)?[ \t]*duel_id[ \t]*:")
_TURN_MARKER = re.compile(rb"(?m)^<!-- duel:turn n=[0-9]")
