"""git, run on a checkout whose content a pull request (a fork's too) chose: nothing git reads from the
repository may make it run a command. No system configuration, no hooks, no file-system monitor, no pager, no
external diff and no textconv driver (a ``.gitattributes`` can name one); paths read with ``-z``, as they are.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..errors import DuelError, invalid_argument

__all__ = ["changed_paths", "diff_of", "file_at", "git_root", "head_commit", "tracked_paths"]

_SAFE = (
    "-c",
    "core.fsmonitor=",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.pager=cat",
    "-c",
    "diff.external=",
    "--no-pager",
)
_TIMEOUT_SECONDS = 60


def _git(folder: Path, *args: str) -> bytes:
    """``git`` in ``folder``, safely; its standard output. A refusal (no such commit: a shallow checkout) is an
    ``INVALID_ARGUMENT`` one, naming the command: the workflow must fetch the history."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    env.pop("GIT_EXTERNAL_DIFF", None)
    try:
        done = subprocess.run(
            ["git", *_SAFE, *args], cwd=folder, capture_output=True, env=env, timeout=_TIMEOUT_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise invalid_argument(f"git {args[0]} did not run: {exc}") from None
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise invalid_argument(f"git {' '.join(args[:2])} failed: {why[-1] if why else done.returncode}")
    return done.stdout


def git_root(folder: Path) -> Path:
    """The root of the git work tree ``folder`` is in."""
    return Path(os.fsdecode(_git(folder, "rev-parse", "--show-toplevel").rstrip(b"\n")))


def head_commit(folder: Path) -> str:
    """The commit checked out."""
    return _git(folder, "rev-parse", "HEAD").decode("ascii").strip()


def changed_paths(folder: Path, base: str, head: str) -> list[str]:
    """The paths ``head`` adds, modifies or renames to since it left ``base`` (their merge base, as GitHub's
    "Files changed" shows a pull request), from the repository's root."""
    listed = _git(
        folder,
        "diff",
        "--name-only",
        "-z",
        "--no-ext-diff",
        "--no-textconv",
        "--diff-filter=AMR",
        f"{base}...{head}",
        "--",
    )
    return [os.fsdecode(name) for name in listed.split(b"\0") if name]


def tracked_paths(folder: Path) -> list[str]:
    """Every path git tracks in the work tree, from the repository's root."""
    listed = _git(folder, "ls-files", "-z", "--full-name", ":/")
    return [os.fsdecode(name) for name in listed.split(b"\0") if name]


def diff_of(folder: Path, base: str, head: str, path: str) -> str:
    """The pull request's diff of one file, as GitHub shows it (three lines of context)."""
    shown = _git(
        folder,
        "diff",
        "-U3",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        f"{base}...{head}",
        "--",
        f":(literal){path}",
    )
    return shown.decode("utf-8", "replace")


def file_at(folder: Path, commit: str, path: str) -> str | None:
    """The text of ``path`` at ``commit`` (no filter or textconv: the blob as committed); None when the commit
    has no such file or it is not UTF-8."""
    try:
        blob = _git(folder, "cat-file", "blob", f"{commit}:{path}")
    except DuelError:  # no such path at that commit
        return None
    try:
        return blob.decode("utf-8")
    except UnicodeDecodeError:
        return None
