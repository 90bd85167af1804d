"""One history: replaying a debate's accepted turns, the same way everywhere.

Live append (the service, under the duel's lock), the participant composing its next
turn, ``duel validate`` and the tests all build a :class:`History` and walk the same
record: the hash chain, who holds which seat, each seat's previous stance, the
novelty index of earlier positions and claims, the outcome the turns imply, and the
context the next turn is validated in.

Which names of the source a turn may cite is decided here, from the path the artifact
records (:func:`citable_names`): live append and ``duel validate`` agree before and
after the tree is moved or cloned.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..audience import Question
from ..files import MAX_ARTIFACT_BYTES, read_bounded
from ..schedule import CHAIR_SEAT, Schedule
from ..turns import (
    AudienceContext,
    ChairContext,
    EditsContext,
    NoveltyIndex,
    ParsedTurn,
    Revision,
    RulingsContext,
    SourceDocument,
    TurnContext,
    TurnReport,
    parse_turn,
    validate_turn,
)
from ..vocabulary import Phase, RecordCode
from .artifact import (
    GENESIS,
    FrontMatter,
    FrontMatterError,
    ParsedArtifact,
    TurnBlock,
    decode_artifact,
    parse,
    turn_text,
)
from .outcomes import Evaluation, TurnSummary, evaluate
from .rulings import AGAINST, Ruling, claim_of, parse_ruling, redacted_body
from .sources import recorded_source, source_location

__all__ = [
    "MAX_ARTIFACT_BYTES",
    "ChainProblem",
    "Claimant",
    "History",
    "RecordFile",
    "chain_problems",
    "citable_names",
    "claimants",
    "read_artifact_text",
    "read_failure",
    "source_location",
]


def citable_names(recorded_source_path: str) -> tuple[str, ...]:
    """The source's file name and the path the artifact records: the same on every clone."""
    names = (os.path.basename(recorded_source_path), recorded_source_path)
    return tuple(dict.fromkeys(name for name in names if name))


@dataclass(frozen=True)
class Claimant:
    """Who a turn heading must name."""

    name: str
    harness: str
    model_id: str


@dataclass(frozen=True)
class ChainProblem:
    """A break in the hash chain: its record code, what is wrong, and the block it is found at."""

    code: str  # TURN_ORDER, HASH_CHAIN or HASH_MISMATCH
    message: str
    block: TurnBlock


def chain_problems(blocks: Iterable[TurnBlock], *, first: int) -> Iterator[ChainProblem]:
    """Walk the hash chain: numbers 1, 2, … (0, 1, … with a chair); each ``prev`` the hash before; each hash true."""
    prev = GENESIS
    for number, block in enumerate(blocks, start=first):
        if block.n != number:
            yield ChainProblem(RecordCode.TURN_ORDER, f"turn {block.n} found where turn {number} belongs", block)
        if block.prev != prev:
            yield ChainProblem(
                RecordCode.HASH_CHAIN, f"turn {block.n}: prev does not match turn {number - 1}'s hash", block
            )
        if block.actual_sha256 != block.sha256:
            yield ChainProblem(RecordCode.HASH_MISMATCH, f"turn {block.n} was changed after it was written", block)
        prev = block.sha256


@dataclass(kw_only=True)
class History:
    """The accepted turns of one duel, in order, with what later turns are checked against.

    ``blocks`` and ``turns`` are lists from the first turn (1, or 0 with a chair): look a turn
    up by its number with :meth:`turn` and :meth:`block`, never by index arithmetic.
    """

    source: SourceDocument | None
    source_names: tuple[str, ...]
    schedule: Schedule  # who writes turn n: schedule.speaker(n)
    blocks: list[TurnBlock] = field(default_factory=list)
    turns: list[ParsedTurn] = field(default_factory=list)
    novelty: NoveltyIndex = field(default_factory=NoveltyIndex)
    stances: dict[int, str] = field(default_factory=dict)  # seat -> its latest stance
    # The edits in force (None without the source) and, turn by turn, the revision each accepts:
    # the one it names, else the one in force after it (section 7, "Proposed edits"). Without the
    # source, ``source_sha256`` still names the unchanged document while no edit is in force.
    source_sha256: str | None = None
    revision: Revision | None = None
    accepted: list[str | None] = field(default_factory=list)
    edit_names: set[str] = field(default_factory=set)  # the names of the edits in force
    questions: tuple[Question, ...] = ()  # the audience's, each due at a turn that must answer it
    rulings: tuple[Ruling, ...] = ()  # on cited sources (section 10); a fabricated one redacts a claim

    def __post_init__(self) -> None:
        if self.revision is None and self.source is not None:
            self.revision = Revision(self.source.raw or self.source.text)

    @property
    def numbers(self) -> range:
        """The numbers of the turns accepted so far, in order."""
        first = self.schedule.first
        return range(first, first + len(self.turns))

    def turn(self, number: int) -> ParsedTurn:
        """Accepted turn ``number``; IndexError when there is none."""
        return self.turns[self._index(number)]

    def block(self, number: int) -> TurnBlock:
        """The record block of accepted turn ``number``; IndexError when there is none."""
        return self.blocks[self._index(number)]

    def _index(self, number: int) -> int:
        if number not in self.numbers:
            raise IndexError(f"turn {number} is not in the history")
        return number - self.schedule.first

    @property
    def next_number(self) -> int:
        """The number the next turn will have."""
        return self.schedule.number_after(len(self.turns))

    @property
    def head(self) -> str:
        """The hash the next turn's ``prev`` must name."""
        return self.blocks[-1].sha256 if self.blocks else GENESIS

    def context_for(self, claimant: Claimant, number: int | None = None) -> TurnContext:
        """What turn ``number`` (default: the next) is validated in, by anyone."""
        number = self.next_number if number is None else number
        context = TurnContext(
            turn_number=number,
            participant_name=claimant.name,
            harness=claimant.harness,
            model_id=claimant.model_id,
            source=self.source,
            source_names=self.source_names,
            prior_turns=self.turns,
            previous_stance=self.stances.get(self.schedule.speaker(number)),  # its own turn, a round back
            novelty=self.novelty,
            chair=self._chair_context(number),
            edits=EditsContext(self.revision),
            audience=self._audience_context(number),
            rulings=self._rulings_context(number),
        )
        if not self.schedule.sealed(number):
            return context
        # A sealed opening is checked in the record as it stood before the opening round, whenever it is
        # checked (committed, revealed or validated later): its writer saw no other opening. Openings propose
        # no edits (SEALED_OPENING_EDITS), so the revision before the round is the source's.
        before = self.turns[: self.schedule.openings.start - self.schedule.first]
        return replace(
            context,
            prior_turns=before,
            previous_stance=None,
            novelty=_novelty_of(before),
            edits=EditsContext(Revision(self.source.raw or self.source.text) if self.source else None, sealed=True),
        )

    def _chair_context(self, number: int) -> ChairContext | None:
        """What a chaired duel asks of turn ``number``; None without a chair."""
        phase = self.schedule.phase(number)
        if phase is None:
            return None
        final_turns = self.final_turns(before=number) if phase == Phase.SYNTHESIS else {}
        return ChairContext(phase, self.schedule.pre_closing, final_turns)

    def _audience_context(self, number: int) -> AudienceContext | None:
        """The audience's questions due at turn ``number``; None when none is."""
        due = tuple(question for question in self.questions if question.due_turn == number)
        return AudienceContext(due) if due else None

    def _rulings_context(self, number: int) -> RulingsContext | None:
        """What the rulings written before turn ``number`` ask of it; None when there is none."""
        if not self.rulings:
            return None
        speaker = self.schedule.speaker(number)
        against = self._ruled_against(number)
        return RulingsContext(
            due=self._rulings_due(number) if speaker == CHAIR_SEAT else (),
            redacted=self.redacted_claims(before=number),
            ruled=frozenset(r.url for r in against),
            own_ruled=frozenset(r.url for r in against if r.seat == speaker),
        )

    def redacted_claims(self, *, before: int) -> tuple[str, ...]:
        """The claims fabricated sources were cited for, in rulings written before turn ``before``: no view shows
        them, and no turn written after the ruling may repeat them."""
        found = []
        for ruling in self.rulings:
            if ruling.redacts and ruling.turn in self.numbers and ruling.before <= before:
                claim = claim_of(self.turn(ruling.turn), ruling.where)
                found += [claim] if claim else []
        return tuple(found)

    def _ruled_against(self, number: int) -> list[Ruling]:
        """The rulings written before turn ``number`` that found a source unreliable or fabricated."""
        return [r for r in self.rulings if r.verdict in AGAINST and r.before <= number]

    def _rulings_due(self, number: int) -> tuple[Ruling, ...]:
        """The rulings a chair's turn ``number`` must acknowledge: those written since its previous turn."""
        previous = max((n for n in self.numbers if n < number and self.schedule.speaker(n) == CHAIR_SEAT), default=None)
        return tuple(r for r in self.rulings if (previous is None or r.before > previous) and r.before <= number)

    def shown_blocks(self) -> list[TurnBlock]:
        """The turns as every view shows them (a prompt, a report): each claim a fabricated source was cited for
        replaced by the ruling that redacted it. The record keeps them as written; these are never hashed."""
        shown = list(self.blocks)
        for ruling in self.rulings:
            if ruling.redacts and ruling.turn in self.numbers:
                index = self._index(ruling.turn)
                body = redacted_body(shown[index].body, self.turns[index], [ruling])
                shown[index] = replace(shown[index], text=turn_text(body))
        return shown

    def final_turns(self, *, before: int | None = None) -> dict[int, int]:
        """Each panel seat's latest turn (before turn ``before``, if given): seat -> turn number."""
        speaker = self.schedule.speaker
        latest = (n for n in self.numbers if before is None or n < before)
        return {seat: n for n in latest if (seat := speaker(n)) != CHAIR_SEAT}

    def accept(self, block: TurnBlock, turn: ParsedTurn) -> None:
        """Append the next turn, already checked, and note its claims and its speaker's stance."""
        speaker = self.schedule.speaker(self.next_number)
        self.blocks.append(block)
        self.turns.append(turn)
        self.novelty.add_turn(turn)
        if turn.stance is not None and speaker != CHAIR_SEAT:
            self.stances[speaker] = turn.stance
        self.edit_names -= {name for name, _ in turn.edits.withdrawn}
        self.edit_names |= {edit.name for edit in turn.edits.edits}
        if self.revision is not None and (turn.edits.edits or turn.edits.withdrawn):
            self.revision = self.revision.amended(turn.edits)
        self.accepted.append(turn.accepted_revision or self._in_force())

    def _in_force(self) -> str | None:
        """The id of the revision in force; None when it cannot be known (an edit does not apply,
        or edits are in force and the source is not)."""
        if self.revision is not None:
            return None if self.revision.problems else self.revision.id
        unchanged = self.source_sha256 is not None and not self.edit_names
        return f"r-{self.source_sha256[:12]}" if unchanged and self.source_sha256 else None

    def replay(self, blocks: Iterable[TurnBlock]) -> None:
        """Accept turns the chain vouches for, parsing them without re-checking the rules."""
        for block in blocks:
            self.accept(block, parse_turn(block.body, chair=self.schedule.speaker(self.next_number) == CHAIR_SEAT))

    def replay_checked(
        self, blocks: Iterable[TurnBlock], claimants: dict[int, Claimant]
    ) -> Iterator[tuple[int, TurnReport]]:
        """Accept turns one by one, each validated against every rule in its own context: each
        turn's number and report."""
        nobody = Claimant("", "", "")
        for block in blocks:
            number = self.next_number
            claimant = claimants.get(self.schedule.speaker(number), nobody)
            report = validate_turn(block.body, self.context_for(claimant))
            self.accept(block, report.turn)
            yield number, report

    def summaries(self) -> list[TurnSummary]:
        """Each accepted turn as the outcome rules read it: speaker, stance, whether it blocks."""
        return [
            TurnSummary(
                seat=self.schedule.speaker(n), stance=t.stance or "", has_blocking=t.has_blocking, revision=accepted
            )
            for n, t, accepted in zip(self.numbers, self.turns, self.accepted, strict=True)
        ]

    def evaluate(self) -> Evaluation:
        """The outcome the accepted turns imply so far."""
        return evaluate(self.summaries(), self.schedule)


def _novelty_of(turns: Iterable[ParsedTurn]) -> NoveltyIndex:
    index = NoveltyIndex()
    for turn in turns:
        index.add_turn(turn)
    return index


def claimants(front: FrontMatter) -> dict[int, Claimant]:
    """Who each seat's turn headings must name, by seat, from the participants the header records."""
    return {p.seat: Claimant(p.display_name, p.harness, p.model_id) for p in front.participants}


def read_artifact_text(path: str | os.PathLike[str]) -> str:
    """An artifact's text, bounded; a CRLF or BOM checkout reads as the LF text that was written.
    Raises OSError, UnicodeDecodeError, or ValueError for a file that is not regular or is too large."""
    return decode_artifact(read_bounded(path, MAX_ARTIFACT_BYTES), strict=False)


def read_failure(exc: Exception) -> str:
    """Why a record's file could not be read, on one line: the OS's words, else the refusal's."""
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else (str(exc).splitlines() or [""])[0]


@dataclass(kw_only=True, frozen=True)
class RecordFile:
    """An artifact read from disk: its text, its parts, its typed header and its source."""

    path: Path
    text: str
    parsed: ParsedArtifact
    front: FrontMatter | None
    front_problem: str | None  # why the header is unusable, if it is
    source: SourceDocument | None
    source_note: str | None  # why the source was not read, or which version of it was

    @classmethod
    def read(
        cls,
        path: str | os.PathLike[str],
        *,
        source: SourceDocument | None = None,
        root: str | os.PathLike[str] | None = None,
        find_source: bool = True,
    ) -> RecordFile:
        """Read an artifact and, unless given (or ``find_source`` is false), the source version
        it records (see :mod:`rp1_duel.record.sources`; ``root`` bounds where it may be read).

        A CRLF or BOM checkout reads as the LF text that was written. Raises OSError,
        UnicodeDecodeError, or ValueError for a file that is not regular or is too large.
        """
        where = Path(path)
        text = read_artifact_text(where)
        parsed = parse(text)
        try:
            front = FrontMatter.parse(parsed.front_matter)
        except FrontMatterError as exc:
            return cls(
                path=where,
                text=text,
                parsed=parsed,
                front=None,
                front_problem=str(exc),
                source=source,
                source_note=None,
            )
        note = None
        if source is None and find_source:
            source, note = recorded_source(
                front.source_path,
                recorded_sha256=front.source_sha256,
                artifact_path=where,
                root=root,
                duel_id=front.duel_id,
            )
        return cls(
            path=where, text=text, parsed=parsed, front=front, front_problem=None, source=source, source_note=note
        )

    @property
    def is_artifact(self) -> bool:
        """Whether the file is a duel record at all, however broken: it has front matter or turn blocks. A document
        given where a record belongs (the debated ``design.md``) is not one, and every command says so alike."""
        return self.parsed.front_matter is not None or bool(self.parsed.blocks)

    @property
    def rulings(self) -> tuple[Ruling, ...]:
        """The rulings the record holds, each read back from its block (one the service never wrote is left out)."""
        found = (parse_ruling(block.r, block.text) for block in self.parsed.rulings)
        return tuple(ruling for ruling in found if ruling is not None)

    def shown_text(self) -> str:
        """The record whole as a view serves it (``duel://artifact``): each turn as :meth:`History.shown_blocks`
        shows it, so a claim a fabricated source was cited for is redacted; everything else as written."""
        if not any(ruling.redacts for ruling in self.rulings):
            return self.text
        lines = self.text.split("\n")
        history = self.history()
        for written, shown in zip(history.blocks, history.shown_blocks(), strict=True):
            start = written.line  # the block's text begins on the line after its opening marker
            lines[start : start + written.text.count("\n")] = shown.text.removesuffix("\n").split("\n")
        return "\n".join(lines)

    def history(self, upto: int | None = None) -> History:
        """The history of the first ``upto`` turns (all by default), replayed without rule checks."""
        front = self.front
        if front is None:
            raise FrontMatterError(f"{self.path}: {self.front_problem}")
        history = History(
            source=self.source,
            source_names=citable_names(front.source_path),
            schedule=front.schedule,
            source_sha256=front.source_sha256,
            questions=front.questions,
            rulings=self.rulings,
        )
        history.replay(self.parsed.blocks[:upto])
        return history
