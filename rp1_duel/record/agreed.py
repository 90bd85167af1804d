"""``duel apply``: the revision a duel agreed on, applied to its document by a person.

A duel that ended ACCEPTED_CONSENSUS agreed on one exact revision of its source: every seat's
latest turn accepted it (docs/protocol.md section 7, "Proposed edits"). Participants never write
the source; whoever runs ``duel apply`` does, and nothing the record says is taken on trust: the
artifact must pass ``duel validate``, the revision is recomputed from its turns over the source's
recorded bytes, and the document in the working tree must still have those bytes, or nothing is
written. A write replaces the whole file at once and keeps its mode.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from ..errors import DuelError, invalid_argument
from ..files import write_atomic
from ..turns.revision import Revision
from ..turns.source import SourceDocument, SourceUnreadable, read_source
from ..vocabulary import ACCEPTED_CONSENSUS, CLOSED, ErrorCode
from .artifact import FrontMatter
from .ending import last_seat_turns
from .history import RecordFile, read_failure
from .sources import source_document, source_location, tree_root
from .validate import validate_record

__all__ = ["AgreedRevision", "ApplyResult", "agreed_revision", "apply_agreed"]


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class ApplyResult:
    """What :func:`apply_agreed` did: the revision, and where the revised document went, if anywhere."""

    agreed: AgreedRevision
    written: Path | None  # None with ``check``, or when the duel agreed to change nothing
    check: bool

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
        }

    def to_text(self) -> str:
        """As ``duel apply`` prints it: one line."""
        agreed = self.agreed
        if not agreed.changed:
            return f"no change to the document: the duel agreed on {agreed.shown} as it is ({agreed.id})"
        added, removed = agreed.revision.counts()
        lines = f"+{added} -{removed} lines"
        if self.check:
            return f"{agreed.id} applies to {agreed.shown}: {lines} (--check: nothing written)"
        elsewhere = "" if self.written == agreed.document else f", written to {self.written}"
        return f"applied {agreed.id} to {agreed.shown}{elsewhere}: {lines}"


def agreed_revision(
    artifact_path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None
) -> AgreedRevision:
    """The revision the closed duel of ``artifact_path`` agreed on, over its document as it is now.

    ``root`` bounds where the document may be, as for ``duel validate`` (default: the artifact's
    git work tree, else the folder above the artifact's folder). Raises DuelError:
    ``ARTIFACT_UNREADABLE``; ``ARTIFACT_TAMPERED`` when the artifact does not validate;
    ``INVALID_ARGUMENT`` when the duel is open or ended without consensus; ``PATH_OUTSIDE_PROJECT`` when
    the document leads outside ``root`` or into ``.git/``; ``TARGET_NOT_MARKDOWN`` when it leads to another
    kind of file; ``TARGET_UNREADABLE``; ``SOURCE_MISMATCH`` when the document changed since the duel.
    """
    path = Path(artifact_path)
    try:  # read once: validated, then its revision replayed over the document as it is now
        record = RecordFile.read(path, root=root)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DuelError(
            ErrorCode.ARTIFACT_UNREADABLE, f"{path}: cannot read the artifact: {read_failure(exc)}"
        ) from None
    report = validate_record(record, root=root).report
    if report.problems:
        first = report.problems[0]
        raise DuelError(
            ErrorCode.ARTIFACT_TAMPERED,
            f"{path} does not validate ({len(report.problems)} problems, the first: {first.code} {first.message}): "
            f"run duel validate {path}",
        )
    if report.status != CLOSED or report.outcome != ACCEPTED_CONSENSUS:
        ended = "is still open" if report.status != CLOSED else f"ended {report.outcome}"
        raise invalid_argument(f"no agreed revision: the duel {ended}")
    front = cast("FrontMatter", record.front)  # a record without one does not validate
    document, shown = _document(front, path, root)
    history = replace(record, source=document).history(upto=last_seat_turns(front.schedule, len(record.parsed.blocks)))
    revision = cast("Revision", history.revision)  # a History over a source always has one
    return AgreedRevision(path, Path(document.path), shown, revision)


def apply_agreed(
    artifact_path: str | os.PathLike[str],
    *,
    to: str | os.PathLike[str] | None = None,
    check: bool = False,
    root: str | os.PathLike[str] | None = None,
) -> ApplyResult:
    """Write the revision the duel of ``artifact_path`` agreed on over its document, or to ``to``;
    with ``check``, or when the duel agreed to change nothing, write nothing.

    Raises DuelError as :func:`agreed_revision` does, and ``STORAGE_FAILED`` when the write fails
    (the file is then as it was).
    """
    agreed = agreed_revision(artifact_path, root=root)
    if check or not agreed.changed:
        return ApplyResult(agreed, None, check)
    target = agreed.document if to is None else Path(to)
    try:
        # The file keeps its mode; a new one takes the document's.
        mode = stat.S_IMODE(os.stat(target if os.path.exists(target) else agreed.document).st_mode)
        write_atomic(target, agreed.revision.text.encode("utf-8"), mode=mode)
        os.chmod(target, mode)  # the umask narrowed the new file's
    except OSError as exc:
        raise DuelError(ErrorCode.STORAGE_FAILED, f"cannot write {target}: {exc.strerror or exc}") from None
    return ApplyResult(agreed, target, check)


def _document(front: FrontMatter, artifact: Path, root: str | os.PathLike[str] | None) -> tuple[SourceDocument, str]:
    """The source in the working tree, read only inside ``root`` (outside ``.git/``, a Markdown file) and
    only at the recorded hash;
    and its path as a person reads it."""
    shown = os.path.normpath(source_location(front.source_path, artifact_path=artifact))
    real = source_document(
        front.source_path, artifact_path=artifact, tree=root if root is not None else tree_root(artifact)
    )
    try:
        document = read_source(real)
    except SourceUnreadable as exc:
        raise DuelError(ErrorCode.TARGET_UNREADABLE, f"cannot read the document {shown}: {exc.reason}") from None
    if document.sha256 != front.source_sha256:
        raise DuelError(
            ErrorCode.SOURCE_MISMATCH,
            f"{shown} has changed since the duel: the agreed revision applies to the version it recorded "
            f"(SHA-256 {front.source_sha256[:12]}…), not to this one ({document.sha256[:12]}…)",
            {"source_sha256": document.sha256, "duel_source_sha256": front.source_sha256},
        )
    return document, shown
