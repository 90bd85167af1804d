"""Did the debate help? What a vote of the openings alone would have decided, and whether the debate's
outcome differs (docs/protocol.md section 11, "Against the openings").

Published work on multi-agent debate finds that a plain vote of each model's first answer explains
most of what debate gains: a report says whether this debate did better than that vote. Pure: from a
record's replayed history and its recorded outcome.

Decisions (section 11):

- A seat votes with its opening turn (its first; with a chair, its turn of the opening round), by
  the turn's stance: ``ACCEPTING_CONSENSUS`` and ``CONVERGING`` accept, ``DISSENTING`` rejects,
  ``OPEN_TO_DEBATE`` and ``REVISING`` (or a heading naming no stance) are undecided.
- Positions are not compared, the stance alone votes: the novelty measure (word sets, Jaccard 0.8)
  finds repeats, not agreement. Two positions agreeing in other words score far below it, and
  "leases are too long" against "leases are not too long" scores above it. Each seat's Position's
  first line is shown beside its vote, for the reader to judge.
- The openings are unanimous (every seat one vote), a majority (more than half the seats one vote,
  k of n), split (no vote has more than half), or incomplete (a seat wrote no turn). What they
  decide: accept or reject when unanimous or a majority for it; nothing otherwise.
- The outcome decides: ``ACCEPTED_CONSENSUS`` accept, ``DISSENT`` reject, ``MAX_TURNS`` nothing (the
  turns ran out with neither). ``TIMEOUT``, ``INVALIDATED`` and an open duel have not finished: no
  comparison can be made.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..record import History
from ..vocabulary import (
    ACCEPTED_CONSENSUS,
    ACCEPTING_CONSENSUS,
    CONVERGING,
    DISSENT,
    DISSENTING,
    INVALIDATED,
    MAX_TURNS,
    OPEN_TO_DEBATE,
    REVISING,
    TIMEOUT,
)
from .decision import seat_positions
from .flips import Flip, flip_ledger

__all__ = [
    "ACCEPT",
    "CHANGES",
    "DECIDED",
    "KEPT",
    "REJECT",
    "REVERSED",
    "UNDECIDED",
    "UNDONE",
    "UNKNOWN",
    "VOTES",
    "OpeningVote",
    "Openings",
    "openings_of",
]

ACCEPT, REJECT, UNDECIDED = "accept", "reject", "undecided"
VOTES = {
    ACCEPTING_CONSENSUS: ACCEPT,
    CONVERGING: ACCEPT,
    DISSENTING: REJECT,
    OPEN_TO_DEBATE: UNDECIDED,
    REVISING: UNDECIDED,
}
UNANIMOUS, MAJORITY, SPLIT, INCOMPLETE = "unanimous", "majority", "split", "incomplete"
# What an outcome decides; MAX_TURNS decides nothing, and the outcomes not listed end before a verdict.
DECIDES = {ACCEPTED_CONSENSUS: ACCEPT, DISSENT: REJECT}
FINISHED = (ACCEPTED_CONSENSUS, DISSENT, MAX_TURNS)
# What the debate did to the openings' verdict: kept it (nothing decided either is a verdict kept); decided
# what they left open; reversed it (accept to reject, or back); undid it (the turns ran out, MAX_TURNS); or
# unknown: the duel did not finish (TIMEOUT, INVALIDATED, still open).
KEPT, DECIDED, REVERSED, UNDONE, UNKNOWN = "kept", "decided", "reversed", "undone", "unknown"
CHANGES = (KEPT, DECIDED, REVERSED, UNDONE, UNKNOWN)
FIRST_LINE_CHARS = 160  # as a timeline headline is cut
_UNFINISHED = {
    TIMEOUT: "ended TIMEOUT before a verdict (a seat did not finish its turn in time)",
    INVALIDATED: "ended INVALIDATED, with no verdict (the record was found invalid, or the duel abandoned)",
}
_ENDINGS = {
    KEPT: "it did not change the verdict.",
    DECIDED: "it changed the verdict, deciding what the openings left open.",
    UNDONE: "it changed the verdict, leaving open what the openings decided.",
    UNKNOWN: "whether it would have changed the verdict is not known.",
}


@dataclass(kw_only=True, frozen=True)
class OpeningVote:
    """One seat's vote: its opening turn's stance, read as accept, reject or undecided."""

    seat: int
    turn: int | None  # None: the seat wrote no turn
    stance: str | None
    vote: str | None  # ACCEPT, REJECT or UNDECIDED; None without a turn
    first_line: str  # its Position's first line, cut at FIRST_LINE_CHARS; "" without a turn


@dataclass(kw_only=True, frozen=True)
class Openings:
    """What the openings alone would have decided, against the outcome the debate reached."""

    votes: tuple[OpeningVote, ...]  # by seat, every seat of the schedule
    verdict: str  # `unanimous accept`, `majority reject (2 of 3)`, `all undecided`, `mostly undecided (2 of 3)`,
    # `split`, `incomplete (1 of 2 seats opened)`
    kind: str  # unanimous, majority, split or incomplete
    decides: str | None  # ACCEPT or REJECT: what a vote of the openings decides; None: nothing
    outcome: str | None  # the recorded outcome; None while open
    final: str | None  # what the outcome decides: ACCEPT or REJECT; None: nothing, or not finished
    change: str  # CHANGES
    changed: bool | None  # the debate's verdict differs from the openings'; None: not known (not finished)
    explanation: str  # one sentence
    sealed: bool = (
        False  # written blind (section 4, "Sealed openings"): an independent vote, no seat anchored by another
    )
    flips: tuple[Flip, ...] = ()  # the flip ledger: each seat's stance moves after its opening, in turn order


def openings_of(history: History, outcome: str | None) -> Openings:
    """The openings' verdict in ``history`` and how the recorded ``outcome`` (None while open) compares."""
    found = {position.seat: position for position in seat_positions(history, last=False)}
    votes = tuple(
        OpeningVote(seat=seat, turn=None, stance=None, vote=None, first_line="")
        if seat not in found
        else OpeningVote(
            seat=seat,
            turn=found[seat].turn,
            stance=found[seat].stance,
            vote=VOTES.get(found[seat].stance or "", UNDECIDED),
            first_line=_first_line(found[seat].text),
        )
        for seat in range(1, history.schedule.seats + 1)
    )
    kind, words, count, decides = _verdict(votes)
    final = DECIDES.get(outcome or "")
    change = _change(decides, outcome, final)
    return Openings(
        votes=votes,
        verdict=f"{words} ({count})" if count else words,
        kind=kind,
        decides=decides,
        outcome=outcome,
        final=final,
        change=change,
        changed=None if change == UNKNOWN else change != KEPT,
        explanation=_explanation(
            votes=votes,
            verdict=f"{words}, {count}" if count else words,
            decides=decides,
            outcome=outcome,
            change=change,
            sealed=history.schedule.sealed_openings,
        ),
        sealed=history.schedule.sealed_openings,
        flips=flip_ledger(history),
    )


def _verdict(votes: tuple[OpeningVote, ...]) -> tuple[str, str, str | None, str | None]:
    """The kind, the verdict's words, its count (`2 of 3`; None when unanimous or split), and what it decides."""
    seats = len(votes)
    cast = [vote.vote for vote in votes if vote.vote is not None]
    if len(cast) < seats:
        return INCOMPLETE, INCOMPLETE, f"{len(cast)} of {seats} seats opened", None
    ((vote, count),) = Counter(cast).most_common(1)
    decides = vote if vote in (ACCEPT, REJECT) else None
    # Undecided is no side a vote can be unanimous for: said as a person would, "all undecided", "mostly undecided".
    if count == seats:
        return UNANIMOUS, "all undecided" if vote == UNDECIDED else f"{UNANIMOUS} {vote}", None, decides
    if 2 * count > seats:
        return (
            MAJORITY,
            "mostly undecided" if vote == UNDECIDED else f"{MAJORITY} {vote}",
            f"{count} of {seats}",
            decides,
        )
    return SPLIT, SPLIT, None, None


def _change(decides: str | None, outcome: str | None, final: str | None) -> str:
    if outcome not in FINISHED:
        return UNKNOWN
    if decides == final:
        return KEPT
    if decides is None:
        return DECIDED
    return UNDONE if final is None else REVERSED


def _explanation(
    votes: tuple[OpeningVote, ...],
    *,
    verdict: str,
    decides: str | None,
    outcome: str | None,
    change: str,
    sealed: bool,
) -> str:
    said = ", ".join(f"seat {v.seat} {v.vote}" if v.vote else f"seat {v.seat} did not open" for v in votes)
    lead = f"The {'sealed openings (written blind)' if sealed else 'openings'} were {verdict} ({said})" + (
        "" if decides else ", which decides nothing"
    )
    if outcome in DECIDES:
        debate = f"the debate reached {outcome}"
    elif outcome == MAX_TURNS:
        debate = f"the debate ended {MAX_TURNS}, which decides nothing (the turns ran out with neither consensus nor dissent)"
    elif outcome in _UNFINISHED:
        debate = f"the debate {_UNFINISHED[outcome]}"
    else:
        return f"{lead}; the debate is still open: whether it changes the verdict is not known yet."
    if change == REVERSED:
        ending = f"it changed the verdict, reversing it from {decides} to {DECIDES[outcome or '']}."
    else:
        ending = _ENDINGS[change]
    return f"{lead}; {debate}: {ending}"


def _first_line(position: str) -> str:
    line = next((line for line in position.splitlines() if line.strip()), "")
    text = " ".join(line.split())
    return text if len(text) <= FIRST_LINE_CHARS else text[: FIRST_LINE_CHARS - 1].rstrip() + "…"
