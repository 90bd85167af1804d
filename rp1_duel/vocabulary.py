"""The protocol's words, defined once: stances, sections, outcomes, next steps, error codes, event types.

Imports nothing from the project, so every layer may import it (docs/protocol.md
sections 4, 7, 8, 9 and 10 and the list of error codes in section 2).
"""

from __future__ import annotations

from enum import Enum
from typing import Final, Literal

__all__ = [
    "ACCEPTED_CONSENSUS",
    "ACCEPTED_REVISION",
    "ACCEPTING_CONSENSUS",
    "ACTIVE",
    "AGREED",
    "AGREEMENTS",
    "AUDIENCE_ANSWERS",
    "BASES",
    "BRIEFS",
    "CHAIR_MARK",
    "CHAIR_PHASES",
    "CHAIR_PHASE_SECTIONS",
    "CHAIR_SECTIONS",
    "CITATION_KINDS",
    "CLAIM_LOCK",
    "CLAIM_TIMEOUT",
    "CLOSE",
    "CLOSED",
    "CLOSED_STEP",
    "CLOSE_TIMEOUT",
    "COMMIT_OPENING",
    "COMPOSE_TURN",
    "CONFIDENCES",
    "CONJECTURE_TAG",
    "CONVERGING",
    "COUNTERPOINTS",
    "DEPARTURES",
    "DISSENT",
    "DISSENTING",
    "FETCH_FAILURES",
    "GOOD_ANSWER",
    "INVALIDATED",
    "LINEUP",
    "MAX_SOURCES_PER_ITEM",
    "MAX_TURNS",
    "MAX_UNENGAGED_POINTS",
    "NEXT_STEPS",
    "NON_EMPTY_SECTIONS",
    "NOVEL_ARGUMENT",
    "OPEN_TO_DEBATE",
    "OPTIONAL_SECTIONS",
    "OUTCOMES",
    "POSITION",
    "PROPOSED_EDITS",
    "PROVIDERS",
    "QUESTION",
    "REASONING_LEVELS",
    "RELEASE_LOCK",
    "REVISING",
    "ROLES",
    "SECTIONS",
    "SOURCE_CHALLENGES",
    "SOURCE_CORRECTIONS",
    "STANCES",
    "STANCE_REVISION_SUPPORT",
    "STILL_OPEN",
    "SYNTHESIS",
    "TIMEOUT",
    "UNENGAGED_POINTS",
    "UNRESOLVED_ITEMS",
    "VERDICTS",
    "VOTE_ANSWERS",
    "WAIT_PEER",
    "WAIT_TURN",
    "WRAPPERS",
    "CitationKind",
    "Confidence",
    "DuelStatus",
    "ErrorCode",
    "EventType",
    "FetchFailure",
    "NextStep",
    "Outcome",
    "Phase",
    "Readable",
    "ReasoningLevel",
    "RecordCode",
    "Role",
    "RuleCode",
    "Stance",
    "Verdict",
    "Vote",
]

# -- stances (section 7) ---------------------------------------------------------------
Stance = Literal["OPEN_TO_DEBATE", "CONVERGING", "ACCEPTING_CONSENSUS", "DISSENTING", "REVISING"]
OPEN_TO_DEBATE: Final = "OPEN_TO_DEBATE"
CONVERGING: Final = "CONVERGING"
ACCEPTING_CONSENSUS: Final = "ACCEPTING_CONSENSUS"
DISSENTING: Final = "DISSENTING"
REVISING: Final = "REVISING"
STANCES: Final[tuple[Stance, ...]] = (OPEN_TO_DEBATE, CONVERGING, ACCEPTING_CONSENSUS, DISSENTING, REVISING)

# -- the six sections of a turn, in order (section 7) ------------------------------------
POSITION: Final = "Position"
COUNTERPOINTS: Final = "Counterpoints"
AGREEMENTS: Final = "Agreements"
NOVEL_ARGUMENT: Final = "Novel Argument"
UNRESOLVED_ITEMS: Final = "Unresolved Items"
STANCE_REVISION_SUPPORT: Final = "Stance Revision Support"
SECTIONS: Final = (POSITION, COUNTERPOINTS, AGREEMENTS, NOVEL_ARGUMENT, UNRESOLVED_ITEMS, STANCE_REVISION_SUPPORT)
NON_EMPTY_SECTIONS: Final = SECTIONS[:5]
# Optional sections after the six (section 7, "Proposed edits"): changes to the source, and the
# revision an ACCEPTING_CONSENSUS turn accepts.
PROPOSED_EDITS: Final = "Proposed Edits"
ACCEPTED_REVISION: Final = "Accepted Revision"
# Answers to the audience's questions due at this turn (section 4, "The audience"), before the edits.
AUDIENCE_ANSWERS: Final = "Audience Answers"
# Challenges of an earlier turn's cited sources (section 10, "Challenges"), first of the optional sections.
SOURCE_CHALLENGES: Final = "Source Challenges"
# A seat's replacements of its own sources ruled unreliable (section 10, "Corrections"), first of all.
SOURCE_CORRECTIONS: Final = "Source Corrections"
OPTIONAL_SECTIONS: Final = (SOURCE_CORRECTIONS, SOURCE_CHALLENGES, AUDIENCE_ANSWERS, PROPOSED_EDITS, ACCEPTED_REVISION)
# Begins a claim or a support item that no citation backs (section 7, CONJECTURE_AS_BASIS).
CONJECTURE_TAG: Final = "[CONJECTURE]"

# -- a chair's turns (section 7, "Chair turns"): the word in the stance slot, and the sections of each phase --
CHAIR_MARK: Final = "CHAIR"
QUESTION: Final = "Question"
LINEUP: Final = "Lineup"
GOOD_ANSWER: Final = "What A Good Answer Looks Like"
UNENGAGED_POINTS: Final = "Unengaged Points"
SYNTHESIS: Final = "Synthesis"
AGREED: Final = "Agreed"
STILL_OPEN: Final = "Still Open"
DEPARTURES: Final = (
    "Departures"  # where a synthesis says, seat by seat, which final stance it overrules (SILENT_OVERRULE)
)
CHAIR_SECTIONS: Final = (QUESTION, LINEUP, GOOD_ANSWER, UNENGAGED_POINTS, SYNTHESIS, AGREED, STILL_OPEN, DEPARTURES)
MAX_UNENGAGED_POINTS: Final = 3
# URL citations one counterpoint's (or the novel argument's, or Stance Revision Support's) support may hold;
# more is TOO_MANY_SOURCES, and `duel verify` opens only the first ones (section 7, "Support items").
MAX_SOURCES_PER_ITEM: Final = 5


class Phase:
    """Where a turn of a chaired duel stands (section 4, "Turn order"); the chair writes three of them."""

    OPENING_BRIEF: Final = "opening_brief"
    OPENING: Final = "opening"  # the panelists' first round
    REBUTTAL: Final = "rebuttal"
    PRE_CLOSING: Final = "pre_closing"
    CLOSING: Final = "closing"  # the panelists' last round: it must address the unengaged points
    SYNTHESIS: Final = "synthesis"


CHAIR_PHASES: Final = (Phase.OPENING_BRIEF, Phase.PRE_CLOSING, Phase.SYNTHESIS)
# The sections of each chair turn, in order; the synthesis may add Agreed, Still Open, Departures and Proposed Edits
# after its own.
CHAIR_PHASE_SECTIONS: Final = {
    Phase.OPENING_BRIEF: ((QUESTION, LINEUP, GOOD_ANSWER), ()),
    Phase.PRE_CLOSING: ((UNENGAGED_POINTS,), ()),
    Phase.SYNTHESIS: ((SYNTHESIS,), (AGREED, STILL_OPEN, DEPARTURES, PROPOSED_EDITS)),
}


class Role:
    """Which seat a join takes (``--role``)."""

    PANELIST: Final = "panelist"
    CHAIR: Final = "chair"
    AUDIENCE: Final = "audience"  # `duel join` only: asks questions and gives final thoughts, takes no seat


ROLES: Final = (Role.PANELIST, Role.CHAIR)

# -- what `duel mcp`'s duel_read pages through (section 2) --------------------------------
Readable = Literal["source", "turns"]

# -- what `duel join` strips around a model's answer before validating it (section 2) ----
# One tuple, not a constant each: lower-case string constants here are next_step words.
WRAPPERS: Final = ("reasoning", "preamble", "fence", "trailing_remark")

# -- who writes with a model: `duel join --provider` and `--reasoning`, and the configuration (section 2) ----
PROVIDERS: Final = ("anthropic", "openai")
ReasoningLevel = Literal["low", "medium", "high"]  # how hard the model thinks (None: the model's default)
REASONING_LEVELS: Final[tuple[ReasoningLevel, ...]] = ("low", "medium", "high")

# -- outcomes (section 8) ----------------------------------------------------------------
Outcome = Literal["ACCEPTED_CONSENSUS", "DISSENT", "MAX_TURNS", "TIMEOUT", "INVALIDATED"]
ACCEPTED_CONSENSUS: Final = "ACCEPTED_CONSENSUS"
DISSENT: Final = "DISSENT"
MAX_TURNS: Final = "MAX_TURNS"
TIMEOUT: Final = "TIMEOUT"  # reached only through the --for-timeout close
INVALIDATED: Final = "INVALIDATED"  # reached only by a close with a reason, tampering or a lost source
OUTCOMES: Final[tuple[Outcome, ...]] = (ACCEPTED_CONSENSUS, DISSENT, MAX_TURNS, TIMEOUT, INVALIDATED)

# -- duel status ---------------------------------------------------------------------------
DuelStatus = Literal["ACTIVE", "CLOSED"]
ACTIVE: Final = "ACTIVE"
CLOSED: Final = "CLOSED"

# -- next_step words (section 4) ---------------------------------------------------------
NextStep = Literal[
    "wait_peer",
    "commit_opening",
    "claim_lock",
    "wait_turn",
    "compose_turn",
    "release_lock",
    "close",
    "claim_timeout",
    "close_timeout",
    "closed",
]
WAIT_PEER: Final = "wait_peer"
COMMIT_OPENING: Final = "commit_opening"  # a sealed duel's opening round: write your opening, commit its hash
CLAIM_LOCK: Final = "claim_lock"
WAIT_TURN: Final = "wait_turn"
COMPOSE_TURN: Final = "compose_turn"
RELEASE_LOCK: Final = "release_lock"
CLOSE: Final = "close"
CLAIM_TIMEOUT: Final = "claim_timeout"
CLOSE_TIMEOUT: Final = "close_timeout"
CLOSED_STEP: Final = "closed"
NEXT_STEPS: Final[tuple[NextStep, ...]] = (
    WAIT_PEER,
    COMMIT_OPENING,
    CLAIM_LOCK,
    WAIT_TURN,
    COMPOSE_TURN,
    RELEASE_LOCK,
    CLOSE,
    CLAIM_TIMEOUT,
    CLOSE_TIMEOUT,
    CLOSED_STEP,
)


# -- event types (section 9) --------------------------------------------------------------


class EventType(str, Enum):
    """The ``type`` of each event in a duel's log (section 9).

    A ``str`` too, so a type compares equal to its word; ``str()`` gives the word, as JSON does."""

    PARTICIPANT_REGISTERED = "participant_registered"
    PARTICIPANT_WAITING = "participant_waiting"
    PARTICIPANT_RESUMED = "participant_resumed"
    SEAT_RECLAIMED = "seat_reclaimed"
    SEAT_TAKEN_OVER = "seat_taken_over"
    LOCK_ACQUIRED = "lock_acquired"
    LOCK_REFRESHED = "lock_refreshed"
    LOCK_RELEASED = "lock_released"
    TURN_APPENDED = "turn_appended"
    TURN_REJECTED = "turn_rejected"
    CANDIDATE_CONVERGENCE = "candidate_convergence"
    RECORD_INVALIDATED = "record_invalidated"
    DUEL_CLOSED = "duel_closed"
    DUEL_SEALED = "duel_sealed"
    SOURCE_CHANGED = "source_changed"
    USAGE = "usage"
    PROVIDER_FAILED = "provider_failed"
    CITATIONS_VERIFIED = "citations_verified"
    OPENING_COMMITTED = "opening_committed"
    QUESTION_ASKED = "question_asked"
    FINAL_THOUGHTS = "final_thoughts"
    RULING_WRITTEN = "ruling_written"

    def __str__(self) -> str:
        return self.value


class ErrorCode:
    """Every error code the service, the CLI and the providers answer with (section 2)."""

    # the protocol's own
    TARGET_NOT_ABSOLUTE: Final = "TARGET_NOT_ABSOLUTE"
    TARGET_NOT_MARKDOWN: Final = "TARGET_NOT_MARKDOWN"
    TARGET_UNREADABLE: Final = "TARGET_UNREADABLE"
    TARGET_EMPTY: Final = "TARGET_EMPTY"  # this project's addition: a join with nothing to debate
    DEBATE_DIR_INVALID: Final = "DEBATE_DIR_INVALID"
    DUEL_NOT_FOUND: Final = "DUEL_NOT_FOUND"
    PARTICIPANT_NOT_FOUND: Final = "PARTICIPANT_NOT_FOUND"
    PARTICIPANT_AUTH_FAILED: Final = "PARTICIPANT_AUTH_FAILED"
    SEAT_TAKEN: Final = "SEAT_TAKEN"
    DUEL_FULL: Final = "DUEL_FULL"
    DUEL_CLOSED: Final = "DUEL_CLOSED"
    LEASE_NOT_HELD: Final = "LEASE_NOT_HELD"
    LEASE_EXPIRED: Final = "LEASE_EXPIRED"
    TURN_INVALID: Final = "TURN_INVALID"
    ARTIFACT_TAMPERED: Final = "ARTIFACT_TAMPERED"
    OUTCOME_MISMATCH: Final = "OUTCOME_MISMATCH"
    TIMEOUT_REJECTED: Final = "TIMEOUT_REJECTED"
    STATE_CORRUPT: Final = "STATE_CORRUPT"
    INVALID_ARGUMENT: Final = "INVALID_ARGUMENT"
    # this project's additions
    INVALID_CONFIG: Final = "INVALID_CONFIG"  # a configuration file that is not TOML, or holds a wrong key or value
    UNTRUSTED_CONFIG: Final = "UNTRUSTED_CONFIG"  # a project file sets a key that sends keys or data elsewhere
    NOT_YOUR_TURN: Final = "NOT_YOUR_TURN"
    LOCK_TIMEOUT: Final = "LOCK_TIMEOUT"
    INTERRUPTED: Final = "INTERRUPTED"
    SKILL_EXISTS: Final = "SKILL_EXISTS"
    SKILL_WRITE_FAILED: Final = "SKILL_WRITE_FAILED"
    STORAGE_FAILED: Final = "STORAGE_FAILED"
    FILESYSTEM_UNSUPPORTED: Final = "FILESYSTEM_UNSUPPORTED"
    SIGNING_FAILED: Final = "SIGNING_FAILED"
    TURN_DEADLINE_PASSED: Final = "TURN_DEADLINE_PASSED"
    ARTIFACT_UNREADABLE: Final = "ARTIFACT_UNREADABLE"  # duel verify: not a readable artifact
    SOURCE_MISMATCH: Final = "SOURCE_MISMATCH"  # a database store: this host's copy of the source differs
    PATH_OUTSIDE_PROJECT: Final = "PATH_OUTSIDE_PROJECT"  # data names a path out of the project or into .git/
    DEPENDENCY_MISSING: Final = "DEPENDENCY_MISSING"  # an optional extra a flag needs is not installed
    MERGE_CONFLICT: Final = "MERGE_CONFLICT"  # duel apply --check: the agreed change conflicts with today's document
    NO_AGREED_REVISION: Final = "NO_AGREED_REVISION"  # duel apply: the duel is open or ended without consensus
    GITHUB_API_FAILED: Final = "GITHUB_API_FAILED"  # duel ci github: the GitHub API refused a call or did not answer
    # sealed openings (docs/protocol.md section 4, "Sealed openings")
    OPENING_MISMATCH: Final = "OPENING_MISMATCH"  # a revealed opening is not the one committed: INVALIDATED
    OPENING_COMMITTED: Final = "OPENING_COMMITTED"  # a seat's sealed opening is committed already, to another text
    # the audience (section 4, "The audience")
    QUESTIONS_FULL: Final = "QUESTIONS_FULL"  # the round has its two questions already
    QUESTION_REFUSED: Final = "QUESTION_REFUSED"  # before the first round ends, or the seat has no turn left
    # model providers (duel join)
    PROVIDER_NO_CREDENTIALS: Final = "PROVIDER_NO_CREDENTIALS"
    PROVIDER_AUTH: Final = "PROVIDER_AUTH"
    PROVIDER_UNAVAILABLE: Final = "PROVIDER_UNAVAILABLE"
    PROVIDER_REJECTED: Final = "PROVIDER_REJECTED"
    PROVIDER_CONTEXT_EXCEEDED: Final = "PROVIDER_CONTEXT_EXCEEDED"  # the prompt does not fit the context window
    PROVIDER_MODEL_NOT_FOUND: Final = "PROVIDER_MODEL_NOT_FOUND"
    PROVIDER_BAD_RESPONSE: Final = "PROVIDER_BAD_RESPONSE"
    HUMAN_ABORTED: Final = "HUMAN_ABORTED"
    SCRIPT_EXHAUSTED: Final = "SCRIPT_EXHAUSTED"
    BUDGET_EXCEEDED: Final = "BUDGET_EXCEEDED"  # duel join --budget-usd: the next request could pass the cap (exit 4)
    PANEL_SEAT_FAILED: Final = "PANEL_SEAT_FAILED"  # duel panel: a seat's process ended before taking its seat
    CORPUS_INVALID: Final = "CORPUS_INVALID"  # duel bench: a corpus folder, document or sidecar that cannot be used
    BENCH_OUTPUT_INVALID: Final = "BENCH_OUTPUT_INVALID"  # duel bench score: not the layout duel bench run writes


class RuleCode:
    """The turn rules' violation codes (section 7), in the order agents read the rules
    (:data:`rp1_duel.turns.rules.RULES` follows it)."""

    HEADING: Final = "HEADING"
    STANCE: Final = "STANCE"
    SECTION_MISSING: Final = "SECTION_MISSING"
    SECTION_ORDER: Final = "SECTION_ORDER"
    SECTION_EMPTY: Final = "SECTION_EMPTY"
    COUNTERPOINT_INCOMPLETE: Final = "COUNTERPOINT_INCOMPLETE"
    ADDRESSES_UNKNOWN: Final = "ADDRESSES_UNKNOWN"
    SUPPORT_KIND: Final = "SUPPORT_KIND"
    SOURCE_REF_NOT_FOUND: Final = "SOURCE_REF_NOT_FOUND"
    FIGURE_NOT_IN_SOURCE: Final = "FIGURE_NOT_IN_SOURCE"
    TOO_MANY_SOURCES: Final = "TOO_MANY_SOURCES"
    TURN_REF_NOT_FOUND: Final = "TURN_REF_NOT_FOUND"
    CONJECTURE_AS_BASIS: Final = "CONJECTURE_AS_BASIS"
    NOVELTY: Final = "NOVELTY"
    UNRESOLVED_TAG: Final = "UNRESOLVED_TAG"
    STANCE_REVISION: Final = "STANCE_REVISION"
    CONSENSUS_BLOCKED: Final = "CONSENSUS_BLOCKED"
    UNGROUNDED: Final = "UNGROUNDED"
    UNSAFE_STRUCTURE: Final = "UNSAFE_STRUCTURE"
    CONTROL_CHARACTER: Final = "CONTROL_CHARACTER"
    RAW_HTML: Final = "RAW_HTML"
    CHAIR_FORMAT: Final = "CHAIR_FORMAT"
    UNENGAGED_POINTS: Final = "UNENGAGED_POINTS"
    SILENT_OVERRULE: Final = "SILENT_OVERRULE"
    CLOSING_NEW_MATERIAL: Final = "CLOSING_NEW_MATERIAL"
    # proposed edits and the revision they make (section 7, "Proposed edits")
    EDIT_FORMAT: Final = "EDIT_FORMAT"
    EDIT_TARGET: Final = "EDIT_TARGET"
    EDIT_NOT_FOUND: Final = "EDIT_NOT_FOUND"
    EDIT_AMBIGUOUS: Final = "EDIT_AMBIGUOUS"
    EDIT_OVERLAP: Final = "EDIT_OVERLAP"
    EDIT_TOO_LARGE: Final = "EDIT_TOO_LARGE"
    REVISION_MISSING: Final = "REVISION_MISSING"
    REVISION_MISMATCH: Final = "REVISION_MISMATCH"
    # the audience (section 4, "The audience")
    QUESTION_UNANSWERED: Final = "QUESTION_UNANSWERED"
    # rulings (section 10, "Rulings")
    REDACTED_REPEATED: Final = "REDACTED_REPEATED"
    RULING_UNACKNOWLEDGED: Final = "RULING_UNACKNOWLEDGED"
    CORRECTION_INVALID: Final = "CORRECTION_INVALID"
    RULED_SOURCE_CITED: Final = "RULED_SOURCE_CITED"
    CHALLENGE_UNKNOWN: Final = "CHALLENGE_UNKNOWN"
    CHALLENGE_NO_CLAIM: Final = "CHALLENGE_NO_CLAIM"
    # sealed openings (section 4, "Sealed openings")
    SEALED_OPENING_EDITS: Final = "SEALED_OPENING_EDITS"


class RecordCode:
    """What ``duel validate`` reports about a whole artifact, besides turn rule codes."""

    UNREADABLE: Final = "UNREADABLE"
    STRUCTURE: Final = "STRUCTURE"
    FRONT_MATTER: Final = "FRONT_MATTER"
    TURN_ORDER: Final = "TURN_ORDER"
    HASH_CHAIN: Final = "HASH_CHAIN"
    HASH_MISMATCH: Final = "HASH_MISMATCH"
    TURN_COUNT: Final = "TURN_COUNT"
    OUTCOME_MISMATCH: Final = "OUTCOME_MISMATCH"
    SOURCE_NOT_CHECKED: Final = "SOURCE_NOT_CHECKED"  # only with --strict: no source, so no locator checked
    RULING_MISMATCH: Final = "RULING_MISMATCH"  # a ruling its turn does not bear out (section 10, "Rulings")
    # signed turns (only SIGNATURE_INVALID without --allowed-signers)
    SIGNATURE_MISSING: Final = "SIGNATURE_MISSING"
    SIGNATURE_INVALID: Final = "SIGNATURE_INVALID"
    SIGNATURE_UNTRUSTED: Final = "SIGNATURE_UNTRUSTED"
    SIGNER_CHANGED: Final = "SIGNER_CHANGED"
    SIGNER_SHARED: Final = "SIGNER_SHARED"
    SEAL_MISSING: Final = "SEAL_MISSING"
    SEAL_INVALID: Final = "SEAL_INVALID"
    # the agreed revision (section 8, "The agreed revision")
    PATCH_MISMATCH: Final = "PATCH_MISMATCH"
    # the close's provisional label (section 11, "Provisional")
    PROVISIONAL_MISMATCH: Final = "PROVISIONAL_MISMATCH"
    # the verification sidecar (section 10; the last three only with --require-verified)
    VERIFICATION_MISMATCH: Final = "VERIFICATION_MISMATCH"
    VERIFICATION_MISSING: Final = "VERIFICATION_MISSING"
    VERIFICATION_STALE: Final = "VERIFICATION_STALE"
    CITATION_FABRICATED: Final = "CITATION_FABRICATED"


# -- verification (section 10) ---------------------------------------------------------------
# Classes of constants, like the codes above: a lower-case string constant of this module is a
# next_step word.


class Verdict:
    """What ``duel verify`` concludes about one citation."""

    VERIFIED: Final = "verified"  # the page supports the claim (2 of 3 valid votes)
    UNRELIABLE: Final = "unreliable"  # the page refutes the claim, or does not support it
    FABRICATED: Final = "fabricated"  # a dead link, or a quoted excerpt that is not on the page
    INCONCLUSIVE: Final = "inconclusive"  # the votes reach no 2-of-3 decision
    UNVERIFIABLE: Final = "unverifiable"  # the page could not be read (403, 429, timeout, refused address, …)
    UNJUDGED: Final = "unjudged"  # the page is there; a judgement is needed and no model is configured
    REACHABLE: Final = "reachable"  # a URL outside any support item: the page is there, no claim to judge
    NOT_CHECKABLE: Final = "not_checkable"  # a `Principle:` item
    CHECKED_AT_APPEND: Final = "checked_at_append"  # a source or turn reference: checked when the turn was appended


VERDICTS: Final = (
    Verdict.VERIFIED,
    Verdict.UNRELIABLE,
    Verdict.FABRICATED,
    Verdict.INCONCLUSIVE,
    Verdict.UNVERIFIABLE,
    Verdict.UNJUDGED,
    Verdict.REACHABLE,
    Verdict.NOT_CHECKABLE,
    Verdict.CHECKED_AT_APPEND,
)


class Confidence:
    """How strongly a verdict stands (the issue's table; section 10)."""

    HIGH: Final = "high"  # the page itself states it (or the fetch established it)
    MEDIUM_HIGH: Final = "medium-high"  # two independent secondary sources
    MEDIUM: Final = "medium"  # one secondary source
    LOW: Final = "low"  # circumstantial


CONFIDENCES: Final = (Confidence.HIGH, Confidence.MEDIUM_HIGH, Confidence.MEDIUM, Confidence.LOW)


class CitationKind:
    """What a citation points at: a web page, the source, an earlier turn, or a principle (section 7)."""

    URL: Final = "url"
    SOURCE: Final = "source"
    TURN: Final = "turn"
    PRINCIPLE: Final = "principle"


CITATION_KINDS: Final = (CitationKind.URL, CitationKind.SOURCE, CitationKind.TURN, CitationKind.PRINCIPLE)


class Vote:
    """A voter's answer, the brief it was given, and what its excerpt shows."""

    SUPPORTS: Final = "supports"
    REFUTES: Final = "refutes"
    INSUFFICIENT: Final = "insufficient"
    BRIEF_SUPPORT: Final = "support"  # judge whether the page supports the claim
    BRIEF_REFUTE: Final = "refute"  # the adversarial brief: try to refute it
    STATES: Final = "states"  # the page itself states it
    REPORTS: Final = "reports"  # the page reports it from another source
    CIRCUMSTANTIAL: Final = "circumstantial"  # the page only suggests it


VOTE_ANSWERS: Final = (Vote.SUPPORTS, Vote.REFUTES, Vote.INSUFFICIENT)
BRIEFS: Final = (Vote.BRIEF_SUPPORT, Vote.BRIEF_REFUTE)
BASES: Final = (Vote.STATES, Vote.REPORTS, Vote.CIRCUMSTANTIAL)  # strongest first


class FetchFailure:
    """Why a cited page was not read: a fetch record's ``error``."""

    NAME_NOT_FOUND: Final = "name_not_found"  # DNS: no such host
    DNS_FAILED: Final = "dns_failed"  # DNS did not answer
    CONNECTION_REFUSED: Final = "connection_refused"
    CONNECTION_FAILED: Final = "connection_failed"  # reset, unreachable, a TLS failure
    TIMEOUT: Final = "timeout"
    HTTP_STATUS: Final = "http_status"  # an error status, in ``status``
    REFUSED_ADDRESS: Final = "refused_address"  # loopback, private, link-local, metadata, …
    REFUSED_SCHEME: Final = "refused_scheme"  # not http or https
    TOO_MANY_REDIRECTS: Final = "too_many_redirects"
    TOO_LARGE: Final = "too_large"
    UNSUPPORTED_CONTENT: Final = "unsupported_content"  # not HTML, plain text or PDF; or compressed
    UNREADABLE: Final = "unreadable"  # the text could not be extracted


FETCH_FAILURES: Final = (
    FetchFailure.NAME_NOT_FOUND,
    FetchFailure.DNS_FAILED,
    FetchFailure.CONNECTION_REFUSED,
    FetchFailure.CONNECTION_FAILED,
    FetchFailure.TIMEOUT,
    FetchFailure.HTTP_STATUS,
    FetchFailure.REFUSED_ADDRESS,
    FetchFailure.REFUSED_SCHEME,
    FetchFailure.TOO_MANY_REDIRECTS,
    FetchFailure.TOO_LARGE,
    FetchFailure.UNSUPPORTED_CONTENT,
    FetchFailure.UNREADABLE,
)
