"""The commands that take part in a duel: ``duel join``, ``duel panel``, ``duel demo``, ``duel ask``
and ``duel abandon``. Each parses, calls the library (mostly :mod:`rp1_duel.participant`), and prints.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from ..errors import EXIT_INTERRUPTED, DuelError
from ..printable import printable, printable_json
from ..settings import CHAIR_HELP, ON_FABRICATION_HELP, ROLE_HELP, SEALED_OPENINGS_HELP, SIGNER_HELP
from ..vocabulary import ErrorCode, Role
from .shared import (
    AllowPrivateHostsOption,
    DebateDirOption,
    LeaseSecondsOption,
    MaxTurnsOption,
    PeerWaitSecondsOption,
    QuietOption,
    StoreOption,
    SummaryJsonOption,
    TargetOption,
    TurnTimeoutSecondsOption,
    default_or_config,
    fail,
    load,
    login_name,
    model_help,
    open_service,
    output_closed,
    review_line,
    service_for,
)

if TYPE_CHECKING:
    from ..configuration import Config
    from ..participant import (
        ConsoleReporter,
        Duelist,
        JoinFlags,
        PanelPlan,
        PanelSeat,
        ParticipantResult,
        PreparedJoin,
        SeatRun,
    )

__all__ = ["abandon_command", "ask_command", "demo_command", "join_command", "panel_command"]

RESUME = "the floor is released and the seat kept; run the same command to resume"
AUDIENCE_HELP = "take no seat, ask a seat a question after each round, and give final thoughts at the close"

# -- duel join's options -------------------------------------------------------------------------------

_Model = Annotated[
    str | None,
    typer.Option(help=model_help("claude-…, gpt-…, a local model, `human` or `scripted:DIR`", "model.model")),
]
_Provider = Annotated[str | None, typer.Option(help=model_help("Force anthropic or openai", "model.provider"))]
_BaseUrl = Annotated[
    str | None,
    typer.Option(
        "--base-url", help=model_help("An OpenAI-compatible server (Ollama, vLLM, llama.cpp)", "model.base_url")
    ),
]
_Persona = Annotated[
    str | None,
    typer.Option(
        help="Who the model plays: a named persona (skeptic, pragmatist, domain-expert, users-advocate, or one "
        "of the configuration's; `duel config show` lists them), or any text."
    ),
]
_Chair = Annotated[bool, typer.Option("--chair", help=f"{CHAIR_HELP}; fixed by the join that creates the duel.")]
_SealedOpenings = Annotated[
    bool,
    typer.Option("--sealed-openings", help=f"{SEALED_OPENINGS_HELP}; fixed by the join that creates the duel."),
]
_OnFabrication = Annotated[
    str | None,
    typer.Option("--on-fabrication", help=f"{ON_FABRICATION_HELP}; fixed by the join that creates the duel."),
]
_SigningKey = Annotated[
    str | None,
    typer.Option(
        "--signing-key",
        envvar="DUEL_SIGNING_KEY",
        help="Sign every turn with this SSH key: a private key file, or a public key whose private half is in "
        "ssh-agent (checked with `duel validate --allowed-signers`).",
    ),
]
_Signer = Annotated[
    str | None, typer.Option("--signer", envvar="DUEL_SIGNER", help=SIGNER_HELP[0].upper() + SIGNER_HELP[1:] + ".")
]
_Reasoning = Annotated[
    str | None,
    typer.Option(
        "--reasoning",
        help="low, medium or high: how hard the model thinks before writing (Anthropic's effort, "
        "OpenAI's reasoning_effort; default: model.reasoning in the configuration, else the "
        "model's own).",
    ),
]
_MaxOutputTokens = Annotated[
    int | None,
    typer.Option(
        "--max-output-tokens",
        help="The output ceiling of every request, thinking included (default: model.max_output_tokens in "
        "the configuration, else 16000, and none at all on a --base-url server, whose context window "
        "decides; sent there as max_tokens).",
    ),
]
_Verify = Annotated[
    bool,
    typer.Option(
        "--verify",
        help="Open the URLs each draft cites before appending it (a dead link or a quote not on its "
        "page goes back for repair), and those of each peer turn, telling the model.",
    ),
]
_Voter = Annotated[
    list[str] | None,
    typer.Option(
        "--voter",
        help="With --verify: a model that judges the claims of the peer's citations (up to 3 times; "
        "default: none, mechanical checks only).",
    ),
]
_BudgetUsd = Annotated[
    float | None,
    typer.Option(
        "--budget-usd",
        help="Stop this seat (exit 4) before a model request that could take its spending in this duel past "
        "this many dollars, by the price table ($DUEL_PRICES).",
    ),
]
_ConfigFile = Annotated[
    list[str] | None,
    typer.Option("--config", help="One more configuration file, above duel.local.toml (duel panel passes its lineup)."),
]


def join_command(
    target: TargetOption,
    topic: Annotated[str | None, typer.Option(help="Topic (default: the document's first heading).")] = None,
    debate_dir: DebateDirOption = None,
    store: StoreOption = None,
    name: Annotated[str | None, typer.Option(help="Your display name (default: from the provider).")] = None,
    model: _Model = None,
    provider: _Provider = None,
    base_url: _BaseUrl = None,
    persona: _Persona = None,
    position: Annotated[str | None, typer.Option(help="The position it starts from.")] = None,
    max_turns: MaxTurnsOption = None,
    lease_seconds: LeaseSecondsOption = None,
    peer_wait_seconds: PeerWaitSecondsOption = None,
    turn_timeout_seconds: TurnTimeoutSecondsOption = None,
    seats: Annotated[int | None, typer.Option(help=default_or_config("seats"))] = None,
    chair: _Chair = False,
    sealed_openings: _SealedOpenings = False,
    on_fabrication: _OnFabrication = None,
    role: Annotated[str, typer.Option(help=f"{ROLE_HELP}; or audience: {AUDIENCE_HELP}")] = Role.PANELIST,
    signing_key: _SigningKey = None,
    signer: _Signer = None,
    reasoning: _Reasoning = None,
    max_output_tokens: _MaxOutputTokens = None,
    verify: _Verify = False,
    allow_private_hosts: AllowPrivateHostsOption = False,
    voter: _Voter = None,
    budget_usd: _BudgetUsd = None,
    config_file: _ConfigFile = None,
    as_json: SummaryJsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Take part in a duel about a document: join, debate turn by turn, close.

    Run it in two terminals, one per participant. Ctrl-C gives the floor back and keeps the seat: run the same command again to resume.
    """
    given = dict(locals())  # every option under its JoinFlags name; taken before the import below adds one
    from ..participant import JoinFlags

    _join(JoinFlags(**given))


def _join(flags: JoinFlags) -> NoReturn:
    """``duel join``, its flags parsed: prepare, run the seat (or the audience member), say how it ended."""
    from ..participant import STATE_COMPLETED, ConsoleReporter, Duelist, prepare_join

    duelist = None
    try:
        prepared = prepare_join(flags, cwd=Path.cwd(), env=os.environ)
        for line in [] if flags.quiet else prepared.notices:
            typer.echo(printable(f"[{prepared.name}] {line}"), err=True)  # named before the first request or write
        if flags.role == Role.AUDIENCE:
            _audience(prepared, flags)
        reporter = ConsoleReporter(prepared.name, quiet=flags.quiet)
        duelist = Duelist(prepared.participant, prepared.provider, reporter, checker=prepared.checker)
        result = _run_seat(duelist, reporter, prepared.name)
    except DuelError as exc:
        if duelist is not None:
            reporter.end_live_line()
            duelist.interrupt()  # never leave a lease behind on an error
            if duelist.seat is not None and duelist.result.outcome is None:
                again = "with a larger --budget-usd " if exc.code == ErrorCode.BUDGET_EXCEEDED else ""
                exc = DuelError(exc.code, f"{exc.message}; your seat is kept: run the same command {again}to resume")
        fail(exc, as_json=flags.as_json)
    if flags.as_json:  # success as the exit code says it, as a failure's {"success": false, "error": …} does
        typer.echo(printable_json({"success": result.state == STATE_COMPLETED, **result.to_dict()}))
    # With --json the object carries the revision and its patch: not said again, so a panel or the demo, whose seats
    # run with --json, says the agreed revision once, in its own summary.
    for line in [] if flags.quiet or flags.as_json or result.agreed is None else result.agreed.lines():
        typer.echo(printable(f"[{prepared.name}] {line}"), err=True)  # after the outcome line the reporter wrote
    if result.state != STATE_COMPLETED:  # even with --quiet: exit 1 says why
        typer.echo(printable(f"duel: {result.outcome}: {result.reason or 'no reason recorded'}"), err=True)
    raise typer.Exit(0 if result.state == STATE_COMPLETED else 1)


def _run_seat(duelist: Duelist, reporter: ConsoleReporter, name: str) -> ParticipantResult:
    """The seat, run to its end; a stop (Ctrl-C, a signal, a closed output) gives the floor back and keeps it."""
    try:
        return duelist.run()
    except KeyboardInterrupt:
        reporter.end_live_line()
        duelist.interrupt()
        typer.echo(f"[{name}] interrupted: {RESUME}", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except BrokenPipeError:  # its reader went away (`| head`, `| less` then q): a stop, as Ctrl-C is
        duelist.interrupt()
        raise typer.Exit(output_closed(f"[{name}] output closed: {RESUME}")) from None


def _audience(prepared: PreparedJoin, flags: JoinFlags) -> NoReturn:
    """``duel join --role audience``: a model in the audience, until the duel closes (section 4, "The audience")."""
    from ..participant import AudienceMember

    def say(line: str) -> None:
        if not flags.quiet:
            typer.echo(printable(f"[{prepared.name}] {line}"), err=True)

    config = prepared.config
    service = open_service(config.debate_dir, store=config.store)
    target = os.path.abspath(flags.target)
    try:
        run = AudienceMember(service, prepared.provider, name=prepared.name, target=target, topic=flags.topic, say=say)
        done = run.run()
    except KeyboardInterrupt:
        say("interrupted: run the same command to come back (no question is asked twice in a round)")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if flags.as_json:
        typer.echo(printable_json({"success": True, **done.to_dict()}))
    raise typer.Exit(0)


# -- duel panel's options ------------------------------------------------------------------------------

_Lineup = Annotated[
    str | None,
    typer.Option(
        "--lineup",
        help="A TOML file of \\[panel.seats.1], \\[panel.seats.2]…: each seat's name, provider, model, "
        "persona and position (default: the lineup in duel.toml).",
    ),
]
_PanelTopic = Annotated[
    str | None, typer.Option(help="Topic (default: panel.topic in the lineup, else the document's first heading).")
]


def panel_command(
    target: TargetOption,
    lineup: _Lineup = None,
    topic: _PanelTopic = None,
    debate_dir: DebateDirOption = None,
    store: StoreOption = None,
    max_turns: MaxTurnsOption = None,
    lease_seconds: LeaseSecondsOption = None,
    peer_wait_seconds: PeerWaitSecondsOption = None,
    turn_timeout_seconds: TurnTimeoutSecondsOption = None,
    sealed_openings: Annotated[bool, typer.Option("--sealed-openings", help=f"{SEALED_OPENINGS_HELP}.")] = False,
    on_fabrication: Annotated[str | None, typer.Option("--on-fabrication", help=f"{ON_FABRICATION_HELP}.")] = None,
    as_json: SummaryJsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Run every seat of a panel from one command: one `duel join` process a seat, each with its own model.

    The seats join in lineup order and their progress lines are shown as they come. Ctrl-C stops every seat (each gives the floor back and keeps its seat): run the same command to resume.
    """
    from ..configuration import Flags, destinations
    from ..participant import checked_on_fabrication, exit_code, lineup_seats, panel_summary, plan_panel
    from ..record import agreed_ending

    extra = [os.path.abspath(lineup)] if lineup else []
    try:
        flags = Flags(
            debate_dir=debate_dir,
            store=store,
            max_turns=max_turns,
            lease_seconds=lease_seconds,
            peer_wait_seconds=peer_wait_seconds,
            turn_timeout_seconds=turn_timeout_seconds,
            sealed_openings=sealed_openings or None,
            on_fabrication=checked_on_fabrication(on_fabrication),
        )
        config = load(flags, extra)
        seats = lineup_seats(config)
        for line in [] if quiet else destinations(config):
            typer.echo(printable(f"duel panel: {line}"), err=True)
        plan = plan_panel(config, seats, topic=topic, config_files=extra, quiet=quiet)
        runs = _run_seats(os.path.abspath(target), seats, plan, config)
    except DuelError as exc:
        fail(exc, as_json=as_json)
    shown = panel_summary(runs)
    if as_json:
        typer.echo(printable_json(shown))
    if shown["debate_path"]:
        typer.echo(printable(f"duel panel: {shown['outcome'] or 'not ended'} → {shown['debate_path']}"), err=True)
        for line in agreed_ending(shown["debate_path"]).lines():
            typer.echo(printable(line), err=True)
        typer.echo(printable(f"review:     duel report {shown['debate_path']} --format html -o report.html"), err=True)
    raise typer.Exit(exit_code(runs))


def _run_seats(target: str, seats: list[PanelSeat], plan: PanelPlan, config: Config) -> list[SeatRun]:
    """Every seat's ``duel join`` process, run to its end; Ctrl-C stops them all (each keeps its seat)."""
    from ..participant import run_seats

    service = open_service(config.debate_dir, store=config.store)
    try:
        return run_seats(target, shared=plan.shared, seats=seats, service=service, store=config.store, topic=plan.topic)
    except KeyboardInterrupt:
        typer.echo(
            "duel panel: interrupted: every seat gave the floor back and kept its seat; run the same command to resume",
            err=True,
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None


def demo_command(
    directory: Annotated[str, typer.Option("--dir", help="Where the demo's document and debates go.")] = "duel-demo",
) -> None:
    """A whole duel with no API key: two scripted participants, real processes, real service."""
    from ..participant import run_demo

    raise typer.Exit(run_demo(directory))


_Question = Annotated[
    str,
    typer.Argument(
        help="The question, one line of at most 300 characters; with --final, your final thoughts (at most 1000).",
        show_default=False,
    ),
]
_AskDuelId = Annotated[
    str | None,
    typer.Option("--duel-id", help="The duel (default: the only active duel of the debate dir)."),
]
_Final = Annotated[
    bool,
    typer.Option("--final", help="Add final thoughts to the closed duel instead: shown in its report."),
]
_AskName = Annotated[
    str | None, typer.Option("--name", help="Your name, as the record shows it (default: your login name).")
]


def ask_command(
    text: _Question,
    duel_id: _AskDuelId = None,
    to: Annotated[int | None, typer.Option("--to", help="The seat to ask (1, 2, …).")] = None,
    final: _Final = False,
    name: _AskName = None,
    debate_dir: DebateDirOption = None,
    store: StoreOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
) -> None:
    """Ask a seat of a running duel a question, as its audience; or, with --final, add final thoughts once it is closed.

    Two questions are admitted a round, once the opening round is written; each is due at the addressed seat's next turn, which must answer it. The record keeps the questions and the final thoughts; the report shows them. Final thoughts change no outcome.

    Exit 0 when recorded; 1 when refused: QUESTIONS_FULL (the round has its two; the duel has its ten final thoughts), QUESTION_REFUSED (before the first round ends, the seat has no turn left, final thoughts before the close or a second time by the same name), DUEL_CLOSED; 2 on wrong flags.
    """
    from ..errors import invalid_argument
    from ..review import pick_duel

    try:
        if final and to is not None:
            raise invalid_argument("--final takes no --to: final thoughts are about the whole duel")
        if not final and to is None:
            raise invalid_argument("say which seat to ask with --to SEAT (or give final thoughts with --final)")
        service = service_for(debate_dir, store)
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
    elif result.question is None:
        typer.echo(
            printable(f"final thoughts recorded in {result.debate_path} (shown in its report; they change no outcome)")
        )
    else:
        asked = result.question
        typer.echo(
            f"Q{asked['id']} asked after round {asked['round']}: seat {asked['to']} answers it in turn "
            f"{asked['due_turn']}"
        )


_ParticipantId = Annotated[
    str | None,
    typer.Option(
        "--participant-id",
        help="Abandon as this participant, with its token in $DUEL_PARTICIPANT_TOKEN (default: as the owner "
        "of the debate dir).",
    ),
]


def abandon_command(
    duel_id: Annotated[str, typer.Argument(help="The duel to close (`duel list` shows the ids).")],
    reason: Annotated[str, typer.Option("--reason", help="Why it is abandoned: recorded in the artifact.")],
    participant_id: _ParticipantId = None,
    debate_dir: DebateDirOption = None,
    store: StoreOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the closed duel's status on stdout.")] = False,
) -> None:
    """Close a duel nobody will finish as INVALIDATED, with the reason recorded, whoever holds the floor.

    Any of its participants may (with its token), or the owner of the debate dir.
    """
    from ..coordination import Seat

    token = os.environ.get("DUEL_PARTICIPANT_TOKEN", "")
    seat = None if participant_id is None else Seat(duel_id, participant_id, token)
    try:
        status = service_for(debate_dir, store).abandon(duel_id, reason=reason, seat=seat)
    except DuelError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        typer.echo(printable_json({"success": True, **status.to_dict()}))
    typer.echo(printable(f"duel: {duel_id} closed {status.duel.outcome}: {status.duel.reason}"), err=True)
    typer.echo(review_line(status.duel.debate_path), err=True)
