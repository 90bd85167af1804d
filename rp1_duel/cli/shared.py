"""What the ``duel`` commands share: help without typer's type labels, one-line failures, the
configuration and the service a command runs with, and the options several commands declare alike.

Library imports happen inside the helpers, so ``--help`` stays quick.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
import typer.core

from ..errors import EXIT_OUTPUT_CLOSED, DuelError, exit_code_for
from ..printable import printable, printable_json
from ..settings import SETTINGS, default_of
from .arguments import store_waits_to_stderr

if TYPE_CHECKING:
    from ..configuration import Config, Flags
    from ..coordination import DuelService

__all__ = [
    "DEBATE_DIR_HELP",
    "SETTING_HELP",
    "STORE_HELP",
    "AllowPrivateHostsOption",
    "DebateDirOption",
    "JsonOption",
    "LeaseSecondsOption",
    "MaxTurnsOption",
    "PathsArgument",
    "PeerWaitSecondsOption",
    "PlainHelpCommand",
    "PlainHelpGroup",
    "QuietOption",
    "StoreOption",
    "SummaryJsonOption",
    "TargetOption",
    "TurnTimeoutSecondsOption",
    "check_allowed_signers",
    "check_usable",
    "default_or_config",
    "fail",
    "load",
    "login_name",
    "model_help",
    "open_service",
    "output_closed",
    "review_line",
    "service_for",
    "usage_error",
]


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


def fail(error: DuelError, *, as_json: bool = False, exit_code: int | None = None) -> NoReturn:
    """One line for people (and one JSON object with --json); never a traceback. Exit with the
    error code's status, or ``exit_code``."""
    if as_json:
        typer.echo(printable_json({"success": False, "error": {"code": error.code, "message": error.message}}))
    typer.echo(printable(f"duel: {error.code}: {error.message}"), err=True)  # a message may quote a page or a peer
    raise typer.Exit(exit_code_for(error.code) if exit_code is None else exit_code)


def output_closed(line: str) -> int:
    """The reader of the output went away (``| head``, ``| less`` then q): say ``line`` on standard error
    if it is still open, send what is still buffered to /dev/null (else Python's exit fails on it again)
    and answer 141, the exit of any tool a closed pipe ends (click would say 1)."""
    with contextlib.suppress(BrokenPipeError):
        typer.echo(printable(line), err=True)
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        os.dup2(devnull, stream.fileno())
    return EXIT_OUTPUT_CLOSED


def review_line(debate_path: str) -> str:
    """What to run next once a duel is closed."""
    return printable(f"review: duel report {debate_path} --format html -o report.html")  # the path may be any name


def usage_error(message: str) -> NoReturn:
    """A misused command: ``INVALID_ARGUMENT``, exit 2."""
    from ..errors import invalid_argument

    fail(invalid_argument(message))


def open_service(debate_dir: str | os.PathLike[str], store: str | None) -> DuelService:
    """The service a command runs on, telling on standard error each pause of the store's retries."""
    from ..coordination import DuelService

    service = DuelService(debate_dir, store=store)
    service.on_store_wait = store_waits_to_stderr("duel")
    return service


def service_for(debate_dir: str | None, store: str | None) -> DuelService:
    """The service of the debate dir and store the configuration chooses, under these two flags."""
    from ..configuration import Flags

    config = load(Flags(debate_dir=debate_dir, store=store))
    return open_service(config.debate_dir, store=config.store)


def check_usable(config: Config) -> None:
    """What would stop a command's store from opening, said without opening it: a debate dir that is a file
    or has no parent folder (``DEBATE_DIR_INVALID``), a ``--store`` that is no store's URL."""
    from ..coordination import DebateDir

    DebateDir(config.debate_dir).check_usable()
    if config.store:
        from ..coordination import check_store_url

        check_store_url(config.store)


def load(flags: Flags, extra: list[str] | None = None) -> Config:
    """The configuration this command runs with (rp1_duel.configuration): files, ``extra`` files,
    environment, then ``flags``."""
    from ..configuration import load_config

    return load_config(Path.cwd(), os.environ, flags, [Path(path) for path in extra or ()])


def login_name() -> str:
    """Who an audience member is when no --name says: the login user's name, else `audience`."""
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in the environment and none for this uid
        return "audience"


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


STORE_HELP = (
    "Keep duels in a PostgreSQL database, for duels across machines: a postgresql:// URL "
    "(default: $DUEL_STORE, else `store` in the configuration, else the debate dir)."
)
# typer renders help through rich, which would read "[default: …]" as markup and drop it: escaped.
SETTING_HELP = {
    name: f"{s.help_with_range}; fixed by the join that creates the duel.".replace("[", "\\[")
    for name, s in SETTINGS.items()
}
DEBATE_DIR_HELP = "The debate dir (default: $DUEL_DIR, else `debate_dir` in the configuration, else ./debates)."


def default_or_config(name: str) -> str:
    """The help of a setting whose default the configuration may change."""
    return f"{SETTING_HELP[name]} \\[default: {default_of(name)}, or from config]"


def model_help(text: str, key: str) -> str:
    """The help of a model option whose default the configuration sets under ``key``."""
    return f"{text} (default: {key} in the configuration)."


# -- options several commands declare alike ----------------------------------------------------------

DebateDirOption = Annotated[str | None, typer.Option("--debate-dir", help=DEBATE_DIR_HELP)]
StoreOption = Annotated[str | None, typer.Option("--store", help=STORE_HELP)]
TargetOption = Annotated[str, typer.Option("--target", help="The Markdown document to debate.")]
JsonOption = Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")]
SummaryJsonOption = Annotated[bool, typer.Option("--json", help="Print one summary object on stdout.")]
QuietOption = Annotated[bool, typer.Option("--quiet", help="Print nothing on stderr but errors.")]
PathsArgument = Annotated[list[str], typer.Argument(help="Artifacts, or folders to search for them.")]
MaxTurnsOption = Annotated[int | None, typer.Option(help=SETTING_HELP["max_turns"])]
LeaseSecondsOption = Annotated[int | None, typer.Option(help=default_or_config("lease_seconds"))]
PeerWaitSecondsOption = Annotated[int | None, typer.Option(help=default_or_config("peer_wait_seconds"))]
TurnTimeoutSecondsOption = Annotated[int | None, typer.Option(help=default_or_config("turn_timeout_seconds"))]
AllowPrivateHostsOption = Annotated[
    bool,
    typer.Option(
        "--allow-private-hosts",
        help="Fetch from loopback and private addresses too (--verify, and the sources a participant challenges); "
        "metadata addresses stay refused.",
    ),
]
