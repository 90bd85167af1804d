"""Files written whole or not at all, files read bounded, and the one answer a failing disk gets.

:func:`write_atomic` (a temp file, fsync, rename, fsync of the folder) writes every file
duel leaves: the state, the artifact, the verification sidecar, the assessment cache, a
report; :func:`storage_errors` turns the operating system's refusals into
``STORAGE_FAILED``. :func:`read_bounded` reads every file a debate folder, a repository or
a configuration location holds: a regular file only (never a FIFO, a device or a socket,
which would block or never end), at most the bound of its kind, ``MAX_*_BYTES`` below
(docs/protocol.md section 3, "Files duel reads"). A base module: imports only
:mod:`.errors` and :mod:`.vocabulary`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from .errors import DuelError
from .vocabulary import ErrorCode

__all__ = [
    "MAX_ARTIFACT_BYTES",
    "MAX_CACHED_TEXT_BYTES",
    "MAX_CACHE_BYTES",
    "MAX_CONFIG_BYTES",
    "MAX_EVENT_LOG_BYTES",
    "MAX_PATCH_BYTES",
    "MAX_SIDECAR_BYTES",
    "MAX_SOURCE_BYTES",
    "MAX_STATE_BYTES",
    "NotReadable",
    "fsync_dir",
    "open_regular",
    "read_bounded",
    "storage_errors",
    "write_all",
    "write_atomic",
]

_MIB = 1024 * 1024
# The bound of each kind of file duel reads: a file past it is refused, never read whole.
MAX_SOURCE_BYTES = 16 * _MIB  # the document under debate
MAX_ARTIFACT_BYTES = 8 * _MIB  # 50 turns of 64 KiB, the header and a summary fit well inside
MAX_PATCH_BYTES = 2 * MAX_SOURCE_BYTES + _MIB  # a revision's diff: at most every line out and in again
MAX_STATE_BYTES = 8 * _MIB  # state.json, index.json, a participant's stash: bookkeeping, no more than a record
MAX_EVENT_LOG_BYTES = 64 * _MIB  # events.jsonl: every event of a duel, usage and verdicts included
MAX_SIDECAR_BYTES = 16 * _MIB  # a verification sidecar
MAX_CACHE_BYTES = 4 * _MIB  # a report's assessment cache
MAX_CACHED_TEXT_BYTES = 64 * _MIB  # a fetched page's text, cached
MAX_CONFIG_BYTES = _MIB  # duel.toml, duel.local.toml, the user's config.toml, a lineup, the trust file


class NotReadable(ValueError):
    """A file duel refuses to read: not a regular file, or larger than the bound of its kind."""


def open_regular(path: str | os.PathLike[str], flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """A descriptor of ``path`` opened with ``flags``, refused (:class:`NotReadable`) unless it is a
    regular file. Non-blocking, so a FIFO never stalls the open; checked after the open, so no
    swap between a check and the open can slip a device in. Raises OSError too."""
    fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0), mode)
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except BaseException:
        os.close(fd)
        raise
    if not regular:
        os.close(fd)
        raise NotReadable("not a regular file")
    return fd


def read_bounded(path: str | os.PathLike[str], limit: int) -> bytes:
    """A regular file's bytes, at most ``limit`` of them (:func:`open_regular`). Raises OSError,
    or :class:`NotReadable` (a ValueError) saying why the file is refused."""
    with os.fdopen(open_regular(path), "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise NotReadable(f"larger than {_size(limit)}")
    return data


def _size(limit: int) -> str:
    return f"{limit // _MIB} MiB" if limit >= _MIB else f"{limit // 1024} KiB"


def write_atomic(
    path: Path,
    data: bytes,
    *,
    mode: int = 0o600,
    temp_dir: Path | None = None,
    exclusive: bool = False,
    sync_folder: bool = True,
) -> None:
    """Write a temp file, fsync it, move it to ``path``, fsync the folder (unless not ``sync_folder``).

    ``temp_dir`` keeps the temp file elsewhere on the same filesystem (the artifact's is
    written inside ``.duel/``, so a crash never leaves one in a folder git sees).
    ``exclusive`` refuses to replace an existing ``path`` (FileExistsError).
    Nothing is left behind when a step fails. Once the file is in place, a failing
    folder fsync no longer undoes the write: every process already sees it.
    """
    # os.urandom is what secrets.token_hex draws on; importing secrets costs `duel tools` start-up.
    tmp = (temp_dir or path.parent) / f".{path.name}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if exclusive:
            os.link(tmp, path)
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sync_folder:
        with contextlib.suppress(OSError):  # EIO, or a filesystem that cannot fsync folders
            fsync_dir(path.parent)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd``, however many ``os.write`` calls it takes."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def fsync_dir(folder: Path) -> None:
    """Fsync a folder, so a rename or a new file in it survives a crash."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def storage_errors(root: Path) -> Iterator[None]:
    """An OS error on the debate dir (disk full, read-only, permission denied) becomes
    ``STORAGE_FAILED``: one answer with a code, never a traceback. Writes are atomic and
    the state is written last, so whatever failed left the duel as it was."""
    try:
        yield
    except OSError as exc:
        where = exc.filename if isinstance(exc.filename, str) else str(root)
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise DuelError(
            ErrorCode.STORAGE_FAILED,
            f"cannot use {where}: {reason}",
            {"path": where, "errno": errno.errorcode.get(exc.errno or 0)},
        ) from None
