"""The chair family: a chair's turns, by their phase, and the closing round the chair frames.

Where the protocol is silent, this family decides:
- A chair's turn (``ChairContext.phase`` one of the chair's) is read with the chair's labels and
  held only to the rules that apply to a chair's turn (``Rule.applies``): not to the panel's sections,
  stances, evidence or grounding.
- A closing-round turn's excerpt addresses a point when the point's own text holds it.
- SILENT_OVERRULE reads the synthesis's Agreed and Departures items only: its Synthesis prose is the
  chair's judgement. A seat holds out when its final turn is not ACCEPTING_CONSENSUS; an Agreed item
  has a holding-out seat's agreement only by quoting that final turn's Agreements; a Departures item
  is about the first `Seat N` it names and must name that seat's final stance (any letter case).
- CLOSING_NEW_MATERIAL reads each line outside fenced code of every section but Proposed Edits and
  Accepted Revision: one violation per new URL (compared exactly with every earlier turn's), one per
  line for its new figures (in no earlier turn, not in the source).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ...vocabulary import (
    ACCEPTED_REVISION,
    ACCEPTING_CONSENSUS,
    AGREED,
    CHAIR_PHASE_SECTIONS,
    COUNTERPOINTS,
    DEPARTURES,
    MAX_UNENGAGED_POINTS,
    PROPOSED_EDITS,
    UNENGAGED_POINTS,
    Phase,
    RuleCode,
)
from ..figures import FigureIndex, figures_in
from ..grammar import Item, ParsedTurn
from ..markdown import fenced_lines
from ..matching import SearchableText
from ..references import parse_reference, turns_in_text, urls_in_line
from ._checked import Checked, Rule, TurnViolation, chair_turn, named_figures, panel_turn, shorten

__all__ = ["RULES", "ChairContext", "phase_note"]

_SEAT = re.compile(r"\bseat\s+#?(\d+)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ChairContext:
    """A chaired duel (docs/protocol.md section 4, "A chair"): the turn's phase, the chair's pre-closing
    turn (whose points the closing round answers) and, for the synthesis, each panel seat's latest turn."""

    phase: str  # a rp1_duel.vocabulary.Phase
    pre_closing: int | None = None
    final_turns: Mapping[int, int] = field(default_factory=dict)  # seat -> turn number; the synthesis only


def _chair_format(checked: Checked) -> Iterator[TurnViolation]:
    turn, code = checked.turn, RuleCode.CHAIR_FORMAT
    phase = checked.ctx.chair.phase if checked.ctx.chair else ""
    required, optional = CHAIR_PHASE_SECTIONS[phase]
    allowed = (*required, *optional)
    name_of_phase = phase.replace("_", " ")
    latest = -1
    for name, section in turn.sections.items():
        if name not in allowed:
            message = f"**{name}** does not belong in the {name_of_phase}; its sections are {', '.join(allowed)}"
            yield checked.violation(code, message, section.line, name)
            continue
        if allowed.index(name) < latest:
            yield checked.violation(code, f"**{name}** must come before **{allowed[latest]}**", section.line, name)
        latest = max(latest, allowed.index(name))
        if section.is_empty:
            yield checked.violation(code, f"the **{name}** section is empty", section.line, name)
    for section in turn.duplicate_sections:
        yield checked.violation(code, f"**{section.name}** appears more than once", section.line, section.name)
    for name in required:
        if name not in turn.sections:
            message = f"the {name_of_phase} needs a **{name}** section (a line `**{name}**`)"
            yield checked.violation(code, message, None, name)
    if phase == Phase.PRE_CLOSING:
        yield from _points(checked)


def _points(checked: Checked) -> Iterator[TurnViolation]:
    section = checked.turn.sections.get(UNENGAGED_POINTS)
    points, code = checked.turn.points, RuleCode.CHAIR_FORMAT
    if section is None or section.is_empty:
        return
    if not 1 <= len(points) <= MAX_UNENGAGED_POINTS:
        message = f"list 1 to {MAX_UNENGAGED_POINTS} unengaged points, not {len(points)}"
        yield checked.violation(code, message, section.line, UNENGAGED_POINTS)
    for point in points:
        mentions = turns_in_text(point.text)
        if not mentions:
            message = f"{shorten(point.text)!r} must name the earlier panel turn that raised it (`Turn M`)"
            yield checked.violation(code, message, point.line, UNENGAGED_POINTS)
        for mention in mentions:
            cited = checked.ctx.prior_turn(mention.turn)
            if cited is not None and cited.chair:
                message = f"Turn {mention.turn} is the chair's: name the panel turn that raised the point"
                yield checked.violation(code, message, point.line, UNENGAGED_POINTS)


def _silent_overrule(checked: Checked) -> Iterator[TurnViolation]:
    """The synthesis records as agreed only what each holding-out seat agreed to, or says it departs. A seat
    holds out when its final turn is not ACCEPTING_CONSENSUS. An Agreed item has its agreement when the item
    quotes that final turn's Agreements (`Turn M "…"`); every holding-out seat an Agreed item lacks is
    overruled, and needs a Departures item: one whose first `Seat N` is that seat, naming its final stance."""
    ctx, chair = checked.ctx, checked.ctx.chair
    if chair is None or chair.phase != Phase.SYNTHESIS or not chair.final_turns:
        return
    finals = {seat: (number, turn) for seat, number in chair.final_turns.items() if (turn := ctx.prior_turn(number))}
    holding_out = {seat: found for seat, found in finals.items() if found[1].stance != ACCEPTING_CONSENSUS}
    overruled: dict[int, Item] = {}  # seat -> the first Agreed item it did not agree to
    for item in checked.turn.agreed:
        quoted = [(m.turn, m.excerpt) for m in turns_in_text(item.text) if m.excerpt is not None]
        for seat, (number, final) in holding_out.items():
            agreed = any(n == number and _agreed_in(final, excerpt) for n, excerpt in quoted)
            if not agreed and seat not in overruled:
                overruled[seat] = item
    found, departed = _departures(checked, finals)
    yield from found
    for seat, item in sorted(overruled.items()):
        if seat not in departed:
            number, final = holding_out[seat]
            message = (
                f"{shorten(item.text)!r} records as agreed what Seat {seat} ({final.stance} in Turn {number})"
                f' did not agree to: quote its agreement (`Turn {number} "…"`, words of its Agreements), or add'
                f" a **Departures** item naming Seat {seat}, its final stance {final.stance}, and what the"
                " synthesis concludes instead and why"
            )
            yield checked.violation(RuleCode.SILENT_OVERRULE, message, item.line, AGREED)


def _departures(checked: Checked, finals: Mapping[int, tuple[int, ParsedTurn]]) -> tuple[list[TurnViolation], set[int]]:
    """The Departures items' violations, and the seats they name rightly: each item is about the first seat
    it names, and names its final stance."""
    found: list[TurnViolation] = []
    departed: set[int] = set()
    for item in checked.turn.departures:
        named = _SEAT.search(item.text)
        seat = int(named.group(1)) if named else None
        if seat is None or seat not in finals:
            which = f"names Seat {seat}, which is not a panel seat" if named else "names no seat"
            message = f"{shorten(item.text)!r} {which}: begin each departure with the seat it overrules (`Seat 2`)"
            found.append(checked.violation(RuleCode.SILENT_OVERRULE, message, item.line, DEPARTURES))
            continue
        number, final = finals[seat]
        stance = final.stance or ""
        if not re.search(rf"\b{re.escape(stance)}\b", item.text, re.IGNORECASE):
            message = f"the departure from Seat {seat} must name its final stance, {stance} (Turn {number})"
            found.append(checked.violation(RuleCode.SILENT_OVERRULE, message, item.line, DEPARTURES))
            continue
        departed.add(seat)
    return found, departed


def _agreed_in(turn: ParsedTurn, excerpt: str) -> bool:
    """Whether ``excerpt`` is quoted from one of the turn's Agreements items."""
    return any(SearchableText(item.text).contains(excerpt) for item in turn.agreements)


def _unengaged_points(checked: Checked) -> Iterator[TurnViolation]:
    """Each closing-round turn answers every point of the pre-closing: a counterpoint addresses
    point k when it names the pre-closing turn with an excerpt of point k itself."""
    ctx, chair, turn = checked.ctx, checked.ctx.chair, checked.turn
    if chair is None or chair.phase != Phase.CLOSING or not chair.pre_closing:
        return
    pre_closing = ctx.prior_turn(chair.pre_closing)
    if pre_closing is None:
        return
    quoted = [
        reference.excerpt
        for point in turn.counterpoints
        for target in (point.addresses or "").split("|")
        if (reference := parse_reference(target.strip(), checked.names)).kind == "turn"
        and reference.turn == chair.pre_closing
        and reference.excerpt is not None
    ]
    section = turn.sections.get(COUNTERPOINTS)
    for number, point in enumerate(pre_closing.points, 1):
        text = SearchableText(point.text)
        if not any(text.contains(excerpt) for excerpt in quoted):
            message = (
                f"unengaged point {number} of Turn {chair.pre_closing} is not addressed: add a counterpoint "
                f'with `Addresses: Turn {chair.pre_closing} "…"` quoting it: {shorten(point.text)!r}'
            )
            line = section.line if section else turn.heading_line
            yield checked.violation(RuleCode.UNENGAGED_POINTS, message, line, COUNTERPOINTS)


def _closing_new_material(checked: Checked) -> Iterator[TurnViolation]:
    """A closing-round turn: each URL it mentions outside code, and each figure it states, outside Proposed
    Edits and Accepted Revision, is in an earlier turn (any of them, the chair's too) or the source."""
    ctx = checked.ctx
    if ctx.chair is None or ctx.chair.phase != Phase.CLOSING:
        return
    known_urls = frozenset().union(*(turn.urls for turn in ctx.prior_turns))
    indexes = [turn.figures for turn in ctx.prior_turns] + ([ctx.source.figures] if ctx.source else [])
    for section in checked.turn.sections.values():
        if section.name in (PROPOSED_EDITS, ACCEPTED_REVISION):
            continue  # an edit rewrites the document; it is a proposal, not a claim
        lines = section.body.split("\n")
        for offset, (text, fenced) in enumerate(zip(lines, fenced_lines(lines), strict=True)):
            if not fenced:
                line = section.line + 1 + offset
                yield from _closing_line(
                    checked=checked, text=text, line=line, section=section.name, known_urls=known_urls, indexes=indexes
                )


def _closing_line(
    checked: Checked, *, text: str, line: int, section: str, known_urls: frozenset[str], indexes: Sequence[FigureIndex]
) -> Iterator[TurnViolation]:
    for url in urls_in_line(text):
        if url not in known_urls:
            message = f"the closing round brings no new source: {url} is cited by no earlier turn"
            yield checked.violation(RuleCode.CLOSING_NEW_MATERIAL, message, line, section)
    new = figures_in(text)
    for index in indexes:
        new = index.missing(new) if new else new
    if new:
        message = (
            f"the closing round brings no new figure: {named_figures(new)} {'is' if len(new) == 1 else 'are'} in no"
            " earlier turn and not in the source; argue from what the record holds"
        )
        yield checked.violation(RuleCode.CLOSING_NEW_MATERIAL, message, line, section)


def phase_note(
    phase: str | None,
    *,
    lineup: Sequence[str] = (),
    points: Sequence[Item] = (),
    pre_closing: int | None = None,
    outcome: str | None = None,
    final_stances: Sequence[str] = (),
) -> str:
    """What this turn of a chaired duel is for, as a model is told it; empty without a chair. ``final_stances``:
    for the synthesis, each panel seat's final stance, one line a seat (`Seat 2, Bob: DISSENTING in Turn 6`)."""
    if phase == Phase.OPENING_BRIEF:
        names = "; ".join(lineup)
        return (
            f"This is your opening brief. State the question the panel must answer, present the lineup "
            f"({names}), and say what a good answer looks like.\n"
        )
    if phase == Phase.PRE_CLOSING:
        return (
            f"This is your pre-closing turn: the closing round comes next. List 1 to {MAX_UNENGAGED_POINTS} of the "
            "most substantive points a panelist raised that no one engaged since, each naming the panel turn that "
            'raised it, with its words quoted (`Turn M "…"`). Every closing turn must answer each point you '
            "list by quoting its words.\n"
        )
    if phase == Phase.SYNTHESIS:
        stances = "".join(f"- {line}\n" for line in final_stances)
        return (
            f"This is your closing synthesis: the closing round is complete, and the panel's outcome is "
            f"{outcome or 'not decided'}. Say what the panel concluded and why, citing turns; Agreed and Still "
            "Open list what it agreed and what remains.\n"
        ) + (
            f"Each seat's final stance:\n{stances}A seat whose final stance is not ACCEPTING_CONSENSUS agreed "
            "only to what that turn's Agreements say: each Agreed item quotes them for every such seat "
            '(`Turn M "its words"`), or a Departures item names the seat (`Seat N`), its final stance, and what '
            "you conclude instead and why (`SILENT_OVERRULE`).\n"
            if final_stances
            else ""
        )
    if phase == Phase.CLOSING and points and pre_closing is not None:
        listed = "".join(f"{number}. {point.text}\n" for number, point in enumerate(points, 1))
        return (
            f"This is your closing turn. The chair listed these unengaged points in turn {pre_closing}; your "
            f"Counterpoints must address every one, each with a counterpoint whose Addresses names turn "
            f'{pre_closing} with words quoted from that point (`Addresses: Turn {pre_closing} "…"`):\n{listed}'
            "A closing turn brings nothing new: it cites no URL and states no figure that is not already in an "
            "earlier turn or the source (`CLOSING_NEW_MATERIAL`).\n"
        )
    return ""


RULES = (
    Rule(
        code=RuleCode.CHAIR_FORMAT,
        text="a chair's turn ends its heading with `CHAIR` and has its phase's sections, in order,"
        " each once and non-empty: the opening brief Question, Lineup, What A Good Answer Looks Like; the"
        " pre-closing Unengaged Points, 1 to 3 items each naming the earlier panel turn that raised it (`Turn M`);"
        " the synthesis Synthesis, then optionally Agreed, Still Open and Departures",
        applies=chair_turn,
        check=_chair_format,
    ),
    Rule(
        code=RuleCode.UNENGAGED_POINTS,
        text="in the closing round, every point of the chair's Unengaged Points has a"
        " counterpoint whose Addresses names the chair's pre-closing turn with an excerpt of that point"
        ' (`Addresses: Turn M "words of the point"`)',
        applies=panel_turn,
        check=_unengaged_points,
    ),
    Rule(
        code=RuleCode.SILENT_OVERRULE,
        text="the synthesis overrules no seat silently: while a seat's final turn is not"
        ' `ACCEPTING_CONSENSUS`, each Agreed item quotes that turn\'s Agreements (`Turn M "its words"`), or a'
        " **Departures** item (after Still Open) names the seat (`Seat 2`), its final stance, and what the"
        " synthesis concludes instead and why",
        applies=chair_turn,
        check=_silent_overrule,
    ),
    Rule(
        code=RuleCode.CLOSING_NEW_MATERIAL,
        text="a closing-round turn brings nothing new: every URL it mentions and every"
        " figure it states (outside Proposed Edits) is already in an earlier turn or the source",
        applies=panel_turn,
        check=_closing_new_material,
    ),
)
