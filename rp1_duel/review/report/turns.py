"""What the turns say, followed across the record: the stance timeline, the agreements, the unresolved
items and what became of them, the citations with their verdicts, and what the debate changed for each seat.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ...record import (
    Citation,
    CitationEntry,
    FrontMatter,
    History,
    TurnBlock,
    check,
)
from ...schedule import Schedule
from ...turns import NoveltyIndex, ParsedTurn, github_anchor, heading_candidates, parse_reference, split_tag
from ...vocabulary import (
    CitationKind,
)
from ..decision import (
    Quote,
    SeatChange,
    StanceRevision,
    seat_positions,
)
from .data import (
    CONCEDED,
    DROPPED,
    HEADLINE_CHARS,
    MARKED_STANCES,
    OPEN,
    RESOLVED,
    STANCE_LEVELS,
    UNREADABLE,
    Agreement,
    CitationRow,
    ReportLinks,
    SidecarFile,
    TimelineEntry,
    UnresolvedEntry,
    VerificationFacts,
)

# A trailing credit in an agreement, `(Turn 2)` or `(Turns 1 and 3)`: aside when agreements are compared.
__all__ = [
    "citation_anchor",
    "citation_row",
    "followed_unresolved",
    "links_beside",
    "merged_agreements",
    "seat_changes",
    "stance_timeline",
    "verification_facts",
]

_CREDIT = re.compile(r"\s*\(\s*turns?\s+#?\d+[^()]*\)\s*\.?\s*$", re.IGNORECASE)
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+", re.MULTILINE)

# -- turns ---------------------------------------------------------------------------------


def stance_timeline(history: History) -> tuple[TimelineEntry, ...]:
    """Each turn on the stance timeline, a chair's without a stance or a place on the chart."""
    entries = []
    previous: dict[int, str | None] = {}
    for n, turn in zip(history.numbers, history.turns, strict=True):
        seat = history.schedule.speaker(n)
        signed = history.block(n).signature is not None
        anchor = github_anchor(turn.heading) if turn.heading else None
        if turn.chair:  # on the timeline, without a stance or a place on the chart
            entries.append(
                TimelineEntry(
                    turn=n,
                    seat=seat,
                    stance=None,
                    level=None,
                    marked=False,
                    changed=False,
                    previous_stance=None,
                    revision_support=(),
                    headline=_headline(_chair_text(turn)),
                    blocking=0,
                    signed=signed,
                    anchor=anchor,
                )
            )
            continue
        before = previous.get(seat)
        entries.append(
            TimelineEntry(
                turn=n,
                seat=seat,
                stance=turn.stance,
                level=STANCE_LEVELS.get(turn.stance or ""),
                marked=turn.stance in MARKED_STANCES,
                changed=seat in previous and before != turn.stance,
                previous_stance=before,
                revision_support=tuple(item.text for item in turn.stance_revision_support),
                headline=_headline(turn.position),
                blocking=sum(1 for item in turn.unresolved if item.blocking),
                signed=signed,
                anchor=anchor,
            )
        )
        previous[seat] = turn.stance
    return tuple(entries)


def _chair_text(turn: ParsedTurn) -> str:
    """What a chair's turn says first: its first section, named (`Question: …`), without list markers."""
    section = next(iter(turn.sections.values()), None)
    return f"{section.name}: {_LIST_MARKER.sub('', section.body)}" if section else ""


def _headline(position: str) -> str:
    text = " ".join(position.split())
    end = next((i + 1 for i, char in enumerate(text) if char in ".!?" and text[i + 1 : i + 2] in ("", " ")), len(text))
    sentence = text[:end]
    return sentence if len(sentence) <= HEADLINE_CHARS else sentence[: HEADLINE_CHARS - 1].rstrip() + "…"


def merged_agreements(history: History) -> tuple[Agreement, ...]:
    """Agreements merged when they repeat one another by the novelty rule's measure (protocol section 7),
    a trailing credit to a turn aside."""
    index = NoveltyIndex()
    groups: dict[int, tuple[str, list[int]]] = {}  # record number -> first wording, turns
    for n, turn in zip(history.numbers, history.turns, strict=True):
        for item in turn.agreements:
            words = _CREDIT.sub("", item.text)  # "… (Turn 1)." agrees with "…" itself
            record = index.match(words)
            if record is None:
                record = index.add(words)
                if record is None:
                    continue  # no words: nothing to agree on
                groups[record] = (item.text, [])
            if n not in groups[record][1]:
                groups[record][1].append(n)
    return tuple(
        Agreement(text, tuple(numbers), tuple(sorted({history.schedule.speaker(n) for n in numbers})))
        for text, numbers in groups.values()
    )


@dataclass(kw_only=True)
class _Tracked:
    """An unresolved item while its author's turns are read."""

    seat: int
    raised_in: int
    text: str = ""
    blocking: bool | None = None
    listed_in: list[int] = field(default_factory=list)


def followed_unresolved(history: History) -> tuple[UnresolvedEntry, ...]:
    """Each author's unresolved items, one entry per item across the author's turns, answered by a later turn
    of any other seat (section 11)."""
    schedule, numbers = history.schedule, history.numbers
    indexes = {seat: NoveltyIndex() for seat in range(1, schedule.seats + 1)}
    items: dict[tuple[int, int], _Tracked] = {}  # (seat, record number), in the order they were raised
    for n, turn in zip(numbers, history.turns, strict=True):
        seat = schedule.speaker(n)
        for entry in turn.unresolved:
            words = split_tag(entry.text)[0]  # a re-tagged item stays the same item
            record = indexes[seat].match(words)
            if record is None:
                record = indexes[seat].add(words)
                if record is None:
                    continue  # no words: nothing to follow
                items[(seat, record)] = _Tracked(seat=seat, raised_in=n)
            item = items[(seat, record)]
            if n not in item.listed_in:
                item.listed_in.append(n)
            item.text, item.blocking = entry.text, entry.blocking
    countered = {
        n: _countered_turns(turn, history.source_names) for n, turn in zip(numbers, history.turns, strict=True)
    }
    found = []
    for item in items.values():
        later_own = [n for n in numbers if n > item.listed_in[-1] and schedule.speaker(n) == item.seat]
        answered = tuple(
            n
            for n in numbers
            if n > item.raised_in
            and schedule.speaker(n) != item.seat
            and any(m in item.listed_in and m < n for m in countered[n])
        )
        dropped_in = later_own[0] if later_own else None
        found.append(
            UnresolvedEntry(
                text=item.text,
                seat=item.seat,
                raised_in=item.raised_in,
                listed_in=tuple(item.listed_in),
                blocking=item.blocking,
                answered_in=answered,
                dropped_in=dropped_in,
                status=_status(history, item.listed_in[-1], dropped_in, answered),
            )
        )
    return tuple(found)


def _status(history: History, last_listed: int, dropped_in: int | None, answered_in: tuple[int, ...]) -> str:
    """Open while listed; else conceded when its author let it go as its stance rose toward consensus, resolved
    when another seat had answered it, dropped when neither (section 11)."""
    if dropped_in is None:
        return OPEN
    if _rose(history.turn(last_listed).stance, history.turn(dropped_in).stance):
        return CONCEDED
    return RESOLVED if any(n < dropped_in for n in answered_in) else DROPPED


def _countered_turns(turn: ParsedTurn, source_names: tuple[str, ...]) -> set[int]:
    """The turns this turn's counterpoints address."""
    numbers = set()
    for counterpoint in turn.counterpoints:
        for target in (counterpoint.addresses or "").split("|"):
            reference = parse_reference(target, source_names)
            if reference.kind == "turn" and reference.turn is not None:
                numbers.add(reference.turn)
    return numbers


def verification_facts(
    found: SidecarFile | None,
    *,
    artifact_name: str,
    front: FrontMatter,
    blocks: Sequence[TurnBlock],
    turns: Sequence[ParsedTurn],
) -> tuple[VerificationFacts | None, dict[Citation, CitationEntry]]:
    """How the sidecar stands against the record, and its verdicts when they may be shown."""
    if found is None:
        return None, {}
    sidecar = found.sidecar
    if sidecar is None:
        return VerificationFacts(
            path=found.path,
            status=UNREADABLE,
            problems=(found.error or "unreadable",),
            turns=None,
            verified_at=None,
            counts={},
        ), {}
    checked = check(sidecar=sidecar, artifact_name=artifact_name, front=front, blocks=blocks, turns=turns)
    facts = VerificationFacts(
        path=found.path,
        status=checked.status,
        problems=checked.problems,
        turns=sidecar.turns,
        verified_at=sidecar.verified_at,
        counts=sidecar.counts() if checked.belongs else {},
    )
    return facts, ({entry.citation: entry for entry in sidecar.citations} if checked.belongs else {})


def citation_row(
    citation: Citation, entry: CitationEntry | None, schedule: Schedule, anchor: str | None
) -> CitationRow:
    """A citation as the report lists it, with the sidecar's verdict when one covers it."""
    row = CitationRow(
        turn=citation.turn,
        seat=schedule.speaker(citation.turn),
        section=citation.section,
        item=citation.item,
        kind=citation.kind,
        url=citation.url,
        anchor=anchor,
    )
    return (
        row if entry is None else replace(row, verdict=entry.verdict, confidence=entry.confidence, reason=entry.reason)
    )


def citation_anchor(citation: Citation, history: History, turn_anchors: Mapping[int, str | None]) -> str | None:
    """Where a source or turn citation points: its lines (`L11-L12`) or heading in the source, or the cited turn's
    heading in the artifact. A heading's description is cut where one may begin (the source is not read here)."""
    if citation.kind not in (CitationKind.SOURCE, CitationKind.TURN):
        return None
    reference = parse_reference(citation.item, history.source_names)
    if reference.turn is not None:
        return turn_anchors.get(reference.turn)
    if reference.lines is not None:
        start, end = reference.lines
        return f"L{start}" if start == end else f"L{start}-L{end}"
    if reference.heading is not None:
        return github_anchor(heading_candidates(reference.heading)[-1].strip())
    return None  # an excerpt alone: the file, no place in it


def links_beside(path: str, front: FrontMatter) -> ReportLinks:
    """Links as read from the artifact's folder, which a relative recorded source path starts from."""
    source = front.source_path
    return ReportLinks(Path(path).name or f"{front.duel_id}.md", None if Path(source).is_absolute() else source)


# -- what the debate changed -----------------------------------------------------------------------


def seat_changes(
    history: History,
    timeline: Sequence[TimelineEntry],
    agreements: Sequence[Agreement],
    unresolved: Sequence[UnresolvedEntry],
) -> tuple[SeatChange, ...]:
    """Each seat's opening and final positions, its stance moves toward consensus, the agreements it took up
    from another seat's wording, and its items still open."""
    speaker = history.schedule.speaker
    finals = {position.seat: position for position in seat_positions(history, last=True)}
    changes = []
    for opening in seat_positions(history, last=False):
        seat = opening.seat
        revisions = tuple(
            StanceRevision(
                turn=entry.turn, previous=entry.previous_stance, stance=entry.stance, support=entry.revision_support
            )
            for entry in timeline
            if entry.seat == seat and entry.changed and _rose(entry.previous_stance, entry.stance)
        )
        adopted = tuple(
            Quote(next(n for n in agreement.turns if speaker(n) == seat), agreement.text)
            for agreement in agreements
            if seat in agreement.seats and any(speaker(n) != seat for n in _owed(agreement))
        )
        held = tuple(Quote(item.raised_in, item.text) for item in unresolved if item.seat == seat and item.open)
        changes.append(
            SeatChange(seat=seat, opening=opening, final=finals[seat], revisions=revisions, adopted=adopted, held=held)
        )
    return tuple(changes)


def _owed(agreement: Agreement) -> tuple[int, ...]:
    """The turns an agreement owes its point to: the one that first stated it, and those its first wording credits."""
    credit = _CREDIT.search(agreement.text)
    return (agreement.turns[0], *(int(n) for n in re.findall(r"\d+", credit.group() if credit else "")))


def _rose(before: str | None, after: str | None) -> bool:
    """Whether a stance moved up the scale, toward consensus."""
    levels = STANCE_LEVELS.get(before or ""), STANCE_LEVELS.get(after or "")
    return levels[0] is not None and levels[1] is not None and levels[1] > levels[0]
