"""Where the lock service meets the record: tamper checks, the append and the close.

Called by :class:`~rp1_duel.coordination.service.DuelService` inside the duel's
critical section. The artifact on disk is compared with what the state recorded
(docs/protocol.md section 6), the turn is validated in the context the one history
gives (:mod:`rp1_duel.record.history`), and the outcome is computed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from ..audience import FinalThought, Question, admission, final_thought_refusal
from ..clock import iso
from ..errors import DuelError, invalid_argument
from ..printable import printable
from ..record import (
    EVIDENCE_CHARS,
    MAX_ARTIFACT_BYTES,
    RULED,
    Claimant,
    Conclusion,
    FrontMatterError,
    History,
    RevisionEnding,
    Ruling,
    TurnBlock,
    artifact,
    chain_problems,
    chained,
    citable_names,
    patch_path,
    revision_ending,
    ruled_items,
    signatures,
    turn_citations,
    where_of,
)
from ..turns import (
    SourceUnreadable,
    TurnReport,
    find_raw_html,
    normalize_turn_text,
    parse_turn,
    turn_invalid,
    validate_turn,
)
from ..vocabulary import ACTIVE, CLOSE, CLOSED, INVALIDATED, WRAPPERS, ErrorCode
from . import policy
from ._artifact_writer import front_matter_of, write_artifact
from ._closing_label import closing_label
from ._state import Commitment, DuelState, Lease, Participant, SealRecord, TurnRecord
from ._store import Transaction
from .events import (
    CandidateConvergence,
    CitationVerdicts,
    DuelClosed,
    DuelSealed,
    FinalThoughtsAdded,
    LockReleased,
    OpeningCommitted,
    QuestionAsked,
    RecordInvalidated,
    RulingWritten,
    SourceChanged,
    TurnAppended,
    TurnRejected,
)

SUMMARY_MAX_BYTES = 64 * 1024


@dataclass(kw_only=True, frozen=True)
class RecordCheck:
    """What :func:`check_record` found: the verified turns, the artifact's text, and any problem with its code."""

    blocks: list[TurnBlock]  # the recorded turns, verified
    text: str  # the artifact as found
    problem: str | None  # why the record can no longer be trusted
    code: str = ErrorCode.ARTIFACT_TAMPERED


# Front matter fields that say which duel this is: changing them is tampering.
_IDENTITY_FIELDS = ("duel_id", "topic", "topic_slug", "source_sha256", "created_at")


def check_record(tx: Transaction) -> RecordCheck:
    """Compare the artifact on disk with what the state recorded (section 6)."""
    state = tx.state
    path = tx.store.artifact_path(state)
    try:
        text = artifact.decode_artifact(tx.store.read_artifact(state, MAX_ARTIFACT_BYTES), strict=True)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return RecordCheck(blocks=[], text="", problem=f"artifact {path.name} is unreadable ({exc.__class__.__name__})")
    parsed = artifact.parse(text)
    if parsed.problems:
        return RecordCheck(blocks=[], text=text, problem=f"turn markers damaged: {parsed.problems[0]}")
    problem = _front_matter_problem(parsed.front_matter, state, tx.store.source_path_shown(state))
    recorded = parsed.blocks[: len(state.turns)]
    if problem is None and len(recorded) < len(state.turns):
        problem = f"turn {state.schedule.number_after(len(recorded))} is missing"
    if problem is None:
        # The chain must hold, and every hash must be the one the state accepted: a
        # consistent chain of edited turns with recomputed hashes is still an edit.
        broken = next(chain_problems(recorded, first=state.schedule.first), None)
        edited = next((t for t, b in zip(state.turns, recorded, strict=True) if b.sha256 != t.sha256), None)
        if broken is not None or edited is not None:
            number = edited.n if edited is not None else broken.block.n if broken else 0
            problem = f"turn {number} was changed after it was accepted"
    if problem is None:
        problem = _rulings_problem(parsed.rulings, state)
    if problem is None and not tx.store.source_exists(state):
        return RecordCheck(
            blocks=recorded,
            text=text,
            problem=f"source {state.source_path} no longer exists",
            code=ErrorCode.TARGET_UNREADABLE,
        )
    # Blocks past the recorded ones are a dead writer's leftovers: the state never
    # accepted them, and the next write drops them.
    return RecordCheck(blocks=recorded, text=text, problem=problem)


def _rulings_problem(found: Sequence[artifact.RulingBlock], state: DuelState) -> str | None:
    """Each ruling the state wrote must be in the record as written: the service's words are tamper-checked as turns are."""
    for ruling, sha, prev in chained(state.rulings):
        block = found[ruling.r - 1] if ruling.r <= len(found) else None
        if block is None:
            return f"ruling {ruling.r} is missing"
        if (block.r, block.sha256, block.prev, block.actual_sha256) != (ruling.r, sha, prev, sha):
            return f"ruling {ruling.r} was changed after it was written"
    return None


def _front_matter_problem(raw: str | None, state: DuelState, source_path: str) -> str | None:
    """Only identity fields count: other header edits are overwritten by the next write."""
    if raw is None:
        return "front matter is missing"
    try:
        meta = artifact.front_matter_mapping(raw)
    except FrontMatterError:
        return "front matter is not valid YAML"
    expected = front_matter_of(state, source_path)
    for name in _IDENTITY_FIELDS:
        if str(meta.get(name)) != str(getattr(expected, name)):
            return f"front matter field {name} was changed"
    return None


def _mark_invalid(tx: Transaction, problem: str) -> None:
    if tx.state.invalid_reason is None:
        tx.state.invalid_reason = problem
        tx.emit(RecordInvalidated(problem), by=None)


def _history(tx: Transaction, blocks: list[TurnBlock]) -> History | str:
    """The duel's history as the state vouches for it, or why the source cannot be read."""
    state = tx.state
    try:
        source = tx.store.read_source(state)
    except SourceUnreadable as exc:
        return f"source {state.source_path} is unreadable ({exc.reason})"
    recorded = tx.store.source_path_shown(state)
    history = History(
        source=source,
        source_names=citable_names(recorded),
        schedule=state.schedule,
        questions=tuple(state.questions),
        rulings=tuple(state.rulings),
    )
    history.replay(blocks)
    return history


def append_turn(
    tx: Transaction,
    *,
    me: Participant,
    lease: Lease,
    turn: str | bytes,
    signing_key: str | os.PathLike[str] | None = None,
    stripped: Sequence[str] = (),
) -> TurnRecord:
    """Validate ``turn`` as ``me``'s next one and write it to the record, signed with ``signing_key`` if given.

    Raises the refusal (``NOT_YOUR_TURN``, ``ARTIFACT_TAMPERED``…) or ``TURN_INVALID`` with the
    violations; returns what the state recorded of the turn.
    """
    if any(kind not in WRAPPERS for kind in stripped):
        raise invalid_argument(f"stripped names only {', '.join(WRAPPERS)}")
    state = tx.state
    refusal = policy.refuse_append(state, me, lease)
    if refusal:
        raise refusal
    history = _trusted_history(tx)
    number = history.next_number
    report = validate_turn(turn, history.context_for(_claimant(me)))
    # The report's text is the turn already decoded and normalised: hashed as written.
    block = artifact.turn_block(number, report.turn.text, history.head)
    if state.schedule.sealed(number):
        _check_reveal(tx, me, number, block.sha256)  # before the rules: another text ends the duel, valid or not
    _refuse_invalid(tx, me, number, report)
    signature = None
    if signing_key is not None:  # before anything changes: a refusal here leaves the duel as it was
        message = signatures.turn_message(
            state.id,
            source_sha256=state.source_sha256,
            n=number,
            seat=me.seat,
            prev=block.prev,
            sha256=block.sha256,
            signer=me.signer,
        )
        signature = signatures.sign(message, signing_key)
        refusal = _refuse_signer(state, me.seat, signatures.signer_key(signature))
        if refusal:
            raise refusal
    parsed = report.turn
    record = TurnRecord(
        n=number,
        participant_id=me.id,
        seat=me.seat,
        stance=parsed.stance or "",
        has_blocking=parsed.has_blocking,
        sha256=block.sha256,
        appended_at=tx.now.wall,
        signature=signature,
    )
    state.turns.append(record)
    state.turn_started_mono = tx.now.mono
    history.accept(block, parsed)
    was_converging = state.candidate_convergence
    evaluation = history.evaluate()
    state.pending_outcome = evaluation.outcome
    state.candidate_convergence = evaluation.candidate_convergence
    write_artifact(tx, history.blocks)
    in_force = history.revision
    revision = in_force if in_force is not None and in_force.edits and not in_force.problems else None
    tx.emit(
        TurnAppended(
            turn_number=number,
            stance=record.stance,
            sha256=record.sha256,
            signed=signature is not None,
            stripped=tuple(stripped),
            revision=revision.id if revision else None,
            revision_lines=revision.counts() if revision else (0, 0),
        ),
        by=me.id,
    )
    if evaluation.candidate_convergence and not was_converging:
        tx.emit(CandidateConvergence(number), by=me.id)
    return record


def commit_opening(tx: Transaction, me: Participant, turn: str | bytes) -> tuple[str, bool]:
    """Commit ``me``'s sealed opening ``turn`` (section 4, "Sealed openings"): checked in the record as it
    stood before the round, and only its hash kept. The hash and whether it was committed already
    (the same text again: nothing changes). Raises the refusal, ``TURN_INVALID`` with the violations,
    or ``OPENING_COMMITTED`` for another text than the one committed."""
    state = tx.state
    number = me.seat  # a seat's opening is turn number seat, with or without a chair
    committed = policy.commitment_of(state, me.seat)
    if committed is not None:  # a retry, or another text: compared as the turn block would hash it
        text = turn.decode("utf-8", errors="replace") if isinstance(turn, bytes) else turn
        if _opening_sha256(number, normalize_turn_text(text)) == committed:
            return committed, True
        raise DuelError(
            ErrorCode.OPENING_COMMITTED,
            f"{policy.seat_name(me.seat)} committed another opening already (sha256 {committed[:12]}…): "
            "a sealed opening cannot change; reveal the one committed",
            {"sha256": committed},
        )
    refusal = policy.refuse_commit(state, me, tx.now)
    if refusal:
        raise refusal
    report = validate_turn(turn, _trusted_history(tx).context_for(_claimant(me), number))
    _refuse_invalid(tx, me, number, report)
    sha256 = _opening_sha256(number, report.turn.text)
    state.commitments.append(Commitment(me.seat, sha256, tx.now.wall))
    if not policy.uncommitted_seats(state):
        state.turn_started_mono = tx.now.mono  # the reveal begins: each opening has a whole turn to be appended
    tx.emit(
        OpeningCommitted(
            seat=me.seat,
            turn_number=number,
            sha256=sha256,
            committed=len(state.commitments),
            seats=state.schedule.seats,
        ),
        by=me.id,
    )
    return sha256, False


def _opening_sha256(number: int, body: str) -> str:
    """The hash turn ``number``'s block will have (a block's hash covers its text alone, not ``prev``)."""
    return artifact.turn_block(number, body, artifact.GENESIS).sha256


def _check_reveal(tx: Transaction, me: Participant, number: int, sha256: str) -> None:
    """A revealed opening must be the one committed: any other text ends the duel INVALIDATED."""
    committed = policy.commitment_of(tx.state, me.seat)
    if committed == sha256:
        return
    who = f"{policy.seat_name(me.seat)} ({me.display_name})"
    problem = (
        f"{who} revealed a sealed opening (turn {number}, sha256 {sha256[:12]}…) that is not the one it committed "
        f"(sha256 {(committed or 'none')[:12]}…)"
    )
    _mark_invalid(tx, problem)
    raise DuelError(ErrorCode.OPENING_MISMATCH, f"{problem}: the duel ends INVALIDATED", {"next_step": CLOSE})


def _trusted_history(tx: Transaction) -> History:
    """The duel's history, once the record on disk is the one the state accepted and the source is readable;
    else the record is marked invalid and the refusal raised."""
    state = tx.state
    check = check_record(tx)
    if check.problem:
        _mark_invalid(tx, check.problem)
    history = _history(tx, check.blocks) if state.invalid_reason is None else None
    if isinstance(history, str):
        _mark_invalid(tx, history)
        check = RecordCheck(blocks=check.blocks, text=check.text, problem=history, code=ErrorCode.TARGET_UNREADABLE)
    broken = policy.refuse_broken_record(state, check.code if check.problem else ErrorCode.ARTIFACT_TAMPERED)
    if broken:
        raise broken
    _notice_source_change(tx)
    # A str or None set invalid_reason above, and refuse_broken_record has just raised for it.
    return cast("History", history)


def _claimant(me: Participant) -> Claimant:
    return Claimant(me.display_name, me.harness, me.model_id)


def _refuse_invalid(tx: Transaction, me: Participant, number: int, report: TurnReport) -> None:
    """``TURN_INVALID`` (its codes logged) for ``me``'s turn ``number`` when it breaks a rule."""
    if not report.ok:
        tx.emit(TurnRejected(number, tuple(sorted({v.code for v in report.violations}))), by=me.id)
        raise turn_invalid(number, report.violations)


def _seat_keys(state: DuelState) -> dict[int, str]:
    """Each seat's signing key (its fingerprint), fixed by the seat's first signed turn."""
    keys: dict[int, str] = {}
    for turn in state.turns:
        key = signatures.signer_key(turn.signature) if turn.signature else None
        if key is not None:
            keys.setdefault(turn.seat, key)
    return keys


def _refuse_signer(state: DuelState, seat: int, key: str | None) -> DuelError | None:
    """``SIGNING_FAILED`` for a key that is not the one ``seat`` signs with, or that another seat signs with:
    one seat, one key; one key, one seat (docs/protocol.md section 6, "Signed turns")."""
    keys = _seat_keys(state)
    if key is None:
        return DuelError(ErrorCode.SIGNING_FAILED, "ssh-keygen wrote a signature that carries no key")
    if keys.get(seat, key) != key:
        return DuelError(
            ErrorCode.SIGNING_FAILED,
            f"{policy.seat_name(seat)} signs with {keys[seat]} since its first signed turn; {key} is another key",
        )
    other = next((taken for taken, used in keys.items() if used == key and taken != seat), None)
    if other is not None:
        holder = policy.seat_name(other)
        return DuelError(ErrorCode.SIGNING_FAILED, f"{key} already signs {holder}'s turns: one key signs one seat")
    return None


def _seal(
    state: DuelState, me: Participant, signing_key: str | os.PathLike[str], *, outcome: str, conclusion: str
) -> SealRecord:
    """``me``'s seal over the ending of ``state``'s duel, closed with ``outcome`` and ``conclusion``;
    raises ``SIGNING_FAILED``."""
    seat = me.seat
    message = signatures.close_message(
        state.id,
        source_sha256=state.source_sha256,
        signer=me.signer,
        seat=seat,
        outcome=outcome,
        turns=len(state.turns),
        last=state.turns[-1].sha256 if state.turns else artifact.GENESIS,
        conclusion=artifact.sha256_text(conclusion),
    )
    signature = signatures.sign(message, signing_key)
    refusal = _refuse_signer(state, seat, signatures.signer_key(signature))
    if refusal:
        raise refusal
    return SealRecord(seat, signature)


def _notice_source_change(tx: Transaction) -> None:
    """Log once per new content that the file on disk is no longer the pinned source: turns are
    still checked against the pinned one, and every seat should know."""
    state, now = tx.state, tx.store.source_on_disk(tx.state)
    if now is None or now in (state.source_sha256, state.source_changed_sha256):
        return
    state.source_changed_sha256 = now
    tx.emit(SourceChanged(now), by=None)


def check_conclusion(reason: str | None, summary: str | None) -> None:
    """The close's reason and summary go into the artifact unhashed: Markdown only, like a turn
    (raw HTML would be read as markup where the record is rendered)."""
    if summary is not None and (
        len(summary.encode("utf-8")) > SUMMARY_MAX_BYTES or "<!-- duel:" in summary or "\x00" in summary
    ):
        raise invalid_argument("the summary must be Markdown under 64 KiB without <!-- duel: markers")
    for label, text in (("the reason", reason), ("the summary", summary)):
        found = find_raw_html(text or "")
        if found:
            raise invalid_argument(
                f"{label} holds raw HTML {found[0].snippet!r}, which would be read as markup "
                "where the artifact is rendered: put it in backticks"
            )


def close_duel(
    tx: Transaction,
    me: Participant,
    lease: Lease,
    *,
    outcome: str,
    reason: str | None,
    summary: str | None,
    signing_key: str | os.PathLike[str] | None = None,
) -> None:
    """End the duel with ``outcome``, writing the conclusion into the artifact (section 8), sealed
    with ``signing_key`` if given; raises the refusal (then nothing changed)."""
    state = tx.state
    check_conclusion(reason, summary)
    check = check_record(tx)
    if check.problem:
        _mark_invalid(tx, check.problem)
    decision = policy.decide_close(state, me, lease, outcome=outcome, reason=reason, now=tx.now)
    if decision.refusal is not None:
        if decision.lease_after == "ordinary":
            lease.for_timeout = False
            tx.wake()
        elif decision.lease_after == "released":
            state.lease = None
            tx.emit(LockReleased(lease.fence), by=me.id)
        raise decision.refusal
    ending = _revision_ending(tx, check, outcome)
    conclusion = Conclusion(
        outcome=outcome,
        closed_at=iso(tx.now.wall),
        candidate_convergence=state.candidate_convergence,
        reason=decision.reason,
        summary=summary,
        revision=ending.rows,
        provisional=closing_label(tx),
    )
    text = artifact.conclusion_text(conclusion)
    # Signed before anything changes: a key that cannot sign leaves the duel open, as it was.
    seal = None if signing_key is None else _seal(state, me, signing_key, outcome=outcome, conclusion=text)
    state.status, state.outcome, state.closed_at, state.reason = CLOSED, outcome, tx.now.wall, decision.reason
    state.lease = None
    state.conclusion_sha256 = artifact.sha256_text(text)
    state.seals += [seal] if seal else []
    turns = artifact.turns_region(check.text) if state.invalid_reason else check.blocks
    for name, patch in ending.files.items():
        tx.store.write_beside(state, name, patch)
    write_artifact(tx, turns, conclusion)
    tx.emit(LockReleased(lease.fence), by=me.id)
    tx.emit(DuelClosed(outcome, state.reason), by=me.id)
    if seal:
        tx.emit(DuelSealed(me.seat), by=me.id)


def abandon_duel(tx: Transaction, reason: str) -> None:
    """Close ``tx``'s open duel ``INVALIDATED`` with ``reason``, whoever holds the floor (section 8,
    "Abandoning a duel"): the turns stay as recorded, no revision is written, a live lease ends."""
    state = tx.state
    check_conclusion(reason, None)
    check = check_record(tx)
    if check.problem:
        _mark_invalid(tx, check.problem)
    state.status, state.outcome, state.closed_at = CLOSED, INVALIDATED, tx.now.wall
    state.reason = "; ".join(r for r in (state.invalid_reason, reason) if r)
    conclusion = Conclusion(
        outcome=INVALIDATED,
        closed_at=iso(tx.now.wall),
        candidate_convergence=state.candidate_convergence,
        reason=state.reason,
        summary=None,
        provisional=closing_label(tx),
    )
    state.conclusion_sha256 = artifact.sha256_text(artifact.conclusion_text(conclusion))
    if state.lease is not None:
        tx.emit(LockReleased(state.lease.fence), by=None)
        state.lease = None
    write_artifact(tx, artifact.turns_region(check.text) if state.invalid_reason else check.blocks, conclusion)
    tx.emit(DuelClosed(INVALIDATED, state.reason), by=None)


def _revision_ending(tx: Transaction, check: RecordCheck, outcome: str) -> RevisionEnding:
    """What the close writes of the document's revision: the agreed one, or each seat's alternative."""
    state = tx.state
    history = None if state.invalid_reason or check.problem else _history(tx, check.blocks)
    if not isinstance(history, History):
        return RevisionEnding()
    names = {p.seat: p.display_name for p in state.participants}
    path = patch_path(tx.store.artifact_path(state), tx.store.source_path_shown(state))
    return revision_ending(history, outcome, duel_id=state.id, names=names, path=path)


def seal_duel(tx: Transaction, me: Participant, signing_key: str | os.PathLike[str]) -> bool:
    """Seal the ending of ``tx``'s closed duel as ``me``'s seat: False if the seat had sealed it
    already. Raises ``INVALID_ARGUMENT`` for an open duel, ``ARTIFACT_TAMPERED`` when the record or
    its conclusion is no longer what the close wrote, ``SIGNING_FAILED`` for a key that cannot sign
    or is not the seat's."""
    state = tx.state
    if state.status == ACTIVE:
        raise invalid_argument(f"duel {state.id} is still open: only a closed duel's ending is sealed")
    if any(seal.seat == me.seat for seal in state.seals):
        return False
    turns, found = _closed_record(tx, "seal")
    text = artifact.conclusion_text(found)
    state.seals.append(_seal(state, me, signing_key, outcome=cast("str", state.outcome), conclusion=text))
    write_artifact(tx, turns, found)
    tx.emit(DuelSealed(me.seat), by=me.id)
    return True


def _closed_record(tx: Transaction, action: str) -> tuple[list[TurnBlock] | str, Conclusion]:
    """A closed duel's turns and conclusion, to write its artifact again; ``ARTIFACT_TAMPERED`` when the
    record or its conclusion is no longer what the close wrote."""
    state = tx.state
    check = check_record(tx)
    written = artifact.parse(check.text).conclusion or ""
    found = artifact.parse_conclusion(written)
    # An invalidated record's turns are broken already: what is written covers the ending the state knows.
    problem = check.problem if state.invalid_reason is None else None
    if (
        found is None
        or artifact.conclusion_text(found) != written
        or artifact.sha256_text(written) != state.conclusion_sha256
    ):
        problem = "its Terminal Conclusion is not the one the close wrote"
    if problem is not None or found is None:
        raise DuelError(ErrorCode.ARTIFACT_TAMPERED, f"cannot {action} duel {state.id}: {problem}")
    return (artifact.turns_region(check.text) if state.invalid_reason else check.blocks), found


# -- rulings (docs/protocol.md section 10, "Rulings") ---------------------------------------------


def rule_on_citations(
    tx: Transaction, me: Participant, turn_number: int, verdicts: CitationVerdicts, *, challenge: int | None = None
) -> list[Ruling]:
    """Write a ruling into the record for each verified, unreliable or fabricated URL citation of accepted turn
    ``turn_number`` that has none yet (a panel's seats each check a turn: the first ruling on a citation stands).
    Returns the rulings written."""
    state = tx.state
    if verdicts.draft is not None or not 1 <= turn_number - state.schedule.first + 1 <= len(state.turns):
        return []
    if state.status == ACTIVE:
        history = _trusted_history(tx)
        turns: list[TurnBlock] | str = history.blocks
        conclusion = None
        block, turn, names = history.block(turn_number), history.turn(turn_number), history.source_names
    else:
        turns, conclusion = _closed_record(tx, "rule on")
        if isinstance(turns, str):
            return []  # an invalidated record: its turns cannot be read back to rule on
        block, names = turns[turn_number - state.schedule.first], citable_names(tx.store.source_path_shown(state))
        turn = parse_turn(block.body, chair=state.schedule.speaker(turn_number) == 0)
    # Only what the turn cites, where it cites it: `duel validate` holds every ruling to it (RULING_MISMATCH).
    ruled = ruled_items(turn, turn_citations(turn_number, block, turn, names))
    done = {(ruling.turn, ruling.where, ruling.url) for ruling in state.rulings}
    written = []
    for citation in verdicts.citations:
        where = where_of(turn, citation.line)
        if (
            citation.verdict not in RULED
            or where is None
            or citation.url is None
            or (where, citation.url) not in ruled
            or (turn_number, where, citation.url) in done
        ):
            continue
        done.add((turn_number, where, citation.url))
        ruling = Ruling(
            r=len(state.rulings) + 1,
            turn=turn_number,
            seat=state.schedule.speaker(turn_number),
            where=where,
            url=citation.url,
            verdict=citation.verdict,
            evidence=_evidence(citation.reason),
            by=f"{policy.seat_name(me.seat)}'s " + (f"challenge in turn {challenge}" if challenge else "verification"),
            before=policy.next_turn_number(state),
        )
        state.rulings.append(ruling)
        written.append(ruling)
    disqualified = next((r for r in written if r.redacts and state.schedule.on_fabrication == "invalidate"), None)
    if disqualified is not None and state.status == ACTIVE:
        _mark_invalid(
            tx,
            f"ruling {disqualified.r} found the source of turn {disqualified.turn}, {disqualified.where} fabricated "
            f"({disqualified.url}): a disqualification (--on-fabrication invalidate)",
        )
    if written:
        write_artifact(tx, turns, conclusion)
        for ruling in written:
            tx.emit(
                RulingWritten(
                    r=ruling.r, turn_number=ruling.turn, where=ruling.where, verdict=ruling.verdict, url=ruling.url
                ),
                by=me.id,
            )
    return written


def _evidence(reason: str) -> str:
    """A verdict's reason as a ruling's one line: printable, bounded, and no markup (a reason may quote a page:
    its angle brackets are written as entities, so no tag or marker of it is rendered where the record is)."""
    line = printable(" ".join(reason.split()))[:EVIDENCE_CHARS].replace("<", "&lt;").replace(">", "&gt;")
    return line or "no reason given"


# -- the audience (docs/protocol.md section 4, "The audience") --------------------------------


def ask_question(tx: Transaction, *, to_seat: int, text: str, by: str) -> Question:
    """Admit a question to ``to_seat`` and write it into the artifact's front matter; raises the refusal
    (``QUESTIONS_FULL``, ``QUESTION_REFUSED``, ``DUEL_CLOSED``…)."""
    state = tx.state
    if policy.must_close(state):
        raise DuelError(ErrorCode.QUESTION_REFUSED, "the duel has reached its outcome: no turn is left to answer in")
    lease = policy.live_lease(state, tx.now)
    holder = state.participant(lease.owner) if lease is not None else None
    admitted = admission(
        state.schedule,
        turns_written=len(state.turns),
        asked=state.questions,
        to_seat=to_seat,
        floor_held_by=holder.seat if holder is not None else None,
    )
    if admitted.refusal is not None or admitted.due_turn is None:
        code, message = admitted.refusal or (ErrorCode.QUESTION_REFUSED, "no turn is due")
        raise DuelError(code, message, {"round": admitted.round})
    history = _trusted_history(tx)
    question = Question(
        id=len(state.questions) + 1,
        round=admitted.round,
        to_seat=to_seat,
        by=by,
        text=text,
        due_turn=admitted.due_turn,
        asked_at=iso(tx.now.wall) or "",
    )
    state.questions.append(question)
    write_artifact(tx, history.blocks)
    tx.emit(
        QuestionAsked(id=question.id, to_seat=to_seat, round=question.round, due_turn=question.due_turn, by=by), by=None
    )
    return question


def add_final_thought(tx: Transaction, *, by: str, text: str) -> FinalThought:
    """Record an audience member's final thoughts on a closed duel, in the artifact's front matter: shown by
    the report, never changing the outcome (the seals cover the ending, not the front matter)."""
    state = tx.state
    if state.status == ACTIVE:
        raise DuelError(ErrorCode.QUESTION_REFUSED, "final thoughts come once the duel is closed")
    refusal = final_thought_refusal(state.final_thoughts, by)
    if refusal is not None:
        raise DuelError(*refusal)
    turns, conclusion = _closed_record(tx, "add final thoughts to")
    thought = FinalThought(by=by, text=text, at=iso(tx.now.wall) or "")
    front = front_matter_of(state, tx.store.source_path_shown(state))
    if len(front._replace(final_thoughts=(*front.final_thoughts, thought)).to_yaml()) > artifact.MAX_FRONT_MATTER_CHARS:
        # The caps keep final thoughts well inside the limit; this keeps a valid record valid whatever else the
        # header holds (a large panel's questions).
        raise DuelError(ErrorCode.QUESTIONS_FULL, "the record's header has no room for more final thoughts")
    state.final_thoughts.append(thought)
    write_artifact(tx, turns, conclusion)
    tx.emit(FinalThoughtsAdded(by), by=None)
    return thought
