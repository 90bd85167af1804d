"""``duel bench run``: every corpus document debated ``runs`` times by the same lineup, K duels at once,
under a money cap and a wall-clock cap, into the run layout (:mod:`.layout`; docs/bench.md).

The runs go breadth first (run 1 of every document, then run 2…), so a bench stopped by a cap still
covers the corpus. A resumed bench skips the runs already done and redoes any other from scratch.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..configuration import Config
from ..coordination import Usage
from ..errors import DuelError, invalid_argument
from ..participant import cost_usd
from .budget import BudgetLedger, seat_share
from .duel_run import Halt, Lineup, run_duel
from .layout import BUDGET, CAPS, ERROR, WALL_CLOCK, RunResult, RunSpec, is_done, write_result
from .single import run_single

__all__ = [
    "BENCH_FILE",
    "EXIT_BUDGET",
    "EXIT_RUN_FAILED",
    "EXIT_WALL_CLOCK",
    "BenchOutcome",
    "BenchPlan",
    "planned_runs",
    "run_bench",
    "spend_lines",
]

BENCH_FILE: Final = "bench.json"
SINGLE: Final = "single"
INTERRUPTED: Final = "interrupted"  # Ctrl-C: not a result's "stopped", since no result is written
# duel bench run's exit codes beyond 0 (done), 2 (wrong flags) and 130 (Ctrl-C): docs/bench.md.
EXIT_RUN_FAILED: Final = 1
EXIT_BUDGET: Final = 4
EXIT_WALL_CLOCK: Final = 5


@dataclass(frozen=True, kw_only=True)
class BenchPlan:
    """What ``duel bench run`` was asked for; ``bench.json`` holds the part a resume must match."""

    corpus: Path
    lineup: Lineup
    runs: int
    concurrency: int
    budget_usd: float
    out: Path
    wall_clock_seconds: float | None = None
    baseline: str | None = None  # None, or "single"

    def to_json(self) -> dict[str, Any]:
        """``bench.json``: the corpus, the seats, the chair, the runs and the baseline."""
        return {
            "corpus": str(self.corpus),
            "seats": list(self.lineup.seats),
            "chair": self.lineup.chair,
            "runs": self.runs,
            "baseline": self.baseline,
        }

    def check(self, env: Mapping[str, str]) -> None:
        """``INVALID_ARGUMENT`` for a plan that cannot run, or whose money cap could not be kept."""
        if not 2 <= len(self.lineup.seats) <= 8:
            raise invalid_argument("--seats names 2 to 8 models, separated by commas", flag="--seats")
        if self.runs < 1 or self.concurrency < 1:
            raise invalid_argument("--runs and --concurrency are at least 1", flag="--runs")
        if not self.budget_usd > 0:
            raise invalid_argument("--budget-usd is a positive amount of dollars", flag="--budget-usd")
        if self.wall_clock_seconds is not None and not self.wall_clock_seconds > 0:
            raise invalid_argument("--wall-clock is a positive number of seconds", flag="--wall-clock")
        if self.baseline not in (None, SINGLE):
            raise invalid_argument(f"--baseline {self.baseline}: the one baseline is `single`", flag="--baseline")
        for model in (*self.lineup.seats, *([self.lineup.chair] if self.lineup.chair else [])):
            if cost_usd(model, Usage(), env) is None:  # unpriced, its spend is unknown: no cap could hold
                raise invalid_argument(
                    f"no price for model {model!r}: add it to a price table named by $DUEL_PRICES", flag="--seats"
                )


@dataclass(kw_only=True)
class BenchOutcome:
    """How a session of the bench ended: its runs' results, the runs done in all, and why it stopped."""

    results: list[RunResult] = field(default_factory=list)  # this session's, in the order they ended
    planned: int = 0
    done_before: int = 0  # skipped: done by an earlier session
    stopped: str | None = None  # BUDGET or WALL_CLOCK

    @property
    def done(self) -> int:
        """The runs done in all, by earlier sessions and this one (a run a cap stopped is not done: it is redone)."""
        return self.done_before + sum(1 for result in self.results if result.stopped not in CAPS)

    @property
    def exit_code(self) -> int:
        """0 when every planned run is done and none failed; else the code that says why (docs/bench.md)."""
        if self.stopped == BUDGET:
            return EXIT_BUDGET
        if self.stopped == WALL_CLOCK:
            return EXIT_WALL_CLOCK
        return EXIT_RUN_FAILED if any(result.stopped == ERROR for result in self.results) else 0


def planned_runs(documents: Sequence[str], plan: BenchPlan) -> list[RunSpec]:
    """Every run of the plan, breadth first: each document's duel k (and baseline k), for k = 1, 2…"""
    conditions = ("duel", *([SINGLE] if plan.baseline == SINGLE else []))
    return [
        RunSpec(document=name, condition=condition, number=number, directory=plan.out / name / f"{condition}-{number}")
        for number in range(1, plan.runs + 1)
        for name in documents
        for condition in conditions
    ]


def start_bench(plan: BenchPlan) -> None:
    """Write ``bench.json``, or check that the one there is this plan's: a resume must not mix two benches."""
    plan.out.mkdir(parents=True, exist_ok=True)
    path = plan.out / BENCH_FILE
    wanted = plan.to_json()
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        found = None
    except (OSError, ValueError) as error:
        raise invalid_argument(f"{path} cannot be read ({error}): use another --out", flag="--out") from None
    if found is not None and found != wanted:
        raise invalid_argument(f"{plan.out} holds another bench's runs ({BENCH_FILE} differs): use another --out")
    path.write_text(json.dumps(wanted, indent=2) + "\n", encoding="utf-8")


def run_bench(
    plan: BenchPlan,
    texts: Mapping[str, str],
    *,
    config: Config,
    env: Mapping[str, str],
    on_progress: Callable[[BenchOutcome, RunResult | None], None] = lambda *_: None,
    clock: Callable[[], float] = time.monotonic,
) -> BenchOutcome:
    """Run every run of ``plan`` not yet done over the documents ``texts`` (name -> text), K at once, and
    write each one's ``result.json`` as it ends; stop at a cap (docs/bench.md). ``on_progress`` is told once the
    runs left are known (with None), then as each run ends."""
    start_bench(plan)
    specs = planned_runs(sorted(texts), plan)
    pending = deque(spec for spec in specs if not is_done(spec.directory))
    outcome = BenchOutcome(planned=len(specs), done_before=len(specs) - len(pending))
    scheduler = _Scheduler(plan, texts, config=config, env=env, clock=clock)
    on_progress(outcome, None)
    with ThreadPoolExecutor(max_workers=plan.concurrency) as pool:
        try:
            while scheduler.running or (pending and not scheduler.halt.event.is_set()):
                scheduler.start(pending, pool)
                if not scheduler.running:
                    break
                for result in scheduler.ended():
                    outcome.results.append(result)
                    on_progress(outcome, result)
        except KeyboardInterrupt:
            scheduler.halt.set(INTERRUPTED)  # every seat gives the floor back; no result is written: a resume redoes
            wait(scheduler.running)
            raise
    outcome.stopped = scheduler.halt.reason
    return outcome


class _Scheduler:
    """The runs under way, the money held for them, and the bench's stop."""

    def __init__(
        self,
        plan: BenchPlan,
        texts: Mapping[str, str],
        *,
        config: Config,
        env: Mapping[str, str],
        clock: Callable[[], float],
    ):
        self.plan, self.texts, self.config, self.env, self.clock = plan, texts, config, env, clock
        self.ledger = BudgetLedger(cap_usd=plan.budget_usd)
        self.halt = Halt()
        self.deadline = None if plan.wall_clock_seconds is None else clock() + plan.wall_clock_seconds
        self.running: dict[Future[RunResult], RunSpec] = {}

    def spenders(self, spec: RunSpec) -> int:
        """How many seats of ``spec`` send requests: one for a baseline."""
        return 1 if spec.condition == SINGLE else self.plan.lineup.spenders

    def start(self, pending: deque[RunSpec], pool: ThreadPoolExecutor) -> None:
        """Start runs until K run, each seat holding its share; with no useful share and nothing running, the
        money cap is reached (a run that ends would free its unspent shares)."""
        while pending and len(self.running) < self.plan.concurrency and not self.halt.event.is_set():
            starting = list(pending)[: self.plan.concurrency - len(self.running)]
            share = seat_share(free_usd=self.ledger.free_usd, seats_starting=sum(map(self.spenders, starting)))
            if not self.ledger.useful(share):
                if not self.running:
                    self.halt.set(BUDGET)
                return
            spec = pending.popleft()
            self.ledger.hold(spec.key, share, self.spenders(spec))
            self.running[pool.submit(self.one_run, spec, share)] = spec

    def ended(self) -> list[RunResult]:
        """The runs that end next (waiting for one, or for the wall clock), each written and settled."""
        timeout = None if self.deadline is None or self.halt.event.is_set() else self.deadline - self.clock()
        finished, _ = wait(
            self.running, timeout=max(0.0, timeout) if timeout is not None else None, return_when=FIRST_COMPLETED
        )
        if self.deadline is not None and self.clock() >= self.deadline:
            self.halt.set(WALL_CLOCK)
        results = []
        for future in finished:
            spec = self.running.pop(future)
            result = future.result()
            write_result(result)
            costliest = max((seat.costliest_draft_usd for seat in result.seats), default=0.0)
            self.ledger.settle(spec.key, result.usd, costliest)
            if result.stopped == BUDGET:  # a seat stopped on its share: the cap is near, nothing more finishes
                self.halt.set(BUDGET)
            results.append(result)
        return results

    def one_run(self, spec: RunSpec, share: float) -> RunResult:
        """One run, on a worker thread; a failure of its folder or store is its result, not the bench's end."""
        text = self.texts[spec.document]
        try:
            if spec.condition == SINGLE:
                seat_1 = self.plan.lineup.seats[0]
                return run_single(spec, text, model=seat_1, share=share, env=self.env, defaults=self.config.model)
            return run_duel(spec, text, lineup=self.plan.lineup, config=self.config, share=share, halt=self.halt)
        except (DuelError, OSError) as error:
            return RunResult(spec=spec, seats=(), seconds=0.0, stopped=ERROR, error=_one_line(error))


def spend_lines(results: Sequence[RunResult]) -> list[str]:
    """Who spent what: one line per seat and model over ``results``, the costliest first, then the total."""
    spent: dict[tuple[str, str], list[float]] = {}
    for result in results:
        for seat in result.seats:
            sums = spent.setdefault((seat.seat, seat.model), [0.0, 0, 0])
            sums[0] += seat.usd or 0.0
            sums[1] += seat.tokens_in
            sums[2] += seat.tokens_out
    ordered = sorted(spent.items(), key=lambda item: (-item[1][0], item[0]))
    lines = [
        f"{seat} ({model}): ${usd:.6f}, {int(tokens_in)} tokens in, {int(tokens_out)} out"
        for (seat, model), (usd, tokens_in, tokens_out) in ordered
    ]
    return [*lines, f"total: ${sum(result.usd for result in results):.6f}"]


def _one_line(error: BaseException) -> str:
    if isinstance(error, DuelError):
        return f"{error.code}: {error.message}"
    return " ".join(str(error).split()) or type(error).__name__
