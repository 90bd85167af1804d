"""Files written whole or not at all, and the one answer a failing disk gets.

:func:`write_atomic` (a temp file, fsync, rename, fsync of the folder) writes every file
duel leaves: the state, the artifact, the verification sidecar, the assessment cache, a
report; :func:`storage_errors` turns the operating system's refusals into
``STORAGE_FAILED``. A base module: imports only :mod:`.errors` and :mod:`.vocabulary`.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from .errors import DuelError
from .vocabulary import ErrorCode

__all__ = ["fsync_dir", "storage_errors", "write_all", "write_atomic"]


def write_atomic(
    path: Path, data: bytes, *, mode: int = 0o600, temp_dir: Path | None = None, exclusive: bool = False
) -> None:
    """Write a temp file, fsync it, move it to ``path``, fsync the folder.

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
