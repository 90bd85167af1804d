"""What a participant is told about turns: the format and the rules, in one place.

Model prompts (:mod:`rp1_duel.participant.prompt`) and the agent instructions of ``duel skill``
are both rendered from here and from :data:`rp1_duel.turns.rules.RULES`, so a rule changes
in one place.
"""

from __future__ import annotations

from ..vocabulary import SECTIONS, STANCES, Phase, RuleCode
from .rules import RULES

__all__ = ["CHAIR_FORMATS", "OUTCOMES", "chair_guide", "turn_guide"]

TURN_FORMAT = """\
## Turn {N} — {Participant} ({Harness} / {Model}) — {STANCE}
**Position**
…
**Counterpoints**
- Addresses: Turn {M} | {source file}#{heading}
  Claim: …
  Support:
  - …
**Agreements**
- …
**Novel Argument**
…
Support:
- …
**Unresolved Items**
- … (blocking)
- … (non-blocking)
**Stance Revision Support**
- …"""

EDITS_RULES = """\
Optionally, after the six sections, in this order (Source Corrections first):
- **Source Challenges**: a source another participant cited that you believe fails its claim, one item each: \
`Turn M https://…: the claim it fails to support` (that turn must cite that URL; name the claim in a few words). \
The source is checked at once, before the next turn, and the ruling goes into the record; a source ruled \
fabricated has its claim redacted, and nobody may make that claim again.
- **Source Corrections** (first, before challenges): after a ruling found one of your sources unreliable, replace \
it: `Replacing https://old… with https://new…: why`. A source ruled unreliable or fabricated may not be cited \
again; a correction is the only way to put another in its place, and the new source is checked like any.
- **Audience Answers**: only when the audience asked you a question due at this turn: `- Q1: your answer`.
- **Proposed Edits**: changes to the source. Each is a line `Edit NAME: replace` followed by a fenced code block \
with the info string `find` (exact words of the source, occurring there once) and one with `replace` (the new \
words); or `Edit NAME: delete` followed by a `find` block; or `Edit NAME: insert after heading "HEADING"` followed \
by an `insert` block (new lines after that heading of the source); or a line `Withdraw NAME`. NAME is lower-case \
letters, digits and hyphens. A later turn restating `Edit NAME` amends that edit; every edit applies to the \
original source.
- **Accepted Revision**: the id (`r-` and 12 hex digits) of the revision an ACCEPTING_CONSENSUS turn accepts: \
the source with every edit in force after this turn applied. Consensus needs every seat's latest turn to accept \
the same revision. While any edit is in force the section is required; if your turn changes the edits, the id \
changes and a rejection names the new one. Nobody edits the document itself: a person applies the agreed \
revision with `duel apply`."""

EDITS_EXAMPLE = """\
**Proposed Edits**
Edit lease-expiry: replace
```find
Leases expire unless refreshed.
```
```replace
Leases expire after `lease_seconds` unless refreshed.
```
Withdraw old-note
**Accepted Revision**
r-0123456789ab"""

SUPPORT_KINDS = """\
A support item is one of:
- a URL (`https://…`);
- a source reference: the source's file name followed by a heading (`{source}#Some heading`), \
a line or range (`{source}:12` or `{source}:12-18`) and/or a quoted excerpt \
(`{source} "exact words from the source"`); each must exist in the source;
- a turn reference: `Turn M`, optionally with a quoted excerpt that must appear in turn M;
- `Principle: …`;
- `[CONJECTURE] …`: a guess that nothing cited backs, labelled as one (not evidence: see \
`CONJECTURE_AS_BASIS`).

Every figure a claim states (a count, a percentage, money, a duration) must stand in what the claim cites: on \
each page it cites (else `duel verify` finds the citation unreliable, naming the figure), or in the source when \
it cites the source and no page or principle (`FIGURE_NOT_IN_SOURCE`; a value you propose is argued with a \
`Principle: …` item). Write the figure as the page does (`1,200` and `1200`, \
`40%` and `40 percent` are the same figure; `1,250` is not `1,200`), or begin a claim you cannot source with \
`[CONJECTURE]`. Cite at most five URLs an item (`TOO_MANY_SOURCES`)."""

STANCE_MEANINGS = {
    "OPEN_TO_DEBATE": "still arguing",
    "CONVERGING": "close to agreement",
    "ACCEPTING_CONSENSUS": "you accept the shared conclusion (no blocking item left)",
    "DISSENTING": "you hold a position the other side will not share",
    "REVISING": "you are changing your position",
}

OUTCOMES = {
    "ACCEPTED_CONSENSUS": "the latest turn of every seat (both, in a duel) is ACCEPTING_CONSENSUS with no "
    "blocking item",
    "DISSENT": "the latest turn of every seat is DISSENTING, or the last turn is written with a blocking item or "
    "a DISSENTING stance left",
    "MAX_TURNS": "the last allowed turn is written without either of the above",
    "TIMEOUT": "a peer never joined, or never finished its turn in time",
    "INVALIDATED": "a participant closed with a reason, the record was tampered with, or the source vanished",
}


def rules_markdown() -> str:
    """The turn rules as a Markdown list, each with its code."""
    return "\n".join(f"- `{code}`: {text}" for code, text in RULES.items())


def stances_markdown() -> str:
    """The stances as a Markdown list, each with what it means."""
    return "\n".join(f"- `{stance}`: {STANCE_MEANINGS[stance]}" for stance in STANCES)


def turn_guide(source_name: str = "design.md", *, fenced: bool = True) -> str:
    """The whole turn contract, as Markdown: format, support kinds, stances, rules.

    ``fenced=False`` shows the format as plain lines: a model shown a fenced example tends
    to fence its answer too."""
    shown = f"```markdown\n{TURN_FORMAT}\n```" if fenced else TURN_FORMAT
    example = f"For example:\n\n````markdown\n{EDITS_EXAMPLE}\n````\n\n" if fenced else ""
    return (
        f"Format (the six sections, in this order: {', '.join(SECTIONS)}):\n\n"
        f"{shown}\n\n"
        f"{EDITS_RULES}\n\n"
        f"{example}"
        f"{SUPPORT_KINDS.format(source=source_name)}\n\n"
        f"Stances:\n{stances_markdown()}\n\n"
        f"Rules (each rejection names its code):\n{rules_markdown()}"
    )


# A chair's three turns (docs/protocol.md section 7, "Chair turns"): the format of each phase.
CHAIR_FORMATS = {
    Phase.OPENING_BRIEF: """\
## Turn 0 — {Chair} ({Harness} / {Model}) — CHAIR
**Question**
… the question the panel is to answer about the document …
**Lineup**
- {Panelist} (seat 1): … what each panelist brings …
**What A Good Answer Looks Like**
- … what an answer must settle, and how it should be supported …""",
    Phase.PRE_CLOSING: """\
## Turn {N} — {Chair} ({Harness} / {Model}) — CHAIR
**Unengaged Points**
1. … a substantive point that Turn {M} raised and no later turn engaged (Turn {M} "its exact words") …""",
    Phase.SYNTHESIS: """\
## Turn {N} — {Chair} ({Harness} / {Model}) — CHAIR
**Synthesis**
… what the panel concluded, and why …
**Agreed**
- … a point every seat agreed to; for a seat whose final turn is not ACCEPTING_CONSENSUS, quoting that \
turn's Agreements (Turn {M} "its words") …
**Still Open**
- …
**Departures**
- Seat {S} ({its final STANCE}, Turn {M}): … what the synthesis concludes instead of that seat's final \
stance, and why …""",
}
# The rules a chair's turn is held to: the panel's sections, stances and grounding do not apply.
CHAIR_RULES = (
    RuleCode.HEADING,
    RuleCode.CHAIR_FORMAT,
    RuleCode.TURN_REF_NOT_FOUND,
    RuleCode.UNSAFE_STRUCTURE,
    RuleCode.RAW_HTML,
)
PHASE_RULES = {Phase.SYNTHESIS: (RuleCode.SILENT_OVERRULE,)}  # a rule of one chair turn only


def chair_guide(phase: str) -> str:
    """The contract of one chair turn, as plain lines (a fenced example tends to be answered fenced)."""
    rules = "\n".join(f"- `{code}`: {RULES[code]}" for code in (*CHAIR_RULES, *PHASE_RULES.get(phase, ())))
    optional = (
        " Agreed, Still Open and Departures are optional; a synthesis never reports as agreed what a seat did not"
        " accept without a Departures item saying so."
        if phase == Phase.SYNTHESIS
        else ""
    )
    return (
        f"Format:\n\n{CHAIR_FORMATS[phase]}\n\n"
        f"The chair takes no stance: the heading ends with CHAIR.{optional}\n\n"
        f"Rules (each rejection names its code):\n{rules}"
    )
