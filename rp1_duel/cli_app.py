"""The human-facing ``duel`` commands (typer): flag parsing and printing over the library."""

from __future__ import annotations

import json
import os

import typer
from typing_extensions import Annotated


app = typer.Typer(
    help="Two AI agents debate a Markdown document through a lease-based lock service.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def root() -> None:
    """Two AI agents debate a Markdown document through a lease-based lock service.

    Run `duel demo` for a whole duel with no API key.
    """


@app.command(
    "tools",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
    add_help_option=False,
)
def tools_command() -> None:
    """The lock service as one-shot JSON commands: join, status, claim-lock,
    refresh-lock, release-lock, append, wait (see `duel tools --help`)."""
    # Never reached: rp1_duel.cli.main hands `duel tools …` to rp1_duel.cli_tools.


@app.command("validate")
def validate_command(
    paths: Annotated[list[str], typer.Argument(help="Artifacts, or folders to search for them.")],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Check duel artifacts: structure, hash chain, turn rules, outcome. Exit 0 valid, 1 invalid."""
    from .validate import collect, validate_file

    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        typer.echo(f"duel validate: no such file or folder: {missing[0]}", err=True)
        raise typer.Exit(2)
    reports = [validate_file(path) for path in collect(paths)]
    valid = all(r.valid for r in reports)
    if as_json:
        typer.echo(json.dumps({"valid": valid, "artifacts": [r.to_dict() for r in reports]}, ensure_ascii=False))
    else:
        for report in reports:
            verdict = "valid" if report.valid else "INVALID"
            outcome = report.outcome or (f"open, implies {report.implied_outcome}" if report.implied_outcome else "open")
            typer.echo(f"{report.path}: {verdict} ({report.turns} turns, {outcome})")
            for problem in report.problems:
                where = f"line {problem.line}: " if problem.line else ""
                typer.echo(f"  {where}{problem.code} {problem.message}")
            for note in report.notes:
                typer.echo(f"  note: {note}")
        if not reports:
            typer.echo("no duel artifacts found", err=True)
    raise typer.Exit(0 if valid else 1)
