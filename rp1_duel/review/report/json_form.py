"""``duel report --format json``: the report's declared JSON form (docs/protocol.md section 11).

Keys a report without the feature does not have are ``NotRequired`` and set only when the feature is
there, so a report of a record without a chair, an assessment, an audience or rulings reads as before
them. Links are not in it: they depend on where the report is read, not on the record.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any, TypedDict, cast

from ...participant import PricedUsage

if TYPE_CHECKING:
    from typing_extensions import NotRequired

    from .data import Report

__all__ = ["REPORT_VERSION", "ReportJson", "report_json"]

REPORT_VERSION = 1

JsonObject = dict[str, Any]  # a part as ``asdict`` gives it, tuples as lists


class ReportJson(TypedDict):
    """The ``json`` format, in the order it is written."""

    version: int
    path: str
    duel_id: str
    topic: str
    source_path: str
    source_sha256: str
    status: str
    created_at: str
    closed_at: str | None
    duration_seconds: float | None
    max_turns: int  # the schedule's fields, as in the front matter (Schedule.fields)
    seats: NotRequired[int]
    chair: NotRequired[bool]
    sealed_openings: NotRequired[bool]
    on_fabrication: NotRequired[str]
    turn_count: int
    intact: bool
    provisional: NotRequired[JsonObject]  # only when every seat is of one model family
    alerts: list[JsonObject]
    rulings: NotRequired[list[JsonObject]]  # only once there are some
    decision: JsonObject
    openings: JsonObject
    changes: list[JsonObject]
    head_sha256: str
    problems: list[str]
    outcome: JsonObject
    participants: list[JsonObject]
    provenance: list[JsonObject]
    usage: JsonObject | None
    timeline: list[JsonObject]
    agreements: list[JsonObject]
    unresolved: list[JsonObject]
    novel_arguments: list[JsonObject]
    citations: list[JsonObject]
    verification: JsonObject | None
    notes: list[str]
    model_written: list[JsonObject]
    model_failures: list[JsonObject]
    synthesis: NotRequired[JsonObject | None]  # only with a chair
    judged_verdict: NotRequired[JsonObject]  # only beside a shown assessment
    audience: NotRequired[JsonObject]  # only with questions or final thoughts


def report_json(report: Report) -> ReportJson:
    """The report as its ``json`` format."""
    decision = asdict(report.decision)
    decision["validation_problems"] = [p.to_dict() for p in report.decision.validation_problems]
    if not report.decision.alternatives:  # as `rulings`: a report without them reads as before them
        del decision["alternatives"]
    form: ReportJson = {
        "version": REPORT_VERSION,
        "path": report.path,
        "duel_id": report.duel_id,
        "topic": report.topic,
        "source_path": report.source_path,
        "source_sha256": report.source_sha256,
        "status": report.status,
        "created_at": report.created_at,
        "closed_at": report.closed_at,
        "duration_seconds": report.duration_seconds,
        "max_turns": report.schedule.max_turns,
        "turn_count": report.turn_count,
        "intact": report.intact,
        "alerts": _parts(report.alerts),
        "decision": _ready(decision),
        "openings": _part(report.openings),
        "changes": _parts(report.changes),
        "head_sha256": report.head_sha256,
        "problems": list(report.problems),
        "outcome": _part(report.outcome),
        "participants": [_ready({**asdict(p), "usage": _usage(p.usage)}) for p in report.participants],
        "provenance": [_ready(turn.to_json()) for turn in report.provenance],
        "usage": _usage(report.usage),
        "timeline": _parts(report.timeline),
        "agreements": _parts(report.agreements),
        "unresolved": [_ready({**asdict(item), "open": item.open}) for item in report.unresolved],
        "novel_arguments": _parts(report.novel_arguments),
        "citations": _parts(report.citations),
        "verification": None if report.verification is None else _part(report.verification),
        "notes": list(report.notes),
        "model_written": _parts(report.model_written),
        "model_failures": _parts(report.model_failures),
    }
    if report.schedule.chair:  # as `chair`: a report without a chair reads as before chairs
        form["synthesis"] = None if report.synthesis is None else _part(report.synthesis)
    if report.judged_verdict is not None:
        form["judged_verdict"] = _part(report.judged_verdict)
    if report.audience is not None:
        form["audience"] = _part(report.audience)
    if report.provisional is not None:  # as `audience`: a report of a duel that is not reads as before the label
        form["provisional"] = _part(report.provisional)
    if report.rulings:
        form["rulings"] = [
            {**ruling.to_json(), "evidence": ruling.shown_evidence, "redacts": ruling.redacts}
            for ruling in report.rulings
        ]
    return _in_order(form, report)


def _in_order(form: ReportJson, report: Report) -> ReportJson:
    """``form`` with the schedule's fields as the front matter writes them (``seats`` only when not two, …),
    its keys in the order :class:`ReportJson` declares them: the order the format is written in."""
    every = {**form, **report.schedule.fields()}
    return cast("ReportJson", {key: every[key] for key in ReportJson.__annotations__ if key in every})


def _usage(usage: PricedUsage | None) -> JsonObject | None:
    return None if usage is None else usage.to_json()


def _part(value: Any) -> JsonObject:
    ready: JsonObject = _ready(asdict(value))
    return ready


def _parts(values: tuple[Any, ...]) -> list[JsonObject]:
    return [_part(value) for value in values]


def _ready(value: Any) -> Any:
    """Tuples as lists, all the way down: what ``json.loads`` gives back."""
    if isinstance(value, dict):
        return {key: _ready(inner) for key, inner in value.items()}
    if isinstance(value, (list, tuple)):
        return [_ready(inner) for inner in value]
    return value
