"""The protocol's words, defined once: stances, sections, outcomes, next steps, error codes.

Imports nothing from the project, so every layer may import it (docs/protocol.md
sections 4, 7 and 8 and the list of error codes in section 2).
"""

from __future__ import annotations

from typing import Final, Literal

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

# -- what `duel join` strips around a model's answer before validating it (section 2) ----
# One tuple, not a constant each: lower-case string constants here are next_step words.
WRAPPERS: Final = ("reasoning", "preamble", "fence", "trailing_remark")

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
    "wait_peer", "claim_lock", "wait_turn", "compose_turn", "release_lock",
    "close", "claim_timeout", "close_timeout", "closed",
]
WAIT_PEER: Final = "wait_peer"
CLAIM_LOCK: Final = "claim_lock"
WAIT_TURN: Final = "wait_turn"
COMPOSE_TURN: Final = "compose_turn"
RELEASE_LOCK: Final = "release_lock"
CLOSE: Final = "close"
CLAIM_TIMEOUT: Final = "claim_timeout"
CLOSE_TIMEOUT: Final = "close_timeout"
CLOSED_STEP: Final = "closed"
NEXT_STEPS: Final[tuple[NextStep, ...]] = (
    WAIT_PEER, CLAIM_LOCK, WAIT_TURN, COMPOSE_TURN, RELEASE_LOCK, CLOSE, CLAIM_TIMEOUT, CLOSE_TIMEOUT, CLOSED_STEP,
)


class ErrorCode:
    """Every error code the service, the CLI and the providers answer with (section 2)."""

    # the protocol's own
    TARGET_NOT_ABSOLUTE: Final = "TARGET_NOT_ABSOLUTE"
    TARGET_NOT_MARKDOWN: Final = "TARGET_NOT_MARKDOWN"
    TARGET_UNREADABLE: Final = "TARGET_UNREADABLE"
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
    NOT_YOUR_TURN: Final = "NOT_YOUR_TURN"
    LOCK_TIMEOUT: Final = "LOCK_TIMEOUT"
    INTERRUPTED: Final = "INTERRUPTED"
    SKILL_EXISTS: Final = "SKILL_EXISTS"
    SKILL_WRITE_FAILED: Final = "SKILL_WRITE_FAILED"
    STORAGE_FAILED: Final = "STORAGE_FAILED"
    FILESYSTEM_UNSUPPORTED: Final = "FILESYSTEM_UNSUPPORTED"
    SIGNING_FAILED: Final = "SIGNING_FAILED"
    TURN_DEADLINE_PASSED: Final = "TURN_DEADLINE_PASSED"
    # model providers (duel join)
    PROVIDER_NO_CREDENTIALS: Final = "PROVIDER_NO_CREDENTIALS"
    PROVIDER_AUTH: Final = "PROVIDER_AUTH"
    PROVIDER_UNAVAILABLE: Final = "PROVIDER_UNAVAILABLE"
    PROVIDER_REJECTED: Final = "PROVIDER_REJECTED"
    PROVIDER_MODEL_NOT_FOUND: Final = "PROVIDER_MODEL_NOT_FOUND"
    PROVIDER_BAD_RESPONSE: Final = "PROVIDER_BAD_RESPONSE"
    HUMAN_ABORTED: Final = "HUMAN_ABORTED"
    SCRIPT_EXHAUSTED: Final = "SCRIPT_EXHAUSTED"


class RuleCode:
    """The turn rules' violation codes (section 7)."""

    UNSAFE_STRUCTURE: Final = "UNSAFE_STRUCTURE"
    HEADING: Final = "HEADING"
    STANCE: Final = "STANCE"
    SECTION_MISSING: Final = "SECTION_MISSING"
    SECTION_ORDER: Final = "SECTION_ORDER"
    SECTION_EMPTY: Final = "SECTION_EMPTY"
    COUNTERPOINT_INCOMPLETE: Final = "COUNTERPOINT_INCOMPLETE"
    ADDRESSES_UNKNOWN: Final = "ADDRESSES_UNKNOWN"
    SUPPORT_KIND: Final = "SUPPORT_KIND"
    SOURCE_REF_NOT_FOUND: Final = "SOURCE_REF_NOT_FOUND"
    TURN_REF_NOT_FOUND: Final = "TURN_REF_NOT_FOUND"
    NOVELTY: Final = "NOVELTY"
    UNRESOLVED_TAG: Final = "UNRESOLVED_TAG"
    STANCE_REVISION: Final = "STANCE_REVISION"
    CONSENSUS_BLOCKED: Final = "CONSENSUS_BLOCKED"
    UNGROUNDED: Final = "UNGROUNDED"
    RAW_HTML: Final = "RAW_HTML"


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
    # signed turns (only SIGNATURE_INVALID without --allowed-signers)
    SIGNATURE_MISSING: Final = "SIGNATURE_MISSING"
    SIGNATURE_INVALID: Final = "SIGNATURE_INVALID"
    SIGNATURE_UNTRUSTED: Final = "SIGNATURE_UNTRUSTED"
    SIGNER_CHANGED: Final = "SIGNER_CHANGED"
