"""A turn's deadline, as one seat of ``duel join`` keeps it: the service shows moments on its wall
clock; the work that must end by one (a model request, a person's editor, a page fetched) runs in
a thread this process stops waiting for when the moment passes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["Deadlines", "TurnStopped"]

T = TypeVar("T")


class TurnStopped(Exception):
    """The turn deadline passed, or the lease was lost, while the turn was being written or checked."""


@dataclass(frozen=True)
class Deadlines:
    """Moments of the service's clock (``wall``: now, as the service shows it) kept by this process."""

    wall: Callable[[], float]

    def monotonic(self, moment: float | None) -> float:
        """A time the service shows (wall clock) as a ``time.monotonic()`` moment of this process."""
        if moment is None:
            return float("inf")
        return time.monotonic() + moment - self.wall()

    def left(self, moment: float | None) -> str:
        """The time until ``moment``, as a person reads it (``4m 05s``)."""
        if moment is None:
            return "no limit"
        seconds = max(0, int(moment - self.wall()))
        return f"{seconds // 60}m {seconds % 60:02d}s"

    def run(self, work: Callable[[], T], deadline: float) -> T | None:
        """``work``'s answer, or None when ``deadline`` (wall clock, as shown) passes first.

        The work is then abandoned, not cancelled: its thread runs on unseen until the
        process ends, for the service would refuse its turn anyway (docs/protocol.md section 4).
        """
        answer: list[T | BaseException] = []

        def run() -> None:
            try:
                answer.append(work())
            except BaseException as exc:  # noqa: BLE001  whatever it is, it is handed to the main thread below
                answer.append(exc)

        worker = threading.Thread(target=run, name="duel-compose", daemon=True)
        worker.start()
        worker.join(max(0.0, self.monotonic(deadline) - time.monotonic()))
        if not answer:
            return None
        if isinstance(answer[0], BaseException):
            raise answer[0]
        return answer[0]
