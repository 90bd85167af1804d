"""The report's data: everything ``duel report`` says of a record, as frozen values (docs/protocol.md
section 11). :mod:`.build` computes it; :mod:`.json_form` declares its ``json`` form; the sections
(:mod:`.sections`) turn it into blocks the writers show.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...participant import PricedUsage
from ...record import CURRENT, STALE, Provisional, Ruling, Sidecar
from ...schedule import Schedule
from ...vocabulary import (
    ACCEPTING_CONSENSUS,
    CONVERGING,
    DISSENTING,
    OPEN_TO_DEBATE,
    REVISING,
)
from ..assessment import ModelSection
from ..audience_view import AudienceView
from ..decision import (
    DecisionFacts,
    Quote,
    SeatChange,
)
from ..openings import Openings
from ..provenance import Alert, TurnProvenance
from ..synthesis import SynthesisView
from ..verdict import JudgedVerdicts
from .json_form import ReportJson, report_json

# The timeline's scale, low to high. DISSENTING sits below it and REVISING between arguing and
# converging (a participant changing its position moves off its own); both are marked.
STANCE_LEVELS = {DISSENTING: 0, OPEN_TO_DEBATE: 1, REVISING: 2, CONVERGING: 3, ACCEPTING_CONSENSUS: 4}
MARKED_STANCES = (DISSENTING, REVISING)
HEADLINE_CHARS = 160
UNREADABLE = "unreadable"  # a sidecar that could not be read (besides verification.CURRENT, STALE, MISMATCH)
# An unresolved item is open while its author lists it; else how its author let it go (section 11).
OPEN, CONCEDED, RESOLVED, DROPPED = "open", "conceded", "resolved", "dropped"
UNRESOLVED_STATUSES = (OPEN, CONCEDED, RESOLVED, DROPPED)


@dataclass(kw_only=True, frozen=True)
class SeatSigning:
    """Who signed some of a seat's turns, as ``duel validate`` checked their signatures (section 11)."""

    status: str  # a status of record.signatures: verified, intact, untrusted, invalid, unchecked or unsigned
    principal: str | None  # verified: the allowed signers file's principal(s), comma-separated
    key: str | None  # the fingerprint of the key the signatures carry; None for unsigned turns
    turns: tuple[int, ...]


@dataclass(kw_only=True, frozen=True)
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


@dataclass(kw_only=True, frozen=True)
class ModelFailure:
    """A seat's model that failed for good writing a turn, as its ``provider_failed`` event says (section 9)."""

    seat: int
    name: str
    turn: int
    code: str
    message: str


@dataclass(kw_only=True, frozen=True)
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


@dataclass(kw_only=True, frozen=True)
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


@dataclass(kw_only=True, frozen=True)
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


@dataclass(kw_only=True, frozen=True)
class NovelArgument:
    """A claim a turn brings as new, with its support."""

    turn: int
    seat: int
    claim: str
    support: tuple[str, ...]


@dataclass(kw_only=True, frozen=True)
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


@dataclass(kw_only=True, frozen=True)
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
    """Where a report's links lead, relative to the folder it is read from: POSIX paths, not yet URL-encoded. A
    report read from no folder (a pull-request comment, where a relative link resolves against the page) links
    nothing, and these name the files instead, from the root of their git work tree (docs/protocol.md section 11)."""

    artifact: str
    source: str | None  # None: the source's place relative to the report is not known
    linked: bool = True  # False: paths are named, not linked


@dataclass(kw_only=True, frozen=True)
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
    provisional: Provisional | None = None  # every seat of one model family (record.families); None: not so

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

    def to_dict(self) -> ReportJson:
        """The ``json`` format, field by field in docs/protocol.md section 11 (:mod:`.json_form` declares it)."""
        return report_json(self)
