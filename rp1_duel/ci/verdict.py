"""Each record's check and the run's exit code, and the texts a pull request shows: the comment of each record
(found again by its hidden marker), and the job summary. Pure (docs/protocol.md section 11, "`duel ci github`").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from ..review import COMMENT_LIMIT, cell, code, inline
from ..vocabulary import ACCEPTED_CONSENSUS

__all__ = [
    "SUMMARY_LIMIT",
    "RecordCheck",
    "check_of",
    "comment_body",
    "exit_code",
    "marker",
    "summary_text",
]

SUMMARY_LIMIT = 1_000_000  # bytes of one step's job summary: GitHub refuses one over 1 MiB
_PASSED, _FAILED = "passed", "failed"


@dataclass(kw_only=True, frozen=True)
class RecordCheck:
    """One record's check: its path from the repository's root, whether it passed and why not, its outcome."""

    path: str
    passed: bool
    outcome: str  # the recorded outcome, "open" while the duel runs, "unreadable" when there is none
    reason: str  # one line: why it failed, or what passed

    @property
    def line(self) -> str:
        """The check as one line of the log."""
        return f"{self.path}: {_PASSED if self.passed else _FAILED.upper()} ({self.outcome}): {self.reason}"


def check_of(
    path: str, *, valid: bool, problems: Sequence[str], outcome: str | None, turns: int, require_consensus: bool
) -> RecordCheck:
    """A record's check from what ``duel validate --strict`` found (``problems``, each ``CODE message``): an
    invalid record fails; a valid one passes whatever it decided (DISSENT, MAX_TURNS, TIMEOUT are debates that
    ended, not broken builds), unless ``require_consensus`` and it did not end ACCEPTED_CONSENSUS."""
    shown = outcome or ("open" if valid else "unreadable")
    if not valid:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        first = problems[0] if problems else "invalid"
        return RecordCheck(path=path, passed=False, outcome=shown, reason=f"invalid: {first}{more}")
    turned = f"{turns} turn{'' if turns == 1 else 's'}"
    if require_consensus and outcome != ACCEPTED_CONSENSUS:
        return RecordCheck(
            path=path, passed=False, outcome=shown, reason=f"valid, {turned}, but --require-consensus: it did not agree"
        )
    return RecordCheck(path=path, passed=True, outcome=shown, reason=f"valid, {turned}")


def exit_code(checks: Sequence[RecordCheck]) -> int:
    """0 when every record passed (none included), else 1."""
    return 0 if all(check.passed for check in checks) else 1


def marker(path: str) -> str:
    """The hidden line that finds a record's comment again: its path percent-encoded, so a name cannot end the
    HTML comment or hold markup."""
    return f"<!-- duel:record {quote(path, safe='/')} -->"


def comment_body(check: RecordCheck, report: Callable[[int], str], notes: Sequence[str] = ()) -> str:
    """A record's pull-request comment, at most 65,536 characters: its marker, the check's verdict, ``notes`` (each
    one Markdown line duel wrote), then ``report(room)``, its ``duel report --format github`` in the room left."""
    verdict = "passed" if check.passed else "**failed**"
    head = "\n".join(
        [marker(check.path), f"**duel ci**: {code(check.path)} {verdict}: {inline(check.reason)}.", *notes]
    )
    return f"{head}\n\n" + report(COMMENT_LIMIT - len(head) - 2)


def summary_text(checks: Sequence[RecordCheck], reports: Sequence[str]) -> str:
    """The job summary: a table of every record's check, then each record's report while the summary stays
    under GitHub's limit (a record left out is said, and its comment has it)."""
    rows = [
        f"| {cell(check.path)} | {cell(check.outcome)} | {'passed' if check.passed else '**failed**'} |"
        for check in checks
    ]
    table = ["## duel ci", "", "| record | outcome | check |", "|---|---|---|", *rows] if checks else []
    text = "\n".join(table or ["## duel ci", "", "No debate record changed."]) + "\n"
    for check, report in zip(checks, reports, strict=True):
        part = f"\n{report}\n"
        if len((text + part).encode("utf-8")) > SUMMARY_LIMIT:
            part = f"\n_The report of {code(check.path)} is left out here (the summary's limit): its comment has it._\n"
        text += part
    return text
