"""Time as the service sees it: an injectable clock and the protocol's time format.

Durations (leases, deadlines, idleness) are judged on the monotonic clock, which is
system-wide within one boot, never jumps and stops while the machine is suspended; the
wall clock, which NTP or a person may set at any time, is only shown
(docs/protocol.md section 4, "Clocks").
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import cache
from typing import NamedTuple, overload

__all__ = ["Clock", "Instant", "ManualClock", "boot_id", "iso", "system_clock", "utc_date"]

BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id"


class Instant(NamedTuple):  # not a frozen dataclass: every `duel tools` command would pay for building one
    """A moment as every clock reads it."""

    wall: float  # seconds since the epoch: shown, never used to judge a duration
    mono: float  # CLOCK_MONOTONIC seconds of boot ``boot``
    boot: str | None  # the kernel's boot id; None where the system has none

    @property
    def wall_offset(self) -> float:
        """The wall-clock time at which this boot's monotonic clock read 0."""
        return self.wall - self.mono


#: Reads the clocks. Tests pass a :class:`ManualClock` to move time without sleeping.
Clock = Callable[[], Instant]


@cache
def boot_id() -> str | None:
    """The current boot's id (Linux), or None: the monotonic clock of another boot means nothing here."""
    try:
        with open(BOOT_ID_PATH, "rb") as handle:  # bytes: a text file's ascii codec is one more import
            return handle.read(64).decode("ascii").strip() or None
    except (OSError, ValueError):
        return None


def system_clock() -> Instant:
    """The real clocks, read now: wall, monotonic and this boot's id."""
    return Instant(time.time(), time.monotonic(), boot_id())


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
    moment, microseconds = _utc(ts)
    return time.strftime("%Y-%m-%dT%H:%M:%S.", moment) + f"{microseconds // 1000:03d}Z"


def utc_date(ts: float) -> str:
    """The UTC date of an epoch time, as ``YYYY-MM-DD``."""
    return time.strftime("%Y-%m-%d", _utc(ts)[0])


def _utc(ts: float) -> tuple[time.struct_time, int]:
    """The UTC second and microsecond ``datetime.fromtimestamp(ts, timezone.utc)`` gives: the
    fraction rounded half to even, a carry into the next second. Through ``time``: importing
    datetime costs every ``duel tools`` command about a millisecond (bench/bench_startup.py)."""
    whole = float(int(ts))  # toward zero, as C's modf() splits it; ts - whole is exact
    microseconds = round((ts - whole) * 1e6)
    if microseconds >= 1_000_000:
        whole, microseconds = whole + 1, microseconds - 1_000_000
    elif microseconds < 0:
        whole, microseconds = whole - 1, microseconds + 1_000_000
    return time.gmtime(whole), microseconds


class ManualClock:
    """Clocks that move only when told to: for tests and benchmarks.

    :meth:`advance` moves time; :meth:`set_wall` sets the wall clock alone, as NTP or a
    suspend does; :meth:`reboot` starts a new boot.
    """

    __slots__ = ("_boots", "boot", "mono", "wall")  # a misspelt clock.now = … fails, not passes silently

    def __init__(self, start: float = 1_800_000_000.0):
        self.wall = start
        self.mono = 1_000.0
        self.boot: str | None = "boot-1"  # as Instant.boot: None on a system without boot ids
        self._boots = 1

    def __call__(self) -> Instant:
        """The clocks as they now read."""
        return Instant(self.wall, self.mono, self.boot)

    def advance(self, seconds: float) -> None:
        """``seconds`` pass on every clock."""
        self.wall += seconds
        self.mono += seconds

    def set_wall(self, seconds: float) -> None:
        """The wall clock is set ``seconds`` forward (or back); no time passes."""
        self.wall += seconds

    def reboot(self, downtime: float = 0.0) -> None:
        """A new boot ``downtime`` seconds later: a new boot id, the monotonic clock restarted."""
        self._boots += 1
        self.boot = f"boot-{self._boots}"
        self.wall += downtime
        self.mono = 10.0
