"""``duel ci github``: every debate record a pull request adds or changes, checked as ``duel validate --strict``
checks it, its report in the job summary and in one comment of the pull request, found again by its marker and
edited in place; the change a consensus agreed offered as suggestions (docs/protocol.md section 11).

A record in a pull request is anyone's, a fork's included: nothing here reads duel's configuration, fetches a
cited source or runs a command the repository names; recorded text reaches the log through ``say``, which the
command prints with :func:`~rp1_duel.printable.printable`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import DuelError, invalid_argument
from ..files import read_bounded
from ..record import ALREADY, CONFLICTED, agreed_revision, applied_to, validate_file
from ..review import COMMENT_LIMIT, code, read_report, render_github
from ..vocabulary import ACCEPTED_CONSENSUS, ErrorCode
from . import git
from .event import DEFAULT_GLOB, PullRequest, glob_pattern, pull_request_of
from .github_api import DEFAULT_API_URL, GitHubApi
from .publish import Publisher
from .suggestions import Suggestion, diff_ranges, fits, suggested_changes
from .verdict import RecordCheck, check_of, comment_body, exit_code, summary_text

if TYPE_CHECKING:
    from ..review import Report

__all__ = ["CiOptions", "CiResult", "run_github"]

_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_EVENT_BYTES = 16 * 1024 * 1024


@dataclass(kw_only=True, frozen=True)
class CiOptions:
    """What ``duel ci github``'s flags ask."""

    glob: str = DEFAULT_GLOB
    require_consensus: bool = False
    require_verified: bool = False
    allowed_signers: str | None = None
    comment: bool = True


@dataclass
class CiResult:
    """Every record's check, and the exit code they come to."""

    checks: list[RecordCheck] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 when every record passed, else 1."""
        return exit_code(self.checks)


@dataclass(kw_only=True)
class _Record:
    """One record as the run sees it: its check, its report (None when it has none, and why), the notes of its
    comment, and the suggestions its comment's change makes."""

    check: RecordCheck
    report: Report | None = None
    unreported: str = ""  # why there is no report, when there is none
    notes: list[str] = field(default_factory=list)
    document: str | None = None  # the agreed document's path from the root, when suggestions are offered
    offered: list[Suggestion] = field(default_factory=list)


def run_github(options: CiOptions, env: Mapping[str, str], say: Callable[[str], None]) -> CiResult:
    """Check the records of the workflow run ``env`` describes; write the job summary; comment on the pull
    request (with a token, unless ``options.comment`` is False). Raises ``INVALID_ARGUMENT`` for what the
    environment lacks, ``GITHUB_API_FAILED`` when GitHub refuses a call (after the summary is written)."""
    root = git.git_root(Path(env.get("GITHUB_WORKSPACE") or os.getcwd()))
    pull = _pull_request(env)
    changed = _changed(root, pull, say)
    pattern = glob_pattern(options.glob)
    paths = sorted(path for path in changed if pattern.fullmatch(path))
    if not paths:
        say(f"no debate record matches {options.glob}" + ("" if pull is None else " among the changed files"))
    records = [_checked(root, path, options, say) for path in paths]
    if pull is not None:
        for record in records:
            _offer(root, pull, set(changed), record)
    _summarise(env, records)
    result = CiResult([record.check for record in records])
    if pull is not None and options.comment:
        _comment_all(env, pull, records, say)
    return result


def _changed(root: Path, pull: PullRequest | None, say: Callable[[str], None]) -> list[str]:
    """The paths the pull request adds or changes; outside one, every path git tracks."""
    if pull is None:
        say("not a pull_request event: every tracked record the glob matches is checked; nothing is commented")
        return git.tracked_paths(root)
    checked_out = git.head_commit(root)
    if checked_out != pull.head:
        say(f"the checkout is {checked_out[:12]}, not the head {pull.head[:12]}: records are checked as checked out")
    return git.changed_paths(root, pull.base, pull.head)


def _comment_all(
    env: Mapping[str, str], pull: PullRequest, records: Sequence[_Record], say: Callable[[str], None]
) -> None:
    """Each record's suggestions and comment on the pull request, with ``$GITHUB_TOKEN``; without one, a line."""
    token, repository = env.get("GITHUB_TOKEN", ""), env.get("GITHUB_REPOSITORY", "")
    if not token:
        say("no GITHUB_TOKEN: nothing commented (the job summary has every report)")
        return
    if not _REPOSITORY.fullmatch(repository):
        raise invalid_argument("$GITHUB_REPOSITORY is not OWNER/NAME")
    publisher = Publisher(GitHubApi(env.get("GITHUB_API_URL") or DEFAULT_API_URL, token), repository, pull)
    try:
        for record in records:
            _publish(publisher, record, say)
    except DuelError as exc:
        if not (pull.from_fork and exc.details.get("status") == 403):
            raise
        say(
            "the token of a pull request from a fork is read-only: nothing commented (the job summary has every report)"
        )


def _pull_request(env: Mapping[str, str]) -> PullRequest | None:
    """The pull request of ``$GITHUB_EVENT_PATH``; None without one, or for an event of another kind."""
    where = env.get("GITHUB_EVENT_PATH")
    if not where:
        return None
    try:
        event = json.loads(read_bounded(where, _EVENT_BYTES))
    except (OSError, ValueError) as exc:
        raise invalid_argument(f"$GITHUB_EVENT_PATH cannot be read as JSON: {exc}") from None
    return pull_request_of(event) if isinstance(event, dict) else None


def _checked(root: Path, path: str, options: CiOptions, say: Callable[[str], None]) -> _Record:
    """A record checked as ``duel validate --strict`` checks it, and its report read."""
    found = validate_file(
        root / path,
        allowed_signers=options.allowed_signers,
        require_verified=options.require_verified,
        strict=True,
    )
    check = check_of(
        path,
        valid=found.valid,
        problems=[f"{problem.code} {problem.message}" for problem in found.problems],
        outcome=found.outcome,
        turns=found.turns,
        require_consensus=options.require_consensus,
    )
    say(replace(found, path=path).to_text())  # named from the repository's root, as the comment names it
    say(check.line)
    record = _Record(check=check)
    try:
        record.report = read_report(root / path, read_from=None, allowed_signers=options.allowed_signers)
    except DuelError as exc:
        record.unreported = f"_`duel report` cannot read it ({code(exc.code)}): the check above says why._"
    return record


def _offer(root: Path, pull: PullRequest, changed: set[str], record: _Record) -> None:
    """Suggestions for the change a valid record's consensus agreed, when its document is in the pull request's
    diff and the head does not hold the change yet; a note in its comment for what cannot be one."""
    if not record.check.passed or record.check.outcome != ACCEPTED_CONSENSUS:
        return
    path = record.check.path
    try:
        agreed = agreed_revision(root / path)
    except DuelError:
        return  # what duel apply would refuse: the report says why
    document = os.path.relpath(agreed.document, os.path.realpath(root))
    today = git.file_at(root, pull.head, document)
    if document not in changed or today is None or not agreed.changed:
        return
    apply = code(f"duel apply {shlex.quote(path)}")
    target, state, conflicts = applied_to(agreed.revision, today)
    if state == ALREADY or target == today:  # the revision itself, or a later document with its change merged in
        record.notes.append(f"The document at the head holds the change of the agreed revision {code(agreed.id)}.")
        return
    if state == CONFLICTED:
        record.notes.append(
            f"The agreed change conflicts with the document at the head in {conflicts} place(s): {apply} writes it "
            "with conflict markers to resolve."
        )
        return
    hunks = diff_ranges(git.diff_of(root, pull.base, pull.head, document))
    changes = suggested_changes(today, target)
    record.document = document
    record.offered = [one for one in changes if fits(one, hunks)]
    _say_offered(record, len(changes) - len(record.offered), apply)


def _say_offered(record: _Record, outside: int, apply: str) -> None:
    if record.offered:
        count = len(record.offered)
        record.notes.append(
            f"The agreed change is offered as {count} suggested change{'' if count == 1 else 's'} in this pull request's diff."
        )
    if outside:
        record.notes.append(
            f"{outside} change{' lies' if outside == 1 else 's lie'} outside this pull request's diff, where GitHub "
            f"takes no suggestion: the patch is below, and {apply} applies it."
        )


def _summarise(env: Mapping[str, str], records: Sequence[_Record]) -> None:
    """Append the run's summary to ``$GITHUB_STEP_SUMMARY``, when the run has one."""
    where = env.get("GITHUB_STEP_SUMMARY")
    if not where:
        return
    reports = [_report_text(record, COMMENT_LIMIT) for record in records]
    text = summary_text([record.check for record in records], reports)
    try:
        with open(where, "a", encoding="utf-8") as summary:
            summary.write(text)
    except OSError as exc:
        raise DuelError(ErrorCode.STORAGE_FAILED, f"cannot write $GITHUB_STEP_SUMMARY: {exc.strerror or exc}") from None


def _report_text(record: _Record, limit: int) -> str:
    """The record's ``duel report --format github``, at most ``limit`` characters; when it has none, why."""
    if record.report is None:
        return record.unreported + "\n"
    return render_github(record.report, record.check.path, limit=limit)


def _publish(publisher: Publisher, record: _Record, say: Callable[[str], None]) -> None:
    """The record's suggestions, then its comment (which says what could not be suggested)."""
    refused = publisher.suggest(record.check.path, record.document, record.offered)
    if refused:
        record.notes.append(f"GitHub took {refused} suggestion(s) as outside the diff: the patch below has them.")
    body = comment_body(record.check, lambda room: _report_text(record, room), record.notes)
    say(f"{record.check.path}: comment {publisher.comment(record.check.path, body)}")
