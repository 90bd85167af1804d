"""``duel validate``: check a committed artifact on its own, for review in git and CI.

Everything the service enforced while the duel ran is replayed from the file alone:
structure, front matter, the hash chain, every turn against the rules (with the source,
when it can be found from the recorded path), turn order and count, and that the
recorded outcome is the one the turns imply. Linear in the number of turns.

Signed turns are checked with ``ssh-keygen``: for integrity only, or, given an
``allowed_signers`` file, for who signed each turn (one to three ssh-keygen runs per
signed turn, about 10 ms each).

A verification sidecar beside the artifact (``duel verify``) must belong to its chain and
list exactly what its turns cite; ``require_verified`` also fails a missing or stale one
and any fabricated citation (docs/protocol.md section 10).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ..confinement import confine
from ..errors import DuelError
from ..files import MAX_ARTIFACT_BYTES, MAX_PATCH_BYTES, NotReadable, open_regular, read_bounded
from ..schedule import CHAIR_TURNS
from ..turns import find_raw_html
from ..vocabulary import (
    ACCEPTED_CONSENSUS,
    ACTIVE,
    CLOSED,
    DISSENT,
    INVALIDATED,
    MAX_TURNS,
    TIMEOUT,
    RecordCode,
    RuleCode,
    Verdict,
)
from . import verification
from ._authorship import SealEntry, SignatureEntry, check_authorship
from .artifact import GENESIS, FrontMatter, RulingBlock, parse_conclusion
from .citations import turn_citations
from .ending import patch_path, revision_ending
from .families import label_problem
from .history import History, RecordFile, chain_problems, claimants, read_failure
from .outcomes import TurnSummary, decide, decide_panel
from .problem import Problem
from .rulings import parse_ruling, ruled_items, ruling_mismatch
from .sources import tree_root

__all__ = [
    "ArtifactReport",
    "Scan",
    "Validated",
    "collect",
    "outcome_problems",
    "scan",
    "validate_file",
    "validate_paths",
    "validate_record",
]


@dataclass(kw_only=True, frozen=True)
class VerificationStanding:
    """How an artifact's verification sidecar stands (section 10, "What duel validate checks")."""

    sidecar: str  # its path
    status: str  # verification.CURRENT, STALE or MISMATCH
    turns: int | None = None  # the turns it covers; None when it was not read
    verdicts: Mapping[str, int] = field(default_factory=dict)  # verdict -> how many

    def to_dict(self) -> dict[str, Any]:
        return {"sidecar": self.sidecar, "status": self.status, "turns": self.turns, "verdicts": dict(self.verdicts)}


@dataclass(kw_only=True)
class ArtifactReport:
    """What ``duel validate`` found in one artifact: its problems and notes, and what it records and implies."""

    path: str
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    turns: int = 0
    status: str | None = None
    outcome: str | None = None
    implied_outcome: str | None = None
    signatures: list[SignatureEntry] = field(default_factory=list)
    seals: list[SealEntry] = field(default_factory=list)
    verification: VerificationStanding | None = None  # when there is a sidecar

    @property
    def valid(self) -> bool:
        """Whether the artifact has no problem."""
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        """As ``duel validate --json`` writes it."""
        return {
            "path": self.path,
            "valid": self.valid,
            "turns": self.turns,
            "status": self.status,
            "outcome": self.outcome,
            "implied_outcome": self.implied_outcome,
            "problems": [p.to_dict() for p in self.problems],
            "notes": self.notes,
            "signatures": [s.to_dict() for s in self.signatures],
            "seals": [s.to_dict() for s in self.seals],
            "verification": None if self.verification is None else self.verification.to_dict(),
        }

    def to_text(self) -> str:
        """As ``duel validate`` prints it: the verdict line, then a line per problem, signer,
        the sidecar's standing and note."""
        verdict = "valid" if self.valid else "INVALID"
        outcome = self.outcome or (f"open, implies {self.implied_outcome}" if self.implied_outcome else "open")
        lines = [f"{self.path}: {verdict} ({self.turns} turn{'' if self.turns == 1 else 's'}, {outcome})"]
        for problem in self.problems:
            where = f"line {problem.line}: " if problem.line else ""
            lines.append(f"  {where}{problem.code} {problem.message}")
        lines += [
            f"  turn {entry.turn}: signed by {entry.signer}" for entry in self.signatures if entry.signer is not None
        ]
        lines += [
            f"  ending sealed by seat {entry.seat}: signed by {entry.signer}"
            for entry in self.seals
            if entry.signer is not None
        ]
        if self.verification is not None:
            found = self.verification
            counts = ", ".join(f"{count} {verdict}" for verdict, count in found.verdicts.items())
            turns = f"{found.turns} turn{'' if found.turns == 1 else 's'}"
            covered = "" if found.turns is None else f", {turns} covered ({counts or 'no citations'})"
            lines.append(f"  verification: {found.status}{covered}")
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


# What every command says of a file that is no duel record at all (the debated document, say).
NOT_AN_ARTIFACT = (
    "not a duel artifact (no front matter, no turns): give the record from the debate dir, debates/<duel id>.md"
)


def validate_paths(
    paths: Sequence[str],
    *,
    root: str | os.PathLike[str] | None = None,
    allowed_signers: str | os.PathLike[str] | None = None,
    require_verified: bool = False,
    strict: bool = False,
) -> list[ArtifactReport]:
    """:func:`validate_file` for every artifact ``paths`` name: files as given, folders
    searched for artifacts (:func:`collect`)."""
    return [
        validate_file(
            path, root=root, allowed_signers=allowed_signers, require_verified=require_verified, strict=strict
        )
        for path in collect(list(paths))
    ]


def validate_file(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    allowed_signers: str | os.PathLike[str] | None = None,
    require_verified: bool = False,
    strict: bool = False,
) -> ArtifactReport:
    """Replay a committed artifact on its own (docs/protocol.md section 6, ``duel validate``).

    The source is read only inside ``root`` (default: the artifact's git work tree, else
    the folder above the artifact's folder), and only the version the duel recorded.
    With ``allowed_signers`` (an ssh-keygen allowed signers file) every turn must be signed
    by a principal it names; without, signatures present are checked for integrity only.
    ``require_verified``: a current verification sidecar with no fabricated citation is required.
    ``strict``: turns whose source locators could not be checked (no source) are a problem, not a note.
    """
    path = Path(path)
    try:
        record = RecordFile.read(path, root=root)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        report = ArtifactReport(path=str(path))
        report.problems.append(
            Problem(code=RecordCode.UNREADABLE, message=f"cannot read the artifact: {read_failure(exc)}")
        )
        return report
    return validate_record(
        record, root=root, allowed_signers=allowed_signers, require_verified=require_verified, strict=strict
    ).report


@dataclass(frozen=True)
class Validated:
    """What ``duel validate`` found of a record read once, and its turns as it replayed them (over the recorded
    source, every rule checked): None when the record has no usable front matter."""

    report: ArtifactReport
    history: History | None


def validate_record(
    record: RecordFile,
    *,
    root: str | os.PathLike[str] | None = None,
    allowed_signers: str | os.PathLike[str] | None = None,
    require_verified: bool = False,
    strict: bool = False,
) -> Validated:
    """:func:`validate_file` of an artifact already read (``duel report`` and ``duel apply`` read it once and
    hand the same record to every reader)."""
    path = record.path
    report = ArtifactReport(path=str(path))
    add = report.problems.append
    for problem in record.parsed.problems:
        add(Problem(code=RecordCode.STRUCTURE, message=problem))
    front = record.front
    if front is None:
        if not record.is_artifact:
            add(Problem(code=RecordCode.UNREADABLE, message=NOT_AN_ARTIFACT))
        else:
            add(Problem(code=RecordCode.FRONT_MATTER, message=record.front_problem or "no front matter", line=1))
        return Validated(report, None)
    report.status, report.outcome = front.status, front.outcome
    if record.source_note:
        report.notes.append(record.source_note)
    if strict and record.source is None and record.parsed.blocks:
        why = record.source_note or "no source"
        add(Problem(code=RecordCode.SOURCE_NOT_CHECKED, message=f"no citation of the source was checked ({why})"))
    blocks, schedule = record.parsed.blocks, front.schedule
    for chained in chain_problems(blocks, first=schedule.first):
        add(Problem(code=chained.code, message=chained.message, line=chained.block.line, turn=chained.block.n))
    for ruled in _ruling_problems(record.parsed.rulings, range(schedule.first, schedule.first + len(blocks))):
        add(ruled)
    found = check_authorship(front, record.parsed, allowed_signers)
    report.signatures, report.seals = found.signatures, found.seals
    report.problems += found.problems
    report.notes += found.notes
    history = record.history(upto=0)
    checked = zip(blocks, history.replay_checked(blocks, claimants(front)), strict=True)
    for block, (number, turn_report) in checked:
        for violation in turn_report.violations:
            line = block.line + 1 + violation.line if violation.line else block.line
            add(Problem(code=violation.code, message=f"turn {number}: {violation.message}", line=line, turn=number))
    report.problems += _ruling_mismatches(record.parsed.rulings, history)
    report.turns = len(blocks)
    _check_conclusion(record, report)
    _check_outcome(front, history.summaries(), report)
    _check_revision(path, record, history, report)
    _check_provisional(front, record, report)
    _check_verification(path, root, front, history, required=require_verified, report=report)
    return Validated(report, history)


def _ruling_problems(blocks: Sequence[RulingBlock], numbers: range) -> list[Problem]:
    """The rulings' chain, as the turns' (section 10, "Rulings"): numbered from 1, each ``prev`` the hash
    before, each hash its text's, each text one the service writes, about a turn of the record."""
    problems, prev = [], GENESIS
    for expected, block in enumerate(blocks, start=1):
        if block.r != expected:
            problems.append(
                Problem(
                    code=RecordCode.TURN_ORDER,
                    message=f"ruling {block.r} found where ruling {expected} belongs",
                    line=block.line,
                )
            )
        if block.prev != prev:
            problems.append(
                Problem(
                    code=RecordCode.HASH_CHAIN,
                    message=f"ruling {block.r} does not follow the ruling before it",
                    line=block.line,
                )
            )
        if block.actual_sha256 != block.sha256:
            problems.append(
                Problem(
                    code=RecordCode.HASH_MISMATCH,
                    message=f"ruling {block.r} was changed after it was written",
                    line=block.line,
                )
            )
        ruling = parse_ruling(block.r, block.text)
        if ruling is None or ruling.turn not in numbers:
            problems.append(
                Problem(
                    code=RecordCode.STRUCTURE,
                    message=f"ruling {block.r} is not a ruling on a turn of the record",
                    line=block.line,
                )
            )
        prev = block.sha256
    return problems


def _ruling_mismatches(blocks: Sequence[RulingBlock], history: History) -> list[Problem]:
    """Each ruling held to the turn it names, as the service derived it (section 10, "Rulings"): the seat that
    wrote the turn, an item of it citing the ruled URL, the turns it was written between, its text as written
    (a ruling on no turn of the record is a ``STRUCTURE`` problem already)."""
    problems: list[Problem] = []
    ruled: dict[int, frozenset[tuple[str, str]]] = {}  # turn -> its ruled_items, each turn read once
    numbers = history.numbers
    for block in blocks:
        ruling = parse_ruling(block.r, block.text)
        if ruling is None or ruling.turn not in numbers:
            continue
        n = ruling.turn
        if n not in ruled:
            turn = history.turn(n)
            ruled[n] = ruled_items(turn, turn_citations(n, history.block(n), turn, history.source_names))
        seat = history.schedule.speaker(n)
        why = ruling_mismatch(ruling, block.text, seat=seat, ruled=ruled[n], last=numbers.stop - 1)
        if why is not None:
            problems.append(Problem(code=RecordCode.RULING_MISMATCH, message=why, line=block.line))
    return problems


def _check_conclusion(record: RecordFile, report: ArtifactReport) -> None:
    """The close's reason and summary are not hashed, so an edit can put markup there: flag it
    as the turn rule would (a close through the service refuses it)."""
    conclusion = record.parsed.conclusion
    if not conclusion:
        return
    first_line = record.text[: record.text.find(conclusion)].count("\n") + 1
    for html in find_raw_html(conclusion):
        report.problems.append(
            Problem(
                code=RuleCode.RAW_HTML,
                message=f"the Terminal Conclusion holds raw HTML {html.snippet!r}, which would be read as markup when rendered",
                line=first_line + html.line - 1,
            )
        )


def _check_revision(path: Path, record: RecordFile, history: History, report: ArtifactReport) -> None:
    """The revision rows of the conclusion and the patches beside the artifact are what the turns
    imply (a record closed before revisions existed has neither, and is not held to them)."""
    front, conclusion = record.front, parse_conclusion(record.parsed.conclusion)
    if front is None or conclusion is None or front.outcome is None or record.source is None or report.problems:
        return
    names = {seat: claimant.name for seat, claimant in claimants(front).items()}
    endings = [
        revision_ending(
            history,
            front.outcome,
            duel_id=front.duel_id,
            names=names,
            path=patch_path(path, front.source_path),
            credit_last_turn=credit_last_turn,
            whole_match=whole_match,
        )
        for whole_match in (False, True)
        for credit_last_turn in (False, True)
    ]
    # A record closed when each seat was credited with its latest turn's revision holds those rows, and one
    # closed when the patch matched the whole documents (unchanged lines shown removed and added again) its
    # patches and line counts: as good.
    matching = [ending for ending in endings if ending.rows == conclusion.revision]
    expected = next(iter(matching), endings[0])
    if not conclusion.revision and not expected.files:
        return
    if conclusion.revision != expected.rows:
        shown = "; ".join(f"{label}: {value}" for label, value in expected.rows) or "none"
        report.problems.append(
            Problem(
                code=RecordCode.PATCH_MISMATCH,
                message=f"the Terminal Conclusion's revision rows are not what the turns imply ({shown})",
            )
        )
    for name in expected.files:
        beside = path.with_name(name)
        try:
            found = read_bounded(confine(beside, project=tree_root(path), what=name), MAX_PATCH_BYTES)
        except DuelError as exc:  # a committed link out of the project: never read
            report.problems.append(Problem(code=RecordCode.PATCH_MISMATCH, message=exc.message))
            continue
        except FileNotFoundError:
            report.notes.append(f"no {name} beside the artifact: duel apply recomputes the revision from the turns")
            continue
        except (OSError, ValueError) as exc:
            report.problems.append(
                Problem(code=RecordCode.PATCH_MISMATCH, message=f"{name} cannot be read: {read_failure(exc)}")
            )
            continue
        # A record closed before patches carried git's header (diff --git, index) has the plain diff: as good.
        written = [ending.files[name] for ending in matching or [expected] if name in ending.files]
        if found not in {text.encode("utf-8") for diff in written for text in (diff, _without_git_header(diff))}:
            report.problems.append(
                Problem(
                    code=RecordCode.PATCH_MISMATCH,
                    message=f"{name} is not the diff the turns' edits make: edited after the close",
                )
            )


def _check_provisional(front: FrontMatter, record: RecordFile, report: ArtifactReport) -> None:
    """A ``Provisional`` row must read as a label the rule can give for the seats the record names (the served
    models are in the event log, not the record: the label is held to what the record shows); none is required."""
    conclusion = parse_conclusion(record.parsed.conclusion)
    if conclusion is None or not conclusion.labelled:
        return
    why = "it does not read as `every seat a FAMILY model (MODELS)`"
    if conclusion.provisional is not None:
        why = label_problem(conclusion.provisional, {p.seat: p.model_id for p in front.participants}) or ""
    if why:
        report.problems.append(
            Problem(
                code=RecordCode.PROVISIONAL_MISMATCH,
                message=f"the Terminal Conclusion's Provisional row is wrong: {why}",
            )
        )


def _without_git_header(patch: str) -> str:
    """``patch`` without its first two lines (``diff --git``, ``index``): the diff as the service wrote it before."""
    return patch.split("\n", 2)[2] if patch.startswith("diff --git ") else patch


def _check_verification(
    path: Path,
    root: str | os.PathLike[str] | None,
    front: FrontMatter,
    history: History,
    *,
    required: bool,
    report: ArtifactReport,
) -> None:
    add = report.problems.append
    side = verification.sidecar_path(path)
    if not os.path.lexists(side):
        if required:
            add(Problem(code=RecordCode.VERIFICATION_MISSING, message=f"no {side.name}: run duel verify"))
        return
    report.verification = VerificationStanding(sidecar=str(side), status=verification.MISMATCH)
    tree = os.path.realpath(root if root is not None else tree_root(path))
    if os.path.commonpath([os.path.realpath(side), tree]) != tree:
        add(Problem(code=RecordCode.VERIFICATION_MISMATCH, message=f"{side.name} lies outside {tree}: it was not read"))
        return
    try:
        sidecar = verification.load(side)
    except (OSError, verification.SidecarError) as exc:
        reason = read_failure(exc)
        add(Problem(code=RecordCode.VERIFICATION_MISMATCH, message=f"{side.name} cannot be read: {reason}"))
        return
    blocks = history.blocks
    standing = verification.check(
        sidecar=sidecar, artifact_name=path.name, front=front, blocks=blocks, turns=history.turns
    )
    report.verification = VerificationStanding(
        sidecar=str(side), status=standing.status, turns=sidecar.turns, verdicts=sidecar.counts()
    )
    for problem in standing.problems:
        add(Problem(code=RecordCode.VERIFICATION_MISMATCH, message=f"{side.name} is not this artifact's: {problem}"))
    if standing.status == verification.STALE:
        stale = f"{side.name} covers {sidecar.turns} of {len(blocks)} turns: run duel verify"
        if required:
            add(Problem(code=RecordCode.VERIFICATION_STALE, message=stale))
        else:
            report.notes.append(stale)
    if required and standing.belongs:
        _check_fabricated(sidecar, history, report)


def _check_fabricated(sidecar: verification.Sidecar, history: History, report: ArtifactReport) -> None:
    add = report.problems.append
    redacted = {(ruling.turn, ruling.url) for ruling in history.rulings if ruling.redacts}
    for entry in sidecar.citations:
        # A fabricated source a ruling redacted is dealt with: the record keeps it, and no view shows its claim.
        if entry.verdict == Verdict.FABRICATED and (entry.citation.turn, entry.citation.url) not in redacted:
            cited = entry.citation
            block = history.block(cited.turn)
            line = block.line + 1 + cited.line if cited.line else block.line
            add(
                Problem(
                    code=RecordCode.CITATION_FABRICATED,
                    message=f"turn {cited.turn}: {cited.url or cited.item} is fabricated, and no ruling redacts it: {entry.reason}",
                    line=line,
                    turn=cited.turn,
                )
            )


def _implied_outcome(front: FrontMatter, summaries: list[TurnSummary], report: ArtifactReport) -> str | None:
    """The outcome the turns imply; a turn after the one that reached it is a TURN_COUNT problem."""
    add = report.problems.append
    schedule = front.schedule
    max_turns, seats = schedule.max_turns, schedule.seats
    if schedule.chair:  # the phases are fixed: the last turn, the synthesis, is the only one that may decide
        most = max_turns + CHAIR_TURNS
        if len(summaries) > most:
            add(
                Problem(
                    code=RecordCode.TURN_COUNT,
                    message=f"{len(summaries)} turns exceed the {most} of a chaired duel of max_turns {max_turns}",
                )
            )
        return decide(summaries[:most], schedule).outcome
    if len(summaries) > max_turns:
        add(Problem(code=RecordCode.TURN_COUNT, message=f"{len(summaries)} turns exceed max_turns {max_turns}"))
    # Nothing may follow the turn that reached an outcome. An outcome needs every seat's
    # latest turn, the last `seats` turns of a prefix: checking each looks at that many, linear overall.
    implied = None
    for count in range(seats, len(summaries) + 1):
        implied = decide_panel(summaries[count - seats : count], max_turns - (count - seats), seats=seats).outcome
        if implied is not None and count < len(summaries):
            add(
                Problem(
                    code=RecordCode.TURN_COUNT,
                    message=f"turns follow turn {count}, which had already reached an outcome",
                )
            )
            break
    return implied


def _check_outcome(front: FrontMatter, summaries: list[TurnSummary], report: ArtifactReport) -> None:
    report.implied_outcome = _implied_outcome(front, summaries, report)
    report.problems.extend(outcome_problems(front, report.implied_outcome))


def outcome_problems(front: FrontMatter, implied: str | None) -> list[Problem]:
    """What is wrong with the recorded status and outcome, given the outcome the turns imply (``duel report`` too)."""
    status, outcome = front.status, front.outcome
    if status == ACTIVE:
        return (
            []
            if outcome is None
            else [Problem(code=RecordCode.OUTCOME_MISMATCH, message=f"an ACTIVE duel records outcome {outcome}")]
        )
    if status != CLOSED:
        return [Problem(code=RecordCode.FRONT_MATTER, message=f"status is {status!r}, not ACTIVE or CLOSED", line=1)]
    if outcome in (ACCEPTED_CONSENSUS, DISSENT, MAX_TURNS):
        if outcome == implied:
            return []
        return [
            Problem(
                code=RecordCode.OUTCOME_MISMATCH,
                message=f"recorded {outcome}, but the turns imply {implied or 'no outcome'}",
            )
        ]
    if outcome == TIMEOUT:
        if implied is None:
            return []
        return [
            Problem(code=RecordCode.OUTCOME_MISMATCH, message=f"recorded TIMEOUT, but the turns had reached {implied}")
        ]
    if outcome == INVALIDATED:
        return []
    return [Problem(code=RecordCode.OUTCOME_MISMATCH, message=f"unknown outcome {outcome!r}")]


class Scan(NamedTuple):
    """What a scan of files and folders found: the artifacts to validate, and every ``.md`` file left out, with why."""

    found: list[Path]
    skipped: list[tuple[Path, str]]


def scan(paths: Sequence[str]) -> Scan:
    """Files as given; folders searched, every ``*.md`` (any case, ``.duel/`` folders included) read whole up to
    the artifact size limit and kept when anything in it marks a duel artifact: a ``duel_id`` key in its front
    matter, quoted or not, or a ``<!-- duel:`` marker starting a line anywhere, in any case and spacing. A file that looks like one
    and then fails to parse is reported invalid, never skipped; a file left out is listed with its reason, so a
    CI gate shows what it did not check: one that is no regular file (a FIFO, a device) among them, and a
    folder that cannot be listed. Folders are walked to any depth, never through a symlink."""
    found: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            found.append(path)
            continue
        for candidate in _markdown_entries(path, skipped):
            reason = _why_not_an_artifact(candidate)
            if reason is None:
                found.append(candidate)
            else:
                skipped.append((candidate, reason))
    return Scan(found, skipped)


def collect(paths: list[str]) -> list[Path]:
    """The artifacts :func:`scan` finds."""
    return scan(paths).found


def _markdown_entries(folder: Path, skipped: list[tuple[Path, str]]) -> list[Path]:
    """Every ``*.md`` entry under ``folder`` but a folder, in path order. Walked with a stack, not recursion
    (a folder 1,500 deep is no RecursionError), into no symlinked folder; one that cannot be listed goes
    to ``skipped``."""
    entries: list[Path] = []
    folders = [folder]
    while folders:
        current = folders.pop()
        try:
            with os.scandir(current) as listing:
                inside = list(listing)
        except OSError as exc:
            skipped.append((current, f"cannot be listed: {read_failure(exc)}"))
            continue
        for entry in inside:
            if entry.is_dir(follow_symlinks=False):
                folders.append(Path(entry.path))
            elif Path(entry.name).suffix.lower() == ".md":
                entries.append(Path(entry.path))
    return sorted(entries)


def _why_not_an_artifact(path: Path) -> str | None:
    try:
        with os.fdopen(open_regular(path), "rb") as handle:
            data = handle.read(MAX_ARTIFACT_BYTES + 1)
    except NotReadable as exc:
        return str(exc)  # a FIFO, a device, a symlink to a folder: never read
    except OSError:
        return None  # unreadable: let validation say so rather than skip it
    if _MARKER.search(data) or _DUEL_ID_KEY.search(data[:_FRONT_MATTER_BYTES]):
        return None
    if len(data) > MAX_ARTIFACT_BYTES:
        return f"larger than {MAX_ARTIFACT_BYTES // (1024 * 1024)} MiB, with no duel marker or duel_id in what was read"
    return "not a duel artifact: no duel_id in its front matter and no duel marker"


_FRONT_MATTER_BYTES = 64 * 1024 + 8  # the front matter's limit, and its opening line
_DUEL_ID_KEY = re.compile(rb"""(?m)^(?:\xef\xbb\xbf)?[ \t]*["']?duel_id["']?[ \t]*:""")
_MARKER = re.compile(rb"(?im)^[ \t]*<!--\s*/?\s*duel\s*:")  # at a line's start: prose may mention one
