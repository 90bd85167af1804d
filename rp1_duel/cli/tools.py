"""``duel tools …``: the lock service as one-shot JSON commands for agents and scripts.

Not typer: this path runs once per agent action, must answer bad flags with a JSON envelope
(exit 2), and must start fast (typer's option coercion imports pydantic, ~100 ms here). An op's
flags are read by :func:`.tools_flags.read_plain` as agents write them, and by argparse
(:mod:`.tools_parser`) for help, errors and anything else.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ..configuration import Config, Flags, load_config
from ..errors import DuelError, invalid_argument
from ..printable import printable_json
from ..settings import SETTINGS, STORE_ENV
from ..vocabulary import ErrorCode, EventType
from .arguments import store_waits_to_stderr, undecodable
from .tools_flags import OPS, read_plain

if TYPE_CHECKING:
    from types import SimpleNamespace

    from ..coordination import DuelService, Seat, StatusResult

__all__ = ["OPS", "main", "usage_by_participant"]

ENVELOPE = {"tool": "duel"}
# Turn and summary files are read up to this much (/dev/zero must not eat memory); the
# service judges what it receives against its own, smaller limits (64 KiB each).
INPUT_MAX_BYTES = 1024 * 1024
WAIT_NICENESS = 19  # a wait takes the lowest CPU priority (docs/protocol.md section 4, "wait")


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


def run(op: str, args: SimpleNamespace) -> dict[str, Any]:
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


def _seated_op(service: DuelService, op: str, args: SimpleNamespace, seat: Seat) -> dict[str, Any]:
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


def _join(service: DuelService, args: SimpleNamespace, config: Config, token: str | None) -> dict[str, Any]:
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
    bad = undecodable([*argv, os.environ.get("DUEL_DIR", ""), os.environ.get(STORE_ENV, "")])
    if bad is not None:
        fail(op, invalid_argument(f"argument {bad} is not valid UTF-8"))
    args = read_plain(argv) or _parsed_by_argparse(argv)
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


def _parsed_by_argparse(argv: list[str]) -> SimpleNamespace:
    """What the plain reader leaves to argparse: help, errors, and flags written in a way only argparse reads."""
    from .tools_parser import FlagsRefused, build_parser, parse

    if not argv:
        build_parser().print_help(sys.stderr)
        fail(None, invalid_argument(f"an op is required: one of {', '.join(OPS)}"))
    try:
        return parse(argv)
    except FlagsRefused as refused:
        fail(refused.command, refused.error)
