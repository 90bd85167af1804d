"""The rulings family: rulings on cited sources (docs/protocol.md section 10), the challenges that ask for
them and the corrections that answer them.

Where the protocol is silent, this family decides:
- A ruling binds the turns written after it: a source ruled unreliable or fabricated is cited by no later
  support item (RULED_SOURCE_CITED), and a claim redacted for a fabricated source is made by no later
  counterpoint or novel argument, compared as NOVELTY compares (REDACTED_REPEATED).
- A correction replaces a source of this participant's own turns that a ruling went against, with a URL that is
  neither that source nor one ruled against, and says why in at least MIN_CLAIM_WORDS words.
- A challenge names an earlier turn of another participant and a URL that turn's text holds (on any line).
- A chair's turn acknowledges a ruling by naming `Ruling R` anywhere in it (any letter case); the rulings it owes
  are those written since its previous turn.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from ...vocabulary import COUNTERPOINTS, NOVEL_ARGUMENT, SOURCE_CHALLENGES, SOURCE_CORRECTIONS, RuleCode
from ..challenges import MIN_CLAIM_WORDS, read_challenge, read_correction
from ..novelty import NoveltyIndex
from ..references import urls_in_line
from ._checked import Checked, Rule, TurnViolation, chair_turn, panel_turn

__all__ = ["RULES", "DueRuling", "RulingsContext", "rulings_note"]


class DueRuling(Protocol):
    """A ruling a chair's turn owes an acknowledgement (a :class:`rp1_duel.record.rulings.Ruling`)."""

    @property
    def r(self) -> int: ...  # its number
    @property
    def turn(self) -> int: ...
    @property
    def where(self) -> str: ...
    @property
    def verdict(self) -> str: ...
    @property
    def evidence(self) -> str: ...


@dataclass(frozen=True, kw_only=True)
class RulingsContext:
    """What the rulings written before this turn ask of it."""

    due: tuple[DueRuling, ...] = ()  # a chair's turn: the rulings since its last, each to acknowledge
    redacted: tuple[str, ...] = ()  # claims redacted for a fabricated source: none may be made again
    ruled: frozenset[str] = frozenset()  # sources ruled unreliable or fabricated
    own_ruled: frozenset[str] = frozenset()  # those of them this participant cited, which a correction may replace


def rulings_note(rulings: RulingsContext | None) -> str:
    """A chair's turn: the rulings since its last, each to acknowledge by its number (RULING_UNACKNOWLEDGED)."""
    if rulings is None or not rulings.due:
        return ""
    listed = "".join(f"- Ruling {r.r}: turn {r.turn}, {r.where}: {r.verdict} ({r.evidence})\n" for r in rulings.due)
    return (
        f"The service ruled on cited sources since your last turn; acknowledge each by name (`Ruling R`: …):\n{listed}"
    )


def _redacted_repeated(checked: Checked) -> Iterator[TurnViolation]:
    rulings, turn = checked.ctx.rulings, checked.turn
    if rulings is None or not rulings.redacted:
        return
    redacted = NoveltyIndex(rulings.redacted)
    made = [(c.claim, c.line, COUNTERPOINTS) for c in turn.counterpoints if c.claim]
    made += [(turn.novel_claim, turn.novel_claim_line, NOVEL_ARGUMENT)] if turn.novel_claim else []
    for claim, line, section in made:
        if redacted.repeats(claim):
            message = "repeats a claim redacted for a fabricated source: a redacted point may not be made again"
            yield checked.violation(RuleCode.REDACTED_REPEATED, message, line, section)


def _rulings_unacknowledged(checked: Checked) -> Iterator[TurnViolation]:
    due: Sequence[DueRuling] = checked.ctx.rulings.due if checked.ctx.rulings else ()
    for ruling in due:
        if re.search(rf"\bRuling {ruling.r}\b", checked.turn.text, re.IGNORECASE) is None:
            message = f"ruling {ruling.r} came since the chair's last turn: acknowledge it (`Ruling {ruling.r}`: what it found)"
            yield checked.violation(RuleCode.RULING_UNACKNOWLEDGED, message)


def _corrections_invalid(checked: Checked) -> Iterator[TurnViolation]:
    rulings = checked.ctx.rulings or RulingsContext()
    for item in checked.turn.corrections:
        correction = read_correction(item.text, item.line)
        if correction is None:
            problem = "a correction reads `Replacing https://old… with https://new…: why`"
        elif correction.old not in rulings.own_ruled:
            problem = f"{correction.old} is no source of this participant's that a ruling found unreliable"
        elif correction.new == correction.old or correction.new in rulings.ruled:
            problem = f"{correction.new} is no new source: it is the one replaced, or one ruled against"
        elif len(correction.why.split()) < MIN_CLAIM_WORDS:
            problem = f"the correction of {correction.old} says why in a few words"
        else:
            continue
        yield checked.violation(RuleCode.CORRECTION_INVALID, problem, item.line, SOURCE_CORRECTIONS)


def _ruled_sources_cited(checked: Checked) -> Iterator[TurnViolation]:
    ruled = checked.ctx.rulings.ruled if checked.ctx.rulings else frozenset()
    for entry, reference in checked.references if ruled else ():
        if reference.url is not None and reference.url in ruled:
            message = f"cites {reference.url}, which a ruling found unreliable or fabricated: a correction replaces it"
            yield checked.violation(RuleCode.RULED_SOURCE_CITED, message, entry.line, entry.section)


def _challenges_unknown(checked: Checked) -> Iterator[TurnViolation]:
    code = RuleCode.CHALLENGE_UNKNOWN
    for item in checked.turn.challenges:
        challenge = read_challenge(item.text, item.line)
        cited = checked.ctx.prior_turn(challenge.turn) if challenge else None
        if challenge is None or challenge.url is None or cited is None:
            message = "a challenge names an earlier turn and its URL: `Turn 3 https://…: the claim it fails to support`"
            yield checked.violation(code, message, item.line, SOURCE_CHALLENGES)
        elif cited.name == checked.ctx.participant_name:
            message = f"challenges turn {challenge.turn}, this participant's own: challenge another's source"
            yield checked.violation(code, message, item.line, SOURCE_CHALLENGES)
        elif all(challenge.url not in urls_in_line(line) for line in cited.text.split("\n")):
            yield checked.violation(
                code, f"turn {challenge.turn} does not cite {challenge.url}", item.line, SOURCE_CHALLENGES
            )


def _challenges_without_claim(checked: Checked) -> Iterator[TurnViolation]:
    """A challenge naming its turn and URL names the claim the URL fails to support (one that does not is
    CHALLENGE_UNKNOWN's alone)."""
    for item in checked.turn.challenges:
        challenge = read_challenge(item.text, item.line)
        if challenge is None or challenge.url is None or checked.ctx.prior_turn(challenge.turn) is None:
            continue
        if len(challenge.claim.split()) < MIN_CLAIM_WORDS:
            message = f"the challenge of {challenge.url} names no claim it fails to support"
            yield checked.violation(RuleCode.CHALLENGE_NO_CLAIM, message, item.line, SOURCE_CHALLENGES)


RULES = (
    Rule(
        code=RuleCode.REDACTED_REPEATED,
        text="no claim repeats one redacted for a fabricated source (same words after"
        " normalisation, or a token-set Jaccard similarity of 0.8 or more)",
        applies=panel_turn,
        check=_redacted_repeated,
    ),
    Rule(
        code=RuleCode.RULING_UNACKNOWLEDGED,
        text="in a chaired duel, the chair's turn names each ruling written since its"
        " last turn (`Ruling R`), saying what it found",
        applies=chair_turn,
        check=_rulings_unacknowledged,
    ),
    Rule(
        code=RuleCode.CORRECTION_INVALID,
        text="a Source Corrections item reads `Replacing OLD with NEW: why`: OLD a source of"
        " this participant's a ruling found unreliable or fabricated, NEW another URL no ruling went against, why in a"
        " few words",
        applies=panel_turn,
        check=_corrections_invalid,
    ),
    Rule(
        code=RuleCode.RULED_SOURCE_CITED,
        text="no support item cites a source a ruling found unreliable or fabricated: a Source Corrections item replaces it",
        applies=panel_turn,
        check=_ruled_sources_cited,
    ),
    Rule(
        code=RuleCode.CHALLENGE_UNKNOWN,
        text="every Source Challenges item names an earlier turn of another participant"
        " and a URL that turn cites: `Turn 3 https://…: the claim it fails to support`",
        applies=panel_turn,
        check=_challenges_unknown,
    ),
    Rule(
        code=RuleCode.CHALLENGE_NO_CLAIM,
        text="every Source Challenges item names the claim the source fails to support, in at least 3 words after the URL",
        applies=panel_turn,
        check=_challenges_without_claim,
    ),
)
