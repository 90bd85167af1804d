"""The human-facing ``duel`` commands (typer): flag parsing and printing over the library.

Commands are registered here, in the order ``duel --help`` lists them: join, panel, demo,
tools, validate, verify, apply, report, skill, watch, ask, list, stats, abandon. Library imports
happen inside each command, so ``--help`` stays quick and a command pays only for what it uses.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
import typer.core

from ..errors import EXIT_INTERRUPTED, DuelError, exit_code_for
from ..printable import printable, printable_json
from ..settings import (
    CHAIR_HELP,
    ON_FABRICATION_HELP,
    ROLE_HELP,
    SEALED_OPENINGS_HELP,
    SETTINGS,
    SIGNER_HELP,
    default_of,
)
from ..vocabulary import ErrorCode, Role
from .arguments import store_waits_to_stderr

if TYPE_CHECKING:
    from ..configuration import Config, Flags
    from ..coordination.service import DuelService
    from ..mcp_server.seat import AgentSeat
    from ..participant.checking import CitationChecker
    from ..participant.providers import Provider
    from ..participant.voters import ProviderVoter
    from ..verify.run import Verifier

__all__ = ["app"]


class _PlainHelp:
    """Help without typer's type labels: no ``<bool>`` after a flag (it takes no value), and ``<str>``
    for an option given many times instead of ``<list[str]>``."""

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)  # type: ignore[misc]  # the click command's, mixed in below
        for param in params:
            if getattr(param, "param_type_name", "") != "option" or param.metavar is not None:
                continue
            if param.is_flag:
                param.metavar = ""
            elif param.multiple:
                param.metavar = "<str>"
        return params


class PlainHelpCommand(_PlainHelp, typer.core.TyperCommand):
    """A command whose help has no ``<bool>`` or ``<list[str]>`` (:class:`_PlainHelp`)."""


class PlainHelpGroup(_PlainHelp, typer.core.TyperGroup):
    """A command group whose help has no ``<bool>`` (:class:`_PlainHelp`)."""


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


def fail(error: DuelError, *, as_json: bool = False, exit_code: int | None = None) -> NoReturn:
    """One line for people (and one JSON object with --json); never a traceback. Exit with the
    error code's status, or ``exit_code``."""
    if as_json:
        typer.echo(printable_json({"success": False, "error": {"code": error.code, "message": error.message}}))
    typer.echo(printable(f"duel: {error.code}: {error.message}"), err=True)  # a message may quote a page or a peer
    raise typer.Exit(exit_code_for(error.code) if exit_code is None else exit_code)


def review_line(debate_path: str) -> str:
    """What to run next once a duel is closed."""
    return printable(f"review: duel report {debate_path} --format html -o report.html")  # the path may be any name


def usage_error(message: str) -> NoReturn:
    """A misused command: ``INVALID_ARGUMENT``, exit 2."""
    from ..errors import invalid_argument

    fail(invalid_argument(message))


_STORE_HELP = (
    "Keep duels in a PostgreSQL database, for duels across machines: a postgresql:// URL "
    "(default: $DUEL_STORE, else `store` in the configuration, else the debate dir)."
)
DEFAULT_NAMES = {"anthropic": "Claude", "openai": "GPT", "human": "Human"}
# typer renders help through rich, which would read "[default: …]" as markup and drop it: escaped.
_SETTING_HELP = {
    name: f"{s.help_with_range}; fixed by the join that creates the duel.".replace("[", "\\[")
    for name, s in SETTINGS.items()
}
_DEBATE_DIR_HELP = "The debate dir (default: $DUEL_DIR, else `debate_dir` in the configuration, else ./debates)."
_AllowPrivateHosts = Annotated[
    bool,
    typer.Option(
        "--allow-private-hosts",
        help="Fetch from loopback and private addresses too (--verify, and the sources a participant challenges); "
        "metadata addresses stay refused.",
    ),
]


def _default_or_config(name: str) -> str:
    """The help of a setting whose default the configuration may change."""
    return f"{_SETTING_HELP[name]} \\[default: {default_of(name)}, or from config]"


def _model_help(text: str, key: str) -> str:
    return f"{text} (default: {key} in the configuration)."


def open_service(debate_dir: str | os.PathLike[str], store: str | None) -> DuelService:
    """The service a command runs on, telling on standard error each pause of the store's retries."""
    from ..coordination.service import DuelService

    service = DuelService(debate_dir, store=store)
    service.on_store_wait = store_waits_to_stderr("duel")
    return service


def check_usable(config: Config) -> None:
    """What would stop a command's store from opening, said without opening it: a debate dir that is a file
    (``DEBATE_DIR_INVALID``), a ``--store`` that is no store's URL."""
    from ..coordination.storage import DebateDir

    DebateDir(config.debate_dir).check_usable()
    if config.store:
        from ..coordination.service import check_store_url

        check_store_url(config.store)


def load(flags: Flags, extra: list[str] | None = None) -> Config:
    """The configuration this command runs with (rp1_duel.configuration): files, ``extra`` files,
    environment, then ``flags``."""
    from ..configuration import load_config

    return load_config(Path.cwd(), os.environ, flags, [Path(path) for path in extra or ()])


@app.command("join", cls=PlainHelpCommand)
def join_command(
    target: Annotated[str, typer.Option("--target", help="The Markdown document to debate.")],
    topic: Annotated[str | None, typer.Option(help="Topic (default: the document's first heading).")] = None,
    debate_dir_: Annotated[str | None, typer.Option("--debate-dir", help=_DEBATE_DIR_HELP)] = None,
    store: Annotated[str | None, typer.Option("--store", help=_STORE_HELP)] = None,
    name: Annotated[str | None, typer.Option(help="Your display name (default: from the provider).")] = None,
    model: Annotated[
        str | None,
        typer.Option(help=_model_help("claude-…, gpt-…, a local model, `human` or `scripted:DIR`", "model.model")),
    ] = None,
    provider: Annotated[
        str | None, typer.Option(help=_model_help("Force anthropic or openai", "model.provider"))
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url", help=_model_help("An OpenAI-compatible server (Ollama, vLLM, llama.cpp)", "model.base_url")
        ),
    ] = None,
    persona: Annotated[
        str | None,
        typer.Option(
            help="Who the model plays: a named persona (skeptic, pragmatist, domain-expert, users-advocate, or one "
            "of the configuration's; `duel config show` lists them), or any text."
        ),
    ] = None,
    position: Annotated[str | None, typer.Option(help="The position it starts from.")] = None,
    max_turns: Annotated[int | None, typer.Option(help=_SETTING_HELP["max_turns"])] = None,
    lease_seconds: Annotated[int | None, typer.Option(help=_default_or_config("lease_seconds"))] = None,
    peer_wait_seconds: Annotated[int | None, typer.Option(help=_default_or_config("peer_wait_seconds"))] = None,
    turn_timeout_seconds: Annotated[int | None, typer.Option(help=_default_or_config("turn_timeout_seconds"))] = None,
    seats: Annotated[int | None, typer.Option(help=_default_or_config("seats"))] = None,
    chair: Annotated[
        bool, typer.Option("--chair", help=f"{CHAIR_HELP}; fixed by the join that creates the duel.")
    ] = False,
    sealed_openings: Annotated[
        bool,
        typer.Option("--sealed-openings", help=f"{SEALED_OPENINGS_HELP}; fixed by the join that creates the duel."),
    ] = False,
    on_fabrication: Annotated[
        str | None,
        typer.Option("--on-fabrication", help=f"{ON_FABRICATION_HELP}; fixed by the join that creates the duel."),
    ] = None,
    role: Annotated[str, typer.Option(help=f"{ROLE_HELP}; or audience: {AUDIENCE_HELP}")] = Role.PANELIST,
    signing_key: Annotated[
        str | None,
        typer.Option(
            "--signing-key",
            envvar="DUEL_SIGNING_KEY",
            help="Sign every turn with this SSH key: a private key file, or a public key whose private half is in "
            "ssh-agent (checked with `duel validate --allowed-signers`).",
        ),
    ] = None,
    signer: Annotated[
        str | None, typer.Option("--signer", envvar="DUEL_SIGNER", help=SIGNER_HELP[0].upper() + SIGNER_HELP[1:] + ".")
    ] = None,
    reasoning: Annotated[
        str | None,
        typer.Option(
            "--reasoning",
            help="low, medium or high: how hard the model thinks before writing (Anthropic's effort, "
            "OpenAI's reasoning_effort; default: model.reasoning in the configuration, else the "
            "model's own).",
        ),
    ] = None,
    max_output_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-output-tokens",
            help="The output ceiling of every request, thinking included (default: model.max_output_tokens in "
            "the configuration, else 16000, and none at all on a --base-url server, whose context window "
            "decides; sent there as max_tokens).",
        ),
    ] = None,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="Open the URLs each draft cites before appending it (a dead link or a quote not on its "
            "page goes back for repair), and those of each peer turn, telling the model.",
        ),
    ] = False,
    allow_private_hosts: _AllowPrivateHosts = False,
    voter: Annotated[
        list[str] | None,
        typer.Option(
            "--voter",
            help="With --verify: a model that judges the claims of the peer's citations (up to 3 times; "
            "default: none, mechanical checks only).",
        ),
    ] = None,
    config_file: Annotated[
        list[str] | None,
        typer.Option(
            "--config", help="One more configuration file, above duel.local.toml (duel panel passes its lineup)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one summary object on stdout.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="Print nothing on stderr but errors.")] = False,
) -> None:
    """Take part in a duel about a document: join, debate turn by turn, close.

    Run it in two terminals, one per participant. Ctrl-C gives the floor back and keeps the seat: run the same command again to resume.
    """
    from ..configuration import Flags, destinations
    from ..coordination.identity import check_join_inputs
    from ..participant.console import ConsoleReporter
    from ..participant.loop import STATE_COMPLETED, Duelist, ParticipantConfig
    from ..participant.personas import played, resolve
    from ..participant.providers import select_provider

    duelist = None
    try:
        _check_join_flags(reasoning, voter, max_output_tokens, verify=verify)
        flags = Flags(
            debate_dir_,
            store,
            provider,
            model,
            base_url,
            reasoning,
            max_turns,
            lease_seconds,
            peer_wait_seconds,
            turn_timeout_seconds,
            seats,
            max_output_tokens,
            sealed_openings or None,
            _fabrication(on_fabrication),
        )
        config = load(flags, config_file)
        settings = config.settings()._replace(chair=chair)
        check_join_inputs(os.path.abspath(target), settings)  # a bad file or flag costs no model lookup
        chosen = select_provider(
            config.model.model,
            provider=config.model.provider,
            base_url=config.model.base_url,
            env=os.environ,
            reasoning=config.model.reasoning,
            max_output_tokens=config.model.max_output_tokens,
        )
        checker = None
        if verify:
            from ..participant.checking import citation_checker

            checker = citation_checker(voter or [], allow_private_hosts=allow_private_hosts)
        display = name or DEFAULT_NAMES.get(chosen.name) or chosen.model.removeprefix("scripted:").capitalize()
        persona_line = played(persona, config.personas)
        for line in [] if quiet else [*destinations(config), *([persona_line] if persona_line else [])]:
            typer.echo(printable(f"[{display}] {line}"), err=True)  # named before the first request or write
        if role == Role.AUDIENCE:
            _audience(config, chosen, display, target=target, topic=topic, quiet=quiet, as_json=as_json)
        participant = ParticipantConfig(
            target=os.path.abspath(target),
            debate_dir=config.debate_dir,
            name=display,
            topic=topic,
            persona=resolve(persona, config.personas),
            position=position,
            settings=settings,
            signing_key=signing_key or None,
            signer=signer or None,
            store=config.store,
            role=role,
            allow_private_hosts=allow_private_hosts,
        )
        reporter = ConsoleReporter(display, quiet=quiet)
        duelist = Duelist(participant, chosen, reporter, checker=checker)
        try:
            result = duelist.run()
        except KeyboardInterrupt:
            reporter.end_live_line()
            duelist.interrupt()
            typer.echo(
                f"[{display}] interrupted: the floor is released and the seat kept; run the same command to resume",
                err=True,
            )
            raise typer.Exit(EXIT_INTERRUPTED) from None
    except DuelError as exc:
        if duelist is not None:
            reporter.end_live_line()
            duelist.interrupt()  # never leave a lease behind on an error
            if duelist.seat is not None and duelist.result.outcome is None:
                exc = DuelError(exc.code, f"{exc.message}; your seat is kept: run the same command to resume")
        fail(exc, as_json=as_json)
    if as_json:  # success as the exit code says it, as a failure's {"success": false, "error": …} does
        typer.echo(printable_json({"success": result.state == STATE_COMPLETED, **result.to_dict()}))
    if result.state != STATE_COMPLETED:  # even with --quiet: exit 1 says why
        typer.echo(printable(f"duel: {result.outcome}: {result.reason or 'no reason recorded'}"), err=True)
    raise typer.Exit(0 if result.state == STATE_COMPLETED else 1)


AUDIENCE_HELP = "take no seat, ask a seat a question after each round, and give final thoughts at the close"


def _audience(
    config: Config, provider: Provider, name: str, *, target: str, topic: str | None, quiet: bool, as_json: bool
) -> NoReturn:
    """``duel join --role audience``: a model in the audience, until the duel closes (section 4, "The audience")."""
    from ..participant.audience import AudienceMember

    def say(line: str) -> None:
        if not quiet:
            typer.echo(printable(f"[{name}] {line}"), err=True)

    service = open_service(config.debate_dir, store=config.store)
    try:
        run = AudienceMember(service, provider, name=name, target=os.path.abspath(target), topic=topic, say=say).run()
    except KeyboardInterrupt:
        say("interrupted: run the same command to come back (no question is asked twice in a round)")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if as_json:
        typer.echo(printable_json({"success": True, **run.to_dict()}))
    raise typer.Exit(0)


def _fabrication(value: str | None) -> str | None:
    """``--on-fabrication``, one of its words, or None when not given (``INVALID_ARGUMENT`` otherwise)."""
    from ..errors import invalid_argument
    from ..settings import ON_FABRICATION

    if value is not None and value not in ON_FABRICATION:
        raise invalid_argument(f"--on-fabrication must be one of {', '.join(ON_FABRICATION)}, not {value!r}")
    return value


def _check_join_flags(
    reasoning: str | None,
    voter: list[str] | None,
    max_output_tokens: int | None,
    *,
    verify: bool,
) -> None:
    """Refuse (``INVALID_ARGUMENT``) a --reasoning level that is none, a --max-output-tokens out of range,
    and --voter without --verify."""
    from ..configuration import MAX_OUTPUT_TOKENS_RANGE
    from ..errors import invalid_argument
    from ..vocabulary import REASONING_LEVELS

    if reasoning is not None and reasoning not in REASONING_LEVELS:
        raise invalid_argument(f"--reasoning must be one of {', '.join(REASONING_LEVELS)}, not {reasoning!r}")
    low, high = MAX_OUTPUT_TOKENS_RANGE
    if max_output_tokens is not None and not low <= max_output_tokens <= high:
        raise invalid_argument(f"--max-output-tokens must be between {low} and {high}, got {max_output_tokens}")
    if not verify and voter:
        raise invalid_argument("--voter needs --verify")


@app.command("panel", cls=PlainHelpCommand)
def panel_command(
    target: Annotated[str, typer.Option("--target", help="The Markdown document to debate.")],
    lineup: Annotated[
        str | None,
        typer.Option(
            "--lineup",
            help="A TOML file of \\[panel.seats.1], \\[panel.seats.2]…: each seat's name, provider, model, "
            "persona and position (default: the lineup in duel.toml).",
        ),
    ] = None,
    topic: Annotated[
        str | None, typer.Option(help="Topic (default: panel.topic in the lineup, else the document's first heading).")
    ] = None,
    debate_dir_: Annotated[str | None, typer.Option("--debate-dir", help=_DEBATE_DIR_HELP)] = None,
    store: Annotated[str | None, typer.Option("--store", help=_STORE_HELP)] = None,
    max_turns: Annotated[int | None, typer.Option(help=_SETTING_HELP["max_turns"])] = None,
    lease_seconds: Annotated[int | None, typer.Option(help=_default_or_config("lease_seconds"))] = None,
    peer_wait_seconds: Annotated[int | None, typer.Option(help=_default_or_config("peer_wait_seconds"))] = None,
    turn_timeout_seconds: Annotated[int | None, typer.Option(help=_default_or_config("turn_timeout_seconds"))] = None,
    sealed_openings: Annotated[bool, typer.Option("--sealed-openings", help=f"{SEALED_OPENINGS_HELP}.")] = False,
    on_fabrication: Annotated[str | None, typer.Option("--on-fabrication", help=f"{ON_FABRICATION_HELP}.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one summary object on stdout.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="Print nothing on stderr but errors.")] = False,
) -> None:
    """Run every seat of a panel from one command: one `duel join` process a seat, each with its own model.

    The seats join in lineup order and their progress lines are shown as they come. Ctrl-C stops every seat (each gives the floor back and keeps its seat): run the same command to resume.
    """
    from ..configuration import Flags, destinations
    from ..participant.panel import exit_code, lineup_seats, run_seats, shared_flags

    extra = [os.path.abspath(lineup)] if lineup else []
    try:
        flags = Flags(
            debate_dir_,
            store,
            max_turns=max_turns,
            lease_seconds=lease_seconds,
            peer_wait_seconds=peer_wait_seconds,
            turn_timeout_seconds=turn_timeout_seconds,
            sealed_openings=sealed_openings or None,
            on_fabrication=_fabrication(on_fabrication),
        )
        config = load(flags, extra)
        seats = lineup_seats(config)
        for line in [] if quiet else destinations(config):
            typer.echo(printable(f"duel panel: {line}"), err=True)
        chair = config.panel.chair is not None
        settings = config.settings()._replace(seats=len(seats) - chair, chair=chair)
        settings.check()
        chosen_topic = topic or config.panel.topic
        shared = shared_flags(config, settings, topic=chosen_topic, config_files=extra) + (["--quiet"] if quiet else [])
        service = open_service(config.debate_dir, store=config.store)
        target_path = os.path.abspath(target)
        try:
            runs = run_seats(
                target_path, shared=shared, seats=seats, service=service, store=config.store, topic=chosen_topic
            )
        except KeyboardInterrupt:
            typer.echo(
                "duel panel: interrupted: every seat gave the floor back and kept its seat; "
                "run the same command to resume",
                err=True,
            )
            raise typer.Exit(EXIT_INTERRUPTED) from None
    except DuelError as exc:
        fail(exc, as_json=as_json)
    results = [run.result for run in runs]
    done = next((result for result in results if result and result.get("debate_path")), None)
    if as_json:
        typer.echo(
            printable_json(
                {
                    "outcome": done and done.get("outcome"),
                    "debate_path": done and done["debate_path"],
                    "seats": results,
                }
            )
        )
    if done is not None:
        typer.echo(printable(f"duel panel: {done.get('outcome') or 'not ended'} → {done['debate_path']}"), err=True)
        typer.echo(printable(f"review:     duel report {done['debate_path']} --format html -o report.html"), err=True)
    raise typer.Exit(exit_code(runs))


@app.command("demo", cls=PlainHelpCommand)
def demo_command(
    directory: Annotated[str, typer.Option("--dir", help="Where the demo's document and debates go.")] = "duel-demo",
) -> None:
    """A whole duel with no API key: two scripted participants, real processes, real service."""
    from ..participant.demo import run_demo

    raise typer.Exit(run_demo(directory))


@app.command(
    "tools",
    cls=PlainHelpCommand,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
    add_help_option=False,
)
def tools_command() -> None:
    """The lock service as one-shot JSON commands for agents (see `duel tools --help`)."""
    # Listed for `duel --help` only: rp1_duel.cli.main hands `duel tools …` to rp1_duel.cli.tools.


@app.command("validate", cls=PlainHelpCommand)
def validate_command(
    paths: Annotated[list[str], typer.Argument(help="Artifacts, or folders to search for them.")],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    root: Annotated[
        str | None,
        typer.Option(
            "--root",
            help="Read sources only inside this folder (default: each artifact's git work tree, "
            "else the folder above its folder).",
        ),
    ] = None,
    allowed_signers: Annotated[
        str | None,
        typer.Option(
            "--allowed-signers",
            help="An ssh-keygen allowed signers file (as git's gpg.ssh.allowedSignersFile): every "
            "turn must be signed by a principal it names.",
        ),
    ] = None,
    require_verified: Annotated[
        bool,
        typer.Option(
            "--require-verified",
            help="Also require a current <artifact>.verify.json (duel verify) with no fabricated citation.",
        ),
    ] = False,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Fail what was not checked: turns whose source could not be read, and a search that found no "
            "artifact (for CI).",
        ),
    ] = False,
) -> None:
    """Check duel artifacts: structure, hash chain, turn rules, outcome. Exit 0 valid, 1 invalid.

    A folder is searched for every *.md that looks like an artifact; one that looks like an artifact and does not parse is invalid, never skipped.

    Sources are checked at the version the duel recorded (from the git history if the file changed since).

    Without --allowed-signers this proves consistency, not authorship: anyone can edit a turn and recompute the hashes.
    """  # one line a paragraph: typer keeps a docstring's line breaks
    from ..record.validate import scan, validate_paths

    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        usage_error(f"no such file or folder: {missing[0]}")
    check_allowed_signers(allowed_signers)
    scanned = scan(paths)
    reports = validate_paths(
        [str(path) for path in scanned.found],
        root=root,
        allowed_signers=allowed_signers,
        require_verified=require_verified,
        strict=strict,
    )
    valid = all(r.valid for r in reports) and bool(reports or not strict)
    skipped = [{"path": str(path), "reason": reason} for path, reason in scanned.skipped]
    if as_json:
        shown = {"valid": valid, "artifacts": [r.to_dict() for r in reports], "skipped": skipped}
        typer.echo(printable_json(shown))
    else:
        for report in reports:
            typer.echo(printable(report.to_text()))
        for entry in skipped:  # what a CI gate did not check, and why
            typer.echo(printable(f"{entry['path']}: skipped ({entry['reason']})"))
        if not reports:
            typer.echo("no duel artifacts found" + (" (--strict fails)" if strict else ""), err=True)
    raise typer.Exit(0 if valid else 1)


VERIFY_NO_MODEL = (
    "no model configured: mechanical verdicts only (claims that need judging stay unjudged); set "
    "ANTHROPIC_API_KEY or OPENAI_API_KEY, or pass --voter MODEL (with --base-url URL for an "
    "OpenAI-compatible server)"
)


@app.command("verify", cls=PlainHelpCommand)
def verify_command(
    paths: Annotated[list[str], typer.Argument(help="Artifacts, or folders to search for them.")],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    refresh: Annotated[
        bool, typer.Option("--refresh", help="Fetch and judge everything again: reuse nothing of the existing sidecar.")
    ] = False,
    allow_private_hosts: Annotated[
        bool,
        typer.Option(
            "--allow-private-hosts",
            help="Fetch from loopback and private addresses too (an intranet wiki, a "
            "test server); metadata addresses stay refused.",
        ),
    ] = False,
    voter: Annotated[
        list[str] | None,
        typer.Option(
            "--voter",
            help="A model that votes (up to 3 times; the third vote is adversarial). Default: Claude "
            "and/or GPT, as keys are set.",
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="An OpenAI-compatible server for --voter (Ollama, vLLM, llama.cpp)."),
    ] = None,
    no_models: Annotated[bool, typer.Option("--no-models", help="Mechanical verdicts only, even with keys.")] = False,
) -> None:
    """Check every URL the turns cite, and the claim it supports; write <artifact>.verify.json beside it.

    Dead links and quoted excerpts not on the page are fabricated; a claim stating a figure its page does not (1,250 for 1,200) is unreliable, unless it begins [CONJECTURE]; a quorum of three model votes judges the rest. Exit 0 when no citation is fabricated, 1 otherwise.
    """
    from ..errors import invalid_argument
    from ..verify.fetch import Fetcher, FetchPolicy
    from ..verify.pages import PageCache, default_cache_dir
    from ..verify.run import Verifier

    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        fail(invalid_argument(f"no such file or folder: {missing[0]}"), as_json=as_json)
    voters = _ready_voters(voter or [], base_url, no_models=no_models, as_json=as_json)
    if not voters:
        typer.echo(
            f"duel verify: {'--no-models: mechanical verdicts only' if no_models else VERIFY_NO_MODEL}", err=True
        )
    verifier = Verifier(
        Fetcher(FetchPolicy(allow_private_hosts=allow_private_hosts)),
        voters,
        PageCache(default_cache_dir()),
        progress=lambda line: typer.echo(printable(f"duel verify: {line}"), err=True),
    )
    results, fabricated, errors = _verify_each(paths, verifier, refresh=refresh, as_json=as_json)
    if as_json:
        typer.echo(
            printable_json(
                {
                    "success": not errors,
                    "models": bool(voters),
                    "voters": list(dict.fromkeys(v.name for v in voters)),
                    "fabricated": fabricated,
                    "artifacts": results,
                }
            )
        )
    elif not results:
        typer.echo("no duel artifacts found", err=True)
    raise typer.Exit(1 if fabricated or errors else 0)


def _ready_voters(models: list[str], base_url: str | None, *, no_models: bool, as_json: bool) -> list[ProviderVoter]:
    """The voters of ``duel verify``, each preflighted and said ready; none with --no-models."""
    from ..participant.voters import configured_voters

    try:
        voters = [] if no_models else configured_voters(os.environ, models, base_url)
        for name, chosen in {v.name: v for v in voters}.items():
            chosen.preflight()
            typer.echo(printable(f"duel verify: voter {name} is ready"), err=True)
    except DuelError as exc:
        fail(exc, as_json=as_json)
    return voters


def _verify_each(
    paths: list[str], verifier: Verifier, *, refresh: bool, as_json: bool
) -> tuple[list[dict[str, object]], int, int]:
    """Verify every artifact under ``paths``, each shown as it is done: the results, and how many
    citations were fabricated and how many artifacts failed."""
    from ..verify.run import verify_paths
    from ..vocabulary import Verdict

    results: list[dict[str, object]] = []
    fabricated = errors = 0
    try:
        for path, done in verify_paths(paths, verifier, refresh=refresh):
            if isinstance(done, DuelError):
                errors += 1
                typer.echo(printable(f"duel: {done.code}: {done.message}"), err=True)
                results.append({"path": str(path), "error": done.to_dict()})
                continue
            fabricated += sum(entry.verdict == Verdict.FABRICATED for entry in done.sidecar.citations)
            results.append(done.to_dict())
            if not as_json:
                typer.echo(printable(done.to_text()))
    except KeyboardInterrupt:
        typer.echo("duel verify: interrupted (every sidecar written so far is whole)", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    return results, fabricated, errors


@app.command("apply")
def apply_command(
    artifact: Annotated[str, typer.Argument(help="A closed duel's artifact.")],
    check: Annotated[
        bool, typer.Option("--check", help="Say whether the agreed revision would apply, and write nothing.")
    ] = False,
    to: Annotated[
        str | None, typer.Option("--to", help="Write the revised document to this file, not over the document.")
    ] = None,
    root: Annotated[
        str | None,
        typer.Option(
            "--root",
            help="The document may lie only inside this folder (default: the artifact's git work tree, "
            "else the folder above its folder).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Apply the revision a duel agreed on (ACCEPTED_CONSENSUS) to its document, recomputed from the turns.

    Refused, writing nothing, when the artifact does not pass duel validate or the duel agreed on nothing. A document that moved on since the duel gets the agreed change merged in, three ways (git merge-file, else merge3); where both changed the same lines it is written with <<<<<<< today / >>>>>>> agreed markers (--check says so first). One that holds the revision already is left as it is. --to writes the agreed revision of the recorded version, whatever the document became. The file is replaced at once and keeps its mode.

    Exit 0 when applied or already applied (with --check: when it would apply), 1 when refused or written with conflicts, 2 on wrong flags or a duel that ended without consensus (1 with --check).
    """
    from ..record.agreed import apply_agreed

    try:
        result = apply_agreed(artifact, to=to, check=check, root=root)
    except DuelError as exc:
        fail(exc, as_json=as_json, exit_code=1 if check else None)  # --check answers no with 1, whatever the reason
    if as_json:
        typer.echo(printable_json({"success": True, **result.to_dict()}))
    else:
        typer.echo(printable(result.to_text()))
    if result.conflicts:
        raise typer.Exit(1)  # written with conflict markers, as git merge leaves them: not done until resolved


def check_allowed_signers(path: str | None) -> None:
    """A usage error unless ``--allowed-signers``, when given, names a readable file and ssh-keygen is there to
    read it."""
    from ..record import signatures

    if path is None:
        return
    if not os.path.isfile(path) or not os.access(path, os.R_OK):
        usage_error(f"--allowed-signers {path} is not a readable file")
    if not signatures.available():
        usage_error("--allowed-signers needs ssh-keygen (OpenSSH 8.2 or later), which is not on PATH")


REPORT_FORMATS = ("md", "html", "json")


@app.command("report", cls=PlainHelpCommand)
def report_command(
    artifact: Annotated[str, typer.Argument(help="A duel artifact.")],
    format_: Annotated[
        str,
        typer.Option(
            "--format",
            help="md (a pull-request comment), html (one self-contained page) or json (the data behind both).",
        ),
    ] = "md",
    output: Annotated[
        str | None,
        typer.Option("-o", "--output", help="Write the report to this file (atomically) instead of standard output."),
    ] = None,
    assess: Annotated[
        bool,
        typer.Option(
            "--assess",
            help="Add a model's assessment of each side (model-written; its turn references checked), "
            "cached in NAME.assess.json beside the artifact.",
        ),
    ] = False,
    assessor: Annotated[
        list[str] | None,
        typer.Option(
            "--assessor", help="A model that assesses (up to 2). Default: Claude and/or GPT, as keys are set."
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="An OpenAI-compatible server for --assessor (Ollama, vLLM, llama.cpp)."),
    ] = None,
    refresh_assessment: Annotated[
        bool,
        typer.Option("--refresh-assessment", help="Ask the assessors again, even when the cache holds their answer."),
    ] = False,
    allowed_signers: Annotated[
        str | None,
        typer.Option(
            "--allowed-signers",
            help="An ssh-keygen allowed signers file: each seat is shown with the principal that signed its turns "
            "(without it, the key), and `duel validate` is run with it.",
        ),
    ] = None,
) -> None:
    """Summarise a duel for review: the decision first, and what it must not hide.

    The outcome and why; what it must not hide (a timeout's seat and turn, a seat that stopped, a model the API answered as in place of the one asked for, turns accepted after repairs, the rulings on cited sources); the openings' vote against the outcome; the stances turn by turn, agreements, unresolved items, novel arguments, the audience's questions with their answers and its final thoughts, citations, participants, cost, and each turn's provenance (provider, model asked for and answered as, reasoning, tokens, retries, seconds).

    Computed from the artifact alone, plus its verification sidecar (NAME.verify.json), the usage recorded under the debate dir's .duel/ and a current cached assessment (NAME.assess.json) when they are there. Writes nothing but the report, and with --assess the assessment cache.

    Exit 0 when the report is written, 1 on an error (an artifact that cannot be read or is not a duel artifact, no model for --assess, an assessor that gave no answer), 2 on wrong flags.
    """
    if format_ not in REPORT_FORMATS:
        usage_error(f"--format must be one of {', '.join(REPORT_FORMATS)}, not {format_!r}")
    if not os.path.exists(artifact):
        usage_error(f"no such file: {artifact}")
    if not assess and (assessor or base_url or refresh_assessment):
        usage_error("--assessor, --base-url and --refresh-assessment need --assess")
    check_allowed_signers(allowed_signers)
    from ..review.report_files import read_report

    if assess:
        assess_report(artifact, assessor or [], base_url, refresh=refresh_assessment)
    to_file = None if output == "-" else output
    read_from = os.curdir if to_file is None else os.path.dirname(os.path.abspath(to_file))
    try:  # its links are relative to where it is read: the output file's folder, else here
        report = read_report(artifact, read_from=read_from, allowed_signers=allowed_signers)
    except DuelError as exc:
        fail(exc)
    if format_ == "json":
        text = json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n"
    elif format_ == "html":
        from ..review.report.html import render_html

        text = render_html(report)
    else:
        from ..review.report.markdown import render_markdown

        text = render_markdown(report)
    if to_file is None:
        typer.echo(printable(text), nl=False)  # a hostile record's text must not reach a terminal raw
        return
    from ..files import write_atomic

    try:
        write_atomic(Path(to_file), text.encode("utf-8"), mode=0o644)
    except OSError as exc:
        fail(DuelError(ErrorCode.STORAGE_FAILED, f"cannot write {to_file}: {exc.strerror or exc}"))


def assess_report(artifact: str, assessors: list[str], base_url: str | None, *, refresh: bool) -> None:
    """Ask the assessors (or reuse their cached answers) before the report is read; fail if one gave none."""
    from ..review.report_files import assess_artifact, configured_assessors

    def say(line: str) -> None:
        typer.echo(printable(f"duel report: {line}"), err=True)

    try:
        run = assess_artifact(
            artifact, configured_assessors(os.environ, assessors, base_url), refresh=refresh, progress=say
        )
    except DuelError as exc:
        fail(exc)
    except KeyboardInterrupt:
        say("interrupted: the assessment cache is as it was")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    for name in run.reused:
        say(f"the assessment by {name} is reused from the cache (--refresh-assessment asks again)")
    for failure in run.failures[1:]:
        typer.echo(printable(f"duel: {failure.code}: {failure.message}"), err=True)
    if run.failures:
        fail(run.failures[0])


@app.command("skill", cls=PlainHelpCommand)
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
    from ..configuration import project_folder
    from ..errors import invalid_argument
    from .skill import (
        HARNESSES,
        SCOPES,
        install_mcp_report,
        install_report,
        mcp_trust_step,
        render,
        render_mcp_setup,
    )

    try:
        if harness not in HARNESSES:
            raise invalid_argument(f"--harness must be one of {', '.join(HARNESSES)}, not {harness!r}")
        if scope not in SCOPES:
            raise invalid_argument(f"--scope must be one of {', '.join(SCOPES)}, not {scope!r}")
        if not install and not mcp:
            typer.echo(render(harness), nl=False)
            raise typer.Exit(0)
        home_folder = Path(os.path.abspath(os.path.expanduser(home)))
        folder = Path(project).expanduser() if project else project_folder(Path.cwd(), home_folder=home_folder)
        if not install:
            typer.echo(printable(render_mcp_setup(harness, scope=scope, home=home_folder, project=folder)), nl=False)
            raise typer.Exit(0)
        report = install_mcp_report if mcp else install_report
        for item in report(harness, scope=scope, home=home_folder, project=folder, force=force):
            typer.echo(printable(f"{item.action}: {item.path}"))
        if mcp:
            typer.echo(printable(mcp_trust_step(harness, scope=scope, home=home_folder, project=folder)), nl=False)
    except DuelError as exc:
        fail(exc)


@app.command("watch", cls=PlainHelpCommand)
def watch_command(
    debate_dir_: Annotated[str | None, typer.Option("--debate-dir", help=_DEBATE_DIR_HELP)] = None,
    store: Annotated[str | None, typer.Option("--store", help=_STORE_HELP)] = None,
    duel_id: Annotated[
        str | None,
        typer.Option("--duel-id", help="The duel to watch (default: the only active duel of the debate dir)."),
    ] = None,
) -> None:
    """Follow a duel live: seats, the floor and its countdowns, each turn as it lands, the outcome.

    On a terminal, a live view; through a pipe, one plain line per event. Watching writes nothing and takes no lock.

    On a terminal, press a to ask a seat a question (as `duel ask`, named by your login): it prompts for the seat and the question, then shows the answer or the refusal and goes on watching.

    Exits 0 when the duel closes (at once, after its history, for a closed one), 130 on Ctrl-C.
    """
    import sys
    import time
    from contextlib import nullcontext

    from ..configuration import Flags
    from ..review.watch import display_for, follow, pick_duel
    from ..review.watch_keys import AskKey
    from ..vocabulary import ACTIVE

    try:
        config = load(Flags(debate_dir_, store))
        service = open_service(config.debate_dir, store=config.store)
        duel = pick_duel(service, duel_id)
        display = display_for(sys.stdout)
        keys = None
        if sys.stdin is not None and AskKey.usable(sys.stdin) and service.status(duel).status == ACTIVE:
            keys = AskKey(service, duel, by=login_name(), screen=display, keyboard=sys.stdin)
        with keys or nullcontext():
            last = follow(service, duel, display, sleep=keys.wait if keys else time.sleep)
    except DuelError as exc:
        fail(exc)
    except KeyboardInterrupt:
        raise typer.Exit(EXIT_INTERRUPTED) from None
    typer.echo(review_line(last.debate_path), err=True)


def login_name() -> str:
    """Who an audience member is when no --name says: the login user's name, else `audience`."""
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in the environment and none for this uid
        return "audience"


@app.command("ask", cls=PlainHelpCommand)
def ask_command(
    text: Annotated[
        str,
        typer.Argument(
            help="The question, one line of at most 300 characters; with --final, your final thoughts (at most 1000).",
            show_default=False,
        ),
    ],
    duel_id: Annotated[
        str | None,
        typer.Option("--duel-id", help="The duel (default: the only active duel of the debate dir)."),
    ] = None,
    to: Annotated[int | None, typer.Option("--to", help="The seat to ask (1, 2, …).")] = None,
    final: Annotated[
        bool,
        typer.Option("--final", help="Add final thoughts to the closed duel instead: shown in its report."),
    ] = False,
    name: Annotated[
        str | None, typer.Option("--name", help="Your name, as the record shows it (default: your login name).")
    ] = None,
    debate_dir_: Annotated[str | None, typer.Option("--debate-dir", help=_DEBATE_DIR_HELP)] = None,
    store: Annotated[str | None, typer.Option("--store", help=_STORE_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
) -> None:
    """Ask a seat of a running duel a question, as its audience; or, with --final, add final thoughts once it is closed.

    Two questions are admitted a round, once the opening round is written; each is due at the addressed seat's next turn, which must answer it. The record keeps the questions and the final thoughts; the report shows them. Final thoughts change no outcome.

    Exit 0 when recorded; 1 when refused: QUESTIONS_FULL (the round has its two; the duel has its ten final thoughts), QUESTION_REFUSED (before the first round ends, the seat has no turn left, final thoughts before the close or a second time by the same name), DUEL_CLOSED; 2 on wrong flags.
    """
    from ..configuration import Flags
    from ..errors import invalid_argument
    from ..review.watch import pick_duel

    try:
        if final and to is not None:
            raise invalid_argument("--final takes no --to: final thoughts are about the whole duel")
        if not final and to is None:
            raise invalid_argument("say which seat to ask with --to SEAT (or give final thoughts with --final)")
        config = load(Flags(debate_dir_, store))
        service = open_service(config.debate_dir, store=config.store)
        closed_use = "add final thoughts to a closed one" if final else None  # questions go to a running duel
        duel = pick_duel(service, duel_id, closed_use=closed_use)
        by = name or login_name()
        if to is None:  # --final, as checked above
            result = service.add_final_thoughts(duel, by=by, text=text)
        else:
            result = service.ask(duel, to_seat=to, question=text, by=by)
    except DuelError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        typer.echo(printable_json({"success": True, **result.to_dict()}))
        return
    if result.question is None:
        typer.echo(
            printable(f"final thoughts recorded in {result.debate_path} (shown in its report; they change no outcome)")
        )
        return
    asked = result.question
    typer.echo(
        f"Q{asked['id']} asked after round {asked['round']}: seat {asked['to']} answers it in turn {asked['due_turn']}"
    )


@app.command("list", cls=PlainHelpCommand)
def list_command(
    debate_dir_: Annotated[str | None, typer.Option("--debate-dir", help=_DEBATE_DIR_HELP)] = None,
    store: Annotated[str | None, typer.Option("--store", help=_STORE_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON list on stdout.")] = False,
) -> None:
    """List the duels of a debate dir: status, outcome, participants, turns, last activity.

    SILENT flags an open duel in which nobody has been seen for a lease: it will not end by itself.

    Exit 0, or 1 when a duel's state cannot be read (it is listed as unreadable).
    """
    from ..configuration import Flags
    from ..review.listing import UnreadableDuel, list_duels, table

    try:
        config = load(Flags(debate_dir_, store))
        root = config.debate_dir
        rows = list_duels(open_service(root, store=config.store))
    except DuelError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        typer.echo(printable_json([row.to_dict() for row in rows]))
    elif rows:
        typer.echo(printable(table(rows)))
    else:
        typer.echo(printable(f"no duels in {os.path.abspath(root)}"), err=True)
    raise typer.Exit(1 if any(isinstance(row, UnreadableDuel) for row in rows) else 0)


@app.command("stats", cls=PlainHelpCommand)
def stats_command(
    debate_dir_: Annotated[
        str | None, typer.Argument(metavar="DEBATE_DIR", help=_DEBATE_DIR_HELP, show_default=False)
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Study the duels of a debate dir together: outcomes, turns and cost per outcome, how often the debate changed what the openings alone would have decided, repairs and fabricated citations per model.

    Every duel artifact under the folder is read as `duel report` reads it. What is not recorded (cost without the debate dir's event log, fabricated citations without a verification sidecar) is said to be unknown, never 0.

    Exit 0, or 1 when an artifact cannot be read (it is named) or the folder does not exist.
    """
    from ..configuration import Flags
    from ..review.stats import read_stats, table

    try:
        stats = read_stats(load(Flags(debate_dir_)).debate_dir)
    except DuelError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        typer.echo(printable_json(stats.to_dict()))
    else:
        typer.echo(printable(table(stats)))
    raise typer.Exit(1 if stats.unreadable else 0)


@app.command("abandon", cls=PlainHelpCommand)
def abandon_command(
    duel_id: Annotated[str, typer.Argument(help="The duel to close (`duel list` shows the ids).")],
    reason: Annotated[str, typer.Option("--reason", help="Why it is abandoned: recorded in the artifact.")],
    participant_id: Annotated[
        str | None,
        typer.Option(
            "--participant-id",
            help="Abandon as this participant, with its token in $DUEL_PARTICIPANT_TOKEN (default: as the owner "
            "of the debate dir).",
        ),
    ] = None,
    debate_dir_: Annotated[str | None, typer.Option("--debate-dir", help=_DEBATE_DIR_HELP)] = None,
    store: Annotated[str | None, typer.Option("--store", help=_STORE_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the closed duel's status on stdout.")] = False,
) -> None:
    """Close a duel nobody will finish as INVALIDATED, with the reason recorded, whoever holds the floor.

    Any of its participants may (with its token), or the owner of the debate dir.
    """
    from ..configuration import Flags
    from ..coordination.results import Seat

    token = os.environ.get("DUEL_PARTICIPANT_TOKEN", "")
    seat = None if participant_id is None else Seat(duel_id, participant_id, token)
    try:
        config = load(Flags(debate_dir_, store))
        status = open_service(config.debate_dir, store=config.store).abandon(duel_id, reason=reason, seat=seat)
    except DuelError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        typer.echo(printable_json({"success": True, **status.to_dict()}))
    typer.echo(printable(f"duel: {duel_id} closed {status.duel.outcome}: {status.duel.reason}"), err=True)
    typer.echo(review_line(status.duel.debate_path), err=True)


store_app = typer.Typer(cls=PlainHelpGroup, help="The PostgreSQL store: duels across machines.", no_args_is_help=True)
app.add_typer(store_app, name="store")


@store_app.command("init", cls=PlainHelpCommand)
def store_init_command(
    store: Annotated[str | None, typer.Option("--store", help=_STORE_HELP)] = None,
) -> None:
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


@app.command("pull", cls=PlainHelpCommand)
def pull_command(
    duel_id: Annotated[str, typer.Option("--duel-id", help="The duel whose artifact to write.")],
    debate_dir_: Annotated[str | None, typer.Option("--debate-dir", help=_DEBATE_DIR_HELP)] = None,
    store: Annotated[str | None, typer.Option("--store", help=_STORE_HELP)] = None,
) -> None:
    """Write a duel's artifact from the store into the debate dir, as every participant has it (to review or commit)."""
    from ..configuration import Flags

    try:
        config = load(Flags(debate_dir_, store))
        path = open_service(config.debate_dir, store=config.store).pull(duel_id)
    except DuelError as exc:
        fail(exc)
    typer.echo(printable(path))


config_app = typer.Typer(
    cls=PlainHelpGroup,
    help="The layered configuration: defaults, user, project and local files, environment, flags.",
    no_args_is_help=True,
)
app.add_typer(config_app, name="config")


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
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    lineup: Annotated[
        list[str] | None,
        typer.Option("--lineup", help="Also layer this file (as `duel panel --lineup` does) above duel.local.toml."),
    ] = None,
) -> None:
    """Print the configuration commands run with here, each value with the layer that set it.

    Layers, lowest first, each overriding the one before key by key: the built-in defaults; $XDG_CONFIG_HOME/duel/config.toml (else ~/.config/duel/config.toml); duel.toml, then duel.local.toml, at the project root (the nearest folder up from here holding either, within the git work tree); --lineup files; $DUEL_DIR and $DUEL_STORE; a command's own flags.
    """
    from ..configuration import load_config
    from ..participant.personas import available
    from .config_view import render_text, to_json

    try:
        config = load_config(Path.cwd(), os.environ, extra=[Path(path) for path in lineup or ()])
    except DuelError as exc:
        fail(exc, as_json=as_json)
    personas = available(config.personas)
    if as_json:
        typer.echo(printable_json(to_json(config, personas)))
    else:
        typer.echo(printable(render_text(config, personas)), nl=False)


@app.command("mcp", cls=PlainHelpCommand)
def mcp_command(
    target: Annotated[
        str | None,
        typer.Option("--target", help="The Markdown document to debate (default: the one duel_join names)."),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="Your display name (default: the one duel_join names).")
    ] = None,
    harness: Annotated[str, typer.Option("--harness", help="The harness the agent runs in.")] = "mcp",
    model_id: Annotated[
        str, typer.Option("--model-id", help="The agent's model id, as the record names it.")
    ] = "unknown-model",
    topic: Annotated[
        str | None, typer.Option("--topic", help="The duel's topic (default: the document's title).")
    ] = None,
    role: Annotated[str | None, typer.Option("--role", help=ROLE_HELP)] = None,
    persona: Annotated[str | None, typer.Option("--persona", help="The persona this seat plays.")] = None,
    verify: Annotated[
        bool, typer.Option("--verify", help="Open every URL a turn cites before it is appended, as duel join --verify.")
    ] = False,
    allow_private_hosts: _AllowPrivateHosts = False,
    voter: Annotated[
        list[str] | None,
        typer.Option(
            "--voter",
            help="With --verify: a model that judges the claims of the sources this seat's turns challenge (up to "
            "3 times; default: none, mechanical checks only).",
        ),
    ] = None,
    wait_seconds: Annotated[
        float,
        typer.Option(
            "--wait-seconds",
            min=1,
            max=3600,
            help="The longest one duel_wait blocks before it answers changed: false (keep it under the harness's "
            "tool timeout).",
        ),
    ] = 45.0,
    debate_dir_: Annotated[str | None, typer.Option("--debate-dir", help=_DEBATE_DIR_HELP)] = None,
    store: Annotated[str | None, typer.Option("--store", help=_STORE_HELP)] = None,
) -> None:
    """Serve one seat to an agent harness over the Model Context Protocol (stdio).

    Tools: duel_join, duel_status, duel_rules, duel_read, duel_claim, duel_append, duel_commit_opening (sealed openings), duel_wait, duel_release, duel_close. Resources: duel://artifact, duel://source, duel://rules.

    The participant token stays in this process (and its owner-only stash, so a restarted server resumes the seat); the lease is refreshed while the agent holds the floor. A turn's Source Challenges are fetched and ruled on before the floor passes on, as duel join does. SIGTERM, SIGHUP or a closed input give the floor back and keep the seat. Set a harness up with `duel skill --harness … --mcp --install`.
    """
    from ..configuration import Flags
    from ..mcp_server.server import serve

    try:
        config = load(Flags(debate_dir_, store))
        check_usable(config)  # said now, but nothing is created (nor the store opened) before the first call
        settings = config.settings()
        target = os.path.abspath(target) if target else None  # as the folder the server started in names it
        checker: CitationChecker | None = None
        if voter and not verify:
            from ..errors import invalid_argument

            raise invalid_argument("--voter needs --verify")
        if verify:
            from ..participant.checking import citation_checker

            checker = citation_checker(voter or [], allow_private_hosts=allow_private_hosts)
            for line in checker.preflight():  # a bad key or model is said now, not at the first challenge
                typer.echo(printable(line), err=True)
    except DuelError as exc:
        fail(exc)

    def open_seat() -> AgentSeat:
        """The seat, at the first tool call: ``initialize`` and ``tools/list`` load none of its modules."""
        from ..mcp_server.seat import AgentSeat, SeatDefaults

        defaults = SeatDefaults(
            target=target,
            name=name,
            harness=harness,
            model=model_id,
            topic=topic,
            settings=settings,
            role=role,
            persona=persona,
            wait_seconds=wait_seconds,
        )
        service = open_service(config.debate_dir, store=config.store)
        return AgentSeat(service, defaults, checker, allow_private_hosts=allow_private_hosts)

    try:
        serve(open_seat)
    except KeyboardInterrupt:
        typer.echo("duel mcp: interrupted: the floor is released and the seat kept; start it again to resume", err=True)
        # The SDK reads standard input in a worker thread no signal wakes, and Python waits for it at exit
        # until the client closes its end: the seat is stopped already, so the process ends here.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)
