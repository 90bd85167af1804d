"""The debate family: each turn moves the debate on, is grounded, says where it stands, and accepts only what it can.

Where the protocol is silent, this family decides:
- In Agreements, Unresolved Items and Stance Revision Support, each top-level list item
  and each paragraph outside a list is one item.
- NOVELTY compares the novel argument's claim (without a leading `Claim:`) with the
  positions and claims of earlier turns only; the caller adds each accepted turn to the
  index (`NoveltyIndex.add_turn`); without an index, repeats are not checked. Words are
  runs of letters and digits after `normalize_text`.
- Unresolved item tags are case-insensitive and may use any dash (`non–blocking`).
- A "scoped critique" (CONSENSUS_BLOCKED) is a counterpoint with Addresses and a Claim.
- Grounding counts source and turn references among support items, resolved or not (one
  that does not resolve has its own violation). Addresses names what is countered; it is
  not evidence, so it does not ground a turn.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...vocabulary import (
    ACCEPTING_CONSENSUS,
    NOVEL_ARGUMENT,
    STANCE_REVISION_SUPPORT,
    STANCES,
    UNRESOLVED_ITEMS,
    RuleCode,
)
from ._checked import Checked, Rule, TurnViolation, panel_turn, shorten

__all__ = ["RULES"]


def _novelty(checked: Checked) -> Iterator[TurnViolation]:
    turn, code = checked.turn, RuleCode.NOVELTY
    section = turn.sections.get(NOVEL_ARGUMENT)
    if section is None or section.is_empty:
        return
    if not turn.novel_support:
        message = "the novel argument needs a `Support:` line followed by at least one support item"
        yield checked.violation(code, message, section.line, NOVEL_ARGUMENT)
    if not turn.novel_claim:
        yield checked.violation(
            code, "the novel argument needs a claim before `Support:`", section.line, NOVEL_ARGUMENT
        )
    elif checked.ctx.novelty is not None and checked.ctx.novelty.repeats(turn.novel_claim):
        message = "the novel argument's claim repeats an earlier position or claim"
        yield checked.violation(code, message, turn.novel_claim_line, NOVEL_ARGUMENT)


def _unresolved_tags(checked: Checked) -> Iterator[TurnViolation]:
    for item in checked.turn.unresolved:
        if item.blocking is None:
            message = f"{shorten(item.text)!r} must end with `(blocking)` or `(non-blocking)`"
            yield checked.violation(RuleCode.UNRESOLVED_TAG, message, item.line, UNRESOLVED_ITEMS)


def _stance_revision(checked: Checked) -> Iterator[TurnViolation]:
    turn, previous = checked.turn, checked.ctx.previous_stance
    if previous is None or turn.stance not in STANCES or turn.stance == previous or turn.stance_revision_support:
        return
    section = turn.sections.get(STANCE_REVISION_SUPPORT)
    message = f"the stance changed from {previous} to {turn.stance}: give Stance Revision Support"
    line = section.line if section else turn.heading_line
    yield checked.violation(RuleCode.STANCE_REVISION, message, line, STANCE_REVISION_SUPPORT)


def _consensus_blocked(checked: Checked) -> Iterator[TurnViolation]:
    turn, code = checked.turn, RuleCode.CONSENSUS_BLOCKED
    if turn.stance != ACCEPTING_CONSENSUS:
        return
    for item in turn.unresolved:
        if item.blocking:
            yield checked.violation(
                code, "ACCEPTING_CONSENSUS cannot keep a blocking item", item.line, UNRESOLVED_ITEMS
            )
    if not turn.support_items:
        yield checked.violation(code, "ACCEPTING_CONSENSUS needs at least one support item", turn.heading_line)
    scoped = any(point.addresses and point.claim for point in turn.counterpoints)
    if not scoped and not any(item.blocking is False for item in turn.unresolved):
        message = "ACCEPTING_CONSENSUS needs a non-blocking unresolved item or a scoped critique (a counterpoint)"
        yield checked.violation(code, message, turn.heading_line)


def _ungrounded(checked: Checked) -> Iterator[TurnViolation]:
    kinds = {reference.kind for _, reference in checked.references}
    number = checked.ctx.turn_number
    if "source" in kinds or (number > 1 and "turn" in kinds):
        return
    if number > 1:
        yield checked.violation(RuleCode.UNGROUNDED, "the turn cites neither the source nor an earlier turn")
    else:
        yield checked.violation(RuleCode.UNGROUNDED, "the first turn must cite the source at least once")


RULES = (
    Rule(
        code=RuleCode.NOVELTY,
        text="the novel argument has support, and its claim repeats no earlier position or claim"
        " (same words after normalisation, or a token-set Jaccard similarity of 0.8 or more)",
        applies=panel_turn,
        check=_novelty,
    ),
    Rule(
        code=RuleCode.UNRESOLVED_TAG,
        text="every unresolved item ends with `(blocking)` or `(non-blocking)`",
        applies=panel_turn,
        check=_unresolved_tags,
    ),
    Rule(
        code=RuleCode.STANCE_REVISION,
        text="a stance different from this participant's previous one comes with non-empty Stance Revision Support",
        applies=panel_turn,
        check=_stance_revision,
    ),
    Rule(
        code=RuleCode.CONSENSUS_BLOCKED,
        text="`ACCEPTING_CONSENSUS` has no blocking item, at least one support item,"
        " and at least one non-blocking item or scoped critique",
        applies=panel_turn,
        check=_consensus_blocked,
    ),
    Rule(
        code=RuleCode.UNGROUNDED,
        text="the turn cites the source at least once, or (after turn 1) the source or an earlier turn",
        applies=panel_turn,
        check=_ungrounded,
    ),
)
