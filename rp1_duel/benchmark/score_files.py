"""``duel bench score``'s reading and writing: a run's output directory read into :class:`RunRecord` s
for :mod:`.score`, and the score rendered in a format (docs/protocol.md section 13, "Scoring").

The layout: ``OUT/bench.json`` (the plan), ``OUT/<document>/<condition>-<k>/`` one run each, done when it
holds ``result.json``. Every file is data: a path ``result.json`` names stays inside its run directory, and
a file that cannot be read, or holds something else than the layout says, is one ``BENCH_OUTPUT_INVALID``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..errors import DuelError
from ..files import read_bounded
from ..printable import printable_json
from ..record import Conclusion, Provisional, RecordFile, parse_conclusion, provisional, seat_models
from ..review import flip_ledger
from ..vocabulary import ErrorCode
from .corpus import CorpusDocument, corpus_directory, load_corpus
from .score import DUEL, BenchScore, RunRecord, SeatSpend, SeatTurn, score_bench

__all__ = ["SCORE_FORMATS", "read_runs", "read_score", "render_score"]

SCORE_FORMATS = ("md", "json", "html")
_RUN = re.compile(r"(duel|single)-([1-9][0-9]{0,5})")
_JSON_LIMIT = 1024 * 1024  # bench.json and result.json are a few hundred bytes
_TEXT_LIMIT = 16 * 1024 * 1024  # as a source may be (section 7, "Proposed edits")


def read_score(out: Path, corpus_dir: Path | None = None) -> tuple[BenchScore, Path]:
    """The score of the runs under ``out`` and the corpus they are scored against: ``corpus_dir``, else the one
    ``bench.json`` names, else the shipped corpus. Raises :class:`DuelError` ``BENCH_OUTPUT_INVALID`` for
    output that does not follow the layout, ``CORPUS_INVALID`` for a corpus that cannot be read."""
    plan = _json(out / "bench.json")
    named = plan.get("corpus") if isinstance(plan, dict) else None
    if corpus_dir is None and isinstance(named, str) and named:
        corpus_dir = Path(named) if Path(named).is_absolute() else out / named
    corpus = {document.name: document for document in load_corpus(corpus_dir)}
    runs, pending = read_runs(out, corpus)
    return score_bench(runs, corpus, pending), corpus_dir or corpus_directory()


def read_runs(out: Path, corpus: dict[str, CorpusDocument]) -> tuple[list[RunRecord], list[str]]:
    """Every finished run under ``out``, and the run directories not finished (no ``result.json``)."""
    runs: list[RunRecord] = []
    pending: list[str] = []
    for folder in sorted(p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if folder.name not in corpus:
            raise _invalid(folder, f"no document {folder.name!r} in the corpus")
        for run in sorted(p for p in folder.iterdir() if p.is_dir()):
            if not _RUN.fullmatch(run.name):
                continue
            if not (run / "result.json").exists():
                pending.append(f"{folder.name}/{run.name}")
                continue
            runs.append(_run(run, corpus[folder.name]))
    return runs, pending


def render_score(score: BenchScore, format_: str, *, out: str, corpus: str) -> str:
    """The score as ``md``, ``json`` or ``html`` text."""
    from .score_json import score_json

    data = score_json(score, out=out, corpus=corpus)
    if format_ == "json":
        return printable_json(data, indent=2) + "\n"
    if format_ == "html":
        from .score_html import score_html

        return score_html(data)
    from .score_markdown import score_markdown

    return score_markdown(data)


def _run(folder: Path, document: CorpusDocument) -> RunRecord:
    result = _json(folder / "result.json")
    if not isinstance(result, dict):
        raise _invalid(folder / "result.json", "is not a JSON object")
    condition, run = _RUN.fullmatch(folder.name).groups()  # type: ignore[union-attr]  # matched by the caller
    original = _text(folder / "document.md") if (folder / "document.md").exists() else document.text
    revised_at = _inside(folder, result.get("revised"), "revised")
    revised = None if revised_at is None else _text(revised_at)
    turns: tuple[SeatTurn, ...] = ()
    seats, sealed = 1, False
    reasons: dict[int, str] = {}
    conclusion: Conclusion | None = None
    record_at = _inside(folder, result.get("record"), "record")
    if condition == DUEL and record_at is not None:
        turns, seats, sealed, reasons, conclusion = _turns(record_at)
    spend = tuple(_spend(folder, seat) for seat in _list(result.get("seats"), folder))
    outcome = result.get("outcome")
    return RunRecord(
        document=document.name,
        condition=condition,
        run=int(run),
        outcome=outcome if isinstance(outcome, str) else None,
        original=original,
        revised=revised,
        seats=seats,
        sealed=sealed,
        turns=turns,
        reasons=reasons,
        spend=spend,
        seconds=_number(result.get("seconds"), folder, "seconds") or 0.0,
        stopped=result.get("stopped") if isinstance(result.get("stopped"), str) else None,
        error=result.get("error") if isinstance(result.get("error"), str) else None,
        provisional=_label(condition, conclusion, spend),
    )


def _label(condition: str, conclusion: Conclusion | None, spend: tuple[SeatSpend, ...]) -> Provisional | None:
    """A duel's provisional label: the one its record's close wrote, else derived (:func:`_derived_label`)."""
    if condition != DUEL:
        return None
    return conclusion.provisional if conclusion is not None and conclusion.labelled else _derived_label(spend)


def _derived_label(spend: tuple[SeatSpend, ...]) -> Provisional | None:
    """The label of a duel whose record carries none (closed before the label, or never closed): by the rule,
    from each seat's model as ``result.json`` lists it, the served one when the API named it."""
    seats = dict(enumerate(spend))
    return provisional(
        seat_models({i: one.model for i, one in seats.items()}, ((i, one.served) for i, one in seats.items()))
    )


def _turns(path: Path) -> tuple[tuple[SeatTurn, ...], int, bool, dict[int, str], Conclusion | None]:
    """A record's panel turns with their seats and names, its seat count, whether its openings were sealed,
    what each turn that moved its seat's stance cited for it (the flip ledger), and its Terminal Conclusion
    (None while open)."""
    try:
        record = RecordFile.read(path, find_source=False)
        front = record.front
        if front is None:
            raise _invalid(path, f"not a duel record: {record.front_problem}")
        history = record.history()
    except (OSError, ValueError) as exc:
        raise _invalid(path, f"cannot be read: {exc}") from None
    names = {entry.seat: entry.display_name for entry in front.participants}
    schedule = front.schedule
    turns = tuple(
        SeatTurn(seat=seat, name=names.get(seat, f"seat {seat}"), turn=turn)
        for number, turn in zip(history.numbers, history.turns, strict=True)
        if not turn.chair and (seat := schedule.speaker(number)) > 0
    )
    reasons = {flip.turn: flip.reason for flip in flip_ledger(history)}
    return turns, schedule.seats, bool(schedule.sealed_openings), reasons, parse_conclusion(record.parsed.conclusion)


def _spend(folder: Path, seat: object) -> SeatSpend:
    if not isinstance(seat, dict):
        raise _invalid(folder / "result.json", "a seat is not a JSON object")
    served = seat.get("served")
    usd = seat.get("usd")
    return SeatSpend(
        seat=str(seat.get("seat", "")),
        model=str(seat.get("model", "")),
        served=served if isinstance(served, str) else None,
        tokens_in=int(_number(seat.get("tokens_in"), folder, "tokens_in") or 0),
        tokens_out=int(_number(seat.get("tokens_out"), folder, "tokens_out") or 0),
        usd=_number(usd, folder, "usd"),
    )


def _inside(folder: Path, named: object, field: str) -> Path | None:
    """The file a result.json field names, kept inside its run directory; None when it names none."""
    if named is None:
        return None
    if not isinstance(named, str) or not named:
        raise _invalid(folder / "result.json", f"{field} is not a path")
    path = (folder / named).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise _invalid(folder / "result.json", f"{field} leads out of its run directory: {named}")
    return path


def _json(path: Path) -> Any:
    try:
        return json.loads(read_bounded(path, _JSON_LIMIT))
    except FileNotFoundError:
        raise _invalid(path, "is missing: not the output of duel bench run") from None
    except (OSError, ValueError) as exc:
        raise _invalid(path, f"cannot be read as JSON: {exc}") from None


def _text(path: Path) -> str:
    try:
        return read_bounded(path, _TEXT_LIMIT).decode("utf-8")
    except (OSError, ValueError) as exc:
        raise _invalid(path, f"cannot be read as UTF-8 text: {exc}") from None


def _list(value: object, folder: Path) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _invalid(folder / "result.json", "seats is not a list")
    return value


def _number(value: object, folder: Path, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise _invalid(folder / "result.json", f"{field} is not a number of zero or more")
    return float(value)


def _invalid(path: Path, message: str) -> DuelError:
    return DuelError(ErrorCode.BENCH_OUTPUT_INVALID, f"{path}: {message}")
