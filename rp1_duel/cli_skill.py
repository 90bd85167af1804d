"""``duel skill``: print or install the participant instructions (see :mod:`rp1_duel.skill`)."""

from __future__ import annotations

import typer
from typing_extensions import Annotated

from .cli_app import app


@app.command("skill")
def skill_command(
    harness: Annotated[str, typer.Option("--harness", help="claude-code, codex or generic.")],
    install: Annotated[bool, typer.Option("--install", help="Write the instructions where the harness reads them "
                                          "(generic is print-only).")] = False,
    scope: Annotated[str, typer.Option("--scope", help="user (your home) or project.")] = "project",
    force: Annotated[bool, typer.Option("--force", help="Replace a file (or AGENTS.md section) duel skill did not "
                                        "write, or that was edited.")] = False,
    home: Annotated[str, typer.Option("--home", help="Home folder for --scope user.")] = "~",
    project: Annotated[str, typer.Option("--project", help="Project folder for --scope project.")] = ".",
) -> None:
    """Print (or --install) the instructions an agent in Claude Code, Codex or another
    harness follows to take part in a duel through `duel tools`.

    Claude Code: .claude/skills/duel/SKILL.md (project, or user: ~/.claude/…).
    Codex: a marked section of AGENTS.md (project), or ~/.codex/prompts/duel.md (user).
    Installing again changes nothing; a file duel did not write is kept unless --force.
    """
    from pathlib import Path

    from .cli_app import fail
    from .errors import DuelError
    from .skill import HARNESSES, SCOPES, install_report, render

    try:
        if harness not in HARNESSES:
            raise DuelError("INVALID_ARGUMENT", f"--harness must be one of {', '.join(HARNESSES)}, not {harness!r}")
        if scope not in SCOPES:
            raise DuelError("INVALID_ARGUMENT", f"--scope must be one of {', '.join(SCOPES)}, not {scope!r}")
        if not install:
            typer.echo(render(harness), nl=False)
            raise typer.Exit(0)
        for item in install_report(harness, scope, Path(home).expanduser(), Path(project).expanduser(), force):
            typer.echo(f"{item.action}: {item.path}")
    except DuelError as exc:
        fail(exc.code, exc.message)
