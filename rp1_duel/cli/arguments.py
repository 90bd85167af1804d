"""What both fronts share around their ops (the arguments checked before parsing, the store's
waits told on standard error): a leaf, so ``duel`` and ``duel tools`` share it without either
importing the other."""

from __future__ import annotations

import sys
from collections.abc import Callable

from ..printable import printable

__all__ = ["store_waits_to_stderr", "undecodable"]


def store_waits_to_stderr(prefix: str) -> Callable[[str], None]:
    """What a command tells the person while the store retries: ``duel tools: the store is full of
    connections; retrying in 2 s`` on standard error (standard output keeps its one answer)."""

    def say(line: str) -> None:
        sys.stderr.write(f"{prefix}: {printable(line)}\n")
        sys.stderr.flush()

    return say


def undecodable(values: list[str]) -> str | None:
    """The first value holding bytes that are not UTF-8 (Python keeps them as lone
    surrogates): such text can be neither recorded nor printed, so it is refused up front."""
    for value in values:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
    return None
