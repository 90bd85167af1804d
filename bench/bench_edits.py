"""What one turn of 50 proposed edits over a 16 MiB source costs (prints, never asserts).

Run: python bench/bench_edits.py

The source is as large as a source may be (MAX_SOURCE_BYTES, less a little): the sample design
of tests/helpers.py, then headings over lines of prose that each end "(line K).". One turn
proposes 50 edits spread over it, from its start to its end: 30 replaces, 10 deletes of a whole
line, 10 inserts after a heading (docs/protocol.md section 7, "Proposed edits"). Each figure is
a whole process of its own, so its peak RSS is its own; the same turn without the edits is
measured beside it, for scale:
(a) the live append through the service: the seconds `append` holds the duel's lock, and the
    process's peak RSS (the join reads the source first; its RSS is printed too);
(b) `duel validate` of the artifact (a) wrote, as a whole process: seconds and peak RSS.
Target (issue 42, item 5): under 5 s and under 512 MiB for each, with the edits.
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # run from a checkout, uninstalled

from rp1_duel.coordination import DuelService  # noqa: E402
from rp1_duel.files import MAX_SOURCE_BYTES  # noqa: E402

from helpers import SOURCE, make_turn, replace_edit, with_edits  # noqa: E402

ALICE, BOB = ("Alice", "claude-code", "claude-x"), ("Bob", "codex", "gpt-x")
SIZE = MAX_SOURCE_BYTES - 64 * 1024  # room for the final lines
SECTION = 40  # prose lines under each heading
REPLACES, DELETES, INSERTS = 30, 10, 10
TARGET_SECONDS, TARGET_MIB = 5.0, 512


def make_source(rng: random.Random) -> tuple[str, list[str], list[str]]:
    """The source's text, its prose lines and its headings (beyond the sample design's)."""
    vocabulary = [f"{rng.choice('bcdfgklmnprstvz')}{rng.choice('aeiou')}{k:x}" for k in range(4000)]
    parts, size = [SOURCE], len(SOURCE)
    prose: list[str] = []
    headings: list[str] = []
    while size < SIZE:
        headings.append(f"Appendix rule {len(headings) + 1}")
        parts.append(f"\n## {headings[-1]}\n\n")
        for _ in range(SECTION):
            prose.append(f"{' '.join(rng.choices(vocabulary, k=12))} (line {len(prose) + 1}).")
            parts.append(prose[-1] + "\n")
        size += sum(len(part) for part in parts[-SECTION - 1 :])
    return "".join(parts), prose, headings


def edit_blocks(rng: random.Random, prose: list[str], headings: list[str]) -> list[str]:
    """50 edit blocks, spread evenly from the source's start to its end."""
    lines = [prose[k * (len(prose) - 1) // (REPLACES + DELETES - 1)] for k in range(REPLACES + DELETES)]
    blocks = []
    for index, line in enumerate(lines):
        if index % ((REPLACES + DELETES) // DELETES) == 3:  # every fourth: 10 deletes, 30 replaces
            blocks.append(f"Edit d{index}: delete\n```find\n{line}\n```\n")
        else:
            find = " ".join(line.split()[-5:])  # its last words and its unique "(line K)."
            blocks.append(replace_edit(f"r{index}", find, f"Replaced text number {index} ({rng.random():.6f})."))
    for index in range(INSERTS):
        heading = headings[index * (len(headings) - 1) // (INSERTS - 1)]
        blocks.append(f'Edit i{index}: insert after heading "{heading}"\n```insert\nInserted note {index}.\n```\n')
    return blocks


def peak_mib() -> float:
    """The peak RSS of this process (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)


def append_in_this_process(folder: Path, turn: str) -> None:
    """Join two seats on ``folder``'s source and append ``turn``; print a JSON line of figures."""
    service = DuelService(folder / "debates")
    alice, _ = (
        service.join(target=str(folder / "design.md"), participant_name=name, harness=harness, model_id=model)
        for name, harness, model in (ALICE, BOB)
    )
    joined = peak_mib()
    lease = service.claim_lock(alice.seat).lease
    started = time.perf_counter()
    path = service.append(alice.seat, lease, turn, release=True).debate_path
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "peak": peak_mib(), "joined": joined, "path": path}))


def measured_append(folder: Path, turn: str) -> dict[str, object]:
    """(a) in a process of its own."""
    (folder / "turn.md").write_text(turn, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, __file__, "--append", str(folder)], capture_output=True, text=True, check=True
    )
    figures: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return figures


def measured_validate(path: str) -> tuple[float, float, str]:
    """(b): `duel validate` as a whole process; its seconds, peak RSS in MiB, and its last line."""
    duel = Path(sys.executable).with_name("duel")
    command = [str(duel)] if duel.exists() else [sys.executable, "-m", "rp1_duel"]
    started = time.perf_counter()
    process = subprocess.Popen([*command, "validate", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert process.stdout is not None
    output = process.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    peak = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    last = (output.strip().splitlines() or ["(no output)"])[-1]
    return seconds, peak, f"exit {process.returncode}: {last[:100]}"


def verdict(seconds: float, mib: float) -> str:
    return "ok" if seconds < TARGET_SECONDS and mib < TARGET_MIB else "OVER TARGET"


def main() -> None:
    rng = random.Random(42)
    text, prose, headings = make_source(rng)
    blocks = edit_blocks(rng, prose, headings)
    plain = make_turn(1, *ALICE)
    with_blocks = with_edits(plain, *blocks)
    print(
        f"source: {len(text.encode()) / 1024 / 1024:.1f} MiB, {text.count(chr(10))} lines, "
        f"{len(headings) + 3} headings; the turn: {len(blocks)} edits, {len(with_blocks.encode()) / 1024:.1f} KiB"
    )
    with tempfile.TemporaryDirectory() as root:
        for label, turn in (("without edits", plain), ("with 50 edits", with_blocks)):
            folder = Path(root) / label.replace(" ", "-")
            folder.mkdir()
            (folder / "design.md").write_text(text, encoding="utf-8")
            appended = measured_append(folder, turn)
            seconds, peak = float(appended["seconds"]), float(appended["peak"])  # type: ignore[arg-type]
            print(
                f"(a) live append, {label}: {seconds:.2f} s holding the lock, peak RSS {peak:.0f} MiB "
                f"({float(appended['joined']):.0f} MiB after the joins)"  # type: ignore[arg-type]
                + (f" ({verdict(seconds, peak)})" if turn is with_blocks else "")
            )
            seconds, peak, said = measured_validate(str(appended["path"]))
            print(
                f"(b) duel validate, {label}: {seconds:.2f} s, peak RSS {peak:.0f} MiB ({said})"
                + (f" ({verdict(seconds, peak)})" if turn is with_blocks else "")
            )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--append"]:
        append_in_this_process(Path(sys.argv[2]), (Path(sys.argv[2]) / "turn.md").read_text(encoding="utf-8"))
    else:
        main()
