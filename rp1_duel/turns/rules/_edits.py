"""The edits family: the edits a turn proposes to the source, the revision it accepts, and the sealed
openings that propose none (docs/protocol.md section 7, "Proposed edits"; section 4, "Sealed openings").
How edits are read and applied is :mod:`rp1_duel.turns._edits`' and :mod:`rp1_duel.turns.revision`'s.

Where the protocol is silent, this family decides:
- An edit naming its file (`replace in FILE`) may use any name the source may be cited by, in any letter case,
  with an optional leading `./`.
- Withdrawing an edit no earlier turn proposed is EDIT_FORMAT; without the source it is not checked.
- Every edit in force applies to the original source: a problem the revision after this turn finds (EDIT_NOT_FOUND,
  EDIT_AMBIGUOUS, EDIT_OVERLAP, EDIT_TOO_LARGE) is reported at this turn's edit of that name, else without a line,
  saying it is an earlier turn's edit.
- Without the source, or while an edit in force does not apply, the revision after a turn is unknown: an
  Accepted Revision is then not compared with it (REVISION_MISMATCH, REVISION_MISSING).
- A sealed opening is checked in the record as it stood before the opening round (its writer saw no other
  opening): it proposes and withdraws nothing, and the revision it accepts is the source's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ...vocabulary import ACCEPTED_REVISION, ACCEPTING_CONSENSUS, PROPOSED_EDITS, RuleCode
from ..revision import Revision
from ._checked import Checked, Rule, TurnViolation, any_turn, only, panel_turn

__all__ = ["RULES", "SEALED_OPENING_NOTE", "EditsContext", "revision_note", "sealed_opening_note"]

SEALED_OPENING_NOTE = (
    "This is a sealed opening: every seat writes its opening without seeing the others', and commits it "
    "before any is revealed. No other seat's opening exists for you: address the source (and a chair's brief), "
    "cite no other opening, and propose no edits in it (from the next round on you may).\n"
)


@dataclass(frozen=True)
class EditsContext:
    """The edits in force before this turn (None when the source is unknown), and whether it is a sealed opening."""

    revision: Revision | None = None
    sealed: bool = False


def sealed_opening_note(edits: EditsContext | None) -> str:
    """A sealed opening's terms, as a model is told them; empty for any other turn."""
    return SEALED_OPENING_NOTE if edits is not None and edits.sealed else ""


def revision_note(revision: Revision | None) -> str:
    """The document's current revision, as a turn must know it to amend an edit or accept the revision."""
    if revision is None:
        return ""
    if revision.problems or not revision.edits:
        return f"No edit is in force: the document's current revision is {revision.id}, the source unchanged.\n"
    added, removed = revision.counts()
    return (
        f"Edits in force: {', '.join(sorted(revision.edits))} (+{added} -{removed} lines); the current revision is "
        f"{revision.id}. An ACCEPTING_CONSENSUS turn that proposes no edit names it under **Accepted Revision**.\n"
    )


def _in_force(checked: Checked) -> Revision | None:
    return checked.ctx.edits.revision if checked.ctx.edits else None


def _revision_after(checked: Checked) -> Revision | None:
    """The edits in force after this turn; None when the source is unknown."""
    revision = _in_force(checked)
    return revision.amended(checked.turn.edits) if revision is not None else None


def _edit_format(checked: Checked) -> Iterator[TurnViolation]:
    edits, revision = checked.turn.edits, _in_force(checked)
    for line, message in edits.problems:
        yield checked.violation(RuleCode.EDIT_FORMAT, message, line, PROPOSED_EDITS)
    for name, line in edits.withdrawn:
        if revision is not None and name not in revision.edits:
            message = f"withdraws {name}, which no earlier turn proposed"
            yield checked.violation(RuleCode.EDIT_FORMAT, message, line, PROPOSED_EDITS)


def _sealed_opening_edits(checked: Checked) -> Iterator[TurnViolation]:
    edits = checked.turn.edits
    if checked.ctx.edits is not None and checked.ctx.edits.sealed and (edits.edits or edits.withdrawn):
        section = checked.turn.sections.get(PROPOSED_EDITS)
        message = "a sealed opening proposes no edits: propose them from the next round on"
        yield checked.violation(
            RuleCode.SEALED_OPENING_EDITS, message, section.line if section else None, PROPOSED_EDITS
        )


def _edit_target(checked: Checked) -> Iterator[TurnViolation]:
    names = {name.casefold() for name in checked.names}  # a citable name, in any letter case
    for edit in checked.turn.edits.edits:
        if edit.target is not None and edit.target.removeprefix("./").casefold() not in names:
            source = checked.names[-1] if checked.names else "the document debated"
            message = f"edit {edit.name} names {edit.target}: edits change the source, {source}"
            yield checked.violation(RuleCode.EDIT_TARGET, message, edit.line, PROPOSED_EDITS)


def _amendment(checked: Checked) -> list[TurnViolation]:
    """What the revision after this turn finds, when the turn changes the edits in force."""
    edits = checked.turn.edits
    after = checked.once(_revision_after)
    if after is None or not (edits.edits or edits.withdrawn):
        return []
    lines = {edit.name: edit.line for edit in edits.edits}
    found = []
    for problem in after.problems:
        earlier = "" if problem.name in lines else " (an edit an earlier turn proposed: amend or withdraw it)"
        found.append(
            checked.violation(problem.code, problem.message + earlier, lines.get(problem.name), PROPOSED_EDITS)
        )
    return found


def _revision_mismatch(checked: Checked) -> Iterator[TurnViolation]:
    turn, code = checked.turn, RuleCode.REVISION_MISMATCH
    section = turn.sections.get(ACCEPTED_REVISION)
    if section is not None and turn.accepted_revision is None:
        message = "the **Accepted Revision** section holds one revision id, like r-0123456789ab"
        yield checked.violation(code, message, section.line, ACCEPTED_REVISION)
    if turn.stance != ACCEPTING_CONSENSUS:
        if section is not None:
            message = "only an ACCEPTING_CONSENSUS turn names the revision it accepts"
            yield checked.violation(code, message, section.line, ACCEPTED_REVISION)
        return
    after, named = checked.once(_revision_after), turn.accepted_revision
    if after is None or after.problems:
        return  # an edit that does not apply is its own violation; the source unknown, nothing to compare
    if named is not None and named != after.id:
        message = f"accepts {named}, but the revision in force after this turn is {after.id}"
        yield checked.violation(code, message, section.line if section else None, ACCEPTED_REVISION)


def _revision_missing(checked: Checked) -> Iterator[TurnViolation]:
    turn = checked.turn
    after = checked.once(_revision_after) if turn.stance == ACCEPTING_CONSENSUS else None
    if after is None or after.problems or turn.accepted_revision is not None or not after.edits:
        return
    section = turn.sections.get(ACCEPTED_REVISION)
    message = f"edits are in force: name the revision you accept, a line `**Accepted Revision**` then {after.id}"
    yield checked.violation(RuleCode.REVISION_MISSING, message, section.line if section else None, ACCEPTED_REVISION)


RULES = (
    Rule(
        code=RuleCode.EDIT_FORMAT,
        text="Proposed Edits holds only `Edit NAME: replace` (a fenced `find` block, then a"
        ' `replace` block), `Edit NAME: delete` (a `find` block), `Edit NAME: insert after heading "HEADING"` (an'
        " `insert` block) and `Withdraw NAME` of an edit in force; NAME is lower-case letters, digits and hyphens",
        applies=any_turn,
        check=_edit_format,
    ),
    Rule(
        code=RuleCode.EDIT_TARGET,
        text="an edit that names its file (`replace in FILE`) names the source, never the record",
        applies=any_turn,
        check=_edit_target,
    ),
    Rule(
        code=RuleCode.EDIT_NOT_FOUND,
        text="each edit's find text, or an insert's heading, occurs in the source (compared as"
        " quotes are, emphasis and code markers included)",
        applies=any_turn,
        check=only(RuleCode.EDIT_NOT_FOUND, _amendment),
    ),
    Rule(
        code=RuleCode.EDIT_AMBIGUOUS,
        text="each edit's find text, or an insert's heading, occurs in the source only once: quote more of it",
        applies=any_turn,
        check=only(RuleCode.EDIT_AMBIGUOUS, _amendment),
    ),
    Rule(
        code=RuleCode.EDIT_OVERLAP,
        text="no two edits in force change the same text or insert at one place: amend or withdraw"
        " one (edits always apply to the original source)",
        applies=any_turn,
        check=only(RuleCode.EDIT_OVERLAP, _amendment),
    ),
    Rule(
        code=RuleCode.EDIT_TOO_LARGE,
        text="the revised document is at most 1 MiB larger than the source",
        applies=any_turn,
        check=only(RuleCode.EDIT_TOO_LARGE, _amendment),
    ),
    Rule(
        code=RuleCode.REVISION_MISSING,
        text="while edits are in force, an `ACCEPTING_CONSENSUS` turn ends with"
        " `**Accepted Revision**` and the id of the revision in force after it",
        applies=panel_turn,
        check=_revision_missing,
    ),
    Rule(
        code=RuleCode.REVISION_MISMATCH,
        text="an Accepted Revision names the revision in force after this turn (`r-` and 12"
        " hex digits), and only an `ACCEPTING_CONSENSUS` turn has one",
        applies=panel_turn,
        check=_revision_mismatch,
    ),
    Rule(
        code=RuleCode.SEALED_OPENING_EDITS,
        text="a sealed opening proposes no edits: it is written without seeing the"
        " edits the other openings propose (propose them from the next round on)",
        applies=any_turn,
        check=_sealed_opening_edits,
    ),
)
