"""Turns written by a person: in an editor on a prepared skeleton, or read from standard input."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ...vocabulary import SECTIONS, ErrorCode, ReasoningLevel
from .base import Composition, Progress, ProviderError, TurnRequest

__all__ = ["SECTION_LABELS", "HumanProvider"]

SECTION_LABELS = tuple(f"**{name}**" for name in SECTIONS)

# Lines for the person only (the instruction, the violations of a rejected draft);
# compose() drops them, so they never reach the debate.
NOTE_PREFIX = "%% "


class HumanProvider:
    """A person writes the turns: in an editor on a prepared skeleton, or on standard input."""

    name = "human"
    remote = False
    model = "human"
    reasoning: ReasoningLevel | None = None  # no model: nothing to reason

    def __init__(self, *, editor: str | None = None, stdin: TextIO | None = None, stderr: TextIO | None = None):
        self.editor = editor
        self.stdin = sys.stdin if stdin is None else stdin
        self.stderr = sys.stderr if stderr is None else stderr
        # The last turn written and its heading: a repair of that turn reopens it, not a blank skeleton.
        self._draft: tuple[str | None, str] | None = None

    def preflight(self) -> str:
        """The editor must be there before the person is seated."""
        editor = self.editor or (_default_editor() if self.stdin.isatty() else None)
        if editor is None:
            return "a person writes the turns on standard input"
        words = shlex.split(editor)
        if not words or shutil.which(words[0]) is None:
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, f"cannot run the editor {editor!r}: set $VISUAL or $EDITOR")
        return f"a person writes the turns in {editor}"

    def compose(
        self,
        request: TurnRequest,
        progress: Callable[[Progress], None],  # noqa: ARG002  the Provider protocol's; a person reports no progress
    ) -> Composition:
        """The turn the person writes; an empty or unchanged one is ``HUMAN_ABORTED``."""
        heading = request.heading
        skeleton = _skeleton(heading)
        editor = self.editor or (_default_editor() if self.stdin.isatty() else None)
        if editor is None:
            self.stderr.write(f"{request.instruction.rstrip()}\n\nReading the turn from standard input to its end.\n")
            text = _drop_notes(self.stdin.read())
        else:
            draft = self._draft[1] if self._draft and self._draft[0] == heading else skeleton
            text = self._edit(editor, request.instruction, draft)
        if not text or text == skeleton:
            raise ProviderError(
                ErrorCode.HUMAN_ABORTED, "no turn was written (empty or unchanged), so none is submitted"
            )
        self._draft = (heading, text)
        return Composition(text)

    def _edit(self, editor: str, instruction: str, draft: str) -> str:
        notes = "".join(f"{NOTE_PREFIX}{line}".rstrip() + "\n" for line in instruction.splitlines())
        descriptor, name = tempfile.mkstemp(prefix="duel-turn-", suffix=".md")
        path = Path(name)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(f"{notes}\n{draft}")
        self.stderr.write(f"Opening {editor} on {path} (lines starting with %% are dropped).\n")
        try:
            status = subprocess.run([*shlex.split(editor), str(path)], check=False).returncode
        except OSError as error:
            path.unlink()
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, f"cannot run the editor {editor!r}: {error}") from error
        if status != 0:
            raise ProviderError(
                ErrorCode.HUMAN_ABORTED, f"the editor exited with status {status}; the draft is kept in {path}"
            )
        text = path.read_text(encoding="utf-8")
        path.unlink()
        return _drop_notes(text)


def _skeleton(heading: str | None) -> str:
    lines = ([heading] if heading else []) + [f"{label}\n" for label in SECTION_LABELS]
    return "\n".join(lines).strip() + "\n"


def _drop_notes(text: str) -> str:
    kept = [line for line in text.splitlines() if not (line.startswith(NOTE_PREFIX) or line.rstrip() == "%%")]
    body = "\n".join(kept).strip()
    return f"{body}\n" if body else ""


def _default_editor() -> str:
    return os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
