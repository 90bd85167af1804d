"""The lock service: join, status, claim/refresh/release a lease, append a turn, wait.

Each op is one short critical section under the duel's file lock: read the state,
decide with the pure rules of :mod:`rp1_duel.lease`, write the artifact (if it
changes), the events, then the state, each atomically. Results are the protocol's
``data`` objects (PROTOCOL.md section 5).
"""

from __future__ import annotations

import os
import secrets
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from . import lease as rules
from .artifact import TurnBlock, render
from .clock import Clock, iso, system_clock, utc_date
from .errors import DuelError, invalid_argument
from .outcomes import OUTCOMES
from .identity import (
    check_name,
    check_single_line,
    hash_token,
    new_token,
    Target,
    resolve_target,
    resolve_topic,
    slugify,
    target_key,
    token_matches,
)
from .state import ACTIVE, DuelState, Participant
from .storage import DebateDir, EventLog, write_atomic


WAIT_POLL_SECONDS = 0.01  # a stat() every 10 ms keeps hand-offs well under 100 ms
WAIT_MAX_SECONDS = 3600


@dataclass(frozen=True)
class DuelSettings:
    """Fixed by the join that creates a duel (PROTOCOL.md section 2)."""

    max_turns: int = 6
    lease_seconds: int = 600
    peer_wait_seconds: int = 900
    turn_timeout_seconds: int = 1800

    def check(self) -> None:
        _check_range("--max-turns", self.max_turns, 2, 50)
        _check_range("--lease-seconds", self.lease_seconds, 5, 86400)
        _check_range("--peer-wait-seconds", self.peer_wait_seconds, 1, 604800)
        _check_range("--turn-timeout-seconds", self.turn_timeout_seconds, 1, 604800)


def _check_range(flag: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise invalid_argument(f"{flag} must be between {low} and {high}, got {value}", flag=flag)


class Transaction:
    """One critical section's view of a duel: the state, its pending events, the time."""

    def __init__(self, debate: DebateDir, state: DuelState, now: float):
        self.debate = debate
        self.state = state
        self.now = now
        self.events = EventLog(debate.events_path(state.id), state)
        self.dirty = False
        self.changed = False  # something a waiter should wake up for

    def emit(self, kind: str, participant_id: str | None, wake: bool = True, **data: Any) -> None:
        """Log an event; ``wake`` says whether waiters should see the duel as changed."""
        self.events.emit(iso(self.now), kind, participant_id, data)
        self.dirty = True
        self.changed = self.changed or wake

    def touch(self, participant: Participant) -> None:
        participant.last_seen_at = self.now
        self.dirty = True

    def commit(self) -> None:
        if not self.dirty:
            return
        if self.changed:
            self.state.rev += 1
        self.events.flush()
        self.debate.write_state(self.state)
        self.dirty = self.changed = False

    def write_artifact(self, blocks: list[TurnBlock] | str, summary: str | None = None) -> None:
        path = self.debate.artifact_path(self.state)
        write_atomic(path, render(self.state, blocks, path, summary).encode("utf-8"), mode=0o644)


class DuelService:
    """The duel protocol over one debate dir, with an injectable clock."""

    def __init__(self, debate_dir: str | os.PathLike[str], clock: Clock = system_clock):
        self.debate = DebateDir(debate_dir)
        self.clock = clock

    # -- transactions ----------------------------------------------------------------
    @contextmanager
    def transaction(self, duel_id: str) -> Iterator[Transaction]:
        self.debate.check_readable()
        with self.debate.duel_lock(duel_id):
            tx = Transaction(self.debate, self.debate.read_state(duel_id), self.clock())
            try:
                yield tx
            except DuelError:
                tx.commit()  # a refusal may still record events (turn_rejected, tampering)
                raise
            tx.commit()

    def authenticate(self, state: DuelState, participant_id: str, token: str | None) -> Participant:
        participant = state.participant(participant_id)
        if not token:
            raise DuelError(
                "PARTICIPANT_AUTH_FAILED",
                "no participant token: pass --participant-token or set DUEL_PARTICIPANT_TOKEN",
            )
        if participant is None or not token_matches(token, participant.token_sha256):
            raise DuelError("PARTICIPANT_AUTH_FAILED", "participant token does not match this participant")
        return participant

    # -- join -------------------------------------------------------------------------
    def join(
        self,
        *,
        target: str,
        participant_name: str,
        topic: str | None = None,
        harness: str = "unknown",
        model_id: str = "unknown-model",
        participant_token: str | None = None,
        settings: DuelSettings = DuelSettings(),
    ) -> dict[str, Any]:
        name = check_name("--participant-name", participant_name)
        harness = check_name("--harness", harness)
        model_id = check_name("--model-id", model_id, max_len=128, allow_slash=True)
        settings.check()
        source = resolve_target(target)
        topic_text = resolve_topic(topic, source)
        slug = slugify(topic_text)
        key = target_key(source.path, slug)
        self.debate.ensure()
        with self.debate.join_lock():
            index = self.debate.read_index()
            duel_id = index.get(key)
            if duel_id is None or self.debate.read_state(duel_id).status != ACTIVE:
                duel_id = self._create(source, topic_text, slug, key, settings)
                index[key] = duel_id
                self.debate.write_index(index)
            with self.transaction(duel_id) as tx:
                participant, token = self._seat(tx, name, harness, model_id, participant_token)
                data = self._view(tx.state, participant, tx.now)
        state = tx.state
        data.update(
            participant_token=token,
            seat=participant.seat,
            source_path=state.source_path,
            source_sha256=state.source_sha256,
            target_key=state.target_key,
            topic=state.topic,
            topic_slug=state.topic_slug,
            debate_path=str(self.debate.artifact_path(state)),
            max_turns=state.max_turns,
            lease_seconds=state.lease_seconds,
            peer_wait_until=iso(rules.peer_wait_until(state)),
        )
        return data

    def _create(self, source: Target, topic: str, slug: str, key: str, settings: DuelSettings) -> str:
        now = self.clock()
        stem = f"{utc_date(now)}-{slug}"
        duels = self.debate.state_root / "duels"
        for n in range(1, 10_000):
            duel_id = stem if n == 1 else f"{stem}-{n}"
            # The state folder and the artifact are both created exclusively, so no
            # two duels share a file, whatever the date or earlier closes left behind.
            try:
                (duels / duel_id).mkdir(mode=0o700)
            except FileExistsError:
                continue
            try:
                fd = os.open(self.debate.root / f"{duel_id}.md", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                (duels / duel_id).rmdir()
                continue
            os.close(fd)
            break
        else:
            raise DuelError("DEBATE_DIR_INVALID", f"no free artifact name for {stem} in {self.debate.root}")
        state = DuelState(
            id=duel_id,
            source_path=source.path,
            source_sha256=source.sha256,
            topic=topic,
            topic_slug=slug,
            target_key=key,
            artifact=f"{duel_id}.md",
            created_at=now,
            max_turns=settings.max_turns,
            lease_seconds=settings.lease_seconds,
            peer_wait_seconds=settings.peer_wait_seconds,
            turn_timeout_seconds=settings.turn_timeout_seconds,
        )
        tx = Transaction(self.debate, state, now)
        tx.write_artifact([])
        tx.dirty = True
        tx.commit()
        return duel_id

    def _seat(
        self, tx: Transaction, name: str, harness: str, model_id: str, token: str | None
    ) -> tuple[Participant, str]:
        state, now = tx.state, tx.now
        identity = (name, harness, model_id)
        same = next((p for p in state.participants if p.identity == identity), None)
        if same is not None:
            if token:
                if not token_matches(token, same.token_sha256):
                    raise DuelError("PARTICIPANT_AUTH_FAILED", "participant token does not match this seat")
                tx.touch(same)
                tx.emit("participant_resumed", same.id, seat=same.seat)
                return same, token
            if not rules.seat_reclaimable(state, same, now):
                raise DuelError(
                    "SEAT_TAKEN",
                    f"seat {same.seat} is held by {name} ({harness} / {model_id}); pass its token to resume",
                    {"seat": same.seat, "reclaimable_at": iso(same.last_seen_at + state.lease_seconds)},
                )
            token = new_token()
            same.token_sha256 = hash_token(token)
            tx.touch(same)
            tx.emit("seat_reclaimed", same.id, seat=same.seat)
            return same, token
        if state.status != ACTIVE:
            raise DuelError("DUEL_CLOSED", f"duel {state.id} is closed")
        if len(state.participants) >= 2:
            raise DuelError("DUEL_FULL", f"duel {state.id} already has two participants")
        token = new_token()
        participant = Participant(
            id=f"p-{secrets.token_hex(4)}",
            seat=len(state.participants) + 1,
            display_name=name,
            harness=harness,
            model_id=model_id,
            token_sha256=hash_token(token),
            joined_at=now,
            last_seen_at=now,
        )
        state.participants.append(participant)
        tx.emit("participant_registered", participant.id, seat=participant.seat,
                display_name=name, harness=harness, model_id=model_id)
        if participant.seat == 1:
            tx.emit("participant_waiting", participant.id, until=iso(rules.peer_wait_until(state)))
        else:
            state.turn_started_at = now  # turn 1 begins once both seats are taken
        tx.write_artifact([])
        return participant, token

    # -- read-only views ----------------------------------------------------------------
    def find_duel(self, target: str, topic: str | None = None) -> str:
        source = resolve_target(target)
        key = target_key(source.path, slugify(resolve_topic(topic, source)))
        self.debate.check_readable()
        duel_id = self.debate.read_index().get(key)
        if duel_id is None:
            raise DuelError("DUEL_NOT_FOUND", f"no duel about {source.path} in {self.debate.root}")
        return duel_id

    def status(
        self, duel_id: str | None = None, *, target: str | None = None, topic: str | None = None,
        participant_id: str | None = None,
    ) -> dict[str, Any]:
        if not duel_id:
            if not target:
                raise invalid_argument("status needs --duel-id or --target")
            duel_id = self.find_duel(target, topic)
        self.debate.check_readable()
        state = self.debate.read_state(duel_id)
        return self._status(state, self._participant_or_none(state, participant_id), self.clock())

    def _participant_or_none(self, state: DuelState, participant_id: str | None) -> Participant | None:
        if participant_id is None:
            return None
        participant = state.participant(participant_id)
        if participant is None:
            raise DuelError("PARTICIPANT_NOT_FOUND", f"no participant {participant_id!r} in duel {state.id}")
        return participant

    def _view(self, state: DuelState, participant: Participant | None, now: float) -> dict[str, Any]:
        data: dict[str, Any] = {"duel_id": state.id}
        if participant is not None:
            data["participant_id"] = participant.id
        data.update(
            participant_count=len(state.participants),
            status=state.status,
            next_step=rules.next_step(state, participant, now) if participant else None,
        )
        return data

    def _status(self, state: DuelState, participant: Participant | None, now: float) -> dict[str, Any]:
        data = self._view(state, participant, now)
        live = rules.live_lease(state, now)
        data.update(
            duel={
                "id": state.id,
                "source_path": state.source_path,
                "topic": state.topic,
                "topic_slug": state.topic_slug,
                "debate_path": str(self.debate.artifact_path(state)),
                "status": state.status,
                "outcome": state.outcome,
                "pending_outcome": state.pending_outcome,
                "reason": state.reason,
                "created_at": iso(state.created_at),
                "closed_at": iso(state.closed_at),
                "max_turns": state.max_turns,
                "lease_seconds": state.lease_seconds,
                "peer_wait_seconds": state.peer_wait_seconds,
                "turn_timeout_seconds": state.turn_timeout_seconds,
                "invalid_reason": state.invalid_reason,
            },
            participants=[
                {**p.public(), "last_seen_at": iso(p.last_seen_at)}
                for p in sorted(state.participants, key=lambda p: p.seat)
            ],
            lock={
                "owner_participant_id": live.owner if live else None,
                "lease_expires_at": iso(live.expires_at) if live else None,
                "fence": state.fence,
            },
            turn_count=len(state.turns),
            next_turn_seat=rules.next_turn_seat(state) if state.status == ACTIVE else None,
            turn_deadline=iso(rules.turn_deadline(state)),
            peer_wait_until=iso(rules.peer_wait_until(state)) if len(state.participants) < 2 else None,
            candidate_convergence=state.candidate_convergence,
        )
        return data

    def wait(self, duel_id: str, participant_id: str, timeout: float = 60.0,
             next_step: str | None = None) -> dict[str, Any]:
        """Block until the participant's next_step or the duel changes, or ``timeout``.

        ``next_step``, the step the caller last saw, closes the gap between reading a
        status and starting to wait: if it has already changed, the wait returns at once.
        """
        if not 0 <= timeout <= WAIT_MAX_SECONDS:
            raise invalid_argument(f"--timeout must be between 0 and {WAIT_MAX_SECONDS} seconds")
        self.debate.check_readable()
        started = time.monotonic()
        state = self.debate.read_state(duel_id)
        participant = self._participant_or_none(state, participant_id)
        assert participant is not None
        first_rev, first_step = state.rev, next_step or rules.next_step(state, participant, self.clock())
        stamp = self.debate.state_stamp(duel_id)
        changed = False
        while not changed:
            left = timeout - (time.monotonic() - started)
            if left <= 0:
                break
            time.sleep(min(WAIT_POLL_SECONDS, left))
            new_stamp = self.debate.state_stamp(duel_id)
            if new_stamp != stamp:
                stamp, state = new_stamp, self.debate.read_state(duel_id)
                participant = state.participant(participant_id) or participant
            changed = state.rev != first_rev or rules.next_step(state, participant, self.clock()) != first_step
        data = self._status(state, participant, self.clock())
        data.update(waited_seconds=round(time.monotonic() - started, 3), changed=changed)
        return data

    # -- leases ---------------------------------------------------------------------------
    def claim_lock(
        self, duel_id: str, participant_id: str, participant_token: str | None, for_timeout: bool = False
    ) -> dict[str, Any]:
        with self.transaction(duel_id) as tx:
            state, now = tx.state, tx.now
            me = self.authenticate(state, participant_id, participant_token)
            _refuse_if_closed(state)
            tx.touch(me)
            decision = rules.decide_claim(state, me, now, for_timeout)
            if decision.grant and not decision.same_lease:
                state.fence += 1
                state.lease = rules.Lease(
                    owner=me.id,
                    token=f"{state.fence}-{secrets.token_hex(12)}",
                    fence=state.fence,
                    granted_at=now,
                    expires_at=now + state.lease_seconds,
                    for_timeout=decision.for_timeout,
                )
                tx.emit("lock_acquired", me.id, fence=state.fence,
                        expires_at=iso(state.lease.expires_at), for_timeout=decision.for_timeout)
            data = self._view(state, me, now)
            holder = rules.live_lease(state, now)
            data.update(
                acquired=decision.grant,
                lease_expires_at=iso(holder.expires_at) if holder else None,
                owner_participant_id=holder.owner if holder else None,
                reason=decision.reason,
            )
            if decision.grant:
                assert holder is not None
                data.update(lease_token=holder.token, retry_after_seconds=None, wait_until=None)
            else:
                wait_until = decision.wait_until
                left = (wait_until - now) if wait_until is not None else 5.0
                # Look again when something is due, but at least every 5 s (or use `wait`).
                data.update(retry_after_seconds=round(min(max(left, 0.1), 5.0), 3), wait_until=iso(wait_until))
            return data

    def refresh_lock(
        self, duel_id: str, participant_id: str, participant_token: str | None, lease_token: str | None
    ) -> dict[str, Any]:
        with self.transaction(duel_id) as tx:
            state, now = tx.state, tx.now
            me = self.authenticate(state, participant_id, participant_token)
            _refuse_if_closed(state)
            tx.touch(me)
            lease = state.lease
            held = lease is not None and lease.owner == me.id and _same(lease.token, lease_token)
            if held and lease.live(now):
                lease.expires_at = now + state.lease_seconds
                tx.emit("lock_refreshed", me.id, wake=False, fence=lease.fence, expires_at=iso(lease.expires_at))
                reason = "refreshed"
            else:
                reason = "lease_expired" if held else "lease_not_held"
            data = self._view(state, me, now)
            data.update(
                refreshed=reason == "refreshed",
                lease_token=lease_token if reason == "refreshed" else None,
                lease_expires_at=iso(lease.expires_at) if held else None,
                reason=reason,
            )
            return data

    def release_lock(
        self,
        duel_id: str,
        participant_id: str,
        participant_token: str | None,
        lease_token: str | None,
        *,
        close: bool = False,
        outcome: str | None = None,
        reason: str | None = None,
        summary: str | None = None,
    ) -> dict[str, Any]:
        if close:
            if outcome not in OUTCOMES:
                raise invalid_argument(f"--close needs --outcome, one of {', '.join(OUTCOMES)}")
        elif outcome or summary:
            raise invalid_argument("--outcome and --summary-file only go with --close")
        if reason is not None:
            check_single_line("--reason", reason, max_len=1000)
        with self.transaction(duel_id) as tx:
            state, now = tx.state, tx.now
            me = self.authenticate(state, participant_id, participant_token)
            _refuse_if_closed(state)
            tx.touch(me)
            lease = check_lease(state, me, lease_token, now)
            if close:
                from .record import close_duel  # the Markdown parser is paid for only by a close

                close_duel(tx, me, lease, outcome, reason, summary)
            else:
                state.lease = None
                tx.emit("lock_released", me.id, fence=lease.fence)
            data = self._view(state, me, now)
            data.update(released=True, closed=state.status != ACTIVE, outcome=state.outcome, reason=state.reason)
            return data

    # -- turns ------------------------------------------------------------------------------
    def append(
        self,
        duel_id: str,
        participant_id: str,
        participant_token: str | None,
        lease_token: str | None,
        turn: str | bytes,
        release: bool = False,
    ) -> dict[str, Any]:
        from .record import append_turn  # Markdown parsing is paid for only by appends

        with self.transaction(duel_id) as tx:
            state, now = tx.state, tx.now
            me = self.authenticate(state, participant_id, participant_token)
            _refuse_if_closed(state)
            tx.touch(me)
            lease = check_lease(state, me, lease_token, now)
            record = append_turn(tx, me, lease, turn)
            if release and state.pending_outcome is None:
                state.lease = None
                tx.emit("lock_released", me.id, fence=lease.fence)
            data = self._view(state, me, now)
            data.update(
                turn_number=record.n,
                stance=record.stance,
                turn_sha256=record.sha256,
                candidate_convergence=state.candidate_convergence,
                terminal_outcome=state.pending_outcome,
                debate_path=str(self.debate.artifact_path(state)),
            )
            return data


def check_lease(state: DuelState, me: Participant, lease_token: str | None, now: float) -> rules.Lease:
    """Every write re-checks owner, token and expiry at the moment it writes."""
    lease = state.lease
    if lease is None or lease.owner != me.id or not _same(lease.token, lease_token):
        raise DuelError("LEASE_NOT_HELD", "you do not hold the lease of this duel (claim-lock first)")
    if not lease.live(now):
        raise DuelError("LEASE_EXPIRED", f"your lease expired at {iso(lease.expires_at)}; claim-lock again")
    return lease


def _same(expected: str, given: str | None) -> bool:
    return bool(given) and secrets.compare_digest(expected.encode(), given.encode())


def _refuse_if_closed(state: DuelState) -> None:
    if state.status != ACTIVE:
        raise DuelError("DUEL_CLOSED", f"duel {state.id} is closed ({state.outcome})",
                        {"outcome": state.outcome, "next_step": rules.CLOSED_STEP})
