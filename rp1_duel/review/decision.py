"""What a report leads with (docs/protocol.md section 11, "The decision"): each seat's position in full,
whether ``duel validate`` passes, the citations ``duel verify`` found wanting and the deciding turns that
rest on them; then what the debate changed for each seat.

Pure, as :mod:`rp1_duel.review.report` is: it assembles these from the replayed history, the citations
and their verdicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..record import Citation, CitationEntry, History, Problem
from ..turns import parse_reference
from ..vocabulary import CitationKind, Verdict

__all__ = [
    "FLAGGED_VERDICTS",
    "AlternativeView",
    "DecisionFacts",
    "FlaggedCitation",
    "Quote",
    "RevisionView",
    "SeatChange",
    "SeatPosition",
    "StanceRevision",
    "and_list",
    "flagged_citations",
    "seat_positions",
]

# What the warning lists: evidence that failed (fabricated, unreliable) or that could not be
# established (unverifiable, inconclusive). Unjudged is left out: nobody was asked, nothing was found.
FLAGGED_VERDICTS = (Verdict.FABRICATED, Verdict.UNRELIABLE, Verdict.UNVERIFIABLE, Verdict.INCONCLUSIVE)


@dataclass(frozen=True)
class Quote:
    """Words quoted from a turn, with the turn's number."""

    turn: int
    text: str


@dataclass(kw_only=True, frozen=True)
class SeatPosition:
    """A seat's Position in one of its turns, in full."""

    seat: int
    turn: int
    stance: str | None
    text: str


@dataclass(kw_only=True, frozen=True)
class FlaggedCitation:
    """A citation whose verdict is one of :data:`FLAGGED_VERDICTS`, and the deciding turns that rest on it."""

    turn: int
    seat: int
    item: str
    url: str | None
    verdict: str
    reason: str | None
    deciding_turns: tuple[int, ...]  # those holding it, or citing as support, through turn references, a turn that does


@dataclass(kw_only=True, frozen=True)
class RevisionView:
    """The revision of the source the seats agreed on, as the decision shows it (issue 22's Proposed Edits)."""

    id: str
    diff: str  # a unified diff against the source
    files: tuple[str, ...]
    added: int
    removed: int
    accepted_by: tuple[str, ...]  # participants' names
    apply: str | None = None  # the `duel apply` command that brings it to the document


@dataclass(kw_only=True, frozen=True)
class AlternativeView:
    """A seat's revision left on the table by a duel that agreed none (DISSENT, MAX_TURNS), credited to the seat
    whose turns proposed its edits (docs/protocol.md section 8, "The agreed revision")."""

    seat: int
    name: str
    id: str
    diff: str  # a unified diff against the source
    files: tuple[str, ...]
    added: int
    removed: int


@dataclass(kw_only=True, frozen=True)
class DecisionFacts:
    """The decision: agreed or not, each seat's last position, whether the record validates, what to distrust."""

    agreed: bool  # the turns reached ACCEPTED_CONSENSUS, and the record says so
    positions: tuple[SeatPosition, ...]  # each seat's latest: the deciding turns' when agreed
    valid: bool | None  # `duel validate` passes; None when it was not run
    validation_problems: tuple[Problem, ...]
    validation_notes: tuple[str, ...]  # what it could not check (a source it did not read, …)
    flagged: tuple[FlaggedCitation, ...]
    revision: RevisionView | None = None  # None until turns carry Proposed Edits
    alternatives: tuple[AlternativeView, ...] = ()  # without an agreed revision: each seat's, by seat

    @property
    def fabricated(self) -> int:
        """How many citations ``duel verify`` found fabricated."""
        return sum(1 for citation in self.flagged if citation.verdict == Verdict.FABRICATED)


@dataclass(kw_only=True, frozen=True)
class StanceRevision:
    """A seat's stance moving up the scale toward consensus, with the turn's Stance Revision Support."""

    turn: int
    previous: str | None
    stance: str | None
    support: tuple[str, ...]


@dataclass(kw_only=True, frozen=True)
class SeatChange:
    """What the debate changed for one seat: where it started and ended, what it conceded and what it held."""

    seat: int
    opening: SeatPosition
    final: SeatPosition
    revisions: tuple[StanceRevision, ...]
    adopted: tuple[Quote, ...]  # agreements another seat worded first: the seat's first turn stating it, that wording
    held: tuple[Quote, ...]  # its unresolved items still open: the turn raising it, its latest wording


def and_list(parts: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return " and ".join([", ".join(parts[:-1]), parts[-1]] if len(parts) > 2 else parts)


def seat_positions(history: History, *, last: bool) -> tuple[SeatPosition, ...]:
    """Each seat's Position in its first (or last) turn, by seat; a chair takes no position."""
    found: dict[int, SeatPosition] = {}
    for number, turn in zip(history.numbers, history.turns, strict=True):
        seat = history.schedule.speaker(number)
        if not turn.chair and (last or seat not in found):
            found[seat] = SeatPosition(seat=seat, turn=number, stance=turn.stance, text=turn.position.strip())
    return tuple(found[seat] for seat in sorted(found))


def flagged_citations(
    history: History,
    cited: Sequence[Citation],
    verdicts: Mapping[Citation, CitationEntry],
    deciding: Sequence[int],
) -> tuple[FlaggedCitation, ...]:
    """The citations whose verdict is flagged, in the order they stand, each with the deciding turns resting on it."""
    resting = _resting_on(history, cited, deciding)
    found = []
    for citation in cited:
        entry = verdicts.get(citation)
        if entry is not None and entry.verdict in FLAGGED_VERDICTS:
            found.append(
                FlaggedCitation(
                    turn=citation.turn,
                    seat=history.schedule.speaker(citation.turn),
                    item=citation.item,
                    url=citation.url,
                    verdict=entry.verdict,
                    reason=entry.reason,
                    deciding_turns=resting.get(citation.turn, ()),
                )
            )
    return tuple(found)


def _resting_on(history: History, cited: Sequence[Citation], deciding: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """For each turn, the deciding turns that rest on it: itself, and those citing it as support, directly or
    through other turns. Addresses is what a turn counters, not its evidence: it is not followed (section 7)."""
    supported_by: dict[int, set[int]] = {}
    for citation in cited:
        if citation.kind == CitationKind.TURN:
            target = parse_reference(citation.item, history.source_names).turn
            if target is not None:
                supported_by.setdefault(citation.turn, set()).add(target)
    resting: dict[int, list[int]] = {}
    for decider in deciding:
        reached, waiting = {decider}, [decider]
        while waiting:
            for target in supported_by.get(waiting.pop(), ()):
                if target not in reached:
                    reached.add(target)
                    waiting.append(target)
        for number in reached:
            resting.setdefault(number, []).append(decider)
    return {number: tuple(sorted(deciders)) for number, deciders in resting.items()}
