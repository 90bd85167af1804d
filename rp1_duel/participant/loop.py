"""One participant of a duel, start to finish: the loop behind ``duel join``.

States: preparing → waiting_for_participant → debating → closing → completed |
invalidated. The loop talks to the lock service in process (not through ``duel
tools``), waits with the service's ``wait`` (no fixed sleeps), composes its turns with
a provider while a background thread keeps its lease fresh, takes the turn out of the
answer (:mod:`.extraction`), validates it locally and asks the provider for up to three
repairs before appending (a person until the turn deadline; a script none: its seat stops). A failed model request is retried until the turn deadline
(:mod:`.retry`); what each request used is logged as a ``usage`` event and summed in the result.
With a :class:`~.checking.CitationChecker` (``--verify``), each draft's URLs are checked before
it is appended and each peer turn's once, under the lease (:mod:`.checking`).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

from ..coordination import (
    DuelService,
    LeaseToken,
    ProviderFailed,
    Seat,
    StatusResult,
    TurnAppended,
)
from ..errors import DuelError
from ..files import MAX_SOURCE_BYTES, read_bounded
from ..printable import printable
from ..record import AgreedEnding, Claimant, History, RecordFile, agreed_ending, signatures
from ..schedule import CHAIR_SEAT
from ..settings import DuelSettings
from ..turns import TurnViolation, challenged, revision_note, validate_turn
from ..vocabulary import (
    CLOSED_STEP,
    INVALIDATED,
    TIMEOUT,
    ErrorCode,
    EventType,
    Role,
)
from . import prompt
from ._composing import Composer, end_writer
from ._deadlines import Deadlines, TurnStopped
from ._seat_checks import SeatChecks, writer_of
from .budget import check_capped, sent_ceiling
from .extraction import Extraction, extract_turn, wrapper_notes
from .lease_keeper import LeaseKeeper
from .personas import Persona, persona_label
from .providers import TURN_MAX_TOKENS, Composition, Provider, ProviderError, TurnRequest
from .reporter import (
    CLOSING,
    DEBATING,
    PREPARING,
    STATE_COMPLETED,
    STATE_INVALIDATED,
    WAITING,
    ParticipantState,
    Reporter,
)
from .retry import RetryPolicy
from .stash import SeatStash
from .usage import PricedUsage, recorded, summary

if TYPE_CHECKING:  # duel join --verify, or a challenge, only: else nothing of the checks is loaded
    from .checking import CitationChecker

__all__ = [
    "MAX_REPAIRS",
    "Duelist",
    "ParticipantConfig",
    "ParticipantResult",
]

MAX_REPAIRS = 3
# A person repairs until the turn deadline (None: no count); a script cannot change its text, so a rejected
# scripted turn stops its seat at once (0) rather than invalidate the duel for everyone (docs/protocol.md section 2).
REPAIRS_ALLOWED: Final[Mapping[str, int | None]] = {"human": None, "scripted": 0}
REASON_CHARACTERS = 900  # a close's reason is one line of at most 1000, the service's part included
WAIT_SLICE_SECONDS = 30.0  # wait returns on any change anyway; this only bounds each call


@dataclass(kw_only=True, frozen=True)
class ParticipantConfig:
    """Who joins which duel, and how: the source, the debate dir, the name, and the duel's settings."""

    target: str  # absolute path of the source
    debate_dir: str
    name: str
    harness: str = "duel"
    topic: str | None = None
    persona: Persona | str | None = None  # a named persona (participant.personas), or free text
    position: str | None = None
    settings: DuelSettings = DuelSettings()
    signing_key: str | None = None  # an SSH key that signs every turn and seals the ending (record.signatures)
    signer: str | None = None  # the principal the seat declares its signatures name
    store: str | None = None  # a postgresql:// URL; None: the debate dir keeps the duel
    role: str = Role.PANELIST  # or the chair's seat of a chaired duel
    allow_private_hosts: bool = False  # fetches (--verify, challenged sources) may reach loopback and private hosts
    budget_usd: float | None = None  # --budget-usd: the seat's money cap in this duel, checked before every request


@dataclass(kw_only=True)
class ParticipantResult:
    """How a participant's run ended, as ``duel join --json`` prints it."""

    state: ParticipantState
    duel_id: str | None = None
    participant_id: str | None = None
    seat: int | None = None
    outcome: str | None = None
    reason: str | None = None
    debate_path: str | None = None
    turns_written: list[int] = field(default_factory=list)  # by this participant, over every run
    usage: PricedUsage | None = None  # summed over every run
    verification: dict[str, Any] | None = None  # with --verify: its checks over every run (checking.summary)
    agreed: AgreedEnding | None = None  # once closed: the revision it agreed, if any (record.ending)

    def to_dict(self) -> dict[str, Any]:
        """The result as ``--json`` prints it, its usage in JSON, the agreed revision as ``revision`` and ``patch``."""
        shown = {key: value for key, value in self.__dict__.items() if key != "agreed"}
        agreed = (self.agreed or AgreedEnding(self.debate_path or "")).fields()
        return {**shown, "usage": None if self.usage is None else self.usage.to_json(), **agreed}


def awaited(status: StatusResult) -> str:
    """Who a duel not yet begun waits for: ``a peer``, ``2 more of 3 panelists``, ``the chair`` or both; never
    a count of 0 (the panelists are counted apart from the chair, which may join at any point)."""
    seats = status.duel.schedule.seats
    missing = seats - sum(1 for p in status.participants if p.seat != CHAIR_SEAT)
    chair_missing = status.duel.schedule.chair and all(p.seat != CHAIR_SEAT for p in status.participants)
    chair = ["the chair"] if chair_missing else []
    panelists = ["a peer" if seats == 2 else f"{missing} more of {seats} panelists"] if missing else []
    return " and ".join(panelists + chair)


class Duelist:
    """Runs one participant through a whole duel."""

    def __init__(
        self,
        config: ParticipantConfig,
        provider: Provider,
        reporter: Reporter,
        service: DuelService | None = None,
        retry_policy: RetryPolicy | None = None,
        checker: CitationChecker | None = None,
    ):
        self.config = config
        self.checker = checker  # --verify
        self.retry_policy = retry_policy or RetryPolicy()
        self.provider = provider
        self.report = reporter
        self.service = service or DuelService(config.debate_dir, store=config.store)
        self.result = ParticipantResult(state=PREPARING)
        self.service.on_store_wait = self._store_wait  # a retry of the store is a wait, said like one
        self.claimant = Claimant(config.name, config.harness, provider.model)
        self.seat: Seat | None = None
        self.lease: LeaseToken | None = None  # the lease this process holds, to release it on Ctrl-C
        self.stash: SeatStash | None = None  # where the token and the rejected drafts are kept, once joined
        self._last_wait = ""  # the last wait shown, so a long wait is not repeated line by line
        self.deadlines = Deadlines(lambda: self.service.clock().wall)
        self._warnings: list[str] = []  # said on the console since this seat's last turn: a person's editor covers them

    # -- the loop ---------------------------------------------------------------------
    def run(self) -> ParticipantResult:
        """Join, debate turn by turn, and return how the duel ended for this participant."""
        if self.config.signing_key is not None:  # a key that cannot even be read fails before the seat is taken
            key = signatures.key_fingerprint(self.config.signing_key)
            self.report.state(PREPARING, f"signing each turn with {key}")
        self.report.state(PREPARING, self.provider.preflight())  # a mistyped model or a bad key costs no seat
        # The preflight may have chosen the model (a --base-url server's only one).
        self.claimant = replace(self.claimant, model_id=self.provider.model)
        if self.provider.remote:  # a person or a script sends no request: nothing to cap
            ceiling = sent_ceiling(self.provider, TURN_MAX_TOKENS)
            check_capped(self.provider.model, self.config.budget_usd, ceiling)
        name, harness, model = self.claimant.name, self.claimant.harness, self.claimant.model_id
        for line in self.checker.preflight() if self.checker else ():
            self.report.state(PREPARING, line)
        self._enter(PREPARING, f"joining as {name} ({harness} / {model})")
        with self._stash() as stash:
            self.stash = stash
            seat = self._join(stash)
            handlers: dict[str, Callable[[StatusResult], None]] = {
                "wait_peer": self._on_wait_peer,
                "commit_opening": self._on_commit_opening,
                "wait_turn": self._on_wait_turn,
                "claim_lock": self._on_claim_lock,
                "compose_turn": self._on_claim_lock,
                "release_lock": self._on_release_lock,
                "claim_timeout": self._on_claim_timeout,
                "close_timeout": self._on_claim_timeout,
                "close": self._on_close,
            }
            while True:
                status = self.service.status(
                    seat.duel_id, participant_id=seat.participant_id, participant_token=seat.token
                )
                if status.next_step == CLOSED_STEP or status.next_step is None:
                    return self._finish(status)
                try:
                    handlers[status.next_step](status)
                except DuelError as exc:
                    if exc.code != ErrorCode.DUEL_CLOSED:  # the peer closed first: the next status says so
                        raise

    def interrupt(self) -> None:
        """Ctrl-C: end a person's editor, give the floor back; the seat stays resumable by running the same command."""
        end_writer(self.provider)
        if self.seat is None:
            return
        with contextlib.suppress(DuelError):  # already expired or closed: nothing is held
            lease = self.lease or self._lease_granted_unseen(self.seat)
            if lease is not None:
                self.service.release_lock(self.seat, lease)
        self.lease = None

    def _lease_granted_unseen(self, seat: Seat) -> LeaseToken | None:
        """A lease the service granted while Ctrl-C cut the claim short, before this process saw
        it: the service hands a holder its own live lease again (``already_held``)."""
        if self.service.status(seat.duel_id).lock.owner_participant_id != seat.participant_id:
            return None
        return self.service.claim_lock(seat).lease

    def _stash(self) -> SeatStash:
        return SeatStash.of(self.service.debate, self.config.target, self.config.topic, self.claimant)

    def _join(self, stash: SeatStash) -> Seat:
        earlier = stash.duel_id()
        joined = self.service.join(
            target=self.config.target,
            participant_name=self.claimant.name,
            topic=self.config.topic,
            harness=self.claimant.harness,
            model_id=self.claimant.model_id,
            participant_token=stash.token(),
            settings=self.config.settings,
            role=self.config.role,
            signer=self.config.signer,
            persona=persona_label(self.config.persona),
        )
        self.seat = seat = joined.seat
        stash.save(seat)
        self.result.duel_id, self.result.participant_id = seat.duel_id, seat.participant_id
        self.result.seat, self.result.debate_path = seat.number, joined.debate_path
        self.schedule = joined.schedule
        self.lease_seconds = joined.lease_seconds
        self.checks = SeatChecks(
            checker=self.checker,
            service=self.service,
            seat=seat,
            schedule=joined.schedule,
            reporter=self.report,
            deadlines=self.deadlines,
            allow_private_hosts=self.config.allow_private_hosts,
        )
        self.composer = Composer(
            provider=self.provider,
            service=self.service,
            seat=seat,
            reporter=self.report,
            deadlines=self.deadlines,
            retry_policy=self.retry_policy,
            budget_usd=self.config.budget_usd,
        )
        # The version the duel pinned at its join, which the service checks every turn against (with a
        # database store, the text it keeps): the file on disk may have changed since.
        self.source = self.service.source(seat.duel_id)
        self._pinned_sha256, self._noticed_sha256 = joined.source_sha256, joined.source_sha256
        if seat.number == CHAIR_SEAT:
            self.system = prompt.chair_system_prompt(
                self.claimant.name,
                topic=joined.topic,
                source=self.source,
                source_name=self.source.name,
                persona=self.config.persona,
                seats=joined.schedule.seats,
            )
        else:
            self.system = prompt.system_prompt(
                self.claimant.name,
                topic=joined.topic,
                source=self.source,
                source_name=self.source.name,
                persona=self.config.persona,
                position=self.config.position,
                schedule=joined.schedule,
            )
        if earlier is not None and earlier != seat.duel_id:
            self._say_closed(earlier)
        taken = "the chair" if seat.number == CHAIR_SEAT else f"seat {seat.number}"
        self.report.state(PREPARING, f"{taken} of duel {seat.duel_id} → {joined.debate_path}")
        if joined.settings_note:
            self._warn(joined.settings_note)
        return seat

    def _say_closed(self, duel_id: str) -> None:
        """Say that the seat's earlier duel on the document and topic is closed, with its outcome, and that the
        join started a new one: before any wait, or a rerun meant to resume waits in a new duel unawares."""
        with contextlib.suppress(DuelError):  # gone or unreadable: nothing to say about it
            duel = self.service.status(duel_id).duel
            if duel.outcome is not None:
                self.report.state(
                    PREPARING,
                    f"the earlier duel {duel_id} on this document and topic closed {duel.outcome} "
                    f"({duel.debate_path}); this run starts a new duel",
                )

    def _warn(self, detail: str) -> None:
        """A console line a person must also find in their editor's notes (printed, then covered by the editor)."""
        self._warnings.append(detail)
        self.report.state(self.result.state, detail)

    def _store_wait(self, line: str) -> None:
        self.report.state(self.result.state, line)

    def _enter(self, state: ParticipantState, detail: str) -> None:
        self.result.state = state
        self.report.state(state, detail)

    @property
    def _my_seat(self) -> Seat:
        if self.seat is None:  # never: the loop joins first
            raise RuntimeError("not joined yet")
        return self.seat

    def _read_history(self, status: StatusResult) -> History:
        """The record up to the turns ``status`` counts, as this participant's copy of the source reads it."""
        if self.result.debate_path is None:  # never: the join names the record
            raise RuntimeError("not joined yet")
        self._notice_source_change()
        return RecordFile.read(self.result.debate_path, source=self.source).history(upto=status.turn_count)

    def _notice_source_change(self) -> None:
        """A line, once per new content, when the document on disk is no longer the version the duel pinned."""
        try:
            now = hashlib.sha256(read_bounded(self.config.target, MAX_SOURCE_BYTES)).hexdigest()
        except (OSError, ValueError):
            return
        if now in (self._pinned_sha256, self._noticed_sha256):
            return
        self._noticed_sha256 = now
        self._warn(
            f"{self.source.name} changed on disk since the duel began: every turn is still checked against the "
            "version pinned at the join (duel apply applies an agreed revision to that version only)",
        )

    # -- one handler per next_step ------------------------------------------------------
    def _on_wait_peer(self, status: StatusResult) -> None:
        self._wait(
            status, WAITING, f"waiting for {awaited(status)} ({self.deadlines.left(status.peer_wait_until)} left)"
        )

    def _on_wait_turn(self, status: StatusResult) -> None:
        holder = status.participant(status.lock.owner_participant_id)
        me = self._my_seat.participant_id
        writer = (
            writer_of(status.participants, self.schedule, status.next_turn, me)
            if status.duel.schedule.seats > 2
            else None
        )
        floor = (
            f"{holder.display_name} holds the floor"
            if holder
            else f"{writer.display_name}'s turn"
            if writer
            else "the peer's turn"
        )
        left = self.deadlines.left(status.turn_deadline)
        self._wait(status, DEBATING, f"{floor}; turn {status.next_turn} due within {left}")

    def _on_claim_lock(self, status: StatusResult) -> None:
        if self._claim() is not None:
            self._take_turn(status)

    def _on_release_lock(self, status: StatusResult) -> None:  # noqa: ARG002  every next_step handler takes the status
        lease = self._claim()
        if lease is not None:
            self.service.release_lock(self._my_seat, lease)
            self.lease = None

    def _on_claim_timeout(self, status: StatusResult) -> None:
        # The service names the late seat and its turn; this adds why, when that seat's model failed (or person aborted).
        if self._claim(for_timeout=True) is not None:
            self._close(TIMEOUT, self._failure_of(status))

    def _failure_of(self, status: StatusResult) -> str | None:
        """Why the seat due to write the next turn stopped (its model failed, its person aborted), if it logged it."""
        failures = [
            event.data
            for event in self.service.events(status.duel.id, (EventType.PROVIDER_FAILED,))
            if isinstance(event.data, ProviderFailed)
            and event.data.seat == status.next_turn_seat
            and event.data.turn_number == status.next_turn
        ]
        if not failures:
            return None
        failed = failures[-1]
        return failed.why[:REASON_CHARACTERS]

    def _on_close(self, status: StatusResult) -> None:
        if self._claim() is not None:
            self._close(status.duel.pending_outcome or INVALIDATED, status.duel.invalid_reason)

    # -- pieces -----------------------------------------------------------------------------
    def _wait(self, status: StatusResult, state: ParticipantState, detail: str) -> None:
        if self.result.state != state or self._last_wait != detail:
            self._enter(state, detail)
            self._last_wait = detail
        seat = self._my_seat
        # With the token, a wait keeps the seat: a long peer turn does not make it reclaimable.
        self.service.wait(
            seat.duel_id,
            seat.participant_id,
            WAIT_SLICE_SECONDS,
            next_step=status.next_step,
            participant_token=seat.token,
        )

    def _claim(self, *, for_timeout: bool = False) -> LeaseToken | None:
        seat = self._my_seat
        claim = self.service.claim_lock(seat, for_timeout=for_timeout)
        if claim.lease is None:
            wait = min(WAIT_SLICE_SECONDS, claim.retry_after_seconds or WAIT_SLICE_SECONDS)
            self.service.wait(seat.duel_id, seat.participant_id, wait, participant_token=seat.token)
            return None
        self.lease = claim.lease
        return self.lease

    def _close(self, outcome: str, reason: str | None, summary: str | None = None) -> None:
        self._enter(CLOSING, f"closing with {outcome}")
        try:
            self.service.release_lock(
                self._my_seat,
                self.lease,
                close=True,
                outcome=outcome,
                reason=reason,
                summary=summary,
                signing_key=self.config.signing_key,
            )
        except DuelError as exc:
            if exc.code not in (
                ErrorCode.TIMEOUT_REJECTED,
                ErrorCode.LEASE_EXPIRED,
                ErrorCode.LEASE_NOT_HELD,
                ErrorCode.TURN_DEADLINE_PASSED,
            ):
                raise
            self.report.state(self.result.state, f"close refused ({exc.code}): {exc.message}")
            return
        self.lease = None

    def _take_turn(self, status: StatusResult) -> None:
        number = status.next_turn
        self._enter(DEBATING, f"composing turn {number} with {self.provider.model}")
        lease = self.lease
        if lease is None:  # never: a turn is taken once the floor is claimed
            raise RuntimeError("the floor is not held")
        history = self._read_history(status)
        written = self._unsaved_turn(history, number)
        if written is None:
            deadline = self._turn_deadline(status)
            # Page fetches count against the turn deadline like model requests, and the lease is kept through both.
            keeper = LeaseKeeper(
                service=self.service,
                seat=self._my_seat,
                lease=lease,
                lease_seconds=self.lease_seconds,
                deadline=self.deadlines.monotonic(deadline),
            )
            try:
                with keeper:
                    written = self._write_turn(
                        history=history, status=status, number=number, deadline=deadline, lost=keeper.lost
                    )
            except TurnStopped:
                self._turn_stopped(status, keeper, deadline)
                return
            except ProviderError as exc:
                if exc.code != ErrorCode.INTERRUPTED:  # a person gone (their output closed) is no failure to log
                    self._provider_failed(number, exc)
                raise
        if written is not None:
            self._append(number, lease, *written)

    def _on_commit_opening(self, status: StatusResult) -> None:
        """A sealed opening: written without the floor and without any other opening in sight, kept beside
        the token (so a crash costs no second model request, and the reveal appends exactly this text),
        then committed; it is appended when every seat has committed and the floor comes round."""
        number = self._my_seat.number
        history = self._read_history(status)
        written = self._unsaved_turn(history, number)
        if written is None:
            self._enter(DEBATING, f"composing sealed opening (turn {number}) with {self.provider.model}")
            deadline = self._turn_deadline(status)
            try:
                written = self._write_turn(
                    history=history, status=status, number=number, deadline=deadline, lost=threading.Event()
                )
            except TurnStopped:
                self.report.state(DEBATING, f"the opening round's deadline passed before turn {number} was written")
                return
            except ProviderError as exc:
                self._provider_failed(number, exc)
                raise
            if written is None:
                return
            with contextlib.suppress(OSError):  # without the copy the commit still stands; a crash would lose it
                self._stash_of_seat().keep_unsaved(self._my_seat, number, written[0])
        committed = self.service.commit_opening(self._my_seat, written[1].text)
        waiting = ", ".join(f"seat {seat}" for seat in committed.waiting_for_seats)
        self.report.state(
            DEBATING,
            f"committed sealed opening (turn {number}, sha256 {committed.turn_sha256[:12]}…)"
            + (f"; waiting for {waiting} to commit" if waiting else "; every opening is committed"),
        )

    def _unsaved_turn(self, history: History, number: int) -> tuple[str, Extraction] | None:
        """The answer a previous run was paid for but could not store (a full disk), when it is still a
        valid turn ``number``: appended as it is, without a model request."""
        kept = self._stash_of_seat().unsaved(self._my_seat, number)
        if kept is None:
            return None
        path, answer = kept
        extraction = extract_turn(answer)
        if validate_turn(extraction.text, history.context_for(self.claimant, number)).violations:
            self._warn(f"turn {number}: the unsaved draft in {path} is no longer valid; writing anew")
            return None
        self.report.state(DEBATING, f"turn {number}: using the valid draft kept in {path}, without a new model request")
        return answer, extraction

    def _write_turn(
        self, history: History, *, status: StatusResult, number: int, deadline: float, lost: threading.Event
    ) -> tuple[str, Extraction] | None:
        """A valid draft of turn ``number`` (the model's answer and the turn in it), repaired up to
        :data:`MAX_REPAIRS` times (a person's until the deadline); None when none came and the duel was closed
        INVALIDATED. Raises :class:`TurnStopped` at the deadline or when ``lost`` is set (the floor was lost),
        and ``TURN_INVALID`` for a script's rejected turn: its seat stops, kept, until the file is fixed."""
        context = history.context_for(self.claimant, number)
        heading = prompt.heading(number, self.claimant, by_chair=context.by_chair)
        phase = prompt.turn_notes(
            context,
            chair=prompt.chair_note(history, participants=status.participants, schedule=self.schedule, number=number),
        )
        violations: list[TurnViolation] = []
        draft: str | None = None
        extraction = Extraction("")
        verdicts = self.checks.peer_verdicts(history, status, deadline, lost)
        allowed = REPAIRS_ALLOWED.get(self.provider.name, MAX_REPAIRS)
        for attempt in itertools.count():
            request = prompt.build_request(
                duel_id=self._my_seat.duel_id,
                system=self.system,
                blocks=history.shown_blocks(),  # a redacted claim never reaches a model
                number=number,
                max_turns=self.schedule.last,
                heading=heading,
                own_turns_before=self.schedule.own_turns_before(number),
                violations=violations,
                draft=draft,
                notes=wrapper_notes(extraction),
                verdicts=verdicts,
                phase=phase,
                by_chair=context.by_chair,
                revision=revision_note(history.revision),
            )
            if self.provider.name == "human":
                request = self._for_a_person(request, history, status, number=number, deadline=deadline)
            repairing = tuple(sorted({v.code for v in violations}))  # () for the first draft
            composition = self.composer.compose(request, deadline, lost, number, repairing=repairing)
            if composition is None or lost.is_set():
                raise TurnStopped
            extraction = extract_turn(composition.text)  # a fence, a preamble…: removed here, not by a repair
            draft = extraction.text
            if extraction.stripped:
                self._warn(f"turn {number}: removed {', '.join(extraction.stripped)} around the answer")
            violations = validate_turn(draft, context).violations
            violations += self.checks.check_draft(
                history,
                number=number,
                attempt=attempt,
                draft=draft,
                deadline=deadline,
                lost=lost,
                repairs_allowed=allowed,
            )
            if not violations:
                return composition.text, extraction
            left = None if allowed is None else allowed - attempt
            kept = None if composition.origin else self._keep_draft(number, attempt + 1, composition)
            self.report.turn_rejected(number, violations, attempt + 1, kept, repairs_left=left)
            if left == 0:
                if composition.origin:  # a script: asked again, the same file breaks the same rules
                    raise _script_rejected(number, composition.origin, violations)
                break
        codes = ", ".join(sorted({v.code for v in violations}))
        reason = f"{self.claimant.name} could not write a valid turn {number} after {MAX_REPAIRS} repairs ({codes})"
        if self.lease is None:  # a sealed opening is written without the floor: end the duel as its participant
            self._enter(CLOSING, f"closing with {INVALIDATED}")
            self.service.abandon(self._my_seat.duel_id, reason=reason, seat=self._my_seat)
        else:
            self._close(INVALIDATED, reason)
        return None

    def _for_a_person(
        self, request: TurnRequest, history: History, status: StatusResult, *, number: int, deadline: float
    ) -> TurnRequest:
        """``request`` with what a person needs beside it: the briefing their editor shows (the turns since
        their last, the edits in force, the console's warnings, the deadline) and the file their draft is kept in."""
        shown = dict(zip(history.numbers, history.shown_blocks(), strict=True))  # a redacted claim stays redacted
        since = [shown[turn] for turn, _ in self.checks.others_since_mine(status, history.next_number - 1)]
        revision = history.revision
        diff = revision.diff(self.source.name) if revision is not None and not revision.problems else ""
        due = (
            f"The turn is due by {time.strftime('%H:%M:%S', time.localtime(deadline))} (within {self.deadlines.left(deadline)}); "
            "a rejected draft reopens here, its violations above, until then."
        )
        briefing = prompt.briefing(since, diff=diff, warnings=self._warnings, due=due)
        draft_path = str(self._stash_of_seat().person_draft(self._my_seat, number))
        return replace(request, briefing=briefing, draft_path=draft_path)

    def _keep_draft(self, number: int, attempt: int, composition: Composition) -> str | None:
        """Where the rejected draft is kept; None when it could not be written (a full disk must not stop the turn)."""
        try:
            return str(self._stash_of_seat().keep_draft(self._my_seat, number, attempt, composition.text))
        except OSError:
            return None

    def _stash_of_seat(self) -> SeatStash:
        if self.stash is None:  # never: the loop joins first
            raise RuntimeError("not joined")
        return self.stash

    def _provider_failed(self, number: int, error: ProviderError) -> None:
        """Log that the model failed for good, so the record names it; the caller exits with the error
        (and gives the floor back): the turn times out unless the same command is run again in time."""
        with contextlib.suppress(DuelError):  # the error itself is what the person must see
            self.service.record_provider_failure(self._my_seat, number, error.code, printable(error.message))
        writer = {"human": "the person", "scripted": "the script"}.get(self.provider.name, "the model")
        said = f"{writer} failed writing turn {number} ({error.code}); the failure is logged, and"
        again = "the same command is run again"
        if error.code == ErrorCode.BUDGET_EXCEEDED:  # nothing failed: the seat stopped itself, and says what it spent
            said = f"stopped at the money cap ({error.code}): {error.message}; the stop is logged, and"
            again = "the same command is run again with a larger --budget-usd"
        self.report.state(DEBATING, f"{said} the turn times out at its deadline unless {again} before it")

    def _turn_stopped(self, status: StatusResult, keeper: LeaseKeeper, deadline: float) -> None:
        if keeper.lost.is_set():
            self.report.state(DEBATING, "lease lost while composing; claiming again")
        else:
            self.lease = None  # it ended at the deadline
            # The deadline this process keeps may pass a moment before the service's: that moment is waited out,
            # so the next status shows the turn lost, not the floor still offered.
            time.sleep(max(0.0, self.deadlines.monotonic(deadline) - time.monotonic()))
            self.report.state(
                DEBATING,
                f"turn deadline passed: turn {status.next_turn} was not finished within "
                f"{status.duel.turn_timeout_seconds} s; the request is abandoned "
                "and the duel ends TIMEOUT",
            )

    def _append(self, number: int, lease: LeaseToken, answer: str, written: Extraction) -> None:
        stash = self._stash_of_seat()
        challenges = challenged(written.text)
        try:
            appended = self.service.append(
                self._my_seat,
                lease,
                written.text,
                release=not challenges,  # a challenge is ruled on before the floor passes on
                signing_key=self.config.signing_key,
                stripped=written.stripped,
            )
        except DuelError as exc:
            if exc.code in (ErrorCode.LEASE_EXPIRED, ErrorCode.LEASE_NOT_HELD, ErrorCode.TURN_DEADLINE_PASSED):
                self.report.state(DEBATING, f"turn {number} not appended ({exc.code}): {exc.message}")
                return
            if exc.code == ErrorCode.STORAGE_FAILED:
                raise self._unsaved(stash, number, answer, exc) from None
            raise
        with contextlib.suppress(OSError):  # a kept copy left behind is never reused: its turn is taken
            stash.drop_unsaved(self._my_seat, number)
        self._warnings.clear()  # said before this turn: the next one's notes start afresh
        self.result.turns_written.append(number)
        self.report.turn_accepted(number, appended.stance)
        if challenges:
            self.checks.rule_on_challenges(
                number,
                lease=lease,
                lease_seconds=self.lease_seconds,
                challenges=challenges,
                read_history=self._read_history,
                deadline_of=self._turn_deadline,
            )
            if appended.terminal_outcome is None:
                with contextlib.suppress(DuelError):  # a lease lost meanwhile has passed on already
                    self.service.release_lock(self._my_seat, lease)
        if appended.terminal_outcome is None:
            self.lease = None

    def _unsaved(self, stash: SeatStash, number: int, answer: str, error: DuelError) -> DuelError:
        """``error`` once the turn it kept from the store is kept beside the token, saying where: the
        same command run again appends it without paying the model again."""
        try:
            path = stash.keep_unsaved(self._my_seat, number, answer)
        except OSError:  # the same full disk: nothing more to say
            return error
        return DuelError(
            error.code,
            f"{error.message}; the valid turn {number} the model wrote is kept in {path}, and running the "
            "same command again appends it without a new model request",
            error.details,
        )

    def _turn_deadline(self, status: StatusResult) -> float:
        """When the turn ``status`` awaits must be in (wall clock, as shown), counted from now before its clock starts."""
        return status.turn_deadline or self.service.clock().wall + status.duel.turn_timeout_seconds

    def _seal(self, signing_key: str) -> None:
        """Sign the ending (once a seat: the close may have sealed it already). A seal that fails
        is shown, and the duel's result stands: the record is whole, only less provable."""
        try:
            sealed = self.service.seal(self._my_seat, signing_key)
        except DuelError as exc:
            self.report.state(self.result.state, f"the ending was not sealed ({exc.code}): {exc.message}")
            return
        if sealed.sealed:
            self.report.state(self.result.state, f"sealed the ending: {sealed.outcome}")

    def _finish(self, status: StatusResult) -> ParticipantResult:
        duel = status.duel
        self.result.outcome = duel.outcome
        self.result.state = STATE_INVALIDATED if duel.outcome == INVALIDATED else STATE_COMPLETED
        self.result.reason = duel.reason
        me = self._my_seat.participant_id
        self.checks.check_last_peer_turns(status, self._read_history, state=self.result.state)
        if self.config.signing_key is not None:
            self._seal(self.config.signing_key)
        events = self.service.events(duel.id, (EventType.USAGE, EventType.TURN_APPENDED, EventType.CITATIONS_VERIFIED))
        self.result.turns_written = [
            event.data.turn_number
            for event in events
            if isinstance(event.data, TurnAppended) and event.participant_id == me
        ]
        self.result.usage = summary(recorded(events, me), self.provider.model, os.environ)
        if self.checker is not None:
            self.result.verification = self.checker.summary(events, me, self.result.turns_written)
        reason = f" ({duel.reason})" if duel.reason else ""
        self.report.state(self.result.state, f"{duel.outcome}{reason} → {self.result.debate_path}")
        if self.result.debate_path is not None:
            self.result.agreed = agreed_ending(self.result.debate_path)
        return self.result


def _script_rejected(number: int, origin: str, violations: list[TurnViolation]) -> ProviderError:
    """A script's turn broke the rules: asking it again gives the same file, so its seat stops (kept) until the
    file is fixed, rather than spend the repairs and invalidate the duel for everyone."""
    codes = ", ".join(sorted({v.code for v in violations}))
    return ProviderError(
        ErrorCode.TURN_INVALID,
        f"turn {number}: the scripted turn {origin} breaks {codes} (listed above): fix the file",
    )
