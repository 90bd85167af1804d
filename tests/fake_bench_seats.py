"""Programmed seats for the fake model servers, for ``duel bench score``'s tests: each answers the turn its
prompt asks for, by the model it is asked as (the heading's), over the bench's one seeded defect.

- ``claude-finder`` finds the wrong figure and fixes it (turn 1), then accepts the revision (turn 3);
- ``claude-abandoner`` fixes it (turn 1), then withdraws its fix and accepts the unchanged document (turn 3);
- ``gpt-conformist`` proposes nothing (turn 2), then accepts whatever is in force, citing its peer (turn 4);
- ``gpt-silent`` accepts the revision in force at once (turn 2), citing nothing.

Every turn cites the source as ``document.md``, the name a bench run gives its copy.
"""

from __future__ import annotations

import re
from typing import Any

from fake_debater import asked, prompt_text

WRONG = "Leases expire after fifteen minutes unless refreshed."
FIXED = "Leases expire after ten minutes unless refreshed."
DEFECTS = {
    "kind": "rfc",
    "defects": [
        {
            "id": "d1",
            "kind": "wrong-figure",
            "where": "## Lease semantics",
            "description": "the lease is too long",
            "fixed_when": {"absent": "fifteen"},
        }
    ],
}
_CURRENT = re.compile(r"the current revision is (r-[0-9a-f]{12})")
_EDIT = f"**Proposed Edits**\nEdit lease-figure: replace\n```find\n{WRONG}\n```\n```replace\n{FIXED}\n```\n"


def turn(n: int, body: dict[str, Any], stance: str, *, support: str = "", tail: str = "") -> str:
    """A whole turn of the heading the prompt asks for; ``support`` is its Stance Revision Support (may be empty)."""
    _, name, harness, model, _ = asked(body)
    addresses = "document.md#Lease semantics" if n == 1 else f"Turn {n - 1}"
    return (
        f"## Turn {n} — {name} ({harness} / {model}) — {stance}\n"
        f"**Position**\n{_POSITIONS[model]} (turn {n}).\n"
        f"**Counterpoints**\n- Addresses: {addresses}\n"
        f"  Claim: the {_WORDS[n]} reading of lease expiry deserves a second look\n"
        f"  Support:\n  - document.md#Failure handling\n"
        f"**Agreements**\n- Seat order stays fixed ({_WORDS[n]} remark).\n"
        f"**Novel Argument**\n{_NOVEL[n]}\n"
        f'Support:\n- document.md "{WRONG}"\n'
        f"**Unresolved Items**\n- Whether the {_WORDS[n]} reviewer agrees (non-blocking)\n"
        f"**Stance Revision Support**\n{support}" + tail
    )


def _accepting(text: str) -> str:
    current = _CURRENT.findall(text)
    return f"**Accepted Revision**\n{current[-1]}\n" if current else ""


def bench_seat(body: dict[str, Any]) -> str:
    """The turn the asked model is programmed to write (module docstring)."""
    n, _, _, model, _ = asked(body)
    text = prompt_text(body)
    if model in ("claude-finder", "claude-abandoner") and n == 1:
        return turn(n, body, "CONVERGING", tail=_EDIT)
    if model == "claude-finder":
        return turn(n, body, "ACCEPTING_CONSENSUS", support=f"- Turn {n - 1}\n", tail=_accepting(text))
    if model == "claude-abandoner":
        return turn(
            n,
            body,
            "ACCEPTING_CONSENSUS",
            support=f"- Turn {n - 1}\n",
            tail="**Proposed Edits**\nWithdraw lease-figure\n",
        )
    if model == "gpt-conformist" and n == 2:
        return turn(n, body, "OPEN_TO_DEBATE")
    if model == "gpt-conformist":
        return turn(n, body, "ACCEPTING_CONSENSUS", support=f"- Turn {n - 1}\n", tail=_accepting(text))
    return turn(n, body, "ACCEPTING_CONSENSUS", tail=_accepting(text))  # gpt-silent


_WORDS = {1: "first", 2: "second", 3: "third", 4: "fourth"}
_NOVEL = {  # each claim its own words: a repeated claim is NOVELTY
    1: "A crashed holder keeps everyone waiting until its lease runs out.",
    2: "Reviewers read the expiry rule before anything else in this document.",
    3: "Shorter leases trade refresh traffic for quicker recovery after crashes.",
    4: "Operators tune expiry once and rarely revisit that choice later.",
}
_POSITIONS = {
    "claude-finder": "The lease figure is wrong: leases should expire sooner",
    "claude-abandoner": "The lease figure looks wrong to me, though I may be persuaded",
    "gpt-conformist": "I follow my peer on the lease figure",
    "gpt-silent": "Fine by me",
}
