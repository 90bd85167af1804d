"""``duel stats``: the duels of a debate dir studied together (docs/protocol.md section 11, "duel stats").

Every duel artifact under the folder (found as ``duel validate`` finds them, :func:`rp1_duel.record.validate.scan`)
is read as ``duel report`` reads it (:func:`rp1_duel.review.report_files.read_report`), and its report
counted: duels by outcome, turns and cost per outcome, how often the debate changed what the openings
alone would have decided (:mod:`rp1_duel.review.openings`), repairs and fabricated citations per model.
:func:`stats_of` is pure over the reports; :func:`read_stats` is the edge that finds and reads them.

Decisions: what is not known is said so, never counted as 0. A duel's cost is known when its usage is
recorded for every participant that wrote a turn, and priced; a seat's repairs when its usage is recorded
(a person's and a script's drafts are logged as a model's are, with no request); its fabricated citations
when a verification sidecar of its duel is shown (current, or stale but of this record). An artifact that cannot be read is counted and named, never skipped.
"""

from __future__ import annotations

import os
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import DuelError
from ..record import scan
from ..vocabulary import ACCEPTED_CONSENSUS, DISSENT, INVALIDATED, MAX_TURNS, TIMEOUT, ErrorCode, Verdict
from . import report_text as words
from .listing import columns
from .openings import CHANGES, DECIDED, REVERSED, UNDONE, UNKNOWN
from .report import Report, ReportParticipant
from .report_files import read_report

__all__ = [
    "OPEN",
    "DuelRow",
    "ModelRow",
    "OutcomeRow",
    "Spread",
    "Stats",
    "Transition",
    "UnreadableArtifact",
    "read_stats",
    "stats_of",
    "stats_table",
]

OPEN = "open"  # a duel with no outcome yet
OUTCOME_ORDER = (ACCEPTED_CONSENSUS, DISSENT, MAX_TURNS, TIMEOUT, INVALIDATED, OPEN)
CHANGING = (DECIDED, REVERSED, UNDONE)


@dataclass(frozen=True)
class Spread:
    """The mean and median of what is known, and of how many duels it is known."""

    known: int
    mean: float | None  # None when nothing is known
    median: float | None

    @classmethod
    def of(cls, values: Iterable[float | None]) -> Spread:
        """The spread of ``values``, None (unknown) left out."""
        known = [value for value in values if value is not None]
        if not known:
            return cls(0, None, None)
        return cls(len(known), round(statistics.fmean(known), 6), round(float(statistics.median(known)), 6))


@dataclass(kw_only=True, frozen=True)
class DuelRow:
    """One duel as stats counts it."""

    path: str
    duel_id: str
    outcome: str  # the recorded outcome, or OPEN
    turns: int
    cost_usd: float | None  # None: unknown
    openings: str  # the openings' verdict, as said
    change: str  # openings.CHANGES
    provisional: bool  # every seat of one model family (record.families)


@dataclass(kw_only=True, frozen=True)
class OutcomeRow:
    """The duels of one outcome: how many, their turns and their cost."""

    outcome: str
    duels: int
    turns: Spread
    cost_usd: Spread
    provisional: int  # duels whose seats were all of one model family


@dataclass(kw_only=True, frozen=True)
class Transition:
    """Duels whose openings decided ``openings`` and whose outcome decided ``final`` (None: nothing)."""

    openings: str | None
    final: str | None
    change: str
    duels: int


@dataclass(kw_only=True, frozen=True)
class ModelRow:
    """One model across every seat it held: its repairs and its fabricated citations, where known."""

    model: str
    seats: int
    repairs: int | None  # summed over the seats whose usage is recorded; None: recorded for none
    repairs_unknown: int  # seats whose usage is not recorded
    fabricated: int | None  # summed over the seats whose duel has a verification sidecar shown; None: none has
    fabricated_unknown: int  # seats whose duel has none


@dataclass(frozen=True)
class UnreadableArtifact:
    """An artifact that could not be read: counted and named, with why."""

    path: str
    code: str
    message: str


@dataclass(kw_only=True, frozen=True)
class Stats:
    """What ``duel stats`` says of a debate dir."""

    debate_dir: str
    duels: tuple[DuelRow, ...]
    outcomes: tuple[OutcomeRow, ...]  # in OUTCOME_ORDER, those that occur
    changes: dict[str, int]  # duels by openings.CHANGES
    transitions: tuple[Transition, ...]  # of finished duels: the openings' decision to the outcome's
    models: tuple[ModelRow, ...]  # by model id
    unreadable: tuple[UnreadableArtifact, ...]
    skipped: tuple[tuple[str, str], ...] = ()  # .md files that are not duel artifacts, with why

    @property
    def compared(self) -> int:
        """Finished duels: those whose outcome can be held against the openings."""
        return sum(count for change, count in self.changes.items() if change != UNKNOWN)

    @property
    def changed(self) -> int:
        """Finished duels whose outcome differs from what the openings decided."""
        return sum(self.changes[change] for change in CHANGING)

    def to_dict(self) -> dict[str, Any]:
        """``duel stats --json`` (docs/protocol.md section 11, "duel stats")."""
        return {
            "debate_dir": self.debate_dir,
            "count": len(self.duels),
            "outcomes": [asdict(row) for row in self.outcomes],
            "openings": {
                "compared": self.compared,
                "changed": self.changed,
                "changes": self.changes,
                "transitions": [asdict(row) for row in self.transitions],
            },
            "models": [asdict(row) for row in self.models],
            "unreadable": [asdict(row) for row in self.unreadable],
            "skipped": [{"path": path, "reason": reason} for path, reason in self.skipped],
            "duels": [asdict(row) for row in self.duels],
        }


def read_stats(debate_dir: str | os.PathLike[str], env: Mapping[str, str] = os.environ) -> Stats:
    """The stats of every duel artifact under ``debate_dir``; ``DEBATE_DIR_INVALID`` when it is no folder."""
    root = Path(debate_dir)
    if not root.is_dir():
        raise DuelError(ErrorCode.DEBATE_DIR_INVALID, f"no debate dir {root}: not a folder")
    found = scan([str(root)])
    reports: list[Report] = []
    unreadable: list[UnreadableArtifact] = []
    for path in found.found:
        try:
            reports.append(read_report(path, env))
        except DuelError as exc:
            unreadable.append(UnreadableArtifact(str(path), exc.code, exc.message))
    return stats_of(
        str(root), reports, unreadable, skipped=tuple((str(path), reason) for path, reason in found.skipped)
    )


def stats_of(
    debate_dir: str,
    reports: Sequence[Report],
    unreadable: Sequence[UnreadableArtifact] = (),
    *,
    skipped: tuple[tuple[str, str], ...] = (),
) -> Stats:
    """The stats of ``reports``, with the artifacts that could not be read."""
    rows = tuple(_row(report) for report in reports)
    order = [*OUTCOME_ORDER, *sorted({row.outcome for row in rows} - set(OUTCOME_ORDER))]  # a hand-edited one last
    by_outcome = {outcome: [row for row in rows if row.outcome == outcome] for outcome in order}
    outcomes = tuple(
        OutcomeRow(
            outcome=outcome,
            duels=len(found),
            turns=Spread.of(row.turns for row in found),
            cost_usd=Spread.of(row.cost_usd for row in found),
            provisional=sum(1 for row in found if row.provisional),
        )
        for outcome, found in by_outcome.items()
        if found
    )
    counted = Counter((r.openings.decides, r.openings.final, r.openings.change) for r in reports)
    transitions = tuple(
        Transition(openings=openings, final=final, change=change, duels=count)
        for (openings, final, change), count in sorted(counted.items(), key=lambda item: _transition_order(item[0]))
        if change != UNKNOWN
    )
    changes = {change: sum(1 for row in rows if row.change == change) for change in CHANGES}
    return Stats(
        debate_dir=debate_dir,
        duels=rows,
        outcomes=outcomes,
        changes=changes,
        transitions=transitions,
        models=_model_rows(reports),
        unreadable=tuple(unreadable),
        skipped=skipped,
    )


def _row(report: Report) -> DuelRow:
    return DuelRow(
        path=report.path,
        duel_id=report.duel_id,
        outcome=report.outcome.outcome or OPEN,
        turns=report.turn_count,
        cost_usd=_cost(report),
        openings=report.openings.verdict,
        change=report.openings.change,
        provisional=report.provisional is not None,
    )


def _cost(report: Report) -> float | None:
    """The duel's cost, when every participant that wrote a turn has its usage recorded, and priced."""
    writers = [p for p in report.participants if p.turns]
    if report.usage is None or not all(_recorded(report, p) for p in writers):
        return None
    return report.usage.cost_usd


def _recorded(report: Report, participant: ReportParticipant) -> bool:
    """Whether a seat's usage is recorded: its event log read, and a draft of its logged in it (a model's
    request, or a person's or a script's draft, which `duel join` logs with no request)."""
    return participant.usage is not None and any(
        turn.seat == participant.seat and turn.usage is not None for turn in report.provenance
    )


def _transition_order(key: tuple[str | None, str | None, str]) -> tuple[int, str, str]:
    openings, final, change = key
    return CHANGES.index(change), openings or "", final or ""


def _model_rows(reports: Sequence[Report]) -> tuple[ModelRow, ...]:
    seats: Counter[str] = Counter()
    repairs: dict[str, list[int | None]] = {}
    fabricated: dict[str, list[int | None]] = {}
    for report in reports:
        verified = report.verification is not None and report.verification.shown
        for participant in report.participants:
            model = participant.model
            seats[model] += 1
            usage = participant.usage
            repairs.setdefault(model, []).append(
                usage.usage.repairs if usage is not None and _recorded(report, participant) else None
            )
            count = sum(
                1 for row in report.citations if row.seat == participant.seat and row.verdict == Verdict.FABRICATED
            )
            ruled = sum(1 for r in report.rulings if r.seat == participant.seat and r.verdict == Verdict.FABRICATED)
            # A sidecar checks every citation; without one, the record's rulings say what the duel's checks found.
            fabricated.setdefault(model, []).append(count if verified else ruled if report.rulings else None)
    rows = []
    for model in sorted(seats):
        repaired, repairs_unknown = _known_sum(repairs[model])
        found, fabricated_unknown = _known_sum(fabricated[model])
        rows.append(
            ModelRow(
                model=model,
                seats=seats[model],
                repairs=repaired,
                repairs_unknown=repairs_unknown,
                fabricated=found,
                fabricated_unknown=fabricated_unknown,
            )
        )
    return tuple(rows)


def _known_sum(values: list[int | None]) -> tuple[int | None, int]:
    """The sum of what is known (None when nothing is), and how many are unknown."""
    known = [value for value in values if value is not None]
    return (sum(known) if known else None), len(values) - len(known)


# -- the table for people ------------------------------------------------------------------------------


def stats_table(stats: Stats) -> str:
    """Aligned tables: outcomes, the openings against the outcomes, models; then the unreadable artifacts."""
    unreadable = f", {len(stats.unreadable)} unreadable" if stats.unreadable else ""
    parts = [f"{words.plural(len(stats.duels), 'duel')} in {stats.debate_dir}{unreadable}"]
    if stats.duels:
        parts += [_outcomes(stats), _openings(stats), _models(stats)]
    if stats.unreadable:
        parts.append(
            "\n".join(["Unreadable:", *(f"  {row.path}: {row.code}: {row.message}" for row in stats.unreadable)])
        )
    return "\n\n".join(parts)


def _outcomes(stats: Stats) -> str:
    header = ("OUTCOME", "DUELS", "PROVISIONAL", "TURNS MEAN", "TURNS MEDIAN", "COST MEAN", "COST MEDIAN")
    rows = [
        (
            row.outcome,
            str(row.duels),
            str(row.provisional),
            _number(row.turns.mean),
            _number(row.turns.median),
            *_costs(row),
        )
        for row in stats.outcomes
    ]
    return columns([header, *rows])


def _models(stats: Stats) -> str:
    header = ("MODEL", "SEATS", "REPAIRS", "FABRICATED CITATIONS")
    rows = [
        (
            row.model,
            str(row.seats),
            _known(row.repairs, row.repairs_unknown, "not recorded"),
            _known(row.fabricated, row.fabricated_unknown, "not verified"),
        )
        for row in stats.models
    ]
    return columns([header, *rows])


def _openings(stats: Stats) -> str:
    unknown = stats.changes[UNKNOWN]
    lead = (
        f"Against the openings' vote: the debate changed the verdict in {stats.changed} of "
        f"{words.plural(stats.compared, 'finished duel')}"
        + (f" ({unknown} not finished: TIMEOUT, INVALIDATED or open)" if unknown else "")
        + "."
    )
    if not stats.transitions:
        return lead
    header = ("CHANGE", "OPENINGS DECIDED", "OUTCOME DECIDED", "DUELS")
    rows = [
        (row.change, row.openings or "nothing", row.final or "nothing", str(row.duels)) for row in stats.transitions
    ]
    return lead + "\n" + columns([header, *rows])


def _costs(row: OutcomeRow) -> tuple[str, str]:
    spread = row.cost_usd
    if spread.mean is None or spread.median is None:
        return "unknown", "unknown"
    known = "" if spread.known == row.duels else f" ({spread.known} of {row.duels} known)"
    return words.dollars(spread.mean) + known, words.dollars(spread.median)


def _known(value: int | None, unknown: int, why: str) -> str:
    if value is None:
        return f"unknown ({why})"
    return str(value) + (f" ({unknown} {why})" if unknown else "")


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"
