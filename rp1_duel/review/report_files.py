"""What ``duel report`` reads, at the edge: the artifact (bounded, as ``duel validate`` reads it),
what ``duel validate`` says of it, the usage events recorded next to it, its verification sidecar and
its assessment cache. Read-only, but for :func:`assess_artifact` (``--assess``), which writes the
assessment cache and nothing else. :func:`render_report` gives a report in the format asked for.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..coordination import STATE_DIR, DuelService, Event, storage_errors, write_atomic
from ..errors import DuelError
from ..files import MAX_CACHE_BYTES, read_bounded
from ..participant import ModelAsker, ProviderError, configured_providers
from ..record import (
    NOT_AN_ARTIFACT,
    History,
    RecordFile,
    SidecarError,
    agreed_in,
    alternatives_in,
    load,
    patch_path,
    read_artifact_text,
    read_failure,
    sidecar_path,
    tree_root,
    validate_record,
)
from ..schedule import CHAIR_SEAT
from ..vocabulary import ACCEPTED_CONSENSUS, DISSENT, MAX_TURNS, ErrorCode, EventType, RecordCode
from . import assessment
from .assessment import AssessmentFile, AssessmentRun, Assessor
from .decision import AlternativeView, RevisionView
from .report import Report, ReportLinks, SidecarFile, build_report, read_record, record_of
from .report.github import render_github
from .report.html import render_html
from .report.markdown import render_markdown

__all__ = [
    "REPORT_FORMATS",
    "assess_artifact",
    "configured_assessors",
    "read_report",
    "render_report",
    "report_folder",
]

REPORT_FORMATS = ("md", "github", "html", "json")


def report_folder(output: str | None, format_: str) -> str | None:
    """The folder a report written to ``output`` (None: standard output) in ``format_`` is read from, which its
    links are relative to: the output file's; else the current folder, but for ``md``, which is pasted or posted
    as a pull-request comment, where a relative link resolves against the page: None, it links nothing
    (docs/protocol.md section 11, "Links"); ``github`` is a comment's body wherever it is written: never linked."""
    if format_ == "github":
        return None
    if output is not None:
        return os.path.dirname(os.path.abspath(output))
    return None if format_ == "md" else os.curdir


def read_report(
    path: str | os.PathLike[str],
    env: Mapping[str, str] = os.environ,
    *,
    read_from: str | os.PathLike[str] | None = os.curdir,
    allowed_signers: str | os.PathLike[str] | None = None,
) -> Report:
    """The report of the artifact at ``path``, its links relative to the folder ``read_from`` (where the report
    is written; None: no folder, as :func:`report_folder` says, and no link), validated with ``allowed_signers``
    when given (each seat then shows the principal that signed its turns); raises :class:`DuelError`
    (``UNREADABLE``, ``FRONT_MATTER``)."""
    where = Path(path)
    file = _artifact(where)  # read once: validated, replayed once, and reported from that replay
    validated = validate_record(file, allowed_signers=allowed_signers)
    if not file.is_artifact:
        raise DuelError(ErrorCode.ARTIFACT_UNREADABLE, f"{where}: {NOT_AN_ARTIFACT}")
    if file.front is None or validated.history is None:
        raise DuelError(RecordCode.FRONT_MATTER, f"{where}: {file.front_problem}")
    notes: list[str] = []
    events = _recorded_events(where, file.front.duel_id, notes)
    return build_report(
        record_of(file, validated.history),
        str(where),
        events=events,
        sidecar=_sidecar(where, str if read_from is not None else _from_work_tree),
        env=env,
        notes=notes,
        assessment=_assessment(where),
        validation=validated.report,
        links=_links(where, file.front.source_path, read_from),
        revision=_agreed_revision(file, validated.history, apply=f"duel apply {shlex.quote(_from_work_tree(where))}"),
        alternatives=_alternatives(file, validated.history),
    )


def render_report(report: Report, format_: str) -> str:
    """``report`` as ``duel report --format`` writes it: md (a pull-request comment), github (the body of one
    GitHub comment: decision first, the rest folded, cut to fit), html (one self-contained page) or json (the
    data behind them)."""
    if format_ == "json":
        return json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n"
    if format_ == "html":
        return render_html(report)
    if format_ == "github":
        return render_github(report, _from_work_tree(Path(report.path)))
    return render_markdown(report)


def _agreed_revision(record: RecordFile, history: History, *, apply: str) -> RevisionView | None:
    """The revision a consensus agreed on, recomputed from the turns (as validation replayed them) over the
    recorded source, with ``apply``, the command that brings it to the document."""
    front = record.front
    if front is None or front.outcome != ACCEPTED_CONSENSUS or record.source is None:
        return None
    revision = agreed_in(history)
    if revision is None:
        return None
    path = patch_path(record.path, front.source_path)
    added, removed = revision.counts()
    seats = sorted({history.schedule.speaker(n) for n in history.numbers} - {CHAIR_SEAT})
    names = {entry.seat: entry.display_name for entry in front.participants}
    return RevisionView(
        id=revision.id,
        diff=revision.diff(path),
        files=(path,),
        added=added,
        removed=removed,
        accepted_by=tuple(names.get(s, f"seat {s}") for s in seats),
        apply=apply,
    )


def _alternatives(record: RecordFile, history: History) -> tuple[AlternativeView, ...]:
    """The revisions a duel that agreed none left on the table (DISSENT, MAX_TURNS), each credited to the seat
    whose turns proposed its edits, as the close writes them; recomputed over the recorded source."""
    front = record.front
    if front is None or front.outcome not in (DISSENT, MAX_TURNS) or record.source is None:
        return ()
    path = patch_path(record.path, front.source_path)
    names = {entry.seat: entry.display_name for entry in front.participants}
    return tuple(
        AlternativeView(
            seat=seat,
            name=names.get(seat, f"seat {seat}"),
            id=revision.id,
            diff=revision.diff(path),
            files=(path,),
            added=revision.counts()[0],
            removed=revision.counts()[1],
        )
        for seat, revision in alternatives_in(history).items()
    )


def _from_work_tree(path: Path) -> str:
    """A file's path from the root of its git work tree, where a reader of a pull request runs commands and finds
    files (docs/protocol.md section 11, "Links"); as given outside one."""
    root = tree_root(path)
    if not (root / ".git").exists():
        return str(path)
    return Path(os.path.relpath(os.path.realpath(path), root)).as_posix()


def assess_artifact(
    path: str | os.PathLike[str],
    assessors: Sequence[Assessor],
    *,
    refresh: bool = False,
    clock: Callable[[], float] = time.time,
    progress: Callable[[str], None] = lambda _line: None,
) -> AssessmentRun:
    """Ask the assessors about the artifact at ``path`` (reusing what its cache holds for this state of the
    record, unless ``refresh``) and write the cache, atomically, when it changed. Raises :class:`DuelError`:
    the artifact's codes, a preflight's ``PROVIDER_*``, ``STORAGE_FAILED``; an assessor that gave no answer
    is in the run's ``failures``, after the others' answers are written."""
    where = Path(path)
    record = read_record(_artifact_text(where), str(where))
    found = _assessment(where)
    subject = record.subject(str(where))
    prompt = assessment.assessment_prompt(record.front, record.history.blocks)  # as shown: redactions hold
    if found is not None and found.cache is None:
        progress(f"{found.path} could not be read ({found.error}): it is written anew")
    run = assessment.assess(
        found.cache if found else None, subject, prompt, assessors, refresh=refresh, clock=clock, progress=progress
    )
    if run.changed:
        target = assessment.cache_path(where)
        with storage_errors(target.parent):
            write_atomic(target, assessment.dumps(run.cache), mode=0o644)
    return run


def configured_assessors(
    env: Mapping[str, str], models: Sequence[str] = (), base_url: str | None = None
) -> list[ModelAsker]:
    """The assessors ``--assessor`` names (up to two), else one per provider whose key is set. None is an
    error: ``--assess`` asked for a model (``PROVIDER_NO_CREDENTIALS``)."""
    providers = configured_providers(env, models, base_url, flag="--assessor", limit=assessment.MAX_ASSESSORS)
    if not providers:
        raise ProviderError(
            ErrorCode.PROVIDER_NO_CREDENTIALS,
            "--assess needs a model: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or pass --assessor "
            "MODEL (with --base-url URL for an OpenAI-compatible server)",
        )
    return [
        ModelAsker(
            provider,
            role="an assessor",
            cache_key="duel-report",
            max_tokens=assessment.ASSESS_MAX_TOKENS,
            deadline_seconds=assessment.ASSESS_DEADLINE_SECONDS,
        )
        for provider in providers
    ]


def _artifact_text(where: Path) -> str:
    try:
        return read_artifact_text(where)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        reason = read_failure(exc)
        raise DuelError(RecordCode.UNREADABLE, f"cannot read {where}: {reason}") from None


def _artifact(where: Path) -> RecordFile:
    """The artifact and its recorded source, read once for every reader."""
    try:
        return RecordFile.read(where)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DuelError(RecordCode.UNREADABLE, f"cannot read {where}: {read_failure(exc)}") from None


def _sidecar(artifact: Path, named: Callable[[Path], str]) -> SidecarFile | None:
    """The verification sidecar next to the artifact, read through its own module, if there is one; ``named``
    says its path as the report names it."""
    path = sidecar_path(artifact)
    if not os.path.lexists(path):
        return None
    try:
        return SidecarFile(named(path), load(path))
    except (OSError, SidecarError) as exc:
        return SidecarFile(named(path), None, read_failure(exc))


def _assessment(artifact: Path) -> AssessmentFile | None:
    """The assessment cache next to the artifact (a regular file of at most 4 MiB), if there is one."""
    path = assessment.cache_path(artifact)
    if not os.path.lexists(path):
        return None
    try:
        return AssessmentFile(str(path), assessment.loads(read_bounded(path, MAX_CACHE_BYTES)))
    except (OSError, ValueError) as exc:  # SidecarError is a ValueError, as read_bounded's refusals are
        return AssessmentFile(str(path), None, read_failure(exc))


def _links(artifact: Path, source_path: str, read_from: str | os.PathLike[str] | None) -> ReportLinks:
    """The artifact and the source (recorded relative to the artifact's folder, or absolute) as paths relative to
    ``read_from``: links that hold wherever the tree is checked out. Read from no folder, they are not links but
    names, from the root of the git work tree."""
    if read_from is None:
        source = Path(os.path.normpath(os.path.join(os.path.dirname(artifact), source_path)))
        return ReportLinks(_from_work_tree(artifact), _from_work_tree(source), linked=False)
    base, where = os.path.abspath(read_from), os.path.abspath(artifact)
    source_file = os.path.join(os.path.dirname(where), source_path)

    def relative(target: str) -> str:
        return Path(os.path.relpath(target, base)).as_posix()

    return ReportLinks(relative(where), relative(source_file))


def _recorded_events(artifact: Path, duel_id: str | None, notes: list[str]) -> list[Event] | None:
    """The duel's ``usage``, ``provider_failed`` and ``turn_rejected`` events when its state sits next to the artifact, as the service leaves it:
    ``<debate dir>/<duel id>.md`` and ``<debate dir>/.duel/duels/<duel id>/``. None when there is none."""
    if duel_id is None or artifact.name != f"{duel_id}.md":
        return None
    service = DuelService(artifact.parent)
    try:
        if not (service.debate.duel_folder(duel_id) / "state.json").is_file():
            return None
        service.debate.check_readable()  # a state folder other users can write is not evidence
        return service.events(duel_id, (EventType.USAGE, EventType.PROVIDER_FAILED, EventType.TURN_REJECTED))
    except DuelError as exc:
        notes.append(f"recorded usage not read from {artifact.parent / STATE_DIR}: {exc.message}")
        return None
