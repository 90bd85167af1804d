"""One duel of a bench: the document copied into its run folder, every seat a ``duel join`` process with
sealed openings (``duel panel``'s path, :func:`~rp1_duel.participant.run_seats`), then its ``result.json``."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..configuration import Config
from ..coordination import STATE_DIR, DuelService, Seat
from ..errors import DuelError
from ..participant import PanelSeat, SeatRun, exit_code, panel_summary, run_seats, shared_flags
from ..record import apply_agreed
from ..schedule import CHAIR_SEAT
from ..vocabulary import ACCEPTED_CONSENSUS, ErrorCode
from .layout import BUDGET, ERROR, RunResult, RunSpec
from .spend import duel_spend

__all__ = ["DOCUMENT", "REVISED", "Halt", "Lineup", "fresh_folder", "run_duel"]

DOCUMENT = "document.md"
REVISED = "revised.md"
SEATS_LOG = "seats.log"  # the seats' console lines, kept out of the bench's own output


@dataclass
class Halt:
    """The bench's stop, shared by every running run: set once, with the first cap that fired."""

    event: threading.Event = field(default_factory=threading.Event)
    reason: str | None = None  # layout.BUDGET or layout.WALL_CLOCK
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def set(self, reason: str) -> None:
        """Stop every run, for ``reason``; a later reason leaves the first in place."""
        with self._lock:
            self.reason = self.reason or reason
        self.event.set()


@dataclass(frozen=True)
class Lineup:
    """Who takes part in each duel of a bench: the seats' models in seat order, and a chair's, if any."""

    seats: tuple[str, ...]
    chair: str | None = None

    @property
    def spenders(self) -> int:
        """How many processes make requests in one duel: every seat and the chair."""
        return len(self.seats) + (self.chair is not None)

    def models(self) -> dict[int, tuple[str, str]]:
        """Each seat number's label and model, the chair's under its seat."""
        found = {number: (f"seat {number}", model) for number, model in enumerate(self.seats, start=1)}
        return found | ({CHAIR_SEAT: ("the chair", self.chair)} if self.chair else {})

    def panel_seats(self, share: float) -> list[PanelSeat]:
        """Every seat's ``duel join`` flags: a neutral name (the model is not the debater's identity), its model,
        and ``--budget-usd`` at its share of the bench's money."""
        budget = ("--budget-usd", f"{share:.6f}")
        seats = [
            PanelSeat(f"seat {number}", ("--name", f"Seat {number}", "--model", model, *budget))
            for number, model in enumerate(self.seats, start=1)
        ]
        chair = ("--role", "chair", "--name", "Chair", "--model", self.chair, *budget) if self.chair else None
        return seats + ([PanelSeat("the chair", chair)] if chair else [])


def fresh_folder(folder: Path) -> None:
    """``folder``, empty: a run left half done by an earlier session is redone from scratch."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)


def abandon_left_over(service: DuelService, debates: Path) -> None:
    """Close ``INVALIDATED`` the duel an earlier session left open in the store, as one of its seats (their
    tokens are kept in the run's debate dir, protocol section 3): a half-done run is redone from scratch."""
    for kept in sorted((debates / STATE_DIR / "participants").glob("*.json")):
        try:
            seat = json.loads(kept.read_text(encoding="utf-8"))
            handle = Seat(seat["duel_id"], seat["participant_id"], seat["participant_token"], seat["seat"])
            service.abandon(handle.duel_id, reason="duel bench run redoes this run from scratch", seat=handle)
        except (OSError, ValueError, KeyError, TypeError, DuelError):
            continue  # closed already, or not a seat's: nothing to abandon
        return


def run_duel(spec: RunSpec, text: str, *, lineup: Lineup, config: Config, share: float, halt: Halt) -> RunResult:
    """Run one duel of ``text`` in ``spec``'s folder, each seat capped at ``share`` dollars; ``halt`` interrupts
    its seats as Ctrl-C does (each gives the floor back). Never raises for what a seat does: that is the result."""
    started = time.monotonic()
    debates = spec.directory / "debates"
    if config.store:  # the database outlives the folder: a duel left open there would refuse the redo's seats
        abandon_left_over(DuelService(debates, store=config.store), debates)
    fresh_folder(spec.directory)
    document = spec.directory / DOCUMENT
    document.write_text(text, encoding="utf-8")
    config = config._replace(debate_dir=str(debates))
    settings = config.settings()._replace(seats=len(lineup.seats), chair=lineup.chair is not None, sealed_openings=True)
    settings.check()
    shared = shared_flags(config, settings, topic=None, config_files=())
    service = DuelService(config.debate_dir, store=config.store)
    runs: list[SeatRun] = []
    failure: str | None = None
    with (spec.directory / SEATS_LOG).open("a", encoding="utf-8") as log:
        try:
            runs = run_seats(
                str(document),
                shared=shared,
                seats=lineup.panel_seats(share),
                service=service,
                store=config.store,
                echo=lambda line: print(line, file=log, flush=True),
                stop=halt.event,
            )
        except DuelError as error:
            failure = f"{error.code}: {error.message}"
    shown = panel_summary(runs) if runs else {"outcome": None, "debate_path": None}
    revised, failure = _revised(spec, shown, failure)
    stopped, failure = _stopped(runs, halt, failure, outcome=shown["outcome"])
    return RunResult(
        spec=spec,
        outcome=shown["outcome"],
        record=os.path.relpath(shown["debate_path"], spec.directory) if shown["debate_path"] else None,
        revised=revised,
        seats=tuple(duel_spend(service, target=str(document), models=lineup.models())),
        seconds=time.monotonic() - started,
        stopped=stopped,
        error=failure if stopped == ERROR else None,
    )


def _revised(spec: RunSpec, shown: dict[str, Any], failure: str | None) -> tuple[str | None, str | None]:
    """``revised.md`` when the duel agreed a revision that changes the document, written by ``duel apply``'s code."""
    if shown["outcome"] != ACCEPTED_CONSENSUS or not shown["debate_path"]:
        return None, failure
    try:
        applied = apply_agreed(shown["debate_path"], to=spec.directory / REVISED)
    except DuelError as error:
        return None, failure or f"{error.code}: {error.message}"
    return (REVISED if applied.written else None), failure


def _stopped(
    runs: list[SeatRun], halt: Halt, failure: str | None, *, outcome: str | None
) -> tuple[str | None, str | None]:
    """Why the duel was cut short, if it was: a seat's own budget, the bench's caps, or a seat that failed. A duel
    that reached an outcome was not cut short, whatever its seats' exits: `duel join` exits 1 on INVALIDATED."""
    if any(_error_code(run) == ErrorCode.BUDGET_EXCEEDED for run in runs):
        return BUDGET, None
    if halt.event.is_set() and (not runs or exit_code(runs) != 0):
        return halt.reason, None
    if outcome is not None and failure is None:
        return None, None
    if failure is not None or exit_code(runs) != 0:
        failed = next((run for run in runs if run.process.returncode != 0), None)
        return ERROR, failure or _error_line(failed)
    return None, None


def _error_code(run: SeatRun) -> str | None:
    error = (run.result or {}).get("error")
    return error.get("code") if isinstance(error, dict) else None


def _error_line(run: SeatRun | None) -> str:
    if run is None:
        return "a seat failed"
    error = (run.result or {}).get("error")
    if isinstance(error, dict):
        return f"{run.seat.label}: {error.get('code')}: {error.get('message')}"
    return f"{run.seat.label} ended with exit {run.process.returncode} (see {SEATS_LOG})"
