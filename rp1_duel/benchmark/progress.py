"""What ``duel bench run`` says as runs end: a bar redrawn in place on a terminal, else a line a run."""

from __future__ import annotations

from typing import Final

from .layout import RunResult

__all__ = ["progress_bar", "result_line"]

BAR_WIDTH: Final = 30


def progress_bar(*, done: int, planned: int, spent_usd: float, cap_usd: float, seconds: float) -> str:
    """One line for a terminal: the runs done of those planned, the money spent of the cap, the time taken."""
    filled = BAR_WIDTH * done // planned if planned else BAR_WIDTH
    bar = "#" * filled + "." * (BAR_WIDTH - filled)
    minutes, rest = divmod(int(seconds), 60)
    return f"[{bar}] {done}/{planned} runs  ${spent_usd:.4f} of ${cap_usd:.2f}  {minutes}:{rest:02d}"


def result_line(result: RunResult, *, done: int, planned: int) -> str:
    """One finished run: its name, how it ended, what it cost, how long it took, and the count done."""
    ended = result.outcome or ("revised" if result.revised else "no revision")
    if result.stopped:
        ended = f"stopped: {result.stopped}" + (f" ({result.error})" if result.error else "")
    return f"{result.spec.key}: {ended}, ${result.usd:.6f}, {result.seconds:.0f} s ({done}/{planned})"
