"""The lease campaign: seeded clients against a real store while a nemesis injects faults; the
history they record is then checked (:mod:`lease_checker`). Shared by the quick mode
(tests/campaign/test_lease_campaign.py) and the long runs (bench/campaign.py).

Six client processes play the two seats of one duel at a time (per seat: two library clients and
one that runs real ``duel tools`` processes; :mod:`lease_worker`); a duel that closes is followed
by the next. The nemesis fires the faults of :func:`plan_faults` as the answered ops reach each
one's count: SIGKILL of a client (restarted under a new name), SIGSTOP of one while time jumps
past its lease then SIGCONT, clock jumps, slow or failing fsync and rename, a full disk, and on
PostgreSQL cut connections and a restarted server. Same seed, same plan of faults and the same
random stream for every client: ``python bench/campaign.py --store S --seed N --ops M`` replays it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from rp1_duel.errors import DuelError
from rp1_duel.files import MAX_ARTIFACT_BYTES
from rp1_duel.settings import DuelSettings

from lease_checker import DuelEnd, Op, Violation, check
from lease_faults import CLOCK_FILE, FILES_FILE, NO_SHIFT, CampaignClock, read_json, write_json

HERE = Path(__file__).parent
LEASE_SECONDS = 5
SETTINGS = DuelSettings(max_turns=8, lease_seconds=LEASE_SECONDS, turn_timeout_seconds=86400)
CLIENTS = (  # per seat: two library clients and one running `duel tools` processes
    ("a1", "1", "library"),
    ("b1", "1", "library"),
    ("t1", "1", "tools"),
    ("a2", "2", "library"),
    ("b2", "2", "library"),
    ("t2", "2", "tools"),
)
SEATS = {"1": ("Alice", "claude-code", "claude-x"), "2": ("Bob", "codex", "gpt-x")}
FILE_FAULTS = ("fsync-slow", "fsync-fail", "rename-slow", "rename-fail", "enospc")
FAULTS = {
    "dir": ("kill", "stop", "clock-mono", "clock-wall", *FILE_FAULTS),
    "postgres": ("kill", "stop", "clock-mono", "pg-cut", "pg-restart", "enospc"),
}


class Fault(NamedTuple):
    """One fault of the plan: fired once ``at`` ops are answered; ``pick`` chooses its client, ``size``
    (0 to 1) its length, jump or odds."""

    at: int
    kind: str
    pick: int
    size: float


def plan_faults(seed: int, ops: int, store: str) -> list[Fault]:
    """The nemesis's plan for a campaign: a pure function of the seed, the op count and the store.
    About one fault per 80 ops, every kind at least once, kills and pauses of holders twice as often as
    the others, none in the first twentieth of the run."""
    rnd = random.Random(f"{seed}:nemesis")
    kinds = list(FAULTS[store])
    count = max(len(kinds) * 2, ops // 80)
    rnd.shuffle(kinds)
    weighted = [*FAULTS[store], "kill", "stop"]
    chosen = kinds + [rnd.choice(weighted) for _ in range(count - len(kinds))]
    ats = sorted(rnd.randrange(max(1, ops // 20), ops) for _ in chosen)
    return [Fault(at, kind, rnd.randrange(1_000_000), rnd.random()) for at, kind in zip(ats, chosen, strict=True)]


@dataclass
class CampaignResult:
    """What a campaign did and found."""

    store: str
    seed: int
    ops: int  # ops answered (or cut short by a kill)
    seconds: float
    duels: int
    broken: bool
    ops_asked: int
    faults: Counter[str] = field(default_factory=Counter)
    violations: list[Violation] = field(default_factory=list)
    history: Path = Path()

    @property
    def replay(self) -> str:
        """The command that runs the same campaign again."""
        broken = " --broken" if self.broken else ""
        return f"python bench/campaign.py --store {self.store} --seed {self.seed} --ops {self.ops_asked}{broken}"

    def report(self) -> str:
        """One paragraph: the figures, then each violation, then how to replay the run."""
        faults = ", ".join(f"{kind} {n}" for kind, n in sorted(self.faults.items()))
        figures = f"{self.ops} ops over {self.duels} duels in {self.seconds:.1f} s"
        lines = [
            f"store {self.store}, seed {self.seed}: {figures}; faults: {faults}; {len(self.violations)} violation(s)",
            *(f"  {v.kind}: {v.detail}" for v in self.violations[:20]),
            f"history: {self.history}",
            f"replay: {self.replay}",
        ]
        return "\n".join(lines)


class Campaign:
    """One run: the folder its processes share, the store, the clients and the nemesis."""

    def __init__(self, folder: Path, *, store: str, seed: int, broken: bool, server: Any = None):
        self.folder, self.store, self.seed, self.broken, self.server = folder, store, seed, broken, server
        self.database = store == "postgres"
        self.url = server.url("campaign") if self.database else ""
        self.clock = CampaignClock(folder)
        self.debate_dir = folder / "debates"
        self.source = folder / "design.md"
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        self.generation: Counter[str] = Counter()
        self.nemesis: list[Op] = []
        self.faults: Counter[str] = Counter()
        self.duels: list[str] = []
        self.read_at: dict[Path, int] = {}
        self.answered = 0
        self.files_until = 0.0
        self.paused: dict[str, float] = {}  # a stopped client -> when it is to be continued

    # -- set-up -----------------------------------------------------------------------------
    def prepare(self) -> None:
        """The folder, the store and the first duel."""
        from helpers import SOURCE as TEXT

        (self.folder / "holders").mkdir(parents=True, exist_ok=True)
        self.source.write_text(TEXT, encoding="utf-8")
        write_json(self.folder / CLOCK_FILE, NO_SHIFT)
        write_json(self.folder / FILES_FILE, {})
        if self.database:
            import psycopg

            with psycopg.connect(self.server.url(), autocommit=True) as conn:
                conn.execute("CREATE SCHEMA IF NOT EXISTS campaign")
        config = {
            "folder": str(self.folder),
            "debate_dir": str(self.debate_dir),
            "store": self.url,
            "seed": self.seed,
            "broken": self.broken,
        }
        (self.folder / "config.json").write_text(json.dumps(config))
        self.service = self._service()
        self.next_duel()

    def _service(self) -> Any:
        from rp1_duel.coordination import DebateDir, DuelService

        if not self.database:
            return DuelService(self.debate_dir, clock=self.clock)
        from rp1_duel.coordination._postgres import PostgresStore

        store = PostgresStore(self.url, DebateDir(self.debate_dir))
        store.offset = lambda: self.clock.shifts()["mono"]
        return DuelService(self.debate_dir, store=store)

    def next_duel(self) -> None:
        """Seat both players in a new duel and point the clients at it (``duel.json``)."""
        topic = f"Campaign {self.seed} round {len(self.duels) + 1}"
        seats = {}
        for seat, (name, harness, model) in SEATS.items():
            join = functools.partial(
                self.service.join, target=str(self.source), participant_name=name, harness=harness, model_id=model
            )
            joined = self._retried(functools.partial(join, settings=SETTINGS, topic=topic))
            seats[seat] = {"id": joined.seat.participant_id, "token": joined.seat.token}
            seats[seat] |= {"name": name, "harness": harness, "model": model}
        self.duels.append(joined.duel_id)
        write_json(self.folder / "duel.json", {"duel": joined.duel_id, "seats": seats})

    @staticmethod
    def _retried(call: Callable[[], Any]) -> Any:
        """The driver's own calls, retried through the faults (a restarting server, say)."""
        for _ in range(100):
            try:
                return call()
            except DuelError:
                time.sleep(0.1)
        return call()

    # -- clients ----------------------------------------------------------------------------
    def start(self, base: str, seat: str, kind: str) -> None:
        """Start client ``base`` (again, under a new name after a kill)."""
        self.generation[base] += 1
        name = base if self.generation[base] == 1 else f"{base}.{self.generation[base]}"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent)])}
        log = (self.folder / f"stderr-{name}.log").open("wb")
        argv = [sys.executable, str(HERE / "lease_worker.py"), str(self.folder / "config.json"), name, seat, kind]
        self.workers[name] = subprocess.Popen(
            argv, env=env, stdout=log, stderr=log, start_new_session=True, cwd=self.folder
        )
        log.close()

    def now(self) -> float:
        """The time leases are judged at, as the history records it."""
        return self.clock.lease_time(database=self.database)

    def note(self, kind: str, **args: Any) -> None:
        """A fault in the history (client ``nemesis``)."""
        moment = self.now()
        self.nemesis.append(
            {"client": "nemesis", "op": kind, "args": args, "start": moment, "end": moment, "result": {}}
        )
        self.faults[kind] += 1

    def count_answers(self) -> int:
        """How many ops were answered so far (the history files read on from where they were last read)."""
        for path in self.folder.glob("history-*.jsonl"):
            with path.open("rb") as handle:
                handle.seek(self.read_at.get(path, 0))
                chunk = handle.read()
            whole = chunk[: chunk.rfind(b"\n") + 1]
            self.read_at[path] = self.read_at.get(path, 0) + len(whole)
            self.answered += whole.count(b'"end"')
        return self.answered

    # -- the nemesis --------------------------------------------------------------------------
    def fire(self, fault: Fault) -> None:
        """Inject one fault of the plan."""
        if fault.kind in {"kill", "stop"}:
            name = self._target(fault.pick)
            if name is None:  # every client is paused already
                return
            pid = self.workers[name].pid
            if fault.kind == "kill":
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
                self.workers.pop(name).wait()
                self.note("kill", target=name)  # once dead: an op it ran cannot have taken effect after this
                self.paused.pop(name, None)
                base = name.split(".")[0]
                self.start(base, *next((seat, kind) for b, seat, kind in CLIENTS if b == base))
                if fault.size > 0.5:  # time passes: the dead holder's floor is due back at once
                    self.jump("mono", LEASE_SECONDS + 1)
                return
            self.note("stop", target=name)
            os.killpg(pid, signal.SIGSTOP)
            self.jump("mono", LEASE_SECONDS + 1)  # the client wakes after its lease lapsed
            self.paused[name] = time.monotonic() + 0.2 + fault.size
        elif fault.kind == "clock-mono":
            self.jump("mono", 1 + fault.size * LEASE_SECONDS)
        elif fault.kind == "clock-wall":
            self.jump("wall", (fault.size - 0.5) * 7200)
        elif fault.kind in FILE_FAULTS:
            self.note(fault.kind)
            write_json(self.folder / FILES_FILE, {"kind": fault.kind, "p": 0.3, "delay": 0.05})
            self.files_until = time.monotonic() + 0.3 + fault.size
        elif fault.kind == "pg-cut":
            self.note("pg-cut")
            self._cut_connections()
        elif fault.kind == "pg-restart":
            self.note("pg-restart")
            self.server.stop("fast")
            self.server.start()

    def wake(self, *, everyone: bool = False) -> None:
        """SIGCONT the paused clients whose pause is over (``everyone``: all of them)."""
        for name, until in list(self.paused.items()):
            if everyone or time.monotonic() >= until:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.workers[name].pid, signal.SIGCONT)
                del self.paused[name]
                self.note("cont", target=name)

    def _holders(self) -> list[str]:
        """The running clients (not paused) that hold a lease (each marks it in ``holders/``)."""
        return sorted(n for n in self._running() if (self.folder / "holders" / n).exists())

    def _running(self) -> list[str]:
        return [name for name in self.workers if name not in self.paused]

    def _aimed(self, fault: Fault) -> bool:
        """Whether ``fault`` may fire now: a kill or a stop waits for a client holding a lease (for 1,000 ops at most)."""
        return fault.kind not in {"kill", "stop"} or bool(self._holders()) or self.answered > fault.at + 1000

    def _target(self, pick: int) -> str | None:
        """A client holding a lease, when one does, else one of the seat holding the floor (else of any
        seat), chosen by ``pick``: the faults aim at holders."""
        holders = self._holders()
        if holders:
            return holders[pick % len(holders)]
        owner = None
        with contextlib.suppress(DuelError):
            owner = self.service.status(self.duels[-1]).lock.owner_participant_id
        seats = read_json(self.folder / "duel.json", {}).get("seats", {})
        holding = [seat for seat, me in seats.items() if me["id"] == owner]
        running = sorted(self._running())
        names = [n for n in running if self._seat_of(n) in holding] or running
        return names[pick % len(names)] if names else None

    @staticmethod
    def _seat_of(name: str) -> str:
        return next(seat for base, seat, _ in CLIENTS if base == name.split(".", maxsplit=1)[0])

    def jump(self, clock: str, seconds: float) -> None:
        """Move a clock of every client: ``mono`` forward (time passes at once), ``wall`` either way."""
        shifts = self.clock.shifts()
        shifts[clock] += seconds
        write_json(self.folder / CLOCK_FILE, shifts)
        self.note(f"clock-{clock}", seconds=round(seconds, 3))

    def _cut_connections(self) -> None:
        import psycopg

        with contextlib.suppress(psycopg.Error), psycopg.connect(self.server.url(), autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'"
            )

    # -- the run ------------------------------------------------------------------------------
    def run(self, ops: int, time_limit: float) -> float:
        """Clients and nemesis until ``ops`` ops are answered (or ``time_limit`` seconds pass); the seconds taken."""
        started = time.monotonic()
        plan = plan_faults(self.seed, ops, self.store)
        for base, seat, kind in CLIENTS:
            self.start(base, seat, kind)
        while self.count_answers() < ops and time.monotonic() - started < time_limit:
            for fault in [f for f in plan if f.at <= self.answered and self._aimed(f)]:
                plan.remove(fault)  # a kill or a stop waiting for a holder holds up no other fault
                self.fire(fault)
            self.wake()
            if self.files_until and time.monotonic() > self.files_until:
                write_json(self.folder / FILES_FILE, {})
                self.files_until = 0.0
            with contextlib.suppress(DuelError):
                if self.service.status(self.duels[-1]).status != "ACTIVE":
                    self.next_duel()
            time.sleep(0.05)
        return time.monotonic() - started

    def stop(self) -> list[Violation]:
        """Let the clients finish their op and leave (killing any that does not within a minute); a client
        that failed on its own (a traceback: a bug of the campaign, or of duel's library) is a violation."""
        (self.folder / "stop").touch()
        self.wake(everyone=True)
        write_json(self.folder / FILES_FILE, {})
        deadline = time.monotonic() + 60
        for name, proc in self.workers.items():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                self.note("kill", target=name)
        return [
            Violation("client_failed", f"{name} exited {proc.returncode}: see stderr-{name}.log")
            for name, proc in self.workers.items()
            if proc.returncode not in {0, -signal.SIGKILL}
        ]

    def history(self) -> list[Op]:
        """Every client's ops, each call joined with its answer (none for a killed client's last), and the faults."""
        ops: dict[tuple[str, int], Op] = {}
        for path in sorted(self.folder.glob("history-*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                entry = json.loads(line)
                key = (entry["client"], entry["seq"])
                if "op" in entry:
                    ops[key] = {**entry, "end": None, "result": None}
                elif key in ops:
                    ops[key].update(end=entry["end"], result=entry["result"])
        return sorted([*ops.values(), *self.nemesis], key=lambda op: op["start"])

    def finals(self) -> dict[str, DuelEnd]:
        """Each duel as the store keeps it now."""
        store = self.service.store
        found = {}
        for duel in self.duels:
            state = self._retried(functools.partial(store.read_state, duel))
            artifact = store.read_artifact(state, MAX_ARTIFACT_BYTES).decode("utf-8")
            found[duel] = DuelEnd(state.fence, tuple((t.n, t.sha256) for t in state.turns), artifact)
        return found


def run_campaign(
    folder: Path, *, store: str, seed: int, ops: int, broken: bool = False, server: Any = None, time_limit: float = 110
) -> CampaignResult:
    """Run a campaign in ``folder`` and check its history; ``server``: a PostgreSQL server (tests/pg_server.py)."""
    campaign = Campaign(folder, store=store, seed=seed, broken=broken, server=server)
    campaign.prepare()
    failed: list[Violation] = []
    try:
        seconds = campaign.run(ops, time_limit)
    finally:
        failed = campaign.stop()
    history = campaign.history()
    path = folder / "history.jsonl"
    path.write_text("".join(json.dumps(op) + "\n" for op in history), encoding="utf-8")
    answered = sum(1 for op in history if op["client"] != "nemesis")
    return CampaignResult(
        store=store,
        seed=seed,
        ops=answered,
        seconds=seconds,
        duels=len(campaign.duels),
        broken=broken,
        ops_asked=ops,
        faults=campaign.faults,
        violations=failed + check(history, campaign.finals(), LEASE_SECONDS),
        history=path,
    )
