"""The citation checks one seat of ``duel join`` runs (:mod:`.checking` does the checking): with
``--verify`` its own drafts' URLs before each is appended, and the others' turns once each, their
verdicts shown in its next instruction; with or without it, the sources its turns challenge,
ruled on at once while the floor is still held (docs/protocol.md section 10)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from . import prompt
from ._deadlines import Deadlines, TurnStopped
from .lease_keeper import LeaseKeeper
from .reporter import DEBATING

if TYPE_CHECKING:  # duel join --verify, or a challenge, only: else nothing of the checks is loaded
    from ..coordination import DuelService, LeaseToken, ParticipantView, Seat, StatusResult
    from ..record import History
    from ..schedule import Schedule
    from ..turns import Challenge, TurnViolation
    from .checking import CitationCheck, CitationChecker
    from .reporter import ParticipantState, Reporter

__all__ = ["SeatChecks", "writer_of"]


def writer_of(
    participants: Sequence[ParticipantView], schedule: Schedule, number: int, me: str
) -> ParticipantView | None:
    """Who wrote turn ``number``, unless it is the participant ``me``."""
    seat = schedule.speaker(number)
    return next((p for p in participants if p.seat == seat and p.id != me), None)


class SeatChecks:
    """What one seat checks of the sources cited and challenged, each turn at most once a run."""

    def __init__(
        self,
        *,
        checker: CitationChecker | None,
        service: DuelService,
        seat: Seat,
        schedule: Schedule,
        reporter: Reporter,
        deadlines: Deadlines,
        allow_private_hosts: bool,
    ) -> None:
        self.checker = checker  # --verify
        self._service, self._seat, self._schedule = service, seat, schedule
        self._report, self._deadlines = reporter, deadlines
        self._allow_private_hosts = allow_private_hosts
        self._checked: dict[int, CitationCheck | None] = {}  # peer turns checked (None: abandoned at a deadline)
        self._challenge_checker = checker  # without --verify, made at the first challenge: fetching only then

    def others_since_mine(self, status: StatusResult, latest: int) -> list[tuple[int, ParticipantView]]:
        """The turns up to ``latest`` that others wrote since this seat's own last one, with their writers."""
        me = self._seat.participant_id
        found = [
            (number, writer_of(status.participants, self._schedule, number, me))
            for number in self._schedule.others_since(self._seat.number, latest)
        ]
        return [(number, peer) for number, peer in found if peer is not None]

    def peer_verdicts(self, history: History, status: StatusResult, deadline: float, lost: threading.Event) -> str:
        """With --verify, the verdicts on the URLs of every turn the others wrote since this seat's own
        last one (one in a duel, N - 1 in a panel), each checked once a run, for this turn's instruction."""
        if self.checker is None:
            return ""
        blocks = []
        for number, peer in self.others_since_mine(status, history.next_number - 1):
            if number not in self._checked:  # once a run; None, abandoned at the deadline, is not begun again
                self._checked[number] = self._check_peer_turn(
                    self.checker, history, number, peer=peer, deadline=deadline
                )
            check = self._checked[number]
            # Abandoned, now or at an earlier try of this turn (a deadline this process keeps may pass a moment
            # before the service's): the turn is lost, and never written without the verdicts.
            if check is None or lost.is_set():
                raise TurnStopped
            if check:
                blocks.append(prompt.peer_verdicts(number, peer.display_name, check.entries, check.voters))
        return "".join(blocks)

    def check_draft(
        self,
        history: History,
        *,
        number: int,
        attempt: int,
        draft: str,
        deadline: float,
        lost: threading.Event,
        repairs_allowed: int | None,
    ) -> list[TurnViolation]:
        """With --verify, the URLs of this seat's draft checked: each fabricated one is a violation to repair."""
        checker = self.checker
        if checker is None:
            return []
        citations = checker.draft_citations(number, draft, history)
        if not citations:
            return []
        me = self._seat.participant_id
        self._report.verifying(number, None, len(citations))
        check = self._deadlines.run(
            functools.partial(checker.check, number, me, citations, draft=attempt + 1), deadline
        )
        if check is None:
            raise TurnStopped
        violations = check.violations(draft)
        sent_back = bool(violations) and (repairs_allowed is None or attempt < repairs_allowed)
        self._service.record_verdicts(self._seat, number, check.verdicts(sent_back=sent_back))
        self._report.verified(number, None, check.counts(), sent_back=sent_back)
        if lost.is_set():
            raise TurnStopped
        return violations

    def check_last_peer_turns(
        self, status: StatusResult, read_history: Callable[[StatusResult], History], *, state: ParticipantState
    ) -> None:
        """The others' turns that ended the duel are checked too, for the record: no prompt follows them."""
        checker = self.checker
        if checker is None:
            return
        unchecked = [
            (number, peer)
            for number, peer in self.others_since_mine(status, status.next_turn - 1)
            if number not in self._checked
        ]
        if not unchecked:
            return
        try:
            history = read_history(status)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            self._report.state(state, f"turns not checked: the record cannot be read ({exc})")
            return
        for number, peer in unchecked:
            self._checked[number] = self._check_peer_turn(checker, history, number, peer=peer, deadline=None)

    def rule_on_challenges(
        self,
        number: int,
        *,
        lease: LeaseToken,
        lease_seconds: int,
        challenges: list[Challenge],
        read_history: Callable[[StatusResult], History],
        deadline_of: Callable[[StatusResult], float],
    ) -> None:
        """Verify each source turn ``number`` challenged, at once and while the floor is still held (the lease
        refreshed while pages load), so its ruling is in the record before the next turn is claimed
        (docs/protocol.md section 10, "Challenges"). Without --verify the check is mechanical (fetch and
        excerpt), as a peer turn's is by default."""
        from .checking import citation_checker, rule_on_challenges  # fetching is paid for only by a challenge

        if self._challenge_checker is None:
            self._challenge_checker = citation_checker([], allow_private_hosts=self._allow_private_hosts)
        status = self._service.status(self._seat.duel_id)
        try:
            history = read_history(status)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            self._report.state(DEBATING, f"challenges not checked: the record cannot be read ({exc})")
            return
        deadline = self._deadlines.monotonic(deadline_of(status))
        keeper = LeaseKeeper(
            service=self._service, seat=self._seat, lease=lease, lease_seconds=lease_seconds, deadline=deadline
        )
        with keeper:
            ruled = rule_on_challenges(
                self._service,
                self._seat,
                number,
                challenges,
                checker=self._challenge_checker,
                history=history,
                participants=status.participants,
                checking=self._report.verifying,
            )
        for each in ruled:
            self._report.verified(each.turn, each.writer, each.check.counts(), sent_back=False)

    def _check_peer_turn(
        self, checker: CitationChecker, history: History, number: int, *, peer: ParticipantView, deadline: float | None
    ) -> CitationCheck | None:
        """Check the URLs of the peer's turn ``number``, log and show the verdicts; None when the
        turn deadline (if any) passed first."""
        citations = checker.turn_citations(number, history)
        if not citations:
            return checker.check(number, peer.id, citations)
        self._report.verifying(number, peer.display_name, len(citations))
        work = functools.partial(checker.check, number, peer.id, citations)
        check = work() if deadline is None else self._deadlines.run(work, deadline)  # at the close: no deadline
        if check is not None:
            self._service.record_verdicts(self._seat, number, check.verdicts())
            self._report.verified(number, peer.display_name, check.counts(), sent_back=False)
        return check
