"""The debate dir on disk: atomic writes, the state files, the event log and the locks,
and :class:`DirectoryStore`, the default store (:mod:`rp1_duel.coordination._store`).

Layout::

    <debate dir>/<date>-<slug>[-N].md        artifacts (the only files git should see)
    <debate dir>/.duel/.gitignore            "*"
    <debate dir>/.duel/join.lock             serialises joins (duel lookup and creation)
    <debate dir>/.duel/index.json            target key -> latest duel id
    <debate dir>/.duel/duels/<id>/state.json the duel's state (owner-only)
    <debate dir>/.duel/duels/<id>/events.jsonl
    <debate dir>/.duel/duels/<id>/lock       the duel's file lock

The lock backend is ``fcntl.flock`` (:class:`DuelLock`): it excludes processes on one
machine, or on a filesystem that shares flock locks properly; NFS clients do not.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import json
import os
import stat
import sys
import time
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, final

from ..clock import Clock, Instant, system_clock
from ..digest import sha256_hex
from ..errors import DuelError
from ..files import (
    MAX_ARTIFACT_BYTES,
    MAX_EVENT_LOG_BYTES,
    MAX_SOURCE_BYTES,
    MAX_STATE_BYTES,
    NotReadable,
    open_regular,
    read_bounded,
    storage_errors,
    write_all,
    write_atomic,
)
from ..vocabulary import ErrorCode
from ._state import DUEL_ID, DuelState, corrupt
from ._state_watch import StateWatch
from ._store import LOG_START, SEEN_RESOLUTION_SECONDS, EventCursor, Transaction
from .identity import target_key

if TYPE_CHECKING:
    from ..turns import SourceDocument
    from .events import Event

__all__ = [
    "LOG_START",
    "SEEN_RESOLUTION_SECONDS",
    "STATE_DIR",
    "DebateDir",
    "DirectoryStore",
    "DuelLock",
    "EventCursor",
    "EventLog",
    "copy_artifact",
    "storage_errors",
    "write_atomic",
    "write_beside",
]

STATE_DIR = ".duel"
LOCK_TIMEOUT_SECONDS = 30.0
LOCK_POLL_SECONDS = 0.001  # critical sections last about a millisecond: retry a held lock at that pace
WAIT_POLL_SECONDS = 0.01  # a stat() every 10 ms keeps hand-offs well under 100 ms


def copy_artifact(debate: DebateDir, state: DuelState, data: bytes) -> Path:
    """Write a store's artifact into ``debate`` unless the copy there already holds it: the
    same bytes on every host, so each side commits the same record."""
    path = debate.artifact_path(state)
    with contextlib.suppress(OSError, ValueError):
        if read_bounded(path, MAX_ARTIFACT_BYTES) == data:
            return path
    debate.ensure()
    write_atomic(path, data, mode=0o644, temp_dir=debate.state_root)
    return path


def write_beside(debate: DebateDir, state: DuelState, name: str, text: str) -> None:
    """``name`` (the duel's id and a fixed suffix) next to the duel's artifact in ``debate``, atomically."""
    path = debate.artifact_path(state).with_name(name)
    write_atomic(path, text.encode("utf-8"), mode=0o644, temp_dir=debate.state_root)


def remove_temp_files(folder: Path, of: str = "") -> None:
    """Remove a dead writer's temp files (of the file named ``of``, or all) from ``folder``.
    Only under the lock that guards those files: a live writer's temp file must not go."""
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.startswith(f".{of}") and entry.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


# The types /proc/self/mountinfo names for filesystems whose flock does not exclude other machines.
NETWORK_FILESYSTEMS = {
    "nfs": "NFS",
    "nfs4": "NFS",
    "smbfs": "SMB",
    "smb3": "SMB",
    "cifs": "CIFS",
    "9p": "9P",
    "afs": "AFS",
    "coda": "Coda",
    "fuse.sshfs": "sshfs",
}
MOUNTINFO = "/proc/self/mountinfo"


def filesystem_type(path: Path) -> str | None:
    """The type Linux names for the filesystem ``path`` is on (``ext4``, ``nfs4``); None elsewhere or on failure.

    Read from the mount table by ``path``'s device, not from statfs(2): that would need ctypes, a millisecond of
    every join (bench/bench_startup.py)."""
    try:
        device = os.stat(path).st_dev
        with open(MOUNTINFO, "rb") as table:
            return mount_type(table.read(), major=os.major(device), minor=os.minor(device))
    except OSError:
        return None


def mount_type(mountinfo: bytes, *, major: int, minor: int) -> str | None:
    """The filesystem type of the device ``major:minor`` in a mountinfo table (proc(5)); None when it is not there.
    A line is ``ID PARENT MAJOR:MINOR ROOT MOUNT-POINT OPTIONS [TAGS…] - TYPE SOURCE OPTIONS``."""
    device = f"{major}:{minor}".encode()
    for line in mountinfo.splitlines():
        fields = line.split(b" ")
        if len(fields) > 2 and fields[2] == device and b"-" in fields[6:]:
            after = fields[fields.index(b"-", 6) + 1 :]
            return after[0].decode("utf-8", "replace") if after else None
    return None


def read_json_file(path: Path) -> Any:
    """The JSON in ``path``, or None when there is no such file; ``STATE_CORRUPT`` when it is unreadable."""
    try:
        return json.loads(read_bounded(path, MAX_STATE_BYTES))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise corrupt(str(path), exc) from None


class DebateDir:
    """Paths and locks of one debate dir; creates ``.duel/`` on first use."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(os.path.abspath(root))
        self.state_root = self.root / STATE_DIR
        self._paths: dict[tuple[str, str], Path] = {}  # pathlib's joins were a tenth of a lock op's CPU

    def ensure(self) -> None:
        """Create ``.duel/`` (0700) on first use; refuse one another user could have written. The debate dir
        itself is made when missing, its parents never: a mistyped path is refused, not made."""
        self.check_usable()
        try:
            self.root.mkdir(exist_ok=True)
            self._check_local()
            self.state_root.mkdir(mode=0o700, exist_ok=True)
            self._check_private(self.state_root)
            (self.state_root / "duels").mkdir(mode=0o700, exist_ok=True)
            self._check_private(self.state_root / "duels")
            ignore = self.state_root / ".gitignore"
            if not ignore.exists():
                write_atomic(ignore, b"*\n", mode=0o644)
        except OSError as exc:
            raise DuelError(
                ErrorCode.DEBATE_DIR_INVALID, f"cannot use debate dir {self.root}: {exc.strerror or exc}"
            ) from None

    def check_usable(self) -> None:
        """What :meth:`ensure` would refuse at once, said without creating anything: a debate dir that is a
        file, or whose parent folder does not exist (``DEBATE_DIR_INVALID``). A server that joins later checks
        this when it starts."""
        if self.root.exists() and not self.root.is_dir():
            raise DuelError(ErrorCode.DEBATE_DIR_INVALID, f"debate dir is not a directory: {self.root}")
        if not self.root.parent.is_dir():
            raise DuelError(
                ErrorCode.DEBATE_DIR_INVALID,
                f"no folder {self.root.parent} to make the debate dir {self.root.name} in: check the path for a "
                "typo, or create the folder first",
            )

    def check_readable(self) -> None:
        """``DUEL_NOT_FOUND`` without ``.duel/``; ``DEBATE_DIR_INVALID`` for a file or a folder others may write."""
        if not self.state_root.is_dir():
            if self.root.exists() and not self.root.is_dir():
                raise DuelError(ErrorCode.DEBATE_DIR_INVALID, f"debate dir is not a directory: {self.root}")
            raise DuelError(ErrorCode.DUEL_NOT_FOUND, f"no duel state in {self.root}")
        self._check_private(self.state_root)

    def _check_local(self) -> None:
        """Refuse a network filesystem: its clients do not see each other's flock locks, so
        two hosts would both be granted the floor (docs/protocol.md section 4)."""
        kind = NETWORK_FILESYSTEMS.get(filesystem_type(self.root) or "")
        if kind is not None:
            raise DuelError(
                ErrorCode.FILESYSTEM_UNSUPPORTED,
                f"debate dir {self.root} is on {kind}, where file locks do not exclude other machines: "
                "use a folder on a local disk (duels across machines need a shared store, see docs/protocol.md)",
                {"filesystem": kind},
            )

    @staticmethod
    def _check_private(folder: Path) -> None:
        """The state folder must be this user's and writable by nobody else: a folder others
        can write to could hold a planted state or index (docs/protocol.md section 6)."""
        info = os.stat(folder, follow_symlinks=False)
        if not stat.S_ISDIR(info.st_mode):
            raise DuelError(ErrorCode.DEBATE_DIR_INVALID, f"{folder} is not a directory")
        if info.st_uid != os.getuid():
            raise DuelError(
                ErrorCode.DEBATE_DIR_INVALID,
                f"{folder} belongs to another user (uid {info.st_uid}): each user needs a debate dir "
                "of their own on this machine, or the PostgreSQL store",
            )
        if info.st_mode & 0o022:
            raise DuelError(
                ErrorCode.DEBATE_DIR_INVALID,
                f"{folder} is writable by other users (mode {stat.S_IMODE(info.st_mode):o}): "
                f"run `chmod go-w {folder}` if you trust what is in it",
            )

    def join_lock(self) -> DuelLock:
        """The lock every join holds while it reads and writes the index."""
        return DuelLock(self.state_root / "join.lock")

    # -- the index of active duels -------------------------------------------------
    def read_index(self) -> dict[str, str]:
        """``index.json``: each ``target_key`` to its latest duel id (empty before the first join)."""
        index = read_json_file(self.state_root / "index.json")
        if index is None:
            return {}
        if not isinstance(index, dict):
            raise corrupt(str(self.state_root / "index.json"), "not a JSON object")
        return index

    def write_index(self, index: dict[str, str]) -> None:
        """Replace ``index.json`` atomically; callers hold :meth:`join_lock`."""
        remove_temp_files(self.state_root, of="index.json")  # callers hold the join lock
        write_atomic(self.state_root / "index.json", json.dumps(index, indent=1).encode())

    # -- one duel ---------------------------------------------------------------------
    def duel_folder(self, duel_id: str) -> Path:
        """``.duel/duels/<duel id>``; ``DUEL_NOT_FOUND`` for an id no duel could have."""
        return self.duel_file(duel_id, "")

    def duel_file(self, duel_id: str, name: str) -> Path:
        """The file ``name`` in the duel's state folder (``""``: the folder); ``DUEL_NOT_FOUND`` for an id
        no duel could have."""
        path = self._paths.get((duel_id, name))
        if path is None:
            if not DUEL_ID.fullmatch(duel_id or ""):
                raise DuelError(ErrorCode.DUEL_NOT_FOUND, f"no duel {duel_id!r} in {self.root}")
            folder = self.state_root / "duels" / duel_id
            path = self._paths[duel_id, name] = folder / name if name else folder
        return path

    def reserve_duel(self, stem: str) -> str:
        """A new duel id ``stem``, ``stem-2``, …: its state folder created exclusively and no
        file of that artifact name present. Callers hold the join lock, and the artifact is
        created later with ``exclusive``, so no two duels (or a user's file) share a name."""
        duels = self.state_root / "duels"
        for n in range(1, 10_000):
            duel_id = stem if n == 1 else f"{stem}-{n}"
            try:
                (duels / duel_id).mkdir(mode=0o700)
            except FileExistsError:
                continue
            if os.path.lexists(self.root / f"{duel_id}.md"):
                (duels / duel_id).rmdir()
                continue
            return duel_id
        raise DuelError(ErrorCode.DEBATE_DIR_INVALID, f"no free artifact name for {stem} in {self.root}")

    def discard_duel(self, duel_id: str) -> None:
        """Undo a creation that failed before its artifact was written."""
        folder = self.duel_folder(duel_id)
        remove_temp_files(folder)
        for name in ("state.json", "events.jsonl", "lock", "source"):
            with contextlib.suppress(FileNotFoundError):
                (folder / name).unlink()
        with contextlib.suppress(OSError):
            folder.rmdir()

    def duel_lock(self, duel_id: str) -> DuelLock:
        """The lock that makes one op on the duel exclusive."""
        return DuelLock(self.duel_file(duel_id, "lock"))

    def read_state(self, duel_id: str) -> DuelState:
        """The duel's ``state.json``; ``DUEL_NOT_FOUND`` without one, ``STATE_CORRUPT`` when unreadable."""
        path = self.duel_file(duel_id, "state.json")
        try:
            data = read_bounded(path, MAX_STATE_BYTES)
        except FileNotFoundError:
            raise DuelError(ErrorCode.DUEL_NOT_FOUND, f"no duel {duel_id!r} in {self.root}") from None
        except (OSError, ValueError) as exc:
            raise corrupt(str(path), exc) from None
        return DuelState.from_json(data, str(path))

    def write_state(self, state: DuelState, *, sync_folder: bool = True) -> None:
        """Replace the duel's ``state.json`` atomically (``sync_folder``: durably, across a power failure)."""
        write_atomic(self.duel_file(state.id, "state.json"), state.to_json(), sync_folder=sync_folder)

    def state_stamp(self, duel_id: str) -> tuple[int, int, int] | None:
        """A cheap fingerprint of the state file, to notice changes without reading it."""
        try:
            st = os.stat(self.duel_file(duel_id, "state.json"))
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def duel_ids(self) -> list[str]:
        """Every duel's id, from the ``duels/`` folders, in name order. The index names only
        the latest duel of each source and topic; the folders hold closed ones too."""
        try:
            names = os.listdir(self.state_root / "duels")
        except FileNotFoundError:
            return []
        return sorted(name for name in names if DUEL_ID.fullmatch(name))

    def artifact_path(self, state: DuelState) -> Path:
        """``<debate dir>/<duel id>.md``."""
        # Derived, never read from the state: the artifact is always <duel id>.md here.
        return self.root / f"{state.id}.md"

    def events_path(self, duel_id: str) -> Path:
        """The duel's ``events.jsonl``."""
        return self.duel_file(duel_id, "events.jsonl")


if sys.platform == "win32":  # no fcntl: filelock's lock, imported only here, by the first lock of a path

    class _LockFile:
        """The lock file, held through filelock (Windows)."""

        def __init__(self, path: str):
            from filelock import FileLock

            self._lock = FileLock(path, mode=0o600, thread_local=False)

        def take(self, deadline: float) -> bool:
            from filelock import Timeout

            try:
                self._lock.acquire(timeout=max(deadline - time.monotonic(), 0.0), poll_interval=LOCK_POLL_SECONDS)
            except Timeout:
                return False
            return True

        def give_back(self) -> None:
            self._lock.release()

else:
    import fcntl

    class _LockFile:
        """The lock file, held with ``flock(LOCK_EX)`` on a descriptor of its own."""

        def __init__(self, path: str):
            self._path = path
            self._fd = -1

        def take(self, deadline: float) -> bool:
            """Open (create, 0600) and flock the file, polling until ``deadline``; False when it stays held."""
            fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except OSError as exc:
                        # Held elsewhere: EWOULDBLOCK, or EACCES on some filesystems (as filelock reads it too).
                        if not isinstance(exc, BlockingIOError) and exc.errno != errno.EACCES:
                            raise
                    else:
                        self._fd = fd
                        return True
                    left = deadline - time.monotonic()
                    if left <= 0:
                        os.close(fd)
                        return False
                    time.sleep(min(LOCK_POLL_SECONDS, left))
            except BaseException:
                os.close(fd)
                raise

        def give_back(self) -> None:
            fd, self._fd = self._fd, -1
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)  # explicit: a forked child sharing the descriptor must not keep it
            finally:
                os.close(fd)


class _PathLock:
    """One lock file in this process: a thread lock in front of the file lock, re-entrant for
    the thread holding it. Built on ``_thread``'s primitives, as threading.RLock is: importing
    threading costs a locking ``duel tools`` command most of a millisecond."""

    def __init__(self, path: str):
        self.mutex = _thread.allocate_lock()
        self.owner: int | None = None  # the thread holding ``mutex``; only that thread sets or reads its own id
        self.depth = 0  # its holds: the file is locked while it is above 0
        self.file = _LockFile(path)


@final
class DuelLock:
    """A short critical section across processes (``fcntl.flock`` of a lock file) and threads.

    flock is called directly, not through filelock: importing filelock costs more than the
    rest of ``duel tools status`` (bench/bench_startup.py), and filelock's Unix lock is the
    same flock on the same file, so processes using either exclude each other. filelock is
    imported only where there is no ``fcntl`` (Windows).

    Every DuelLock of one path in a process shares one thread lock: threads exclude each
    other, and a thread may take a lock it holds again (as with the per-thread FileLock
    before). The outermost hold opens and locks the file, and its end unlocks and closes it.
    The file is never removed: a waiter must not lock a name that is gone.
    """

    _paths: ClassVar[dict[str, _PathLock]] = {}

    def __init__(self, path: Path, timeout: float = LOCK_TIMEOUT_SECONDS):
        key = str(path)
        held = self._paths.get(key)
        if held is None:
            held = self._paths.setdefault(key, _PathLock(key))  # setdefault: two threads get the same one
        self._held = held
        self._path = path
        self._timeout = timeout

    def __enter__(self) -> DuelLock:
        held, me = self._held, _thread.get_ident()
        if held.owner == me:  # re-entered: the file is locked already
            held.depth += 1
            return self
        deadline = time.monotonic() + self._timeout
        if not held.mutex.acquire(timeout=self._timeout):
            raise self._timed_out()
        try:
            taken = held.file.take(deadline)
        except BaseException:
            held.mutex.release()
            raise
        if not taken:
            held.mutex.release()
            raise self._timed_out()
        held.owner, held.depth = me, 1
        return self

    def __exit__(self, *exc: object) -> None:
        held = self._held
        held.depth -= 1
        if held.depth > 0:
            return
        held.owner = None
        try:
            held.file.give_back()
        finally:
            held.mutex.release()

    def _timed_out(self) -> DuelError:
        return DuelError(ErrorCode.LOCK_TIMEOUT, f"could not take {self._path} within {self._timeout:g}s")


def _wanted(raw: object, types: Collection[str]) -> bool:
    """Whether a log line's JSON is to be built into an event: one of ``types``, or no event
    at all (not an object, or no word for its type), which building refuses."""
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
        return True
    return raw["type"] in types


def _events_of(logged: list[Any]) -> list[Event]:
    """The events of decoded log lines (raises ValueError for one that holds no event)."""
    if not logged:
        return []
    from .events import event_of  # every event type is built here: only a log with wanted events pays

    return [event_of(raw) for raw in logged]


class EventLog:
    """``events.jsonl``: one JSON object a line, ``seq`` gapless from 0.

    The state records how many events and bytes it has seen. Events are appended
    before the state is written; if a writer dies in between, the next writer cuts the
    log back to what the state knows, so a change and its events land together or not
    at all.
    """

    def __init__(self, path: Path, state: DuelState):
        self.path = path
        self.state = state

    def read(self, since: EventCursor = LOG_START, types: Collection[str] | None = None) -> list[Event]:
        """The events after ``since`` that the state knows of: a seek to the cursor's byte and
        a read up to the state's count, so a watcher pays only for what is new. Needs no
        lock: below the state's count the log never changes (later writers append past it).

        With ``types``, only the events of those types are built; the other lines are read
        as JSON only, so a status showing usage loads no event type when none was logged."""
        if since.offset == self.state.event_bytes:
            return []
        if since.offset > self.state.event_bytes:
            raise corrupt(str(self.path), f"holds fewer events than the {since.seq} already read")
        if self.state.event_bytes > MAX_EVENT_LOG_BYTES:  # a forged count must not read gigabytes
            raise corrupt(str(self.path), f"larger than {MAX_EVENT_LOG_BYTES // (1024 * 1024)} MiB")
        try:
            with os.fdopen(open_regular(self.path), "rb") as file:
                file.seek(since.offset)
                blob = file.read(self.state.event_bytes - since.offset)
        except FileNotFoundError:
            return []
        except NotReadable as exc:
            raise corrupt(str(self.path), exc) from None
        try:
            logged = [json.loads(line) for line in blob.splitlines() if line.strip()]
            first = logged[0] if logged else None
            if types is not None:
                logged = [raw for raw in logged if _wanted(raw, types)]
            events = _events_of(logged)
        except ValueError as exc:
            raise corrupt(str(self.path), exc) from None
        if first is not None and first.get("seq") != since.seq:  # an object: _events_of refuses any other
            raise corrupt(str(self.path), f"event {since.seq} is not at byte {since.offset}")
        return events

    @property
    def end(self) -> EventCursor:
        """Where the events the state knows of end: the cursor to read on from."""
        return EventCursor(self.state.event_seq, self.state.event_bytes)

    def append(self, events: list[Event]) -> None:
        """Write ``events`` and advance the state's counters (before the state is saved)."""
        if not events:
            return
        blob = b"".join(json.dumps(event.to_json(), ensure_ascii=False).encode() + b"\n" for event in events)
        # Read-write: a FIFO opens at once (never waiting for a reader), to be refused.
        try:
            fd = open_regular(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW)  # a planted link is refused
        except NotReadable as exc:
            raise corrupt(str(self.path), exc) from None
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise corrupt(str(self.path), "a symbolic link, which duel never writes") from None
        try:
            size = os.fstat(fd).st_size
            if size < self.state.event_bytes:
                raise corrupt(str(self.path), "shorter than the state records")
            if size > self.state.event_bytes:
                os.ftruncate(fd, self.state.event_bytes)  # drop a dead writer's tail
            os.lseek(fd, self.state.event_bytes, os.SEEK_SET)
            write_all(fd, blob)
            os.fsync(fd)
        finally:
            os.close(fd)
        self.state.event_seq += len(events)
        self.state.event_bytes += len(blob)


class DirectoryStore:
    """Duels in a debate dir (the default store): a file lock per duel, the injected clock,
    ``state.json``'s stat as the change signal, polled, and heard at once where inotify tells."""

    def __init__(self, debate: DebateDir, clock: Clock = system_clock):
        self.debate = debate
        self.now = clock
        self.location = str(debate.root)
        self._watch = StateWatch()

    def errors(self) -> contextlib.AbstractContextManager[None]:
        """Turns an OSError of the debate dir into ``STORAGE_FAILED``."""
        return storage_errors(self.debate.root)

    def ensure(self) -> None:
        """Create ``.duel/`` if it is not there."""
        self.debate.ensure()

    def check_readable(self) -> None:
        """``DUEL_NOT_FOUND`` when the debate dir holds no ``.duel/``."""
        self.debate.check_readable()

    def joining(self) -> DuelLock:
        """The join lock."""
        return self.debate.join_lock()

    def read_index(self) -> dict[str, str]:
        """The debate dir's index."""
        return self.debate.read_index()

    def write_index(self, index: dict[str, str]) -> None:
        """Replace the debate dir's index."""
        self.debate.write_index(index)

    def reserve_duel(self, stem: str) -> str:
        """A new duel id, its state folder created (:meth:`DebateDir.reserve_duel`)."""
        return self.debate.reserve_duel(stem)

    def discard_duel(self, duel_id: str) -> None:
        """Remove the state folder of a creation that failed."""
        self.debate.discard_duel(duel_id)

    def begin(self, state: DuelState, now: Instant) -> Transaction:
        """A transaction over a duel being created, under the join lock."""
        return Transaction(self, state, now)

    @contextlib.contextmanager
    def transaction(self, duel_id: str) -> Iterator[Transaction]:
        """One op on the duel under its file lock, a dead writer's temp files removed first."""
        self.debate.check_readable()
        if not self.debate.duel_folder(duel_id).is_dir():  # no such duel: its lock file must not make a folder
            raise DuelError(ErrorCode.DUEL_NOT_FOUND, f"no duel {duel_id!r} in {self.debate.root}")
        with self.debate.duel_lock(duel_id):
            remove_temp_files(self.debate.duel_folder(duel_id))  # a dead writer's, if any
            now = self.now()
            yield Transaction(self, self.debate.read_state(duel_id), now)

    def save(self, state: DuelState, events: list[Event]) -> None:
        """Append ``events`` to the log, then write the state that counts them. A write of the lease alone
        (a grant, a refresh, a release, a seat seen) skips the folder's fsync after the rename: a power
        failure ends every lease anyway, and the state it leaves (the one before) agrees with the fsynced log."""
        EventLog(self.debate.events_path(state.id), state).append(events)
        self.debate.write_state(state, sync_folder=not all(event.data.lease_only for event in events))

    def read_state(self, duel_id: str) -> DuelState:
        """The duel's state file, read without the lock."""
        return self.debate.read_state(duel_id)

    def stamp(self, duel_id: str) -> tuple[int, int, int] | None:
        """The state file's inode, mtime and size, or None without one."""
        return self.debate.state_stamp(duel_id)

    def next_stamp(
        self,
        duel_id: str,
        stamp: object,  # noqa: ARG002  the DuelStore signature: a poll needs no old stamp
        timeout: float,
    ) -> tuple[int, int, int] | None:
        """Sleep one poll interval (at most ``timeout``), less when the state is replaced meanwhile
        (:class:`StateWatch`), then the stamp."""
        self._watch.sleep(str(self.debate.duel_folder(duel_id)), min(WAIT_POLL_SECONDS, timeout))
        return self.debate.state_stamp(duel_id)

    def events(self, state: DuelState) -> EventLog:
        """The duel's ``events.jsonl``."""
        return EventLog(self.debate.events_path(state.id), state)

    def duel_ids(self) -> list[str]:
        """Every duel of the debate dir, in id order."""
        return self.debate.duel_ids()

    own_source_copies = False  # one machine: every participant reads the one file

    def target_key(self, source: SourceDocument, slug: str) -> str:
        """The key of the source's absolute path and the topic slug."""
        return target_key(source.path, topic_slug=slug)

    def keep_source(self, state: DuelState, source: SourceDocument) -> None:
        """Pin the source's bytes as the join read them: every turn is checked against this copy,
        whatever the file on disk becomes (docs/protocol.md section 6, "The source")."""
        from ..record import pinned_copy

        data = source.raw.encode("utf-8") if source.raw else source.text.encode("utf-8")
        write_atomic(pinned_copy(self.debate.root, state.id), data, temp_dir=self.debate.state_root)  # owner-only

    def read_source(self, state: DuelState) -> SourceDocument:
        """The source pinned at the join; for a duel created before pinning, the file read again
        (raises SourceUnreadable, also for a pinned copy that no longer has the recorded hash)."""
        from ..record import pinned_copy
        from ..turns import SourceDocument, SourceUnreadable, read_source

        try:
            data = read_bounded(pinned_copy(self.debate.root, state.id), MAX_SOURCE_BYTES)
        except FileNotFoundError:
            return read_source(state.source_path)
        except (OSError, ValueError) as exc:
            raise SourceUnreadable(state.source_path, reason=f"its pinned copy is unreadable ({exc})") from None
        try:
            pinned = SourceDocument.from_bytes(data, state.source_path)
        except UnicodeDecodeError:
            pinned = None
        if pinned is None or pinned.sha256 != state.source_sha256:
            raise SourceUnreadable(state.source_path, reason="its pinned copy no longer has the recorded hash")
        return pinned

    def source_exists(self, state: DuelState) -> bool:
        """Whether the source is still a file there (a folder in its place is no source)."""
        return os.path.isfile(state.source_path)

    def source_on_disk(self, state: DuelState) -> str | None:
        """The SHA-256 of the source file as it is now; None when it cannot be read."""
        try:
            return sha256_hex(read_bounded(state.source_path, MAX_SOURCE_BYTES))
        except (OSError, ValueError):
            return None

    def source_path_shown(self, state: DuelState) -> str:
        """The source path relative to the artifact where they share a folder, else absolute."""
        from ..record import display_source_path  # with the record, which writers load anyway

        return display_source_path(state.source_path, artifact_path=self.artifact_path(state))

    def artifact_path(self, state: DuelState) -> Path:
        """``<debate dir>/<duel id>.md``."""
        return self.debate.artifact_path(state)

    def read_artifact(self, state: DuelState, limit: int) -> bytes:
        """The artifact file, at most ``limit`` bytes."""
        return read_bounded(self.debate.artifact_path(state), limit)

    def write_beside(self, state: DuelState, name: str, text: str) -> None:
        """A file derived from the record (a revision's patch), next to the artifact."""
        write_beside(self.debate, state, name, text)

    def write_artifact(self, state: DuelState, text: str, *, create: bool = False) -> None:
        """Write the artifact atomically; ``create`` refuses to replace an existing file."""
        write_atomic(
            self.debate.artifact_path(state),
            text.encode("utf-8"),
            mode=0o644,
            temp_dir=self.debate.duel_folder(state.id),
            exclusive=create,
        )
