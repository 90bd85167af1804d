"""Figures for the lock service (prints, never asserts). Run: python bench/bench_lock.py

(b) claim+release cycles per second in one process, fsync included (target >= 600/s; 1,000/s on PostgreSQL,
    issue 40);
(c) hand-off latency: from seat 1's release_lock in process A to seat 2's `wait` returning in
    process B, p50 and p99 (target: within 5 ms of the release, issue 40). Timed from the release's
    call (its own work and fsyncs included: an upper bound) and from its return (which the waiter,
    woken by the state's rename through inotify, can beat: a negative time).

(a), start-up as whole processes, is bench/bench_startup.py.

`python bench/bench_lock.py /dev/shm` measures on another filesystem.
`python bench/bench_lock.py --store postgresql://…` measures (b) and (c) through a PostgreSQL
store instead (the hand-off through LISTEN/NOTIFY, target median <= 20 ms); `--store postgresql`
through a server of its own (tests/pg_server.py: Debian's binaries, the tests' settings, fsync off).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # pg_server, for --store postgresql

from rp1_duel.coordination import DuelService
from rp1_duel.coordination._join_result import JoinResult
from rp1_duel.settings import DuelSettings

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike

SOURCE = "# Lease design\n\n## Lease semantics\nLeases expire unless refreshed.\n"
N_CYCLES = 2000
N_HANDOFFS = 100


STORE: str | None = None  # --store: a postgresql:// URL, else the debate dir


def setup(root: Path, lease_seconds: int = 600) -> tuple[Path, JoinResult, JoinResult]:
    root.mkdir(parents=True, exist_ok=True)
    source = root / "design.md"
    source.write_text(SOURCE, encoding="utf-8")
    debate_dir = root / "debates"
    service = DuelService(debate_dir, store=STORE)
    settings = DuelSettings(lease_seconds=lease_seconds)
    topic = f"Bench {root.parent.name} {root.name}"  # a duel of its own, in a shared database too
    one = service.join(
        target=str(source), participant_name="Alice", harness="bench", model_id="m1", settings=settings, topic=topic
    )
    two = service.join(
        target=str(source), participant_name="Bob", harness="bench", model_id="m2", settings=settings, topic=topic
    )
    return debate_dir, one, two


def cycles_per_second(root: Path) -> float:
    debate_dir, one, _ = setup(root)
    service = DuelService(debate_dir, store=STORE)
    seat = one.seat
    claim = service.claim_lock(seat)  # warm imports (release imports the record module)
    service.release_lock(seat, claim.lease)
    started = time.perf_counter()
    for _ in range(N_CYCLES):
        claim = service.claim_lock(seat)
        service.release_lock(seat, claim.lease)
    return N_CYCLES / (time.perf_counter() - started)


def bench_cycles(root: Path) -> None:
    fsyncs = 0
    real_fsync = os.fsync

    def counting_fsync(fd: FileDescriptorLike) -> None:
        nonlocal fsyncs
        fsyncs += 1
        real_fsync(fd)

    os.fsync = counting_fsync
    try:
        rate = cycles_per_second(root / "b")
        per_cycle = fsyncs / (N_CYCLES + 1)
        os.fsync = lambda fd: None  # noqa: ARG005  os.fsync's signature (mypy checks the name)
        no_sync = cycles_per_second(root / "b-nosync")
    finally:
        os.fsync = real_fsync
    print(
        f"(b) claim+release in one process (fsync included): {rate:.0f} cycles/s "
        f"({1000 / rate:.2f} ms a cycle, {per_cycle:.1f} fsyncs a cycle; target >= {1000 if STORE else 600}/s)"
    )
    print(f"    for scale only, with os.fsync stubbed out: {no_sync:.0f} cycles/s")


def holder(
    debate_dir: str, one: JoinResult, to_waiter: mp.Queue, from_waiter: mp.Queue, n: int, store: str | None
) -> None:
    """Process A, seat 1: claim, let B start waiting, release, report when release returned."""
    service = DuelService(debate_dir, store=store)
    for i in range(n):
        claim = service.claim_lock(one.seat)
        assert claim.acquired, claim
        to_waiter.put(("granted", i))
        assert from_waiter.get(timeout=30) == ("waiting", i)
        time.sleep(0.03)  # B is inside wait() by now
        called = time.time()
        service.release_lock(one.seat, claim.lease)
        to_waiter.put(("released", i, called, time.time()))
        assert from_waiter.get(timeout=30)[0] == "done"


def waiter(
    debate_dir: str,
    two: JoinResult,
    from_holder: mp.Queue,
    to_holder: mp.Queue,
    results: mp.Queue,
    n: int,
    store: str | None,
) -> None:
    """Process B, seat 2: wait() from after A's grant; note when it returns."""
    service = DuelService(debate_dir, store=store)
    duel, pid = two.duel_id, two.seat.participant_id
    for i in range(n):
        assert from_holder.get(timeout=30) == ("granted", i)
        to_holder.put(("waiting", i))
        data = service.wait(duel, pid, timeout=10)
        returned = time.time()
        kind, j, called, released = from_holder.get(timeout=30)
        assert (kind, j) == ("released", i)
        results.put((returned - called, returned - released, data.changed, data.lock.owner_participant_id))
        to_holder.put(("done", i))


def bench_handoff(root: Path) -> None:
    debate_dir, one, two = setup(root / "c")
    ctx = mp.get_context("spawn")
    a_to_b, b_to_a, results = ctx.Queue(), ctx.Queue(), ctx.Queue()
    procs = [
        ctx.Process(target=holder, args=(str(debate_dir), one, a_to_b, b_to_a, N_HANDOFFS, STORE)),
        ctx.Process(target=waiter, args=(str(debate_dir), two, a_to_b, b_to_a, results, N_HANDOFFS, STORE)),
    ]
    for proc in procs:
        proc.start()
    samples = [results.get(timeout=60) for _ in range(N_HANDOFFS)]
    for proc in procs:
        proc.join(timeout=30)
    unchanged = sum(1 for s in samples if not s[2] or s[3] is not None)
    target = "median <= 20 ms" if STORE else "within 5 ms"
    print(f"(c) hand-off, A's release_lock -> B's wait returned, {len(samples)} hand-offs (target {target}):")
    for label, column in (("from the release's call", 0), ("from its return", 1)):
        latencies = sorted(s[column] * 1000 for s in samples)
        p50, p99 = statistics.median(latencies), latencies[max(0, round(0.99 * len(latencies)) - 1)]
        print(f"    {label:<24} p50 {p50:6.1f} ms, p99 {p99:6.1f} ms, max {latencies[-1]:6.1f} ms")
    print(f"    waits that returned without seeing the release: {unchanged}")


def main() -> None:
    global STORE  # noqa: PLW0603  the one setting of a script, read by its helpers and child processes
    args = sys.argv[1:]
    if args[:1] == ["--store"]:
        STORE, args = args[1], args[2:]
    # An optional argument picks the filesystem to measure (default: the temp dir).
    root = Path(tempfile.mkdtemp(prefix="duel-bench-", dir=args[0] if args else None))
    try:
        if STORE == "postgresql":
            from pg_server import running_server

            with running_server() as server:
                STORE = server.url()
                print(f"a PostgreSQL server of its own on 127.0.0.1:{server.port} (fsync off, as in the tests)")
                measure(root)
        else:
            measure(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def measure(root: Path) -> None:
    """(b) and (c), in the store chosen."""
    print(f"debate dirs under {root}" + (" (duels in a PostgreSQL store)" if STORE else ""))
    bench_cycles(root)
    bench_handoff(root)


if __name__ == "__main__":
    main()
