"""The lock service: join, status, claim/refresh/release a lease, append a turn, wait.

Each op is one short transaction of the store (:mod:`rp1_duel.coordination._store`),
exclusive on its duel: read the state, decide with the pure rules of
:mod:`rp1_duel.coordination.policy`, write the artifact (if it changes), the events,
then the state. Ops return typed results (:mod:`rp1_duel.coordination.results`);
``to_dict()`` gives the protocol's JSON. The event types load in the ops that log them,
and the answers of the ops that change a duel in those ops: ``duel tools status``, which
logs none and answers with a status, does not pay for building them.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Collection, Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, ParamSpec, TypeVar, cast

from ..clock import Clock, Instant, iso, system_clock
from ..ctrl_c import uninterrupted
from ..errors import DuelError, invalid_argument
from ..settings import DuelSettings
from ..vocabulary import ACTIVE, OUTCOMES, ROLES, ErrorCode, EventType, Role
from . import policy
from ._joining import check_source, create_duel, raise_refusal, take_seat
from ._result_core import LeaseToken, Seat, check_handles, common_fields
from ._retrying import RETRY_SECONDS, StoreWait, rerun_op, retried
from ._state import DuelState, Lease, Participant
from ._store import LOG_START, DuelStore, EventCursor, Transaction, seen_lately
from ._store_url import open_store
from .identity import (
    check_name,
    check_single_line,
    one_paragraph,
    resolve_join_target,
    resolve_target,
    resolve_topic,
    signer_problem,
    slugify,
    token_matches,
)
from .storage import DebateDir, DirectoryStore, copy_artifact

if TYPE_CHECKING:
    from ..record import Ruling
    from ..turns import SourceDocument
    from ._claim_result import ClaimResult
    from ._join_result import JoinResult
    from ._record_results import AppendResult, AudienceResult, CommitResult, SealResult
    from ._refresh_result import RefreshResult
    from ._release_result import ReleaseResult
    from .counts import Usage
    from .events import CitationVerdicts, Event, Provenance
    from .results import Observation, StatusResult, WaitResult

__all__ = [
    "DuelService",
]

WAIT_MAX_SECONDS = 3600
P = ParamSpec("P")
R = TypeVar("R")


_retried_on_transient_failures = rerun_op(RETRY_SECONDS)


class DuelService:
    """The duel protocol over one debate dir, with an injectable clock.

    ``store`` keeps the duels elsewhere than in the debate dir (docs/protocol.md
    section 4, "Stores"); the store supplies the time ops are judged at, so ``clock``
    serves only the default store, the debate dir itself.
    """

    def __init__(
        self, debate_dir: str | os.PathLike[str], clock: Clock = system_clock, store: DuelStore | str | None = None
    ):
        self.debate = DebateDir(debate_dir)
        self.store: DuelStore
        if isinstance(store, str):
            self.store = open_store(store, self.debate)
        else:
            self.store = store or DirectoryStore(self.debate, clock)
        self.clock: Clock = self.store.now
        self.on_store_wait: StoreWait | None = None  # told each pause of a retry: "the store is full…; retrying in 2 s"

    # -- transactions ----------------------------------------------------------------
    @contextmanager
    def transaction(self, duel_id: str) -> Iterator[Transaction]:
        """One op on the duel, exclusive against every other, its times re-anchored on the store's clock.

        What the block changed is committed when it ends, with a :class:`~rp1_duel.errors.DuelError`
        too (a refusal may record events); ``DUEL_NOT_FOUND`` or ``STORAGE_FAILED`` when it cannot begin.
        """
        with uninterrupted, self.store.errors(), self.store.transaction(duel_id) as tx:
            policy.reanchor(tx.state, tx.now)  # its times on now's clock (the next write keeps them so)
            try:
                yield tx
            except DuelError:
                tx.commit()  # a refusal may still record events (turn_rejected, tampering)
                raise
            tx.commit()

    @contextmanager
    def _seated(self, seat: Seat) -> Iterator[tuple[Transaction, Participant]]:
        """A transaction for an op that changes something: authenticated, duel open, caller seen."""
        with self.transaction(seat.duel_id) as tx:
            me = self._authenticate(tx.state, seat)
            raise_refusal(policy.refuse_if_closed(tx.state))
            tx.touch(me)
            yield tx, me

    def _read(self, duel_id: str, now: Instant) -> DuelState:
        """The duel's state, its times on ``now``'s clock (the next write keeps them so)."""
        state = self.store.read_state(duel_id)
        policy.reanchor(state, now)
        return state

    @staticmethod
    def _authenticate(state: DuelState, seat: Seat) -> Participant:
        if not seat.token:
            raise DuelError(
                ErrorCode.PARTICIPANT_AUTH_FAILED,
                "no participant token: pass --participant-token or set DUEL_PARTICIPANT_TOKEN",
            )
        participant = state.participant(seat.participant_id)
        if participant is None or not token_matches(seat.token, token_hash=participant.token_sha256):
            raise DuelError(ErrorCode.PARTICIPANT_AUTH_FAILED, "participant token does not match this participant")
        return participant

    def _debate_path(self, state: DuelState) -> str:
        return str(self.store.artifact_path(state))

    # -- join (section 3) ---------------------------------------------------------------
    @_retried_on_transient_failures
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
        role: str = Role.PANELIST,
        signer: str | None = None,
        persona: str | None = None,
    ) -> JoinResult:
        """Join, create or resume the duel about ``target`` and ``topic`` (docs/protocol.md section 3).

        ``role`` chair takes the chair's seat (0) of a duel created with one; on the join that
        creates the duel it implies ``settings.chair``. ``signer`` declares the principal (of an
        allowed signers file) the seat's signatures must name (section 6, "Signed turns"); ``persona``
        names the persona its model plays, recorded for reviewers (section 6, "Front matter")."""
        from ._join_result import JoinResult

        name = check_name("--participant-name", value=participant_name)
        harness = check_name("--harness", value=harness)
        model_id = check_name("--model-id", value=model_id, max_len=128, allow_slash=True)
        if signer is not None and signer_problem(signer):
            raise invalid_argument(f"--signer {signer_problem(signer)}", flag="--signer")
        if persona is not None:
            persona = check_name("--persona", value=persona)
        if role not in ROLES:
            raise invalid_argument(f"--role must be one of {', '.join(ROLES)}, not {role!r}", flag="--role")
        if role == Role.CHAIR:
            settings = settings._replace(chair=True)
        settings.check()
        source = resolve_join_target(target)
        topic_text = resolve_topic(topic, source)
        slug = slugify(topic_text)
        key = self.store.target_key(source, slug)
        with self.store.errors():
            self.store.ensure()
            with uninterrupted, self.store.joining():
                index = self.store.read_index()
                duel_id = index.get(key)
                created = duel_id is None or self.store.read_state(duel_id).status != ACTIVE
                if duel_id is None or created:
                    duel_id = create_duel(
                        self.store,
                        self.clock(),
                        source,
                        topic=topic_text,
                        slug=slug,
                        key=key,
                        settings=settings,
                        index=index,
                    )
                with self.transaction(duel_id) as tx:
                    check_source(self.store, tx.state, source)
                    if signer is not None:  # refused before the seat changes: a reclaim's new token is never lost
                        seated = next((p for p in tx.state.participants if p.identity[:2] == (name, harness)), None)
                        raise_refusal(policy.refuse_signer_declaration(tx.state, seated, signer))
                    participant, token = take_seat(
                        tx, identity=(name, harness, model_id), token=participant_token, role=role, signer=signer
                    )
                    participant.signer = participant.signer or signer  # a returning seat's shows at its next write
                    participant.persona = persona or participant.persona
                    return JoinResult.of(
                        tx.state,
                        participant,
                        token=token,
                        now=tx.now,
                        debate_path=self._debate_path(tx.state),
                        settings_note=None if created else policy.settings_note(tx.state, settings),
                    )

    # -- read-only views (sections 4 and 5) -----------------------------------------------
    @_retried_on_transient_failures
    def source(self, duel_id: str) -> SourceDocument:
        """The source the duel debates, as pinned at its join (section 6, "The source"): what every
        turn is checked against, whatever the file on disk has become. ``TARGET_UNREADABLE`` without it."""
        from ..turns import SourceUnreadable

        with self.store.errors():
            state = self._read(duel_id, self.clock())
            try:
                return self.store.read_source(state)
            except SourceUnreadable as exc:
                raise DuelError(ErrorCode.TARGET_UNREADABLE, str(exc)) from None

    @_retried_on_transient_failures
    def find_duel(self, target: str, *, topic: str | None = None) -> str:
        """The id of the active (or latest) duel about ``target`` and ``topic``; ``DUEL_NOT_FOUND`` without one."""
        source = resolve_target(target)
        key = self.store.target_key(source, slugify(resolve_topic(topic, source)))
        self.store.check_readable()
        duel_id = self.store.read_index().get(key)
        if duel_id is None:
            raise DuelError(ErrorCode.DUEL_NOT_FOUND, f"no duel about {source.path} in {self.store.location}")
        return duel_id

    @_retried_on_transient_failures
    def status(
        self,
        duel_id: str | None = None,
        *,
        target: str | None = None,
        topic: str | None = None,
        participant_id: str | None = None,
        participant_token: str | None = None,
    ) -> StatusResult:
        """A duel as anyone may see it; with ``participant_id``, that participant's ``next_step``.

        With the participant's token too, the participant is marked as seen (section 3).
        """
        from .results import StatusResult  # a status's answer: the lock ops do not build it

        if not duel_id:
            if not target:
                raise invalid_argument("status needs --duel-id or --target")
            duel_id = self.find_duel(target, topic=topic)
        if participant_token and participant_id is None:
            raise invalid_argument("--participant-token needs --participant-id")
        with self.store.errors():  # the clock too: a database store's is a query
            self.store.check_readable()
            now = self.clock()
            if participant_token and participant_id is not None:
                state = self._mark_seen(Seat(duel_id, participant_id, participant_token))
            else:
                state = self._read(duel_id, now)
        participant = self._participant_or_none(state, participant_id)
        return StatusResult.of(state, participant, now, self._debate_path(state))

    def _mark_seen(self, seat: Seat) -> DuelState:
        """An authenticated status or wait: the participant was seen; nothing else changes.

        In a debate dir it takes the duel's lock only to write: the state read without it (as a
        plain status reads it) is the answer when the caller was seen within the last second or
        the duel is closed, as the locked op would then write nothing. A database store's ops
        also bring this host's copy of the artifact up to date, so there every mark is an op."""
        if isinstance(self.store, DirectoryStore):
            now = self.clock()
            state = self._read(seat.duel_id, now)
            me = self._authenticate(state, seat)
            if state.status != ACTIVE or seen_lately(me, now):
                return state
        with self.transaction(seat.duel_id) as tx:
            me = self._authenticate(tx.state, seat)
            if tx.state.status == ACTIVE:
                tx.touch(me)
            return tx.state

    @staticmethod
    def _participant_or_none(state: DuelState, participant_id: str | None) -> Participant | None:
        return None if participant_id is None else DuelService._participant(state, participant_id)

    @staticmethod
    def _participant(state: DuelState, participant_id: str) -> Participant:
        participant = state.participant(participant_id)
        if participant is None:
            raise DuelError(ErrorCode.PARTICIPANT_NOT_FOUND, f"no participant {participant_id!r} in duel {state.id}")
        return participant

    @_retried_on_transient_failures
    def wait(
        self,
        duel_id: str,
        participant_id: str,
        timeout: float = 60.0,
        next_step: str | None = None,
        *,
        participant_token: str | None = None,
    ) -> WaitResult:
        """Block until the participant's next_step or the duel changes, or ``timeout`` (section 4).

        ``next_step``, the step the caller last saw, closes the gap between reading a
        status and starting to wait: if it has already changed, the wait returns at once.
        With the participant's token, the participant is marked as seen when the wait
        begins and every third of a lease while it lasts, so a long wait keeps the seat.
        """
        if not 0 <= timeout <= WAIT_MAX_SECONDS:
            raise invalid_argument(f"--timeout must be between 0 and {WAIT_MAX_SECONDS} seconds")
        seat = Seat(duel_id, participant_id, participant_token) if participant_token else None
        with self.store.errors():
            return self._wait(duel_id, participant_id=participant_id, timeout=timeout, next_step=next_step, seat=seat)

    def _wait(
        self, duel_id: str, *, participant_id: str, timeout: float, next_step: str | None, seat: Seat | None
    ) -> WaitResult:
        from .results import StatusResult, WaitResult  # a wait's answer, as a status's: the lock ops do not build it

        self.store.check_readable()
        started = time.monotonic()
        # The stamp before the state: a change that lands between the two reads moves the stamp past the one
        # kept, so the loop reads it; read the other way round, the wait would sleep through it to its timeout.
        stamp = self.store.stamp(duel_id)
        state = self._mark_seen(seat) if seat else self._read(duel_id, self.clock())
        participant = self._participant(state, participant_id)
        first_rev, first_step = state.rev, next_step or policy.next_step(state, participant, self.clock())
        interval = policy.refresh_interval(state.lease_seconds)
        next_mark = started + interval
        changed = False
        while not changed:
            left = timeout - (time.monotonic() - started)
            if left <= 0:
                break
            new_stamp = self.next_stamp(duel_id, stamp, left)
            if seat and time.monotonic() >= next_mark:
                # Its own write changes the stamp: read back below like any other. A wrong guess of the
                # store's is run again here, not as the whole wait.
                retried(lambda: self._mark_seen(seat), self.on_store_wait)
                next_mark += interval
                new_stamp = self.store.stamp(duel_id)
            if new_stamp != stamp:
                stamp, state = new_stamp, self._read(duel_id, self.clock())
                participant = state.participant(participant_id) or participant
            changed = state.rev != first_rev or policy.next_step(state, participant, self.clock()) != first_step
        fields = StatusResult.fields_of(state, participant, self.clock(), self._debate_path(state))
        return WaitResult(**fields, waited_seconds=round(time.monotonic() - started, 3), changed=changed)

    def next_stamp(self, duel_id: str, stamp: Hashable, timeout: float) -> Hashable:
        """Block until the duel's stamp (:meth:`state_stamp`) is no longer ``stamp``, or ``timeout`` seconds:
        the stamp then. A transient failure is retried in place: the wait keeps what it saw first. For a
        watcher without a seat (an audience member); a seat waits with :meth:`wait`."""

        def look() -> Hashable:
            with self.store.errors():
                return self.store.next_stamp(duel_id, stamp, timeout)

        return retried(look, self.on_store_wait)

    # -- leases (section 4) -----------------------------------------------------------------
    @_retried_on_transient_failures
    def claim_lock(self, seat: Seat, *, for_timeout: bool = False) -> ClaimResult:
        """Ask for the lease, to write a turn or (``for_timeout``) to close the duel TIMEOUT (section 4).

        A refusal is an answer (``acquired`` false, with the reason and when to retry), not an
        error; a bad seat handle is ``PARTICIPANT_AUTH_FAILED``, a closed duel ``DUEL_CLOSED``.
        """
        from ._claim_result import ClaimResult

        check_handles(seat)
        with self._seated(seat) as (tx, me):
            state, now = tx.state, tx.now
            decision = policy.decide_claim(state, me, now, for_timeout=for_timeout)
            if decision.grant and not decision.same_lease:
                from ._lease_events import LockAcquired  # not .events: every other event type

                state.lease = policy.new_lease(state, me, now, for_timeout=decision.for_timeout)
                state.fence = state.lease.fence
                expires_at = iso(state.wall_time(state.lease.expires_mono))
                tx.emit(LockAcquired(state.fence, expires_at, decision.for_timeout), by=me.id)
            holder = policy.live_lease(state, now)
            granted = decision.grant and holder is not None
            return ClaimResult(
                **common_fields(state, me, now),
                acquired=decision.grant,
                lease=LeaseToken(holder.token) if granted and holder else None,
                lease_expires_at=state.wall_time(holder.expires_mono) if holder else None,
                owner_participant_id=holder.owner if holder else None,
                retry_after_seconds=None if decision.grant else policy.retry_after(decision, now),
                wait_until=None
                if decision.grant or decision.wait_until is None
                else state.wall_time(decision.wait_until),
                reason=decision.reason,
            )

    @rerun_op(0)  # a refresh that fails is the refresher's to retry, within the lease it still has
    def refresh_lock(self, seat: Seat, lease: LeaseToken | None) -> RefreshResult:
        """Move a live lease's expiry to now + ``lease_seconds``; an expired one stays expired.

        A refusal is an answer (``refreshed`` false, with the reason), not an error.
        """
        from ._refresh_result import RefreshResult

        check_handles(seat, lease)
        with self._seated(seat) as (tx, me):
            state, now = tx.state, tx.now
            decision = policy.decide_refresh(state, me, lease.value if lease else None, now)
            expires_at = None if decision.expires_mono is None else state.wall_time(decision.expires_mono)
            if decision.refreshed and state.lease is not None and decision.expires_mono is not None:
                from ._lease_events import LockRefreshed  # not .events: every other event type

                state.lease.expires_mono = decision.expires_mono
                tx.emit(LockRefreshed(state.lease.fence, iso(state.wall_time(decision.expires_mono))), by=me.id)
            return RefreshResult(
                **common_fields(state, me, now),
                refreshed=decision.refreshed,
                lease=lease if decision.refreshed else None,
                lease_expires_at=expires_at,
                reason=decision.reason,
            )

    def _held_lease(self, tx: Transaction, me: Participant, lease: LeaseToken | None) -> Lease:
        held = policy.check_lease(tx.state, me, lease.value if lease else None, tx.now)
        if isinstance(held, DuelError):
            raise held
        return held

    @_retried_on_transient_failures
    def record_usage(
        self,
        seat: Seat,
        turn_number: int,
        usage: Usage,
        *,
        provenance: Provenance | None = None,
        repair_codes: Sequence[str] = (),
    ) -> None:
        """Log what the requests of one draft of a turn used, who answered it (``provenance``) and the rule
        codes it repairs, as a ``usage`` event that wakes no one (section 9).

        Authenticated by the seat; allowed after the close too, since a request may end after it.
        """
        from .events import UsageRecorded

        check_handles(seat)
        with self.transaction(seat.duel_id) as tx:
            me = self._authenticate(tx.state, seat)
            tx.emit(
                UsageRecorded(
                    turn_number=turn_number,
                    usage=usage,
                    provenance=provenance,
                    repair_codes=tuple(sorted(set(repair_codes))),
                ),
                by=me.id,
            )

    @_retried_on_transient_failures
    def record_provider_failure(self, seat: Seat, turn_number: int, code: str, message: str) -> None:
        """Log that this seat's model failed for good writing turn ``turn_number``, as a
        ``provider_failed`` event (section 9), so that the others and the record name it.

        Authenticated by the seat; allowed after the close too, as a usage event is.
        """
        from .events import ProviderFailed

        check_handles(seat)
        check_single_line("message", value=message, max_len=1000)
        with self.transaction(seat.duel_id) as tx:
            me = self._authenticate(tx.state, seat)
            tx.emit(ProviderFailed(seat=me.seat, turn_number=turn_number, code=code, message=message), by=me.id)

    @_retried_on_transient_failures
    def record_verdicts(
        self, seat: Seat, turn_number: int, verdicts: CitationVerdicts, *, challenge: int | None = None
    ) -> list[Ruling]:
        """Log what ``duel join --verify`` found in the citations of a turn or of a draft, as a
        ``citations_verified`` event that wakes no one (section 9); for an accepted turn, write a ruling into
        the record for each verified, unreliable or fabricated citation (section 10, "Rulings"); ``challenge``,
        the turn whose Source Challenges asked for the check (section 10, "Challenges"). Returns the rulings
        written (none for a citation ruled on already).

        Authenticated by the seat; allowed after the close too, as a usage event is.
        """
        from ._record_writer import rule_on_citations  # the Markdown parser is paid for only here
        from .events import CitationsVerified

        check_handles(seat)
        with self.transaction(seat.duel_id) as tx:
            me = self._authenticate(tx.state, seat)
            tx.emit(CitationsVerified(turn_number, verdicts), by=me.id)
            return rule_on_citations(tx, me, turn_number, verdicts, challenge=challenge)

    @_retried_on_transient_failures
    def events(self, duel_id: str, types: Collection[EventType]) -> list[Event]:
        """The duel's logged events of the given types, in order; ``DUEL_NOT_FOUND`` without such a duel."""
        with self.store.errors():
            state = self.store.read_state(duel_id)
            return self.store.events(state).read(types=types)

    @_retried_on_transient_failures
    def prepare_store(self) -> str:
        """Create the store (a database's schema, migrated; the debate dir's state folder) if
        it is not there yet; where it is. Safe to run again (``duel store init``)."""
        with self.store.errors():
            self.store.ensure()
        return self.store.location

    @_retried_on_transient_failures
    def pull(self, duel_id: str) -> str:
        """Write the duel's artifact, as the store keeps it, into this debate dir; its path.

        For a reviewer on a machine that took no part (``duel pull``); with the debate dir
        as the store, the artifact is already there and nothing is written."""
        from ..record import MAX_ARTIFACT_BYTES

        with self.store.errors():
            state = self.store.read_state(duel_id)
            return str(copy_artifact(self.debate, state, self.store.read_artifact(state, MAX_ARTIFACT_BYTES)))

    # -- for watchers: read-only, lock-free, cheap ------------------------------------------
    @_retried_on_transient_failures
    def duel_ids(self) -> list[str]:
        """Every duel of the debate dir, open or closed, in id order; none without ``.duel/``.
        ``DEBATE_DIR_INVALID`` when the debate dir itself does not exist: a mistyped path is no empty list."""
        with self.store.errors():
            try:
                self.store.check_readable()
            except DuelError as exc:
                if isinstance(self.store, DirectoryStore) and not self.debate.root.exists():
                    raise DuelError(
                        ErrorCode.DEBATE_DIR_INVALID, f"no debate dir {self.debate.root}: no duel was started there"
                    ) from None
                if exc.code == ErrorCode.DUEL_NOT_FOUND:  # no state folder: no duel yet
                    return []
                raise
            return self.store.duel_ids()

    @_retried_on_transient_failures
    def latest_duel_ids(self) -> list[str]:
        """The duels the index names, the latest of each source and topic: only these can be active."""
        with self.store.errors():
            self.store.check_readable()
            return sorted({duel_id for duel_id in self.store.read_index().values() if isinstance(duel_id, str)})

    @_retried_on_transient_failures
    def state_stamp(self, duel_id: str) -> Hashable:
        """A fingerprint of the duel (in a debate dir, its state file's, one stat()): every
        change of the duel, each event included, moves it, so a watcher reads only when it moves."""
        with self.store.errors():
            return self.store.stamp(duel_id)

    @_retried_on_transient_failures
    def observe(self, duel_id: str, since: EventCursor = LOG_START) -> Observation:
        """The duel as anyone may see it, and the events logged after ``since``.

        Takes no lock and writes nothing; the events read are those the state vouches for,
        so a change and its events are seen together.
        """
        from .results import Observation, StatusResult

        with self.store.errors():
            self.store.check_readable()
            now = self.clock()
            state = self._read(duel_id, now)
            log = self.store.events(state)
            events = log.read(since)
        return Observation(StatusResult.of(state, None, now, self._debate_path(state)), events, log.end)

    @_retried_on_transient_failures
    def release_lock(
        self,
        seat: Seat,
        lease: LeaseToken | None,
        *,
        close: bool = False,
        outcome: str | None = None,
        reason: str | None = None,
        summary: str | None = None,
        signing_key: str | os.PathLike[str] | None = None,
    ) -> ReleaseResult:
        """Release the lease, or with ``close`` end the duel with ``outcome`` (sections 4 and 8),
        sealing its ending with ``signing_key`` if given (section 6, "Sealed endings").

        Raises ``LEASE_NOT_HELD`` or ``LEASE_EXPIRED`` for a lease the caller does not hold,
        ``OUTCOME_MISMATCH`` or ``TIMEOUT_REJECTED`` for a close the turns do not allow, and
        ``SIGNING_FAILED`` for a key that cannot seal (the duel then stays open).
        """
        from ._release_result import ReleaseResult

        check_handles(seat, lease)
        if close:
            if outcome not in OUTCOMES:
                raise invalid_argument(f"--close needs --outcome, one of {', '.join(OUTCOMES)}")
        elif outcome or summary or signing_key:
            raise invalid_argument("--outcome, --summary-file and --signing-key only go with --close")
        if reason is not None:
            check_single_line("--reason", value=reason, max_len=1000)
        with self._seated(seat) as (tx, me):
            state, now = tx.state, tx.now
            held = self._held_lease(tx, me, lease)
            if close:
                from ._record_writer import close_duel  # the Markdown parser is paid for only by a close

                checked = cast("str", outcome)  # one of OUTCOMES: checked before the transaction
                close_duel(tx, me, held, outcome=checked, reason=reason, summary=summary, signing_key=signing_key)
            else:
                from ._lease_events import LockReleased  # not .events: every other event type

                state.lease = None
                tx.emit(LockReleased(held.fence), by=me.id)
            return ReleaseResult(
                **common_fields(state, me, now),
                released=True,
                closed=state.status != ACTIVE,
                outcome=state.outcome,
                reason=state.reason,
            )

    @_retried_on_transient_failures
    def abandon(self, duel_id: str, *, reason: str, seat: Seat | None = None) -> StatusResult:
        """Close an open duel ``INVALIDATED`` with ``reason`` (section 8, "Abandoning a duel"), as one of its
        participants (``seat``, with its token) or, without one, as the owner of the debate dir: a
        duel nobody will finish no longer waits for a timeout nobody claims.

        ``PARTICIPANT_AUTH_FAILED`` for a wrong seat, or without one in a database store (it has no
        owner); ``DUEL_CLOSED`` once closed; ``INVALID_ARGUMENT`` without a reason."""
        from ._record_writer import abandon_duel  # the Markdown parser is paid for only by a close

        reason = reason.strip()
        if not reason:
            raise invalid_argument("abandoning a duel needs --reason", flag="--reason")
        check_single_line("--reason", value=reason, max_len=1000)
        with self.transaction(duel_id) as tx:
            if seat is not None:
                by = self._authenticate(tx.state, seat)
                who = f"{by.display_name} (seat {by.seat})"
            elif isinstance(self.store, DirectoryStore):  # its state folder admits its owner alone (section 6)
                import getpass  # the name the close records: read only here

                user = f"uid {os.getuid()}"
                with contextlib.suppress(KeyError, OSError):  # a uid with no name (a container's)
                    user = getpass.getuser()
                who = f"{user}, the owner of the debate dir"
            else:
                raise DuelError(
                    ErrorCode.PARTICIPANT_AUTH_FAILED,
                    "only a participant with its token, or the owner of the debate dir, may abandon a duel",
                )
            raise_refusal(policy.refuse_if_closed(tx.state))
            abandon_duel(tx, f"abandoned by {who}: {reason}")
        return self.status(duel_id)

    @_retried_on_transient_failures
    def seal(self, seat: Seat, signing_key: str | os.PathLike[str]) -> SealResult:
        """Sign the closed duel's ending as ``seat`` (section 6, "Sealed endings"), once a seat.

        Raises ``INVALID_ARGUMENT`` while the duel is open, ``ARTIFACT_TAMPERED`` when the record
        is no longer what the close wrote, ``SIGNING_FAILED`` for a key that cannot sign or that is
        not the one the seat signed its turns with.
        """
        from ._record_results import SealResult
        from ._record_writer import seal_duel  # the Markdown parser is paid for only by a seal

        with self.transaction(seat.duel_id) as tx:
            me = self._authenticate(tx.state, seat)
            sealed = seal_duel(tx, me, signing_key)
            return SealResult(
                **common_fields(tx.state, me, tx.now),
                sealed=sealed,
                outcome=tx.state.outcome,
                sealed_seats=sorted(seal.seat for seal in tx.state.seals),
                debate_path=self._debate_path(tx.state),
            )

    @_retried_on_transient_failures
    def commit_opening(self, seat: Seat, turn: str | bytes) -> CommitResult:
        """Commit ``seat``'s sealed opening (section 4, "Sealed openings"): ``turn`` is checked against the
        rules in the record as it stood before the opening round, and only its SHA-256 is kept; once every
        seat has committed, each appends its opening in turn, and any other text ends the duel INVALIDATED.
        No lease is needed: the seats write their openings at once.

        Committing the same text again changes nothing. Raises ``TURN_INVALID`` for a turn that breaks a
        rule, ``OPENING_COMMITTED`` for another text than the one committed, ``NOT_YOUR_TURN`` outside the
        opening round, ``TURN_DEADLINE_PASSED`` past it, ``INVALID_ARGUMENT`` in a duel whose openings are
        not sealed."""
        check_handles(seat)
        from ._record_results import CommitResult
        from ._record_writer import commit_opening  # the Markdown parser is paid for only by a commit

        with self._seated(seat) as (tx, me):
            sha256, already = commit_opening(tx, me, turn)
            return CommitResult(
                **common_fields(tx.state, me, tx.now),
                turn_number=me.seat,
                turn_sha256=sha256,
                already_committed=already,
                waiting_for_seats=policy.uncommitted_seats(tx.state),
            )

    # -- the audience (section 4, "The audience") ------------------------------------------------
    @_retried_on_transient_failures
    def ask(self, duel_id: str, *, to_seat: int, question: str, by: str) -> AudienceResult:
        """Ask seat ``to_seat`` ``question`` as ``by`` (an audience member: no seat, no token; whoever can
        reach the store may ask). Admitted, it is written into the artifact and due at that seat's next
        turn, which must answer it. ``QUESTIONS_FULL`` past two a round, ``QUESTION_REFUSED`` before the
        opening round ends or when the seat has no turn left, ``INVALID_ARGUMENT`` for a bad seat or text."""
        from ..audience import QUESTION_CHARS
        from ._record_results import AudienceResult
        from ._record_writer import ask_question  # the Markdown parser is paid for only by a question

        by = check_name("--name", value=by)
        text = one_paragraph("the question", question, QUESTION_CHARS)
        with self.transaction(duel_id) as tx:
            raise_refusal(policy.refuse_if_closed(tx.state))
            asked = ask_question(tx, to_seat=to_seat, text=text, by=by)
            return AudienceResult(
                **common_fields(tx.state, None, tx.now),
                question=asked.to_json(),
                debate_path=self._debate_path(tx.state),
            )

    @_retried_on_transient_failures
    def add_final_thoughts(self, duel_id: str, *, by: str, text: str) -> AudienceResult:
        """Add ``by``'s final thoughts to the closed duel's artifact: shown in the report, never changing the
        outcome. ``QUESTION_REFUSED`` while the duel is open."""
        from ..audience import FINAL_THOUGHT_CHARS
        from ._record_results import AudienceResult
        from ._record_writer import add_final_thought  # the Markdown parser is paid for only here

        by = check_name("--name", value=by)
        said = one_paragraph("the final thoughts", text, FINAL_THOUGHT_CHARS)
        with self.transaction(duel_id) as tx:
            thought = add_final_thought(tx, by=by, text=said)
            return AudienceResult(
                **common_fields(tx.state, None, tx.now),
                final_thought=thought.to_json(),
                debate_path=self._debate_path(tx.state),
            )

    # -- turns (sections 6 and 7) -------------------------------------------------------------
    @_retried_on_transient_failures
    def append(
        self,
        seat: Seat,
        lease: LeaseToken | None,
        turn: str | bytes,
        *,
        release: bool = False,
        signing_key: str | os.PathLike[str] | None = None,
        stripped: Sequence[str] = (),
    ) -> AppendResult:
        """Validate ``turn`` and append it to the artifact; ``release`` gives the floor back after it.

        ``signing_key`` (an SSH private key, or a public key whose private half is in
        ssh-agent) signs the turn in this process; a key that cannot sign is
        ``SIGNING_FAILED`` and nothing is written. ``stripped`` names the wrappers
        (:data:`rp1_duel.vocabulary.WRAPPERS`) the caller removed around the turn: recorded
        in the ``turn_appended`` event, never part of validation. A turn that breaks a rule is
        ``TURN_INVALID`` with its violations; the answer names the turn's number, hash and any outcome reached."""
        check_handles(seat, lease)
        from ._lease_events import LockReleased  # not .events: every other event type
        from ._record_results import AppendResult
        from ._record_writer import append_turn  # Markdown parsing is paid for only by appends

        with self._seated(seat) as (tx, me):
            state, now = tx.state, tx.now
            held = self._held_lease(tx, me, lease)
            record = append_turn(tx=tx, me=me, lease=held, turn=turn, signing_key=signing_key, stripped=stripped)
            if release and state.pending_outcome is None:
                state.lease = None
                tx.emit(LockReleased(held.fence), by=me.id)
            return AppendResult(
                **common_fields(state, me, now),
                turn_number=record.n,
                stance=record.stance,
                turn_sha256=record.sha256,
                signed=record.signature is not None,
                candidate_convergence=state.candidate_convergence,
                terminal_outcome=state.pending_outcome,
                debate_path=self._debate_path(state),
            )
