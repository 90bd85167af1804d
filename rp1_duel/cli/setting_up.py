"""The commands that set duel up: ``duel skill`` (an agent's instructions), ``duel store init``, ``duel pull``,
``duel config`` (show, trust) and ``duel mcp`` (one seat served to an agent harness). Each parses, calls the
library, and prints.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import EXIT_INTERRUPTED, DuelError
from ..printable import printable, printable_json
from ..settings import ROLE_HELP
from ..vocabulary import ErrorCode

if TYPE_CHECKING:
    from ..participant import CitationChecker

from .arguments import store_waits_to_stderr
from .shared import (
    AllowPrivateHostsOption,
    DebateDirOption,
    JsonOption,
    PlainHelpCommand,
    PlainHelpGroup,
    StoreOption,
    check_usable,
    fail,
    load,
    open_service,
    service_for,
)

__all__ = ["config_app", "mcp_command", "pull_command", "skill_command", "store_app"]


def skill_command(
    harness: Annotated[str, typer.Option("--harness", help="claude-code, codex, gemini or generic.")],
    mcp: Annotated[
        bool,
        typer.Option(
            "--mcp",
            help="Set the harness up for `duel mcp` instead: its MCP server entry, and a skill for the tools "
            "(claude-code, codex, gemini).",
        ),
    ] = False,
    install: Annotated[
        bool,
        typer.Option("--install", help="Write the instructions where the harness reads them (generic is print-only)."),
    ] = False,
    scope: Annotated[str, typer.Option("--scope", help="user (your home) or project.")] = "project",
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Replace a file (or a section) duel skill did not write, or that was edited; with --mcp, "
            "also a different duel server entry.",
        ),
    ] = False,
    home: Annotated[str, typer.Option("--home", help="Home folder for --scope user.")] = "~",
    project: Annotated[
        str | None,
        typer.Option(
            "--project",
            help="Project folder for --scope project (default: the folder holding duel.toml, as the configuration "
            "finds it, else the top of the git work tree, else the current folder).",
        ),
    ] = None,
) -> None:
    """Print (or --install) the instructions an agent follows to take part through `duel tools`.

    Claude Code: .claude/skills/duel/SKILL.md (project, or user: ~/.claude/…).
    Codex: a marked section of AGENTS.md (project), or ~/.codex/prompts/duel.md (user).
    Gemini CLI: a marked section of GEMINI.md (project), or of ~/.gemini/GEMINI.md (user).

    --mcp: the seat is taken through `duel mcp` (an MCP server) instead. The entry that starts it
    is merged into .mcp.json or ~/.claude.json, .codex/config.toml, or .gemini/settings.json
    (in the project or the home folder), with what the harness needs to run the tools headless
    (Claude Code: an allow rule in .claude/settings.json), and a short skill for its tools goes
    where the instructions go (Codex, user: ~/.codex/AGENTS.md). Without --install, all are
    printed; with it, the trust only you may give the folder is printed last.

    Installing again changes nothing; a file duel did not write is kept unless --force.
    """
    from .skill_setup import skill_output

    try:
        text = skill_output(harness, mcp=mcp, install=install, scope=scope, home=home, project=project, force=force)
    except DuelError as exc:
        fail(exc)
    typer.echo(text, nl=False)


store_app = typer.Typer(cls=PlainHelpGroup, help="The PostgreSQL store: duels across machines.", no_args_is_help=True)


@store_app.command("init", cls=PlainHelpCommand)
def store_init_command(store: StoreOption = None) -> None:
    """Create or migrate the store's schema (a join also does it on first use). Safe to run again."""
    from ..configuration import Flags
    from ..errors import invalid_argument

    try:
        config = load(Flags(store=store))
        if config.store is None:
            raise invalid_argument(
                "duel store init needs --store, $DUEL_STORE or `store` in the configuration (a postgresql:// URL)"
            )
        location = open_service(config.debate_dir, store=config.store).prepare_store()
    except DuelError as exc:
        fail(exc)
    typer.echo(printable(f"store {location} is ready"))


def pull_command(
    duel_id: Annotated[str, typer.Option("--duel-id", help="The duel whose artifact to write.")],
    debate_dir: DebateDirOption = None,
    store: StoreOption = None,
) -> None:
    """Write a duel's artifact from the store into the debate dir, as every participant has it (to review or commit)."""
    try:
        path = service_for(debate_dir, store).pull(duel_id)
    except DuelError as exc:
        fail(exc)
    typer.echo(printable(path))


config_app = typer.Typer(
    cls=PlainHelpGroup,
    help="The layered configuration: defaults, user, project and local files, environment, flags.",
    no_args_is_help=True,
)


@config_app.command("trust", cls=PlainHelpCommand)
def config_trust_command(
    files: Annotated[
        list[str] | None,
        typer.Argument(help="The files to trust (default: this project's duel.toml and duel.local.toml)."),
    ] = None,
) -> None:
    """Trust this project's configuration, as it is now, to choose servers, a store or a debate dir outside it.

    A project's duel.toml may not set a base_url, a store or a debate_dir outside the project until you trust it here; the trust holds for the file's present bytes only (any change asks again). Each trusted value is listed.
    """
    from ..configuration import LOCAL_FILE, PROJECT_FILE, home, project_root

    cwd = Path.cwd()
    root = project_root(cwd, home_folder=Path(os.path.abspath(home(os.environ))))
    paths = [Path(os.path.abspath(path)) for path in files or ()]
    if not paths and root is not None:
        paths = [root / name for name in (PROJECT_FILE, LOCAL_FILE) if (root / name).exists()]
    if not paths:
        fail(DuelError(ErrorCode.INVALID_ARGUMENT, "no duel.toml or duel.local.toml here: name the file to trust"))
    try:
        for path in paths:
            _trust_file(path, root)
    except OSError as exc:
        fail(DuelError(ErrorCode.STORAGE_FAILED, f"cannot record the trust: {exc.strerror or exc}"))
    except DuelError as exc:
        fail(exc)


def _trust_file(path: Path, root: Path | None) -> None:
    """Trust one configuration file as it is now, and list what it sets that needed the trust."""
    from ..configuration import PROJECT, home, read_file, trust, untrusted_keys

    layer = read_file(PROJECT, path, relative_to=path.parent, home_folder=home(os.environ))
    if layer is None:
        raise DuelError(ErrorCode.INVALID_ARGUMENT, f"{path}: no such file")
    trust(path, os.environ)
    keys = untrusted_keys(layer, root or path.parent)
    shown = "; ".join(f"{key}: {effect}" for key, effect in keys) or "it sets nothing that needs trust"
    typer.echo(printable(f"trusted {path} ({shown})"))


@config_app.command("show", cls=PlainHelpCommand)
def config_show_command(
    as_json: JsonOption = False,
    lineup: Annotated[
        list[str] | None,
        typer.Option("--lineup", help="Also layer this file (as `duel panel --lineup` does) above duel.local.toml."),
    ] = None,
) -> None:
    """Print the configuration commands run with here, each value with the layer that set it.

    Layers, lowest first, each overriding the one before key by key: the built-in defaults; $XDG_CONFIG_HOME/duel/config.toml (else ~/.config/duel/config.toml); duel.toml, then duel.local.toml, at the project root (the nearest folder up from here holding either, within the git work tree); --lineup files; $DUEL_DIR and $DUEL_STORE; a command's own flags.
    """
    from ..configuration import Untrusted, load_config
    from ..participant import available_personas
    from .config_view import render_text, to_json

    untrusted: list[Untrusted] = []  # shown as not used, where every other command refuses them
    try:
        config = load_config(Path.cwd(), os.environ, extra=[Path(path) for path in lineup or ()], untrusted=untrusted)
    except DuelError as exc:
        fail(exc, as_json=as_json)
    personas = available_personas(config.personas)
    if as_json:
        typer.echo(printable_json(to_json(config, personas, untrusted)))
    else:
        typer.echo(printable(render_text(config, personas, untrusted)), nl=False)


McpTarget = Annotated[
    str | None, typer.Option("--target", help="The Markdown document to debate (default: the one duel_join names).")
]
McpName = Annotated[str | None, typer.Option("--name", help="Your display name (default: the one duel_join names).")]
McpHarness = Annotated[str, typer.Option("--harness", help="The harness the agent runs in.")]
McpModel = Annotated[str, typer.Option("--model-id", help="The agent's model id, as the record names it.")]
McpTopic = Annotated[str | None, typer.Option("--topic", help="The duel's topic (default: the document's title).")]
McpRole = Annotated[str | None, typer.Option("--role", help=ROLE_HELP)]
McpPersona = Annotated[str | None, typer.Option("--persona", help="The persona this seat plays.")]
McpVerify = Annotated[
    bool, typer.Option("--verify", help="Open every URL a turn cites before it is appended, as duel join --verify.")
]
McpVoter = Annotated[
    list[str] | None,
    typer.Option(
        "--voter",
        help="With --verify: a model that judges the claims of the sources this seat's turns challenge (up to "
        "3 times; default: none, mechanical checks only).",
    ),
]
McpWaitSeconds = Annotated[
    float,
    typer.Option(
        "--wait-seconds",
        min=1,
        max=3600,
        help="The longest one duel_wait blocks before it answers changed: false (keep it under the harness's "
        "tool timeout).",
    ),
]


def mcp_command(
    target: McpTarget = None,
    name: McpName = None,
    harness: McpHarness = "mcp",
    model_id: McpModel = "unknown-model",
    topic: McpTopic = None,
    role: McpRole = None,
    persona: McpPersona = None,
    verify: McpVerify = False,
    allow_private_hosts: AllowPrivateHostsOption = False,
    voter: McpVoter = None,
    wait_seconds: McpWaitSeconds = 45.0,
    debate_dir_: DebateDirOption = None,
    store: StoreOption = None,
) -> None:
    """Serve one seat to an agent harness over the Model Context Protocol (stdio).

    Tools: duel_join, duel_status, duel_rules, duel_read, duel_claim, duel_append, duel_commit_opening (sealed openings), duel_wait, duel_release, duel_close. Resources: duel://artifact, duel://source, duel://rules.

    The participant token stays in this process (and its owner-only stash, so a restarted server resumes the seat); the lease is refreshed while the agent holds the floor. A turn's Source Challenges are fetched and ruled on before the floor passes on, as duel join does. SIGTERM, SIGHUP or a closed input give the floor back and keep the seat. Set a harness up with `duel skill --harness … --mcp --install`.
    """
    from ..configuration import Flags
    from ..mcp_server import SeatPlan, serve

    try:
        config = load(Flags(debate_dir=debate_dir_, store=store))
        check_usable(config)  # said now, but nothing is created (nor the store opened) before the first call
        plan = SeatPlan(
            debate_dir=config.debate_dir,
            store=config.store,
            target=os.path.abspath(target) if target else None,  # as the folder the server started in names it
            name=name,
            harness=harness,
            model=model_id,
            topic=topic,
            settings=config.settings(),
            role=role,
            persona=persona,
            wait_seconds=wait_seconds,
            checker=_mcp_checker(voter, verify=verify, allow_private_hosts=allow_private_hosts),
            allow_private_hosts=allow_private_hosts,
            on_store_wait=store_waits_to_stderr("duel"),
        )
    except DuelError as exc:
        fail(exc)
    try:
        serve(plan.open)
    except KeyboardInterrupt:
        typer.echo("duel mcp: interrupted: the floor is released and the seat kept; start it again to resume", err=True)
        # The SDK reads standard input in a worker thread no signal wakes, and Python waits for it at exit
        # until the client closes its end: the seat is stopped already, so the process ends here.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)


def _mcp_checker(voter: list[str] | None, *, verify: bool, allow_private_hosts: bool) -> CitationChecker | None:
    """With --verify, the citation checker, its voters' keys and models checked now, not at the first challenge."""
    if voter and not verify:
        from ..errors import invalid_argument

        raise invalid_argument("--voter needs --verify")
    if not verify:
        return None
    from ..participant import citation_checker

    checker = citation_checker(voter or [], allow_private_hosts=allow_private_hosts)
    for line in checker.preflight():
        typer.echo(printable(line), err=True)
    return checker
