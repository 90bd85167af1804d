"""``duel validate``: check a committed artifact on its own, for review in git and CI.

Everything the service enforced while the duel ran is replayed from the file alone:
structure, front matter, the hash chain, every turn against the rules (with the source,
when it can be found from the recorded path), turn order and count, and that the
recorded outcome is the one the turns imply. Linear in the number of turns.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import frontmatter

from . import artifact
from .outcomes import ACCEPTED_CONSENSUS, DISSENT, INVALIDATED, MAX_TURNS, TIMEOUT, TurnSummary, evaluate
from .rules import NoveltyIndex, TurnContext, validate_turn
from .source import SourceDocument

REQUIRED_FIELDS = ("duel_id", "topic", "topic_slug", "source_path", "source_sha256", "max_turns", "status",
                   "outcome", "created_at", "closed_at", "participants")


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
    path = Path(path)
    report = ArtifactReport(str(path))
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        report.problems.append(Problem("UNREADABLE", f"cannot read the artifact: {exc}"))
        return report
    return validate_text(text, path, report)


def validate_text(text: str, path: Path, report: ArtifactReport | None = None) -> ArtifactReport:
    report = report or ArtifactReport(str(path))
    add = report.problems.append
    parsed = artifact.parse(text)
    for problem in parsed.problems:
        add(Problem("STRUCTURE", problem))
    meta = _front_matter(parsed.front_matter, report)
    if meta is None:
        return report
    report.status, report.outcome = meta.get("status"), meta.get("outcome")
    seats = {p.get("seat"): p for p in meta.get("participants") or [] if isinstance(p, dict)}
    source = _find_source(meta, path, report)
    names = (str(meta.get("source_path")), os.path.realpath(path.parent / str(meta.get("source_path"))))
    novelty = NoveltyIndex()
    prior = []
    summaries: list[TurnSummary] = []
    stances: dict[int, str] = {}
    prev = artifact.GENESIS
    for index, block in enumerate(parsed.blocks):
        number = index + 1
        if block.n != number:
            add(Problem("TURN_ORDER", f"turn {block.n} found where turn {number} belongs", block.line, block.n))
        if block.prev != prev:
            add(Problem("HASH_CHAIN", f"turn {block.n}: prev does not match turn {number - 1}'s hash", block.line, block.n))
        if block.actual_sha256 != block.sha256:
            add(Problem("HASH_MISMATCH", f"turn {block.n} was changed after it was written", block.line, block.n))
        prev = block.sha256
        seat = 1 if number % 2 else 2
        who = seats.get(seat, {})
        ctx = TurnContext(
            turn_number=number,
            participant_name=str(who.get("display_name", "")),
            harness=str(who.get("harness", "")),
            model_id=str(who.get("model_id", "")),
            source=source,
            source_names=names,
            prior_turns=prior,
            previous_stance=stances.get(seat),
            novelty=novelty,
        )
        turn_report = validate_turn(block.body, ctx)
        for violation in turn_report.violations:
            line = block.line + 1 + violation.line if violation.line else block.line
            add(Problem(violation.code, f"turn {number}: {violation.message}", line, number))
        turn = turn_report.turn
        prior.append(turn)
        novelty.add_turn(turn)
        stances[seat] = turn.stance
        summaries.append(TurnSummary(seat, turn.stance, turn.has_blocking))
    report.turns = len(parsed.blocks)
    _check_outcome(meta, summaries, report)
    return report


def _front_matter(raw: str | None, report: ArtifactReport) -> dict[str, Any] | None:
    if raw is None:
        report.problems.append(Problem("FRONT_MATTER", "no YAML front matter: not a duel artifact", 1))
        return None
    try:
        meta = frontmatter.loads(f"---\n{raw}---\n").metadata
    except Exception as exc:  # YAML errors come in many classes; all mean the same here
        report.problems.append(Problem("FRONT_MATTER", f"front matter is not valid YAML: {str(exc).splitlines()[0]}", 1))
        return None
    missing = [name for name in REQUIRED_FIELDS if name not in meta]
    if missing:
        report.problems.append(Problem("FRONT_MATTER", f"front matter lacks {', '.join(missing)}", 1))
        return None
    return meta


def _find_source(meta: dict[str, Any], path: Path, report: ArtifactReport) -> SourceDocument | None:
    recorded = str(meta["source_path"])
    candidate = Path(recorded) if os.path.isabs(recorded) else path.parent / recorded
    try:
        data = candidate.read_bytes()
        source = SourceDocument.from_text(data.decode("utf-8"), str(candidate))
    except (OSError, UnicodeDecodeError):
        report.notes.append(f"source {recorded} not found: source locators were not checked")
        return None
    if hashlib.sha256(data).hexdigest() != meta.get("source_sha256"):
        report.notes.append(f"source {recorded} changed since the duel began: locators checked against today's text")
    return source


def _check_outcome(meta: dict[str, Any], summaries: list[TurnSummary], report: ArtifactReport) -> None:
    add = report.problems.append
    try:
        max_turns = int(meta["max_turns"])
    except (TypeError, ValueError):
        add(Problem("FRONT_MATTER", "max_turns is not a number", 1))
        return
    if len(summaries) > max_turns:
        add(Problem("TURN_COUNT", f"{len(summaries)} turns exceed max_turns {max_turns}"))
    # Nothing may follow the turn that reached an outcome. An outcome needs the two
    # seats' latest turns, so checking each prefix looks at two turns: linear overall.
    implied = None
    for count in range(2, len(summaries) + 1):
        implied = evaluate(summaries[count - 2:count], max_turns - (count - 2)).outcome
        if implied is not None and count < len(summaries):
            add(Problem("TURN_COUNT", f"turns follow turn {count}, which had already reached an outcome"))
            break
    report.implied_outcome = implied
    status, outcome = meta.get("status"), meta.get("outcome")
    if status == "ACTIVE":
        if outcome is not None:
            add(Problem("OUTCOME_MISMATCH", f"an ACTIVE duel records outcome {outcome}"))
        return
    if status != "CLOSED":
        add(Problem("FRONT_MATTER", f"status is {status!r}, not ACTIVE or CLOSED", 1))
        return
    if outcome in (ACCEPTED_CONSENSUS, DISSENT, MAX_TURNS):
        if outcome != implied:
            add(Problem("OUTCOME_MISMATCH", f"recorded {outcome}, but the turns imply {implied or 'no outcome'}"))
    elif outcome == TIMEOUT:
        if implied is not None:
            add(Problem("OUTCOME_MISMATCH", f"recorded TIMEOUT, but the turns had reached {implied}"))
    elif outcome != INVALIDATED:
        add(Problem("OUTCOME_MISMATCH", f"unknown outcome {outcome!r}"))


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
