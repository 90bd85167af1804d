"""Who wrote a record and who ended it: signed turns and sealed endings, as ``duel validate`` checks them.

The rules (docs/protocol.md section 6, "Signed turns" and "Sealed endings"):

- every signature verifies for its own turn (``SIGNATURE_INVALID``); with an allowed signers
  file, every turn is signed (``SIGNATURE_MISSING``) by a key the file names (``SIGNATURE_UNTRUSTED``);
- one seat, one key: a seat's turns are all signed by the key of its first signed turn, and with
  the file by the principal the seat declared at its join, if it declared one (``SIGNER_CHANGED``);
  one key, one principal of the file, one declared signer: one seat (``SIGNER_SHARED``);
- a seal verifies for the ending as the file stands (outcome, turn count, last turn, conclusion), by its
  own seat's key (``SEAL_INVALID``); with an allowed signers file a closed duel carries one (``SEAL_MISSING``).

Which key made a signature is read from the signature itself; whether it verifies takes
ssh-keygen (:mod:`rp1_duel.record.signatures`), one to three runs each.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from ..schedule import CHAIR_SEAT
from ..settings import SETTINGS
from ..vocabulary import CLOSED, RecordCode
from . import signatures
from .artifact import GENESIS, FrontMatter, ParsedArtifact, Seal, TurnBlock, sha256_text
from .problem import Problem

# Each check runs ssh-keygen: a hostile file of thousands of tiny signed turns must not cost minutes.
MAX_CHECKED_SIGNATURES = SETTINGS["max_turns"].high

_WHY_A_SEAL_FAILS = "turns were cut off or added, or the outcome or the conclusion changed after it was sealed"


@dataclass(frozen=True)
class SignatureEntry:
    """What the check of one turn's signature found (a status of :mod:`rp1_duel.record.signatures`)."""

    turn: int
    status: str
    signer: str | None = None  # the allowed signers' principal(s), when verified

    def to_dict(self) -> dict[str, Any]:
        """As ``duel validate --json`` writes it: the fields that are set."""
        found = {"turn": self.turn, "status": self.status, "signer": self.signer}
        return {k: v for k, v in found.items() if v is not None}


@dataclass(frozen=True)
class SealEntry:
    """What the check of one seat's seal over the ending found."""

    seat: int
    status: str
    signer: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """As ``duel validate --json`` writes it: the fields that are set."""
        found = {"seat": self.seat, "status": self.status, "signer": self.signer}
        return {k: v for k, v in found.items() if v is not None}


@dataclass(kw_only=True)
class Authorship:
    """What :func:`check_authorship` found: an entry per turn and per seal, and the problems and notes."""

    signatures: list[SignatureEntry] = field(default_factory=list)
    seals: list[SealEntry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(kw_only=True, frozen=True)
class _Signer:
    """The key a seat signs with, the principals the allowed signers file gives it, and its first signed turn."""

    key: str
    principals: frozenset[str]
    turn: int
    line: int


def check_authorship(
    front: FrontMatter, parsed: ParsedArtifact, allowed_signers: str | os.PathLike[str] | None
) -> Authorship:
    """Check every turn's signature and every seal of ``parsed``; with ``allowed_signers``, who signed too."""
    found = Authorship()
    signers = _check_turns(front, parsed.blocks, allowed_signers, found)
    _check_shared(front, signers, found)
    _check_seals(front=front, parsed=parsed, signers=signers, allowed_signers=allowed_signers, found=found)
    return found


def _holder(seat: int) -> str:
    return "the chair" if seat == CHAIR_SEAT else f"seat {seat}"


def _check_turns(
    front: FrontMatter,
    blocks: list[TurnBlock],
    allowed_signers: str | os.PathLike[str] | None,
    found: Authorship,
) -> dict[int, _Signer]:
    """Each turn's signature; the signer each seat is held to, fixed by its first signed turn."""
    authorship = allowed_signers is not None
    declared = _declared(front)
    signers: dict[int, _Signer] = {}
    for index, block in enumerate(blocks):
        verdict = _verdict_at(index, front, block, allowed_signers)
        found.signatures.append(SignatureEntry(block.n, verdict.status, verdict.signer))
        problem = _signature_problem(block, verdict, authorship=authorship)
        if problem is not None:
            found.problems.append(problem)
            continue
        key = signatures.signer_key(block.signature) if block.signature else None
        if key is None or verdict.status == signatures.UNCHECKED:
            _note_unchecked(verdict, found)
            continue
        seat = front.schedule.speaker(block.n)
        principals = frozenset(verdict.signer.split(",")) if verdict.signer else frozenset()
        first = signers.setdefault(seat, _Signer(key=key, principals=principals, turn=block.n, line=block.line))
        if principals and declared.get(seat, next(iter(principals))) not in principals:
            found.problems.append(
                Problem(
                    code=RecordCode.SIGNER_CHANGED,
                    message=f"turn {block.n} is signed by {_who(key, principals)}, "
                    f"but {_holder(seat)} declared {declared[seat]} as its signer at its join",
                    line=block.line,
                    turn=block.n,
                )
            )
        elif first.key != key:
            found.problems.append(
                Problem(
                    code=RecordCode.SIGNER_CHANGED,
                    message=f"turn {block.n} is signed by {_who(key, principals)}, "
                    f"but {_holder(seat)}'s turn {first.turn} by {_who(first.key, first.principals)}: "
                    "a seat signs with one key",
                    line=block.line,
                    turn=block.n,
                )
            )
    if any(entry.status != signatures.UNSIGNED for entry in found.signatures) and not authorship:
        found.notes.append(
            "signatures were checked for integrity only, not for who signed: pass --allowed-signers to check authorship"
        )
    return signers


def _declared(front: FrontMatter) -> dict[int, str]:
    """Seat -> the signer its participant declared at its join, when it declared one."""
    return {entry.seat: entry.signer for entry in front.participants if entry.signer is not None}


def _who(key: str, principals: frozenset[str]) -> str:
    return f"{','.join(sorted(principals))} ({key})" if principals else key


def _note_unchecked(verdict: signatures.Verdict, found: Authorship) -> None:
    note = f"signatures were not checked: {verdict.reason}"
    if verdict.status == signatures.UNCHECKED and note not in found.notes:
        found.notes.append(note)


def _check_shared(front: FrontMatter, signers: dict[int, _Signer], found: Authorship) -> None:
    """One key, one principal of the allowed signers file, one declared signer: one seat only."""
    schedule, declared = front.schedule, _declared(front)
    for seat_a, seat_b in combinations(sorted(declared), 2):
        if declared[seat_a] == declared[seat_b]:
            found.problems.append(
                Problem(
                    code=RecordCode.SIGNER_SHARED,
                    message=f"{_holder(seat_a)} and {_holder(seat_b)} both declared {declared[seat_a]} as their signer",
                    line=1,
                )
            )
    for (seat_a, a), (seat_b, b) in combinations(sorted(signers.items()), 2):
        shared = sorted(a.principals & b.principals)
        if a.key != b.key and not shared:
            continue
        who = ",".join(shared) if shared else a.key
        later = b if b.turn > a.turn else a
        found.problems.append(
            Problem(
                code=RecordCode.SIGNER_SHARED,
                message=f"{_holder(seat_a)} and {_holder(seat_b)} are both signed by {who}: "
                f"one signer holds one seat of the {schedule.seats + schedule.chair}",
                line=later.line,
                turn=later.turn,
            )
        )


def _verdict_at(
    index: int, front: FrontMatter, block: TurnBlock, allowed_signers: str | os.PathLike[str] | None
) -> signatures.Verdict:
    """The check of the block at ``index``, unless it lies past the turns any duel has."""
    if block.signature is None:
        return signatures.Verdict(signatures.UNSIGNED)
    if index >= MAX_CHECKED_SIGNATURES:
        return signatures.Verdict(
            signatures.UNCHECKED,
            reason=f"only the first {MAX_CHECKED_SIGNATURES} turns are checked: no duel has more",
        )
    seat = front.schedule.speaker(block.n)
    signer = _declared(front).get(seat)
    try:
        message = signatures.turn_message(
            front.duel_id,
            source_sha256=front.source_sha256,
            n=block.n,
            seat=seat,
            prev=block.prev,
            sha256=block.sha256,
            signer=signer,
        )
    except ValueError as exc:  # a front matter no service writes: nothing it could have signed
        return signatures.Verdict(signatures.INVALID, reason=f"the signed message cannot be rebuilt ({exc})")
    return signatures.check(message, block.signature, allowed_signers=allowed_signers, principal=signer)


def _signature_problem(block: TurnBlock, verdict: signatures.Verdict, *, authorship: bool) -> Problem | None:
    """The problem a signature's own verdict makes, if any (a changed signer is another check)."""
    if verdict.status == signatures.UNSIGNED and authorship:
        return Problem(
            code=RecordCode.SIGNATURE_MISSING, message=f"turn {block.n} is not signed", line=block.line, turn=block.n
        )
    if verdict.status == signatures.INVALID:
        return Problem(
            code=RecordCode.SIGNATURE_INVALID,
            message=f"turn {block.n}: {verdict.reason} (changed after it was signed, or signed for another duel or place)",
            line=block.line,
            turn=block.n,
        )
    if verdict.status == signatures.UNTRUSTED:
        return Problem(
            code=RecordCode.SIGNATURE_UNTRUSTED,
            message=f"turn {block.n}: signed, but {verdict.reason}",
            line=block.line,
            turn=block.n,
        )
    if verdict.status == signatures.UNCHECKED and authorship:
        return Problem(
            code=RecordCode.SIGNATURE_INVALID,
            message=f"turn {block.n}: the signature could not be checked: {verdict.reason}",
            line=block.line,
            turn=block.n,
        )
    return None


def _check_seals(
    front: FrontMatter,
    *,
    parsed: ParsedArtifact,
    signers: dict[int, _Signer],
    allowed_signers: str | os.PathLike[str] | None,
    found: Authorship,
) -> None:
    """Every seal verifies for this ending, by its own seat's key; with the file, a closed duel has one."""
    authorship, schedule, add = allowed_signers is not None, front.schedule, found.problems.append
    seats = set(range(CHAIR_SEAT if schedule.chair else 1, schedule.seats + 1))
    if parsed.seals and front.status != CLOSED:
        add(
            Problem(
                code=RecordCode.SEAL_INVALID, message="an open duel holds a seal: only a closed duel's ending is sealed"
            )
        )
        return
    sealed: set[int] = set()
    for seal in parsed.seals[: len(seats) + 1]:  # one a seat; past that, a hostile file must not cost a run each
        if seal.seat not in seats or seal.seat in sealed:
            add(
                Problem(
                    code=RecordCode.SEAL_INVALID,
                    message=f"a seal for {_holder(seal.seat)}, which has one already or no seat",
                )
            )
            continue
        verdict = _seal_verdict(front, parsed, seal, allowed_signers)
        found.seals.append(SealEntry(seal.seat, verdict.status, verdict.signer))
        problem = _seal_problem(seal, verdict, signers, _declared(front).get(seal.seat), authorship=authorship)
        if problem is not None:
            add(problem)
        elif verdict.status in (signatures.VERIFIED, signatures.INTACT):
            sealed.add(seal.seat)
        else:
            _note_unchecked(verdict, found)
    if front.status != CLOSED or sealed or any(p.code == RecordCode.SEAL_INVALID for p in found.problems):
        return
    if authorship:
        add(
            Problem(
                code=RecordCode.SEAL_MISSING,
                message="no seat sealed the ending: the outcome, conclusion and turn count are unsigned",
            )
        )
    elif signers:
        found.notes.append("no seat sealed the ending: a record cut short and closed by hand would look the same")


def _seal_verdict(
    front: FrontMatter, parsed: ParsedArtifact, seal: Seal, allowed_signers: str | os.PathLike[str] | None
) -> signatures.Verdict:
    blocks, signer = parsed.blocks, _declared(front).get(seal.seat)
    try:
        message = signatures.close_message(
            front.duel_id,
            source_sha256=front.source_sha256,
            signer=signer,
            seat=seal.seat,
            outcome=front.outcome or "",
            turns=len(blocks),
            last=blocks[-1].sha256 if blocks else GENESIS,
            conclusion=sha256_text(parsed.conclusion or ""),
        )
    except ValueError as exc:
        return signatures.Verdict(signatures.INVALID, reason=f"the sealed message cannot be rebuilt ({exc})")
    return signatures.check(message, seal.signature, allowed_signers=allowed_signers, principal=signer)


def _seal_problem(
    seal: Seal, verdict: signatures.Verdict, signers: dict[int, _Signer], declared: str | None, *, authorship: bool
) -> Problem | None:
    holder = _holder(seal.seat)
    if verdict.status == signatures.INVALID:
        return Problem(
            code=RecordCode.SEAL_INVALID,
            message=f"{holder}'s seal does not verify for this ending: {_WHY_A_SEAL_FAILS}",
        )
    if verdict.status == signatures.UNTRUSTED:
        return Problem(code=RecordCode.SEAL_INVALID, message=f"{holder}'s seal is signed, but {verdict.reason}")
    if verdict.status == signatures.UNCHECKED:
        return (
            Problem(code=RecordCode.SEAL_INVALID, message=f"{holder}'s seal could not be checked: {verdict.reason}")
            if authorship
            else None
        )
    key = signatures.signer_key(seal.signature)
    own = signers.get(seal.seat)
    if own is not None and own.key != key:
        return Problem(
            code=RecordCode.SEAL_INVALID,
            message=f"{holder}'s seal is by {key}, not by the key of its turns ({own.key})",
        )
    principals = frozenset(verdict.signer.split(",")) if verdict.signer else frozenset()
    if declared is not None and principals and declared not in principals:
        return Problem(
            code=RecordCode.SEAL_INVALID,
            message=f"{holder}'s seal is by {','.join(sorted(principals))}, not {declared}",
        )
    # A principal two seats share is SIGNER_SHARED already; a key of the other seat's turns is this check's.
    other = None if own is not None else next((seat for seat, s in signers.items() if s.key == key), None)
    if other is not None:
        return Problem(code=RecordCode.SEAL_INVALID, message=f"{holder}'s seal is by {_holder(other)}'s key")
    return None
