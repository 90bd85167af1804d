"""``duel watch`` on a terminal: event lines scrolling above a live panel, drawn with rich.

Imported only when standard output is a terminal, so a pipe, ``duel list`` and every
other command never load rich. What the panel says comes from :mod:`.watch_model`'s pure
functions (docs/protocol.md section 2, "duel watch").
"""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import IO

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..printable import printable
from ..vocabulary import EventType
from .listing import ago
from .watch_model import EventLine, WatchView, epoch, situation

__all__ = ["TerminalDisplay"]

_STANCE_STYLES = {"ACCEPTING_CONSENSUS": "green", "CONVERGING": "cyan", "DISSENTING": "red", "REVISING": "yellow"}
_STYLES: dict[EventType | str, str] = {
    EventType.TURN_APPENDED: "bold",
    EventType.TURN_REJECTED: "red",
    EventType.DUEL_CLOSED: "bold green",
    EventType.RECORD_INVALIDATED: "red",
    EventType.CANDIDATE_CONVERGENCE: "green",
    EventType.LOCK_REFRESHED: "dim",
    EventType.USAGE: "dim",
    EventType.CITATIONS_VERIFIED: "dim",
}


class TerminalDisplay:
    """On a terminal: event lines scroll above a live panel (seats, floor, countdowns),
    redrawn in place with rich; the panel stays on screen when the duel closes."""

    def __init__(self, stream: IO[str], tz: tzinfo | None = None):
        self.tz = tz
        self.console = Console(file=stream, highlight=False)
        self.live = self._new_live()
        self._started = False

    def _new_live(self) -> Live:
        return Live(console=self.console, auto_refresh=False, redirect_stdout=False, redirect_stderr=False)

    def time_of(self, moment: float) -> str:
        """``moment`` as the terminal's local time of day, ``HH:MM:SS``."""
        return datetime.fromtimestamp(moment, self.tz).strftime("%H:%M:%S")

    def _start(self) -> None:
        if not self._started:
            self.live.start()
            self._started = True

    def event(self, line: EventLine) -> None:
        """Print one event line above the panel, cut to one screen line."""
        self._start()
        try:
            when = self.time_of(epoch(line.ts))
        except ValueError:  # a hand-edited log: its time as written
            when = line.ts
        self.live.console.print(
            Text.assemble((printable(when), "dim"), "  ", (printable(line.text), _STYLES.get(line.kind, ""))),
            no_wrap=True,
            overflow="ellipsis",
        )  # one screen line per event

    def show(self, view: WatchView) -> None:
        """Redraw the panel in place with ``view``."""
        self._start()
        self.live.update(self.panel(view), refresh=True)

    def pause(self) -> None:
        """Take the panel off the screen, the event lines above it staying, until the next line or redraw
        draws it again below them: `duel watch`'s prompt for a question goes where it was."""
        if self._started:
            self.live.transient = True  # stopped, it erases what it drew
            self.live.stop()
            self.live = self._new_live()  # a fresh one: a restarted Live would first erase the prompt's lines
            self._started = False

    def close(self, view: WatchView) -> None:
        """Draw the closed duel's last view and leave it on screen."""
        self.show(view)
        self.stop()

    def stop(self) -> None:
        """Stop the live redraw, if it runs; what is drawn stays."""
        if self._started:
            self.live.stop()
            self._started = False

    def panel(self, view: WatchView) -> RenderableType:
        """The panel for ``view``: the seats, what must happen next, and who holds the floor."""
        seats = Table(box=None, pad_edge=False, show_edge=False, header_style="dim")
        for column in ("seat", "participant", "harness / model", "stance", "seen"):
            seats.add_column(column)
        for seat in view.seats:
            seen = f"{ago(seat.seen_ago)} ago" + ("" if seat.present or view.closed else ", silent")
            seats.add_row(
                ("▶ " if seat.holds_floor else "  ") + str(seat.seat),
                Text(printable(seat.name), style="bold" if seat.writes_next else ""),
                printable(f"{seat.harness} / {seat.model_id}"),
                Text(seat.stance or "—", style=_STANCE_STYLES.get(seat.stance or "", "")),
                Text(seen, style="" if seat.present or view.closed else "yellow"),
            )
        if not view.seats:
            seats.add_row("", "nobody has joined yet", "", "", "")
        lines = situation(view, self.time_of)
        state = Text(printable("\n".join(lines)), style="bold" if view.closed else "")  # names, reasons
        title = Text.assemble((printable(view.topic), "bold"), printable(f"  ·  {view.duel_id}"))
        panel = Panel(Group(seats, Text(""), state), title=title, title_align="left")
        # A blank line under the panel leaves the cursor at a line's start, where the "^C" a terminal
        # echoes does not wrap and shift the next redraw by a line.
        return Group(panel, Text(""))
