"""Turns played from a directory of Markdown files, for demos, tests and reproducible debates."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from . import ProviderError, TurnRequest


class ScriptedProvider:
    """Returns the ``*.md`` files of a directory in sorted order, one per compose(), as they are.

    ``cursor_path``, when set (for instance once the participant has joined, to a file in its
    state), keeps how many files were played, so a resumed participant continues the script.
    """

    name = "scripted"

    def __init__(self, directory: str | Path, cursor_path: Path | None = None):
        self.directory = Path(directory).expanduser()
        self.files = sorted(self.directory.glob("*.md")) if self.directory.is_dir() else []
        if not self.files:
            raise ProviderError("INVALID_ARGUMENT", f"scripted:{directory} is not a directory holding *.md turns")
        self.model = f"scripted:{self.directory.resolve().name}"
        self.cursor_path = cursor_path
        self._played = 0

    def compose(self, request: TurnRequest, progress: Callable[[int], None]) -> str:
        played = self._read_cursor()
        if played >= len(self.files):
            raise ProviderError(
                "SCRIPT_EXHAUSTED", f"all {len(self.files)} scripted turns of {self.directory} have been played"
            )
        text = self.files[played].read_text(encoding="utf-8")
        self._write_cursor(played + 1)
        return text

    def _read_cursor(self) -> int:
        if self.cursor_path is None or not self.cursor_path.exists():
            return self._played
        content = self.cursor_path.read_text(encoding="utf-8").strip()
        if not content.isdigit():
            raise ProviderError(
                "INVALID_ARGUMENT", f"the script cursor {self.cursor_path} holds {content!r}, not a count"
            )
        return int(content)

    def _write_cursor(self, played: int) -> None:
        self._played = played
        if self.cursor_path is not None:
            # Replace, never rewrite in place: a crash leaves the old count or the new one.
            temporary = self.cursor_path.with_name(f"{self.cursor_path.name}.tmp")
            temporary.write_text(f"{played}\n", encoding="utf-8")
            os.replace(temporary, self.cursor_path)
