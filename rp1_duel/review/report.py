"""``duel report``: what a reviewer needs from a debate record, computed from its text alone.

:func:`build_report` is pure: it parses the artifact with :mod:`rp1_duel.record.artifact`,
replays its turns through the one :class:`~rp1_duel.record.history.History`, and adds the
recorded usage, the verification verdicts, ``duel validate``'s findings and the cached
model-written assessments (:mod:`rp1_duel.review.assessment`) it is handed. A report leads
with the decision and what the debate changed for each seat (:mod:`rp1_duel.review.decision`).
Reading files is :mod:`rp1_duel.review.report_files`'s job; turning a :class:`Report` into
Markdown or HTML is the renderers'. ``Report.to_dict()`` is the ``json`` format
(docs/protocol.md section 11).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..coordination.events import Event, ProviderFailed
from ..errors import DuelError
from ..participant.usage import TOKEN_KINDS, PricedUsage, recorded, summary, total
from ..record import signatures
from ..record.artifact import (
    Conclusion,
    FrontMatter,
    FrontMatterError,
    ParsedArtifact,
    TurnBlock,
    parse,
    parse_conclusion,
)
from ..record.citations import Citation, artifact_citations
from ..record.history import History, chain_problems, citable_names
from ..record.outcomes import (
    BOTH_ACCEPTING,
    BOTH_DISSENTING,
    LAST_TURN,
    LAST_TURN_BLOCKED,
    Decision,
    decide,
)
from ..record.rulings import Ruling, parse_ruling
from ..record.validate import ArtifactReport, outcome_problems
from ..record.verification import CURRENT, STALE, CitationEntry, Sidecar, check
from ..schedule import Schedule
from ..turns.grammar import ParsedTurn, split_tag
from ..turns.novelty import NoveltyIndex
from ..turns.references import heading_candidates, parse_reference
from ..turns.source import github_anchor
from ..vocabulary import (
    ACCEPTED_CONSENSUS,
    ACCEPTING_CONSENSUS,
    CLOSED,
    CONVERGING,
    DISSENTING,
    INVALIDATED,
    OPEN_TO_DEBATE,
    REVISING,
    TIMEOUT,
    CitationKind,
    RecordCode,
    Verdict,
)
from .assessment import AssessmentFile, ModelSection, Subject, shown
from .audience_view import AudienceView, audience_view
from .decision import (
    DecisionFacts,
    Quote,
    RevisionView,
    SeatChange,
    StanceRevision,
    and_list,
    flagged_citations,
    seat_positions,
)
from .openings import Openings, openings_of
from .provenance import Alert, TurnProvenance, alerts, turn_provenance
from .synthesis import SynthesisView, synthesis_view
from .verdict import JudgedVerdicts, judge

__all__ = [
    "MARKED_STANCES",
    "REPORT_VERSION",
    "STANCE_LEVELS",
    "UNRESOLVED_STATUSES",
    "Agreement",
    "CitationRow",
    "ModelFailure",
    "NovelArgument",
    "OutcomeFacts",
    "Quote",
    "Record",
    "Report",
    "ReportLinks",
    "ReportParticipant",
    "SeatSigning",
    "SidecarFile",
    "TimelineEntry",
    "UnresolvedEntry",
    "VerificationFacts",
    "build_report",
    "read_record",
]

REPORT_VERSION = 1
# The timeline's scale, low to high. DISSENTING sits below it and REVISING between arguing and
# converging (a participant changing its position moves off its own); both are marked.
STANCE_LEVELS = {DISSENTING: 0, OPEN_TO_DEBATE: 1, REVISING: 2, CONVERGING: 3, ACCEPTING_CONSENSUS: 4}
MARKED_STANCES = (DISSENTING, REVISING)
HEADLINE_CHARS = 160
# A trailing credit in an agreement, `(Turn 2)` or `(Turns 1 and 3)`: aside when agreements are compared.
_CREDIT = re.compile(r"\s*\(\s*turns?\s+#?\d+[^()]*\)\s*\.?\s*$", re.IGNORECASE)
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+", re.MULTILINE)
UNREADABLE = "unreadable"  # a sidecar that could not be read (besides verification.CURRENT, STALE, MISMATCH)
# An unresolved item is open while its author lists it; else how its author let it go (section 11).
OPEN, CONCEDED, RESOLVED, DROPPED = "open", "conceded", "resolved", "dropped"
UNRESOLVED_STATUSES = (OPEN, CONCEDED, RESOLVED, DROPPED)


@dataclass(frozen=True)
class SeatSigning:
    """Who signed some of a seat's turns, as ``duel validate`` checked their signatures (section 11)."""

    status: str  # a status of record.signatures: verified, intact, untrusted, invalid, unchecked or unsigned
    principal: str | None  # verified: the allowed signers file's principal(s), comma-separated
    key: str | None  # the fingerprint of the key the signatures carry; None for unsigned turns
    turns: tuple[int, ...]


@dataclass(frozen=True)
class ReportParticipant:
    """A participant as the report shows it: its seat, who it is, when it joined, its turns, its usage and
    who signed its turns."""

    seat: int
    id: str
    name: str
    harness: str
    model: str
    joined_at: str | None
    turns: tuple[int, ...]
    usage: PricedUsage | None  # None when not recorded
    persona: str | None = None  # the persona its model played, when the record says
    signed_by: tuple[SeatSigning, ...] = ()  # by first turn; () when its signatures were not checked


@dataclass(frozen=True)
class ModelFailure:
    """A seat's model that failed for good writing a turn, as its ``provider_failed`` event says (section 9)."""

    seat: int
    name: str
    turn: int
    code: str
    message: str


@dataclass(frozen=True)
class TimelineEntry:
    """One turn on the stance timeline."""

    turn: int
    seat: int
    stance: str | None  # None: a chair's turn, or a heading naming no stance (a record no service wrote)
    level: int | None  # STANCE_LEVELS
    marked: bool
    changed: bool  # differs from the same seat's previous stance
    previous_stance: str | None
    revision_support: tuple[str, ...]  # the turn's Stance Revision Support
    headline: str  # the Position's first sentence
    blocking: int  # blocking unresolved items
    signed: bool  # carries a signature line (checked by `duel validate`, not here)
    anchor: str | None  # GitHub's anchor of its heading in the artifact; None without a heading


@dataclass(frozen=True)
class OutcomeFacts:
    """The outcome and why: the rule of protocol section 8 that reached it, or the close's reason."""

    outcome: str | None  # as recorded in the front matter
    implied: str | None  # what the turns imply (section 8), whatever was recorded
    rule: str | None  # outcomes.BOTH_ACCEPTING, BOTH_DISSENTING, LAST_TURN_BLOCKED, LAST_TURN
    deciding_turns: tuple[int, ...]  # each seat's latest turn, in order
    stances: tuple[str | None, ...]  # their stances
    blocking: tuple[Quote, ...]  # their blocking items
    reason: str | None  # the close's recorded reason
    summary: str | None  # the close's summary
    candidate_convergence: bool
    explanation: str


@dataclass(frozen=True)
class Agreement:
    """A point of agreement: its first wording, the turns that list it and the seats that wrote them."""

    text: str  # its first wording
    turns: tuple[int, ...]
    seats: tuple[int, ...]


@dataclass(frozen=True)
class UnresolvedEntry:
    """An unresolved item followed through its author's turns (docs/protocol.md section 11)."""

    text: str  # its latest wording
    seat: int
    raised_in: int
    listed_in: tuple[int, ...]
    blocking: bool | None  # its tag in the latest listing; None: untagged
    answered_in: tuple[int, ...]  # other seats' later turns countering a turn that lists it
    dropped_in: int | None  # the author's first later turn that no longer lists it
    status: str  # UNRESOLVED_STATUSES

    @property
    def open(self) -> bool:
        """Whether its author still lists it in its latest turn."""
        return self.dropped_in is None


@dataclass(frozen=True)
class NovelArgument:
    """A claim a turn brings as new, with its support."""

    turn: int
    seat: int
    claim: str
    support: tuple[str, ...]


@dataclass(frozen=True)
class CitationRow:
    """One thing a turn cites (:func:`rp1_duel.record.citations.artifact_citations`), with its verdict."""

    turn: int
    seat: int
    section: str | None
    item: str
    kind: str  # url, source, turn or principle
    url: str | None
    verdict: str | None = None  # from a current or stale verification sidecar that covers the turn
    confidence: str | None = None
    reason: str | None = None
    anchor: str | None = None  # where in the source (`L11-L12`, a heading's) or the artifact (a turn's) it points


@dataclass(frozen=True)
class SidecarFile:
    """The verification sidecar found next to the artifact (read by the edge)."""

    path: str
    sidecar: Sidecar | None  # None when it could not be read
    error: str | None = None  # why not


@dataclass(frozen=True)
class VerificationFacts:
    """What the verification sidecar says of the record: whether it is current, what it covers, its verdicts."""

    path: str
    status: str  # verification.CURRENT, STALE or MISMATCH, or UNREADABLE
    problems: tuple[str, ...]
    turns: int | None  # how many turns it covers
    verified_at: str | None
    counts: dict[str, int]  # citations by verdict, when its verdicts are shown

    @property
    def shown(self) -> bool:
        """Whether its verdicts are shown: the sidecar is current, or stale but of this record."""
        return self.status in (CURRENT, STALE)


@dataclass(frozen=True)
class ReportLinks:
    """Where a report's links lead, relative to the folder it is read from: POSIX paths, not yet URL-encoded."""

    artifact: str
    source: str | None  # None: the source's place relative to the report is not known


@dataclass(frozen=True)
class Report:
    """Everything ``duel report`` says of a record, computed from its text and what lies beside it."""

    path: str
    duel_id: str
    topic: str
    source_path: str
    source_sha256: str
    status: str
    created_at: str
    closed_at: str | None
    duration_seconds: float | None
    schedule: Schedule  # who wrote turn n: schedule.speaker(n); a chair (seat 0) wrote turn 0, the pre-closing and the synthesis
    head_sha256: str
    problems: tuple[str, ...]  # structure, hash chain and outcome problems: the record cannot be trusted
    outcome: OutcomeFacts
    participants: tuple[ReportParticipant, ...]
    provenance: tuple[TurnProvenance, ...]  # per turn; () when the events were not read
    usage: PricedUsage | None  # the participants' sum; None when not recorded
    timeline: tuple[TimelineEntry, ...]
    agreements: tuple[Agreement, ...]
    unresolved: tuple[UnresolvedEntry, ...]
    novel_arguments: tuple[NovelArgument, ...]
    citations: tuple[CitationRow, ...]
    verification: VerificationFacts | None  # None: no sidecar next to the artifact
    alerts: tuple[Alert, ...]  # what the headline names beside the outcome (review.provenance)
    decision: DecisionFacts
    changes: tuple[SeatChange, ...]  # by seat, each seat that wrote a turn
    openings: Openings  # what a vote of the openings alone would have decided, against the outcome
    links: ReportLinks
    notes: tuple[str, ...] = ()
    model_written: tuple[ModelSection, ...] = field(default=())
    model_failures: tuple[ModelFailure, ...] = ()  # in the order they were logged
    synthesis: SynthesisView | None = None  # a chaired duel's synthesis, beside each seat's final stance
    judged_verdict: JudgedVerdicts | None = None  # the assessments' verdicts; None without a shown assessment
    audience: AudienceView | None = None  # its questions and final thoughts; None when it had none
    rulings: tuple[Ruling, ...] = ()  # the service's rulings on cited sources; a fabricated one redacts its claim

    @property
    def turn_count(self) -> int:
        """How many turns the record holds."""
        return len(self.timeline)

    @property
    def intact(self) -> bool:
        """Whether the record has no structure, hash chain or outcome problem."""
        return not self.problems

    def participant(self, seat: int) -> ReportParticipant | None:
        """The participant in ``seat``, if the front matter names one."""
        return next((p for p in self.participants if p.seat == seat), None)

    def name_of(self, seat: int) -> str:
        """The name of the participant in ``seat``, or ``seat N`` when none is named."""
        found = self.participant(seat)
        return found.name if found else f"seat {seat}"

    def anchor_of(self, turn: int) -> str | None:
        """GitHub's anchor of turn ``turn``'s heading in the artifact, when the record has that turn."""
        return next((entry.anchor for entry in self.timeline if entry.turn == turn), None)

    def to_dict(self) -> dict[str, Any]:
        """The ``json`` format, field by field in docs/protocol.md section 11."""
        data = asdict(self)
        del data["schedule"], data["links"]  # links depend on where the report is read, not on the record
        if not self.schedule.chair:
            del data["synthesis"]  # as `chair`: a report without a chair reads as before chairs
        if self.judged_verdict is None:
            del data["judged_verdict"]  # only beside an assessment: a report without one reads as before
        if self.audience is None:
            del data["audience"]  # only with questions or final thoughts: a report without reads as before
        rulings = [
            {**ruling.to_json(), "evidence": ruling.shown_evidence, "redacts": ruling.redacts}
            for ruling in self.rulings
        ]
        del data["rulings"]
        lead = {
            "alerts": data.pop("alerts"),
            **({"rulings": rulings} if rulings else {}),  # only once there are some: other reports read as before
            "decision": data.pop("decision"),
            "openings": data.pop("openings"),
            "changes": data.pop("changes"),
        }
        lead["decision"]["validation_problems"] = [p.to_dict() for p in self.decision.validation_problems]
        data["unresolved"] = [{**asdict(item), "open": item.open} for item in self.unresolved]
        data["participants"] = [{**asdict(p), "usage": _usage_json(p.usage)} for p in self.participants]
        data["provenance"] = [turn.to_json() for turn in self.provenance]
        data["usage"] = _usage_json(self.usage)
        head = {
            key: data.pop(key)
            for key in (
                "path",
                "duel_id",
                "topic",
                "source_path",
                "source_sha256",
                "status",
                "created_at",
                "closed_at",
                "duration_seconds",
            )
        }
        head.update(self.schedule.fields())  # as in the front matter: a two-seat report reads as before panels
        ready: dict[str, Any] = _json_ready(
            {"version": REPORT_VERSION, **head, "turn_count": self.turn_count, "intact": self.intact, **lead, **data}
        )
        return ready


def _usage_json(usage: PricedUsage | None) -> dict[str, Any] | None:
    return None if usage is None else usage.to_json()


def _json_ready(value: Any) -> Any:
    """Tuples as lists, all the way down: what ``json.loads`` gives back."""
    if isinstance(value, dict):
        return {key: _json_ready(inner) for key, inner in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(inner) for inner in value]
    return value


def build_report(
    text: str,
    path: str = "",
    events: Sequence[Event] | None = None,
    sidecar: SidecarFile | None = None,
    env: Mapping[str, str] | None = None,
    notes: Sequence[str] = (),
    assessment: AssessmentFile | None = None,
    validation: ArtifactReport | None = None,
    links: ReportLinks | None = None,
    revision: RevisionView | None = None,
) -> Report:
    """The report of an artifact's ``text``, found at ``path``.

    ``events``: the duel's ``usage``, ``provider_failed`` and ``turn_rejected`` events (protocol section 9),
    None when none were found. ``sidecar``: its verification sidecar, when there is one. ``env`` may name a price
    table (``$DUEL_PRICES``). ``assessment``: its assessment cache, whose current answers are
    shown as model-written sections. ``validation``: what ``duel validate`` found, when it was
    run. ``links``: where the report's links lead (default: as read from the artifact's folder).
    ``revision``: the revision a consensus agreed on, recomputed over the recorded source.
    Raises :class:`DuelError` ``FRONT_MATTER`` for a text that is not a duel artifact.
    """
    record = read_record(text, path)
    parsed, front, history = record.parsed, record.front, record.history
    turns, schedule = history.turns, history.schedule
    decision = decide(history.summaries(), schedule)
    problems = [*parsed.problems, *(problem.message for problem in chain_problems(parsed.blocks, first=schedule.first))]
    problems += [problem.message for problem in outcome_problems(front, decision.outcome)]  # validate's rule
    participants = _participants(front, history, events, env or {}, validation)
    verification, entries = _verification(sidecar, Path(path).name, front, parsed.blocks, turns)
    cited = artifact_citations(parsed.blocks, turns, history.source_names, first=schedule.first)
    model_written, assessment_notes = shown(assessment, record.subject(path), turns, first=schedule.first)
    outcome = _outcome(front, history, decision, parse_conclusion(parsed.conclusion), participants)
    timeline = _timeline(history)
    agreements, unresolved = _agreements(history), _unresolved(history)
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
            NovelArgument(n, schedule.speaker(n), t.novel_claim, tuple(s.text for s in t.novel_support))
            for n, t in zip(history.numbers, turns, strict=True)
            if not t.chair
        ),
        citations=tuple(
            _citation_row(citation, entries.get(citation), schedule, _anchor(citation, history, anchors))
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
        ),
        changes=_changes(history, timeline, agreements, unresolved),
        openings=openings_of(history, front.outcome),
        links=links or _links_beside(path, front),
        notes=(*notes, *assessment_notes),
        model_failures=_model_failures(events or (), participants),
        model_written=model_written,
        rulings=history.rulings,
        synthesis=synthesis_view(history, {p.seat: p.name for p in participants}),
        judged_verdict=judged,
        audience=audience_view(front.questions, front.final_thoughts, history, front.status),
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
        return Subject(self.front.duel_id, Path(path).name, self.history.head, len(self.history.turns))


def read_record(text: str, path: str = "") -> Record:
    """Raises :class:`DuelError` ``FRONT_MATTER`` for a text that is not a duel artifact."""
    parsed = parse(text)
    try:
        front = FrontMatter.parse(parsed.front_matter)
    except FrontMatterError as exc:
        raise DuelError(RecordCode.FRONT_MATTER, f"{path or 'the text'}: {exc}") from None
    names = citable_names(front.source_path)
    rulings = tuple(r for r in (parse_ruling(block.r, block.text) for block in parsed.rulings) if r is not None)
    history = History(None, names, front.schedule, source_sha256=front.source_sha256, rulings=rulings)
    history.replay(parsed.blocks)
    if any(ruling.redacts for ruling in rulings):  # every view reads the turns as shown: redacted claims left out
        shown = History(None, names, front.schedule, source_sha256=front.source_sha256, rulings=rulings)
        shown.replay(history.shown_blocks())
        history = shown
    return Record(parsed, front, history)


# -- outcome -------------------------------------------------------------------------------


def _outcome(
    front: FrontMatter,
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
        seat: tuple(SeatSigning(status, principal, key, tuple(turns)) for (status, principal, key), turns in by.items())
        for seat, by in groups.items()
    }


def _model_failures(events: Sequence[Event], participants: Sequence[ReportParticipant]) -> tuple[ModelFailure, ...]:
    names = {p.seat: p.name for p in participants}
    return tuple(
        ModelFailure(
            failed.seat, names.get(failed.seat, f"seat {failed.seat}"), failed.turn_number, failed.code, failed.message
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


# -- turns ---------------------------------------------------------------------------------


def _timeline(history: History) -> tuple[TimelineEntry, ...]:
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


def _agreements(history: History) -> tuple[Agreement, ...]:
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


@dataclass
class _Tracked:
    """An unresolved item while its author's turns are read."""

    seat: int
    raised_in: int
    text: str = ""
    blocking: bool | None = None
    listed_in: list[int] = field(default_factory=list)


def _unresolved(history: History) -> tuple[UnresolvedEntry, ...]:
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
                items[(seat, record)] = _Tracked(seat, n)
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


def _verification(
    found: SidecarFile | None,
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
        return VerificationFacts(found.path, UNREADABLE, (found.error or "unreadable",), None, None, {}), {}
    checked = check(sidecar, artifact_name, front, blocks, turns)
    facts = VerificationFacts(
        found.path,
        checked.status,
        checked.problems,
        sidecar.turns,
        sidecar.verified_at,
        sidecar.counts() if checked.belongs else {},
    )
    return facts, ({entry.citation: entry for entry in sidecar.citations} if checked.belongs else {})


def _citation_row(
    citation: Citation, entry: CitationEntry | None, schedule: Schedule, anchor: str | None
) -> CitationRow:
    row = CitationRow(
        citation.turn,
        schedule.speaker(citation.turn),
        citation.section,
        citation.item,
        citation.kind,
        citation.url,
        anchor=anchor,
    )
    return (
        row if entry is None else replace(row, verdict=entry.verdict, confidence=entry.confidence, reason=entry.reason)
    )


def _anchor(citation: Citation, history: History, turn_anchors: Mapping[int, str | None]) -> str | None:
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


def _links_beside(path: str, front: FrontMatter) -> ReportLinks:
    """Links as read from the artifact's folder, which a relative recorded source path starts from."""
    source = front.source_path
    return ReportLinks(Path(path).name or f"{front.duel_id}.md", None if Path(source).is_absolute() else source)


# -- what the debate changed -----------------------------------------------------------------------


def _changes(
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
            StanceRevision(entry.turn, entry.previous_stance, entry.stance, entry.revision_support)
            for entry in timeline
            if entry.seat == seat and entry.changed and _rose(entry.previous_stance, entry.stance)
        )
        adopted = tuple(
            Quote(next(n for n in agreement.turns if speaker(n) == seat), agreement.text)
            for agreement in agreements
            if seat in agreement.seats and any(speaker(n) != seat for n in _owed(agreement))
        )
        held = tuple(Quote(item.raised_in, item.text) for item in unresolved if item.seat == seat and item.open)
        changes.append(SeatChange(seat, opening, finals[seat], revisions, adopted, held))
    return tuple(changes)


def _owed(agreement: Agreement) -> tuple[int, ...]:
    """The turns an agreement owes its point to: the one that first stated it, and those its first wording credits."""
    credit = _CREDIT.search(agreement.text)
    return (agreement.turns[0], *(int(n) for n in re.findall(r"\d+", credit.group() if credit else "")))


def _rose(before: str | None, after: str | None) -> bool:
    """Whether a stance moved up the scale, toward consensus."""
    levels = STANCE_LEVELS.get(before or ""), STANCE_LEVELS.get(after or "")
    return levels[0] is not None and levels[1] is not None and levels[1] > levels[0]
