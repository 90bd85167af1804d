"""The PostgreSQL store: duels across machines through one database (psycopg 3).

One database transaction per op, the duel's row locked (``SELECT … FOR UPDATE``): the
lease and fence checks, the append and the close all happen under that lock, and the
state is written only if the turns' chain head is still the one read (compare-and-set).
Time is the database's ``clock_timestamp()``, read with the lock, so client clocks do not
matter. An op on a duel this process has seen is one round trip: it runs on the row as last
seen (its state, its save count, the time from the clocks' last known difference), and one
transaction sends a check (the row locked, unchanged since, the guessed time within a second
of the database's) with the writes: one statement, :data:`_SAVE_GUESSED`, when the op writes
only the state and its events, else :data:`_GUESSED` and the writes pipelined. An op on a
duel not seen yet reads its row first, unlocked: two round trips. A wrong guess writes nothing
and the op runs again on the row read afresh; after three in a row, on the row locked and read
first. No row lock is held while the process decides. One connection a process
(:mod:`.postgres_link`); a write NOTIFYs its duel's own channel.
Loaded only when a ``postgresql://`` store is used: psycopg costs ``duel tools`` nothing
otherwise (docs/protocol.md section 4, "Stores").
"""

from __future__ import annotations

import contextlib
import json
import pickle
import threading
import time
import weakref
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple, cast

import psycopg

from ..clock import Instant
from ..errors import DuelError
from ..settings import redact
from ..vocabulary import ErrorCode
from ._postgres_link import FULL, Link, channel_of, transient_reason
from ._retrying import stale_guess, transient_failure
from ._state import DuelState, corrupt
from ._store import LOG_START, EventCursor, Transaction
from .identity import target_key
from .storage import DebateDir, copy_artifact, write_beside

if TYPE_CHECKING:  # loaded where used: a wait or a claim reads no event and no source (`duel tools` start-up)
    from ..turns import SourceDocument
    from .events import Event

SCHEMA_VERSION = 5
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
    3: """
        -- moves at every artifact write: a host copies the artifact only when it moved
        ALTER TABLE duels ADD COLUMN artifact_saves bigint NOT NULL DEFAULT 0;
        -- fails a save that wrote no state, so its events and its NOTIFY go back with it
        CREATE FUNCTION duel_saved(saved bigint, duel text) RETURNS void LANGUAGE plpgsql AS $$
        BEGIN
            IF saved <> 1 THEN
                RAISE EXCEPTION 'duel % changed under this write (its last turn is not the one read)', duel;
            END IF;
        END $$;
    """,
    4: """
        -- An op run on a guess: the duel's row locked, saved no more times than the guess says, and
        -- the guessed time within a second of the database's; else the transaction fails (DL409),
        -- writing nothing. Returns the database's time, to guess the next op's with.
        CREATE FUNCTION duel_guessed(duel text, seen_saves bigint, guessed float8) RETURNS float8
        LANGUAGE plpgsql AS $$
        DECLARE
            current bigint;
            now float8 := extract(epoch FROM clock_timestamp());
        BEGIN
            SELECT saves INTO current FROM duels WHERE id = duel FOR UPDATE;
            IF current IS DISTINCT FROM seen_saves OR now < guessed OR now > guessed + 1 THEN
                RAISE EXCEPTION USING ERRCODE = 'DL409', MESSAGE = format('duel %s moved since it was seen', duel);
            END IF;
            RETURN now;
        END $$;
    """,
    5: """
        -- An op on a guess whose one write is the state and its events: the check, the save and the
        -- NOTIFY in one call, so the op is one statement (a pipeline costs the client twice the work). The
        -- events come as JSON lines, numbered from first_seq: scalars cost the client less than arrays.
        CREATE FUNCTION duel_save_guessed(
            duel text, seen_saves bigint, guessed float8, new_state text, new_head text, read_head text,
            first_seq integer, events text, channel text
        ) RETURNS float8 LANGUAGE plpgsql AS $$
        DECLARE
            now float8 := extract(epoch FROM clock_timestamp());
        BEGIN
            UPDATE duels SET state = new_state, head = new_head, saves = saves + 1
            WHERE id = duel AND saves = seen_saves AND head = read_head AND now BETWEEN guessed AND guessed + 1;
            IF NOT FOUND THEN
                RAISE EXCEPTION USING ERRCODE = 'DL409', MESSAGE = format('duel %s moved since it was seen', duel);
            END IF;
            INSERT INTO duel_events SELECT duel, first_seq + e.n - 1, e.event
            FROM unnest(string_to_array(events, E'\\n')) WITH ORDINALITY AS e(event, n);
            PERFORM pg_notify(channel, duel);
            RETURN now;
        END $$;
    """,
}
_SCHEMA_LOCK = 0x6475656C  # advisory lock keys ("duel"), held for a migration or a join
_JOIN_LOCK = 0x6475656D
CLOCK_BOOT = "postgresql"  # the database's clock is the one clock: its times never need re-anchoring
NOTIFY_WAIT_SECONDS = 0.5  # a waiter also looks again this often: a lease can expire with no write
LISTEN_SLICE_SECONDS = 0.1  # a wait holds the connection this long at most before giving way
CROWDED_MARGIN = 5  # free connections below which the server counts as crowded
CROWDED_POLL_SECONDS = 2.0  # a wait on a crowded server looks again this often, on a new connection (and backend)
_STAMP_AND_CROWDING: Final = """
    SELECT saves, (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend') + %s
        >= current_setting('max_connections')::integer - current_setting('superuser_reserved_connections')::integer
    FROM duels WHERE id = %s
"""
_ROW: Final = "SELECT state, saves, head, artifact_saves"
# With the row come what an append needs and this process lacks: the artifact when it moved since
# this process last had it, the source (never changed) when it has not read it yet.
_EXTRAS: Final = (
    "CASE WHEN artifact_saves <> %(artifact_saves)s THEN artifact END, "
    "CASE WHEN %(source)s THEN source END, CASE WHEN %(source)s THEN source_shown END"
)
_READ: Final = f"{_ROW}, {_EXTRAS} FROM duels WHERE id = %(id)s"
_CLOCKED_READ: Final = f"{_ROW}, {_EXTRAS}, extract(epoch FROM clock_timestamp())::float8 FROM duels WHERE id = %(id)s"
_LOCKED_READ: Final = f"{_CLOCKED_READ} FOR UPDATE"
_GUESSED: Final = "SELECT duel_guessed(%s, %s, %s)"
_SAVE_GUESSED: Final = "SELECT duel_save_guessed(%s, %s, %s, %s, %s, %s, %s, %s, %s)"
_STALE: Final = "DL409"  # the SQLSTATE of a failed check (duel_guessed, duel_save_guessed)
GUESS_MARGIN_SECONDS: Final = 0.001  # a guessed time errs early: the check refuses one ahead of the database
GUESSES_BEFORE_LOCKING: Final = 3  # an op's guesses that fail in a row before it locks the row to read it


class SeenRow(NamedTuple):
    """A duel's row as this process last saw it: what an op runs on when it guesses."""

    state: str
    saves: int
    head: str
    artifact_saves: int


class _Op:
    """One op on one duel in this thread: the row it runs on, and what it wrote."""

    def __init__(self, duel_id: str, guess: SeenRow | None):
        self.duel_id = duel_id
        self.guess = guess  # the row as seen, when the op runs on it (one round trip)
        self.read: SeenRow | None = guess  # the row the op began from
        self.writes: list[tuple[str, dict[str, Any] | tuple[Any, ...]]] = []  # sent with the check, on a guess
        self.saved: SeenRow | None = None  # the row as the op left it
        self.artifact: str | None = None  # the artifact the op wrote
        self.tx: Transaction | None = None


# Compare-and-set on the chain head: the events go in and waiters are told only if the state did.
_SAVE: Final = """
    WITH saved AS (
        UPDATE duels SET state = %(state)s, head = %(head)s, saves = saves + 1
        WHERE id = %(id)s AND head = %(read_head)s RETURNING id
    ), logged AS (
        INSERT INTO duel_events
        SELECT saved.id, %(first_seq)s + e.n - 1, e.event
        FROM saved, unnest(string_to_array(%(events)s, E'\\n')) WITH ORDINALITY AS e(event, n)
    )
    SELECT pg_notify(%(channel)s, %(id)s), duel_saved((SELECT count(*) FROM saved), %(id)s)
"""


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
        self.link = Link(url)
        self.seen: dict[str, SeenRow] = {}  # duel id -> its row as last seen: the next op's guess
        self._skew: float | None = None  # the database's clock minus this host's, as last seen
        self._ops = threading.local()  # .op: the op this thread runs (a refresher thread runs its own)
        self._artifacts: dict[str, tuple[int, str]] = {}  # duel id -> artifact_saves and the artifact then
        self._sources: dict[str, tuple[str | None, str | None]] = {}  # duel id -> source text and path shown
        # duel id -> a state's JSON and the state as parsed then, pickled: every op needs a state of its own to
        # change, and unpickling the last one seen costs a fifth of parsing and checking its JSON again
        self._parsed: dict[str, tuple[str, bytes]] = {}
        self._copied: dict[str, int] = {}  # duel id -> the artifact_saves this host's copy holds
        self._stale: dict[str, int] = {}  # duel id -> its ops' guesses that failed in a row
        weakref.finalize(self, self.link.close)

    # -- connection and errors ---------------------------------------------------------
    def _query(self, sql: Any, params: Any = ()) -> psycopg.Cursor[Any]:
        """Run one statement (its rows are fetched with it, so reading them needs no connection)."""
        with self.link.held() as conn:
            return conn.execute(sql, params)

    def close(self) -> None:
        """Close the connection (also done when the store is collected)."""
        self.link.close()

    @contextlib.contextmanager
    def errors(self) -> Iterator[None]:
        """Turns a database error, or an OSError of the local copy, into ``STORAGE_FAILED``,
        marked transient when it is expected to pass (:mod:`.retrying`)."""
        try:
            yield
        except psycopg.Error as exc:  # a lost connection is replaced by the next op
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            message = f"cannot use the store {self.location}: {redact(reason)}"
            details: dict[str, object] = {"path": self.location, "errno": None}
            transient = transient_reason(exc, reached=self.link.reached)
            if transient is not None:
                raise transient_failure(message, transient, details, soon=transient == FULL) from None
            raise DuelError(ErrorCode.STORAGE_FAILED, message, details) from None
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
        self._skew = float(row[0]) - time.time()
        return self._instant(float(row[0]))

    def _instant(self, epoch: float) -> Instant:
        moment = epoch + self.offset()
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
        with self.link.held() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY)")
            current = self.schema_version()
            if current > SCHEMA_VERSION:
                raise DuelError(
                    ErrorCode.STATE_CORRUPT,
                    f"the store {self.location} has schema version {current}, newer than this duel's "
                    f"{SCHEMA_VERSION}: upgrade duel",
                    {"path": self.location},
                )
            for version in range(current + 1, SCHEMA_VERSION + 1):
                conn.execute(MIGRATIONS[version])
                conn.execute("INSERT INTO schema_version VALUES (%s)", (version,))
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
        with self._kept_on_refusal() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_JOIN_LOCK,))
            yield

    def read_index(self) -> dict[str, str]:
        """The ``duel_index`` table: each ``target_key`` to its latest duel id."""
        return dict(self._query("SELECT target_key, duel_id FROM duel_index").fetchall())

    def write_index(self, index: dict[str, str]) -> None:
        """Replace the ``duel_index`` table."""
        with self.link.held() as conn, conn.transaction():
            conn.execute("DELETE FROM duel_index")
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO duel_index VALUES (%s, %s)", list(index.items()))

    def reserve_duel(self, stem: str) -> str:
        """A new duel id whose row is inserted and whose artifact name is free in the debate dir."""
        for n in range(1, 10_000):
            duel_id = stem if n == 1 else f"{stem}-{n}"
            if (self.debate.root / f"{duel_id}.md").exists():
                continue
            # RETURNING, not rowcount: inside a pipeline, a row is what makes the statement's result come back.
            if self._query(
                "INSERT INTO duels (id) VALUES (%s) ON CONFLICT DO NOTHING RETURNING id", (duel_id,)
            ).fetchone():
                return duel_id
        raise DuelError(ErrorCode.DEBATE_DIR_INVALID, f"no free duel id for {stem} in {self.location}")

    def discard_duel(self, duel_id: str) -> None:
        """Delete the row of a creation that failed."""
        self._query("DELETE FROM duels WHERE id = %s", (duel_id,))

    def begin(self, state: DuelState, now: Instant) -> Transaction:
        """A transaction over a duel being created, inside :meth:`joining`."""
        return Transaction(self, state, now)

    # -- one duel ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _kept_on_refusal(self) -> Iterator[psycopg.Connection[Any]]:
        """A database transaction, pipelined, on the connection this thread holds throughout: committed
        when the block ends normally or with a refusal (its events are kept, as in a debate dir), rolled
        back on any other exception. BEGIN and COMMIT are statements of the pipeline, not psycopg's
        transaction block, which waits for the server at each end."""
        refusal: DuelError | None = None
        with self.link.held() as conn:
            try:
                with conn.pipeline():
                    conn.execute("BEGIN")
                    try:
                        yield conn
                    except DuelError as exc:
                        refusal = exc
                    conn.execute("COMMIT")
            except BaseException:
                if not conn.closed and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                    with contextlib.suppress(psycopg.Error):
                        conn.execute("ROLLBACK")
                raise
        if refusal is not None:
            raise refusal

    @contextlib.contextmanager
    def transaction(self, duel_id: str) -> Iterator[Transaction]:
        """One op on the duel: on its row as last seen (read first, unlocked, when this process has not
        seen it), checked at the commit (one round trip). A wrong guess is a stale ``STORAGE_FAILED``: the
        op runs again, on the row read afresh. The artifact is copied into the debate dir after it when it
        moved.

        No row lock is held while this process decides: a process short of CPU (a niced ``duel tools
        wait``, a loaded host) would hold it that long, and every other op on the duel would queue behind
        it (the scale bench measured such queues of up to 0.9 s). Only an op whose guesses failed
        :data:`GUESSES_BEFORE_LOCKING` times in a row, on a duel that busy, locks the row to read it."""
        self.check_readable()
        if (duel_id not in self.seen or self._skew is None) and self._stale.get(duel_id, 0) < GUESSES_BEFORE_LOCKING:
            self._read_clocked(duel_id)
        seen = self.seen.get(duel_id)
        op = self._ops.op = _Op(duel_id, seen if seen is not None and self._skew is not None else None)
        try:
            if op.guess is None:
                with self._kept_on_refusal() as conn:
                    row = conn.execute(_LOCKED_READ, self._lacking(duel_id)).fetchone()
                    state = self._state_of(duel_id, row)
                    epoch = cast("tuple[Any, ...]", row)[-1]
                    self._skew = epoch - time.time()
                    op.read = self._keep(duel_id, cast("tuple[Any, ...]", row))
                    op.tx = Transaction(self, state, self._instant(epoch))  # read with the lock: the op's time
                    yield op.tx
            else:
                yield from self._guessing(op)
        except DuelError as exc:
            if exc.details.get("stale") is True:
                self.seen.pop(duel_id, None)
                self._stale[duel_id] = self._stale.get(duel_id, 0) + 1
                raise
            self._stale.pop(duel_id, None)
            self._done(op)  # a refusal: committed with its events
            raise
        except BaseException:
            self.seen.pop(duel_id, None)  # rolled back, or not known to be committed: read it afresh
            raise
        else:
            self._stale.pop(duel_id, None)
            self._done(op)
        finally:
            self._ops.op = None

    def _guessing(self, op: _Op) -> Iterator[Transaction]:
        """The op on the row as seen, its writes held back and sent with the check in one round trip."""
        guess = cast("SeenRow", op.guess)
        guessed = time.time() + cast("float", self._skew) - GUESS_MARGIN_SECONDS
        op.tx = Transaction(self, self._state_of(op.duel_id, (guess.state,)), self._instant(guessed))
        refusal: DuelError | None = None
        try:
            yield op.tx
        except DuelError as exc:
            refusal = exc  # committed like an answer, if the guess holds
        with self.link.held() as conn:
            try:
                check = self._send_guessed(conn, op, guessed)
            except psycopg.Error as exc:
                if exc.sqlstate == _STALE:
                    raise stale_guess(f"duel {op.duel_id} moved since this process saw it") from None
                raise
            self._skew = float(cast("tuple[Any, ...]", check.fetchone())[0]) - time.time()
        if refusal is not None:
            raise refusal

    @staticmethod
    def _send_guessed(conn: psycopg.Connection[Any], op: _Op, guessed: float) -> psycopg.Cursor[Any]:
        """The check and the op's writes, one transaction: a single statement when the op writes
        nothing or only the state (a claim, a refresh, a release), else one pipelined Sync."""
        saves = cast("SeenRow", op.guess).saves
        if not op.writes:
            return conn.execute(_GUESSED, (op.duel_id, saves, guessed))
        if len(op.writes) == 1 and op.writes[0][0] is _SAVE:
            save = cast("dict[str, Any]", op.writes[0][1])
            fields = ("state", "head", "read_head", "first_seq", "events", "channel")
            return conn.execute(_SAVE_GUESSED, (op.duel_id, saves, guessed, *(save[name] for name in fields)))
        with conn.pipeline():  # one Sync: the check and the writes are one implicit transaction
            check = conn.execute(_GUESSED, (op.duel_id, saves, guessed))
            for sql, params in op.writes:
                conn.execute(sql, params)
        return check

    def _done(self, op: _Op) -> None:
        """The op is committed and its answer stands: what it left is the next op's guess, and the artifact
        it wrote is copied into the debate dir, or the database's when another host moved it since this
        one's copy. A copy that cannot be written now (a full disk, a connection lost since the commit)
        is written by a later op, or by ``duel pull``."""
        row = op.saved or op.read
        if row is None:
            return
        self.seen[op.duel_id] = row
        if op.artifact is not None:
            self._artifacts[op.duel_id] = (row.artifact_saves, op.artifact)
        with contextlib.suppress(OSError, psycopg.Error, DuelError):
            known = self._artifacts.get(op.duel_id)
            if self._copied.get(op.duel_id) == row.artifact_saves:
                return
            if known is not None and known[0] == row.artifact_saves and op.tx is not None:
                copy_artifact(self.debate, op.tx.state, known[1].encode("utf-8"))
                self._copied[op.duel_id] = row.artifact_saves
            else:
                self.pull(op.duel_id)

    def pull(self, duel_id: str) -> Path | None:
        """Write the duel's artifact, as the database keeps it, into this process's debate dir:
        after an op that finds it moved, so the copy follows every change, the peer's included."""
        row = self._query("SELECT state, artifact, artifact_saves FROM duels WHERE id = %s", (duel_id,)).fetchone()
        if row is None or row[0] is None or row[1] is None:
            return None
        path = copy_artifact(self.debate, self._state_of(duel_id, row), row[1].encode("utf-8"))
        self._artifacts[duel_id] = (row[2], row[1])
        self._copied[duel_id] = row[2]
        return path

    def save(self, state: DuelState, events: list[Event]) -> None:
        """Insert ``events`` and update the state over the chain head the op read, NOTIFYing the
        duel's waiters: one statement, sent with the commit (a failed compare-and-set fails it)."""
        head = state.turns[-1].sha256 if state.turns else ""
        state.event_seq += len(events)
        text = state.to_json().decode()
        self._parsed[state.id] = (text, pickle.dumps(state))
        op: _Op | None = getattr(self._ops, "op", None)
        read = op.read if op is not None else None
        params = {
            "state": text,
            "head": head,
            "id": state.id,
            "read_head": read.head if read is not None else "",
            "first_seq": state.event_seq - len(events),
            # JSON lines: json.dumps writes a newline inside a string as the escape \n, never raw
            "events": "\n".join(json.dumps(event.to_json(), ensure_ascii=False) for event in events),
            "channel": channel_of(state.id),
        }
        self._write(op, _SAVE, params)
        if op is not None and read is not None:
            op.saved = SeenRow(text, read.saves + 1, head, (op.saved or read).artifact_saves)

    def _write(self, op: _Op | None, sql: str, params: dict[str, Any] | tuple[Any, ...]) -> None:
        """Run a write now (with the lock held), or hold it back for the check of an op on a guess."""
        if op is not None and op.guess is not None:
            op.writes.append((sql, params))
        else:
            self._query(sql, params)

    def _state_of(self, duel_id: str, row: tuple[Any, ...] | None) -> DuelState:
        if row is None or row[0] is None:
            raise DuelError(ErrorCode.DUEL_NOT_FOUND, f"no duel {duel_id!r} in the store {self.location}")
        text, known = row[0], self._parsed.get(duel_id)
        if known is not None and known[0] == text:
            return cast("DuelState", pickle.loads(known[1]))  # noqa: S301  bytes this process pickled itself
        state = DuelState.from_json(text.encode(), f"{self.location} duel {duel_id}")
        self._parsed[duel_id] = (text, pickle.dumps(state))
        return state

    def _read_clocked(self, duel_id: str) -> None:
        """The duel's row, unlocked, with the database's clock: the guess and the skew of the op that follows."""
        row = cast("tuple[Any, ...] | None", self._query(_CLOCKED_READ, self._lacking(duel_id)).fetchone())
        self._state_of(duel_id, row)  # no such duel: DUEL_NOT_FOUND; the state parsed is kept for the op
        self._skew = cast("tuple[Any, ...]", row)[-1] - time.time()
        self.seen[duel_id] = self._keep(duel_id, cast("tuple[Any, ...]", row))

    def read_state(self, duel_id: str) -> DuelState:
        """The duel's state as last committed; its row is the next op's guess (after a wait, say)."""
        row = self._query(_READ, self._lacking(duel_id)).fetchone()
        state = self._state_of(duel_id, row)
        self.seen[duel_id] = self._keep(duel_id, cast("tuple[Any, ...]", row))
        return state

    def _lacking(self, duel_id: str) -> dict[str, Any]:
        """The parameters of a read that brings what this process lacks of the duel (:data:`_EXTRAS`)."""
        artifact_saves = self._artifacts.get(duel_id, (-1, ""))[0]
        return {"id": duel_id, "artifact_saves": artifact_saves, "source": duel_id not in self._sources}

    def _keep(self, duel_id: str, row: tuple[Any, ...]) -> SeenRow:
        """Keep what a read of :data:`_EXTRAS` brought; the row as seen."""
        seen = SeenRow(*row[:4])
        artifact, source, shown = row[4:7]
        if artifact is not None:
            self._artifacts[duel_id] = (seen.artifact_saves, artifact)
        if source is not None:
            self._sources[duel_id] = (source, shown)
        return seen

    def stamp(self, duel_id: str) -> int | None:
        """How many times the duel was saved, or None without such a duel."""
        row = self._query("SELECT saves FROM duels WHERE id = %s", (duel_id,)).fetchone()
        return int(row[0]) if row else None

    def next_stamp(self, duel_id: str, stamp: object, timeout: float) -> int | None:
        """Wait for a NOTIFY on the duel's channel (or at most half a second), then the stamp.

        The connection is held in slices of a tenth of a second, so a lease refresh from
        another thread never waits long; a notification that comes between slices is kept.
        On a server close to its ``max_connections`` the wait gives its connection back and
        looks again 2 s later instead: a waiting seat must not keep another out."""
        channel = channel_of(duel_id)
        with self.link.held() as conn:
            self.link.listen(conn, channel)
            # After LISTEN: a change from here on is notified.
            row = cast(
                "tuple[Any, ...] | None", conn.execute(_STAMP_AND_CROWDING, (CROWDED_MARGIN, duel_id)).fetchone()
            )
            current, crowded = (int(row[0]), bool(row[1])) if row else (None, False)
            if crowded:
                self.link.crowd()  # given back when this hold ends
        if current != stamp:
            return current
        if crowded:
            time.sleep(min(CROWDED_POLL_SECONDS, timeout))
            return self.stamp(duel_id)
        deadline = time.monotonic() + min(NOTIFY_WAIT_SECONDS, timeout)
        while (left := deadline - time.monotonic()) > 0:
            with self.link.held() as conn:
                if channel not in self.link.channels:  # a new connection since: look again, then LISTEN anew
                    break
                if self.link.heard(conn, duel_id, min(LISTEN_SLICE_SECONDS, left)):
                    break
            self.link.give_way()
        return self.stamp(duel_id)

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
        from ..record import display_source_path

        shown = display_source_path(state.source_path, artifact_path=self.artifact_path(state))
        self._query("UPDATE duels SET source = %s, source_shown = %s WHERE id = %s", (source.text, shown, state.id))
        self._sources[state.id] = (source.text, shown)

    def _source_row(self, duel_id: str) -> tuple[str | None, str | None]:
        """The source's text and the path the artifact shows: written once, at the creation, so kept."""
        if duel_id not in self._sources:
            row = self._query("SELECT source, source_shown FROM duels WHERE id = %s", (duel_id,)).fetchone()
            if row is None or row[0] is None:
                return (None, None)
            self._sources[duel_id] = (row[0], row[1])
        return self._sources[duel_id]

    def read_source(self, state: DuelState) -> SourceDocument:
        """The source text the database keeps for the duel (raises SourceUnreadable without one)."""
        from ..turns import SourceDocument, SourceUnreadable

        text, _ = self._source_row(state.id)
        if text is None:
            raise SourceUnreadable(state.source_path, reason="the store keeps no source for this duel")
        return SourceDocument(path=state.source_path, text=text, sha256=state.source_sha256)

    def source_exists(self, state: DuelState) -> bool:  # noqa: ARG002  the DuelStore signature
        """Always: the source is kept with the duel, and nothing on this host can take it away."""
        return True

    def source_on_disk(self, state: DuelState) -> str | None:  # noqa: ARG002  the DuelStore signature
        """Not known: each host has its own copy, and ``duel join`` watches its own (section 6, "The source")."""
        return None

    def source_path_shown(self, state: DuelState) -> str:
        """The source path the creating host's artifact shows, so every host writes the same header."""
        _, shown = self._source_row(state.id)
        return shown if shown is not None else state.source_path

    # -- the artifact ------------------------------------------------------------------------
    def artifact_path(self, state: DuelState) -> Path:
        """Where this host's copy goes: ``<debate dir>/<duel id>.md``."""
        return self.debate.artifact_path(state)

    def read_artifact(self, state: DuelState, limit: int) -> bytes:
        """The database's copy: the record's authority (a local copy is only written from it). In an op,
        the copy this process last read or wrote when it is the one the op's row names."""
        op: _Op | None = getattr(self._ops, "op", None)
        known = self._artifacts.get(state.id)
        if op is not None and op.read is not None and known is not None and known[0] == op.read.artifact_saves:
            text = known[1]
        else:
            row = self._query("SELECT artifact, artifact_saves FROM duels WHERE id = %s", (state.id,)).fetchone()
            if row is None or row[0] is None:
                raise FileNotFoundError(f"duel {state.id} has no artifact yet")
            if op is not None and op.guess is not None and row[1] != op.guess.artifact_saves:
                raise stale_guess(f"duel {state.id} moved since this process saw it")
            text = row[0]
            self._artifacts[state.id] = (row[1], text)
        data: bytes = text.encode("utf-8")
        if len(data) > limit:
            raise ValueError(f"larger than {limit // (1024 * 1024)} MiB")
        return data

    def write_beside(self, state: DuelState, name: str, text: str) -> None:
        """Into this host's debate dir, beside its copy of the artifact: only the closing host has it
        (``duel apply`` on any host recomputes the revision from the record)."""
        self.debate.ensure()
        write_beside(self.debate, state, name, text)

    def write_artifact(self, state: DuelState, text: str, *, create: bool = False) -> None:
        """Into the database, in the op's transaction; the debate dir's copy is written once the op is
        committed (a new duel's at once: its join commits with it)."""
        op: _Op | None = getattr(self._ops, "op", None)
        self._write(
            op, "UPDATE duels SET artifact = %s, artifact_saves = artifact_saves + 1 WHERE id = %s", (text, state.id)
        )
        if create:
            copy_artifact(self.debate, state, text.encode("utf-8"))
            self._copied[state.id] = 1
            self._artifacts[state.id] = (1, text)
        elif op is not None and op.read is not None:
            op.artifact = text
            base = op.saved or op.read
            op.saved = base._replace(artifact_saves=base.artifact_saves + 1)


class DatabaseEvents:
    """A duel's events from the database, up to the count its state vouches for."""

    def __init__(self, store: PostgresStore, state: DuelState):
        self.store = store
        self.state = state

    def read(self, since: EventCursor = LOG_START, types: Collection[str] | None = None) -> list[Event]:
        """The events from ``since`` to the state's count (of ``types`` only, when given);
        ``STATE_CORRUPT`` when fewer are there."""
        from .events import parse_event

        if since.seq > self.state.event_seq:
            raise corrupt(
                f"{self.store.location} duel {self.state.id}", f"holds fewer events than the {since.seq} already read"
            )
        rows = self.store._query(  # noqa: SLF001  the store's own reader
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
