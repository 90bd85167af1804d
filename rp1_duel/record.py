"""Writing the debate record: a validated turn appended under a lease, and the close.

Called by :class:`rp1_duel.service.DuelService` inside the duel's critical section;
this is where the artifact is checked against the state (tamper detection), a turn
is validated against the rules and the source, and the outcome is computed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import frontmatter

from . import artifact
from . import lease as rules
from .clock import iso
from .errors import DuelError, invalid_argument
from .outcomes import TurnSummary, evaluate
from .rules import NoveltyIndex, TurnContext, validate_turn
from .source import SourceDocument
from .state import CLOSED, DuelState, Lease, Participant, TurnRecord
from .turn import normalize_turn_text, parse_turn

if TYPE_CHECKING:
    from .service import Transaction

SUMMARY_MAX_BYTES = 64 * 1024
# Front matter fields that say which duel this is: changing them is tampering.
IDENTITY_FIELDS = ("duel_id", "topic", "topic_slug", "source_sha256", "created_at")


@dataclass(frozen=True)
class RecordCheck:
    blocks: list[artifact.TurnBlock]  # the recorded turns, verified
    text: str  # the artifact as found
    problem: str | None  # why the record can no longer be trusted
    code: str = "ARTIFACT_TAMPERED"


def check_record(tx: "Transaction") -> RecordCheck:
    """Compare the artifact on disk with what the state recorded (PROTOCOL.md section 6)."""
    state = tx.state
    path = tx.debate.artifact_path(state)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return RecordCheck([], "", f"artifact {path.name} is unreadable ({exc.__class__.__name__})")
    parsed = artifact.parse(text)
    if parsed.problems:
        return RecordCheck([], text, f"turn markers damaged: {parsed.problems[0]}")
    problem = _front_matter_problem(parsed.front_matter, state, path)
    prev = artifact.GENESIS
    for i, recorded in enumerate(state.turns):
        block = parsed.blocks[i] if i < len(parsed.blocks) else None
        if block is None:
            problem = problem or f"turn {recorded.n} is missing"
            break
        if (block.n, block.sha256, block.prev) != (recorded.n, recorded.sha256, prev) or block.actual_sha256 != recorded.sha256:
            problem = problem or f"turn {recorded.n} was changed after it was accepted"
            break
        prev = recorded.sha256
    if problem is None and not os.path.exists(state.source_path):
        return RecordCheck(parsed.blocks[: len(state.turns)], text, f"source {state.source_path} no longer exists",
                           "TARGET_UNREADABLE")
    # Blocks past the recorded ones are a dead writer's leftovers: the state never
    # accepted them, and the next write drops them.
    return RecordCheck(parsed.blocks[: len(state.turns)], text, problem)


def _front_matter_problem(raw: str | None, state: DuelState, path: os.PathLike[str]) -> str | None:
    if raw is None:
        return "front matter is missing"
    try:
        meta = frontmatter.loads(f"---\n{raw}---\n").metadata
    except Exception:  # any YAML error means the header was edited by hand
        return "front matter is not valid YAML"
    expected = {
        "duel_id": state.id,
        "topic": state.topic,
        "topic_slug": state.topic_slug,
        "source_sha256": state.source_sha256,
        "created_at": iso(state.created_at),
    }
    for name in IDENTITY_FIELDS:
        if str(meta.get(name)) != str(expected[name]):
            return f"front matter field {name} was changed"
    return None


def _mark_invalid(tx: "Transaction", problem: str) -> None:
    if tx.state.invalid_reason is None:
        tx.state.invalid_reason = problem
        tx.emit("record_invalidated", None, reason=problem)


def append_turn(tx: "Transaction", me: Participant, lease: Lease, turn: str | bytes) -> TurnRecord:
    state = tx.state
    if lease.for_timeout:
        raise DuelError("LEASE_NOT_HELD", "a timeout lease only allows release-lock --close --outcome TIMEOUT")
    if state.pending_outcome is not None:
        raise DuelError(
            "DUEL_CLOSED",
            f"the duel has reached {state.pending_outcome}: close it with release-lock --close --outcome {state.pending_outcome}",
            {"outcome": state.pending_outcome, "next_step": rules.CLOSE},
        )
    if rules.next_turn_seat(state) != me.seat:
        raise DuelError("NOT_YOUR_TURN", f"turn {len(state.turns) + 1} belongs to seat {rules.next_turn_seat(state)}",
                        {"next_step": rules.RELEASE_LOCK})
    check = check_record(tx)
    if check.problem:
        _mark_invalid(tx, check.problem)
    if state.invalid_reason:
        raise DuelError(
            check.code if check.problem else "ARTIFACT_TAMPERED",
            f"{state.invalid_reason}: the duel can only be closed INVALIDATED",
            {"reason": state.invalid_reason, "next_step": rules.CLOSE},
        )
    number = len(state.turns) + 1
    text = turn.decode("utf-8", "replace") if isinstance(turn, bytes) else turn
    report = validate_turn(turn, _context(tx, me, check.blocks, number))
    if not report.ok:
        violations = [v.to_dict() for v in report.violations]
        tx.emit("turn_rejected", me.id, wake=False, turn_number=number, codes=sorted({v["code"] for v in violations}))
        raise DuelError(
            "TURN_INVALID",
            f"turn {number} breaks {len(violations)} rule(s): " + ", ".join(sorted({v['code'] for v in violations})),
            {"turn_number": number, "violations": violations},
        )
    prev = check.blocks[-1].sha256 if check.blocks else artifact.GENESIS
    block = artifact.turn_block(number, normalize_turn_text(text), prev)
    parsed = report.turn
    record = TurnRecord(number, me.id, me.seat, parsed.stance, parsed.has_blocking, block.sha256, tx.now)
    state.turns.append(record)
    state.turn_started_at = tx.now
    was_converging = state.candidate_convergence
    evaluation = evaluate([TurnSummary(t.seat, t.stance, t.has_blocking) for t in state.turns], state.max_turns)
    state.pending_outcome = evaluation.outcome
    state.candidate_convergence = evaluation.candidate_convergence
    tx.write_artifact([*check.blocks, block])
    tx.emit("turn_appended", me.id, turn_number=number, stance=record.stance, sha256=record.sha256)
    if evaluation.candidate_convergence and not was_converging:
        tx.emit("candidate_convergence", me.id, turn_number=number)
    return record


def _context(tx: "Transaction", me: Participant, blocks: list[artifact.TurnBlock], number: int) -> TurnContext:
    state = tx.state
    return turn_context(
        SourceDocument.from_path(state.source_path),
        source_names(state.source_path, str(tx.debate.root)),
        blocks,
        (me.display_name, me.harness, me.model_id),
        number,
    )


def turn_context(
    source: SourceDocument,
    names: tuple[str, ...],
    blocks: list[artifact.TurnBlock],
    identity: tuple[str, str, str],
    number: int,
) -> TurnContext:
    """The context turn ``number`` is validated in, by the service and by a participant alike."""
    prior = [parse_turn(b.body) for b in blocks]
    novelty = NoveltyIndex()
    for parsed in prior:
        novelty.add_turn(parsed)
    # Seats alternate, so this participant's previous turn is two turns back.
    mine = prior[number - 3] if number > 2 and len(prior) >= number - 2 else None
    name, harness, model_id = identity
    return TurnContext(
        turn_number=number,
        participant_name=name,
        harness=harness,
        model_id=model_id,
        source=source,
        source_names=names,
        prior_turns=prior,
        previous_stance=mine.stance if mine else None,
        novelty=novelty,
    )


def source_names(source_path: str, artifact_dir: str) -> tuple[str, ...]:
    """The names a turn may cite the source by: file name, absolute and artifact-relative path."""
    names = (os.path.basename(source_path), source_path, os.path.relpath(source_path, artifact_dir))
    return tuple(dict.fromkeys(names))


def close_duel(
    tx: "Transaction", me: Participant, lease: Lease, outcome: str, reason: str | None, summary: str | None
) -> None:
    state = tx.state
    if summary is not None:
        if len(summary.encode("utf-8")) > SUMMARY_MAX_BYTES or "<!-- duel:" in summary or "\x00" in summary:
            raise invalid_argument("the summary must be Markdown under 64 KiB without <!-- duel: markers")
    check = check_record(tx)
    if check.problem:
        _mark_invalid(tx, check.problem)
    if lease.for_timeout and outcome != "TIMEOUT":
        raise DuelError("OUTCOME_MISMATCH", "a timeout lease only allows --outcome TIMEOUT")
    if state.invalid_reason and outcome != "INVALIDATED":
        raise DuelError("ARTIFACT_TAMPERED", f"{state.invalid_reason}: the duel can only be closed INVALIDATED",
                        {"reason": state.invalid_reason, "next_step": rules.CLOSE})
    if outcome == "TIMEOUT":
        _check_timeout(tx, me, lease)
    elif outcome != state.pending_outcome and not (outcome == "INVALIDATED" and state.invalid_reason):
        if outcome != "INVALIDATED" or state.pending_outcome:
            raise DuelError(
                "OUTCOME_MISMATCH",
                f"the turns imply {state.pending_outcome or 'no outcome yet'}, not {outcome}",
                {"expected": state.pending_outcome},
            )
    if outcome == "INVALIDATED" and not (reason and reason.strip()) and not state.invalid_reason:
        raise invalid_argument("closing INVALIDATED needs --reason")
    state.status = CLOSED
    state.outcome = outcome
    state.closed_at = tx.now
    state.reason = "; ".join(r for r in (state.invalid_reason, reason and reason.strip()) if r) or None
    state.lease = None
    blocks = artifact.turns_region(check.text) if state.invalid_reason else check.blocks
    tx.write_artifact(blocks, summary)
    tx.emit("lock_released", me.id, fence=lease.fence)
    tx.emit("duel_closed", me.id, outcome=outcome, reason=state.reason)


def _check_timeout(tx: "Transaction", me: Participant, lease: Lease) -> None:
    state = tx.state
    if lease.for_timeout and rules.timeout_still_valid(state, me, lease):
        return
    if lease.for_timeout:
        # The peer showed up: the lease becomes an ordinary one if the turn is ours.
        lease.for_timeout = False
        if rules.next_turn_seat(state) != me.seat:
            state.lease = None
            tx.emit("lock_released", me.id, fence=lease.fence)
        else:
            tx.changed = True
            tx.dirty = True
    raise DuelError(
        "TIMEOUT_REJECTED",
        "no timeout is due: the peer is here",
        {"next_step": rules.next_step(state, me, tx.now)},
    )
