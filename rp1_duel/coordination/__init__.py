"""Coordination: the lease-based lock service over a shared directory.

Owns docs/protocol.md sections 2 to 5 and 9: the state files (:mod:`._state`), every
"may this happen now?" rule as a pure function (:mod:`.policy`), the directory and its
locks (:mod:`.storage`), who a participant is (:mod:`.identity`), the typed events
(:mod:`.events`; the usage counts they carry, :mod:`.counts`) and results
(:mod:`.results`; the answers of the ops that write, one module each: :mod:`._join_result`,
:mod:`._claim_result`, :mod:`._refresh_result`, :mod:`._release_result`) and the service that ties them together (:mod:`.service`), writing the
record through :mod:`._record_writer`. May import :mod:`rp1_duel.record`,
:mod:`rp1_duel.turns` and the top-level vocabulary, errors, clock and settings.

This module is its face: it names what the other packages use, each loaded on first use
(:func:`rp1_duel.lazy_exports`, so ``duel tools status`` loads no event and no record code), and
they import it from here; the modules nothing outside uses are private (the state, the stores,
the record writer, retries and the answers of the writing ops).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import lazy_exports

_EXPORTS = {
    "Usage": ".counts",
    "input_figure": ".counts",
    "CandidateConvergence": ".events",
    "CheckedCitation": ".events",
    "CitationVerdicts": ".events",
    "CitationsVerified": ".events",
    "DuelClosed": ".events",
    "DuelSealed": ".events",
    "Event": ".events",
    "EventData": ".events",
    "FinalThoughtsAdded": ".events",
    "LockAcquired": ".events",
    "LockRefreshed": ".events",
    "LockReleased": ".events",
    "OpeningCommitted": ".events",
    "ParticipantRegistered": ".events",
    "ParticipantResumed": ".events",
    "ParticipantWaiting": ".events",
    "Provenance": ".events",
    "ProviderFailed": ".events",
    "QuestionAsked": ".events",
    "RecordInvalidated": ".events",
    "RulingWritten": ".events",
    "SeatReclaimed": ".events",
    "SeatTakenOver": ".events",
    "SourceChanged": ".events",
    "TurnAppended": ".events",
    "TurnRejected": ".events",
    "UnknownEvent": ".events",
    "UsageRecorded": ".events",
    "same_model": ".events",
    "check_join_inputs": ".identity",
    "resolve_target": ".identity",
    "resolve_topic": ".identity",
    "slugify": ".identity",
    "refresh_interval": ".policy",
    "seat_name": ".policy",
    "DuelInfo": ".results",
    "LeaseToken": "._result_core",
    "Observation": ".results",
    "ParticipantView": ".results",
    "Seat": "._result_core",
    "StatusResult": ".results",
    "DuelService": ".service",
    "check_store_url": "._store_url",
    "DebateDir": ".storage",
    "DuelLock": ".storage",
    "LOG_START": ".storage",
    "STATE_DIR": ".storage",
    "storage_errors": ".storage",
    "write_atomic": ".storage",
}
__all__ = [
    "LOG_START",
    "STATE_DIR",
    "CandidateConvergence",
    "CheckedCitation",
    "CitationVerdicts",
    "CitationsVerified",
    "DebateDir",
    "DuelClosed",
    "DuelInfo",
    "DuelLock",
    "DuelSealed",
    "DuelService",
    "Event",
    "EventData",
    "FinalThoughtsAdded",
    "LeaseToken",
    "LockAcquired",
    "LockRefreshed",
    "LockReleased",
    "Observation",
    "OpeningCommitted",
    "ParticipantRegistered",
    "ParticipantResumed",
    "ParticipantView",
    "ParticipantWaiting",
    "Provenance",
    "ProviderFailed",
    "QuestionAsked",
    "RecordInvalidated",
    "RulingWritten",
    "Seat",
    "SeatReclaimed",
    "SeatTakenOver",
    "SourceChanged",
    "StatusResult",
    "TurnAppended",
    "TurnRejected",
    "UnknownEvent",
    "Usage",
    "UsageRecorded",
    "check_join_inputs",
    "check_store_url",
    "input_figure",
    "refresh_interval",
    "resolve_target",
    "resolve_topic",
    "same_model",
    "seat_name",
    "slugify",
    "storage_errors",
    "write_atomic",
]

if TYPE_CHECKING:
    from ._store_url import check_store_url
    from .counts import Usage, input_figure
    from .events import (
        CandidateConvergence,
        CheckedCitation,
        CitationsVerified,
        CitationVerdicts,
        DuelClosed,
        DuelSealed,
        Event,
        EventData,
        FinalThoughtsAdded,
        LockAcquired,
        LockRefreshed,
        LockReleased,
        OpeningCommitted,
        ParticipantRegistered,
        ParticipantResumed,
        ParticipantWaiting,
        Provenance,
        ProviderFailed,
        QuestionAsked,
        RecordInvalidated,
        RulingWritten,
        SeatReclaimed,
        SeatTakenOver,
        SourceChanged,
        TurnAppended,
        TurnRejected,
        UnknownEvent,
        UsageRecorded,
        same_model,
    )
    from .identity import check_join_inputs, resolve_target, resolve_topic, slugify
    from .policy import refresh_interval, seat_name
    from .results import DuelInfo, LeaseToken, Observation, ParticipantView, Seat, StatusResult
    from .service import DuelService
    from .storage import LOG_START, STATE_DIR, DebateDir, DuelLock, storage_errors, write_atomic
else:
    __getattr__ = lazy_exports(__name__, _EXPORTS)
