"""``duel join --verify``: a participant checks the URLs its own drafts and its peer's turns cite.

Its own draft, before it is appended, mechanically only: a dead link, or a quoted excerpt
that is not on its page, is ``fabricated`` and goes back to the writer as a
``CITATION_FABRICATED`` violation, in the repair loop of the turn rules. Each accepted turn
of the peer, once: by the quorum when ``--voter`` named voters, else mechanically; its
verdicts go into the participant's next instruction (:func:`rp1_duel.participant.prompt.peer_verdicts`).
Every check is logged as a ``citations_verified`` event (docs/protocol.md sections 9 and 10).
The sources a turn challenges (``**Source Challenges**``) are checked by :func:`rule_on_challenges`
the moment the turn is appended, floor still held, for ``duel join`` and ``duel mcp`` alike.

The citations are the record's own: :func:`~rp1_duel.record.citations.turn_citations` over the
block the service would write, so a draft's verdicts name what ``duel verify`` will name.
The fetching is a :class:`~rp1_duel.verify.run.Verifier`'s, built by :func:`citation_checker`
with lazy imports: ``duel join`` without ``--verify`` never loads the fetcher or the page
extractors.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ..coordination import CheckedCitation, CitationsVerified, CitationVerdicts, Event
from ..record import Citation, CitationEntry, turn_block, turn_citations, verdict_counts
from ..turns import TurnViolation, lines_before_turn, normalize_turn_text, parse_turn
from ..vocabulary import CHAIR_PHASES, VERDICTS, CitationKind, RecordCode, Verdict

if TYPE_CHECKING:
    from ..coordination import DuelService, ParticipantView, Seat
    from ..record import History, Ruling
    from ..turns import Challenge
    from ..verify import Verifier
    from .voters import ProviderVoter

__all__ = [
    "OWN_DRAFTS_MECHANICAL",
    "ChallengeCheck",
    "CitationCheck",
    "CitationChecker",
    "checkable",
    "citation_checker",
    "rule_on_challenges",
]

# Why a claim in the participant's own draft is left unjudged even when voters sit: a model
# judging its own citations proves little, and a draft is checked before every repair.
OWN_DRAFTS_MECHANICAL: Final = "a participant checks its own drafts mechanically"


@dataclass(kw_only=True, frozen=True)
class CitationCheck:
    """The URL citations of turn ``number``, or of a draft of it, with their verdicts."""

    number: int
    writer_id: str  # the participant whose turn or draft it is
    draft: (
        int | None
    )  # 1 for the checker's own first draft of the turn, 2 for its first repair…; None: an accepted turn
    entries: tuple[CitationEntry, ...]

    @property
    def fabricated(self) -> tuple[CitationEntry, ...]:
        """The entries judged ``fabricated``: a dead link, or an excerpt not on its page."""
        return tuple(entry for entry in self.entries if entry.verdict == Verdict.FABRICATED)

    @property
    def voters(self) -> tuple[str, ...]:
        """The voters that judged a claim of this check; () when it was mechanical only."""
        return tuple(dict.fromkeys(vote.voter for entry in self.entries for vote in entry.votes))

    def counts(self) -> dict[str, int]:
        """How many citations got each verdict."""
        return verdict_counts(self.entries)

    def violations(self, draft: str) -> list[TurnViolation]:
        """Each fabricated citation of a draft as a violation to repair, at its line of ``draft``
        as written (a citation counts the stored turn's lines, from its heading)."""
        shift = lines_before_turn(draft)
        return [
            TurnViolation(
                code=RecordCode.CITATION_FABRICATED,
                message=f"{entry.citation.item}: {entry.reason}; cite a page that holds what you claim and "
                "quote it word for word, or remove the citation",
                line=None if entry.citation.line is None else entry.citation.line + shift,
                section=entry.citation.section,
            )
            for entry in self.fabricated
        ]

    def verdicts(self, *, sent_back: bool = False) -> CitationVerdicts:
        """What the ``citations_verified`` event of this check says."""
        return CitationVerdicts(
            writer=self.writer_id,
            draft=self.draft,
            sent_back=sent_back,
            voters=self.voters,
            counts=self.counts(),
            citations=tuple(
                CheckedCitation(
                    line=entry.citation.line,
                    item=entry.citation.item,
                    url=entry.citation.url,
                    verdict=entry.verdict,
                    confidence=entry.confidence,
                    reason=entry.reason,
                )
                for entry in self.entries
            ),
        )


def checkable(citations: Iterable[Citation]) -> list[Citation]:
    """The citations a check opens: URLs (source and turn references were checked at append,
    a principle cannot be)."""
    return [citation for citation in citations if citation.kind == CitationKind.URL]


class CitationChecker:
    """One participant run's checks: one verifier, so a page is fetched once across drafts and
    turns; the voters only for the peer's turns."""

    def __init__(self, verifier: Verifier, voters: Sequence[ProviderVoter] = ()):
        self.verifier = verifier
        self.voters = voters

    def preflight(self) -> list[str]:
        """Check each voter's key and model before the seat is taken (raises ProviderError)."""
        return [f"voter {name}: {voter.preflight()}" for name, voter in {v.name: v for v in self.voters}.items()]

    @staticmethod
    def draft_citations(number: int, draft: str, history: History) -> list[Citation]:
        """The URL citations of a draft of turn ``number``, as they will stand once it is
        appended after ``history``: the record's own reading of the block the service would write."""
        block = turn_block(number, normalize_turn_text(draft), history.head)
        chair = history.schedule.phase(number) in CHAIR_PHASES
        return checkable(turn_citations(number, block, parse_turn(block.body, chair=chair), history.source_names))

    @staticmethod
    def turn_citations(number: int, history: History) -> list[Citation]:
        """The URL citations of accepted turn ``number`` of ``history``."""
        return checkable(turn_citations(number, history.block(number), history.turn(number), history.source_names))

    def check(
        self, number: int, writer_id: str, citations: Sequence[Citation], draft: int | None = None
    ) -> CitationCheck:
        """The verdicts of ``citations``: a draft's (``draft`` given) mechanically only."""
        if not citations:
            return CitationCheck(number=number, writer_id=writer_id, draft=draft, entries=())
        verification = self.verifier.verify(citations, unjudged_because=OWN_DRAFTS_MECHANICAL if draft else None)
        return CitationCheck(number=number, writer_id=writer_id, draft=draft, entries=verification.entries)

    @staticmethod
    def summary(events: Iterable[Event], participant_id: str, turns_written: Sequence[int]) -> dict[str, Any]:
        """What ``--json`` says of a participant's checks over every run, from its events: how
        many drafts went back for a fabricated citation, and the verdicts of its turns as
        appended (each turn's last checked draft) and of the peer's turns."""
        own: dict[int, CitationVerdicts] = {}
        peer: dict[int, CitationVerdicts] = {}
        sent_back = 0
        for event in events:
            if not isinstance(event.data, CitationsVerified) or event.participant_id != participant_id:
                continue
            number, verdicts = event.data.turn_number, event.data.verdicts
            if verdicts.draft is None:
                peer[number] = verdicts
            else:
                own[number] = verdicts
                sent_back += verdicts.sent_back
        return {
            "drafts_sent_back": sent_back,
            "own_turns": _summed(verdicts for number, verdicts in own.items() if number in turns_written),
            "peer_turns": _summed(peer.values()),
        }


def _summed(checks: Iterable[CitationVerdicts]) -> dict[str, int]:
    """The counts of ``checks`` added up, in VERDICTS order; a verdict this version does not know is left out."""
    totals: dict[str, int] = {}
    for verdicts in checks:
        for verdict, count in verdicts.counts.items():
            totals[verdict] = totals.get(verdict, 0) + count
    return {verdict: totals[verdict] for verdict in VERDICTS if verdict in totals}


def citation_checker(
    voter_models: Sequence[str], *, allow_private_hosts: bool, env: Mapping[str, str] = os.environ
) -> CitationChecker:
    """The checker of a ``duel join --verify`` run: guarded fetches as ``duel verify`` makes them,
    and voters only when ``--voter`` names them, so ``--verify`` never spends on a model unasked."""
    from ..verify import Fetcher, FetchPolicy, Verifier
    from .voters import configured_voters

    voters = configured_voters(env, voter_models) if voter_models else []
    return CitationChecker(Verifier(Fetcher(FetchPolicy(allow_private_hosts=allow_private_hosts)), voters), voters)


@dataclass(kw_only=True, frozen=True)
class ChallengeCheck:
    """The check of the sources one turn's challenges named in turn ``turn``, and the rulings it wrote."""

    turn: int
    writer: str  # the display name of who wrote turn ``turn``
    check: CitationCheck
    rulings: tuple[Ruling, ...]  # none for a citation ruled on already: that ruling answers the challenge


def rule_on_challenges(
    service: DuelService,
    seat: Seat,
    number: int,
    challenges: Sequence[Challenge],
    *,
    checker: CitationChecker,
    history: History,
    participants: Sequence[ParticipantView],
    checking: Callable[[int, str, int], None] = lambda _turn, _writer, _citations: None,
) -> list[ChallengeCheck]:
    """Check each citation that turn ``number`` of ``seat`` challenged, turn by turn, and record the verdicts
    through the service, whose rulings read "seat S's challenge in turn ``number``" (docs/protocol.md section 10,
    "Challenges"). Called with the floor still held, so each ruling is in the record before the next turn is
    claimed; ``history`` holds turn ``number``. ``checking`` hears each turn's number, writer and citation count
    before its pages are opened."""
    done = []
    for turn in sorted({challenge.turn for challenge in challenges}):
        urls = {challenge.url for challenge in challenges if challenge.turn == turn}
        citations = [citation for citation in checker.turn_citations(turn, history) if citation.url in urls]
        speaker = history.schedule.speaker(turn)
        writer = next((p for p in participants if p.seat == speaker and p.id != seat.participant_id), None)
        if not citations or writer is None:  # the service refused any other challenge at the append
            continue
        checking(turn, writer.display_name, len(citations))
        check = checker.check(turn, writer.id, citations)
        rulings = service.record_verdicts(seat, turn, check.verdicts(), challenge=number)
        done.append(ChallengeCheck(turn=turn, writer=writer.display_name, check=check, rulings=tuple(rulings)))
    return done
