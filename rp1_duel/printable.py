r"""Text from outside duel made safe to print: control characters shown, never obeyed.

A peer's turn, a web page's status line, a hand-edited record or a file's name may hold ESC, BEL or C1
characters, which a terminal obeys (a title change, a cleared screen). Every command prints such text through
:func:`printable`, and every JSON line through :func:`printable_json`, which show each control character as
``\uXXXX`` (inside a JSON string, the same character). A file name's bytes that are not UTF-8 (Python keeps them
as lone surrogates, and writes them back raw) are shown the same way: ``\udc9b`` for the byte 0x9b. Tabs and line
ends are kept: they are layout, and a terminal does nothing harmful with them.
"""

from __future__ import annotations

import functools
import json
import re

__all__ = ["CONTROL_CHARACTERS", "printable", "printable_json"]

# C0 but tab and line feed, DEL, and C1: what terminals act on.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@functools.cache
def _unprintable() -> re.Pattern[str]:
    """The control characters, and the lone surrogates standing for a name's bytes that are not UTF-8 (0x9b among
    them). Compiled on first need: the surrogates' range costs a third of a millisecond, and most text printed is
    printable ASCII."""
    return re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def printable(text: str) -> str:
    r"""``text`` with every control character but tab and line feed, and every lone surrogate, shown as ``\uXXXX``."""
    if text.isascii() and text.replace("\t", "").replace("\n", "").isprintable():  # nothing to show otherwise
        return text
    return _unprintable().sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def printable_json(value: object, *, indent: int | None = None, compact: bool = False) -> str:
    r"""``value`` as JSON text safe to print: non-ASCII text kept as it is, but every control character and lone
    surrogate written ``\uXXXX`` (``json.dumps`` escapes only C0 itself), so the text decodes to the same value.
    ``compact``: no space after a comma or a colon, as a model reads it (``duel mcp``)."""
    separators = (",", ":") if compact else None
    # Outside its strings JSON text holds no such character: every one found is inside a string.
    return printable(json.dumps(value, ensure_ascii=False, indent=indent, separators=separators))
