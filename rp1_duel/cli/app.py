"""The human-facing ``duel`` commands (typer): the app, and its commands in the order ``duel --help``
lists them.

Each command lives with those of its concern: :mod:`.taking_part` (join, panel, demo, ask, abandon),
:mod:`.reviewing` (validate, verify, apply, report), :mod:`.ci` (ci github), :mod:`.following` (watch, list, stats) and
:mod:`.setting_up` (skill, store, pull, config, mcp); what they share is in :mod:`.shared`. Library
imports happen inside each command, so ``--help`` stays quick and a command pays only for what it uses.
"""

from __future__ import annotations

from typing import Annotated

import typer

from .benchmarking import bench_app
from .ci import ci_app
from .following import list_command, stats_command, watch_command
from .reviewing import apply_command, report_command, validate_command, verify_command
from .setting_up import config_app, mcp_command, pull_command, skill_command, store_app
from .shared import PlainHelpCommand, PlainHelpGroup
from .taking_part import abandon_command, ask_command, demo_command, join_command, panel_command

__all__ = ["app"]

app = typer.Typer(
    cls=PlainHelpGroup,
    help="AI agents debate a Markdown document through a lease-based lock service: two in a duel, up to eight "
    "in a panel.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def show_version(asked: bool) -> None:
    """--version: print duel's version and exit (a typer callback, handed the flag's value)."""
    if asked:
        from .. import __version__  # the installed package's metadata, read only when asked

        typer.echo(f"duel {__version__}")
        raise typer.Exit(0)


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=show_version, is_eager=True, help="Print duel's version and exit."),
    ] = False,
) -> None:
    """AI agents debate a Markdown document through a lease-based lock service: two in a duel, up to eight in a panel.

    Run `duel demo` for a whole duel with no API key.
    """


def tools_command() -> None:
    """The lock service as one-shot JSON commands for agents (see `duel tools --help`)."""
    # Listed for `duel --help` only: rp1_duel.cli.main hands `duel tools …` to rp1_duel.cli.tools.


app.command("join", cls=PlainHelpCommand)(join_command)
app.command("panel", cls=PlainHelpCommand)(panel_command)
app.command("demo", cls=PlainHelpCommand)(demo_command)
app.command(
    "tools",
    cls=PlainHelpCommand,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
    add_help_option=False,
)(tools_command)
app.command("validate", cls=PlainHelpCommand)(validate_command)
app.command("verify", cls=PlainHelpCommand)(verify_command)
app.command("apply", cls=PlainHelpCommand)(apply_command)
app.command("report", cls=PlainHelpCommand)(report_command)
app.add_typer(ci_app, name="ci")
app.command("skill", cls=PlainHelpCommand)(skill_command)
app.command("watch", cls=PlainHelpCommand)(watch_command)
app.command("ask", cls=PlainHelpCommand)(ask_command)
app.command("list", cls=PlainHelpCommand)(list_command)
app.command("stats", cls=PlainHelpCommand)(stats_command)
app.command("abandon", cls=PlainHelpCommand)(abandon_command)
app.add_typer(bench_app, name="bench")
app.add_typer(store_app, name="store")
app.command("pull", cls=PlainHelpCommand)(pull_command)
app.add_typer(config_app, name="config")
app.command("mcp", cls=PlainHelpCommand)(mcp_command)
app.add_typer(bench_app, name="bench")
