"""Many duels at once on one PostgreSQL server with its default settings (prints, never asserts).

Run: python bench/bench_postgres_scale.py [--duels 100] [--panel 8] [--think 30] [--store postgresql|dir|both]

It starts its own server (Debian's binaries, as the tests do: tests/pg_server.py), with the
default ``max_connections`` (100), then runs, each store in turn:

- ``--duels`` two-seat duels at once: in each, seat 2 waits through real ``duel tools wait``
  processes (run again after each answer, as an agent runs it) while seat 1, a process of its
  own, claims and releases the floor a few times, then claims, appends turn 1 and releases, its
  claims spread over ``--think`` seconds as a model's thinking spreads them (a pause before each:
  ``--think 0`` makes every seat's first claim at the same instant, a burst no real duel makes);
- then a panel of ``--panel`` seats, a process each, taking two rounds of turns in order.

and prints the errors, the store's connections at peak (``pg_stat_activity``), the claim
latency (median and p99, as each seat process timed its claims), and how many NOTIFY wake-ups
a write costs: a waiter of one duel counts what it hears while every duel writes. Beside the
latency it prints how busy the machine's CPUs were and what one ``duel tools wait`` process
costs alone: a claim waits for a CPU like any process, so on a saturated machine the p99 is the
queue for the CPUs, not the store.
Goal (issue 26, 2-core machines): 0 errors, peak connections <= seats + 10, p99 claim < 250 ms.

The package's bytecode is compiled first, as an installed package's is: with PYTHONDONTWRITEBYTECODE set
(as on these machines), every seat and every wait would otherwise compile the modules changed since the
last compile, a cost no installed `duel` pays.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "tests")]  # run from a checkout, uninstalled

from bench_validate import PANEL, SEATS, make_debate, make_source, make_vocabulary  # noqa: E402

from rp1_duel.coordination import DuelService  # noqa: E402
from rp1_duel.settings import DuelSettings  # noqa: E402

CYCLES = 4  # claim+release cycles a seat makes before its turn: each wakes the duel's waiter
PANEL_ROUNDS = 2
STORE_ENV = "DUEL_STORE"


# -- the seat processes (this file, run with --seat) -------------------------------------------
def seat_process(plan: dict[str, Any]) -> None:
    """One seat: connect, wait for "go" on stdin, then its part; prints its claims and errors as JSON."""
    from rp1_duel.coordination import Seat
    from rp1_duel.errors import DuelError

    service = DuelService(plan["debate_dir"], store=plan["store"])
    seat = Seat(plan["duel_id"], plan["participant_id"], plan["token"])
    service.status(
        seat.duel_id, participant_id=seat.participant_id
    )  # imports paid and the store reached before the clock runs
    print("ready", flush=True)
    sys.stdin.readline()
    claims: list[float] = []
    waited: list[float] = []  # the claims that paused for the store (a full server), apart
    errors: list[str] = []
    pauses: list[str] = []
    service.on_store_wait = pauses.append

    def claim() -> Any:
        pauses.clear()
        started = time.perf_counter()
        result = service.claim_lock(seat)
        (waited if pauses else claims).append((time.perf_counter() - started) * 1000)
        return result

    try:
        pause = plan["think"] / (plan["cycles"] + 1)
        for _ in range(plan["cycles"]):
            time.sleep(pause * random.random())  # a model thinking before each claim, as in a duel
            granted = claim()
            if granted.acquired:
                service.release_lock(seat, granted.lease)
        time.sleep(pause * random.random() if plan["cycles"] else 0)
        for turn in plan["turns"]:
            while (
                service.status(seat.duel_id, participant_id=seat.participant_id).next_turn_seat != plan["seat_number"]
            ):
                service.wait(seat.duel_id, seat.participant_id, timeout=30)
            granted = claim()
            if not granted.acquired:
                errors.append(f"claim refused on its turn: {granted.reason}")
                break
            service.append(seat, granted.lease, turn, release=True)
    except DuelError as exc:
        errors.append(f"{exc.code}: {exc.message}")
    print(json.dumps({"claims": claims, "waited": waited, "errors": errors}), flush=True)


# -- the orchestra -------------------------------------------------------------------------------
class Run:
    """One store's run: the duels, the panel, the waiters, the sampler, and what they found."""

    def __init__(self, root: Path, store: str | None, args: argparse.Namespace):
        self.root, self.store, self.args = root, store, args
        root.mkdir(parents=True)
        self.debate_dir = root / "debates"
        self.service = DuelService(self.debate_dir, store=store)
        self.claims: list[float] = []
        self.waited: list[float] = []  # of the claims, those that paused for a connection slot
        self.errors: list[str] = []
        self.peak = 0
        self.wait_runs = 0  # `duel tools wait` processes run, each a Python start-up and a connection
        self.done = threading.Event()
        rng = random.Random(26)
        vocabulary = make_vocabulary(rng, 400)
        source = make_source(rng, vocabulary)
        self.source = root / "design.md"
        self.source.write_text(source.text, encoding="utf-8")
        self.two_seat_turns = make_debate(1, rng, source, vocabulary)
        self.panel_seats = {seat: who for seat, who in PANEL.items() if seat <= args.panel}
        self.panel_turns = make_debate(PANEL_ROUNDS * args.panel, rng, source, vocabulary, seats=self.panel_seats)

    def env(self, **extra: str) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if key not in (STORE_ENV, "DUEL_PARTICIPANT_TOKEN")}
        return {**env, **({STORE_ENV: self.store} if self.store else {}), **extra}

    def join(self, topic: str, seats: dict[int, tuple[str, str, str]], max_turns: int | None = None) -> list[Any]:
        return [
            self.service.join(
                target=str(self.source),
                participant_name=name,
                harness=harness,
                model_id=model,
                topic=topic,
                settings=DuelSettings(seats=len(seats), max_turns=max_turns),
            )
            for name, harness, model in seats.values()
        ]

    def start_seat(self, joined: Any, number: int, cycles: int, turns: list[str]) -> subprocess.Popen[str]:
        plan = {
            "debate_dir": str(self.debate_dir),
            "store": self.store,
            "duel_id": joined.duel_id,
            "participant_id": joined.seat.participant_id,
            "token": joined.seat.token,
            "seat_number": number,
            "think": self.args.think,
            "cycles": cycles,
            "turns": turns,
        }
        return subprocess.Popen(
            [sys.executable, __file__, "--seat", json.dumps(plan)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=self.env(),
        )

    def go(self, seats: list[subprocess.Popen[str]]) -> None:
        """Every seat ready, then all at once; their claims and errors collected."""
        for seat in seats:
            assert seat.stdout is not None and seat.stdin is not None
            if seat.stdout.readline().strip() != "ready":
                self.errors.append("a seat did not start")
        for seat in seats:
            assert seat.stdin is not None
            seat.stdin.write("go\n")
            seat.stdin.flush()
        for seat in seats:
            out, _ = seat.communicate(timeout=600)
            lines = out.strip().splitlines()
            found: dict[str, list[Any]] = json.loads(lines[-1]) if lines else {"claims": [], "errors": ["no answer"]}
            self.claims += found["claims"] + found.get("waited", [])
            self.waited += found.get("waited", [])
            self.errors += found["errors"]
            for error in found["errors"]:
                print(f"  seat error: {error}", flush=True)

    def waiter(self, joined: Any) -> None:
        """Seat 2 of a duel, waiting through `duel tools wait` until turn 1 is in."""
        argv = [sys.executable, "-m", "rp1_duel", "tools", "wait", "--duel-id", joined.duel_id]
        argv += [
            "--participant-id",
            joined.seat.participant_id,
            "--timeout",
            "60",  # as the skill tells an agent to wait
            "--debate-dir",
            str(self.debate_dir),
        ]
        next_step = joined.next_step  # passed back each time, as an agent does: a change it missed returns at once
        while not self.done.is_set():
            self.wait_runs += 1
            answer = subprocess.run(
                [*argv, "--next-step", next_step],
                env=self.env(DUEL_PARTICIPANT_TOKEN=joined.seat.token),
                capture_output=True,
                text=True,
                timeout=300,
            )
            if answer.returncode != 0:
                self.errors.append(f"duel tools wait: {answer.stdout.strip() or answer.stderr.strip()}")
                print(f"  waiter error: {self.errors[-1]}", flush=True)
                return
            data = json.loads(answer.stdout)["data"]
            if data["turn_count"] >= 1:
                return
            next_step = data["next_step"]

    def sample_connections(self) -> None:
        if self.store is None:
            return
        import psycopg

        with psycopg.connect(self.store, autocommit=True, application_name="bench") as conn:
            while not self.done.is_set():
                row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'duel'").fetchone()
                self.peak = max(self.peak, int(row[0]) if row else 0)
                time.sleep(0.02)

    def duels(self) -> dict[str, Any]:
        count = self.args.duels
        pairs = [self.join(f"Duel {n}", SEATS) for n in range(count)]
        sampler = threading.Thread(target=self.sample_connections, daemon=True)
        sampler.start()
        waiters = [threading.Thread(target=self.waiter, args=(pair[1],)) for pair in pairs]
        for thread in waiters:
            thread.start()
        heard = self.listen_to(pairs[0][1])
        seats = [self.start_seat(pair[0], 1, CYCLES, self.two_seat_turns) for pair in pairs]
        time.sleep(1.0)  # the waiters are waiting
        started, then = time.monotonic(), machine_busy()
        self.go(seats)
        grace = time.monotonic() + 30  # a waiter whose seat failed would wait on: the failure is counted already
        for thread in waiters:
            thread.join(timeout=max(0.0, grace - time.monotonic()))
        elapsed, now = time.monotonic() - started, machine_busy()
        busy, ticks = now[0] - then[0], now[1] - then[1]
        own, everyone = self.writes(pairs[0][0].duel_id), sum(self.writes(pair[0].duel_id) for pair in pairs)
        self.done.set()
        sampler.join()
        return {
            "seats": 2 * count,
            "elapsed": elapsed,
            "heard": heard(),
            "own_writes": own,
            "all_writes": everyone,
            "busy": busy / ticks if ticks else None,
            "wait_cpu": self.one_wait_cpu(pairs[0][1]),
        }

    def one_wait_cpu(self, joined: Any) -> float:
        """The CPU seconds one `duel tools wait` process costs (median of 5 run alone, each returning at once)."""
        argv = [sys.executable, "-m", "rp1_duel", "tools", "wait", "--duel-id", joined.duel_id, "--timeout", "0"]
        argv += ["--participant-id", joined.seat.participant_id, "--debate-dir", str(self.debate_dir)]
        costs = []
        for _ in range(5):
            before = children_cpu()
            subprocess.run(
                argv, env=self.env(DUEL_PARTICIPANT_TOKEN=joined.seat.token), capture_output=True, check=True
            )
            costs.append(children_cpu() - before)
        return statistics.median(costs)

    def listen_to(self, joined: Any) -> Any:
        """A waiter of one duel in this process, counting the notifications its connection hears."""
        if self.store is None:
            return lambda: None
        from rp1_duel.coordination._postgres import PostgresStore

        service = DuelService(self.root / "listener", store=self.store)
        store = service.store
        assert isinstance(store, PostgresStore)

        def wait() -> None:
            while service.status(joined.duel_id).turn_count < 1:
                service.wait(joined.duel_id, joined.seat.participant_id, timeout=60)

        thread = threading.Thread(target=wait, daemon=True)
        thread.start()

        def heard() -> tuple[int, int]:
            thread.join(timeout=300)
            store.close()
            return store.link.notifications, store.link.foreign

        return heard

    def writes(self, duel_id: str) -> int:
        """The writes that notify waiters: every save of the duel (the join's included)."""
        stamp = self.service.state_stamp(duel_id)
        return int(stamp) if isinstance(stamp, int) else 0

    def panel(self) -> dict[str, Any]:
        size = self.args.panel
        self.done.clear()
        self.peak = 0
        joined = self.join("Panel", self.panel_seats, max_turns=PANEL_ROUNDS * size)
        sampler = threading.Thread(target=self.sample_connections, daemon=True)
        sampler.start()
        seats = [
            self.start_seat(seat, i + 1, 0, [t for n, t in enumerate(self.panel_turns, 1) if (n - 1) % size == i])
            for i, seat in enumerate(joined)
        ]
        before = (len(self.claims), len(self.errors))
        started = time.monotonic()
        self.go(seats)
        elapsed = time.monotonic() - started
        self.done.set()
        sampler.join()
        turns = self.service.status(joined[0].duel_id).turn_count
        return {"seats": size, "elapsed": elapsed, "claims": self.claims[before[0] :], "turns": turns}


def children_cpu() -> float:
    """CPU seconds (user and system) of this process's children that ended."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def machine_busy() -> tuple[int, int]:
    """The machine's CPU time so far, busy and in all, in clock ticks (Linux's /proc/stat; zeros elsewhere)."""
    try:
        ticks = [int(n) for n in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return 0, 0
    idle = ticks[3] + ticks[4]  # idle and iowait
    return sum(ticks) - idle, sum(ticks)


def latency(claims: list[float]) -> str:
    if not claims:
        return "no claims"
    ordered = sorted(claims)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * len(ordered)) - 1)]
    return f"median {statistics.median(ordered):.1f} ms, p99 {p99:.1f} ms ({len(ordered)} claims)"


def report(name: str, run: Run, duels: dict[str, Any], panel: dict[str, Any]) -> None:
    print(f"\n== {name} ==")
    duel_claims = run.claims[: len(run.claims) - len(panel["claims"])]
    print(
        f"{run.args.duels} duels at once ({duels['seats']} seats, claims over {run.args.think:g} s), {duels['elapsed']:.1f} s:"
    )
    print(f"  claim latency: {latency(duel_claims)}")
    busy = "" if duels["busy"] is None else f"the machine's {os.cpu_count()} CPUs {100 * duels['busy']:.0f}% busy; "
    print(
        f"  CPU: {busy}{run.wait_runs} `duel tools wait` runs, one costing {1000 * duels['wait_cpu']:.0f} ms of CPU "
        f"alone (a Python start-up{' and the driver' if run.store else ''})"
    )
    if run.waited:
        print(f"  of which paused for a full server: {latency(run.waited)}")
        print(f"  the others: {latency([c for c in duel_claims if c not in run.waited])}")
    if run.store is not None:
        print(f"  connections at peak: {duels['peak']} (goal <= seats + 10 = {duels['seats'] + 10})")
        heard, foreign = duels["heard"]
        print(
            f"  NOTIFY wake-ups: a waiter of one duel heard {heard} notifications, {foreign} of them about other "
            f"duels, while its duel took {duels['own_writes']} writes and all duels {duels['all_writes']}: "
            f"{heard / max(1, duels['all_writes']):.3f} wake-ups of that waiter per write on the server"
        )
    print(f"a panel of {panel['seats']} seats, {panel['turns']} turns, {panel['elapsed']:.1f} s:")
    print(f"  claim latency: {latency(panel['claims'])}")
    if run.store is not None:
        print(f"  connections at peak: {panel['peak']}")
    print(f"errors: {len(run.errors)}")
    for error in sorted(set(run.errors))[:10]:
        print(f"  {error}")


def measure(name: str, root: Path, store: str | None, args: argparse.Namespace) -> None:
    run = Run(root, store, args)
    duels = run.duels()
    duels["peak"] = run.peak
    panel = run.panel()
    panel["peak"] = run.peak
    report(name, run, duels, panel)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--duels", type=int, default=100)
    parser.add_argument("--panel", type=int, default=8, choices=range(2, 9), metavar="2..8")
    parser.add_argument(
        "--think",
        type=float,
        default=30.0,
        help="seconds over which a seat spreads its claims, as a model's thinking spreads a duel's writes "
        "(0: all at once, a burst no real duel makes) [default: 30]",
    )
    parser.add_argument("--store", choices=["postgresql", "dir", "both"], default="both")
    parser.add_argument("--seat", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.seat:
        seat_process(json.loads(args.seat))
        return
    compileall.compile_dir(ROOT / "rp1_duel", quiet=1)
    root = Path(tempfile.mkdtemp(prefix="duel-scale-"))
    if args.store in ("postgresql", "both"):
        import psycopg
        from pg_server import running_server

        with running_server() as server:  # default settings: max_connections 100
            url = server.url()
            with psycopg.connect(url, autocommit=True) as conn:
                row = conn.execute("SELECT current_setting('max_connections')").fetchone()
            print(f"PostgreSQL on 127.0.0.1:{server.port}, max_connections {row[0] if row else '?'}")
            measure("PostgreSQL store", root / "pg", url, args)
    if args.store in ("dir", "both"):
        measure("directory store", root / "dir", None, args)


if __name__ == "__main__":
    main()
