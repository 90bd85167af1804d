"""``duel bench score``: what a duel added over its openings, measured by the corpus's predicates
(docs/protocol.md section 13, "Scoring").

Pure: each run as :mod:`.score_files` read it (the original document, the agreed revision, the turns
of its record, what its seats spent) and the corpus document with its labelled defects. A defect is
fixed in a text when its predicate holds on it (:meth:`CorpusDocument.fixed`).

- **Recall** of a text: the share of the document's defects fixed in it. The duel's text is the agreed
  revision (the original when nothing was agreed); the openings' is the original with each seat's
  opening edits applied in turn order (an edit that no longer applies is skipped and counted); the
  single-seat baseline's is the seat's revised document.
- **Flips**: a seat's proposal after each of its turns is the revision it accepts (an accepting turn)
  or its own edits still in force, applied to the original. A defect fixed in one proposal and not
  in the seat's next is a move right to wrong; the reverse, wrong to right. The opening is where a
  seat starts, not a move.
- **Wrong consensus**: ``ACCEPTED_CONSENSUS`` on a revision where a predicate fails.
- **Silent agreement**: an accepting turn that accepts a revision its seat had not accepted before
  and cites nothing for it (an empty Stance Revision Support).
- **Provisional**: a duel whose seats were all of one model family (:mod:`rp1_duel.record.families`), as its
  record's close labelled it, else as its seats' models say; carried through, counted in the totals.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from ..record import Provisional
from ..turns import ParsedTurn, Revision
from ..vocabulary import ACCEPTED_CONSENSUS, ACCEPTING_CONSENSUS
from .corpus import CorpusDocument

__all__ = [
    "CONDITIONS",
    "DUEL",
    "OPENINGS",
    "RIGHT_TO_WRONG",
    "SINGLE",
    "WRONG_TO_RIGHT",
    "BenchScore",
    "DocumentScore",
    "Flip",
    "RunRecord",
    "RunScore",
    "SeatSpend",
    "SeatTurn",
    "openings_text",
    "score_bench",
    "score_run",
    "seat_flips",
    "silent_agreements",
]

DUEL, OPENINGS, SINGLE = "duel", "openings", "single"
CONDITIONS = (DUEL, OPENINGS, SINGLE)  # what recall is measured for, in the order every format shows them
RIGHT_TO_WRONG, WRONG_TO_RIGHT = "right_to_wrong", "wrong_to_right"


@dataclass(frozen=True, kw_only=True)
class SeatSpend:
    """What one seat of a run spent, as its ``result.json`` says."""

    seat: str
    model: str
    served: str | None
    tokens_in: int
    tokens_out: int
    usd: float | None  # None: not priced


@dataclass(frozen=True, kw_only=True)
class SeatTurn:
    """One panel turn of a duel's record, with the seat that wrote it and that seat's name."""

    seat: int
    name: str
    turn: ParsedTurn


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """One finished run as read from its directory: a duel (``condition`` ``duel``) or a single seat (``single``)."""

    document: str
    condition: str
    run: int
    outcome: str | None
    original: str  # the document the seats were given
    revised: str | None  # the agreed revision, or the single seat's document; None: nothing agreed
    seats: int = 2
    sealed: bool = False  # sealed openings carry no edits: a seat's opening edits are then its second turn's
    turns: tuple[SeatTurn, ...] = ()  # the record's panel turns, in order; () for a single seat
    reasons: Mapping[int, str] = field(default_factory=dict)  # turn -> what it cited for moving its stance
    spend: tuple[SeatSpend, ...] = ()
    seconds: float = 0.0
    stopped: str | None = None
    error: str | None = None
    provisional: Provisional | None = None  # every seat of one model family; None: not so, or a single seat


@dataclass(frozen=True, kw_only=True)
class Flip:
    """A seat's position on one defect moved between two of its turns."""

    seat: int
    name: str
    turn: int
    defect: str
    direction: str  # RIGHT_TO_WRONG or WRONG_TO_RIGHT
    reason: str  # what the turn cited for moving its stance (the flip ledger's); "" when it cited nothing


@dataclass(frozen=True, kw_only=True)
class RunScore:
    """What one run scores."""

    document: str
    condition: str
    run: int
    outcome: str | None
    defects: int
    fixed: frozenset[str]  # by the duel's agreed revision, or the single seat's document
    openings_fixed: frozenset[str] | None  # by the openings' union; None for a single seat
    skipped_edits: int  # opening edits that no longer applied to the union
    flips: tuple[Flip, ...]
    wrong_consensus: bool
    failing: tuple[str, ...]  # the defects whose predicate fails on the agreed revision, with consensus
    silent: tuple[int, ...]  # the turns agreeing silently
    rounds: int
    tokens_in: int
    tokens_out: int
    usd: float | None  # None: a seat's cost is not known
    seconds: float
    stopped: str | None
    error: str | None
    provisional: Provisional | None

    def recall(self, condition: str) -> float | None:
        """The share of the defects this run fixed under ``condition`` (None: not measured by this run)."""
        fixed = self.openings_fixed if condition == OPENINGS else self.fixed
        if fixed is None or condition not in (self.condition, OPENINGS) or self.defects == 0:
            return None
        return len(fixed) / self.defects


@dataclass(frozen=True, kw_only=True)
class DocumentScore:
    """One corpus document's runs."""

    document: str
    kind: str
    defects: tuple[str, ...]
    runs: tuple[RunScore, ...]

    def recall(self, condition: str) -> float | None:
        """The mean recall of its runs under ``condition``; None without such a run."""
        return _mean(run.recall(condition) for run in self.runs)


@dataclass(frozen=True, kw_only=True)
class BenchScore:
    """Every document's score, and the totals over all runs."""

    documents: tuple[DocumentScore, ...]
    pending: tuple[str, ...] = field(default=())  # run directories without a result.json: not scored

    @property
    def runs(self) -> tuple[RunScore, ...]:
        """Every scored run, document by document."""
        return tuple(run for document in self.documents for run in document.runs)

    def recall(self, condition: str) -> float | None:
        """Defects fixed over defects seeded, summed over every run measured under ``condition``."""
        counted = [run for run in self.runs if run.recall(condition) is not None]
        seeded = sum(run.defects for run in counted)
        if not seeded:
            return None
        found = sum(len(run.openings_fixed or ()) if condition == OPENINGS else len(run.fixed) for run in counted)
        return found / seeded

    def usd(self, condition: str) -> float | None:
        """What the runs of ``condition`` cost together; None when a run's cost is not known."""
        costs = [run.usd for run in self.runs if run.condition == condition]
        return None if not costs or None in costs else sum(c for c in costs if c is not None)


def score_bench(
    runs: Iterable[RunRecord], corpus: Mapping[str, CorpusDocument], pending: Iterable[str] = ()
) -> BenchScore:
    """Every run scored against its corpus document, grouped by document in corpus order."""
    by_document: dict[str, list[RunScore]] = {}
    for run in runs:
        by_document.setdefault(run.document, []).append(score_run(run, corpus[run.document]))
    documents = tuple(
        DocumentScore(
            document=name,
            kind=corpus[name].kind,
            defects=tuple(defect.id for defect in corpus[name].defects),
            runs=tuple(sorted(scored, key=lambda r: (r.condition, r.run))),
        )
        for name, scored in sorted(by_document.items())
    )
    return BenchScore(documents=documents, pending=tuple(pending))


def score_run(run: RunRecord, document: CorpusDocument) -> RunScore:
    """One run's score against its document's defects."""
    every = frozenset(defect.id for defect in document.defects)
    fixed = document.fixed(run.original if run.revised is None else run.revised)
    openings_fixed, skipped = None, 0
    if run.condition == DUEL:
        union, skipped = openings_text(run.original, run.turns, sealed=run.sealed)
        openings_fixed = document.fixed(union)
    consensus = run.outcome == ACCEPTED_CONSENSUS
    usd = [spend.usd for spend in run.spend]
    return RunScore(
        document=run.document,
        condition=run.condition,
        run=run.run,
        outcome=run.outcome,
        defects=len(every),
        fixed=fixed,
        openings_fixed=openings_fixed,
        skipped_edits=skipped,
        flips=seat_flips(run.original, run.turns, document, run.reasons),
        wrong_consensus=consensus and fixed != every,
        failing=tuple(sorted(every - fixed)) if consensus else (),
        silent=silent_agreements(run.original, run.turns),
        rounds=math.ceil(len(run.turns) / run.seats) if run.turns else (1 if run.condition == SINGLE else 0),
        tokens_in=sum(spend.tokens_in for spend in run.spend),
        tokens_out=sum(spend.tokens_out for spend in run.spend),
        usd=None if None in usd else sum(u for u in usd if u is not None),
        seconds=run.seconds,
        stopped=run.stopped,
        error=run.error,
        provisional=run.provisional,
    )


def openings_text(original: str, turns: Iterable[SeatTurn], *, sealed: bool = False) -> tuple[str, int]:
    """The original with each seat's opening edits applied, in turn order, and how many no longer applied.

    An opening is a seat's first turn; sealed openings carry no edits, so there it is the seat's second,
    the first it may edit in. Edits are named per seat, so one seat's edit never replaces another's."""
    seen: dict[int, int] = {}
    revision = Revision(original)
    skipped = 0
    for one in turns:
        seen[one.seat] = seen.get(one.seat, 0) + 1
        if seen[one.seat] != (2 if sealed else 1):
            continue
        for edit in one.turn.edits.edits:
            named = replace(edit, name=f"seat-{one.seat}-{edit.name}")
            amended = Revision(original, {**revision.edits, named.name: named})
            if amended.problems:
                skipped += 1
            else:
                revision = amended
    return revision.text, skipped


def seat_flips(
    original: str, turns: Iterable[SeatTurn], document: CorpusDocument, reasons: Mapping[int, str]
) -> tuple[Flip, ...]:
    """Each defect a seat's proposal stopped or started fixing from one of its turns to its next, with the reason
    ``reasons`` gives for the turn (what it cited for moving its stance: :func:`rp1_duel.review.flip_ledger`)."""
    flips: list[Flip] = []
    before: dict[int, frozenset[str]] = {}
    for one, proposal in _proposals(original, turns):
        now = document.fixed(proposal)
        if one.seat in before:
            moved = [(d, RIGHT_TO_WRONG) for d in before[one.seat] - now]
            moved += [(d, WRONG_TO_RIGHT) for d in now - before[one.seat]]
            reason = reasons.get(_number(one), "")
            flips += [
                Flip(seat=one.seat, name=one.name, turn=_number(one), defect=d, direction=way, reason=reason)
                for d, way in sorted(moved)
            ]
        before[one.seat] = now
    return tuple(flips)


def silent_agreements(original: str, turns: Iterable[SeatTurn]) -> tuple[int, ...]:
    """The accepting turns that accept a revision their seat had not accepted before, citing nothing for it."""
    silent: list[int] = []
    accepted: dict[int, str] = {}
    for one, revision, _ in _in_force(original, turns):
        if one.turn.stance != ACCEPTING_CONSENSUS:
            continue
        if accepted.get(one.seat) != revision.id and not one.turn.stance_revision_support:
            silent.append(_number(one))
        accepted[one.seat] = revision.id
    return tuple(silent)


def _proposals(original: str, turns: Iterable[SeatTurn]) -> Iterable[tuple[SeatTurn, str]]:
    """Each turn with its seat's proposal after it: the revision in force when it accepts, else its own edits."""
    for one, revision, owners in _in_force(original, turns):
        if one.turn.stance == ACCEPTING_CONSENSUS:
            yield one, revision.text
        else:
            mine = {name: edit for name, edit in revision.edits.items() if owners[name] == one.seat}
            yield one, Revision(original, mine).text


def _in_force(original: str, turns: Iterable[SeatTurn]) -> Iterable[tuple[SeatTurn, Revision, dict[str, int]]]:
    """Each turn with the revision in force after it, and the seat that proposed each of its edits."""
    revision = Revision(original)
    owners: dict[str, int] = {}
    for one in turns:
        revision = revision.amended(one.turn.edits)
        for name, _ in one.turn.edits.withdrawn:
            owners.pop(name, None)
        owners.update((edit.name, one.seat) for edit in one.turn.edits.edits)
        yield one, revision, dict(owners)


def _number(one: SeatTurn) -> int:
    return one.turn.number if one.turn.number is not None else 0


def _mean(values: Iterable[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return sum(known) / len(known) if known else None
