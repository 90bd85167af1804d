"""What the lease campaign does to its clients from inside: the campaign's clock, a file layer that
fails, and a store without fencing. Loaded in every client process (library clients and the
``duel tools`` processes they start); the nemesis steers them through two small JSON files of the
campaign's folder, ``clock.json`` and ``files.json``.

- The clock: the real clocks plus the shifts of ``clock.json``. ``mono`` only grows (time passes
  at once: a suspended machine, a paused VM) and moves every lease; ``wall`` jumps either way (NTP)
  and must change nothing. A library client injects it (``DuelService(clock=…)``, a PostgreSQL
  store's ``offset``); a ``duel tools`` process reads it once at its start.
- The file layer: ``os.fsync``, ``os.replace`` and ``os.write`` wrapped, slow or failing (EIO, ENOSPC)
  while ``files.json`` says so, the way the tests patch ``rp1_duel.files`` already.
- :class:`UnfencedStore`: a debate dir whose process trusts the lease it was granted, as a lock
  client without fencing does: the deliberately broken store the checker must catch. Tests only.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rp1_duel.clock import Clock, Instant, boot_id
from rp1_duel.coordination import LockAcquired, LockReleased
from rp1_duel.coordination._state import DuelState, Lease
from rp1_duel.coordination.storage import DebateDir, DirectoryStore
from rp1_duel.vocabulary import ACTIVE

if TYPE_CHECKING:
    from rp1_duel.coordination import Event
    from rp1_duel.coordination._store import Transaction

CLOCK_FILE = "clock.json"
FILES_FILE = "files.json"
NO_SHIFT = {"wall": 0.0, "mono": 0.0}


def read_json(path: Path, default: dict[str, Any]) -> dict[str, Any]:
    """A small control file the nemesis replaces atomically; ``default`` until it exists."""
    try:
        found: dict[str, Any] = json.loads(path.read_bytes())
    except FileNotFoundError:
        return default
    return found


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Replace a control file whole (its readers never see half of it)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(data))
    os.replace(temp, path)


class CampaignClock:
    """The real clocks shifted as ``clock.json`` says, read at every call: the injected clock."""

    def __init__(self, folder: Path):
        self.path = folder / CLOCK_FILE

    def shifts(self) -> dict[str, float]:
        """The current shifts of the wall and monotonic clocks."""
        return {k: float(v) for k, v in read_json(self.path, NO_SHIFT).items()}

    def __call__(self) -> Instant:
        shift = self.shifts()
        return Instant(time.time() + shift["wall"], time.monotonic() + shift["mono"], boot_id())

    def lease_time(self, *, database: bool) -> float:
        """The time leases are judged at, as the history records it: a PostgreSQL store's clock is the
        database's (this host's wall clock) plus the shift; a debate dir's is the monotonic one."""
        shift = self.shifts()["mono"]
        return (time.time() if database else time.monotonic()) + shift


class FaultyFiles:
    """``os.fsync``, ``os.replace`` and ``os.write`` as ``files.json`` wants them now: ``kind`` one of
    ``fsync-slow``, ``fsync-fail``, ``rename-slow``, ``rename-fail``, ``enospc`` (or none), each call
    failing with probability ``p`` or slowed by ``delay`` seconds."""

    def __init__(self, folder: Path, rnd: random.Random):
        self.path = folder / FILES_FILE
        self.rnd = rnd
        self.mode: dict[str, Any] = {}
        self.real: dict[str, Callable[..., Any]] = {"fsync": os.fsync, "replace": os.replace, "write": os.write}

    def install(self) -> None:
        """Put the wrappers in place of the real calls, for the whole process."""
        os.fsync = self._wrap("fsync", "fsync", errno.EIO)
        os.replace = self._wrap("replace", "rename", errno.EIO)
        os.write = self._wrap("write", "enospc", errno.ENOSPC)
        self.reload()

    def reload(self) -> None:
        """Read what the nemesis wants now (before each op)."""
        self.mode = read_json(self.path, {})

    def _wrap(self, name: str, fault: str, code: int) -> Callable[..., Any]:
        real = self.real[name]

        def faulty(*args: Any) -> Any:
            kind = self.mode.get("kind") or ""
            if kind.startswith(fault):
                if kind.endswith("-slow"):
                    time.sleep(float(self.mode.get("delay", 0.05)))
                elif self.rnd.random() < float(self.mode.get("p", 0.5)):
                    raise OSError(code, os.strerror(code), f"{name} (injected)")
            return real(*args)

        return faulty


class UnfencedStore(DirectoryStore):
    """A debate dir whose client, once granted a lease, trusts it until it releases it: each op
    finds the lease it was granted in force, however long ago it lapsed and whoever holds the floor
    now. Fencing switched off, for the campaign to prove its checker catches it; never used by duel.
    The lease trusted is kept in the client's file ``trusted`` (its ``duel tools`` processes share it)."""

    def __init__(self, debate: DebateDir, clock: Clock, trusted: Path):
        super().__init__(debate, clock)
        self.trusted = trusted

    @contextlib.contextmanager
    def transaction(self, duel_id: str) -> Iterator[Transaction]:
        """An op on the duel that sees this client's own lease in force."""
        with super().transaction(duel_id) as tx:
            mine = read_json(self.trusted, {}).get(duel_id)
            if mine is not None:
                tx.state.lease = Lease(**{**mine, "expires_mono": tx.now.mono + tx.state.lease_seconds})
            yield tx

    def save(self, state: DuelState, events: list[Event]) -> None:
        """Save as the debate dir does; then remember a lease granted here, forget one released here."""
        super().save(state, events)
        trusted = read_json(self.trusted, {})
        if any(isinstance(event.data, LockAcquired) for event in events) and state.lease is not None:
            trusted[state.id] = asdict(state.lease)
        elif any(isinstance(event.data, LockReleased) for event in events) or state.status != ACTIVE:
            trusted.pop(state.id, None)
        write_json(self.trusted, trusted)


def run_tools_process(folder: str, seed: str, trusted: str) -> None:
    """The body of a campaign's ``duel tools`` process: the campaign's clock read once, its file
    layer installed, the store without fencing when ``trusted`` names the client's trust file, then
    ``duel`` itself with the rest of ``sys.argv``."""
    campaign = Path(folder)
    if trusted:
        from rp1_duel.coordination import service

        class ClientStore(UnfencedStore):  # the store `duel tools` makes of its debate dir, this client's trust in it
            def __init__(self, debate: DebateDir, clock: Clock):
                super().__init__(debate, clock, Path(trusted))

        vars(service)["DirectoryStore"] = ClientStore
    shift = CampaignClock(campaign).shifts()
    real_time, real_mono = time.time, time.monotonic
    time.time = lambda: real_time() + shift["wall"]
    time.monotonic = lambda: real_mono() + shift["mono"]
    FaultyFiles(campaign, random.Random(seed)).install()
    if "--store" in sys.argv:  # the database's clock, shifted as the library clients shift it
        from rp1_duel.coordination import _postgres

        made = _postgres.PostgresStore.__init__

        def shifted(store: _postgres.PostgresStore, url: str, debate: DebateDir) -> None:
            made(store, url, debate)
            store.offset = lambda: shift["mono"]

        _postgres.PostgresStore.__init__ = shifted  # type: ignore[method-assign,assignment]
    from rp1_duel.cli import main

    main()
