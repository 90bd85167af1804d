"""How fast `duel tools` starts, against the bare interpreter (prints, never asserts).

Run: python bench/bench_startup.py

Agents poll `duel tools status`, one process a poll: its whole-process time is what they
pay. Each command runs as a whole process, interleaved with the others, and the median of
RUNS runs is printed with its ratio to `python -c pass` (target: status <= 2.5 times).

Like with like: the `duel` script runs its interpreter without flags, so site (and the
.pth files of the environment, an editable install's finder among them) is loaded; the
bare interpreter is timed the same way, with `python -S -c pass` printed for scale only.
Bytecode is compiled before timing (a warm-up run with writing allowed), as an installed
package's is: with PYTHONDONTWRITEBYTECODE set, every run would compile the package anew.
Last, `-X importtime` says whether a model SDK or another heavy module was imported.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout, uninstalled

from rp1_duel.coordination import DuelService
from rp1_duel.coordination._write_results import JoinResult

RUNS = 21
TARGET_RATIO = 2.5
SOURCE = "# Lease design\n\n## Lease semantics\nLeases expire unless refreshed.\n"
HEAVY = ("filelock", "anthropic", "openai", "typer", "click", "pydantic", "rich", "mistune", "frontmatter", "yaml")
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def duel_command() -> list[str]:
    script = shutil.which("duel", path=os.path.dirname(sys.executable))
    return [script] if script else [sys.executable, "-m", "rp1_duel"]


def setup(root: Path) -> tuple[Path, JoinResult, JoinResult]:
    source = root / "design.md"
    source.write_text(SOURCE, encoding="utf-8")
    service = DuelService(root / "debates")
    one = service.join(target=str(source), participant_name="Alice", harness="bench", model_id="m1")
    two = service.join(target=str(source), participant_name="Bob", harness="bench", model_id="m2")
    return root / "debates", one, two


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, env=ENV)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:4]} failed: {proc.stdout.decode()} {proc.stderr.decode()}")
    return elapsed


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="duel-bench-"))
    try:
        debate_dir, one, two = setup(root)
        duel = duel_command()
        status = ["tools", "status", "--duel-id", one.duel_id, "--debate-dir", str(debate_dir)]
        seat = ["--participant-id", two.seat.participant_id, f"--participant-token={two.seat.token}"]
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python -S -c pass": [sys.executable, "-S", "-c", "pass"],
            "python -c 'import typer, filelock'": [sys.executable, "-c", "import typer, filelock"],
            "duel tools status": [*duel, *status],
            # Marks the seat present: a write under the duel's lock when the last mark is a second old, else
            # (as in these runs, a few tenths of a second apart) a read without the lock.
            "duel tools status, as a seat": [*duel, *status, *seat],
            "duel tools claim-lock, refused": [*duel, "tools", "claim-lock", *status[2:], *seat],
        }
        for argv in commands.values():  # compile bytecode, warm the page cache
            timed(argv)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(RUNS):
            for name, argv in commands.items():
                times[name].append(timed(argv))
        bare = statistics.median(times["python -c pass"])
        print(f"start-up, whole processes, median of {RUNS} interleaved runs ({' '.join(duel)}):")
        for name, samples in times.items():
            median = statistics.median(samples)
            target = f" (target <= {TARGET_RATIO})" if name.startswith("duel") else ""
            print(f"    {name:<38}{median * 1000:7.1f} ms   {median / bare:5.2f} x bare{target}")
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "rp1_duel", *status, *seat], capture_output=True, text=True
        )
        imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
        found = [name for name in HEAVY if name in imported]
        print(
            f"    -X importtime, status as a seat: {', '.join(found) or 'no'} heavy module imported ({', '.join(HEAVY)})"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
