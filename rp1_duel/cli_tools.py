"""``duel tools …``: the lock service as one-shot JSON commands for agents and scripts.

Deliberately stdlib ``argparse`` rather than typer: this path runs once per agent
action, must answer bad flags with a JSON envelope (exit 2), and must start fast
(typer's option coercion imports pydantic, ~100 ms here).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, NoReturn

from .errors import EXIT_USAGE, DuelError

ENVELOPE = {"tool": "duel"}

# op -> (help, [(flag, kwargs)]); PROTOCOL.md section 2, "Flags of duel tools".
_TOKEN = ("--participant-token", {"help": "your secret token from join [env: DUEL_PARTICIPANT_TOKEN]"})
_DUEL = ("--duel-id", {"required": True})
_PID = ("--participant-id", {"required": True})
_LEASE = ("--lease-token", {"help": "the token claim-lock granted"})
_DIR = ("--debate-dir", {"help": "shared debate dir [default: $DUEL_DIR, else ./debates]"})
OPS: dict[str, tuple[str, list[tuple[str, dict[str, Any]]]]] = {
    "join": ("join, create or resume the duel about a source and topic", [
        ("--target", {"help": "absolute path of the source (.md)"}),
        ("--topic", {"help": "topic [default: the source's first heading]"}),
        _DIR,
        ("--participant-name", {"help": "your display name"}),
        ("--harness", {"default": "unknown"}),
        ("--model-id", {"default": "unknown-model", "help": "your model id, honestly"}),
        _TOKEN,
        ("--max-turns", {"type": int, "default": 6, "help": "2-50"}),
        ("--lease-seconds", {"type": int, "default": 600, "help": "5-86400"}),
        ("--peer-wait-seconds", {"type": int, "default": 900}),
        ("--turn-timeout-seconds", {"type": int, "default": 1800}),
    ]),
    "status": ("show a duel (read-only)", [
        ("--duel-id", {}), ("--target", {}), ("--topic", {}), _DIR,
        ("--participant-id", {"help": "adds your next_step"}),
    ]),
    "claim-lock": ("ask for the lease; a refusal is an answer (acquired: false)", [
        _DUEL, _PID, _TOKEN, ("--for-timeout", {"action": "store_true"}), _DIR,
    ]),
    "refresh-lock": ("extend your live lease by lease_seconds", [_DUEL, _PID, _TOKEN, _LEASE, _DIR]),
    "release-lock": ("release your lease, or close the duel", [
        _DUEL, _PID, _TOKEN, _LEASE, ("--close", {"action": "store_true"}), ("--outcome", {}),
        ("--reason", {}), ("--summary-file", {}), _DIR,
    ]),
    "append": ("append your turn; exit 3 with every violation if it breaks a rule", [
        _DUEL, _PID, _TOKEN, _LEASE, ("--turn-file", {"default": "-", "help": "a file, or - for stdin"}),
        ("--release", {"action": "store_true"}), _DIR,
    ]),
    "wait": ("block until your next_step or the duel changes (read-only)", [
        _DUEL, _PID, ("--timeout", {"type": float, "default": 60.0}),
        ("--next-step", {"help": "the next_step you last saw: return at once if it already changed"}), _DIR,
    ]),
}


class _Parser(argparse.ArgumentParser):
    """argparse that reports wrong flags as a JSON envelope (exit 2), not a usage dump."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.split()[-1] if self.prog.split()[-1] in OPS else None
        fail(command, DuelError("INVALID_ARGUMENT", message))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="duel tools", description="The lock service as one-shot JSON commands (one JSON object on stdout).")
    commands = parser.add_subparsers(dest="op", metavar="OP", parser_class=_Parser)
    for op, (help_text, flags) in OPS.items():
        sub = commands.add_parser(op, help=help_text, description=help_text)
        for flag, kwargs in flags:
            sub.add_argument(flag, **kwargs)
    return parser


def print_envelope(envelope: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(envelope, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def fail(command: str | None, error: DuelError) -> NoReturn:
    print_envelope({"success": False, **ENVELOPE, "command": command, "error": error.to_dict()})
    sys.exit(error.exit_code)


def read_input(path: str, flag: str) -> bytes:
    try:
        if path == "-":
            return sys.stdin.buffer.read()
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise DuelError("INVALID_ARGUMENT", f"cannot read {flag} {path}: {exc.strerror or exc}") from None


def run(op: str, args: argparse.Namespace) -> dict[str, Any]:
    from .service import DuelService, DuelSettings

    service = DuelService(args.debate_dir or os.environ.get("DUEL_DIR") or "debates")
    token = getattr(args, "participant_token", None) or os.environ.get("DUEL_PARTICIPANT_TOKEN")
    if op == "join":
        if not args.target:
            raise DuelError("INVALID_ARGUMENT", "--target is required")
        if args.participant_name is None:
            raise DuelError("INVALID_ARGUMENT", "--participant-name is required")
        settings = DuelSettings(args.max_turns, args.lease_seconds, args.peer_wait_seconds, args.turn_timeout_seconds)
        return service.join(
            target=args.target, participant_name=args.participant_name, topic=args.topic,
            harness=args.harness, model_id=args.model_id, participant_token=token, settings=settings,
        )
    if op == "status":
        return service.status(args.duel_id, target=args.target, topic=args.topic, participant_id=args.participant_id)
    if op == "claim-lock":
        return service.claim_lock(args.duel_id, args.participant_id, token, for_timeout=args.for_timeout)
    if op == "refresh-lock":
        return service.refresh_lock(args.duel_id, args.participant_id, token, args.lease_token)
    if op == "release-lock":
        summary = read_input(args.summary_file, "--summary-file").decode("utf-8", "replace") if args.summary_file else None
        return service.release_lock(
            args.duel_id, args.participant_id, token, args.lease_token,
            close=args.close, outcome=args.outcome, reason=args.reason, summary=summary,
        )
    if op == "append":
        turn = read_input(args.turn_file, "--turn-file")
        return service.append(args.duel_id, args.participant_id, token, args.lease_token, turn, release=args.release)
    assert op == "wait"
    return service.wait(args.duel_id, args.participant_id, args.timeout, next_step=args.next_step)


def main(argv: list[str]) -> NoReturn:
    parser = build_parser()
    if not argv:
        parser.print_help(sys.stderr)
        sys.exit(EXIT_USAGE)
    args = parser.parse_args(argv)
    try:
        data = run(args.op, args)
    except DuelError as exc:
        fail(args.op, exc)
    except KeyboardInterrupt:
        fail(args.op, DuelError("INTERRUPTED", "interrupted"))
    print_envelope({"success": True, **ENVELOPE, "command": args.op, "data": data})
    sys.exit(0)
