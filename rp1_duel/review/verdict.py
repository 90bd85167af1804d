"""The judged verdict an assessment ends with (``duel report --assess``): a named side wins, a draw, or void.

Each assessor's answer ends with a line ``Verdict: seat N wins. Rests on: Turn A "…", Turn B.`` (or ``draw``,
or ``void``), read at every report, never cached apart from the answer: the turns it rests on are the
assessment's own checked references inside that line. Void is not left to the model: it is forced when the
record was invalidated or does not validate, and when a fabricated citation decided it (a turn the verdict
rests on, or the winner's final turn, holds one or cites as support a turn that does). A verdict is a model's
judgement: it is labelled so and never changes the outcome or the artifact (docs/protocol.md section 11).

Pure: the report hands it the assessments, the facts of the record and a way to find the fabricated
citations beneath given turns (:func:`rp1_duel.review.decision.flagged_citations`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from .assessment import CheckedReference, ModelSection
from .decision import FlaggedCitation

__all__ = ["AGREE", "DISAGREE", "DRAW", "NONE", "VOID", "WINNER", "JudgedVerdict", "JudgedVerdicts", "judge"]

WINNER: Final = "winner"
DRAW: Final = "draw"
VOID: Final = "void"
NONE: Final = "none"  # the answer has no verdict that can be read
AGREE: Final = "agree"
DISAGREE: Final = "disagree"

# The answer's last line that begins `Verdict:` (markup around the word aside), and what it judges.
_LINE = re.compile(r"^[ \t>*_`-]*verdict[*_`]*[ \t]*:[*_`]*[ \t]*(.*)$", re.IGNORECASE | re.MULTILINE)
_WINNER = re.compile(r"(?:winner\s*[:\-]?\s*)?seat\s+#?(\d+)\b", re.IGNORECASE)
_WORD = re.compile(r"(draw|void)\b", re.IGNORECASE)


@dataclass(kw_only=True, frozen=True)
class JudgedVerdict:
    """One assessor's verdict: what its answer says, and what stands once void is forced."""

    model: str
    verdict: str  # WINNER, DRAW, VOID or NONE: what stands
    seat: int | None  # the winner, when the verdict is WINNER
    given: str | None  # what the model said (WINNER, DRAW, VOID); None when it could not be read
    given_seat: int | None  # the seat the model named as winner
    line: str | None  # the verdict line as written
    problem: str | None  # why no verdict could be read
    void_reasons: tuple[str, ...]  # why void was forced; empty when it was not
    rests_on: tuple[CheckedReference, ...]  # the turn references of the verdict line, checked


@dataclass(kw_only=True, frozen=True)
class JudgedVerdicts:
    """Every assessor's verdict, labelled as a judgement, and whether they agree."""

    label: str  # `Judged verdict (a model's judgement; the outcome stays DISSENT)`
    outcome: str | None  # the recorded outcome, unchanged; None while the duel is open
    verdicts: tuple[JudgedVerdict, ...]
    agreement: str | None  # AGREE or DISAGREE with two verdicts or more; None with one


def judge(
    sections: Sequence[ModelSection],
    *,
    outcome: str | None,
    void_reasons: Sequence[str],
    final_turns: Mapping[int, int],
    fabricated_beneath: Callable[[Sequence[int]], Sequence[FlaggedCitation]],
) -> JudgedVerdicts | None:
    """The verdicts of the shown assessments; None without any.

    ``void_reasons``: why the record itself voids every verdict (invalidated, does not validate).
    ``final_turns``: each panel seat's latest turn. ``fabricated_beneath(turns)``: the citations
    ``duel verify`` found fabricated that those turns rest on, each with the turns resting on it."""
    if not sections:
        return None
    verdicts = tuple(_judged(s, void_reasons, final_turns, fabricated_beneath) for s in sections)
    kinds = {(v.verdict, v.seat) for v in verdicts}
    agreement = None if len(verdicts) == 1 else AGREE if len(kinds) == 1 else DISAGREE
    label = f"Judged verdict (a model's judgement; the outcome stays {outcome or 'OPEN'})"
    return JudgedVerdicts(label=label, outcome=outcome, verdicts=verdicts, agreement=agreement)


def _judged(
    section: ModelSection,
    record_reasons: Sequence[str],
    final_turns: Mapping[int, int],
    fabricated_beneath: Callable[[Sequence[int]], Sequence[FlaggedCitation]],
) -> JudgedVerdict:
    found = list(_LINE.finditer(section.text))
    line = found[-1] if found else None  # the last one: the answer ends with its verdict
    rests_on: tuple[CheckedReference, ...] = ()
    given: str | None
    seat: int | None
    problem: str | None
    if line is None:
        given, seat, problem = None, None, "the answer ends with no `Verdict:` line"
    else:
        given, seat, problem = _read(line.group(1), final_turns)
        rests_on = tuple(r for r in section.references if line.start() <= r.start < line.end())
    reasons = list(record_reasons)
    rested = sorted({r.turn for r in rests_on if r.found})
    reasons += [_fabricated("the verdict rests on", c) for c in fabricated_beneath(rested)]
    if given == WINNER and seat is not None:
        reasons += [_fabricated("the winner's final turn is", c) for c in fabricated_beneath([final_turns[seat]])]
    verdict = VOID if reasons else given or NONE
    return JudgedVerdict(
        model=section.model,
        verdict=verdict,
        seat=seat if verdict == WINNER else None,
        given=given,
        given_seat=seat,
        line=line.group().strip() if line else None,
        problem=problem,
        void_reasons=tuple(dict.fromkeys(reasons)),
        rests_on=rests_on,
    )


def _fabricated(lead: str, citation: FlaggedCitation) -> str:
    """`the verdict rests on turn 4, which rests on turn 3's fabricated citation https://…`."""
    turns = citation.deciding_turns
    resting = f"turn{'s' if len(turns) > 1 else ''} {', '.join(map(str, turns))}"
    cited = citation.url or citation.item
    if turns == (citation.turn,):
        return f"{lead} {resting}, which holds a fabricated citation: {cited}"
    return f"{lead} {resting}, which rests on turn {citation.turn}'s fabricated citation: {cited}"


def _read(judgement: str, final_turns: Mapping[int, int]) -> tuple[str | None, int | None, str | None]:
    """What a verdict line judges: (kind, the winner's seat, why it could not be read)."""
    text = judgement.lstrip(" *_`")
    winner = _WINNER.match(text)
    if winner:
        seat = int(winner.group(1))
        if seat not in final_turns:
            return None, None, f"the verdict names seat {seat}, which is not a panel seat that wrote a turn"
        return WINNER, seat, None
    word = _WORD.match(text)
    if word:
        return word.group(1).casefold(), None, None
    return None, None, "the verdict line reads as none of `seat N wins`, `draw`, `void`"
