"""What a model is asked for one turn, laid out so prompt caches can reuse it.

A request is three parts: ``system`` (the contract, persona, position and the numbered
source: identical for all of a participant's turns), ``history`` (the accepted turns,
which only grow at the end), and a short ``instruction`` (this turn's heading, and the
violations to repair). Everything stable comes first.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..record.artifact import TurnBlock
from ..record.history import Claimant
from ..turns.guide import turn_guide
from ..turns.rules import TurnViolation
from ..turns.source import SourceDocument
from .providers import TurnRequest

HISTORY_HEADER = "The debate so far (accepted turns, oldest first):\n\n"


def system_prompt(name: str, topic: str, source: SourceDocument, source_name: str,
                  persona: str | None, position: str | None) -> str:
    persona_text = persona or "a rigorous, fair-minded reviewer who argues from the text"
    position_text = position or "form your own view from the source, and change it when the other side is right"
    return (
        f"You are {name}, one of two participants in a Socratic duel: a written debate about the Markdown "
        f"document `{source_name}`, on the topic \"{topic}\". The other participant is another AI model. "
        f"Each of you writes one turn at a time; a service checks every turn against the rules below and "
        f"rejects turns that break them.\n\n"
        f"Persona: {persona_text}.\nYour position: {position_text}.\n\n"
        f"Argue from the document: cite its headings, lines (`{source_name}:12-18`) and exact excerpts, and "
        f"earlier turns. Concede what is right, keep blocking items for real objections, and move to "
        f"CONVERGING and ACCEPTING_CONSENSUS once nothing blocking is left; use DISSENTING only for a "
        f"disagreement that will not resolve.\n\n"
        f"# How a turn must look\n\n{turn_guide(source_name, fenced=False)}\n\n"
        f"Answer with the turn alone: no preamble, no closing remarks, no code fence.\n\n"
        f"# The source document `{source_name}`, with line numbers\n\n{source.numbered()}\n"
    )


def history_text(blocks: Sequence[TurnBlock]) -> str:
    if not blocks:
        return HISTORY_HEADER + "(none yet: you open the debate)\n"
    return HISTORY_HEADER + "".join(block.body.rstrip("\n") + "\n\n" for block in blocks)


def heading_prefix(number: int, claimant: Claimant) -> str:
    return f"## Turn {number} — {claimant.name} ({claimant.harness} / {claimant.model_id}) — "


def instruction(number: int, max_turns: int, prefix: str, violations: Sequence[TurnViolation] = (),
                draft: str | None = None, notes: Sequence[str] = ()) -> str:
    last = " It is the last turn of the duel." if number == max_turns else ""
    text = (
        f"Write turn {number} of at most {max_turns}.{last} Begin with exactly this heading line, "
        f"with your stance in place of STANCE:\n\n{prefix}STANCE\n"
    )
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


def build_request(*, duel_id: str, system: str, blocks: Sequence[TurnBlock], number: int, max_turns: int,
                  prefix: str, own_turns_before: int, violations: Sequence[TurnViolation] = (),
                  draft: str | None = None, notes: Sequence[str] = ()) -> TurnRequest:
    return TurnRequest(
        system=system,
        history=history_text(blocks),
        instruction=instruction(number, max_turns, prefix, violations, draft, notes),
        cache_key=duel_id,
        own_turns_before=own_turns_before,
    )
