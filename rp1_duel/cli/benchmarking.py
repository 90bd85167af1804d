"""``duel bench``: what a duel adds over its openings' vote, on a corpus of documents with known defects.
``duel bench score`` reads a run's output and calls the library (:mod:`rp1_duel.benchmark`), then prints.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from ..errors import DuelError
from ..printable import printable
from ..vocabulary import ErrorCode
from .shared import PlainHelpCommand, PlainHelpGroup, fail, usage_error

__all__ = ["bench_app"]

bench_app = typer.Typer(
    cls=PlainHelpGroup,
    help="Measure what a duel adds over its openings, on documents with known defects.",
    no_args_is_help=True,
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
