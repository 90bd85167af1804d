"""What a model is asked for one turn, laid out so prompt caches can reuse it.

A request is three parts: ``system`` (the contract, persona, position and the numbered
source: identical for all of a participant's turns), ``history`` (the accepted turns,
which only grow at the end), and a short ``instruction`` (this turn's heading, with
``duel join --verify`` the verdicts on the peer's latest citations, and the violations to
repair). Everything stable comes first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from ..record import Claimant, TurnBlock, decide_panel
from ..schedule import CHAIR_SEAT, Schedule
from ..turns import (
    CHAIR_FORMATS,
    SourceDocument,
    TurnContext,
    TurnViolation,
    chair_guide,
    phase_note,
    questions_note,
    rulings_note,
    sealed_opening_note,
    turn_guide,
    turn_heading,
)
from ..vocabulary import CHAIR_MARK, CHAIR_PHASES, MAX_UNENGAGED_POINTS, Phase, Verdict
from .personas import Persona
from .providers import TurnRequest

if TYPE_CHECKING:
    from ..coordination import ParticipantView
    from ..record import CitationEntry, History

__all__ = [
    "briefing",
    "build_request",
    "chair_note",
    "chair_system_prompt",
    "heading",
    "history_text",
    "instruction",
    "peer_verdicts",
    "persona_lines",
    "system_prompt",
    "turn_notes",
]

HISTORY_HEADER = "The debate so far (accepted turns, oldest first):\n\n"
VERDICTS_SHOWN: Final = 10  # citations listed in the instruction; the rest are counted
ITEM_SHOWN: Final = 200  # characters of a cited item
# What a reader of the verdicts acts on comes first, so the cut above keeps it.
_FIRST: Final = (Verdict.FABRICATED, Verdict.UNRELIABLE, Verdict.INCONCLUSIVE, Verdict.UNVERIFIABLE)


_CHAIRED = (
    " A chair, who takes no stance, frames the panel: an opening brief (turn 0), then before the closing "
    "round a list of points raised and never engaged, which every closing turn must address, and at the end "
    "a synthesis."
)


def system_prompt(
    name: str,
    *,
    topic: str,
    source: SourceDocument,
    source_name: str,
    persona: Persona | str | None,
    position: str | None,
    schedule: Schedule,
) -> str:
    """A panelist's contract, the same for all its turns (so cached): the setting, its persona and position,
    the turn format and the numbered source."""
    position_text = position or "form your own view from the source, and change it when the other side is right"
    seats, chair = schedule.seats, schedule.chair
    if seats == 2 and not chair:
        setting, others = "one of two participants in a Socratic duel", "The other participant is another AI model."
    else:
        setting = f"one of {seats} participants in a Socratic panel"
        others = (
            "The others (models, people or scripts) each speak once a round, in a fixed order; the panel "
            "reaches consensus only when every participant's latest turn accepts it." + (_CHAIRED if chair else "")
        )
    return (
        f"You are {name}, {setting}: a written debate about the Markdown "
        f'document `{source_name}`, on the topic "{topic}". {others} '
        f"Each of you writes one turn at a time; a service checks every turn against the rules below and "
        f"rejects turns that break them.\n\n"
        f"{persona_lines(persona)}Your position: {position_text}.\n\n"
        f"Argue from the document: cite its headings, lines (`{source_name}:12-18`) and exact excerpts, and "
        f"earlier turns. Concede what is right, keep blocking items for real objections, and move to "
        f"CONVERGING and ACCEPTING_CONSENSUS once nothing blocking is left; use DISSENTING only for a "
        f"disagreement that will not resolve.\n\n"
        f"# How a turn must look\n\n{turn_guide(source_name, fenced=False)}\n\n"
        f"Answer with the turn alone: no preamble, no closing remarks, no code fence.\n\n"
        f"# The source document `{source_name}`, with line numbers\n\n{source.numbered()}\n"
    )


def persona_lines(
    persona: Persona | str | None, *, default: str = "a rigorous, fair-minded reviewer who argues from the text"
) -> str:
    """The "Persona:" line; a named persona adds who it is and what it is rewarded for (participant.personas)."""
    if not isinstance(persona, Persona):
        return f"Persona: {persona or default}.\n"
    rewarded = "".join(f"- {incentive}\n" for incentive in persona.incentives)
    return f"Persona: {persona.name}. {persona.description}\n" + (
        f"You are rewarded for:\n{rewarded}" if rewarded else ""
    )


def chair_system_prompt(
    name: str, *, topic: str, source: SourceDocument, source_name: str, persona: Persona | str | None, seats: int
) -> str:
    """The chair's contract: three turns, no stance, each phase's format (the same for all three, so cached)."""
    formats = "\n\n".join(f"## The {phase.replace('_', ' ')}\n\n{chair_guide(phase)}" for phase in CHAIR_FORMATS)
    return (
        f"You are {name}, the chair of a Socratic panel of {seats} participants: a written debate about the Markdown "
        f'document `{source_name}`, on the topic "{topic}". The panelists (models, people or scripts) speak once a '
        f"round, in a fixed order, each taking a stance; you take none. You write three turns: the opening brief "
        f"(turn 0, before anyone speaks), the pre-closing list of at most {MAX_UNENGAGED_POINTS} substantive points "
        f"that were raised and never engaged (just before the closing round, whose every turn must address them), "
        f"and the closing synthesis (the last turn). A service checks every turn and rejects turns that break the "
        f"rules below.\n\n{persona_lines(persona, default='a fair, exacting moderator who keeps the panel to the document')}"
        f"\n# How your turns must look\n\n{formats}\n\n"
        f"Answer with the turn alone: no preamble, no closing remarks, no code fence.\n\n"
        f"# The source document `{source_name}`, with line numbers\n\n{source.numbered()}\n"
    )


def chair_note(history: History, *, participants: Sequence[ParticipantView], schedule: Schedule, number: int) -> str:
    """What turn ``number`` of a chaired duel is for: the lineup, the points to address, the outcome
    (the chair's :func:`~rp1_duel.turns.phase_note`); empty without a chair."""
    phase = schedule.phase(number)
    if phase is None:
        return ""
    lineup = [
        f"{p.display_name} ({p.harness} / {p.model_id}), seat {p.seat}" for p in participants if p.seat != CHAIR_SEAT
    ]
    pre_closing = schedule.pre_closing
    points = history.turn(pre_closing).points if phase == Phase.CLOSING and pre_closing else ()
    panel = [summary for summary in history.summaries() if summary.seat != CHAIR_SEAT]
    outcome = decide_panel(panel, schedule.max_turns, seats=schedule.seats).outcome if phase in CHAIR_PHASES else None
    names = {p.seat: p.display_name for p in participants}
    final_stances = [
        f"Seat {seat}, {names.get(seat, 'unnamed')}: {history.turn(turn).stance} in Turn {turn}"
        for seat, turn in sorted(history.final_turns().items())
        if phase == Phase.SYNTHESIS
    ]
    return phase_note(
        phase, lineup=lineup, points=points, pre_closing=pre_closing, outcome=outcome, final_stances=final_stances
    )


def turn_notes(context: TurnContext, *, chair: str) -> str:
    """What the turn of ``context`` is for, beyond its format: each feature's note, as its rule family words it
    (a sealed opening's terms, ``chair``: the chair's :func:`~rp1_duel.turns.rules.phase_note`, the audience's
    questions due, the rulings a chair's turn acknowledges)."""
    return sealed_opening_note(context.edits) + chair + questions_note(context.audience) + rulings_note(context.rulings)


def history_text(blocks: Sequence[TurnBlock]) -> str:
    """The accepted turns, oldest first, under their header: the part of a request that only grows."""
    if not blocks:
        return HISTORY_HEADER + "(none yet: you open the debate)\n"
    return HISTORY_HEADER + "".join(block.body.rstrip("\n") + "\n\n" for block in blocks)


def heading(number: int, claimant: Claimant, *, by_chair: bool) -> str:
    """The heading line turn ``number`` must begin with: CHAIR for the chair, else a STANCE to fill in."""
    return turn_heading(
        number,
        name=claimant.name,
        harness=claimant.harness,
        model_id=claimant.model_id,
        last=CHAIR_MARK if by_chair else "STANCE",
    )


def peer_verdicts(number: int, writer: str, entries: Sequence[CitationEntry], voters: Sequence[str]) -> str:
    """What this participant's check found in the URLs the peer's turn ``number`` cites: a short
    block for the instruction (never the cached prefix), empty when the turn cites none."""
    if not entries:
        return ""
    how = (
        f"its claims judged by {', '.join(voters)}"
        if voters
        else "mechanically: dead links and quoted excerpts, claims not judged"
    )
    ordered = sorted(entries, key=lambda entry: _FIRST.index(entry.verdict) if entry.verdict in _FIRST else len(_FIRST))
    lines = []
    for entry in ordered[:VERDICTS_SHOWN]:
        cited = (
            entry.citation.item if len(entry.citation.item) <= ITEM_SHOWN else entry.citation.item[:ITEM_SHOWN] + "…"
        )
        where = f"line {entry.citation.line}: " if entry.citation.line else ""
        confidence = f" ({entry.confidence})" if entry.confidence else ""
        lines.append(f"- {where}{cited} — {entry.verdict}{confidence}: {entry.reason}\n")
    rest = Counter(entry.verdict for entry in ordered[VERDICTS_SHOWN:])
    if rest:
        lines.append(f"- and {rest.total()} more: {', '.join(f'{n} {verdict}' for verdict, n in rest.items())}\n")
    return (
        f"Citation check of turn {number} ({writer}'s): each URL it cites was opened ({how}):\n"
        + "".join(lines)
        + "A fabricated citation (a dead link, or a quote its page does not hold) or an unreliable one is fair "
        "to challenge in your Counterpoints; do not rely on it.\n"
    )


def instruction(
    number: int,
    *,
    max_turns: int,
    heading: str,
    violations: Sequence[TurnViolation] = (),
    draft: str | None = None,
    notes: Sequence[str] = (),
    verdicts: str = "",
    phase: str = "",
    by_chair: bool = False,
    revision: str = "",
) -> str:
    """The turn's short instruction: the heading to begin with, the chair's phase note, the document's
    revision, the peer's verdicts, and after a rejection the violations to fix, with the draft."""
    last = " It is the last turn of the duel." if number == max_turns else ""
    if by_chair:
        text = f"Write turn {number} of at most {max_turns}.{last} Begin with exactly this heading line:\n\n{heading}\n"
    else:
        text = (
            f"Write turn {number} of at most {max_turns}.{last} Begin with exactly this heading line, "
            f"with your stance in place of STANCE:\n\n{heading}\n"
        )
    if phase:  # a chaired duel: what this turn is for
        text += f"\n{phase}"
    if revision:
        text += f"\n{revision}"
    if verdicts:  # duel join --verify: what the peer's latest turn cites, as checked
        text += f"\n{verdicts}"
    if violations:
        listed = "\n".join(
            f"- {v.code}" + (f" (line {v.line})" if v.line else "") + f": {v.message}" for v in violations
        )
        text += (
            "\nYour previous draft of this turn was rejected. Fix every violation below and answer with the "
            "whole corrected turn.\n\n"
        )
        if notes:  # the answer's form (a fence, a reasoning block…), from participant.extraction
            text += "About the form of your answer:\n" + "".join(f"- {note}\n" for note in notes) + "\n"
        text += f"Violations:\n{listed}\n\nYour previous draft:\n\n{draft or ''}\n"
    return text


def briefing(turns: Sequence[TurnBlock], *, diff: str, warnings: Sequence[str], due: str) -> str:
    """What a person reads above their draft, who has no history in view as a model has: the console's
    ``warnings`` (the editor covers them), the ``turns`` since their last (the earlier by heading and
    position, the latest in full), the edits in force as a ``diff`` of the document, and when it is ``due``."""
    text = "".join(f"\nWarning (also on the console): {warning}\n" for warning in warnings)
    if turns:
        *earlier, latest = turns
        text += "\nThe turns since your last (the earlier by heading and position, the latest in full):\n\n"
        text += "".join(_heading_and_position(block.body) + "\n" for block in earlier)
        text += latest.body.rstrip("\n") + "\n"
    if diff:
        text += f"\nThe edits in force, as a diff of the document (the revision so far):\n\n{diff}"
    else:
        text += "\nNo edit is in force: the document is as the duel began.\n"
    return text + f"\n{due}\n"


def _heading_and_position(body: str) -> str:
    """A turn's heading line and its **Position** section, for a turn shown in short."""
    lines = body.strip("\n").splitlines()
    position: list[str] = []
    if "**Position**" in lines:
        for line in lines[lines.index("**Position**") + 1 :]:
            if line.startswith("**"):
                break
            position.append(line)
    return "\n".join([lines[0], *position]).rstrip("\n") + "\n" if lines else ""


def build_request(
    *,
    duel_id: str,
    system: str,
    blocks: Sequence[TurnBlock],
    number: int,
    max_turns: int,
    heading: str,
    own_turns_before: int,
    violations: Sequence[TurnViolation] = (),
    draft: str | None = None,
    notes: Sequence[str] = (),
    verdicts: str = "",
    phase: str = "",
    by_chair: bool = False,
    revision: str = "",
) -> TurnRequest:
    """One turn's request: the system prompt, the history and the instruction, cached by the duel."""
    return TurnRequest(
        system=system,
        history=history_text(blocks),
        instruction=instruction(
            number,
            max_turns=max_turns,
            heading=heading,
            violations=violations,
            draft=draft,
            notes=notes,
            verdicts=verdicts,
            phase=phase,
            by_chair=by_chair,
            revision=revision,
        ),
        heading=heading,
        cache_key=duel_id,
        own_turns_before=own_turns_before,
    )
