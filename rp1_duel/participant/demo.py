"""``duel demo``: two scripted participants duel over a bundled document, then validate.

Real processes and the real service: the same path as two terminals running
``duel join``, with turns played from ``rp1_duel/participant/examples`` instead of a model.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ..coordination.service import DuelService
from ..errors import DuelError
from ..record.validate import validate_file
from ..vocabulary import ACCEPTED_CONSENSUS, ACTIVE

EXAMPLES = Path(__file__).parent / "examples"
SOURCE = "build-cache.md"
PLAYERS = (("Ada", "ada"), ("Brook", "brook"))


def run_demo(directory: str) -> int:
    root = Path(directory).resolve()
    debates = root / "debates"
    root.mkdir(parents=True, exist_ok=True)
    source = root / SOURCE
    if not source.exists():
        shutil.copyfile(EXAMPLES / SOURCE, source)
    say(f"duel demo: two scripted participants (no model, no API key) debate {source}")
    processes = []
    for seat, (name, script) in enumerate(PLAYERS, start=1):
        command = [sys.executable, "-m", "rp1_duel", "join", "--target", str(source), "--debate-dir",
                   str(debates), "--name", name, "--model", f"scripted:{EXAMPLES / script}",
                   "--peer-wait-seconds", "60", "--turn-timeout-seconds", "120", "--json",
                   "--seats", "2", "--max-turns", "6"]  # the scripts' duel, whatever the configuration says
        processes.append(subprocess.Popen(command, stdout=subprocess.PIPE, text=True))
        if seat == 1:
            _wait_for_first_seat(debates, str(source))  # seat 1 writes odd turns: Ada opens
    results = [p.communicate()[0] for p in processes]
    if any(p.returncode != 0 for p in processes):
        say("duel demo: a participant failed (see above)")
        return 1
    outcome = json.loads(results[0])
    path = Path(outcome["debate_path"])
    report = validate_file(path)
    verdict = "valid" if report.valid else "INVALID: " + "; ".join(p.message for p in report.problems)
    say(f"\noutcome:  {outcome['outcome']}\nartifact: {path}\nduel validate: {verdict}")
    say(f"read it:  less {path}")
    return 0 if report.valid and outcome["outcome"] == ACCEPTED_CONSENSUS else 1


def _wait_for_first_seat(debates: Path, source: str, limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    service = DuelService(debates)
    while time.monotonic() < deadline:
        try:
            status = service.status(target=source)
            if status.status == ACTIVE and status.participant_count:
                return
        except DuelError:
            pass
        time.sleep(0.02)


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
