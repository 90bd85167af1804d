"""Who writes turn n, and in which phase: the schedule of a duel, with or without a chair.

Pure, and free of the Markdown parser, so the lock service loads it. Without a chair
turns are numbered from 1 and seats speak round-robin (:func:`seat_of`). With a chair
(docs/protocol.md section 4, "A chair"), ``max_turns`` counts the panel's turns only and
the chair frames them: turn 0 is its opening brief; turns 1 .. max_turns − N are the
opening round and the rebuttal rounds; turn max_turns − N + 1 is its pre-closing list of
unengaged points; the N turns after it are the closing round; the last, max_turns + 2,
is its synthesis.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..vocabulary import Phase
from .outcomes import CHAIR_SEAT as CHAIR_SEAT
from .outcomes import CHAIR_TURNS, seat_of


@dataclass(frozen=True)
class Schedule:
    seats: int = 2
    max_turns: int = 6  # the panel's turns; a chair's three come on top
    chair: bool = False

    @property
    def first(self) -> int:
        """The number of the first turn: the chair's opening brief is turn 0."""
        return 0 if self.chair else 1

    @property
    def last(self) -> int:
        return self.max_turns + CHAIR_TURNS - 1 if self.chair else self.max_turns

    @property
    def turn_count(self) -> int:
        """How many turns a duel that runs its course has."""
        return self.last - self.first + 1

    @property
    def pre_closing(self) -> int | None:
        """The chair's pre-closing turn; None without a chair."""
        return self.max_turns - self.seats + 1 if self.chair else None

    def number_after(self, written: int) -> int:
        """The number of the next turn once ``written`` turns are in the record."""
        return written + self.first

    def panel_index(self, number: int) -> int | None:
        """Turn ``number``'s place among the panel's turns (1, 2, …); None for a chair turn."""
        if not self.chair:
            return number
        pre_closing = self.max_turns - self.seats + 1
        if number in (0, pre_closing, self.last):
            return None
        return number if number < pre_closing else number - 1

    def turn_of(self, index: int) -> int:
        """The number of the panel's ``index``-th turn (the inverse of :meth:`panel_index`)."""
        pre_closing = self.pre_closing
        return index + 1 if pre_closing is not None and index >= pre_closing else index

    def speaker(self, number: int) -> int:
        """The seat that writes turn ``number``: :data:`CHAIR_SEAT` for a chair turn."""
        index = self.panel_index(number)
        return CHAIR_SEAT if index is None else seat_of(index, self.seats)

    def phase(self, number: int) -> str | None:
        """Turn ``number``'s phase in a chaired duel (:class:`~rp1_duel.vocabulary.Phase`); None without a chair."""
        if not self.chair:
            return None
        if number == 0:
            return Phase.OPENING_BRIEF
        if number == self.pre_closing:
            return Phase.PRE_CLOSING
        if number == self.last:
            return Phase.SYNTHESIS
        index = self.panel_index(number) or 0
        if index <= self.seats:
            return Phase.OPENING
        return Phase.CLOSING if index > self.max_turns - self.seats else Phase.REBUTTAL

    def own_turns_before(self, number: int) -> int:
        """How many turns the writer of turn ``number`` wrote before it (a script's file index)."""
        index = self.panel_index(number)
        if index is None:
            return (0, self.pre_closing, self.last).index(number)
        return (index - 1) // self.seats


def speaker_of(number: int, seats: int, max_turns: int, chair: bool) -> int:
    """The seat that writes turn ``number`` (0: the chair); without a chair, :func:`seat_of`."""
    return Schedule(seats, max_turns, chair).speaker(number)
