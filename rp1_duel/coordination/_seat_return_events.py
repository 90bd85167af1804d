"""The events of a seat taken again (docs/protocol.md section 9): resumed with its token, reclaimed
once idle, taken over with another model. A join logs them; apart from :mod:`._seat_events`,
because the join that takes a new seat, every duel's first two, does not build them.
:mod:`.events` names them with every other type.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..vocabulary import EventType
from ._event_core import EventData


@dataclass(frozen=True)
class ParticipantResumed(EventData):
    """A participant came back to its seat with its token."""

    event_type = EventType.PARTICIPANT_RESUMED
    seat: int


@dataclass(frozen=True)
class SeatReclaimed(EventData):
    """An idle seat was handed to a new participant."""

    event_type = EventType.SEAT_RECLAIMED
    seat: int


@dataclass(frozen=True)
class SeatTakenOver(EventData):
    """A seat's holder changed its model before its first turn."""

    event_type = EventType.SEAT_TAKEN_OVER
    seat: int
    model_id: str
    previous_model_id: str
