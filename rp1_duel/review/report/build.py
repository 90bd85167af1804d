"""``duel report``'s computation, pure: :func:`build_report` parses the artifact with
:mod:`rp1_duel.record.artifact`, replays its turns through the one
:class:`~rp1_duel.record.history.History`, and adds the recorded usage, the verification verdicts,
``duel validate``'s findings and the cached model-written assessments (:mod:`rp1_duel.review.assessment`)
it is handed. A report leads with the decision and what the debate changed for each seat
(:mod:`rp1_duel.review.decision`). What the turns say, turn by turn, is :mod:`.turns`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ...coordination import Event, ProviderFailed
from ...errors import DuelError
from ...participant import TOKEN_KINDS, PricedUsage, recorded, summary, total
from ...record import (
    BOTH_ACCEPTING,
    BOTH_DISSENTING,
    LAST_TURN,
    LAST_TURN_BLOCKED,
    ArtifactReport,
    Conclusion,
    Decision,
    FrontMatter,
    FrontMatterError,
    History,
    ParsedArtifact,
    Provisional,
    RecordFile,
    artifact_citations,
    chain_problems,
    citable_names,
    decide,
    outcome_problems,
    parse,
    parse_conclusion,
    parse_ruling,
    provisional,
    seat_models,
    signatures,
)
from ...vocabulary import (
    ACCEPTED_CONSENSUS,
    CLOSED,
    INVALIDATED,
    TIMEOUT,
    RecordCode,
    Verdict,
)
from ..assessment import AssessmentFile, Subject, shown
from ..audience_view import audience_view
from ..decision import (
    AlternativeView,
    DecisionFacts,
    Quote,
    RevisionView,
    and_list,
    flagged_citations,
    seat_positions,
)
from ..openings import openings_of
from ..provenance import TurnProvenance, alerts, turn_provenance
from ..synthesis import synthesis_view
from ..verdict import judge
from .data import (
    ModelFailure,
    NovelArgument,
    OutcomeFacts,
    Report,
    ReportLinks,
    ReportParticipant,
    SeatSigning,
    SidecarFile,
)
from .turns import (
    citation_anchor,
    citation_row,
    followed_unresolved,
    links_beside,
    merged_agreements,
    seat_changes,
    stance_timeline,
    verification_facts,
)


def build_report(
    text: str | Record,
    path: str = "",
    events: Sequence[Event] | None = None,
    sidecar: SidecarFile | None = None,
    env: Mapping[str, str] | None = None,
    notes: Sequence[str] = (),
    assessment: AssessmentFile | None = None,
    validation: ArtifactReport | None = None,
    links: ReportLinks | None = None,
    revision: RevisionView | None = None,
    alternatives: Sequence[AlternativeView] = (),
) -> Report:
    """The report of an artifact's ``text`` (or its :class:`Record`, already read), found at ``path``.

    ``events``: the duel's ``usage``, ``provider_failed`` and ``turn_rejected`` events (protocol section 9),
    None when none were found. ``sidecar``: its verification sidecar, when there is one. ``env`` may name a price
    table (``$DUEL_PRICES``). ``assessment``: its assessment cache, whose current answers are
    shown as model-written sections. ``validation``: what ``duel validate`` found, when it was
    run. ``links``: where the report's links lead (default: as read from the artifact's folder).
    ``revision``: the revision a consensus agreed on, recomputed over the recorded source; ``alternatives``: those a
    duel that agreed none left on the table.
    Raises :class:`DuelError` ``FRONT_MATTER`` for a text that is not a duel artifact.
    """
    record = text if isinstance(text, Record) else read_record(text, path)
    parsed, front, history = record.parsed, record.front, record.history
    turns, schedule = history.turns, history.schedule
    decision = decide(history.summaries(), schedule)
    problems = [*parsed.problems, *(problem.message for problem in chain_problems(parsed.blocks, first=schedule.first))]
    problems += [problem.message for problem in outcome_problems(front, decision.outcome)]  # validate's rule
    participants = _participants(
        front=front, history=history, usage_events=events, env=env or {}, validation=validation
    )
    verification, entries = verification_facts(
        found=sidecar, artifact_name=Path(path).name, front=front, blocks=parsed.blocks, turns=turns
    )
    cited = artifact_citations(parsed.blocks, turns, history.source_names, first=schedule.first)
    model_written, assessment_notes = shown(assessment, record.subject(path), turns, first=schedule.first)
    conclusion = parse_conclusion(parsed.conclusion)
    outcome = _outcome(
        front=front, history=history, decision=decision, conclusion=conclusion, participants=participants
    )
    timeline = stance_timeline(history)
    agreements, unresolved = merged_agreements(history), followed_unresolved(history)
    models = {p.seat: p.model for p in participants}
    provenance = () if events is None else turn_provenance(events, history, models, env or {})
    anchors = {entry.turn: entry.anchor for entry in timeline}
    judged = judge(
        model_written,
        outcome=front.outcome,
        void_reasons=_void_reasons(front.outcome, problems, validation),
        final_turns=history.final_turns(),
        fabricated_beneath=lambda numbers: [
            c
            for c in flagged_citations(history, cited, entries, numbers)
            if c.verdict == Verdict.FABRICATED and c.deciding_turns
        ],
    )
    return Report(
        path=path,
        duel_id=front.duel_id,
        topic=front.topic,
        source_path=front.source_path,
        source_sha256=front.source_sha256,
        status=front.status,
        created_at=front.created_at,
        closed_at=front.closed_at,
        duration_seconds=_seconds_between(front.created_at, front.closed_at),
        schedule=schedule,
        head_sha256=history.head,
        problems=tuple(problems),
        outcome=outcome,
        participants=participants,
        provenance=provenance,
        usage=_total_usage(participants) if events is not None else None,
        timeline=timeline,
        agreements=agreements,
        unresolved=unresolved,
        novel_arguments=tuple(
            NovelArgument(
                turn=n, seat=schedule.speaker(n), claim=t.novel_claim, support=tuple(s.text for s in t.novel_support)
            )
            for n, t in zip(history.numbers, turns, strict=True)
            if not t.chair
        ),
        citations=tuple(
            citation_row(citation, entries.get(citation), schedule, citation_anchor(citation, history, anchors))
            for citation in cited
        ),
        verification=verification,
        alerts=alerts(
            provenance, events or (), history, outcome=front.outcome, names={p.seat: p.name for p in participants}
        ),
        decision=DecisionFacts(
            agreed=outcome.outcome == outcome.implied == ACCEPTED_CONSENSUS,
            positions=seat_positions(history, last=True),
            valid=None if validation is None else validation.valid,
            validation_problems=() if validation is None else tuple(validation.problems),
            validation_notes=() if validation is None else tuple(validation.notes),
            flagged=flagged_citations(history, cited, entries, outcome.deciding_turns),
            revision=revision,
            alternatives=tuple(alternatives),
        ),
        changes=seat_changes(history, timeline, agreements, unresolved),
        openings=openings_of(history, front.outcome),
        links=links or links_beside(path, front),
        notes=(*notes, *assessment_notes),
        model_failures=_model_failures(events or (), participants),
        model_written=model_written,
        rulings=history.rulings,
        synthesis=synthesis_view(history, {p.seat: p.name for p in participants}),
        judged_verdict=judged,
        audience=audience_view(front.questions, front.final_thoughts, history, front.status),
        provisional=_provisional(conclusion, participants, provenance),
    )


def _provisional(
    conclusion: Conclusion | None, participants: Sequence[ReportParticipant], provenance: Sequence[TurnProvenance]
) -> Provisional | None:
    """The label the close wrote; for a duel open or closed before the label, derived from the served models."""
    if conclusion is not None and conclusion.labelled:
        return conclusion.provisional
    return provisional(
        seat_models({p.seat: p.model for p in participants}, ((t.seat, t.served_model) for t in provenance))
    )


def _void_reasons(outcome: str | None, problems: Sequence[str], validation: ArtifactReport | None) -> list[str]:
    """Why the record voids every judged verdict: it was invalidated, or it does not validate."""
    reasons = [f"the duel closed {INVALIDATED}"] if outcome == INVALIDATED else []
    if problems or (validation is not None and not validation.valid):
        reasons.append("the record does not validate")
    return reasons


@dataclass(frozen=True)
class Record:
    """An artifact's text as a report reads it: its parts as written, its front matter, and its turns replayed
    as every view shows them (a claim a fabricated source was cited for is redacted: docs/protocol.md section 10)."""

    parsed: ParsedArtifact
    front: FrontMatter
    history: History

    def subject(self, path: str) -> Subject:
        """What an assessment of this record is about."""
        return Subject(
            duel_id=self.front.duel_id,
            artifact=Path(path).name,
            chain_head=self.history.head,
            turns=len(self.history.turns),
        )


def read_record(text: str, path: str = "") -> Record:
    """An artifact's text as a report reads it; raises :class:`DuelError` ``FRONT_MATTER`` for a text that is not
    a duel artifact."""
    parsed = parse(text)
    try:
        front = FrontMatter.parse(parsed.front_matter)
    except FrontMatterError as exc:
        raise DuelError(RecordCode.FRONT_MATTER, f"{path or 'the text'}: {exc}") from None
    names = citable_names(front.source_path)
    rulings = tuple(r for r in (parse_ruling(block.r, block.text) for block in parsed.rulings) if r is not None)
    history = History(
        source=None, source_names=names, schedule=front.schedule, source_sha256=front.source_sha256, rulings=rulings
    )
    history.replay(parsed.blocks)
    return Record(parsed, front, _as_shown(history, front))


def record_of(file: RecordFile, replayed: History) -> Record:
    """The record ``duel validate`` has just read and replayed, as a report reads it: no second read, parse or
    replay (but for the turns a ruling redacts, replayed as shown). Raises :class:`DuelError` ``FRONT_MATTER``
    for a file that is not a duel artifact."""
    if file.front is None:
        raise DuelError(RecordCode.FRONT_MATTER, f"{file.path}: {file.front_problem}")
    return Record(file.parsed, file.front, _as_shown(replayed, file.front))


def _as_shown(history: History, front: FrontMatter) -> History:
    """Every view reads the turns as shown: a claim a fabricated source was cited for left out."""
    if not any(ruling.redacts for ruling in history.rulings):
        return history
    shown = History(
        source=None,
        source_names=history.source_names,
        schedule=front.schedule,
        source_sha256=front.source_sha256,
        rulings=history.rulings,
    )
    shown.replay(history.shown_blocks())
    return shown


# -- outcome -------------------------------------------------------------------------------


def _outcome(
    front: FrontMatter,
    *,
    history: History,
    decision: Decision,
    conclusion: Conclusion | None,
    participants: tuple[ReportParticipant, ...],
) -> OutcomeFacts:
    schedule, turns = history.schedule, history.turns
    deciding = tuple(sorted(decision.latest))
    blocking = tuple(Quote(n, item.text) for n in deciding for item in history.turn(n).unresolved if item.blocking)
    names = {p.seat: p.name for p in participants}

    def who(n: int) -> str:
        seat = schedule.speaker(n)
        return f"turn {n} ({names.get(seat, f'seat {seat}')}, {history.turn(n).stance or 'no stance'})"

    count = f"{len(turns)} of {schedule.turn_count} turns"
    said = [who(n) for n in deciding]
    pair = and_list(said)
    every = "Both" if schedule.seats == 2 else f"All {schedule.seats}"  # the rules read every seat's latest turn
    reason = conclusion.reason if conclusion else None
    recorded_outcome = front.outcome
    if recorded_outcome in (TIMEOUT, INVALIDATED) or (recorded_outcome and recorded_outcome != decision.outcome):
        explanation = f"Closed {recorded_outcome} after {count}: {reason or 'no reason recorded'}."
    elif decision.rule == BOTH_ACCEPTING:
        explanation = f"{every} latest turns accept the consensus with no blocking item: {pair}."
    elif decision.rule == BOTH_DISSENTING:
        explanation = f"{every} latest turns dissent: {pair}."
    elif decision.rule == LAST_TURN_BLOCKED:
        explanation = (
            f"Turn {len(turns)} was the last allowed, and a blocking item or a DISSENTING stance was "
            f"left: {pair}; {len(blocking)} blocking item{'' if len(blocking) == 1 else 's'}."
        )
    elif decision.rule == LAST_TURN:
        explanation = (
            f"Turn {len(turns)} was the last allowed, with no blocking item and no DISSENTING stance left: {pair}."
        )
    else:
        explanation = f"Still open after {count}."
    if front.status != CLOSED and decision.outcome:
        explanation = f"Still open after {count}; the turns reached {decision.outcome} ({pair}), not yet closed."
    return OutcomeFacts(
        outcome=recorded_outcome,
        implied=decision.outcome,
        rule=decision.rule,
        deciding_turns=deciding,
        stances=tuple(history.turn(n).stance for n in deciding),
        blocking=blocking,
        reason=reason,
        summary=conclusion.summary if conclusion else None,
        candidate_convergence=decision.candidate_convergence,
        explanation=explanation,
    )


def _seconds_between(start: str, end: str | None) -> float | None:
    if end is None:
        return None
    try:
        first, last = (datetime.fromisoformat(moment.replace("Z", "+00:00")) for moment in (start, end))
        return round((last - first).total_seconds(), 3)
    except (TypeError, ValueError):  # a hand-edited time: no duration rather than a wrong one
        return None


# -- participants and usage ----------------------------------------------------------------


def _participants(
    front: FrontMatter,
    *,
    history: History,
    usage_events: Sequence[Event] | None,
    env: Mapping[str, str],
    validation: ArtifactReport | None,
) -> tuple[ReportParticipant, ...]:
    found = []
    signing = _signing(history, validation)
    for entry in sorted(front.participants, key=lambda p: p.seat):
        usage = None if usage_events is None else summary(recorded(usage_events, entry.id), entry.model_id, env)
        found.append(
            ReportParticipant(
                seat=entry.seat,
                id=entry.id,
                name=entry.display_name,
                harness=entry.harness,
                model=entry.model_id,
                joined_at=entry.joined_at,
                turns=tuple(n for n in history.numbers if history.schedule.speaker(n) == entry.seat),
                usage=usage,
                persona=entry.persona,
                signed_by=signing.get(entry.seat, ()),
            )
        )
    return tuple(found)


def _signing(history: History, validation: ArtifactReport | None) -> dict[int, tuple[SeatSigning, ...]]:
    """Seat -> who signed its turns, grouped by status, principal and key in the order of their first turn: what
    a reader needs to see a seat signed by another's key when no seat declared its signer (section 3, "Trust")."""
    groups: dict[int, dict[tuple[str, str | None, str | None], list[int]]] = {}
    for entry in () if validation is None else validation.signatures:
        if entry.turn not in history.numbers:
            continue
        signature = history.block(entry.turn).signature
        key = signatures.signer_key(signature) if signature else None
        seat = history.schedule.speaker(entry.turn)
        groups.setdefault(seat, {}).setdefault((entry.status, entry.signer, key), []).append(entry.turn)
    return {
        seat: tuple(
            SeatSigning(status=status, principal=principal, key=key, turns=tuple(turns))
            for (status, principal, key), turns in by.items()
        )
        for seat, by in groups.items()
    }


def _model_failures(events: Sequence[Event], participants: Sequence[ReportParticipant]) -> tuple[ModelFailure, ...]:
    names = {p.seat: p.name for p in participants}
    return tuple(
        ModelFailure(
            seat=failed.seat,
            name=names.get(failed.seat, f"seat {failed.seat}"),
            turn=failed.turn_number,
            code=failed.code,
            message=failed.message,
        )
        for failed in (event.data for event in events)
        if isinstance(failed, ProviderFailed)
    )


def _total_usage(participants: Iterable[ReportParticipant]) -> PricedUsage:
    """The participants' sum; its cost is None when a participant that used tokens has no price."""
    used = [p.usage for p in participants if p.usage is not None]
    costs = [u.cost_usd for u in used if any(getattr(u.usage, f"{kind}_tokens") for kind in TOKEN_KINDS)]
    cost = None if any(c is None for c in costs) else round(sum(c for c in costs if c is not None), 6)
    dates = {u.prices_date for u in used}
    return PricedUsage(total(u.usage for u in used), cost, dates.pop() if len(dates) == 1 else None)
