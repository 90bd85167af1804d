"""The provisional label a close writes into the Terminal Conclusion (docs/protocol.md section 11, "Provisional"):
the family rule (:mod:`rp1_duel.record.families`) over the served models the duel's ``usage`` events logged."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import DuelError
from ..record import Provisional, provisional, seat_models
from ..vocabulary import EventType
from .events import UsageRecorded

if TYPE_CHECKING:
    from ._store import Transaction


def closing_label(tx: Transaction) -> Provisional | None:
    """Whether ``tx``'s duel, closing, had every seat of one model family: each turn counts with the model its
    last draft with provenance was served by, as a report reads it, else the seat's model as it joined."""
    state = tx.state
    served: dict[int, str | None] = {}  # turn -> its last draft's served model
    try:
        events = tx.store.events(state).read(types=(EventType.USAGE,))
    except DuelError:  # a log that cannot be read (STATE_CORRUPT) names no served model: the close goes on
        events = []
    for event in events:
        if isinstance(event.data, UsageRecorded) and event.data.provenance is not None:
            served[event.data.turn_number] = event.data.provenance.served_model
    recorded = {p.seat: p.model_id for p in state.participants}
    speaker = state.schedule.speaker
    return provisional(seat_models(recorded, ((speaker(number), model) for number, model in served.items())))
