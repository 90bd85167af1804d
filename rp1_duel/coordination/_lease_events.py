"""The events of leases (docs/protocol.md section 9), which the lock ops log: apart from
:mod:`._event_core` so that a join does not build them, and from :mod:`.events` so that a lock
op builds no other type (a frozen dataclass costs a ``duel tools`` process a quarter of a
millisecond). :mod:`.events` names them with every other type.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..vocabulary import EventType
from ._event_core import EventData


@dataclass(frozen=True)
class LockAcquired(EventData):
    """A lease was granted: its fence, its expiry, and whether it is one to close TIMEOUT."""

    event_type = EventType.LOCK_ACQUIRED
    lease_only = True
    fence: int
    expires_at: str
    for_timeout: bool


@dataclass(frozen=True)
class LockRefreshed(EventData):
    """A lease's expiry moved (bookkeeping: it wakes no one)."""

    event_type = EventType.LOCK_REFRESHED
    wakes = False
    lease_only = True
    fence: int
    expires_at: str


@dataclass(frozen=True)
class LockReleased(EventData):
    """The lease of that fence was given back."""

    event_type = EventType.LOCK_RELEASED
    lease_only = True
    fence: int
