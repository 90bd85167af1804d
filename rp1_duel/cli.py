"""The ``duel`` entry point: `duel tools` goes to its lean JSON front, the rest to typer.

Kept free of typer, the model SDKs and the Markdown parser, so that an agent's
``duel tools status`` starts in a few tens of milliseconds.
"""

from __future__ import annotations

import sys

EXIT_USAGE = 2


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["tools"]:
        from .cli_tools import main as tools_main

        tools_main(args[1:])
    import typer

    from .cli_app import app

    try:
        code = app(args=args, prog_name="duel", standalone_mode=False)
    except typer.Abort:
        sys.stderr.write("duel: aborted\n")
        code = 130
    except Exception as exc:
        # typer vendors click: recognise its usage errors by shape, not by class path.
        if not hasattr(exc, "format_message") or getattr(exc, "exit_code", None) != EXIT_USAGE:
            raise
        sys.stderr.write(f"duel: {exc.format_message()} (see duel --help)\n")
        code = EXIT_USAGE
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
