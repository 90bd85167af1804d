"""What both fronts check in their arguments before parsing them: a leaf, so ``duel`` and
``duel tools`` share it without either importing the other."""

from __future__ import annotations

__all__ = ["undecodable"]


def undecodable(values: list[str]) -> str | None:
    """The first value holding bytes that are not UTF-8 (Python keeps them as lone
    surrogates): such text can be neither recorded nor printed, so it is refused up front."""
    for value in values:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
    return None
