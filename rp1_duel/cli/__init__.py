"""The command line: a thin layer over the library, with two fronts.

``duel tools …`` goes to :mod:`.tools` (stdlib argparse, one JSON object on stdout, for
agents: it starts fast); everything else goes to :mod:`.app` (typer, for people), with
``duel skill`` rendered by :mod:`.skill`. This module is kept free of typer, the model
SDKs and the Markdown parser, so that an agent's ``duel tools status`` starts in a few
tens of milliseconds. May import every other package; nothing imports it.
"""

from __future__ import annotations

import gc
import sys

from ..errors import EXIT_INTERRUPTED, EXIT_USAGE
from ..printable import printable
from .arguments import undecodable
from .stopping import stop_as_ctrl_c

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """The ``duel`` command: ``duel tools …`` to the argparse front, everything else to typer."""
    args = sys.argv[1:] if argv is None else argv
    stop_as_ctrl_c()
    if args[:1] == ["tools"]:
        # One op, then the process ends: the collections its imports would trigger (a few dozen,
        # a millisecond or two of every call) find nothing worth freeing. A wait turns them back on.
        gc.disable()
        from .tools import main as tools_main

        tools_main(args[1:])
    bad = undecodable(args)
    if bad is not None:
        sys.stderr.write(printable(f"duel: INVALID_ARGUMENT: argument {bad} is not valid UTF-8") + "\n")
        sys.exit(EXIT_USAGE)
    import typer

    from .app import app

    try:
        code = app(args=args, prog_name="duel", standalone_mode=False)
    except typer.Abort:
        sys.stderr.write("duel: INTERRUPTED: aborted\n")
        code = EXIT_INTERRUPTED
    except Exception as exc:
        # typer vendors click: recognise its usage errors by shape, not by class path.
        if not hasattr(exc, "format_message") or getattr(exc, "exit_code", None) != EXIT_USAGE:
            raise
        message = exc.format_message().rstrip(".")
        if message:  # none when `duel` alone or a group alone has printed its help already
            # An option's missing value is raised before its command has a context: named from argv.
            named = f"duel {args[0]}" if args and not args[0].startswith("-") else "duel"
            command = getattr(getattr(exc, "ctx", None), "command_path", None) or named
            sys.stderr.write(f"duel: INVALID_ARGUMENT: {message} (see {command} --help)\n")
        code = EXIT_USAGE
    sys.exit(code if isinstance(code, int) else 0)
