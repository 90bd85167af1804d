"""What each `duel tools` op costs a call, against the bare interpreter (prints, never asserts).

Run: python bench/bench_startup.py

Agents run one `duel tools` process an action: its whole-process time is what they pay.
Each op runs as a whole process, interleaved with the others, and the median of RUNS
runs is printed with its ratio to `python -c pass`, beside the lean peer's and the target.

Like with like, on a NON-editable install: the checkout is built into a wheel and
installed in a venv of its own, whose `duel` script and `python -c pass` are timed. (An
editable install's finder, loaded by a .pth file, slows the bare interpreter too and so
flatters every ratio.) Bytecode is compiled before timing (a warm-up run), as an installed
package's is. Last, `-X importtime` says whether a model SDK or another heavy module was imported.

The lean peer (issue 40): rp1's own lock service, a minimal entry with only the lock commands,
measured as ratios duel / lean per op. Its own ratio to `python -c pass` is estimated as duel's
ratio before issue 40's cuts divided by that ratio; duel must cost less: the estimate is the
target. duel as it was (commit BASELINE, from `git archive`) is installed beside the checkout and
timed in the same rounds, so both meet the same load: on a busy machine every ratio grows with the
load. Outside a git checkout, the ratios BEFORE recorded once stand in for it.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

RUNS = 21
REPO = Path(__file__).resolve().parents[1]
SOURCE = "# Lease design\n\n## Lease semantics\nLeases expire unless refreshed.\n"
HEAVY = ("filelock", "anthropic", "openai", "typer", "click", "pydantic", "rich", "mistune", "frontmatter", "yaml")
ENV = {name: value for name, value in os.environ.items() if name not in {"PYTHONDONTWRITEBYTECODE", "DUEL_DIR"}}
# issue 40: duel / lean, 40 interleaved runs each (a refused claim and status were already leaner)
DUEL_OVER_LEAN = {
    "join": 2.21,
    "claim-lock": 1.24,  # claim + release, as a pair
    "refresh-lock": 1.33,
    "claim-lock, refused": 0.96,
    "status": 0.86,
}
BASELINE = "da517a8"  # duel before issue 40's cuts
# duel's ratios to `python -c pass` at BASELINE: the median of 3 runs of this script's first version, which timed
# the checkout alone, on a loaded 2-core machine (docs/protocol.md section 4, "Speed")
BEFORE = {"join": 12.74, "claim-lock": 6.06, "refresh-lock": 6.54, "claim-lock, refused": 5.05, "status": 4.71}


def installed(root: Path, tree: Path) -> Path:
    """A venv under ``root`` with the package of ``tree`` installed from a wheel (no editable finder); its bin."""
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(root / "wheel"), str(tree)], check=True)
    venv.create(root / "venv", with_pip=False)
    bin_dir = root / "venv" / "bin"
    wheel = next((root / "wheel").glob("*.whl"))
    subprocess.run([*pip, "--python", str(bin_dir / "python"), "install", str(wheel)], check=True)
    return bin_dir


def checkout_tree(root: Path) -> Path:
    """The checkout's package sources, copied (no build files of an earlier build, no bytecode)."""
    tree = root / "src"
    shutil.copytree(REPO / "rp1_duel", tree / "rp1_duel", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (REPO / name).exists():
            shutil.copy(REPO / name, tree / name)
    return tree


def baseline_tree(root: Path) -> Path | None:
    """BASELINE's sources from git, or None outside a checkout that has it."""
    tree = root / "src"
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", BASELINE], capture_output=True, check=False)
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def timed(argv: list[str]) -> tuple[tuple[float, float], str]:
    """The wall time and the CPU time (user and system) of one whole process, and its stdout."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()  # a few hundred bytes: no pipe fills up
    _, status, usage = os.wait4(proc.pid, 0)  # reaped here, with its CPU time
    elapsed = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stdout.close()
    proc.stderr.close()
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:4]} failed: {out.decode()} {err.decode()}")
    return (elapsed, usage.ru_utime + usage.ru_stime), out.decode()


def tools(duel: Path, op: str, *args: str) -> list[str]:
    """The argv of ``duel tools OP``."""
    return [str(duel), "tools", op, *args]


def one_round(
    duel: Path, debate: list[str], seats: dict[str, list[str]], number: int
) -> dict[str, tuple[float, float]]:
    """Every op once, in the order a seat runs them: each one's wall and CPU seconds."""
    duel_id = ["--duel-id", seats["duel_id"][0]]
    alice, bob = [*duel_id, *seats["alice"], *debate], [*duel_id, *seats["bob"], *debate]
    took: dict[str, tuple[float, float]] = {}
    took["status"], _ = timed(tools(duel, "status", *duel_id, *debate))
    took["status, as a seat"], _ = timed(tools(duel, "status", *alice))
    took["claim-lock"], out = timed(tools(duel, "claim-lock", *alice))
    lease = ["--lease-token", json.loads(out)["data"]["lease_token"]]
    took["refresh-lock"], _ = timed(tools(duel, "refresh-lock", *alice, *lease))
    took["claim-lock, refused"], _ = timed(tools(duel, "claim-lock", *bob))
    took["release-lock"], _ = timed(tools(duel, "release-lock", *alice, *lease))
    join = ["--target", seats["target"][0], "--topic", f"Bench {number}", "--participant-name", "Carol"]
    took["join"], _ = timed(tools(duel, "join", *join, *debate))
    return took


def join_seats(duel: Path, root: Path, debate: list[str]) -> dict[str, list[str]]:
    """Alice and Bob join one duel; their ids and tokens as flags."""
    source = root / "design.md"
    source.write_text(SOURCE, encoding="utf-8")
    seats: dict[str, list[str]] = {"target": [str(source)]}
    for name in ("Alice", "Bob"):
        _, out = timed(tools(duel, "join", "--target", str(source), "--participant-name", name, *debate))
        data = json.loads(out)["data"]
        seats["duel_id"] = [data["duel_id"]]
        seats[name.lower()] = [
            "--participant-id",
            data["participant_id"],
            f"--participant-token={data['participant_token']}",
        ]
    return seats


def ratios(times: dict[str, list[float]], bare: float) -> dict[str, float]:
    """Each op's median over the bare interpreter's (a claim's: the claim and release pair's, a call)."""
    median = {name: statistics.median(samples) for name, samples in times.items()}
    ratio = {name: value / bare for name, value in median.items()}
    ratio["claim-lock"] = (median["claim-lock"] + median["release-lock"]) / (2 * bare)
    return ratio


def print_figures(wall: dict[str, dict[str, list[float]]], cpu: dict[str, dict[str, list[float]]]) -> None:
    """Each op's median and ratio, wall and CPU, against duel before and the lean peer, and the verdict (on the
    wall time, as the issue measured); the CPU time is the steadier on a busy machine."""
    bare = {kind: statistics.median(times["bare"]["python -c pass"]) for kind, times in (("wall", wall), ("cpu", cpu))}
    now, now_cpu = ratios(wall["after"], bare["wall"]), ratios(cpu["after"], bare["cpu"])
    before = ratios(wall["before"], bare["wall"]) if wall["before"] else BEFORE
    before_cpu = ratios(cpu["before"], bare["cpu"]) if cpu["before"] else {}
    source = f"{BASELINE}, timed in the same rounds" if wall["before"] else f"{BASELINE}, as recorded (no git)"
    print(f"    python -c pass: {bare['wall'] * 1000:.1f} ms, {bare['cpu'] * 1000:.1f} ms of CPU; before = {source}")
    print(f"{'':<4}{'op':<28}{'median':>9}{'x bare':>8}{'before':>8}{'cpu x':>7}{'before':>8}{'lean':>7}{'target':>9}")
    for name, samples in wall["after"].items():
        label = "claim + release (a call)" if name == "claim-lock" else name
        row = f"    {label:<28}{statistics.median(samples) * 1000:6.1f} ms{now[name]:8.2f}"
        row += f"{before.get(name, float('nan')):8.2f}{now_cpu[name]:7.2f}{before_cpu.get(name, float('nan')):8.2f}"
        if name in DUEL_OVER_LEAN:
            lean = before[name] / DUEL_OVER_LEAN[name]
            verdict = "ok" if now[name] < lean else "OVER"
            row += f"{lean:7.2f}{'< ' + format(lean, '.2f'):>9}  {verdict}"
        print(row)


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="duel-bench-"))
    try:
        after = installed(root / "after", checkout_tree(root / "after"))
        old = baseline_tree(root / "before")
        before = installed(root / "before", old) if old else None
        os.chdir(root)  # no project configuration of the checkout applies
        python = str(after / "python")
        bare_argv = {"python -c pass": [python, "-c", "pass"], "python -S -c pass": [python, "-S", "-c", "pass"]}
        versions = {"after": after, **({"before": before} if before else {})}
        debates = {kind: ["--debate-dir", str(root / kind / "debates")] for kind in versions}
        seats = {kind: join_seats(bin_dir / "duel", root / kind, debates[kind]) for kind, bin_dir in versions.items()}
        for argv in bare_argv.values():
            timed(argv)
        for kind, bin_dir in versions.items():  # compile bytecode, warm the page cache
            one_round(bin_dir / "duel", debates[kind], seats[kind], 0)
        wall: dict[str, dict[str, list[float]]] = {"bare": {}, "after": {}, "before": {}}
        cpu: dict[str, dict[str, list[float]]] = {"bare": {}, "after": {}, "before": {}}
        for number in range(1, RUNS + 1):
            took = {"bare": {name: timed(argv)[0] for name, argv in bare_argv.items()}}
            order = list(versions) if number % 2 else list(reversed(versions))  # neither always goes first
            for kind in order:
                took[kind] = one_round(versions[kind] / "duel", debates[kind], seats[kind], number)
            for kind, figures in took.items():
                for name, (seconds, used) in figures.items():
                    wall[kind].setdefault(name, []).append(seconds)
                    cpu[kind].setdefault(name, []).append(used)
        print(f"each op a whole process, median of {RUNS} interleaved runs, each version installed from a wheel:")
        print_figures(wall, cpu)
        duel_id = ["--duel-id", seats["after"]["duel_id"][0]]
        proc = subprocess.run(
            [python, "-X", "importtime", "-m", "rp1_duel", "tools", "status", *duel_id, *seats["after"]["alice"]]
            + debates["after"],
            capture_output=True,
            text=True,
            env=ENV,
        )
        imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
        found = [name for name in HEAVY if name in imported]
        print(f"    -X importtime, status as a seat: {', '.join(found) or 'no'} heavy module imported")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
