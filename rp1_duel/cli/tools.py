"""``duel tools …``: the lock service as one-shot JSON commands for agents and scripts.

Deliberately stdlib ``argparse`` rather than typer: this path runs once per agent
action, must answer bad flags with a JSON envelope (exit 2), and must start fast
(typer's option coercion imports pydantic, ~100 ms here).
"""

from __future__ import annotations

import argparse
import atexit
import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ..configuration import Config, Flags, load_config
from ..errors import DuelError, invalid_argument
from ..printable import printable_json
from ..settings import (
    CHAIR_HELP,
    ON_FABRICATION,
    ON_FABRICATION_HELP,
    ROLE_HELP,
    SEALED_OPENINGS_HELP,
    SETTINGS,
    SIGNER_HELP,
    STORE_ENV,
)
from ..vocabulary import ROLES, ErrorCode, EventType, Role
from .arguments import store_waits_to_stderr, undecodable

if TYPE_CHECKING:
    from ..coordination import DuelService, Seat, StatusResult

__all__ = ["OPS", "build_parser", "main", "usage_by_participant"]

ENVELOPE = {"tool": "duel"}
# Turn and summary files are read up to this much (/dev/zero must not eat memory); the
# service judges what it receives against its own, smaller limits (64 KiB each).
INPUT_MAX_BYTES = 1024 * 1024
WAIT_NICENESS = 19  # a wait takes the lowest CPU priority (docs/protocol.md section 4, "wait")

# op -> (help, [(flag, kwargs)]); docs/protocol.md section 2, "Flags of duel tools".
_TOKEN = ("--participant-token", {"help": "your secret token from join [env: DUEL_PARTICIPANT_TOKEN]"})
_DUEL = ("--duel-id", {"required": True})
_PID = ("--participant-id", {"required": True})
_LEASE = ("--lease-token", {"help": "the token claim-lock granted [env: DUEL_LEASE_TOKEN]"})
_DIR = (
    "--debate-dir",
    {"help": "shared debate dir [default: $DUEL_DIR, else debate_dir in the configuration, else ./debates]"},
)
_SIGNING_KEY = (
    "--signing-key",
    {
        "help": "sign with this SSH key: a private key file, or a public key whose private half is in ssh-agent "
        "[env: DUEL_SIGNING_KEY]"
    },
)
_STORE = (
    "--store",
    {
        "help": "keep duels in a PostgreSQL database, for duels across machines: a postgresql:// URL "
        "[env: DUEL_STORE; default: store in the configuration, else the debate dir]"
    },
)
OPS: dict[str, tuple[str, list[tuple[str, dict[str, Any]]]]] = {
    "join": (
        "join, create or resume the duel about a source and topic",
        [
            ("--target", {"help": "path of the source (.md); a relative one is made absolute"}),
            ("--topic", {"help": "topic [default: the source's first heading]"}),
            _DIR,
            ("--participant-name", {"help": "your display name"}),
            ("--harness", {"default": "unknown"}),
            ("--model-id", {"default": "unknown-model", "help": "your model id, honestly"}),
            _TOKEN,
            # No default here: not given, the configuration's [duel] table (else the built-in default) decides.
            *((setting.flag, {"type": int, "help": setting.help_with_range}) for setting in SETTINGS.values()),
            ("--chair", {"action": "store_true", "help": CHAIR_HELP}),
            ("--sealed-openings", {"action": "store_true", "help": SEALED_OPENINGS_HELP}),
            ("--on-fabrication", {"choices": ON_FABRICATION, "help": ON_FABRICATION_HELP}),
            ("--role", {"choices": ROLES, "default": Role.PANELIST, "help": ROLE_HELP}),
            ("--signer", {"help": SIGNER_HELP}),
            ("--persona", {"help": "the persona your model plays, recorded for reviewers (a name)"}),
        ],
    ),
    "status": (
        "show a duel; with your id and token it also marks you as present",
        [
            ("--duel-id", {}),
            ("--target", {}),
            ("--topic", {}),
            _DIR,
            ("--participant-id", {"help": "adds your next_step"}),
            _TOKEN,
        ],
    ),
    "claim-lock": (
        "ask for the lease; a refusal is an answer (acquired: false)",
        [
            _DUEL,
            _PID,
            _TOKEN,
            ("--for-timeout", {"action": "store_true"}),
            _DIR,
        ],
    ),
    "refresh-lock": ("extend your live lease by lease_seconds", [_DUEL, _PID, _TOKEN, _LEASE, _DIR]),
    "release-lock": (
        "release your lease, or close the duel",
        [
            _DUEL,
            _PID,
            _TOKEN,
            _LEASE,
            ("--close", {"action": "store_true"}),
            ("--outcome", {}),
            ("--reason", {}),
            ("--summary-file", {}),
            _SIGNING_KEY,
            _DIR,
        ],
    ),
    "append": (
        "append your turn; exit 3 with every violation if it breaks a rule",
        [
            _DUEL,
            _PID,
            _TOKEN,
            _LEASE,
            ("--turn-file", {"default": "-", "help": "a file, or - for stdin"}),
            ("--release", {"action": "store_true"}),
            _SIGNING_KEY,
            _DIR,
        ],
    ),
    "commit-opening": (
        (
            "commit your sealed opening (next_step commit_opening): checked, only its SHA-256 kept; append the "
            "same file once every seat has committed and the floor is yours"
        ),
        [_DUEL, _PID, _TOKEN, ("--turn-file", {"default": "-", "help": "a file, or - for stdin"}), _DIR],
    ),
    "seal": (
        "sign the closed duel's ending with your seat's SSH key",
        [_DUEL, _PID, _TOKEN, _SIGNING_KEY, _DIR],
    ),
    "wait": (
        "block until your next_step or the duel changes (at a lower CPU priority); your token keeps your seat",
        [
            _DUEL,
            _PID,
            _TOKEN,
            ("--timeout", {"type": float, "default": 60.0}),
            ("--next-step", {"help": "the next_step you last saw: return at once if it already changed"}),
            _DIR,
        ],
    ),
}


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout, as wide as the terminal. argparse builds a formatter for every
    flag added and sizes it with shutil, whose import (bz2, lzma and zlib with it) costs more
    start-up than the parser; this reads what shutil.get_terminal_size would."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=_columns() - 2)


def _columns() -> int:
    """$COLUMNS, else the width of the terminal on stdout, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size().columns
        except (ValueError, OSError):
            columns = 0
    return columns or 80


class _Parser(argparse.ArgumentParser):
    """argparse that reports wrong flags as a JSON envelope (exit 2), not a usage dump."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.split()[-1] if self.prog.split()[-1] in OPS else None
        fail(command, invalid_argument(message))


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every op, or of ``only`` (each op's flags cost start-up time)."""
    parser = _Parser(
        prog="duel tools",
        description="The lock service as one-shot JSON commands (one JSON object on stdout).",
        formatter_class=_Formatter,
    )
    commands = parser.add_subparsers(dest="op", metavar="OP", parser_class=_Parser)
    for op, (help_text, flags) in OPS.items():
        if only is not None and op != only:
            continue
        sub = commands.add_parser(op, help=help_text, description=help_text, formatter_class=_Formatter)
        for flag, kwargs in [*flags, _STORE]:
            sub.add_argument(flag, **kwargs)
    return parser


def print_envelope(envelope: dict[str, Any]) -> None:
    """Write the envelope as one JSON line on stdout, flushed."""
    sys.stdout.write(printable_json(envelope) + "\n")
    sys.stdout.flush()


def fail(command: str | None, error: DuelError) -> NoReturn:
    """Print the failure envelope of ``command`` and exit with the error's code."""
    print_envelope({"success": False, **ENVELOPE, "command": command, "error": error.to_dict()})
    sys.exit(error.exit_code)


def read_input(path: str, flag: str, limit: int) -> bytes:
    """A file's bytes (or stdin's, for ``-``), refused past ``limit``: ``/dev/zero`` or an
    endless pipe costs at most that much memory."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with open(path, "rb") as handle:
                data = handle.read(limit + 1)
    except OSError as exc:
        raise invalid_argument(f"cannot read {flag} {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise invalid_argument(f"{flag} {path} is larger than {limit // 1024} KiB")
    return data


def run(op: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run one op through the library; its result's ``to_dict()`` is the envelope's data."""
    from ..coordination import DuelService, Seat

    settings: dict[str, Any] = {name: getattr(args, name) for name in SETTINGS} if op == "join" else {}
    if op == "join":
        settings["sealed_openings"] = args.sealed_openings or None
        settings["on_fabrication"] = args.on_fabrication
    config = load_config(Path.cwd(), os.environ, Flags(debate_dir=args.debate_dir, store=args.store, **settings))
    service = DuelService(config.debate_dir, store=config.store)
    service.on_store_wait = store_waits_to_stderr("duel tools")
    token = getattr(args, "participant_token", None) or os.environ.get("DUEL_PARTICIPANT_TOKEN")
    if op == "join":
        return _join(service, args, config, token)
    if op == "status":
        # $DUEL_PARTICIPANT_TOKEN only counts with --participant-id: a plain status stays read-only.
        status = service.status(
            args.duel_id,
            target=args.target and os.path.abspath(args.target),
            topic=args.topic,
            participant_id=args.participant_id,
            participant_token=token if args.participant_id else args.participant_token,
        )
        return {**status.to_dict(), "usage": usage_by_participant(service, status)}
    if op == "wait":
        return service.wait(
            args.duel_id, args.participant_id, args.timeout, next_step=args.next_step, participant_token=token
        ).to_dict()
    return _seated_op(service, op, args, Seat(args.duel_id, args.participant_id, token or ""))


def in_no_hurry() -> None:
    """Lower this process's CPU priority: on a machine busy with many duels, the processes that claim, append
    and release get the CPUs before the ones that only wait; on an idle machine nothing changes."""
    if hasattr(os, "nice"):  # POSIX only
        os.nice(WAIT_NICENESS)


def _seated_op(service: DuelService, op: str, args: argparse.Namespace, seat: Seat) -> dict[str, Any]:
    """An op a seat runs with its token: the lease ops, append, commit-opening and seal."""
    from ..coordination import LeaseToken

    lease_token = getattr(args, "lease_token", None) or os.environ.get("DUEL_LEASE_TOKEN")
    lease = LeaseToken(lease_token) if lease_token else None
    if op == "claim-lock":
        return service.claim_lock(seat, for_timeout=args.for_timeout).to_dict()
    if op == "refresh-lock":
        return service.refresh_lock(seat, lease).to_dict()
    if op == "release-lock":
        summary = None
        if args.summary_file:
            summary = read_input(args.summary_file, "--summary-file", INPUT_MAX_BYTES).decode("utf-8", "replace")
        # $DUEL_SIGNING_KEY seals a close; a plain release has nothing to sign.
        signing_key = args.signing_key or (os.environ.get("DUEL_SIGNING_KEY") if args.close else None) or None
        return service.release_lock(
            seat,
            lease,
            close=args.close,
            outcome=args.outcome,
            reason=args.reason,
            summary=summary,
            signing_key=signing_key,
        ).to_dict()
    if op == "commit-opening":
        return service.commit_opening(seat, read_input(args.turn_file, "--turn-file", INPUT_MAX_BYTES)).to_dict()
    signing_key = args.signing_key or os.environ.get("DUEL_SIGNING_KEY") or None
    if op == "seal":
        if signing_key is None:
            raise invalid_argument("seal needs --signing-key or $DUEL_SIGNING_KEY")
        return service.seal(seat, signing_key).to_dict()
    if op != "append":  # never: the parser knows no other op
        raise invalid_argument(f"no such op: {op}")
    turn = read_input(args.turn_file, "--turn-file", INPUT_MAX_BYTES)
    return service.append(seat, lease, turn, release=args.release, signing_key=signing_key).to_dict()


def _join(service: DuelService, args: argparse.Namespace, config: Config, token: str | None) -> dict[str, Any]:
    if not args.target:
        raise invalid_argument("--target is required")
    if args.participant_name is None:
        raise invalid_argument("--participant-name is required")
    return service.join(
        target=os.path.abspath(args.target),  # relative to the working directory, as duel join takes it
        participant_name=args.participant_name,
        topic=args.topic,
        harness=args.harness,
        model_id=args.model_id,
        participant_token=token,
        settings=config.settings()._replace(chair=args.chair),
        role=args.role,
        signer=args.signer,
        persona=args.persona,
    ).to_dict()


def usage_by_participant(service: DuelService, status: StatusResult) -> dict[str, dict[str, Any]]:
    """What each participant's model requests used, summed from the duel's ``usage`` events (section 5)."""
    from ..participant import recorded, summary

    logged = service.events(status.duel.id, (EventType.USAGE,))
    return {p.id: summary(recorded(logged, p.id), p.model_id).to_json() for p in status.participants}


def main(argv: list[str]) -> NoReturn:
    """``duel tools OP …``: run one op and print its JSON envelope; the exit code says how it went."""
    # One op, then the process ends: its last garbage collections would walk every object the
    # imports made (about 6 ms of a status, bench/bench_startup.py). Frozen at exit, those
    # objects are skipped; the memory goes back with the process.
    atexit.register(gc.freeze)
    op = argv[0] if argv and argv[0] in OPS else None
    parser = build_parser(op)
    bad = undecodable([*argv, os.environ.get("DUEL_DIR", ""), os.environ.get(STORE_ENV, "")])
    if bad is not None:
        fail(op, invalid_argument(f"argument {bad} is not valid UTF-8"))
    if not argv:
        parser.print_help(sys.stderr)
        fail(None, invalid_argument(f"an op is required: one of {', '.join(OPS)}"))
    args = parser.parse_args(argv)
    if args.op == "wait":
        in_no_hurry()  # the process, not run(): a program that runs an op in its own process keeps its priority
        gc.enable()  # a wait may last an hour of polls: their cycles are collected
    try:
        data = run(args.op, args)
    except DuelError as exc:
        fail(args.op, exc)
    except OSError as exc:  # the library maps the debate dir's; this catches the rest (stdout gone, say)
        fail(args.op, DuelError(ErrorCode.STORAGE_FAILED, f"{exc.strerror or exc}"))
    except KeyboardInterrupt:
        fail(args.op, DuelError(ErrorCode.INTERRUPTED, "interrupted"))
    print_envelope({"success": True, **ENVELOPE, "command": args.op, "data": data})
    sys.exit(0)
