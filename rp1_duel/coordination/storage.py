"""The debate dir on disk: atomic writes, the state files, the event log and the locks.

Layout::

    <debate dir>/<date>-<slug>[-N].md        artifacts (the only files git should see)
    <debate dir>/.duel/.gitignore            "*"
    <debate dir>/.duel/join.lock             serialises joins (duel lookup and creation)
    <debate dir>/.duel/index.json            target key -> latest duel id
    <debate dir>/.duel/duels/<id>/state.json the duel's state (owner-only)
    <debate dir>/.duel/duels/<id>/events.jsonl
    <debate dir>/.duel/duels/<id>/lock       the duel's file lock

The default lock backend is ``fcntl.flock`` through filelock: it excludes processes on
one machine, or on a filesystem that shares flock locks properly; NFS clients do not.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
from pathlib import Path
from typing import Any, ClassVar

from filelock import FileLock, Timeout

from ..clock import iso
from ..errors import DuelError
from ..vocabulary import ErrorCode
from .state import DUEL_ID, DuelState, Participant, corrupt

STATE_DIR = ".duel"
LOCK_TIMEOUT_SECONDS = 30.0


def write_atomic(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Temp file in the same folder, fsync, rename over ``path``, fsync the folder."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_json_file(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise corrupt(str(path), exc) from None


class DebateDir:
    """Paths and locks of one debate dir; creates ``.duel/`` on first use."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(os.path.abspath(root))
        self.state_root = self.root / STATE_DIR

    def ensure(self) -> None:
        """Create ``.duel/`` (0700) on first use; refuse one another user could have written."""
        if self.root.exists() and not self.root.is_dir():
            raise DuelError(ErrorCode.DEBATE_DIR_INVALID, f"debate dir is not a directory: {self.root}")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
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

    def check_readable(self) -> None:
        if not self.state_root.is_dir():
            if self.root.exists() and not self.root.is_dir():
                raise DuelError(ErrorCode.DEBATE_DIR_INVALID, f"debate dir is not a directory: {self.root}")
            raise DuelError(ErrorCode.DUEL_NOT_FOUND, f"no duel state in {self.root}")
        self._check_private(self.state_root)

    @staticmethod
    def _check_private(folder: Path) -> None:
        """The state folder must be this user's and writable by nobody else: a folder others
        can write to could hold a planted state or index (docs/protocol.md section 6)."""
        info = os.stat(folder, follow_symlinks=False)
        if not stat.S_ISDIR(info.st_mode):
            raise DuelError(ErrorCode.DEBATE_DIR_INVALID, f"{folder} is not a directory")
        if info.st_uid != os.getuid():
            raise DuelError(ErrorCode.DEBATE_DIR_INVALID,
                            f"{folder} belongs to another user (uid {info.st_uid}): each user needs a debate dir "
                            "of their own on this machine, or the PostgreSQL store")
        if info.st_mode & 0o022:
            raise DuelError(ErrorCode.DEBATE_DIR_INVALID,
                            f"{folder} is writable by other users (mode {stat.S_IMODE(info.st_mode):o}): "
                            f"run `chmod go-w {folder}` if you trust what is in it")

    def join_lock(self) -> DuelLock:
        return DuelLock(self.state_root / "join.lock")

    # -- the index of active duels -------------------------------------------------
    def read_index(self) -> dict[str, str]:
        index = read_json_file(self.state_root / "index.json")
        if index is None:
            return {}
        if not isinstance(index, dict):
            raise corrupt(str(self.state_root / "index.json"), "not a JSON object")
        return index

    def write_index(self, index: dict[str, str]) -> None:
        write_atomic(self.state_root / "index.json", json.dumps(index, indent=1).encode())

    # -- one duel ---------------------------------------------------------------------
    def duel_folder(self, duel_id: str) -> Path:
        if not DUEL_ID.fullmatch(duel_id or ""):
            raise DuelError(ErrorCode.DUEL_NOT_FOUND, f"no duel {duel_id!r} in {self.root}")
        return self.state_root / "duels" / duel_id

    def reserve_duel(self, stem: str) -> str:
        """A new duel id ``stem``, ``stem-2``, …: its state folder and artifact created exclusively,
        so no two duels share a file, whatever the date or earlier closes left behind."""
        duels = self.state_root / "duels"
        for n in range(1, 10_000):
            duel_id = stem if n == 1 else f"{stem}-{n}"
            try:
                (duels / duel_id).mkdir(mode=0o700)
            except FileExistsError:
                continue
            try:
                fd = os.open(self.root / f"{duel_id}.md", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                (duels / duel_id).rmdir()
                continue
            os.close(fd)
            return duel_id
        raise DuelError(ErrorCode.DEBATE_DIR_INVALID, f"no free artifact name for {stem} in {self.root}")

    def duel_lock(self, duel_id: str) -> DuelLock:
        return DuelLock(self.duel_folder(duel_id) / "lock")

    def read_state(self, duel_id: str) -> DuelState:
        path = self.duel_folder(duel_id) / "state.json"
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise DuelError(ErrorCode.DUEL_NOT_FOUND, f"no duel {duel_id!r} in {self.root}") from None
        except OSError as exc:
            raise corrupt(str(path), exc) from None
        return DuelState.from_json(data, str(path))

    def write_state(self, state: DuelState) -> None:
        write_atomic(self.duel_folder(state.id) / "state.json", state.to_json())

    def state_stamp(self, duel_id: str) -> tuple[int, int, int] | None:
        """A cheap fingerprint of the state file, to notice changes without reading it."""
        try:
            st = os.stat(self.duel_folder(duel_id) / "state.json")
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def artifact_path(self, state: DuelState) -> Path:
        # Derived, never read from the state: the artifact is always <duel id>.md here.
        return self.root / f"{state.id}.md"

    def events_path(self, duel_id: str) -> Path:
        return self.duel_folder(duel_id) / "events.jsonl"


class DuelLock:
    """A short critical section across processes (filelock over ``fcntl.flock``).

    One FileLock per path and process, reused: building one costs more than a critical
    section. FileLock is thread-local, so threads of one process still exclude each other.
    """

    _locks: ClassVar[dict[tuple[str, float], FileLock]] = {}

    def __init__(self, path: Path, timeout: float = LOCK_TIMEOUT_SECONDS):
        key = (str(path), timeout)
        if key not in self._locks:
            self._locks[key] = FileLock(key[0], timeout=timeout, mode=0o600)
        self._lock = self._locks[key]
        self._path = path
        self._timeout = timeout

    def __enter__(self) -> DuelLock:
        try:
            # Critical sections last about a millisecond: poll at that pace, not filelock's 50 ms.
            self._lock.acquire(poll_interval=0.001)
        except Timeout:
            raise DuelError(
                ErrorCode.LOCK_TIMEOUT, f"could not take {self._path} within {self._timeout:g}s"
            ) from None
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


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
        self._pending: list[bytes] = []

    def emit(self, ts: str, kind: str, participant_id: str | None, data: dict[str, Any]) -> None:
        record = {
            "seq": self.state.event_seq + len(self._pending),
            "ts": ts,
            "type": kind,
            "duel_id": self.state.id,
            "participant_id": participant_id,
            "data": data,
        }
        self._pending.append(json.dumps(record, ensure_ascii=False).encode() + b"\n")

    def flush(self) -> None:
        """Write pending events and advance the state's counters (before the state is saved)."""
        if not self._pending:
            return
        blob = b"".join(self._pending)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size < self.state.event_bytes:
                raise corrupt(str(self.path), "shorter than the state records")
            if size > self.state.event_bytes:
                os.ftruncate(fd, self.state.event_bytes)  # drop a dead writer's tail
            os.lseek(fd, self.state.event_bytes, os.SEEK_SET)
            _write_all(fd, blob)
            os.fsync(fd)
        finally:
            os.close(fd)
        self.state.event_seq += len(self._pending)
        self.state.event_bytes += len(blob)
        self._pending.clear()


class Transaction:
    """One critical section's view of a duel: the state, its pending events, the time.

    Changes are made to ``state`` in memory; :meth:`commit` writes the events, then the
    state, each atomically. ``wake`` marks a change that waiters should see (a join, a
    grant, a release, a turn, a close), as opposed to bookkeeping (a refresh, a rejection).
    """

    def __init__(self, debate: DebateDir, state: DuelState, now: float):
        self.debate = debate
        self.state = state
        self.now = now
        self._events = EventLog(debate.events_path(state.id), state)
        self._dirty = False
        self._woken = False

    def emit(self, kind: str, participant_id: str | None, wake: bool = True, **data: Any) -> None:
        """Log an event; ``wake`` says whether waiters should see the duel as changed."""
        self._events.emit(iso(self.now), kind, participant_id, data)
        self._dirty = True
        self._woken = self._woken or wake

    def wake(self) -> None:
        """A change with no event of its own that waiters must still see."""
        self._dirty = self._woken = True

    def touch(self, participant: Participant) -> None:
        participant.last_seen_at = self.now
        self._dirty = True

    def save(self) -> None:
        """Mark the state as changed, to be written by :meth:`commit` (a new duel, say)."""
        self._dirty = True

    def commit(self) -> None:
        if not self._dirty:
            return
        if self._woken:
            self.state.rev += 1
        self._events.flush()
        self.debate.write_state(self.state)
        self._dirty = self._woken = False
