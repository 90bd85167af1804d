"""What a turn is checked against: the core every turn has, and one optional context per feature."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from ...vocabulary import CHAIR_PHASES
from ..grammar import ParsedTurn
from ..novelty import NoveltyIndex
from ..source import SourceDocument
from ._audience import AudienceContext
from ._chair import ChairContext
from ._edits import EditsContext
from ._rulings import RulingsContext

__all__ = ["TurnContext"]


@dataclass(kw_only=True, frozen=True)
class TurnContext:
    """What a turn is checked against: its number, its claimant, the source and the turns before it, and
    what each feature in play asks of it (None: the feature is not in play for this turn)."""

    turn_number: int
    participant_name: str
    harness: str
    model_id: str
    source: SourceDocument | None = None
    # The names the source may be cited by, besides its file name: the path the artifact
    # records (see rp1_duel.record.history.citable_names), so every clone reads the same.
    source_names: Sequence[str] = ()
    prior_turns: Sequence[ParsedTurn] = ()  # the turns before this one, in order
    previous_stance: str | None = None  # this participant's previous stance
    novelty: NoveltyIndex | None = None  # positions and claims of the prior turns
    chair: ChairContext | None = None  # None without a chair
    edits: EditsContext | None = None
    audience: AudienceContext | None = None
    rulings: RulingsContext | None = None

    @property
    def by_chair(self) -> bool:
        """Whether the turn is the chair's (its phase is one of the chair's)."""
        return self.chair is not None and self.chair.phase in CHAIR_PHASES

    @property
    def citable_names(self) -> tuple[str, ...]:
        """Every name the source may be cited by, without a leading ``./``, longest first."""
        names = list(self.source_names)
        if self.source is not None:
            names.append(self.source.name)
        unique = {name.removeprefix("./") for name in names if name}
        return tuple(sorted(unique, key=len, reverse=True))  # longest first: paths before names

    def prior_turn(self, number: int) -> ParsedTurn | None:
        """Earlier turn ``number``, if it is one of the turns before this one (found by its heading's number)."""
        return self._prior_by_number.get(number) if number < self.turn_number else None

    @cached_property
    def _prior_by_number(self) -> Mapping[int, ParsedTurn]:
        found: dict[int, ParsedTurn] = {}
        for turn in self.prior_turns:
            if turn.number is not None:
                found.setdefault(turn.number, turn)  # a record that repeats a number: the first one counts
        return found
