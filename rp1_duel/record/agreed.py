"""``duel apply``: the revision a duel agreed on, applied to its document by a person.

A duel that ended ACCEPTED_CONSENSUS agreed on one exact revision of its source: every seat's
latest turn accepted it (docs/protocol.md section 7, "Proposed edits"). Participants never write
the source; whoever runs ``duel apply`` does, and nothing the record says is taken on trust: the
artifact must pass ``duel validate``, and the revision is recomputed from its turns over the version
of the source the duel recorded (the file, else its git history, else the copy pinned at the join).
A document that moved on since is merged three ways (:mod:`.merging`): today's changes are kept, the
agreed change is brought in, and where both touched the same lines the file holds conflict markers.
A write replaces the whole file at once and keeps its mode.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ..errors import DuelError
from ..files import write_atomic
from ..turns import Revision, SourceDocument, SourceUnreadable, read_source
from ..vocabulary import ACCEPTED_CONSENSUS, CLOSED, ErrorCode, RecordCode
from ._merging import merge_three
from .artifact import FrontMatter
from .ending import last_seat_turns
from .history import RecordFile, read_failure
from .sources import source_document, source_location, tree_root
from .validate import validate_record

__all__ = ["ALREADY", "CONFLICTED", "AgreedRevision", "ApplyResult", "agreed_revision", "applied_to", "apply_agreed"]

# What apply_agreed did to the document (ApplyResult.state).
APPLIED = "applied"  # the document was the recorded version: the agreed revision written over it
MERGED = "merged"  # the document had moved on: the agreed change merged into it, cleanly
CONFLICTED = "conflicted"  # merged, but both changed the same lines: conflict markers written
ALREADY = "already_applied"  # the document already holds the agreed revision: nothing written
UNCHANGED = "unchanged"  # the duel agreed to change nothing: nothing written


@dataclass(kw_only=True, frozen=True)
class AgreedRevision:
    """What a closed duel agreed on: its document in the working tree, and the revision of it."""

    artifact: Path
    document: Path  # the source, where the artifact records it (symbolic links followed)
    shown: str  # the document's path as a person reads it: from the artifact's path as given
    revision: Revision

    @property
    def id(self) -> str:
        """The agreed revision's id; the document's own when the duel agreed to change nothing."""
        return self.revision.id

    @property
    def changed(self) -> bool:
        """Whether the agreed revision differs from the document."""
        return self.revision.text != self.revision.source


@dataclass(kw_only=True, frozen=True)
class ApplyResult:
    """What :func:`apply_agreed` did: the revision, what became of the document, and where the text went."""

    agreed: AgreedRevision
    written: Path | None  # None with ``check``, or when nothing needed writing
    check: bool
    state: str = APPLIED  # APPLIED, MERGED, CONFLICTED, ALREADY or UNCHANGED
    conflicts: int = 0  # places both changed, each between conflict markers

    def to_dict(self) -> dict[str, Any]:
        """As ``duel apply --json`` prints it."""
        added, removed = self.agreed.revision.counts()
        return {
            "revision": self.agreed.id,
            "document": self.agreed.shown,
            "changed": self.agreed.changed,
            "added": added,
            "removed": removed,
            "check": self.check,
            "written": None if self.written is None else str(self.written),
            "state": self.state,
            "conflicts": self.conflicts,
        }

    def to_text(self) -> str:
        """As ``duel apply`` prints it: one line."""
        agreed = self.agreed
        if self.state == UNCHANGED:
            return f"no change to the document: the duel agreed on {agreed.shown} as it is ({agreed.id})"
        if self.state == ALREADY:
            return f"already applied: {agreed.shown} holds {agreed.id}"
        added, removed = agreed.revision.counts()
        lines = f"+{added} -{removed} lines"
        merged = ", merged with the changes made since the duel" if self.state == MERGED else ""
        if self.check:
            return f"{agreed.id} applies to {agreed.shown}{merged}: {lines} (--check: nothing written)"
        if self.state == CONFLICTED:
            places = f"{self.conflicts} place{'' if self.conflicts == 1 else 's'}"
            return (
                f"applied {agreed.id} to {agreed.shown} with conflicts in {places}: both the duel and a later change "
                "edited the same lines; resolve the <<<<<<< today / >>>>>>> agreed markers"
            )
        elsewhere = "" if self.written == agreed.document else f", written to {self.written}"
        return f"applied {agreed.id} to {agreed.shown}{elsewhere}{merged}: {lines}"


def agreed_revision(
    artifact_path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None
) -> AgreedRevision:
    """The revision the closed duel of ``artifact_path`` agreed on, over the version of its document the duel
    recorded, and where that document is in the working tree.

    ``root`` bounds where the document may be, as for ``duel validate`` (default: the artifact's
    git work tree, else the folder above the artifact's folder). Raises DuelError:
    ``ARTIFACT_UNREADABLE``; ``ARTIFACT_TAMPERED`` when the artifact does not validate;
    ``NO_AGREED_REVISION`` when the duel is open or ended without consensus; ``PATH_OUTSIDE_PROJECT`` when
    the document leads outside ``root`` or into ``.git/``; ``TARGET_NOT_MARKDOWN`` when it leads to another
    kind of file; ``SOURCE_MISMATCH`` when the recorded version is nowhere to be found (not the file, not its
    git history, not the copy pinned at the join), so there is nothing to recompute the revision over.
    """
    path = Path(artifact_path)
    try:  # read once: validated, then its revision replayed over the recorded version
        record = RecordFile.read(path, root=root)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DuelError(
            ErrorCode.ARTIFACT_UNREADABLE, f"{path}: cannot read the artifact: {read_failure(exc)}"
        ) from None
    report = validate_record(record, root=root).report
    if report.problems:
        first = report.problems[0]
        if first.code == RecordCode.UNREADABLE:
            raise DuelError(ErrorCode.ARTIFACT_UNREADABLE, f"{path}: {first.message}")
        raise DuelError(
            ErrorCode.ARTIFACT_TAMPERED,
            f"{path} does not validate ({len(report.problems)} problems, the first: {first.code} {first.message}): "
            f"run duel validate {path}",
        )
    if report.status != CLOSED or report.outcome != ACCEPTED_CONSENSUS:
        ended = "is still open" if report.status != CLOSED else f"ended {report.outcome}"
        raise DuelError(
            ErrorCode.NO_AGREED_REVISION, f"no agreed revision: the duel {ended}", {"outcome": report.outcome}
        )
    front = cast("FrontMatter", record.front)  # a record without one does not validate
    shown = os.path.normpath(source_location(front.source_path, artifact_path=path))
    document = source_document(
        front.source_path, artifact_path=path, tree=root if root is not None else tree_root(path)
    )
    if record.source is None:
        raise DuelError(
            ErrorCode.SOURCE_MISMATCH,
            f"the version of {shown} the duel recorded (SHA-256 {front.source_sha256[:12]}…) is not in the working "
            "tree, its git history or the copy pinned at the join: the agreed revision cannot be recomputed",
            {"duel_source_sha256": front.source_sha256},
        )
    history = record.history(upto=last_seat_turns(front.schedule, len(record.parsed.blocks)))
    revision = cast("Revision", history.revision)  # a History over a source always has one
    return AgreedRevision(artifact=path, document=document, shown=shown, revision=revision)


def apply_agreed(
    artifact_path: str | os.PathLike[str],
    *,
    to: str | os.PathLike[str] | None = None,
    check: bool = False,
    root: str | os.PathLike[str] | None = None,
    use_git: bool = True,
) -> ApplyResult:
    """Bring the revision the duel of ``artifact_path`` agreed on to its document: written over it when the
    document is the version the duel recorded, merged three ways when it moved on since (conflict markers where
    both changed the same lines), nothing when it holds the revision already. ``to`` writes the agreed revision
    of the recorded version there instead, whatever the document became. With ``check``, or when the duel agreed
    to change nothing, nothing is written. ``use_git`` False merges without git (:func:`~.merging.merge_three`).

    Raises DuelError as :func:`agreed_revision` does, ``TARGET_UNREADABLE`` when the document cannot be read,
    and ``STORAGE_FAILED`` when the write fails (the file is then as it was).
    """
    agreed = agreed_revision(artifact_path, root=root)
    if not agreed.changed:
        return ApplyResult(agreed=agreed, written=None, check=check, state=UNCHANGED)
    if to is not None:
        return ApplyResult(
            agreed=agreed,
            written=None if check else _write(Path(to), agreed.revision.text, like=agreed.document),
            check=check,
        )
    text, state, conflicts = applied_to(agreed.revision, _today(agreed).raw, use_git=use_git)
    if state == ALREADY:
        return ApplyResult(agreed=agreed, written=None, check=check, state=ALREADY)
    if check:
        if conflicts:
            raise DuelError(
                ErrorCode.MERGE_CONFLICT,
                f"{agreed.id} would conflict with the changes made to {agreed.shown} since the duel in {conflicts} "
                "place(s): duel apply writes it with conflict markers to resolve, or --to PATH writes the agreed "
                "revision of the recorded version",
                {"conflicts": conflicts},
            )
        return ApplyResult(agreed=agreed, written=None, check=check, state=state)
    return ApplyResult(
        agreed=agreed,
        written=_write(agreed.document, text, like=agreed.document),
        check=check,
        state=state,
        conflicts=conflicts,
    )


def applied_to(revision: Revision, today: str, *, use_git: bool = True) -> tuple[str, str, int]:
    """What :func:`apply_agreed` makes of the document ``today`` (its text): the text, the state (``APPLIED``,
    ``MERGED``, ``CONFLICTED`` or ``ALREADY``) and how many places conflict. Writes nothing (``duel ci github``
    offers the same change as suggestions)."""
    if today == revision.text:
        return today, ALREADY, 0
    if today == revision.source:
        return revision.text, APPLIED, 0
    merged = merge_three(revision.source, today, revision.text, use_git=use_git)
    return merged.text, (CONFLICTED if merged.conflicts else MERGED), merged.conflicts


def _today(agreed: AgreedRevision) -> SourceDocument:
    """The document as it is in the working tree (``TARGET_UNREADABLE`` when it cannot be read)."""
    try:
        return read_source(agreed.document)
    except SourceUnreadable as exc:
        raise DuelError(ErrorCode.TARGET_UNREADABLE, f"cannot read the document {agreed.shown}: {exc.reason}") from None


def _write(target: Path, text: str, *, like: Path) -> Path:
    """``text`` written over ``target`` at once; the file keeps its mode, a new one takes ``like``'s."""
    try:
        mode = stat.S_IMODE(os.stat(target if os.path.exists(target) else like).st_mode)
        write_atomic(target, text.encode("utf-8"), mode=mode)
        os.chmod(target, mode)  # the umask narrowed the new file's
    except OSError as exc:
        raise DuelError(ErrorCode.STORAGE_FAILED, f"cannot write {target}: {exc.strerror or exc}") from None
    return target
