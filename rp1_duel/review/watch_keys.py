"""``duel watch``'s key: on a terminal, `a` asks a seat a question, as the audience (docs/protocol.md section 2,
"duel watch", and section 4, "The audience").

While the watch waits between two polls it reads the keyboard instead of sleeping: the terminal is in
cbreak mode (a key arrives without Enter, unechoed; Ctrl-C still interrupts), and put back as it was on
the way out, however the watch ends. `a` takes the live panel off the screen, puts the terminal back in
its ordinary line mode, prompts for the seat and the question on standard error, asks through
:meth:`DuelService.ask` and shows the answer or the refusal as a watch line; the watch then goes on. The
question's own ``question_asked`` event follows as the next poll reads it.
"""

from __future__ import annotations

import os
import select
import sys
import time
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any

from ..audience import Question
from ..clock import iso
from ..coordination import DuelService
from ..errors import DuelError, invalid_argument
from ..printable import printable
from .watch import Display
from .watch_model import EventLine

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["ASK_KEY", "HINT", "AskKey"]

ASK_KEY = "a"
HINT = "press a to ask a seat a question (Ctrl-C stops watching)"
ASKED = "ask"  # the kind of the watch lines the key writes: they are no logged event


class AskKey:
    """The keyboard of a watch on a terminal, as a context: :meth:`wait` is the watch's pause between polls."""

    def __init__(self, service: DuelService, duel_id: str, *, by: str, screen: Display, keyboard: IO[str]):
        self.service = service
        self.duel_id = duel_id
        self.by = by
        self.screen = screen
        self.keyboard = keyboard
        self.fd = keyboard.fileno()
        self.saved: list[Any] | None = None  # the terminal's mode before the watch; None: no key is read

    @staticmethod
    def usable(keyboard: IO[str]) -> bool:
        """Whether ``keyboard`` is a terminal this process reads in the foreground (a background job
        that changed its mode would be stopped) on a system that has terminal modes."""
        try:
            import termios  # noqa: F401  only on systems with terminal modes
        except ImportError:
            return False
        if not keyboard.isatty():
            return False
        try:
            return os.tcgetpgrp(keyboard.fileno()) == os.getpgrp()
        except OSError:  # not this process's controlling terminal: no job control stops it
            return True

    def __enter__(self) -> Self:
        import termios

        self.saved = termios.tcgetattr(self.fd)
        self._cbreak()
        self._say(HINT)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._restore()

    def _cbreak(self) -> None:
        import termios
        import tty

        # TCSADRAIN, not tty's default TCSAFLUSH: a key typed while the mode changes (right after a
        # question, say) is kept for the next wait, not thrown away.
        tty.setcbreak(self.fd, termios.TCSADRAIN)

    def _restore(self) -> None:
        import termios

        if self.saved is not None:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)

    def wait(self, seconds: float) -> None:
        """Wait ``seconds`` for the next poll, reading keys meanwhile: `a` asks a question; others are ignored."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                return
            key = os.read(self.fd, 1)
            if not key:  # the terminal hung up: nothing more will be typed
                time.sleep(left)
                return
            if key.lower() == ASK_KEY.encode():
                self.ask()
                return  # the question's event is read at once

    def ask(self) -> None:
        """Prompt for a seat and a question, ask it, and show the answer or the refusal as a watch line."""
        self.screen.pause()
        self._restore()  # line mode, echoed: the person edits the answer as anywhere else
        try:
            said = self._asked()
        except DuelError as refusal:
            said = f"your question was refused: {refusal.code}: {refusal.message}"
        finally:
            self._cbreak()
        self._say(said)  # once keys are read again: what is shown is what the keyboard does

    def _asked(self) -> str:
        """Prompt for a seat and a question and ask it: what became of it, in words."""
        seats = self.service.status(self.duel_id).participants
        named = ", ".join(f"{p.seat} {p.display_name}" for p in sorted(seats, key=lambda p: p.seat))
        seat = self._prompt(f"ask seat ({named}): " if named else "ask seat: ")
        question = self._prompt("question: ") if seat else ""
        if not seat or not question:
            return "no question asked"
        if not (seat.isascii() and seat.isdigit()):
            raise invalid_argument(f"the seat is a number, not {seat!r}")
        result = self.service.ask(self.duel_id, to_seat=int(seat), question=question, by=self.by)
        asked = Question.from_json(result.question)
        return (
            f"your question is Q{asked.id}, asked after round {asked.round}: seat {asked.to_seat} answers it in "
            f"turn {asked.due_turn}"
        )

    def _prompt(self, text: str) -> str:
        """One line typed on the terminal, after ``text`` on standard error; empty at the end of input."""
        sys.stderr.write(printable(text))  # it names the seats
        sys.stderr.flush()
        return self.keyboard.readline().strip()

    def _say(self, text: str) -> None:
        self.screen.event(
            EventLine(seq=-1, ts=iso(self.service.clock().wall), kind=ASKED, text=text)
        )  # shown printable
