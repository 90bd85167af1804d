"""The agreed change as GitHub suggested changes: each change from the document at the pull request's head to
the agreed document, as the lines of the head it replaces and the lines that replace them. Pure.

GitHub offers a suggestion only in a review comment on lines of the pull request's diff (their head side), all
in one hunk of it: a change elsewhere cannot be one, and the record's comment carries the patch and the
``duel apply`` command instead (docs/protocol.md section 11, "`duel ci github`").
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Suggestion", "diff_ranges", "fits", "suggested_changes", "suggestion_body"]

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")  # lines as git counts them: a lone CR ends none
_BACKTICKS = re.compile(r"`+")


@dataclass(frozen=True)
class Suggestion:
    """Lines ``start`` to ``end`` of the head's document (from 1, both included) replaced by ``lines``."""

    start: int
    end: int
    lines: tuple[str, ...]  # without their line ends


def suggested_changes(today: str, target: str) -> list[Suggestion]:
    """The changes that make ``today`` into ``target``, each over at least one line of ``today``: lines added are
    offered with the line before them (the first line after them at the top), so every one is a suggestion's."""
    before, after = _LINES.findall(today), _LINES.findall(target)
    found: list[Suggestion] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        new = [line.removesuffix("\n") for line in after[j1:j2]]
        if i1 < i2:
            found.append(Suggestion(i1 + 1, i2, tuple(new)))
        elif i1 > 0:  # added after line i1: that line, then the new ones
            found.append(Suggestion(i1, i1, (before[i1 - 1].removesuffix("\n"), *new)))
        elif before:  # added at the top: the new lines, then the first line
            found.append(Suggestion(1, 1, (*new, before[0].removesuffix("\n"))))
    return found


def diff_ranges(diff: str) -> list[range]:
    """The head side of each hunk of a unified diff: the lines (from 1) a review comment may be on."""
    return [
        range(int(found.group(1)), int(found.group(1)) + int(found.group(2) or "1")) for found in _HUNK.finditer(diff)
    ]


def fits(suggestion: Suggestion, hunks: Sequence[range]) -> bool:
    """Whether every line the suggestion replaces is in one hunk of the pull request's diff."""
    return any(suggestion.start in hunk and suggestion.end in hunk for hunk in hunks)


def suggestion_body(marker: str, lead: str, suggestion: Suggestion) -> str:
    """A review comment offering ``suggestion``: ``marker`` (to find it again), ``lead`` (Markdown duel wrote),
    then the suggestion's fence, longer than any backtick run in the lines it suggests."""
    text = "\n".join(suggestion.lines)
    fence = "`" * max(3, max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    return f"{marker}\n{lead}\n\n{fence}suggestion\n{text}{chr(10) if suggestion.lines else ''}{fence}\n"
