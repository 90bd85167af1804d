"""``duel bench``: measure what a duel adds over its openings, on a corpus of documents with known defects.

``duel bench run`` runs the duels and ``duel bench score`` scores them (:mod:`rp1_duel.benchmark`); each command
parses, calls the library and prints.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import EXIT_INTERRUPTED, DuelError
from ..printable import printable
from ..vocabulary import ErrorCode
from .shared import PlainHelpCommand, PlainHelpGroup, StoreOption, fail, load, usage_error

if TYPE_CHECKING:
    from ..benchmark import BenchOutcome, BenchPlan, RunResult

__all__ = ["bench_app"]

bench_app = typer.Typer(
    cls=PlainHelpGroup,
    help="Measure what a duel adds over its openings, on a corpus of documents with known defects.",
    no_args_is_help=True,
)

_Corpus = Annotated[str | None, typer.Option("--corpus", help="The corpus folder (default: the shipped corpus).")]
_Seats = Annotated[str, typer.Option("--seats", help="The seats' models, in seat order: MODEL,MODEL[,…].")]
_Chair = Annotated[str | None, typer.Option("--chair", help="A chair's model (default: no chair).")]
_Runs = Annotated[int, typer.Option("--runs", help="Duels per document.")]
_Concurrency = Annotated[int, typer.Option("--concurrency", help="Duels at once.")]
_Budget = Annotated[
    float, typer.Option("--budget-usd", help="The most this command spends, in dollars; no request passes it.")
]
_WallClock = Annotated[
    float | None,
    typer.Option("--wall-clock", help="Seconds after which no duel starts and running ones stop (default: none)."),
]
_Baseline = Annotated[
    str | None, typer.Option("--baseline", help="`single`: also one turn with edits by the first seat's model.")
]
_Out = Annotated[str, typer.Option("--out", help="Where the runs go; run the same command again to resume.")]


@bench_app.command("run", cls=PlainHelpCommand)
def bench_run_command(
    seats: _Seats,
    budget_usd: _Budget,
    out: _Out,
    corpus: _Corpus = None,
    chair: _Chair = None,
    runs: _Runs = 1,
    concurrency: _Concurrency = 1,
    wall_clock: _WallClock = None,
    store: StoreOption = None,
    baseline: _Baseline = None,
) -> None:
    """Debate every corpus document with sealed openings, one `duel join` process a seat, under a money cap.

    Done runs are skipped, half-done ones redone. Exit 0 when every run is done, 1 when one failed, 4 when the money cap stopped the bench, 5 the wall clock, 2 on wrong flags.
    """
    from ..benchmark import BenchPlan, Lineup, corpus_directory, load_corpus, run_bench
    from ..configuration import Flags

    try:
        config = load(Flags(store=store, sealed_openings=True))
        plan = BenchPlan(
            corpus=Path(corpus).resolve() if corpus else corpus_directory(),
            lineup=Lineup(tuple(model.strip() for model in seats.split(",") if model.strip()), chair),
            runs=runs,
            concurrency=concurrency,
            budget_usd=budget_usd,
            out=Path(out).resolve(),
            wall_clock_seconds=wall_clock,
            baseline=baseline,
        )
        plan.check(os.environ)
        texts = {document.name: document.text for document in load_corpus(plan.corpus)}
        progress = _Progress(plan)
        outcome = run_bench(plan, texts, config=config, env=os.environ, on_progress=progress.shown)
    except DuelError as error:
        fail(error)
    except KeyboardInterrupt:
        typer.echo("duel bench: interrupted: the runs under way are redone by the same command", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    progress.close(outcome)
    raise typer.Exit(outcome.exit_code)


class _Progress:
    """A bar redrawn on standard error when it is a terminal; a line a finished run otherwise."""

    def __init__(self, plan: BenchPlan):
        self.plan = plan
        self.started = time.monotonic()
        self.live = sys.stderr.isatty()

    def shown(self, outcome: BenchOutcome, result: RunResult | None) -> None:
        """Say that ``result``'s run ended; with None, draw the bar as the bench starts."""
        from ..benchmark import progress_bar, result_line

        done = outcome.done
        if not self.live:
            if result is not None:
                line = result_line(result, done=done, planned=outcome.planned)
                typer.echo(printable(f"duel bench: {line}"), err=True)
            return
        spent = sum(ended.usd for ended in outcome.results)
        bar = progress_bar(
            done=done,
            planned=outcome.planned,
            spent_usd=spent,
            cap_usd=self.plan.budget_usd,
            seconds=time.monotonic() - self.started,
        )
        sys.stderr.write(f"\r{bar}")
        sys.stderr.flush()

    def close(self, outcome: BenchOutcome) -> None:
        """End the bar; say why the bench stopped, if it did, and who spent what."""
        from ..benchmark import spend_lines

        if self.live:
            sys.stderr.write("\n")
        if outcome.stopped:
            typer.echo(
                f"duel bench: stopped by the {outcome.stopped} cap: {outcome.done} of {outcome.planned} runs done",
                err=True,
            )
        for line in spend_lines(outcome.results):
            typer.echo(printable(f"duel bench: {line}"), err=True)
        typer.echo(
            printable(f"duel bench: runs in {self.plan.out}; score them: duel bench score {self.plan.out}"), err=True
        )


@bench_app.command("score", cls=PlainHelpCommand)
def score_command(
    out: Annotated[str, typer.Argument(help="The folder `duel bench run --out` wrote.")],
    corpus: Annotated[
        str | None, typer.Option("--corpus", help="The corpus the runs used (default: the one bench.json names).")
    ] = None,
    format_: Annotated[str, typer.Option("--format", help="md, json or html (a page with plots).")] = "md",
    output: Annotated[
        str | None, typer.Option("-o", "--output", help="Write to this file (atomically) instead of standard output.")
    ] = None,
) -> None:
    """Score a bench run: recall of the agreed revision, of the openings' edits and of a single seat; flips; wrong consensus; silent agreement; rounds, tokens, cost.

    Per document and in total, from the run's files and the corpus's labelled defects (docs/bench.md says what each number means).

    Exit 0 when the score is written, 1 on an error (output not in duel bench run's layout, a corpus that cannot be read, a file that cannot be written), 2 on wrong flags.
    """
    from ..benchmark import SCORE_FORMATS, read_score, render_score

    if format_ not in SCORE_FORMATS:
        usage_error(f"--format must be one of {', '.join(SCORE_FORMATS)}, not {format_!r}")
    if not os.path.isdir(out):
        usage_error(f"no such folder: {out}")
    if corpus is not None and not os.path.isdir(corpus):
        usage_error(f"no such folder: {corpus}")
    try:
        score, corpus_used = read_score(Path(out), None if corpus is None else Path(corpus))
        text = render_score(score, format_, out=out, corpus=str(corpus_used))
    except DuelError as exc:
        fail(exc)
    to_file = None if output in (None, "-") else output
    if to_file is None:
        typer.echo(printable(text), nl=False)  # names and reasons come from records
        return
    from ..files import write_atomic

    try:
        write_atomic(Path(to_file), text.encode("utf-8"), mode=0o644)
    except OSError as exc:
        fail(DuelError(ErrorCode.STORAGE_FAILED, f"cannot write {to_file}: {exc.strerror or exc}"))
