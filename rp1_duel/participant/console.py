"""What a person sees of a participant on standard error."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Mapping
from typing import TextIO

from ..coordination import Usage, input_figure
from ..printable import printable
from ..turns import TurnViolation
from ..vocabulary import Verdict
from .providers import Progress
from .retry import RetryNotice

__all__ = ["ConsoleReporter"]

TICK_SECONDS = 1.0  # the live line's refresh while the model thinks in silence
QUIET_TICK_SECONDS = 15.0  # not a terminal: a "thinking…" or "writing…" line this often, not a redraw each second
VIOLATIONS_SHOWN = 8  # a draft's violations listed, each on a line; the rest counted


def _turn(number: int, writer: str | None) -> str:
    return f"turn {number}" if writer is None else f"{writer}'s turn {number}"


def _citations(count: int) -> str:
    return f"{count} citation{'' if count == 1 else 's'}"


def _then(repairs_left: int | None) -> str:
    if repairs_left is None:
        return "reopening it to fix, until the turn deadline"
    if repairs_left == 1:
        return "asking for the last repair (last try: one more rejection ends the duel INVALIDATED)"
    return "asking for a repair" if repairs_left else "no repairs left"


class ConsoleReporter:
    """Prefixed status lines; a live line while a model thinks and writes (redrawn on a terminal).

    Times count from the request, so a wait for a rate limit or a silent reasoning phase
    is seen as it happens and counted in the turn's time.
    """

    def __init__(self, name: str, stream: TextIO | None = None, *, quiet: bool = False):
        self.stream = stream or sys.stderr
        self.prefix = f"[{name}] "
        self.quiet = quiet
        self.live = self.stream.isatty()
        self._lock = threading.Lock()  # the ticker thread and the loop write the same stream
        self._progress: Progress | None = None
        self._started: float | None = None  # the request's start, while one is under way
        self._retry_at: float | None = None  # the end of a retry's wait, while one is waited out
        self._drawn = False
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()

    def _write_line(self, text: str) -> None:
        if self.quiet:
            return
        with self._lock:
            if self._drawn:
                self.stream.write("\r\x1b[K")
                self._drawn = False
            self.stream.write(self.prefix + printable(text) + "\n")  # violations quote the model's draft
            self.stream.flush()

    def state(self, state: str, detail: str) -> None:
        """A status line: the state, and what is new in it."""
        self._stop_ticker()
        self._write_line(f"{state.replace('_', ' ')}: {detail}" if detail else state.replace("_", " "))

    def composing(self) -> None:
        """A request began: start the live line (or, off a terminal, the periodic thinking line)."""
        self._stop_ticker()
        self._started, self._progress, self._retry_at = time.monotonic(), None, None
        if self.quiet:
            return
        if not self.live:  # no live line: say the request is under way, and when it ends (composed)
            self._write_line(f"asking the model (a line every {QUIET_TICK_SECONDS:.0f} s until it answers)")
        self._stop.clear()
        self._ticker = threading.Thread(target=self._tick, name="duel-console-ticker", daemon=True)
        self._ticker.start()

    def progress(self, progress: Progress) -> None:
        """Note what the model wrote so far; redraw the live line on a terminal."""
        self._progress = progress
        if self.live:
            self._draw()

    def retrying(self, notice: RetryNotice) -> None:
        """Say why the request failed and when it is tried again; the clock shows the wait, not thinking."""
        self._progress = None
        self._retry_at = time.monotonic() + notice.wait_seconds
        self._write_line(f"{notice.error.message}; retrying in {notice.wait_seconds:.0f} s (attempt {notice.attempt})")

    def composed(self, usage: Usage) -> None:
        """Stop the live line and say what the draft used."""
        self._stop_ticker()
        about = "~" if usage.output_estimated else ""
        about_input = "~" if usage.input_estimated else ""
        tries = f"; {usage.requests} requests" if usage.requests > 1 else ""
        estimated = "; ~ estimated: the server sent no count" if usage.output_estimated or usage.input_estimated else ""
        self._write_line(
            f"wrote {about}{usage.output_tokens} tokens in {usage.seconds:.1f}s; input {about_input}{input_figure(usage)}"
            f"{tries}{estimated}"
        )

    def turn_accepted(self, number: int, stance: str) -> None:
        """Say the turn was appended, with its stance."""
        self._write_line(f"turn {number} accepted ({stance})")

    def turn_rejected(
        self, number: int, violations: list[TurnViolation], attempt: int, kept: str | None, *, repairs_left: int | None
    ) -> None:
        """Say which rules the draft broke (the first eight, each on a line, and how many more), whether a
        repair is asked (the last one announced; a person's until the turn deadline), and where the rejected
        draft is kept."""
        codes = ", ".join(sorted({v.code for v in violations}))
        self._write_line(f"turn {number} draft {attempt} rejected: {codes}; {_then(repairs_left)}")
        for violation in violations[:VIOLATIONS_SHOWN]:
            where = f"line {violation.line}: " if violation.line else ""
            self._write_line(f"  {where}{violation.code} {violation.message}")
        if len(violations) > VIOLATIONS_SHOWN:
            self._write_line(f"  and {len(violations) - VIOLATIONS_SHOWN} more")
        if kept is not None:
            self._write_line(f"  the rejected draft is kept in {kept}")

    def verifying(self, number: int, writer: str | None, citations: int) -> None:
        """Say whose turn's citations are being checked, and how many."""
        self._write_line(f"verifying {_citations(citations)} of {_turn(number, writer)}…")

    def verified(self, number: int, writer: str | None, counts: Mapping[str, int], *, sent_back: bool) -> None:
        """Say what the check found, and whether the draft goes back for repair."""
        fabricated = counts.get(Verdict.FABRICATED, 0)
        if sent_back:
            self._write_line(
                f"{_turn(number, writer)}: {fabricated} fabricated of {_citations(sum(counts.values()))}"
                ", sent back for repair"
            )
        else:
            found = ", ".join(f"{count} {verdict}" for verdict, count in counts.items())
            self._write_line(f"{_turn(number, writer)}: {_citations(sum(counts.values()))} checked ({found})")

    def end_live_line(self) -> None:
        """Stop the live line and end it where it stands, so that what is printed next (Ctrl-C's
        message, an error) starts a line of its own; the last progress drawn stays readable."""
        self._stop_ticker()
        with self._lock:
            if self._drawn:
                self.stream.write("\n")
                self.stream.flush()
                self._drawn = False

    # -- the live line ---------------------------------------------------------------
    def _activity(self) -> str:
        now = time.monotonic()
        if self._retry_at is not None and now < self._retry_at:
            return f"waiting to retry… {self._retry_at - now:.0f} s"
        elapsed = now - (self._started or now)
        progress = self._progress
        if progress is None or not progress.output_tokens:
            return f"thinking… {elapsed:.0f} s"
        about = "~" if progress.estimated else ""
        return f"writing… {about}{progress.output_tokens} tokens, {elapsed:.0f} s"

    def _draw(self) -> None:
        if self.quiet or self._started is None:
            return
        with self._lock:
            self.stream.write(f"\r\x1b[K{self.prefix}{self._activity()}")
            self.stream.flush()
            self._drawn = True

    def _tick(self) -> None:
        interval = TICK_SECONDS if self.live else QUIET_TICK_SECONDS
        while not self._stop.wait(interval):
            if self.live:
                self._draw()
            else:
                self._write_line(self._activity())

    def _stop_ticker(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        self._started = None
