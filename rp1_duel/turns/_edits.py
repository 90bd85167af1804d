"""A turn's **Proposed Edits**: changes to the source, in blocks models write reliably.

The section holds edit blocks and withdrawals, one after another (docs/protocol.md section 7,
"Proposed edits")::

    Edit lease-expiry: replace
    ```find
    Leases expire unless refreshed.
    ```
    ```replace
    Leases expire after `lease_seconds` unless refreshed.
    ```
    Edit refresh-pace: insert after heading "Lease semantics"
    ```insert
    A holder refreshes at most once every third of a lease.
    ```
    Edit old-note: delete
    ```find
    This note is obsolete.
    ```
    Withdraw refresh-pace

An edit's name is the duel's: a later turn restating ``Edit lease-expiry`` amends it,
``Withdraw lease-expiry`` takes it back. ``replace`` and ``delete`` may name their file
(``replace in design.md``), which must be the source. Parsing is pure and never raises: what
does not read as a block is a problem with its line; whether each edit applies is
:mod:`rp1_duel.turns.revision`'s question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from .markdown import FENCE

EditKind = Literal["replace", "delete", "insert"]
MAX_EDITS: Final = 50  # a turn's edit blocks and withdrawals; the turn's 64 KiB bounds their text

_NAME = r"([a-z0-9][a-z0-9-]{0,39})"
_EDIT = re.compile(
    rf"""^\s*(?:[-*+]\s+)?(?:\*\*|__)?edit\s+`?{_NAME}`?(?:\*\*|__)?\s*:\s*
    (?:(replace|delete)(?:\s+in\s+`?([^`\s]+)`?)?|insert\s+after\s+heading\s+["“](.+)["”])\s*$""",
    re.IGNORECASE | re.VERBOSE,
)
_WITHDRAW = re.compile(rf"^\s*(?:[-*+]\s+)?(?:\*\*|__)?withdraw\s+`?{_NAME}`?(?:\*\*|__)?\s*$", re.IGNORECASE)
# Which fenced blocks each kind takes, in order.
_BLOCKS: Final[dict[str, tuple[str, ...]]] = {
    "replace": ("find", "replace"),
    "delete": ("find",),
    "insert": ("insert",),
}


@dataclass(kw_only=True, frozen=True)
class Edit:
    """One proposed change to the source: its name, its kind, what it finds or the heading it follows, its new text."""

    name: str
    kind: EditKind
    find: str  # the text to replace or delete, as quoted; for an insert, the heading's text
    text: str  # the replacement or the inserted text; empty for a delete
    target: str | None  # the file a replace or delete names, if it names one
    line: int  # the turn line of its ``Edit`` line


@dataclass(frozen=True)
class EditSection:
    """What a **Proposed Edits** section says: edits (restated ones amend), withdrawals, and what did not parse."""

    edits: tuple[Edit, ...] = ()
    withdrawn: tuple[tuple[str, int], ...] = ()  # (name, line)
    problems: tuple[tuple[int, str], ...] = ()  # (line, what is wrong)


NO_EDITS: Final = EditSection()


def parse_edits(lines: list[str], first_line: int) -> EditSection:
    """Read a section's body ``lines``, the first being turn line ``first_line``; never raises."""
    edits: list[Edit] = []
    withdrawn: list[tuple[str, int]] = []
    problems: list[tuple[int, str]] = []
    index = 0
    while index < len(lines):
        line, number = lines[index], first_line + index
        index += 1
        if not line.strip():
            continue
        if len(edits) + len(withdrawn) >= MAX_EDITS:
            problems.append((number, f"more than {MAX_EDITS} edits and withdrawals in one turn"))
            break
        taken = _WITHDRAW.match(line)
        if taken:
            withdrawn.append((taken.group(1).lower(), number))
            continue
        header = _EDIT.match(line)
        if header is None:
            problems.append(
                (number, 'expected `Edit NAME: replace`, `delete`, `insert after heading "…"` or `Withdraw NAME`')
            )
            index = _past_blocks(lines, index)  # its blocks are part of the one problem, not a line each
            continue
        name, kind_word, target, heading = header.groups()
        kind: EditKind = "insert" if heading is not None else "replace" if kind_word.lower() == "replace" else "delete"
        blocks, index, problem = _fenced_blocks(lines, index, _BLOCKS[kind])
        if problem is not None:
            problems.append((number, f"edit {name.lower()}: {problem}"))
            index = _past_blocks(lines, index)
            continue
        find = heading if kind == "insert" else blocks[0]
        text = blocks[-1] if kind != "delete" else ""
        edits.append(Edit(name=name.lower(), kind=kind, find=find, text=text, target=target, line=number))
    return EditSection(tuple(edits), tuple(withdrawn), tuple(problems))


def _fenced_blocks(lines: list[str], index: int, kinds: tuple[str, ...]) -> tuple[list[str], int, str | None]:
    """The bodies of the fenced blocks ``kinds`` (their info strings, in order) from ``index``, blank lines
    between them allowed; the index after them; or what is wrong."""
    bodies: list[str] = []
    for kind in kinds:
        while index < len(lines) and not lines[index].strip():
            index += 1
        opener = FENCE.match(lines[index]) if index < len(lines) else None
        if opener is None or lines[index][opener.end() :].strip().lower() != kind:
            return bodies, index, f"a fenced block ```{kind} is expected next"
        fence, body = opener.group(1), []
        index += 1
        while index < len(lines) and not _closes(lines[index], fence):
            body.append(lines[index])
            index += 1
        if index == len(lines):
            return bodies, index, f"the ```{kind} block is never closed"
        index += 1
        bodies.append("\n".join(body))
    return bodies, index, None


def _past_blocks(lines: list[str], index: int) -> int:
    """The index after the fenced blocks (of any kind) that follow ``index``, blank lines between them allowed."""
    while True:
        at = index
        while at < len(lines) and not lines[at].strip():
            at += 1
        opener = FENCE.match(lines[at]) if at < len(lines) else None
        if opener is None:
            return index
        at += 1
        while at < len(lines) and not _closes(lines[at], opener.group(1)):
            at += 1
        index = min(at + 1, len(lines))


def _closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes a block opened by ``fence``: the same character, at least as many, nothing else."""
    indent, stripped = len(line) - len(line.lstrip(" ")), line.strip()
    return indent <= 3 and len(stripped) >= len(fence) and set(stripped) == {fence[0]}
