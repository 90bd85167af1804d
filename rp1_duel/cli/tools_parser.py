"""``duel tools``'s argparse parsers, built from the flag table (:mod:`.tools_flags`): for ``--help``,
for every error, and for whatever :func:`.tools_flags.read_plain` leaves to argparse. Loaded only then,
because argparse and the building of its parsers cost an op about 3 ms of start-up.
"""

from __future__ import annotations

import argparse
import os
from types import SimpleNamespace
from typing import NoReturn

from ..errors import DuelError, invalid_argument
from .tools_flags import OPS, flags_of

__all__ = ["FlagsRefused", "build_parser", "parse"]


class FlagsRefused(Exception):
    """argparse refused the flags: ``error`` says why, and ``command`` names the op when the op's parser did."""

    def __init__(self, command: str | None, error: DuelError) -> None:
        super().__init__(error.message)
        self.command = command
        self.error = error


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
    """argparse whose refusal raises :class:`FlagsRefused`, which ``duel tools`` answers as a JSON envelope (exit 2),
    not a usage dump."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.split()[-1] if self.prog.split()[-1] in OPS else None
        raise FlagsRefused(command, invalid_argument(message))


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every op, or of ``only`` (each op's flags cost start-up time)."""
    parser = _Parser(
        prog="duel tools",
        description="The lock service as one-shot JSON commands (one JSON object on stdout).",
        formatter_class=_Formatter,
    )
    commands = parser.add_subparsers(dest="op", metavar="OP", parser_class=_Parser)
    for op, (help_text, _) in OPS.items():
        if only is not None and op != only:
            continue
        sub = commands.add_parser(op, help=help_text, description=help_text, formatter_class=_Formatter)
        for flag, kwargs in flags_of(op):
            sub.add_argument(flag, **kwargs)
    return parser


def parse(argv: list[str]) -> SimpleNamespace:
    """``argv`` parsed by argparse: help printed (exit 0), or :class:`FlagsRefused`."""
    op = argv[0] if argv and argv[0] in OPS else None
    return SimpleNamespace(**vars(build_parser(op).parse_args(argv)))
