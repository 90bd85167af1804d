"""One seat held for an agent that calls tools (``duel mcp``): the library side, with no MCP in it.

The process joins once and keeps the participant token itself (and in the owner-only stash
``duel join`` uses, so a restarted server resumes the seat); no answer carries a token. While
the agent holds the floor a :class:`~rp1_duel.participant.lease_keeper.LeaseKeeper` refreshes the
lease, up to the turn deadline, as ``duel join`` does. A wait runs in slices, so the server
can report progress between them and stop at the client's cancellation. Every answer is a
plain dict (the ``duel tools`` JSON, tokens left out), and every refusal a
:class:`~rp1_duel.errors.DuelError` with its code (docs/protocol.md, "duel mcp").

A turn that challenges sources is appended without giving the floor back: the sources are
fetched and ruled on first, as ``duel join`` does (:func:`~rp1_duel.participant.checking.rule_on_challenges`),
because this process, unlike ``duel tools``, outlives the append.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..coordination import LeaseToken, Seat, StatusResult
from ..errors import DuelError, invalid_argument
from ..participant import LeaseKeeper, SeatStash, rule_on_challenges
from ..record import Claimant, History, RecordFile
from ..turns import OUTCOMES, Challenge, challenged, turn_guide, turn_invalid
from ..vocabulary import (
    CLAIM_LOCK,
    CLAIM_TIMEOUT,
    CLOSE,
    CLOSE_TIMEOUT,
    CLOSED_STEP,
    COMMIT_OPENING,
    COMPOSE_TURN,
    RELEASE_LOCK,
    WAIT_PEER,
    WAIT_TURN,
    ErrorCode,
    Readable,
    Role,
)

if TYPE_CHECKING:
    from ..coordination import DuelService
    from ..participant import ChallengeCheck, CitationChecker
    from ..settings import DuelSettings

__all__ = ["PAGE_LINES", "AgentSeat", "Readable", "SeatDefaults", "public"]

PAGE_LINES: Final = 200  # source lines, or artifact lines of turns, a page of duel_read holds
WAIT_SLICE_SECONDS: Final = 2.0  # a wait looks for cancellation and reports progress this often
# A duel_wait answers within this by default, well inside every harness's tool timeout (Codex and the MCP
# TypeScript client give up at 60 s, and progress extends no harness's): an agent calls it again.
WAIT_BOUND_SECONDS: Final = 45.0
WAITING_STEPS: Final = (WAIT_PEER, WAIT_TURN)  # the steps a wait blocks on: every other asks the agent to act
SECRETS: Final = ("participant_token", "lease_token")

# What each next_step asks of the agent, in the tools' words.
STEP_WORDS: Final = {
    WAIT_PEER: "wait for the other seats to join: call duel_wait",
    COMMIT_OPENING: (
        "the openings are sealed: write your opening (turn number = your seat) without any other opening in sight, "
        "and call duel_commit_opening; once every seat has committed, duel_claim and duel_append with no turn reveal it"
    ),
    CLAIM_LOCK: "it is your turn: call duel_claim",
    WAIT_TURN: "another seat has the floor: call duel_wait",
    COMPOSE_TURN: "you hold the floor: read (duel_read), write your turn, and call duel_append",
    RELEASE_LOCK: "give the floor back: call duel_release",
    CLOSE: "an outcome is reached: call duel_close",
    CLAIM_TIMEOUT: "a deadline passed: call duel_claim with for_timeout true to close the duel TIMEOUT",
    CLOSE_TIMEOUT: "you hold the floor to close the duel TIMEOUT: call duel_close",
    CLOSED_STEP: "the duel is closed: nothing more to do",
}


@dataclass(kw_only=True, frozen=True)
class SeatDefaults:
    """What ``duel mcp`` was started with: a call's own arguments override each."""

    target: str | None
    name: str | None
    harness: str
    model: str
    topic: str | None
    settings: DuelSettings
    role: str | None = None
    persona: str | None = None
    wait_seconds: float = WAIT_BOUND_SECONDS  # the longest a duel_wait blocks (``duel mcp --wait-seconds``)


def public(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer with its secrets left out: the model never sees a token."""
    return {key: value for key, value in answer.items() if key not in SECRETS}


class AgentSeat:
    """The seat of one ``duel mcp`` process, from its join to the duel's close."""

    def __init__(
        self,
        service: DuelService,
        defaults: SeatDefaults,
        checker: CitationChecker | None = None,
        *,
        allow_private_hosts: bool = False,
    ):
        self.service = service
        self.defaults = defaults
        self.checker = checker  # --verify: a draft's URLs are checked before it is appended
        self.allow_private_hosts = allow_private_hosts  # the sources a turn challenges may be on private hosts
        self._challenge_checker = checker  # without --verify, made at the first challenge: fetching only then
        self.seat: Seat | None = None
        self.target: str | None = None
        self.lease: LeaseToken | None = None
        self._keeper: LeaseKeeper | None = None
        self._stash: SeatStash | None = None
        self._lease_seconds = 0
        self.opening: str | None = None  # the sealed opening committed: what an empty duel_append reveals
        self.seen_step: str | None = None  # the next_step this seat was last told: what a wait waits to change
        self._marked_at = -float("inf")  # when a wait last marked the seat present (monotonic)

    # -- joining -----------------------------------------------------------------------------
    def join(
        self,
        *,
        target: str | None = None,
        name: str | None = None,
        model: str | None = None,
        topic: str | None = None,
        role: str | None = None,
        persona: str | None = None,
    ) -> dict[str, Any]:
        """Take the seat (or resume the one this process or an earlier one took); the join's answer."""
        chosen = target or self.defaults.target
        if not chosen:
            raise invalid_argument("duel_join needs a target: the path of the Markdown document to debate")
        chosen = str(Path(chosen).expanduser().resolve())
        if self.seat is not None and chosen != self.target:
            raise invalid_argument(f"this server already holds a seat in the duel about {self.target}")
        who = name or self.defaults.name
        if not who:
            raise invalid_argument("duel_join needs a name: the display name this seat writes under")
        claimant = Claimant(who, self.defaults.harness, model or self.defaults.model)
        topic = topic or self.defaults.topic
        stash = self._stash or SeatStash.of(self.service.debate, chosen, topic, claimant)
        if self._stash is None:
            stash.__enter__()  # held while the process lives: a second server with this name is SEAT_TAKEN
        try:
            joined = self.service.join(
                target=chosen,
                participant_name=claimant.name,
                topic=topic,
                harness=claimant.harness,
                model_id=claimant.model_id,
                participant_token=stash.token(),
                settings=self.defaults.settings,
                role=role or self.defaults.role or Role.PANELIST,
                persona=persona or self.defaults.persona,
            )
        except DuelError:
            if self._stash is None:  # a refused first join pins no name: the agent may join again as another
                stash.__exit__()
            raise
        stash.save(joined.seat)
        self._stash = stash
        self.seat, self.target, self._lease_seconds = joined.seat, chosen, joined.lease_seconds
        return self._told(public(joined.to_dict()))

    def _seated(self) -> Seat:
        if self.seat is None:
            raise DuelError(ErrorCode.DUEL_NOT_FOUND, "not joined yet: call duel_join first")
        return self.seat

    # -- reading -----------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """The duel as this seat sees it, with the time left and the next step in words."""
        seat = self._seated()
        status = self.service.status(seat.duel_id, participant_id=seat.participant_id, participant_token=seat.token)
        return self._described(status)

    def _described(self, status: StatusResult) -> dict[str, Any]:
        answer = self._told(public(status.to_dict()))
        step = answer.get("next_step")
        answer["next_step_words"] = STEP_WORDS.get(step, "") if isinstance(step, str) else ""
        deadline = status.turn_deadline
        now = self.service.clock().wall
        answer["turn_seconds_left"] = None if deadline is None else max(0, round(deadline - now))
        held = self.seat is not None and status.lock.owner_participant_id == self.seat.participant_id
        if self.lease is not None and not held:  # the lease ended (its deadline, a lapse): stop keeping it
            self._let_go()
        answer["floor_held_by_you"] = held  # as the status read it, not as this process last knew
        return answer

    def _told(self, answer: dict[str, Any]) -> dict[str, Any]:
        """``answer``, its next step remembered as the one this seat was last told."""
        step = answer.get("next_step")
        if isinstance(step, str):
            self.seen_step = step
        return answer

    def rules(self) -> str:
        """The turn's format and rules (what the service enforces), with the outcomes."""
        source = self.service.source(self._seated().duel_id).name if self.seat else "design.md"
        outcomes = "\n".join(f"- `{name}`: {when}" for name, when in OUTCOMES.items())
        return f"{turn_guide(source)}\n\n## Outcomes\n\n{outcomes}\n"

    def source_text(self) -> str:
        """The source as the duel pinned it, each line numbered as citations number it."""
        source = self.service.source(self._seated().duel_id)
        return "\n".join(f"{n:>5}  {line}" for n, line in enumerate(source.lines, 1))

    def artifact_text(self) -> str:
        """The debate record as it stands, as every view shows it: a claim a ruling redacted is never shown."""
        status = self.service.status(self._seated().duel_id)
        return RecordFile.read(status.duel.debate_path, find_source=False).shown_text()

    def read(self, what: Readable = "turns", page: int = 1) -> dict[str, Any]:
        """A page of the source with line numbers (``what="source"``), or of the turns so far."""
        seat = self._seated()
        if page < 1:
            raise invalid_argument("page counts from 1")
        if what == "source":
            lines = self.source_text().split("\n")
            name = self.service.source(seat.duel_id).name
        elif what == "turns":
            status = self.service.status(seat.duel_id)
            blocks = self._history(seat, status).shown_blocks()  # a claim a ruling redacted is never shown
            lines = [line for block in blocks for line in block.text.split("\n")]
            name = f"{status.turn_count} turns"
        else:
            raise invalid_argument(f"what must be source or turns, not {what!r}")
        pages = max(1, -(-len(lines) // PAGE_LINES))
        if page > pages:
            raise invalid_argument(f"page {page} is past the last, {pages}")
        chunk = lines[(page - 1) * PAGE_LINES : page * PAGE_LINES]
        return {"what": what, "name": name, "page": page, "pages": pages, "text": "\n".join(chunk)}

    # -- the floor ---------------------------------------------------------------------------
    def claim(self, *, for_timeout: bool = False) -> dict[str, Any]:
        """Ask for the floor; granted, the lease is kept fresh until the turn deadline."""
        seat = self._seated()
        claimed = self.service.claim_lock(seat, for_timeout=for_timeout)
        if claimed.acquired and claimed.lease is not None:
            self._hold(claimed.lease)
        return self._told(public(claimed.to_dict()))

    def _hold(self, lease: LeaseToken) -> None:
        self._let_go()
        self.lease = lease
        status = self.service.status(self._seated().duel_id)
        deadline = status.turn_deadline or self.service.clock().wall + status.duel.turn_timeout_seconds
        monotonic_deadline = time.monotonic() + (deadline - self.service.clock().wall)
        self._keeper = LeaseKeeper(
            service=self.service,
            seat=self._seated(),
            lease=lease,
            lease_seconds=self._lease_seconds,
            deadline=monotonic_deadline,
        )
        self._keeper.__enter__()

    def _let_go(self) -> None:
        """Stop refreshing: the lease is spent (appended with release, released, or lost)."""
        if self._keeper is not None:
            self._keeper.__exit__()
        self._keeper = None
        self.lease = None

    def commit_opening(self, text: str) -> dict[str, Any]:
        """Commit the seat's sealed opening: checked, its hash kept by the service, the text kept here for the reveal."""
        seat = self._seated()
        if self.checker is not None:
            self._check_citations(seat, text)
        committed = self.service.commit_opening(seat, text.encode("utf-8"))
        self.opening = text
        return public(committed.to_dict())

    def append(self, text: str, *, release: bool = True) -> dict[str, Any]:
        """Append a turn (``TURN_INVALID`` lists every violation, and the floor stays held for the repair);
        an empty one is the sealed opening committed, revealed as it was committed."""
        seat = self._seated()
        if not text.strip() and self.opening is not None:
            text = self.opening
        if self.lease is None:
            raise DuelError(ErrorCode.LEASE_NOT_HELD, "you do not hold the floor: call duel_claim first")
        if self.checker is not None:
            self._check_citations(seat, text)
        challenges = challenged(text)
        lease = self.lease
        try:  # a challenge is ruled on before the floor passes on
            appended = self.service.append(seat, lease, text.encode("utf-8"), release=release and not challenges)
        except DuelError as exc:
            if exc.code in (ErrorCode.LEASE_NOT_HELD, ErrorCode.LEASE_EXPIRED, ErrorCode.TURN_DEADLINE_PASSED):
                self._let_go()
            raise
        answer = public(appended.to_dict())
        if challenges:
            try:
                answer |= self._rule_on(seat, appended.turn_number, challenges)
            finally:
                if release and appended.terminal_outcome is None:  # an outcome keeps the floor for the close
                    self._let_go()
                    with contextlib.suppress(DuelError):  # a lease lost meanwhile has passed on already
                        self.service.release_lock(seat, lease)
        if release:
            self._let_go()
        return self._told(answer)

    def _rule_on(self, seat: Seat, number: int, challenges: list[Challenge]) -> dict[str, Any]:
        """Fetch and rule on the sources turn ``number`` challenged, as ``duel join`` does; what the answer says of
        it: each challenged turn's verdict counts and the rulings written (docs/protocol.md section 10, "Challenges")."""
        if self._challenge_checker is None:
            from ..participant import citation_checker  # fetching is paid for only by a challenge

            self._challenge_checker = citation_checker([], allow_private_hosts=self.allow_private_hosts)
        status = self.service.status(seat.duel_id)
        try:
            history = self._history(seat, status)
            ruled = rule_on_challenges(
                self.service,
                seat,
                number,
                challenges,
                checker=self._challenge_checker,
                history=history,
                participants=status.participants,
            )
        except (OSError, UnicodeDecodeError, ValueError) as exc:  # the turn stands: only its challenges are unruled
            return {"challenges_not_checked": f"the record cannot be read ({exc})"}
        except DuelError as exc:
            return {"challenges_not_checked": f"{exc.code}: {exc.message}"}
        return {"challenges": [_challenge_answer(each) for each in ruled]}

    def _history(self, seat: Seat, status: StatusResult) -> History:
        """The record up to the turns ``status`` counts, read against the source the duel pinned."""
        record = RecordFile.read(status.duel.debate_path, source=self.service.source(seat.duel_id))
        return record.history(upto=status.turn_count)

    def _check_citations(self, seat: Seat, text: str) -> None:
        """``--verify``: the draft's URLs opened first; a fabricated one is a violation, as in ``duel join --verify``."""
        checker = self.checker
        if checker is None:
            return
        status = self.service.status(seat.duel_id)
        history = self._history(seat, status)
        number = status.next_turn
        citations = checker.draft_citations(number, text, history)
        if not citations:
            return
        check = checker.check(number, seat.participant_id, citations, draft=1)
        violations = check.violations(text)
        self.service.record_verdicts(seat, number, check.verdicts(sent_back=bool(violations)))
        if violations:
            raise turn_invalid(number, violations)

    def release(self) -> dict[str, Any]:
        """Give the floor back without a turn."""
        seat = self._seated()
        released = self.service.release_lock(seat, self.lease)
        self._let_go()  # only once released: a refusal leaves the floor as it was
        return self._told(public(released.to_dict()))

    def close(self, *, outcome: str | None = None, reason: str | None = None) -> dict[str, Any]:
        """Close the duel with the outcome it reached (or ``outcome``, INVALIDATED with a ``reason``)."""
        seat = self._seated()
        if self.lease is None:  # the floor is taken for the close, as duel join takes it
            claimed = self.service.claim_lock(seat, for_timeout=outcome == "TIMEOUT")
            if claimed.lease is None:
                raise DuelError(ErrorCode.LEASE_NOT_HELD, f"the floor is not yours to close the duel: {claimed.reason}")
            self.lease = claimed.lease
        chosen = outcome or self.service.status(seat.duel_id).duel.pending_outcome
        closed = self.service.release_lock(seat, self.lease, close=True, outcome=chosen, reason=reason)
        self._let_go()  # only once closed: a refused close (a wrong outcome) keeps the floor for another try
        return self._told(public(closed.to_dict()))

    # -- waiting -----------------------------------------------------------------------------
    def wait(
        self,
        timeout: float | None = None,
        *,
        next_step: str | None = None,
        progress: Callable[[float, str], None] = lambda _seconds, _line: None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> dict[str, Any]:
        """Block until this seat's next step is no longer the one it was last told (``next_step``, else the
        last answer's), at most ``timeout`` seconds and never past the server's bound, in slices: ``progress``
        hears the seconds waited after each, and ``cancelled`` stops the wait between them. It returns at once
        when the step already moved on, or asks the agent to act: a wait never blocks through its own turn."""
        seat = self._seated()
        bound = self.defaults.wait_seconds if timeout is None else min(timeout, self.defaults.wait_seconds)
        seen = next_step or self.seen_step
        now = self.service.status(seat.duel_id, participant_id=seat.participant_id)
        step = now.next_step
        if step not in WAITING_STEPS or (seen is not None and step != seen):
            return {**self._described(now), "changed": seen is not None and step != seen, "waited_seconds": 0.0}
        started = time.monotonic()
        while True:
            left = bound - (time.monotonic() - started)
            waited = self.service.wait(
                seat.duel_id,
                seat.participant_id,
                max(0.0, min(WAIT_SLICE_SECONDS, left)),
                next_step=step,
                participant_token=self._presence(seat),
            )
            seconds = round(time.monotonic() - started, 1)
            if waited.next_step != step or left <= WAIT_SLICE_SECONDS or cancelled():
                answer = self._described(waited)
                return {**answer, "changed": waited.next_step != step, "waited_seconds": seconds}
            progress(seconds, f"waiting: {STEP_WORDS[step]} ({seconds:g} s)")

    def _presence(self, seat: Seat) -> str | None:
        """The token for a wait slice that marks the seat present, once every third of a lease (as
        ``duel tools wait`` marks it); None for the others, so an idle wait does not rewrite the state."""
        if time.monotonic() - self._marked_at < self._lease_seconds / 3:
            return None
        self._marked_at = time.monotonic()
        return seat.token

    def stop(self) -> None:
        """The server is ending: stop refreshing, give the floor back, keep the seat."""
        if self.seat is not None and self.lease is not None:
            lease = self.lease
            self._let_go()
            with contextlib.suppress(DuelError):  # else the lease expires by itself
                self.service.release_lock(self.seat, lease)
        if self._stash is not None:
            self._stash.__exit__()


def _challenge_answer(ruled: ChallengeCheck) -> dict[str, Any]:
    """One challenged turn as ``duel_append`` answers it: what its sources were found to be, and the rulings
    written (none for a source ruled on already, whose ruling answers the challenge)."""
    return {
        "turn": ruled.turn,
        "writer": ruled.writer,
        "counts": ruled.check.counts(),
        "rulings": [
            {"r": r.r, "where": r.where, "url": r.url, "verdict": r.verdict, "evidence": r.shown_evidence}
            for r in ruled.rulings
        ],
    }
