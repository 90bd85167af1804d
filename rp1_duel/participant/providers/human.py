"""Turns written by a person: in an editor on a prepared skeleton, or read from standard input."""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
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
WATCH_SECONDS = 0.2  # how often an open editor's participant checks that it is still wanted
END_EDITOR_SECONDS = 3.0  # an editor asked to end (SIGTERM) is killed after this


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
        # The last turn written and its heading: a repair of that turn reopens it, not a blank skeleton
        # (a request with a draft_path keeps it in that file instead, across runs).
        self._draft: tuple[str | None, str] | None = None
        self._editor: subprocess.Popen[bytes] | None = None  # the editor open now, ended by stop()
        self._stopped = threading.Event()

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
            self.stderr.write(
                f"{(request.instruction + request.briefing).rstrip()}\n\nReading the turn from standard input to its end.\n"
            )
            text = _drop_notes(self.stdin.read())
        elif request.draft_path is not None:
            text = self._edit(editor, request, Path(request.draft_path), skeleton, kept=True)
        else:
            with tempfile.TemporaryDirectory(prefix="duel-turn-") as folder:  # nothing is left behind
                scratch = Path(folder) / "turn.md"
                if self._draft and self._draft[0] == heading:
                    scratch.write_text(self._draft[1], encoding="utf-8")
                text = self._edit(editor, request, scratch, skeleton, kept=False)
        if not text or text == skeleton:
            raise ProviderError(
                ErrorCode.HUMAN_ABORTED, "no turn was written (empty or unchanged), so none is submitted"
            )
        self._draft = (heading, text)
        return Composition(text=text)

    def stop(self) -> None:
        """End the editor open now, if any (SIGTERM, then SIGKILL), and any opened later: the participant is
        stopping (a signal, an error, the turn deadline). What the person saved stays in the draft's file."""
        self._stopped.set()
        editor = self._editor
        if editor is None or editor.poll() is not None:
            return
        editor.terminate()
        try:
            editor.wait(END_EDITOR_SECONDS)
        except subprocess.TimeoutExpired:
            editor.kill()
            editor.wait()

    def _edit(self, editor: str, request: TurnRequest, path: Path, skeleton: str, *, kept: bool) -> str:
        """The person's text from ``editor`` opened on ``path``: the notes above the draft kept there (a
        rejected or aborted one), else the skeleton. ``kept``: the file outlives the request (owner-only)."""
        notes = "".join(
            f"{NOTE_PREFIX}{line}".rstrip() + "\n" for line in (request.instruction + request.briefing).splitlines()
        )
        draft = _kept_draft(path) or skeleton
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(f"{notes}\n{draft}")
        self.stderr.write(f"Opening {editor} on {path} (lines starting with %% are dropped).\n")
        status = self._run_editor(editor, path)
        if status != 0:
            where = (
                f"the draft is kept in {path}, and the same command run again reopens it"
                if kept
                else "no draft is kept"
            )
            raise ProviderError(ErrorCode.HUMAN_ABORTED, f"the editor exited with status {status}; {where}")
        return _kept_draft(path)

    def _run_editor(self, editor: str, path: Path) -> int:
        """Run the editor to its end, watching meanwhile for a stop and for this process's output closing (a
        pipe whose reader quit: the person is gone), either of which ends it."""
        try:
            self._editor = process = subprocess.Popen([*shlex.split(editor), str(path)])
        except OSError as error:
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, f"cannot run the editor {editor!r}: {error}") from error
        try:
            while True:
                try:
                    return process.wait(WATCH_SECONDS)
                except subprocess.TimeoutExpired:
                    pass
                if self._stopped.is_set():
                    self.stop()
                elif _closed([self.stderr, sys.stdout]):
                    self.stop()
                    raise ProviderError(
                        ErrorCode.INTERRUPTED,
                        f"the output was closed while the editor was open: it was ended, and the draft is kept in {path}",
                    )
        finally:
            self._editor = None


def _closed(streams: list[TextIO]) -> bool:
    """Whether any of ``streams`` is a pipe whose reader has gone (or a terminal hung up). A stream without a
    descriptor (a StringIO), or a system without poll (Windows), is never seen closed."""
    if not hasattr(select, "poll"):
        return False
    poll = select.poll()
    for stream in streams:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            poll.register(stream.fileno(), select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poll.poll(0))


def _kept_draft(path: Path) -> str:
    """The draft in ``path``, its notes dropped; empty when there is none."""
    try:
        return _drop_notes(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return ""


def _skeleton(heading: str | None) -> str:
    lines = ([heading] if heading else []) + [f"{label}\n" for label in SECTION_LABELS]
    return "\n".join(lines).strip() + "\n"


def _drop_notes(text: str) -> str:
    kept = [line for line in text.splitlines() if not (line.startswith(NOTE_PREFIX) or line.rstrip() == "%%")]
    body = "\n".join(kept).strip()
    return f"{body}\n" if body else ""


def _default_editor() -> str:
    return os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
