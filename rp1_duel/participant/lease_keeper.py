"""The floor kept while a turn is written: a thread that refreshes the lease until the turn deadline.

``duel join`` keeps it while its model, person or script writes; ``duel mcp`` while its agent thinks.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from ..coordination import refresh_interval
from ..errors import DuelError
from ..vocabulary import ErrorCode

if TYPE_CHECKING:
    from typing_extensions import Self

    from ..coordination import DuelService, LeaseToken, Seat

__all__ = ["LeaseKeeper"]

STORE_RETRY_SECONDS = 0.5  # a refresh the store failed is tried again this soon


class LeaseKeeper:
    """Refreshes a lease in the background while a turn is being composed.

    A slow model keeps the floor as long as this process lives, up to the turn deadline
    (``time.monotonic()`` seconds), where refreshing stops: the service refuses it past
    that point anyway. A dead process stops refreshing, and the lease expires for the peer.
    A store that cannot be reached (a lost database connection) is tried again while the
    lease lasts; past it the floor is lost, as for a dead process.
    """

    def __init__(self, service: DuelService, *, seat: Seat, lease: LeaseToken, lease_seconds: int, deadline: float):
        self._service = service
        self._seat = seat
        self._lease = lease
        self._interval = refresh_interval(lease_seconds)
        self._lease_seconds = lease_seconds
        self._deadline = deadline
        self._stop = threading.Event()
        self.lost = threading.Event()
        self._thread = threading.Thread(target=self._run, name="duel-lease-keeper", daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        held_until = time.monotonic() + self._lease_seconds  # granted or refreshed no earlier than now
        pause = self._interval
        while not self._stop.wait(min(pause, max(0.0, self._deadline - time.monotonic()))):
            if time.monotonic() >= self._deadline:
                return
            asked = time.monotonic()
            try:
                refreshed = self._service.refresh_lock(self._seat, self._lease).refreshed
            except DuelError as exc:
                if exc.code == ErrorCode.STORAGE_FAILED and time.monotonic() < held_until:
                    pause = STORE_RETRY_SECONDS
                    continue
                refreshed = False
            if not refreshed:
                self.lost.set()
                return
            held_until, pause = asked + self._lease_seconds, self._interval
