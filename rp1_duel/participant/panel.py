"""Every seat of a duel from one command: one ``duel join`` process a seat, started in seat order.

:func:`lineup_seats` turns a configuration's lineup (``[panel.seats.N]``) into each seat's
``duel join`` flags; :func:`run_seats` starts and watches the processes.

``duel panel`` and ``duel demo`` run the same path as people in separate terminals: each
seat is its own process with its own provider, model and key, and the service alone
coordinates them. Seats are taken in join order, so each process is started only once the
one before it holds its seat; a process that exits before taking its seat stops the start
(the seats already taken are kept, as after Ctrl-C: the same command resumes them).
Every process's console lines are passed through as they come, each already prefixed with
its participant's name (or, for its other lines, the seat's label).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, cast

from ..configuration import Config, SeatSpec, config_error
from ..coordination import DuelService
from ..errors import DuelError
from ..record import AgreedEnding, agreed_ending
from ..settings import SETTINGS, STORE_ENV, DuelSettings
from ..vocabulary import ACTIVE, ErrorCode

__all__ = [
    "PanelPlan",
    "PanelSeat",
    "SeatRun",
    "exit_code",
    "join_command",
    "lineup_seats",
    "panel_summary",
    "plan_panel",
    "run_seats",
    "seat_environment",
    "shared_flags",
]

SEAT_TAKEN_WITHIN = 60.0  # seconds for one process to start, preflight its model and join


@dataclass(frozen=True)
class PanelSeat:
    """One seat of a lineup: who it is (for messages) and its own ``duel join`` flags."""

    label: str
    flags: tuple[str, ...]


@dataclass(kw_only=True)
class SeatRun:
    """One seat's process and, once it has ended, its ``--json`` summary."""

    seat: PanelSeat
    process: subprocess.Popen[str]
    result: dict[str, Any] | None = None
    stderr_done: threading.Event = field(default_factory=threading.Event)


# SeatSpec field -> the duel join flag it becomes.
_SEAT_FLAGS = (
    ("name", "--name"),
    ("provider", "--provider"),
    ("model", "--model"),
    ("base_url", "--base-url"),
    ("reasoning", "--reasoning"),
    ("max_output_tokens", "--max-output-tokens"),
    ("persona", "--persona"),
    ("position", "--position"),
)


def lineup_seats(config: Config) -> list[PanelSeat]:
    """The seats of the configuration's lineup, in seat order, then its chair (``[panel.chair]``) if
    it has one; ``INVALID_CONFIG`` unless the seats are numbered 1..N with 2 <= N <= 8 and the
    names given differ."""
    seats = config.panel.seats
    where = next(
        (leaf.file for key, leaf in config.leaves.items() if key.startswith("panel.seats.")), "the configuration"
    )
    high = SETTINGS["seats"].high
    if not seats:
        raise config_error(
            "the configuration",
            key="panel.seats",
            problem="no lineup: give --lineup FILE, or [panel.seats.1], [panel.seats.2]… in duel.toml",
        )
    if sorted(seats) != list(range(1, len(seats) + 1)) or not 2 <= len(seats) <= high:
        numbers = ", ".join(map(str, sorted(seats)))
        raise config_error(
            where,
            key="panel.seats",
            problem=f"seats {numbers}: a lineup numbers its seats 1, 2, … up to {high}, at least two",
        )
    chair = config.panel.chair
    named = [spec.name for spec in (*seats.values(), *([chair] if chair else [])) if spec.name]
    twice = sorted({name for name in named if named.count(name) > 1})
    if twice:
        raise config_error(
            where, key="panel.seats", problem=f"{twice[0]!r} names more than one seat: give each seat its own name"
        )
    found = [_seat(f"seat {number}", seats[number]) for number in sorted(seats)]
    return found + ([_seat("the chair", chair, ("--role", "chair"))] if chair else [])


def _seat(label: str, spec: SeatSpec, role: tuple[str, ...] = ()) -> PanelSeat:
    flags: list[str] = [*role]
    for key, flag in _SEAT_FLAGS:
        value = getattr(spec, key)
        if value:
            flags += [flag, str(value)]
    who = spec.name or spec.persona or spec.model
    return PanelSeat(label + (f" ({who})" if who else ""), tuple(flags))


def shared_flags(
    config: Config, settings: DuelSettings, *, topic: str | None, config_files: Sequence[str]
) -> list[str]:
    """The flags every seat's join takes: the duel's settings in full (the first join fixes them),
    where it lives, and the files a seat must read too (a lineup's custom personas). A store is not
    among them: its URL may hold a password, and command lines are public (``ps``); see :func:`seat_environment`."""
    flags = ["--debate-dir", config.debate_dir]
    flags += ["--topic", topic] if topic else []
    for name in SETTINGS:
        flags += [
            SETTINGS[name].flag,
            str(getattr(settings, name) if name != "max_turns" else settings.schedule.max_turns),
        ]
    flags += ["--chair"] if settings.chair else []
    flags += ["--sealed-openings"] if settings.sealed_openings else []
    flags += ["--on-fabrication", settings.on_fabrication] if settings.on_fabrication != "redact" else []
    for path in config_files:
        flags += ["--config", path]
    return flags


@dataclass(frozen=True)
class PanelPlan:
    """What every seat's join shares: the flags, and the topic they name."""

    shared: list[str]
    topic: str | None


def plan_panel(
    config: Config, seats: Sequence[PanelSeat], *, topic: str | None, config_files: Sequence[str], quiet: bool
) -> PanelPlan:
    """The duel's settings for the lineup's ``seats`` (its chair, if any, debates in none of them), checked,
    as the flags every seat's join shares; ``topic``, else the lineup's."""
    chair = config.panel.chair is not None
    settings = config.settings()._replace(seats=len(seats) - chair, chair=chair)
    settings.check()
    chosen = topic or config.panel.topic
    shared = shared_flags(config, settings, topic=chosen, config_files=config_files) + (["--quiet"] if quiet else [])
    return PanelPlan(shared, chosen)


def join_command(target: str, *, shared: Sequence[str], seat: PanelSeat) -> list[str]:
    """The command line of one seat's ``duel join`` process, run by this Python."""
    return [sys.executable, "-m", "rp1_duel", "join", "--target", target, *shared, *seat.flags, "--json"]


def seat_environment(store: str | None) -> dict[str, str]:
    """The environment of every seat's process: this one's, with the store (if any) as ``$DUEL_STORE``."""
    return {**os.environ, **({STORE_ENV: store} if store else {})}


def run_seats(
    target: str,
    *,
    shared: Sequence[str],
    seats: Sequence[PanelSeat],
    service: DuelService,
    store: str | None = None,
    topic: str | None = None,
    echo: Callable[[str], None] | None = None,
    seat_taken_within: float = SEAT_TAKEN_WITHIN,
    stop: threading.Event | None = None,
) -> list[SeatRun]:
    """Start a ``duel join`` for each seat, in seat order, and wait for them all to end.

    Raises ``DuelError`` when a process ends, or takes no seat in time, before the next may
    start; the processes already started are then interrupted. Ctrl-C interrupts every
    process the same way (each gives the floor back and keeps its seat) and is re-raised.
    ``stop``, once set (by another thread: ``duel bench run``'s caps), does the same without
    raising: no further seat starts, and the runs are returned once every process has ended.
    """
    say = echo or _to_stderr
    lock = threading.Lock()
    runs: list[SeatRun] = []
    stopped = stop or threading.Event()
    try:
        for index, seat in enumerate(seats, start=1):
            if stopped.is_set():
                break
            # A process of its own session: Ctrl-C at the terminal reaches this launcher only,
            # which passes one SIGINT to each seat (a second would cut a seat's own clean-up short).
            process = subprocess.Popen(
                join_command(target, shared=shared, seat=seat),
                env=seat_environment(store),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=True,
            )
            run = SeatRun(seat=seat, process=process)
            runs.append(run)
            stderr = cast("IO[str]", process.stderr)  # stderr=PIPE: never None
            threading.Thread(
                target=_pass_through, args=(stderr, seat.label, say, lock, run.stderr_done), daemon=True
            ).start()
            _wait_for_seat(
                run=run,
                count=index,
                target=target,
                topic=topic,
                service=service,
                within=seat_taken_within,
                stop=stopped,
            )
        _watch_for_a_failed_seat(runs, say, lambda: _duel_open(service, target, topic), stopped)
        for run in runs:
            _collect(run)
    except BaseException:
        _interrupt(runs)
        for run in runs:
            _collect(run)
        raise
    return runs


def _wait_for_seat(
    run: SeatRun,
    *,
    count: int,
    target: str,
    topic: str | None,
    service: DuelService,
    within: float,
    stop: threading.Event,
) -> None:
    """Until ``count`` seats are taken (or ``stop`` is set); the next seat starts only then, so seats follow the lineup."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and not stop.is_set():
        if run.process.poll() is not None:
            run.stderr_done.wait(2)
            raise DuelError(
                ErrorCode.PANEL_SEAT_FAILED, f"{run.seat.label} ended before taking its seat (its error is above)"
            )
        try:
            status = service.status(target=target, topic=topic)
            # An earlier duel on this document and topic, closed, is not this run's: its seats count for nothing.
            if status.duel.status == ACTIVE and status.participant_count >= count:
                return
        except DuelError:
            pass  # the first join has not created the duel yet
        time.sleep(0.05)
    if not stop.is_set():
        raise DuelError(ErrorCode.PANEL_SEAT_FAILED, f"{run.seat.label} took no seat within {within:.0f} s")


def _watch_for_a_failed_seat(
    runs: Sequence[SeatRun], say: Callable[[str], None], duel_open: Callable[[], bool], stop: threading.Event
) -> None:
    """Until every seat ends: one that fails while the duel is open (an error, a lost seat) stops the
    others, each giving the floor back and keeping its seat, rather than leaving them to wait out its turns;
    so does ``stop``, once set."""
    while any(run.process.poll() is None for run in runs):
        if stop.is_set():
            _interrupt(runs)
            return
        failed = next((run for run in runs if run.process.poll() not in (None, 0)), None)
        if failed is not None and duel_open():
            say(f"duel panel: {failed.seat.label} ended with exit {failed.process.returncode}: stopping every seat")
            _interrupt(runs)
            return
        time.sleep(0.1)


def _duel_open(service: DuelService, target: str, topic: str | None) -> bool:
    try:
        return service.status(target=target, topic=topic).duel.status == ACTIVE
    except DuelError:
        return True  # unreadable for a moment: a failed seat still stops the panel


def _collect(run: SeatRun) -> None:
    # Standard output only: communicate() would read standard error too, stealing lines from
    # the thread that passes them through.
    out = cast("IO[str]", run.process.stdout).read()  # stdout=PIPE: never None
    run.process.wait()
    run.stderr_done.wait(5)
    lines = [line for line in out.splitlines() if line.strip()]
    try:
        parsed = json.loads(lines[-1]) if lines else None
    except ValueError:
        parsed = None
    run.result = parsed if isinstance(parsed, dict) else None


def _interrupt(runs: Sequence[SeatRun]) -> None:
    for run in runs:
        if run.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):  # it ended just now
                run.process.send_signal(signal.SIGINT)


def _pass_through(
    stream: IO[str], label: str, say: Callable[[str], None], lock: threading.Lock, done: threading.Event
) -> None:
    """A seat's lines as they come; those its participant does not prefix with its name (an
    error, the last `duel: OUTCOME` line) get the seat's label, so each line says whose it is."""
    try:
        for line in stream:
            text = line.rstrip("\n")
            with lock:
                say(text if text.startswith("[") else f"[{label}] {text}")
    finally:
        done.set()


def _to_stderr(line: str) -> None:
    sys.stderr.write(f"{line}\n")
    sys.stderr.flush()


def exit_code(runs: Sequence[SeatRun]) -> int:
    """0 when every seat's process ended its duel (exit 0), else 1."""
    return 0 if all(run.process.returncode == 0 for run in runs) else 1


def panel_summary(runs: Sequence[SeatRun]) -> dict[str, Any]:
    """``duel panel --json``: the outcome and the artifact (from the first seat whose summary names
    them; None when none does), the agreed ``revision`` and its ``patch`` (None when none was agreed),
    and every seat's own ``duel join --json`` summary."""
    results = [run.result for run in runs]
    done = next((result for result in results if result and result.get("debate_path")), None)
    path = done and done["debate_path"]
    agreed = (agreed_ending(path) if path else AgreedEnding("")).fields()
    return {"outcome": done and done.get("outcome"), "debate_path": path, **agreed, "seats": results}
