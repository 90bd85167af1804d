"""The events of a new seat (docs/protocol.md section 9), which a join logs: apart from
:mod:`._event_core` so that a claim, refresh or release does not build them, and from those of a
seat taken again (:mod:`._seat_return_events`), which a first join does not log (a frozen
dataclass costs a ``duel tools`` process a quarter of a millisecond). :mod:`.events` names
them with every other type; a join imports them from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..vocabulary import EventType
from ._event_core import EventData


@dataclass(kw_only=True, frozen=True)
class ParticipantRegistered(EventData):
    """A participant took a seat: the seat and who holds it."""

    event_type = EventType.PARTICIPANT_REGISTERED
    seat: int
    display_name: str
    harness: str
    model_id: str


@dataclass(frozen=True)
class ParticipantWaiting(EventData):
    """Seat 1 waits for the others, at its join, ``until`` the peer wait ends."""

    event_type = EventType.PARTICIPANT_WAITING
    until: str
