"""The human-facing ``duel`` commands (typer): flag parsing and printing over the library."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable, Optional

import typer
from typing_extensions import Annotated

from .errors import DuelError

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
