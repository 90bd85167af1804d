"""What a closed duel comes to for its document: the agreed revision, or each seat's alternative.

Pure: from a :class:`~rp1_duel.record.history.History` (its edits in force, turn by turn), the
outcome and the artifact's place, :func:`revision_ending` gives the rows the Terminal
Conclusion shows and the patch files written beside the artifact (docs/protocol.md section 8,
"The agreed revision"). The close writes them; ``duel validate`` recomputes them from the
turns and compares, so a patch or a conclusion edited after the close is found.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..schedule import CHAIR_SEAT, Schedule
from ..turns import Revision
from ..vocabulary import ACCEPTED_CONSENSUS, DISSENT, MAX_TURNS
from .artifact import FrontMatter, parse, parse_conclusion
from .history import History, read_artifact_text
from .sources import source_location, tree_root

__all__ = [
    "NO_CHANGE",
    "AgreedEnding",
    "RevisionEnding",
    "agreed_ending",
    "agreed_in",
    "alternatives_in",
    "last_seat_turns",
    "patch_path",
    "revision_ending",
]

NO_CHANGE = "no change to the document"
_AGREED_ROW = re.compile(r"`(r-[0-9a-f]{12})`, agreed")  # the Revision row's value, as _agreed writes it


@dataclass(frozen=True)
class RevisionEnding:
    """The Terminal Conclusion's revision rows (label, value), and the patch files by file name."""

    rows: tuple[tuple[str, str], ...] = ()
    patches: Mapping[str, str] | None = None  # file name beside the artifact -> unified diff

    @property
    def files(self) -> Mapping[str, str]:
        """The patch files, none when there are none."""
        return self.patches or {}


def patch_path(artifact_path: str | os.PathLike[str], recorded_source: str) -> str:
    """The source's path as a patch names it: relative to the tree holding the artifact (its git
    work tree), so ``git apply`` run at the top of the tree finds it; else the file's name."""
    source = os.path.normpath(source_location(recorded_source, artifact_path=artifact_path))
    root = os.path.realpath(tree_root(artifact_path))
    real = os.path.realpath(source)
    inside = os.path.commonpath([real, root]) == root
    return Path(os.path.relpath(real, root)).as_posix() if inside else os.path.basename(source)


@dataclass(frozen=True)
class AgreedEnding:
    """What a closed duel agreed for its document, as every command that ends a duel says it
    (docs/protocol.md section 8, "The agreed revision")."""

    artifact: str  # the record's path, as the command was given it
    revision: str | None = None  # the agreed revision's id; None when no revision changing the document was agreed
    patch: str | None = None  # the path of ``<duel id>.revision.patch`` beside the artifact; None when it is not there

    def lines(self) -> tuple[str, ...]:
        """The closing lines: the revision, its patch and the ``duel apply`` command; none without a revision."""
        if self.revision is None:
            return ()
        patch = () if self.patch is None else (f"patch: {self.patch}",)
        return (f"revision: {self.revision}", *patch, f"apply it: duel apply {shlex.quote(self.artifact)}")

    def fields(self) -> dict[str, str | None]:
        """The ``revision`` and ``patch`` fields of a ``--json`` summary (null when none was agreed)."""
        return {"revision": self.revision, "patch": self.patch}


def agreed_ending(artifact_path: str | os.PathLike[str]) -> AgreedEnding:
    """What the closed record at ``artifact_path`` agreed, from its Terminal Conclusion's ``Revision`` row (written
    by the close, checked by ``duel validate``); no revision for any other ending, or a record that cannot be read
    (a database store's duel closed on another host)."""
    artifact = os.fspath(artifact_path)
    try:
        parsed = parse(read_artifact_text(artifact))
        front = FrontMatter.parse(parsed.front_matter)
    except (OSError, UnicodeDecodeError, ValueError):  # a FrontMatterError is a ValueError
        return AgreedEnding(artifact)
    conclusion = parse_conclusion(parsed.conclusion)
    rows = dict(conclusion.revision) if conclusion else {}
    agreed = _AGREED_ROW.fullmatch(rows.get("Revision", ""))
    if agreed is None:
        return AgreedEnding(artifact)
    patch = Path(artifact).with_name(f"{front.duel_id}.revision.patch")
    return AgreedEnding(artifact, agreed.group(1), str(patch) if patch.is_file() else None)


def revision_ending(
    history: History,
    outcome: str,
    *,
    duel_id: str,
    names: Mapping[int, str],
    path: str,
    credit_last_turn: bool = False,
    whole_match: bool = False,
) -> RevisionEnding:
    """The rows and patches of a duel closed with ``outcome``: on ACCEPTED_CONSENSUS the agreed
    revision and who accepted it; on DISSENT or MAX_TURNS, as an alternative, each seat's last revision
    that changes the document and holds an edit the seat proposed (``credit_last_turn``: the rule
    before, each seat's revision as its latest turn left it); nothing otherwise, or without the source.
    ``names``: seat -> name. ``whole_match``: the patches and line counts as written before (see
    :meth:`~rp1_duel.turns.Revision.diff`)."""
    if history.revision is None:
        return RevisionEnding()
    if outcome == ACCEPTED_CONSENSUS:
        return _agreed(history, duel_id=duel_id, names=names, path=path, whole_match=whole_match)
    if outcome in (DISSENT, MAX_TURNS):
        return _alternatives(
            history, duel_id=duel_id, names=names, path=path, credit_last_turn=credit_last_turn, whole_match=whole_match
        )
    return RevisionEnding()


def last_seat_turns(schedule: Schedule, count: int) -> int:
    """How many of the first ``count`` turns reach the last one a seat wrote: a chair's synthesis
    may propose edits after the seats accepted, but accepts for no one, so they are not agreed."""
    while count and schedule.speaker(schedule.first + count - 1) == CHAIR_SEAT:
        count -= 1
    return count


def _prefix(history: History, count: int) -> History:
    """The history of its first ``count`` turns, with the revision as they leave it."""
    replay = History(
        source=history.source,
        source_names=history.source_names,
        schedule=history.schedule,
        source_sha256=history.source_sha256,
    )
    for number in list(history.numbers)[:count]:
        replay.accept(history.block(number), history.turn(number))
    return replay


def agreed_in(history: History) -> Revision | None:
    """The revision the seats' last turns leave in force, when it changes the document (a chair's
    synthesis after them accepts for no one); None for no change, or without the source."""
    count = last_seat_turns(history.schedule, len(history.turns))
    revision = (history if count == len(history.turns) else _prefix(history, count)).revision
    return revision if revision is not None and revision.edits and not revision.problems else None


def _agreed(
    history: History, *, duel_id: str, names: Mapping[int, str], path: str, whole_match: bool = False
) -> RevisionEnding:
    revision = agreed_in(history)
    if revision is None:
        return RevisionEnding((("Revision", NO_CHANGE),))
    seats = sorted({history.schedule.speaker(n) for n in history.numbers} - {CHAIR_SEAT})
    patch = f"{duel_id}.revision.patch"
    rows = (
        ("Revision", f"`{revision.id}`, agreed"),
        ("Document changes", _changes(revision, path, patch, whole_match=whole_match)),
        ("Accepted by", ", ".join(names.get(seat, f"seat {seat}") for seat in seats)),
    )
    return RevisionEnding(rows, {patch: revision.patch(path, whole_match=whole_match)})


def _alternatives(
    history: History,
    *,
    duel_id: str,
    names: Mapping[int, str],
    path: str,
    credit_last_turn: bool = False,
    whole_match: bool = False,
) -> RevisionEnding:
    """Each seat's alternative (:func:`alternatives_in`) as a row and a patch, not agreed."""
    rows: list[tuple[str, str]] = []
    patches: dict[str, str] = {}
    for seat, revision in alternatives_in(history, credit_last_turn=credit_last_turn).items():
        patch = f"{duel_id}.alternative-{seat}.patch"
        who = names.get(seat, f"seat {seat}")
        changes = _changes(revision, path, patch, whole_match=whole_match)
        rows.append(("Alternative", f"{who}'s `{revision.id}`, not agreed: {changes}"))
        patches[patch] = revision.patch(path, whole_match=whole_match)
    return RevisionEnding(tuple(rows), patches or None)


def alternatives_in(history: History, *, credit_last_turn: bool = False) -> dict[int, Revision]:
    """Seat -> its revision as its own latest turn that proposed or withdrew edits left it, by seat, when the seat's
    turns proposed an edit in force in it and it changes the document: a seat that only accepted or dissented
    against the other's edits proposes no alternative. ``credit_last_turn``: the rule before, each seat's revision
    as its latest turn left it, whoever proposed its edits (records closed by it still validate)."""
    after: dict[int, Revision] = {}
    proposer: dict[str, int] = {}  # edit name -> the seat whose turn last proposed it
    replay = History(
        source=history.source,
        source_names=history.source_names,
        schedule=history.schedule,
        source_sha256=history.source_sha256,
    )
    for number in history.numbers:
        turn = history.turn(number)
        replay.accept(history.block(number), turn)
        seat = history.schedule.speaker(number)
        proposer.update((edit.name, seat) for edit in turn.edits.edits)
        if seat == CHAIR_SEAT or replay.revision is None:
            continue
        if credit_last_turn:
            after[seat] = replay.revision
        elif turn.edits.edits or turn.edits.withdrawn:
            if any(proposer.get(name) == seat for name in replay.revision.edits):
                after[seat] = replay.revision
            else:  # its latest proposal left none of its own edits in force
                after.pop(seat, None)
    return {seat: revision for seat, revision in sorted(after.items()) if revision.edits and not revision.problems}


def _changes(revision: Revision, path: str, patch: str, *, whole_match: bool = False) -> str:
    added, removed = revision.counts(whole_match=whole_match)
    return f"`{path}` +{added} -{removed} lines, patch `{patch}`"
