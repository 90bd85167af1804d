"""Joining a duel, as the service's ``join`` runs it: a new duel created (its state, the index, its artifact),
the source checked against the duel's, and the seat a participant takes, resumes, reclaims or takes over.
Each runs inside the store's join lock and the duel's transaction the service holds.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from ..clock import iso, utc_date
from ..errors import DuelError, invalid_argument
from ..vocabulary import ErrorCode, Role
from . import policy
from ._state import DuelState, Participant
from .identity import hash_token, new_token, token_matches

if TYPE_CHECKING:
    from ..clock import Instant
    from ..settings import DuelSettings
    from ..turns import SourceDocument
    from ._store import DuelStore, Transaction


def raise_refusal(refusal: DuelError | None) -> None:
    """Raise what a policy refused, if it did."""
    if refusal is not None:
        raise refusal


def create_duel(
    store: DuelStore,
    now: Instant,
    source: SourceDocument,
    *,
    topic: str,
    slug: str,
    key: str,
    settings: DuelSettings,
    index: dict[str, str],
) -> str:
    """A new duel: its state, then the index, then its artifact, so a crash at any point
    leaves no artifact without a duel (a duel without its artifact yet gets it from the
    join that seats its first participant). A failure undoes what was written."""
    from ._artifact_writer import write_artifact

    duel_id = store.reserve_duel(f"{utc_date(now.wall)}-{slug}")
    state = DuelState(
        id=duel_id,
        source_path=source.path,
        source_sha256=source.sha256,
        topic=topic,
        topic_slug=slug,
        target_key=key,
        artifact=f"{duel_id}.md",
        created_at=now.wall,
        created_mono=now.mono,
        schedule=settings.schedule,
        lease_seconds=settings.lease_seconds,
        peer_wait_seconds=settings.peer_wait_seconds,
        turn_timeout_seconds=settings.turn_timeout_seconds,
        boot_id=now.boot,
        wall_offset=now.wall_offset,
    )
    try:
        store.keep_source(state, source)
        tx = store.begin(state, now)
        tx.save()
        tx.commit()
        store.write_index({**index, key: duel_id})
        write_artifact(tx, [], create=True)
    except BaseException:
        with contextlib.suppress(OSError):
            store.write_index(index)  # as it was
        store.discard_duel(duel_id)
        raise
    index[key] = duel_id
    return duel_id


def check_source(store: DuelStore, state: DuelState, source: SourceDocument) -> None:
    """With a copy of the source on each host, turns are validated against the duel's:
    a copy that differs would make a participant argue about another text."""
    if store.own_source_copies and source.sha256 != state.source_sha256:
        raise DuelError(
            ErrorCode.SOURCE_MISMATCH,
            f"{source.path} differs from the source duel {state.id} debates (SHA-256 {source.sha256[:12]}… "
            f"here, {state.source_sha256[:12]}… in the duel): bring it to the same version, then join again",
            {"source_sha256": source.sha256, "duel_source_sha256": state.source_sha256},
        )


def take_seat(
    tx: Transaction, *, identity: tuple[str, str, str], token: str | None, role: str, signer: str | None
) -> tuple[Participant, str]:
    """The seat ``identity`` takes in ``tx``'s duel, and its token: resumed with its token, reclaimed once idle,
    taken over with another model before its first turn, or a free seat of ``role``."""
    from ._artifact_writer import write_artifact
    from ._seat_events import ParticipantRegistered, ParticipantWaiting

    state, now = tx.state, tx.now
    name, harness, model_id = identity
    if role == Role.CHAIR and not state.schedule.chair:
        raise invalid_argument(
            f"duel {state.id} has no chair: join it as a panelist (a chair is set by the "
            "join that creates a duel, with --chair or --role chair)",
            flag="--role",
        )
    same = next((p for p in state.participants if p.identity == identity), None)
    renamed = next((p for p in state.participants if p.identity[:2] == identity[:2]), None)
    raise_refusal(policy.refuse_role(same or renamed, role))
    if same is not None:
        return take_again(tx, same, token)
    if renamed is not None:
        return take_over(tx, renamed, model_id, token)
    raise_refusal(policy.refuse_if_closed(state))  # closed since the index was read
    raise_refusal(policy.refuse_full(state, role))
    token = new_token()
    participant = Participant(
        id=f"p-{os.urandom(4).hex()}",  # what secrets.token_hex draws on, without importing it
        seat=policy.free_seat(state, role),
        display_name=name,
        harness=harness,
        model_id=model_id,
        token_sha256=hash_token(token),
        joined_at=now.wall,
        last_seen_mono=now.mono,
        signer=signer,
    )
    state.participants.append(participant)
    tx.emit(
        ParticipantRegistered(seat=participant.seat, display_name=name, harness=harness, model_id=model_id),
        by=participant.id,
    )
    if not policy.all_seated(state):
        until = iso(state.wall_time(policy.peer_wait_until(state)))
        tx.emit(ParticipantWaiting(until), by=participant.id)
    else:
        state.turn_started_mono = now.mono  # the first turn begins once every seat is taken
    write_artifact(tx, [])
    return participant, token


def take_again(tx: Transaction, same: Participant, token: str | None) -> tuple[Participant, str]:
    """The seat of the same name, harness and model: resumed with its token, else reclaimed once idle."""
    from ._seat_return_events import ParticipantResumed, SeatReclaimed

    state, now = tx.state, tx.now
    if token:
        if not token_matches(token, token_hash=same.token_sha256):
            raise DuelError(ErrorCode.PARTICIPANT_AUTH_FAILED, "participant token does not match this seat")
        tx.touch(same)
        tx.emit(ParticipantResumed(same.seat), by=same.id)
        return same, token
    if not policy.seat_reclaimable(state, same, now):
        raise DuelError(
            ErrorCode.SEAT_TAKEN,
            f"seat {same.seat} is held by {same.display_name} ({same.harness} / {same.model_id}), seen lately: if "
            "it is yours, run the same command where its token is kept (the same debate dir and user) to resume "
            "it, or pass its token; else the seat can be reclaimed once its holder has been gone a lease",
            {"seat": same.seat, "reclaimable_at": iso(state.wall_time(policy.reclaimable_from(state, same)))},
        )
    token = new_token()
    same.token_sha256 = hash_token(token)
    tx.touch(same)
    tx.emit(SeatReclaimed(same.seat), by=same.id)
    return same, token


def take_over(tx: Transaction, holder: Participant, model_id: str, token: str | None) -> tuple[Participant, str]:
    """The same name and harness with another model: the seat's model is corrected, before its first turn."""
    from ._artifact_writer import write_artifact
    from ._record_writer import check_record
    from ._seat_return_events import SeatTakenOver

    if token and not token_matches(token, token_hash=holder.token_sha256):
        raise DuelError(ErrorCode.PARTICIPANT_AUTH_FAILED, "participant token does not match this seat")
    raise_refusal(policy.refuse_takeover(tx.state, holder, model_id, with_token=bool(token), now=tx.now))
    previous, holder.model_id = holder.model_id, model_id
    if not token:
        token = new_token()
        holder.token_sha256 = hash_token(token)
    tx.touch(holder)
    tx.emit(SeatTakenOver(holder.seat, model_id, previous), by=holder.id)
    record = check_record(tx)
    if record.problem is None:  # a broken record is found by the next write; the seat changes anyway
        write_artifact(tx, record.blocks)
    return holder, token
