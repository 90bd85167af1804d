"""A fake model for the fake servers: it reads the prompt it receives and answers with a
turn for it (the heading it was asked for, a stance that converges near the end)."""

from __future__ import annotations

import re
from typing import Any

from helpers import make_turn

_HEADING = re.compile(r"^## Turn (\d+) — (.+?) \((.+?) / (.+?)\) — STANCE$", re.MULTILINE)
_LIMIT = re.compile(r"Write turn \d+ of at most (\d+)")


def prompt_text(body: dict[str, Any]) -> str:
    """Every text of an Anthropic or OpenAI request body, in order."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for key in ("system", "messages", "content", "text"):
                if key in node:
                    walk(node[key])

    walk(body)
    return "\n".join(found)


def asked(body: dict[str, Any]) -> tuple[int, str, str, str, int]:
    text = prompt_text(body)
    n, name, harness, model = _HEADING.findall(text)[-1]
    found = _LIMIT.search(text)
    assert found is not None, "the prompt states no turn limit"
    limit = int(found.group(1))
    return int(n), name, harness, model, limit


def debater(body: dict[str, Any]) -> str:
    """Open until the last two turns, then accept consensus."""
    n, name, harness, model, limit = asked(body)
    stance = "ACCEPTING_CONSENSUS" if n >= limit - 1 else "OPEN_TO_DEBATE"
    return make_turn(n, name, harness, model, stance)


def sloppy_then_fixed(body: dict[str, Any]) -> str:
    """Forgets the unresolved-item tag until shown the violations."""
    turn = debater(body)
    return turn if "Violations:" in prompt_text(body) else turn.replace(" (non-blocking)", "")


def hopeless(body: dict[str, Any]) -> str:
    return debater(body).replace(" (non-blocking)", "")


WRAPPINGS = {  # turn number → how a chatty model wraps that turn, and what extraction strips
    1: (lambda turn: f"```markdown\n{turn}```\n", ["fence"]),
    2: (lambda turn: f"<think>\nI should open with the heading.\n</think>\n\n{turn}", ["reasoning"]),
    3: (
        lambda turn: f"Here is my turn:\n\n{turn}\nLet me know if you want changes.\n",
        ["preamble", "trailing_remark"],
    ),
    4: (lambda turn: f"Sure.\n~~~\n---\n{turn}~~~\nI hope this helps.\n", ["preamble", "fence", "trailing_remark"]),
}


def wrapped(body: dict[str, Any]) -> str:
    """The debater's turn inside a different wrapper for each turn (cycling after turn 4)."""
    n = asked(body)[0]
    wrap, _ = WRAPPINGS[(n - 1) % len(WRAPPINGS) + 1]
    return wrap(debater(body))
