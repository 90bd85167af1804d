"""Paths that data names stay inside the project.

A record names the document it revises, a project's configuration names a debate dir, a
repository holds symbolic links: all of it is written by whoever wrote the repository. A path
duel reads or writes because such data says so is resolved (symbolic links followed) and
refused (``PATH_OUTSIDE_PROJECT``) when it leaves the project or lands inside ``.git/``, where a
written line becomes a command git runs (``core.fsmonitor``, a hook). The project is the git
work tree, else the folder the command runs in. A path the user types on the command line is
the user's choice and is not confined. A base module: imports only :mod:`.errors` and
:mod:`.vocabulary`.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import DuelError
from .vocabulary import ErrorCode

__all__ = ["confine", "is_markdown", "project_of"]

MARKDOWN_SUFFIXES = (".md", ".markdown")
GIT_DIR = ".git"


def project_of(folder: str | os.PathLike[str]) -> Path:
    """The git work tree holding ``folder``, else ``folder`` itself (both resolved)."""
    start = Path(os.path.realpath(folder))
    for candidate in (start, *start.parents):
        if (candidate / GIT_DIR).exists():
            return candidate
    return start


def is_markdown(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a Markdown file (``.md`` or ``.markdown``), as a join requires."""
    return os.fspath(path).lower().endswith(MARKDOWN_SUFFIXES)


def confine(path: str | os.PathLike[str], *, project: str | os.PathLike[str], what: str, hint: str = "") -> Path:
    """``path`` resolved, when it stays inside ``project`` and outside every ``.git``; else
    ``PATH_OUTSIDE_PROJECT`` naming ``what`` (and ``hint``, what the user may do about it).

    The check is on the resolved path, so a symbolic link anywhere on the way (the file, a folder
    above it) is judged by where it leads. A path that does not exist yet resolves as far as it exists.
    """
    base = os.path.realpath(project)
    real = os.path.realpath(path)
    shown = os.path.normpath(path)
    leads = "" if real == os.path.abspath(shown) else f" (it leads to {real})"
    if os.path.commonpath([real, base]) != base:
        raise DuelError(
            ErrorCode.PATH_OUTSIDE_PROJECT,
            f"{what} {shown} lies outside the project {base}{leads}" + (f": {hint}" if hint else ""),
            {"path": shown, "resolved": real, "project": base},
        )
    if GIT_DIR in (part.lower() for part in Path(real).relative_to(base).parts):
        raise DuelError(
            ErrorCode.PATH_OUTSIDE_PROJECT,
            f"{what} {shown} lands inside .git/{leads}: duel never reads or writes git's own files",
            {"path": shown, "resolved": real, "project": base},
        )
    return Path(real)
