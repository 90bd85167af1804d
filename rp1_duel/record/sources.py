"""Which source text a committed artifact is checked against, read without trusting it.

An artifact names its source (``source_path``) and records its hash (``source_sha256``).
``duel validate`` runs in CI on files anyone can write, so the path is data, not
authority: the source is read only inside the artifact's tree (its git work tree, else
the folder above the artifact's folder), only if it is a regular file of bounded size,
and only the version the duel recorded counts. When today's copy has changed, that
version is looked up by hash in the git history, then in the copy a debate dir pinned at
the join (:func:`pinned_copy`, beside the artifact, when its state folder is there); when
it cannot be found, source locators are not checked (a note says so) rather than failing
a correct record.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..confinement import confine, is_markdown
from ..digest import sha256_hex
from ..errors import DuelError
from ..files import MAX_SOURCE_BYTES, read_bounded
from ..turns import SourceDocument, SourceUnreadable, read_source
from ..vocabulary import ErrorCode

__all__ = ["pinned_copy", "recorded_source", "source_document", "source_location", "tree_root"]

_DUEL_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,80}")
GIT_HISTORY_LIMIT = 200  # commits searched for the recorded version of a source
GIT_TIMEOUT_SECONDS = 20


def tree_root(artifact_path: str | os.PathLike[str]) -> Path:
    """The git work tree holding the artifact, else the folder above the artifact's folder."""
    folder = Path(os.path.realpath(artifact_path)).parent
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder.parent


def pinned_copy(debate_root: str | os.PathLike[str], duel_id: str) -> Path:
    """Where a debate dir keeps the source's bytes as the join read them (docs/protocol.md section 6,
    "The source"): the service checks every turn against this copy, whatever the file becomes."""
    return Path(debate_root) / ".duel" / "duels" / duel_id / "source"


def source_location(recorded_source_path: str, *, artifact_path: str | os.PathLike[str]) -> Path:
    """Where the recorded source path points, read from the artifact's folder."""
    recorded = Path(recorded_source_path)
    return recorded if recorded.is_absolute() else Path(artifact_path).parent / recorded


def source_document(recorded_path: str, *, artifact_path: str | os.PathLike[str], tree: str | os.PathLike[str]) -> Path:
    """Where the document an artifact revises is, resolved: refused (``DuelError``) when it lies outside
    ``tree`` or inside ``.git/`` (``PATH_OUTSIDE_PROJECT``, :func:`~rp1_duel.confinement.confine`), or
    when it is not a Markdown file where it leads (``TARGET_NOT_MARKDOWN``), as the join requires."""
    location = source_location(recorded_path, artifact_path=artifact_path)
    real = confine(location, project=tree, what="the document", hint="pass --root to allow it")
    if not is_markdown(location) or not is_markdown(real):
        raise DuelError(
            ErrorCode.TARGET_NOT_MARKDOWN, f"the document {os.path.normpath(location)} is not a Markdown file ({real})"
        )
    return real


def recorded_source(
    recorded_path: str,
    *,
    recorded_sha256: str,
    artifact_path: str | os.PathLike[str],
    root: str | os.PathLike[str] | None,
    duel_id: str = "",
) -> tuple[SourceDocument | None, str | None]:
    """The source version the duel recorded, and a note for the reader when there is one; ``duel_id``
    finds the copy the debate dir pinned at the join when the file and git no longer have it."""
    tree = os.path.realpath(root if root is not None else tree_root(artifact_path))
    try:
        real = str(source_document(recorded_path, artifact_path=artifact_path, tree=tree))
    except DuelError as exc:
        return None, f"{exc.message}: it was not read, and source locators were not checked"
    try:
        today: SourceDocument | None = read_source(real)
        reason = ""
    except SourceUnreadable as exc:
        today, reason = None, exc.reason
    if today is not None and today.sha256 == recorded_sha256:
        return today, None
    found = _from_git_history(real, recorded_sha256, tree)
    if found is not None:
        document, commit = found
        return document, (
            f"source {recorded_path} changed since the duel: checked against its recorded version "
            f"from commit {commit[:12]}"
        )
    pinned = _pinned(Path(artifact_path).parent, duel_id, recorded_sha256, real, tree=tree) if duel_id else None
    if pinned is not None:
        return pinned, f"source {recorded_path} changed since the duel: checked against the copy pinned at the join"
    if today is None:
        return None, f"source {recorded_path} not found ({reason}): source locators were not checked"
    return None, (
        f"source {recorded_path} changed since the duel and its recorded version is not in the git "
        "history: source locators were not checked"
    )


def _pinned(debate_root: Path, duel_id: str, sha256: str, real: str, *, tree: str) -> SourceDocument | None:
    if not _DUEL_ID.fullmatch(duel_id):  # the front matter's word: never a path out of the state folder
        return None
    try:
        pinned = confine(pinned_copy(debate_root, duel_id), project=tree, what="the pinned copy")
        data = read_bounded(pinned, MAX_SOURCE_BYTES)
        return SourceDocument.from_bytes(data, real) if sha256_hex(data) == sha256 else None
    except (OSError, ValueError, DuelError):  # UnicodeDecodeError is a ValueError; DuelError: a link out
        return None


def _from_git_history(real: str, sha256: str, tree: str) -> tuple[SourceDocument, str] | None:
    if not os.path.exists(os.path.join(tree, ".git")):
        return None
    import subprocess  # with threading and selectors: not for a join, which never reads history

    relative = Path(os.path.relpath(real, tree)).as_posix()
    try:
        log = subprocess.run(
            ["git", "-C", tree, "log", f"-n{GIT_HISTORY_LIMIT}", "--format=%H", "--", relative],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
        for commit in log.stdout.split():
            blob = f"{commit}:{relative}"
            size = subprocess.run(
                ["git", "-C", tree, "cat-file", "-s", blob],
                capture_output=True,
                text=True,
                timeout=GIT_TIMEOUT_SECONDS,
                check=False,
            )
            if size.returncode != 0 or not size.stdout.strip().isdigit() or int(size.stdout) > MAX_SOURCE_BYTES:
                continue  # deleted in that commit, or too large to be a source the service accepted
            shown = subprocess.run(
                ["git", "-C", tree, "cat-file", "blob", blob],
                capture_output=True,
                timeout=GIT_TIMEOUT_SECONDS,
                check=False,
            )
            data = shown.stdout
            if shown.returncode == 0 and sha256_hex(data) == sha256:
                try:
                    return SourceDocument.from_bytes(data, real), commit
                except UnicodeDecodeError:
                    return None
    except (OSError, subprocess.SubprocessError):
        return None  # no git, or it did not answer in time: as if there were no history
    return None
