"""``duel bench score --format json``: the score's declared shape (docs/protocol.md section 13, "Scoring")."""

from __future__ import annotations

from typing import TypedDict

from ..vocabulary import ACCEPTED_CONSENSUS
from .score import (
    CONDITIONS,
    DUEL,
    OPENINGS,
    RIGHT_TO_WRONG,
    SINGLE,
    WRONG_TO_RIGHT,
    BenchScore,
    DocumentScore,
    Flip,
    RunScore,
)

__all__ = ["SCORE_VERSION", "ScoreJson", "score_json"]

SCORE_VERSION = 1


class FlipJson(TypedDict):
    """A seat's position on one defect that moved."""

    seat: int
    name: str
    turn: int
    defect: str
    direction: str
    reason: str


class ProvisionalJson(TypedDict):
    """A duel whose seats were all of one model family: the family, and the models seen (sorted)."""

    family: str
    models: list[str]


class RunJson(TypedDict):
    """One run's numbers."""

    condition: str
    run: int
    outcome: str | None
    recall: float | None
    fixed: list[str]
    openings_recall: float | None
    openings_fixed: list[str] | None
    skipped_edits: int
    flips: list[FlipJson]
    wrong_consensus: bool
    failing: list[str]
    silent_agreements: list[int]
    rounds: int
    tokens_in: int
    tokens_out: int
    usd: float | None
    seconds: float
    stopped: str | None
    error: str | None
    provisional: ProvisionalJson | None


class DocumentJson(TypedDict):
    """One document: its defects, its recall by condition, its runs."""

    document: str
    kind: str
    defects: list[str]
    recall: dict[str, float | None]
    runs: list[RunJson]


class TotalJson(TypedDict):
    """Every run together."""

    runs: int
    pending: list[str]
    recall: dict[str, float | None]
    usd: dict[str, float | None]
    flips: dict[str, int]
    consensus: int
    wrong_consensus: int
    silent_agreements: int
    provisional: int
    rounds_mean: float | None
    tokens_in: int
    tokens_out: int


class ScoreJson(TypedDict):
    """The whole score."""

    version: int
    out: str
    corpus: str
    documents: list[DocumentJson]
    total: TotalJson


def score_json(score: BenchScore, *, out: str, corpus: str) -> ScoreJson:
    """The score as JSON data: documents in corpus order, then the totals."""
    runs = score.runs
    duels = [run for run in runs if run.condition == DUEL]
    flips = [flip for run in runs for flip in run.flips]
    return {
        "version": SCORE_VERSION,
        "out": out,
        "corpus": corpus,
        "documents": [_document(document) for document in score.documents],
        "total": {
            "runs": len(runs),
            "pending": list(score.pending),
            "recall": {condition: score.recall(condition) for condition in CONDITIONS},
            "usd": {condition: score.usd(condition) for condition in (DUEL, SINGLE)},
            "flips": {way: sum(flip.direction == way for flip in flips) for way in (RIGHT_TO_WRONG, WRONG_TO_RIGHT)},
            "consensus": sum(run.outcome == ACCEPTED_CONSENSUS for run in duels),
            "wrong_consensus": sum(run.wrong_consensus for run in duels),
            "silent_agreements": sum(len(run.silent) for run in duels),
            "provisional": sum(run.provisional is not None for run in duels),
            "rounds_mean": sum(run.rounds for run in duels) / len(duels) if duels else None,
            "tokens_in": sum(run.tokens_in for run in runs),
            "tokens_out": sum(run.tokens_out for run in runs),
        },
    }


def _document(document: DocumentScore) -> DocumentJson:
    return {
        "document": document.document,
        "kind": document.kind,
        "defects": list(document.defects),
        "recall": {condition: document.recall(condition) for condition in CONDITIONS},
        "runs": [_run(run) for run in document.runs],
    }


def _run(run: RunScore) -> RunJson:
    return {
        "condition": run.condition,
        "run": run.run,
        "outcome": run.outcome,
        "recall": run.recall(run.condition),
        "fixed": sorted(run.fixed),
        "openings_recall": run.recall(OPENINGS),
        "openings_fixed": None if run.openings_fixed is None else sorted(run.openings_fixed),
        "skipped_edits": run.skipped_edits,
        "flips": [_flip(flip) for flip in run.flips],
        "wrong_consensus": run.wrong_consensus,
        "failing": list(run.failing),
        "silent_agreements": list(run.silent),
        "rounds": run.rounds,
        "tokens_in": run.tokens_in,
        "tokens_out": run.tokens_out,
        "usd": run.usd,
        "seconds": run.seconds,
        "stopped": run.stopped,
        "error": run.error,
        "provisional": None
        if run.provisional is None
        else {"family": run.provisional.family, "models": list(run.provisional.models)},
    }


def _flip(flip: Flip) -> FlipJson:
    return {
        "seat": flip.seat,
        "name": flip.name,
        "turn": flip.turn,
        "defect": flip.defect,
        "direction": flip.direction,
        "reason": flip.reason,
    }
