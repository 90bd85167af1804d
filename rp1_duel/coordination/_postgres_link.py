"""The PostgreSQL store's one connection, shared by the threads of a process, and what its failures mean.

One connection a process (docs/protocol.md section 4, "Stores"): it runs every statement and
transaction, one op at a time, and LISTENs between them. A participant refreshes its lease
from a second thread while the first waits, so the connection is held op by op and a wait
listens in short slices, giving way to any thread that queues for it. Notifications that
arrive during another op are kept by psycopg and read by the next slice.

A server has room for a fixed number of connections, and seats may outnumber it: a
connection idle for :data:`IDLE_CLOSE_SECONDS` (a model thinking, say) is closed, and while
the server is :meth:`Link.crowded` (a connection was refused for want of room, or a wait saw
few slots left) each op gives its connection back when it ends.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any, Final, cast

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from ..digest import sha256_hex

# psycopg logs, through logging's last resort onto standard error, an error it ignores while ending a
# pipeline that failed; the failure itself is raised and handled. A command's stderr is its own.
logging.getLogger("psycopg").addHandler(logging.NullHandler())

CONNECT_TIMEOUT_SECONDS: Final = 10
APPLICATION_NAME: Final = "duel"
GIVE_WAY_SECONDS: Final = 0.001
# A connection idle longer is probed before an op (a server may have restarted): longer than the
# pauses inside a turn's claim, append and release, so those stay one round trip each.
PROBE_IDLE_SECONDS: Final = 2.0
IDLE_CLOSE_SECONDS: Final = 3.0  # a connection unused this long is closed: another process may need the slot
CROWDED_SECONDS: Final = 30.0  # how long a sign of a full server makes ops give their connection back

FULL: Final = "the store is full of connections"
RESTARTING: Final = "the store is restarting or failing over"
UNREACHABLE: Final = "the store cannot be reached"
LOST: Final = "the connection to the store was lost"
CONFLICT: Final = "the store's transaction met another"
_TRANSIENT_STATES: Final = {
    "53300": FULL,  # too_many_connections
    "57P01": RESTARTING,  # admin_shutdown (a fast shutdown, pg_terminate_backend)
    "57P02": RESTARTING,  # crash_shutdown
    "57P03": RESTARTING,  # cannot_connect_now: starting up, in recovery
    "25006": RESTARTING,  # read_only_sql_transaction: a standby that is not promoted yet
    "40001": CONFLICT,  # serialization_failure
    "40P01": CONFLICT,  # deadlock_detected
}
# A connection that fails carries no SQLSTATE in libpq: its message says what happened.
_TRANSIENT_WORDS: Final = (
    ("too many clients", FULL),
    ("remaining connection slots are reserved", FULL),
    ("starting up", RESTARTING),
    ("shutting down", RESTARTING),
    ("in recovery", RESTARTING),
    ("terminating connection", RESTARTING),
    ("connection refused", UNREACHABLE),
    ("timeout expired", UNREACHABLE),
    ("timed out", UNREACHABLE),
    ("no route to host", UNREACHABLE),
    ("network is unreachable", UNREACHABLE),
    ("server closed the connection", LOST),
    ("connection reset", LOST),
    ("could not receive data", LOST),
    ("could not send data", LOST),
    ("consuming input failed", LOST),
    ("the connection is lost", LOST),
    ("the connection is closed", LOST),
)


def transient_reason(error: psycopg.Error, *, reached: bool) -> str | None:
    """Why ``error`` is expected to pass, in words; None for a permanent one (authentication,
    a missing database or role, bad SQL): retrying those only delays the answer. A server that
    cannot be reached is expected back only once this process has ``reached`` it: before, a
    wrong host or port is likelier than a restart at that very moment."""
    reason = _reason(error)
    return None if reason == UNREACHABLE and not reached else reason


def _reason(error: psycopg.Error) -> str | None:
    state = error.sqlstate
    if state in _TRANSIENT_STATES:
        return _TRANSIENT_STATES[state]
    if state is not None:
        return LOST if state.startswith("08") else None  # class 08: connection exception
    if not isinstance(error, psycopg.OperationalError):
        return None
    text = str(error).lower()
    return next((reason for words, reason in _TRANSIENT_WORDS if words in text), None)


def channel_of(duel_id: str) -> str:
    """The duel's own NOTIFY channel: a write wakes the waiters of its duel only. Hashed, as a
    channel is an identifier of at most 63 bytes and a duel id is longer and has hyphens."""
    return "duel_" + sha256_hex(duel_id.encode())[:32]


class Link:
    """The connection, opened when first used and again after it is lost; held by one thread at a time."""

    def __init__(self, url: str):
        self.url = url
        # Named `duel` in pg_stat_activity (unless the URL names it), so its connections can be counted.
        named = "application_name" in conninfo_to_dict(url)
        self._conninfo = make_conninfo(
            url, connect_timeout=CONNECT_TIMEOUT_SECONDS, **({} if named else {"application_name": APPLICATION_NAME})
        )
        self._conn: psycopg.Connection[Any] | None = None
        self._mutex = threading.RLock()
        self._queue_lock = threading.Lock()
        self._queued = 0  # threads waiting for the connection
        self._depth = 0  # nested holds by the thread that holds it
        self._used_at = 0.0
        self.reached = False  # connected once: a server that cannot be reached since is restarting
        self._crowded_until = 0.0
        self._closer: threading.Thread | None = None
        self._closed = threading.Event()  # the link is closed for good: the closer thread ends
        self.channels: set[str] = set()  # LISTENed on the current connection
        self.notifications = 0  # heard: what writes cost the waiters (bench/bench_postgres_scale.py)
        self.foreign = 0  # of those, about another duel than the one waited for

    @contextlib.contextmanager
    def held(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection, this thread's until the block ends (blocks nest); opened when there is none."""
        with self._queue_lock:
            self._queued += 1
        self._mutex.acquire()
        with self._queue_lock:
            self._queued -= 1
        self._depth += 1
        try:
            if self._depth == 1:
                self._ready()
            yield cast("psycopg.Connection[Any]", self._conn)
        except psycopg.OperationalError:
            if self._depth == 1:
                self.drop()  # whatever state it is in, the next op opens a new one
            raise
        finally:
            self._depth -= 1
            self._used_at = time.monotonic()
            if self._depth == 0 and self.crowded():
                self.drop()  # the slot goes back to the server at once
            self._mutex.release()

    def _ready(self) -> None:
        """A connection to use: opened when there is none; one idle for a while is probed first and
        replaced when it was lost (a restarted server), so the op that follows does not fail on it."""
        if self._conn is not None and not self._conn.closed and time.monotonic() - self._used_at > PROBE_IDLE_SECONDS:
            try:
                self._conn.execute("SELECT 1")
            except psycopg.OperationalError:
                self.drop()
        if self._conn is None or self._conn.closed:
            self.channels = set()  # LISTENs end with the connection that made them
            try:
                # No prepared statements: psycopg would prepare one inside a pipeline that a failed check
                # aborts, then believe it prepared (tests/test_store_postgres_scale.py); and a pooler in
                # transaction mode cannot keep them.
                self._conn = psycopg.connect(self._conninfo, autocommit=True, prepare_threshold=None)
            except psycopg.Error as exc:
                if transient_reason(exc, reached=True) == FULL:
                    self.crowd()
                raise
            self.reached = True
            if self._closer is None:
                self._closer = threading.Thread(target=self._close_when_idle, name="duel-store-idle", daemon=True)
                self._closer.start()

    def crowd(self) -> None:
        """The server is short of connection slots: ops give theirs back for a while."""
        self._crowded_until = time.monotonic() + CROWDED_SECONDS

    def crowded(self) -> bool:
        """Whether the server was short of connection slots lately."""
        return time.monotonic() < self._crowded_until

    def _close_when_idle(self) -> None:
        """Close the connection once it has been idle for :data:`IDLE_CLOSE_SECONDS` (a thread of its own)."""
        while not self._closed.wait(IDLE_CLOSE_SECONDS / 4):
            if self._conn is None or time.monotonic() - self._used_at < IDLE_CLOSE_SECONDS:
                continue
            if self._mutex.acquire(blocking=False):  # held: in use, so not idle after all
                try:
                    if self._depth == 0 and time.monotonic() - self._used_at >= IDLE_CLOSE_SECONDS:
                        self.drop()
                finally:
                    self._mutex.release()

    def give_way(self) -> None:
        """Let a thread that queued for the connection have it before this one takes it again."""
        while self._queued:
            time.sleep(GIVE_WAY_SECONDS)

    def listen(self, conn: psycopg.Connection[Any], channel: str) -> None:
        """LISTEN on ``channel``, once a connection (inside :meth:`held`)."""
        if channel not in self.channels:
            conn.execute(f"LISTEN {channel}")  # channel_of's output: a plain identifier
            self.channels.add(channel)

    def heard(self, conn: psycopg.Connection[Any], payload: str, timeout: float) -> bool:
        """Whether a notification with ``payload`` came within ``timeout`` (inside :meth:`held`)."""
        with contextlib.closing(conn.notifies(timeout=timeout)) as notices:  # closed: psycopg's lock is let go
            for notice in notices:
                self.notifications += 1
                if notice.payload == payload:
                    return True
                self.foreign += 1
        return False

    def drop(self) -> None:
        """Close the connection; the next op opens another."""
        if self._conn is not None:
            self._conn.close()
        self._conn = None

    def close(self) -> None:
        """Close the connection (when the store is closed or collected)."""
        self._closed.set()
        with self._mutex:
            self.drop()
