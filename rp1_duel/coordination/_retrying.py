"""Transient store failures: retried with backoff, shown as a wait, never a lost seat.

A store marks a failure it expects to pass (a server full of connections, restarting or
failing over, a connection reset) as transient: ``STORAGE_FAILED`` whose details say
``transient`` and why. :func:`retried` runs an op again after a pause that doubles up to
:data:`LONGEST_PAUSE_SECONDS`, each drawn between half and all of that (so that a hundred
processes turned away together do not come back together), saying each pause through
``on_wait``, for up to :data:`RETRY_SECONDS`; a permanent failure (authentication, a missing database, a newer
schema) is raised at once (docs/protocol.md section 4, "Stores"). The op runs again as a
whole: a store's op either committed or left nothing, so running it again is safe.

A store may also run an op on a guess (the PostgreSQL store's last known state of the duel,
checked by the server at the commit, so that an op takes one round trip): a wrong guess is
``STORAGE_FAILED`` marked ``stale``, and the op runs again at once, unguessed, untold.
"""

from __future__ import annotations

import _thread
import functools
import time
from collections.abc import Callable, Iterator
from typing import Concatenate, Final, ParamSpec, Protocol, TypeVar

from ..errors import DuelError
from ..vocabulary import ErrorCode

T = TypeVar("T")

RETRY_SECONDS: Final = 300.0  # longer than a restart or a failover, shorter than a default turn (30 min)
FIRST_PAUSE_SECONDS: Final = 0.1  # a slot frees in milliseconds; a restart takes seconds, and doubling gets there
LONGEST_PAUSE_SECONDS: Final = 8.0
SOON_LONGEST_PAUSE_SECONDS: Final = 0.5  # for a failure that passes in moments (a full server: a slot frees)
# The PostgreSQL store locks the row after three wrong guesses in a row: the fourth run cannot be stale.
STALE_RERUNS: Final = 3
StoreWait = Callable[[str], None]  # told "the store is full of connections; retrying in 2 s"


def transient_failure(message: str, reason: str, details: dict[str, object], *, soon: bool = False) -> DuelError:
    """``STORAGE_FAILED`` marked as worth retrying, with ``reason`` in words; ``soon`` when it passes in
    moments, so its pauses stay short."""
    marks: dict[str, object] = {"transient": True, "reason": reason, **({"soon": True} if soon else {})}
    return DuelError(ErrorCode.STORAGE_FAILED, message, {**details, **marks})


def stale_guess(message: str) -> DuelError:
    """``STORAGE_FAILED`` for an op run on a guess the store found out of date: nothing was written."""
    return DuelError(ErrorCode.STORAGE_FAILED, message, {"stale": True})


def is_stale(error: DuelError) -> bool:
    """Whether ``error`` is a wrong guess of the store's, to run again at once."""
    return error.code == ErrorCode.STORAGE_FAILED and error.details.get("stale") is True


def is_transient(error: DuelError) -> bool:
    """Whether ``error`` is a store failure expected to pass."""
    return error.code == ErrorCode.STORAGE_FAILED and error.details.get("transient") is True


def pauses(budget: float = RETRY_SECONDS, longest: float = LONGEST_PAUSE_SECONDS) -> list[float]:
    """The pauses between attempts: doubling from the first to ``longest``, until ``budget`` is spent.

    A list, not a generator: a generator left suspended is closed as its caller returns, and a Ctrl-C
    landing in that close would be printed as "Exception ignored" and lost."""
    found, pause, spent = [], FIRST_PAUSE_SECONDS, 0.0
    while spent + pause <= budget:
        found.append(pause)
        spent += pause
        pause = min(pause * 2, longest)
    return found


def retried(
    op: Callable[[], T],
    on_wait: StoreWait | None = None,
    *,
    budget: float = RETRY_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
    spread: Callable[[], float] | None = None,
) -> T:
    """``op()``, run again after each transient store failure while ``budget`` lasts, and at once
    after a stale guess (a few times at most)."""
    waits: dict[bool, Iterator[float]] = {}  # soon or not: the pauses left, made at the first such failure
    reruns = STALE_RERUNS
    while True:
        try:
            return op()
        except DuelError as exc:
            if is_stale(exc) and reruns:
                reruns -= 1
                continue
            if not is_transient(exc):
                raise
            soon = exc.details.get("soon") is True
            if soon not in waits:
                waits[soon] = iter(pauses(budget, SOON_LONGEST_PAUSE_SECONDS if soon else LONGEST_PAUSE_SECONDS))
            pause = next(waits[soon], None)
            if pause is None:
                raise
            if spread is None:
                import random  # only once a store fails: `duel tools` does not pay for it otherwise

                spread = random.random
            pause *= 0.5 + spread() / 2
            if on_wait is not None:
                on_wait(f"{exc.details['reason']}; retrying in {pause:.1f} s")
            sleep(pause)


class WaitsOnTheStore(Protocol):
    """What an op's owner (the service) tells each pause of a retry to."""

    on_store_wait: StoreWait | None


P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S", bound=WaitsOnTheStore)


class _Nesting(_thread._local):  # noqa: SLF001  threading.local is this; importing threading costs ~1 ms a command
    depth = 0  # ops of this thread under way: only the outermost is run again


_nesting = _Nesting()


def rerun_op(
    budget: float,
) -> Callable[[Callable[Concatenate[S, P], R]], Callable[Concatenate[S, P], R]]:
    """The op run again, as a whole, after a stale guess of the store's, and while the store fails in
    a way expected to pass for up to ``budget`` seconds (:func:`retried`); each pause is told to
    ``on_store_wait``. An op inside another is left to the outer one."""

    def decorate(op: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
        @functools.wraps(op)
        def run(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            if _nesting.depth:
                return op(self, *args, **kwargs)
            _nesting.depth += 1
            try:
                return retried(lambda: op(self, *args, **kwargs), self.on_store_wait, budget=budget)
            finally:
                _nesting.depth -= 1

        return run

    return decorate
