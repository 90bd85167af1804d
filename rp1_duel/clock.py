"""Time as the service sees it: an injectable clock and the protocol's time format."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import overload

#: Seconds since the epoch. Tests pass their own to move time without sleeping.
Clock = Callable[[], float]

system_clock: Clock = time.time


@overload
def iso(ts: float) -> str: ...
@overload
def iso(ts: None) -> None: ...
@overload
def iso(ts: float | None) -> str | None: ...


def iso(ts: float | None) -> str | None:
    """ISO 8601 UTC with a ``Z`` and milliseconds, as the protocol writes times."""
    if ts is None:
        return None
    moment = datetime.fromtimestamp(ts, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_iso(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def utc_date(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d")


class ManualClock:
    """A clock that moves only when told to: for tests and benchmarks."""

    def __init__(self, start: float = 1_800_000_000.0):
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
