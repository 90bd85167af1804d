"""The PostgreSQL store: duels across machines through one database (psycopg 3).

One database transaction per op, the duel's row locked (``SELECT … FOR UPDATE``): the
lease and fence checks, the append and the close all happen under that lock, and the
state is written only if the turns' chain head is still the one read (compare-and-set).
Time is the database's ``clock_timestamp()``, read inside the transaction, so client
clocks do not matter. Loaded only when a ``postgresql://`` store is used: psycopg costs
``duel tools`` nothing otherwise (docs/protocol.md section 4, "Stores").
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import weakref
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any, cast

import psycopg

from ..clock import Instant
from ..errors import DuelError
from ..settings import redact
from ..turns.source import SourceDocument, SourceUnreadable
from ..vocabulary import ErrorCode
from .events import Event, parse_event
from .identity import target_key
from .state import DuelState, corrupt
from .storage import DebateDir, copy_artifact, write_beside
from .store import LOG_START, EventCursor, Transaction

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "DatabaseEvents",
    "PostgresStore",
]

SCHEMA_VERSION = 2
#: Migrations by the version they lead to; each runs once, in order, under an advisory lock.
MIGRATIONS = {
    1: """
        CREATE TABLE duel_index (target_key text PRIMARY KEY, duel_id text NOT NULL);
        CREATE TABLE duels (
            id text PRIMARY KEY,
            state text,                      -- DuelState's JSON, token hashes only
            artifact text,                   -- the artifact as last rendered
            head text NOT NULL DEFAULT '',   -- the sha256 of the last accepted turn
            saves bigint NOT NULL DEFAULT 0  -- moves at every write: the change stamp
        );
        CREATE TABLE duel_events (
            duel_id text NOT NULL REFERENCES duels(id) ON DELETE CASCADE,
            seq integer NOT NULL,
            event text NOT NULL,
            PRIMARY KEY (duel_id, seq)
        );
    """,
    2: """
        ALTER TABLE duels ADD COLUMN source text;        -- the source's text: what turns are validated against
        ALTER TABLE duels ADD COLUMN source_shown text;  -- the artifact's source_path, as the creating host saw it
    """,
}
_SCHEMA_LOCK = 0x6475656C  # advisory lock keys ("duel"), held for a migration or a join
_JOIN_LOCK = 0x6475656D
CLOCK_BOOT = "postgresql"  # the database's clock is the one clock: its times never need re-anchoring
CHANNEL = "duel_changed"  # NOTIFY'd with the duel id by every write, delivered at its commit
NOTIFY_WAIT_SECONDS = 0.5  # a waiter also looks again this often: a lease can expire with no write
SLOW_POLL_SECONDS = 0.5  # without a listening connection
LISTEN_RETRY_SECONDS = 5.0
DEFAULT_CONNECT_TIMEOUT = 10
RECONNECT_SECONDS = 5.0  # a lost connection is tried again for this long (a lease is 5 s at least)
RECONNECT_PAUSE_SECONDS = 0.25


class PostgresStore:
    """Duels in a PostgreSQL database; artifacts written into this process's debate dir too.

    ``offset`` gives seconds to add to the database's clock: tests move time with it, as
    the directory store's tests move a ``ManualClock``; it is never set in use.
    """

    def __init__(self, url: str, debate: DebateDir):
        self.url = url
        self.debate = debate
        self.location = redact(url)
        self.offset: Callable[[], float] = lambda: 0.0
        self._schema_ready = False
        self._local = _Connections()
        # Every connection any thread opened, so that none outlives the store: a thread's own
        # (threading.local) would otherwise be dropped unclosed when the thread ends.
        self._opened: list[psycopg.Connection[Any]] = []
        self._opened_lock = threading.Lock()
        weakref.finalize(self, _close_all, self._opened, self._opened_lock)

    # -- connection and errors ---------------------------------------------------------
    @property
    def conn(self) -> psycopg.Connection[Any]:
        """The connection of this thread for statements and transactions, opened again when closed."""
        if self._local.conn is None or self._local.conn.closed:
            self._local.conn = self._connect()
        return self._local.conn

    def _query(self, sql: Any, params: tuple[Any, ...] = ()) -> psycopg.Cursor[Any]:
        """Run one statement. Outside a transaction, a lost connection (a restarted server, a
        network cut) is opened again and the statement rerun, for up to RECONNECT_SECONDS:
        nothing was done on the lost one that the rerun could repeat. Inside one, the
        transaction is lost with it and rolled back by the server: the op fails as a whole."""
        in_transaction = (
            self._local.conn is not None
            and not self._local.conn.closed
            and self._local.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
        )
        deadline = time.monotonic() + RECONNECT_SECONDS
        while True:
            try:
                return self.conn.execute(sql, params)
            except psycopg.OperationalError:
                if in_transaction or time.monotonic() >= deadline:
                    raise
                if self._local.conn is not None:
                    self._local.conn.close()  # whatever state it is in, the next statement uses a new one
                time.sleep(RECONNECT_PAUSE_SECONDS)

    def _connect(self) -> psycopg.Connection[Any]:
        conn = psycopg.connect(self.url, autocommit=True, connect_timeout=DEFAULT_CONNECT_TIMEOUT)
        with self._opened_lock:
            self._opened[:] = [*(kept for kept in self._opened if not kept.closed), conn]
        return conn

    def close(self) -> None:
        """Close every connection the store opened, in any thread (also done when it is collected)."""
        _close_all(self._opened, self._opened_lock)
        self._local.conn = self._local.listener = None

    @contextlib.contextmanager
    def errors(self) -> Iterator[None]:
        """Turns a database error, or an OSError of the local copy, into ``STORAGE_FAILED``."""
        try:
            yield
        except psycopg.Error as exc:  # a lost connection is replaced by the next op's first statement
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise DuelError(
                ErrorCode.STORAGE_FAILED,
                f"cannot use the store {self.location}: {redact(reason)}",
                {"path": self.location, "errno": None},
            ) from None
        except OSError as exc:  # the local copy of the artifact
            raise DuelError(
                ErrorCode.STORAGE_FAILED,
                f"cannot write {exc.filename}: {exc.strerror}",
                {"path": str(exc.filename), "errno": None},
            ) from None

    def now(self) -> Instant:
        """The database's clock (plus ``offset``): one clock for every host, so never re-anchored."""
        # A SELECT of one expression always returns one row.
        row = cast("tuple[Any, ...]", self._query("SELECT extract(epoch FROM clock_timestamp())::float8").fetchone())
        moment = float(row[0]) + self.offset()
        return Instant(moment, moment, CLOCK_BOOT)

    # -- the schema ----------------------------------------------------------------------
    def schema_version(self) -> int:
        """The schema's version in the database; 0 before ``duel store init``."""
        if self._schema_ready:
            return SCHEMA_VERSION
        exists = self._query("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()
        if not exists or not exists[0]:
            return 0
        row = self._query("SELECT max(version) FROM schema_version").fetchone()
        version = int(row[0]) if row and row[0] is not None else 0
        self._schema_ready = version == SCHEMA_VERSION
        return version

    def ensure(self) -> None:
        """Create or migrate the schema (``duel store init`` does only this); a newer one is refused."""
        if self.schema_version() == SCHEMA_VERSION:
            return
        with self.conn.transaction():
            self._query("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            self._query("CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY)")
            current = self.schema_version()
            if current > SCHEMA_VERSION:
                raise DuelError(
                    ErrorCode.STATE_CORRUPT,
                    f"the store {self.location} has schema version {current}, newer than this duel's "
                    f"{SCHEMA_VERSION}: upgrade duel",
                    {"path": self.location},
                )
            for version in range(current + 1, SCHEMA_VERSION + 1):
                self._query(MIGRATIONS[version])
                self._query("INSERT INTO schema_version VALUES (%s)", (version,))
        self._schema_ready = True

    def check_readable(self) -> None:
        """``DUEL_NOT_FOUND`` when the database has no schema yet."""
        if self.schema_version() == 0:
            raise DuelError(ErrorCode.DUEL_NOT_FOUND, f"no duel in the store {self.location}")

    # -- joins -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def joining(self) -> Iterator[None]:
        """A database transaction holding the join lock (an advisory lock); the debate dir is prepared first."""
        self.debate.ensure()  # where this participant's copy of the artifact goes: refused before joining
        with self._kept_on_refusal():
            self._query("SELECT pg_advisory_xact_lock(%s)", (_JOIN_LOCK,))
            yield

    def read_index(self) -> dict[str, str]:
        """The ``duel_index`` table: each ``target_key`` to its latest duel id."""
        return dict(self._query("SELECT target_key, duel_id FROM duel_index").fetchall())

    def write_index(self, index: dict[str, str]) -> None:
        """Replace the ``duel_index`` table."""
        with self.conn.transaction():
            self._query("DELETE FROM duel_index")
            with self.conn.cursor() as cur:
                cur.executemany("INSERT INTO duel_index VALUES (%s, %s)", list(index.items()))

    def reserve_duel(self, stem: str) -> str:
        """A new duel id whose row is inserted and whose artifact name is free in the debate dir."""
        for n in range(1, 10_000):
            duel_id = stem if n == 1 else f"{stem}-{n}"
            if (self.debate.root / f"{duel_id}.md").exists():
                continue
            inserted = self._query("INSERT INTO duels (id) VALUES (%s) ON CONFLICT DO NOTHING", (duel_id,))
            if inserted.rowcount == 1:
                return duel_id
        raise DuelError(ErrorCode.DEBATE_DIR_INVALID, f"no free duel id for {stem} in {self.location}")

    def discard_duel(self, duel_id: str) -> None:
        """Delete the row of a creation that failed."""
        self._query("DELETE FROM duels WHERE id = %s", (duel_id,))

    def begin(self, state: DuelState, now: Instant) -> Transaction:
        """A transaction over a duel being created, inside :meth:`joining`."""
        self._local.heads[state.id] = ""
        return Transaction(self, state, now)

    # -- one duel ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _kept_on_refusal(self) -> Iterator[None]:
        """A database transaction committed when the block ends normally or with a refusal
        (its events are kept, as in a debate dir), rolled back on any other exception."""
        refusal: DuelError | None = None
        self._query("SELECT 1")  # a connection lost since the last op is replaced before the op begins
        with self.conn.transaction():
            try:
                yield
            except DuelError as exc:
                refusal = exc
        if refusal is not None:
            raise refusal

    @contextlib.contextmanager
    def transaction(self, duel_id: str) -> Iterator[Transaction]:
        """One op on the duel, its row locked ``FOR UPDATE``; the artifact is pulled into the debate dir after it."""
        self.check_readable()
        try:
            with self._kept_on_refusal():
                row = self._query("SELECT state, head FROM duels WHERE id = %s FOR UPDATE", (duel_id,)).fetchone()
                state = self._state_of(duel_id, row)
                tx = Transaction(self, state, self.now())  # read after the lock: the time this op happens at
                self._local.heads[duel_id] = row[1] if row else ""
                yield tx
        except DuelError:
            self._pull_after(duel_id)
            raise
        self._pull_after(duel_id)

    def _pull_after(self, duel_id: str) -> None:
        """The op is committed and its answer stands: a local copy that cannot be written now
        (a full disk, a connection lost since the commit) is written by the next op, or by ``duel pull``."""
        with contextlib.suppress(OSError, psycopg.Error):
            self.pull(duel_id)

    def pull(self, duel_id: str) -> Path | None:
        """Write the duel's artifact, as the database keeps it, into this process's debate dir:
        after each op of a participant, so its copy follows every change, the peer's included."""
        row = self._query("SELECT state, artifact FROM duels WHERE id = %s", (duel_id,)).fetchone()
        if row is None or row[0] is None or row[1] is None:
            return None
        return copy_artifact(self.debate, self._state_of(duel_id, row), row[1].encode("utf-8"))

    def save(self, state: DuelState, events: list[Event]) -> None:
        """Insert ``events`` and update the state over the chain head the op read, then NOTIFY waiters."""
        with self.conn.transaction(), self.conn.cursor() as cur:
            if events:
                cur.executemany(
                    "INSERT INTO duel_events VALUES (%s, %s, %s)",
                    [(state.id, event.seq, json.dumps(event.to_json(), ensure_ascii=False)) for event in events],
                )
                state.event_seq += len(events)
            head = state.turns[-1].sha256 if state.turns else ""
            read_head = self._local.heads.get(state.id, "")
            # Compare-and-set on the chain head: written only over the head the op validated against.
            cur.execute(
                "UPDATE duels SET state = %s, head = %s, saves = saves + 1 WHERE id = %s AND head = %s",
                (state.to_json().decode(), head, state.id, read_head),
            )
            if cur.rowcount != 1:
                raise DuelError(
                    ErrorCode.STORAGE_FAILED,
                    f"duel {state.id} changed under this write (its last turn is not the one read)",
                    {"path": self.location, "errno": None},
                )
            cur.execute("SELECT pg_notify(%s, %s)", (CHANNEL, state.id))
            self._local.heads[state.id] = head

    def _state_of(self, duel_id: str, row: tuple[Any, ...] | None) -> DuelState:
        if row is None or row[0] is None:
            raise DuelError(ErrorCode.DUEL_NOT_FOUND, f"no duel {duel_id!r} in the store {self.location}")
        return DuelState.from_json(row[0].encode(), f"{self.location} duel {duel_id}")

    def read_state(self, duel_id: str) -> DuelState:
        """The duel's state as last committed."""
        return self._state_of(duel_id, self._query("SELECT state FROM duels WHERE id = %s", (duel_id,)).fetchone())

    def stamp(self, duel_id: str) -> int | None:
        """How many times the duel was saved, or None without such a duel."""
        row = self._query("SELECT saves FROM duels WHERE id = %s", (duel_id,)).fetchone()
        return int(row[0]) if row else None

    def next_stamp(self, duel_id: str, stamp: object, timeout: float) -> int | None:
        """Wait for a NOTIFY of this duel (or at most half a second); a slow poll without one."""
        listener = self._listening()
        if listener is None:
            time.sleep(min(SLOW_POLL_SECONDS, timeout))
            return self.stamp(duel_id)
        current = self.stamp(duel_id)  # after LISTEN: a change from here on is notified
        if current != stamp:
            return current
        try:
            for notice in listener.notifies(timeout=min(NOTIFY_WAIT_SECONDS, timeout)):
                if notice.payload == duel_id:
                    break
        except psycopg.OperationalError:  # the listening connection dropped: poll until it is back
            listener.close()
            self._local.listener = None
        return self.stamp(duel_id)

    def _listening(self) -> psycopg.Connection[Any] | None:
        """A second connection that LISTENs (the first one runs transactions); None while it cannot be had."""
        if self._local.listener is not None and not self._local.listener.closed:
            return self._local.listener
        if time.monotonic() < self._local.listen_retry_at:
            return None
        try:
            self._local.listener = self._connect()
            self._local.listener.execute(f"LISTEN {CHANNEL}")
        except psycopg.Error:
            self._local.listener = None
            self._local.listen_retry_at = time.monotonic() + LISTEN_RETRY_SECONDS
        return self._local.listener

    def events(self, state: DuelState) -> DatabaseEvents:
        """The duel's events in the database."""
        return DatabaseEvents(self, state)

    def duel_ids(self) -> list[str]:
        """Every duel created in full, in id order."""
        return [row[0] for row in self._query("SELECT id FROM duels WHERE state IS NOT NULL ORDER BY id")]

    # -- the source: each host has its own copy, the database the one turns are validated against --
    own_source_copies = True

    def target_key(self, source: SourceDocument, slug: str) -> str:
        """By the source's file name, not its path: each host keeps its copy where it likes."""
        return target_key(source.name, topic_slug=slug)

    def keep_source(self, state: DuelState, source: SourceDocument) -> None:
        """The text, and the path the artifact shows, from the creating host: every host writes the same header."""
        from ..record.artifact import display_source_path

        shown = display_source_path(state.source_path, artifact_path=self.artifact_path(state))
        self._query("UPDATE duels SET source = %s, source_shown = %s WHERE id = %s", (source.text, shown, state.id))

    def read_source(self, state: DuelState) -> SourceDocument:
        """The source text the database keeps for the duel (raises SourceUnreadable without one)."""
        row = self._query("SELECT source FROM duels WHERE id = %s", (state.id,)).fetchone()
        if row is None or row[0] is None:
            raise SourceUnreadable(state.source_path, reason="the store keeps no source for this duel")
        return SourceDocument(state.source_path, row[0], state.source_sha256)

    def source_exists(self, state: DuelState) -> bool:  # noqa: ARG002  the DuelStore signature
        """Always: the source is kept with the duel, and nothing on this host can take it away."""
        return True

    def source_on_disk(self, state: DuelState) -> str | None:  # noqa: ARG002  the DuelStore signature
        """Not known: each host has its own copy, and ``duel join`` watches its own (section 6, "The source")."""
        return None

    def source_path_shown(self, state: DuelState) -> str:
        """The source path the creating host's artifact shows, so every host writes the same header."""
        row = self._query("SELECT source_shown FROM duels WHERE id = %s", (state.id,)).fetchone()
        return str(row[0]) if row and row[0] is not None else state.source_path

    # -- the artifact ------------------------------------------------------------------------
    def artifact_path(self, state: DuelState) -> Path:
        """Where this host's copy goes: ``<debate dir>/<duel id>.md``."""
        return self.debate.artifact_path(state)

    def read_artifact(self, state: DuelState, limit: int) -> bytes:
        """The database's copy: the record's authority (a local copy is only written from it)."""
        row = self._query("SELECT artifact FROM duels WHERE id = %s", (state.id,)).fetchone()
        if row is None or row[0] is None:
            raise FileNotFoundError(f"duel {state.id} has no artifact yet")
        data: bytes = row[0].encode("utf-8")
        if len(data) > limit:
            raise ValueError(f"larger than {limit // (1024 * 1024)} MiB")
        return data

    def write_beside(self, state: DuelState, name: str, text: str) -> None:
        """Into this host's debate dir, beside its copy of the artifact: only the closing host has it
        (``duel apply`` on any host recomputes the revision from the record)."""
        self.debate.ensure()
        write_beside(self.debate, state, name, text)

    def write_artifact(
        self,
        state: DuelState,
        text: str,
        *,
        create: bool = False,  # noqa: ARG002  the DuelStore signature: the row exists once reserved
    ) -> None:
        """Into the database; :meth:`pull` copies it into the debate dir once the op is committed."""
        self._query("UPDATE duels SET artifact = %s WHERE id = %s", (text, state.id))


def _close_all(opened: list[psycopg.Connection[Any]], lock: threading.Lock) -> None:
    with lock:
        for conn in opened:
            conn.close()
        opened.clear()


class _Connections(threading.local):
    """One thread's connections: a participant refreshes its lease from a second thread
    while the first waits or writes, and a connection runs one transaction at a time."""

    def __init__(self) -> None:
        self.conn: psycopg.Connection[Any] | None = None
        self.listener: psycopg.Connection[Any] | None = None  # LISTENs for wait
        self.listen_retry_at = 0.0
        self.heads: dict[str, str] = {}  # duel id -> the chain head its locked row was read with


class DatabaseEvents:
    """A duel's events from the database, up to the count its state vouches for."""

    def __init__(self, store: PostgresStore, state: DuelState):
        self.store = store
        self.state = state

    def read(self, since: EventCursor = LOG_START, types: Collection[str] | None = None) -> list[Event]:
        """The events from ``since`` to the state's count (of ``types`` only, when given);
        ``STATE_CORRUPT`` when fewer are there."""
        if since.seq > self.state.event_seq:
            raise corrupt(
                f"{self.store.location} duel {self.state.id}", f"holds fewer events than the {since.seq} already read"
            )
        rows = self.store.conn.execute(
            "SELECT event FROM duel_events WHERE duel_id = %s AND seq >= %s AND seq < %s ORDER BY seq",
            (self.state.id, since.seq, self.state.event_seq),
        ).fetchall()
        try:
            events = [parse_event(row[0]) for row in rows]
        except ValueError as exc:
            raise corrupt(f"{self.store.location} duel {self.state.id}", exc) from None
        return events if types is None else [event for event in events if event.type in types]

    @property
    def end(self) -> EventCursor:
        """The cursor after the state's last event."""
        return EventCursor(self.state.event_seq, 0)
