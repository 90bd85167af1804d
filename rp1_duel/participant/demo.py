"""``duel demo``: two scripted participants duel over a bundled document, then validate.

Real processes and the real service: the same path as two terminals running
``duel join``, with turns played from ``rp1_duel/participant/examples`` instead of a model.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from ..coordination import DuelService
from ..errors import DuelError
from ..printable import printable
from ..record import agreed_ending, validate_file
from ..vocabulary import ACCEPTED_CONSENSUS
from .panel import PanelSeat, exit_code, run_seats

__all__ = ["run_demo"]

EXAMPLES = Path(__file__).parent / "examples"
SOURCE = "build-cache.md"
PLAYERS = (("Ada", "ada"), ("Brook", "brook"))


def run_demo(directory: str) -> int:
    """Run the demo in ``directory``: 0 when the scripted duel reached consensus and validates, 2 when
    ``directory`` cannot be used, else 1."""
    root = Path(directory).resolve()
    debates = root / "debates"
    source = root / SOURCE
    try:
        root.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(EXAMPLES / SOURCE, source)  # fresh every run: an applied revision is not the scripts' text
    except OSError as exc:  # a file in the way, a read-only folder, a full disk
        say(printable(f"duel demo: INVALID_ARGUMENT: cannot use --dir {root}: {exc.strerror or exc}"))
        return 2
    say(f"duel demo: two scripted participants (no model, no API key) debate {source}")
    shared = (
        "--debate-dir",
        str(debates),
        "--peer-wait-seconds",
        "60",
        "--turn-timeout-seconds",
        "120",
        "--seats",
        "2",
        "--max-turns",
        "6",
    )  # the scripts' duel, whatever the configuration says
    seats = [PanelSeat(name, ("--name", name, "--model", f"scripted:{EXAMPLES / script}")) for name, script in PLAYERS]
    try:
        runs = run_seats(
            str(source), shared=shared, seats=seats, service=DuelService(debates)
        )  # seat 1 writes odd turns: Ada opens
    except DuelError as error:
        say(f"duel demo: {error.code}: {error.message}")
        return 1
    if exit_code(runs) != 0 or runs[0].result is None:
        say("duel demo: a participant failed (see above)")
        return 1
    outcome = runs[0].result
    path = Path(outcome["debate_path"])
    report = validate_file(path)
    verdict = "valid" if report.valid else "INVALID: " + "; ".join(p.message for p in report.problems)
    say(f"\noutcome:  {outcome['outcome']}\nartifact: {path}\nduel validate: {verdict}")
    agreed = agreed_ending(path).lines()
    for line in agreed[:-1]:  # the revision and its patch; the apply line ends the next steps
        say(printable(line))
    say(f"read it:  less {path}")
    say(f"review:   duel report {path} --format html -o report.html")
    for line in agreed[-1:]:
        say(printable(f"{line}   (--check first to see that it applies)"))
    return 0 if report.valid and outcome["outcome"] == ACCEPTED_CONSENSUS else 1


def say(text: str) -> None:
    """A line for the person running the demo, on standard error."""
    sys.stderr.write(f"{text}\n")
    sys.stderr.flush()
