"""A fake model for the fake servers: it reads the prompt it receives and answers with a
turn for it (the heading it was asked for, a stance that converges near the end)."""

from __future__ import annotations

import re
from typing import Any

from helpers import make_turn, sealed_opening

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


_CURRENT = re.compile(r"the current revision is (r-[0-9a-f]{12})")
_NEW_ID = re.compile(r"name the revision you accept, a line `\*\*Accepted Revision\*\*` then (r-[0-9a-f]{12})")
REVISED = "Leases expire after twelve minutes unless refreshed."


def _edit(name: str, find: str, replace: str) -> str:
    return f"Edit {name}: replace\n```find\n{find}\n```\n```replace\n{replace}\n```\n"


def reviser(body: dict[str, Any]) -> str:
    """Proposes an edit (turn 1), amends it (turn 2), adds another and accepts at once (turn 3: the
    id is learnt from the rejection), then accepts the revision the prompt names (turn 4)."""
    n, name, harness, model, _ = asked(body)
    text = prompt_text(body)
    if n == 1:
        edits = _edit(
            "lease-expiry",
            "Leases expire after fifteen minutes unless refreshed.",
            "Leases expire after ten minutes unless refreshed.",
        )
        return make_turn(n, name, harness, model) + "**Proposed Edits**\n" + edits
    if n == 2:
        edits = _edit("lease-expiry", "Leases expire after fifteen minutes unless refreshed.", REVISED)
        return make_turn(n, name, harness, model, "CONVERGING") + "**Proposed Edits**\n" + edits
    if n == 3:
        edits = _edit(
            "crash",
            "A crashed holder loses the floor when its lease expires.",
            "A crashed holder loses the floor when its lease expires; its turn is not written.",
        )
        turn = make_turn(n, name, harness, model, "ACCEPTING_CONSENSUS") + "**Proposed Edits**\n" + edits
        learnt = _NEW_ID.findall(text)
        return turn + (f"**Accepted Revision**\n{learnt[-1]}\n" if learnt else "")
    current = _CURRENT.findall(text)[-1]
    return make_turn(n, name, harness, model, "ACCEPTING_CONSENSUS") + f"**Accepted Revision**\n{current}\n"


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


BENCH_WRONG = "Leases expire after fifteen minutes unless refreshed."
BENCH_RIGHT = "Leases expire after ten minutes unless refreshed."
_BENCH_EDIT = f"**Proposed Edits**\nEdit expiry: replace\n```find\n{BENCH_WRONG}\n```\n```replace\n{BENCH_RIGHT}\n```\n"


_CHAIR_HEADING = re.compile(r"^## Turn (\d+) — (.+?) \((.+?) / (.+?)\) — CHAIR$", re.MULTILINE)
_POINTS = re.compile(r"unengaged points in turn (\d+); .*?:\n((?:\d+\. .+\n)+)")
UNENGAGED = "Turn 3 asked whether a shorter lease costs more refresh traffic, and nobody answered it."


def chair_turn(body: dict[str, Any]) -> str | None:
    """The chair's turn the prompt asks for, by its phase note (brief, pre-closing, synthesis); None when the
    prompt asks a panel seat for its turn (its heading ends in STANCE, not CHAIR)."""
    text = prompt_text(body)
    headings = _CHAIR_HEADING.findall(text)
    if "with your stance in place of STANCE" in text or not headings:
        return None
    n, name, harness, model = headings[-1]
    top = f"## Turn {n} — {name} ({harness} / {model}) — CHAIR\n"
    if "This is your opening brief" in text:
        return (
            top + "**Question**\nIs the lease expiry figure of document.md right?\n"
            "**Lineup**\n- Seat 1 and Seat 2, neither told the other's model.\n"
            "**What A Good Answer Looks Like**\n- It cites the lease semantics and weighs crash recovery.\n"
        )
    if "This is your pre-closing turn" in text:
        return top + f"**Unengaged Points**\n1. {UNENGAGED}\n"
    return top + "**Synthesis**\nThe panel agreed to shorten the lease, as Turn 3 proposed and Turn 4 accepted.\n"


def _addressing(text: str) -> str:
    """Counterpoints answering each unengaged point the closing turn's note lists, quoting its last words."""
    found = _POINTS.search(text)
    if found is None:
        return ""
    pre_closing, listed = found.groups()
    points = [line.split(". ", 1)[1].rstrip(".") for line in listed.strip().split("\n")]
    return "".join(
        f'- Addresses: Turn {pre_closing} "{" ".join(point.split()[-4:])}"\n'
        f"  Claim: the closing answer is the design's own rule on refresh\n"
        f"  Support:\n  - document.md#Failure handling\n"
        for point in points
    )


def bench_fixer(body: dict[str, Any]) -> str:
    """A bench seat that finds and fixes the seeded figure of a document like helpers.SOURCE, copied as a bench run
    copies it (``document.md``): blind openings, then seat 1 proposes the fix (turn 3), seat 2 accepts it (turn 4),
    seat 1 accepts (turn 5). Asked for the single baseline's only turn, it proposes the fix. In a chaired duel it
    plays the chair too (:func:`chair_turn`), and a closing turn answers the chair's unengaged points."""
    chair = chair_turn(body)
    if chair is not None:
        return chair
    n, name, harness, model, _ = asked(body)
    text = prompt_text(body)
    if "This is the only turn" in text:
        turn = make_turn(n, name, harness, model) + _BENCH_EDIT
    elif n <= 2:
        turn = sealed_opening(n, name, harness, model)
    elif n == 3:
        turn = make_turn(n, name, harness, model, "CONVERGING") + _BENCH_EDIT
    else:
        accepted = _CURRENT.findall(text)[-1]
        turn = make_turn(n, name, harness, model, "ACCEPTING_CONSENSUS") + f"**Accepted Revision**\n{accepted}\n"
        turn = turn.replace("**Agreements**\n", _addressing(text) + "**Agreements**\n")
    return turn.replace("design.md", "document.md")
