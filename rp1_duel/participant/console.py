"""What a person sees of a participant on standard error."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from ..turns.rules import TurnViolation


class ConsoleReporter:
    """Prefixed status lines; a live token counter while a model writes (on a terminal)."""

    def __init__(self, name: str, stream: TextIO | None = None, quiet: bool = False):
        self.stream = stream or sys.stderr
        self.prefix = f"[{name}] "
        self.quiet = quiet
        self.live = self.stream.isatty()
        self._tokens = 0
        self._started = 0.0
        self._shown = 0.0

    def _line(self, text: str) -> None:
        if self.quiet:
            return
        if self._tokens and self.live:
            self.stream.write("\r\x1b[K")
        self.stream.write(self.prefix + text + "\n")
        self.stream.flush()

    def state(self, state: str, detail: str) -> None:
        self._finish_progress()
        self._line(f"{state.replace('_', ' ')}: {detail}" if detail else state.replace("_", " "))

    def progress(self, tokens: int) -> None:
        now = time.monotonic()
        if not self._tokens:
            self._started = now
        self._tokens = tokens
        if self.live and not self.quiet and now - self._shown > 0.1:
            self._shown = now
            self.stream.write(f"\r\x1b[K{self.prefix}writing… {tokens} tokens, {now - self._started:.0f}s")
            self.stream.flush()

    def _finish_progress(self) -> None:
        if self._tokens:
            tokens, self._tokens = self._tokens, 0
            if self.live and not self.quiet:
                self.stream.write("\r\x1b[K")
            self._line(f"wrote {tokens} tokens in {time.monotonic() - self._started:.1f}s")

    def turn_accepted(self, number: int, stance: str) -> None:
        self._finish_progress()
        self._line(f"turn {number} accepted ({stance})")

    def turn_rejected(self, number: int, violations: list[TurnViolation], attempt: int) -> None:
        self._finish_progress()
        codes = ", ".join(sorted({v.code for v in violations}))
        self._line(f"turn {number} draft {attempt} rejected: {codes}; asking for a repair")
        for violation in violations[:8]:
            where = f"line {violation.line}: " if violation.line else ""
            self._line(f"  {where}{violation.code} {violation.message}")
