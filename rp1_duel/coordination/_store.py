"""The store: where duels are kept, and what makes one op on a duel exclusive.

The service's rules, history and validation are the same whatever the store; a store
only keeps what they decide, supplies the time each op is judged at, and signals
changes. Two stores implement :class:`DuelStore`: the debate dir
(:class:`~rp1_duel.coordination.storage.DirectoryStore`, the default) and a PostgreSQL
database (:mod:`rp1_duel.coordination._postgres`), for duels across machines
(docs/protocol.md section 4, "Stores").
"""

from __future__ import annotations

from collections.abc import Collection, Hashable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

from ..clock import Instant, iso
from ._state import DuelState, Participant

if TYPE_CHECKING:
    from ..turns import SourceDocument
    from .events import Event, EventData

SEEN_RESOLUTION_SECONDS = 1.0


def seen_lately(participant: Participant, now: Instant) -> bool:
    """Whether ``participant`` was marked seen within a second of ``now``: marking it again
    writes nothing. Idleness is judged in leases (5 s at least), and a status loop must not cost a write."""
    return 0 <= now.mono - participant.last_seen_mono < SEEN_RESOLUTION_SECONDS


class EventCursor(NamedTuple):  # not a frozen dataclass: `duel tools` would pay for building one at start-up
    """A place in a duel's event log: the next event's ``seq`` and, in a debate dir, the byte it starts at."""

    seq: int = 0
    offset: int = 0


LOG_START = EventCursor()


class EventReader(Protocol):
    """A duel's events as its state vouches for them (docs/protocol.md section 9)."""

    def read(self, since: EventCursor = LOG_START, types: Collection[str] | None = None) -> list[Event]:
        """The events from ``since`` up to what the state has counted, in order; with ``types``,
        only those of these types (a store may then leave the others unparsed)."""
        ...

    @property
    def end(self) -> EventCursor:
        """The cursor just after the last event the state has counted."""
        ...


class DuelStore(Protocol):
    """Everything the service asks of where duels live.

    A duel's op runs in :meth:`transaction`: exclusive against every other op on that
    duel, with the state read inside the exclusion and the time the op is judged at.
    What :meth:`Transaction.commit` saved there is kept when the block ends normally or
    with a :class:`~rp1_duel.errors.DuelError` (a refusal may record events), and
    discarded on any other exception.
    """

    location: str  # named in messages: a folder, or a database without its password

    def now(self) -> Instant:
        """The time ops are judged at: the injected clock (a debate dir) or the database's."""
        ...

    def errors(self) -> AbstractContextManager[None]:
        """Turns a failure of the store into ``STORAGE_FAILED``."""
        ...

    def ensure(self) -> None:
        """Prepare the store for a join (the state folder, the schema)."""
        ...

    def check_readable(self) -> None:
        """``DUEL_NOT_FOUND`` when the store holds no duel at all."""
        ...

    # -- joins: the index and new duels, under one exclusion --------------------------
    def joining(self) -> AbstractContextManager[object]:
        """The exclusion every join runs in: one join at a time reads and writes the index."""
        ...

    def read_index(self) -> dict[str, str]:
        """The index: each ``target_key`` to its latest duel id."""
        ...

    def write_index(self, index: dict[str, str]) -> None:
        """Replace the index (inside :meth:`joining`)."""
        ...

    def reserve_duel(self, stem: str) -> str:
        """A new duel id ``stem``, ``stem-2``, … that no duel (and no artifact) has."""
        ...

    def discard_duel(self, duel_id: str) -> None:
        """Undo a creation that failed before its artifact was written."""
        ...

    def begin(self, state: DuelState, now: Instant) -> Transaction:
        """A transaction over a duel being created (inside :meth:`joining`)."""
        ...

    # -- one duel --------------------------------------------------------------------
    def transaction(self, duel_id: str) -> AbstractContextManager[Transaction]:
        """One op on the duel, exclusive against every other; ``DUEL_NOT_FOUND`` when there is no such duel."""
        ...

    def save(self, state: DuelState, events: list[Event]) -> None:
        """Append ``events`` and write ``state`` (advancing its event counters), as one change."""
        ...

    def read_state(self, duel_id: str) -> DuelState:
        """The duel's state as last saved, outside any exclusion (``DUEL_NOT_FOUND``, ``STATE_CORRUPT``)."""
        ...

    def stamp(self, duel_id: str) -> Hashable:
        """A cheap fingerprint that changes whenever the duel does."""
        ...

    def next_stamp(self, duel_id: str, stamp: Hashable, timeout: float) -> Hashable:
        """Block until the stamp may have moved from ``stamp``, at most ``timeout`` seconds; the stamp then."""
        ...

    def events(self, state: DuelState) -> EventReader:
        """The duel's event log, as far as ``state`` vouches for it."""
        ...

    def duel_ids(self) -> list[str]:
        """Every duel, open or closed, in id order."""
        ...

    # -- the source ------------------------------------------------------------------
    #: Each host reads its own copy of the source (a database store): a join with a copy
    #: that differs from the duel's is SOURCE_MISMATCH.
    own_source_copies: bool

    def target_key(self, source: SourceDocument, slug: str) -> str:
        """Which duel a join of ``source`` and ``slug`` goes to (section 3, ``target_key``)."""
        ...

    def keep_source(self, state: DuelState, source: SourceDocument) -> None:
        """Keep the source a new duel debates, if the store keeps it."""
        ...

    def read_source(self, state: DuelState) -> SourceDocument:
        """The text turns are validated against (raises SourceUnreadable)."""
        ...

    def source_exists(self, state: DuelState) -> bool:
        """Whether the source the duel debates can still be found."""
        ...

    def source_on_disk(self, state: DuelState) -> str | None:
        """The SHA-256 of the source file as it is now, to tell when it changed; None when not known."""
        ...

    def source_path_shown(self, state: DuelState) -> str:
        """The artifact's ``source_path``: relative to the artifact where they share a folder (section 6)."""
        ...

    # -- the artifact ------------------------------------------------------------------
    def artifact_path(self, state: DuelState) -> Path:
        """Where this process finds the artifact: ``<debate dir>/<duel id>.md``."""
        ...

    def read_artifact(self, state: DuelState, limit: int) -> bytes:
        """The artifact as the store keeps it, at most ``limit`` bytes (else ValueError; OSError when unreadable)."""
        ...

    def write_artifact(self, state: DuelState, text: str, *, create: bool = False) -> None:
        """Store the artifact; ``create`` refuses to replace an existing one."""
        ...

    def write_beside(self, state: DuelState, name: str, text: str) -> None:
        """Write a file the close derives from the record (a revision's patch) next to this host's artifact."""
        ...


class Transaction:
    """One op's view of a duel: the state, its pending events, the time.

    Changes are made to ``state`` in memory; :meth:`commit` hands the events and the
    state to the store. An event's type says whether waiters should see the change (a
    join, a grant, a release, a turn, a close), or it is bookkeeping (a refresh, a rejection).
    """

    def __init__(self, store: DuelStore, state: DuelState, now: Instant):
        self.store = store
        self.state = state
        self.now = now
        self._pending: list[Event] = []
        self._dirty = False
        self._woken = False

    def emit(self, data: EventData, *, by: str | None) -> None:
        """Log an event of participant ``by`` (None: the service itself)."""
        from ._event_core import Event  # loaded already: ``data`` is an event type

        seq = self.state.event_seq + len(self._pending)
        self._pending.append(Event(seq=seq, ts=iso(self.now.wall), duel_id=self.state.id, participant_id=by, data=data))
        self._dirty = True
        self._woken = self._woken or data.wakes

    def wake(self) -> None:
        """A change with no event of its own that waiters must still see."""
        self._dirty = self._woken = True

    def touch(self, participant: Participant) -> None:
        """Mark the participant seen, unless it was :func:`seen_lately` (then nothing is written)."""
        if seen_lately(participant, self.now):
            return
        participant.last_seen_mono = self.now.mono
        self._dirty = True

    def save(self) -> None:
        """Mark the state as changed, to be written by :meth:`commit` (a new duel, say)."""
        self._dirty = True

    def commit(self) -> None:
        """Hand the pending events and the changed state to the store, if anything changed (one write)."""
        if not self._dirty:
            return
        if self._woken:
            self.state.rev += 1
        self.store.save(self.state, self._pending)
        self._pending = []
        self._dirty = self._woken = False
