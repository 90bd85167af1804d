r"""Text from outside duel made safe to print: control characters shown, never obeyed.

A peer's turn, a web page's status line or a hand-edited record may hold ESC, BEL or C1 characters, which a
terminal obeys (a title change, a cleared screen). Every command prints such text through :func:`printable`,
which shows each control character as ``\uXXXX`` (inside a JSON string, the same character). Tabs and line
ends are kept: they are layout, and a terminal does nothing harmful with them.
"""

from __future__ import annotations

import re

__all__ = ["CONTROL_CHARACTERS", "printable"]

# C0 but tab and line feed, DEL, and C1: what terminals act on.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    r"""``text`` with every control character but tab and line feed shown as ``\uXXXX``."""
    return CONTROL_CHARACTERS.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
