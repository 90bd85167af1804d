"""A three-way merge of a document: the version a duel recorded, the document as it is now, and the
revision the duel agreed on.

Documents in a repository move on while a duel is reviewed. ``duel apply`` then brings the agreed
change to today's document as git merges a branch: ``git merge-file`` where git is installed (the
merge people already know, and the one ``git apply -3`` would make), else the ``merge3`` package,
imported only then. Where both sides changed the same lines, the result holds conflict markers
labelled ``today`` and ``agreed``.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

TODAY, RECORDED, AGREED = "today", "recorded", "agreed"  # the conflict markers' labels
GIT_TIMEOUT_SECONDS = 30


class Merged(NamedTuple):
    """The merged text, and how many places conflict (each between markers in the text)."""

    text: str
    conflicts: int


def merge_three(recorded: str, today: str, agreed: str, *, use_git: bool = True) -> Merged:
    """``today`` with the change from ``recorded`` to ``agreed`` merged in. ``use_git`` False takes
    the pure-Python merge even where git is installed (the tests compare the two)."""
    git = shutil.which("git") if use_git else None
    return _git_merge(git, recorded, today, agreed) if git else _merge3(recorded, today, agreed)


def _git_merge(git: str, recorded: str, today: str, agreed: str) -> Merged:
    with tempfile.TemporaryDirectory(prefix="duel-merge-") as folder:
        paths = [Path(folder) / name for name in (TODAY, RECORDED, AGREED)]
        for path, text in zip(paths, (today, recorded, agreed), strict=True):
            path.write_bytes(text.encode("utf-8"))
        done = subprocess.run(
            [git, "merge-file", "-p", "-L", TODAY, "-L", RECORDED, "-L", AGREED, *map(str, paths)],
            capture_output=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    if done.returncode < 0 or done.returncode > 127:  # an error, not a count of conflicts
        return _merge3(recorded, today, agreed)
    return Merged(done.stdout.decode("utf-8"), done.returncode)


def _merge3(recorded: str, today: str, agreed: str) -> Merged:
    from merge3 import Merge3  # only where git is not installed

    merge = Merge3(
        recorded.splitlines(keepends=True), today.splitlines(keepends=True), agreed.splitlines(keepends=True)
    )
    lines = merge.merge_lines(name_a=TODAY, name_b=AGREED)
    conflicts = sum(region[0] == "conflict" for region in merge.merge_regions())
    return Merged("".join(lines), conflicts)
