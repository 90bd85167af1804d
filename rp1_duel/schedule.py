"""Who writes turn n, and in which phase: the schedule of a duel, with or without a chair.

A :class:`Schedule` is the duel's shape (seats, max turns, a chair), made once where a duel
begins (:attr:`rp1_duel.settings.DuelSettings.schedule`) or where a record is read back
(:meth:`Schedule.recorded`), and carried from there: by the state, the front matter, the
history, the report and the listing views.

Pure, and free of the Markdown parser, so the lock service loads it. Without a chair
turns are numbered from 1 and seats speak round-robin. With a chair (docs/protocol.md
section 4, "A chair"), ``max_turns`` counts the panel's turns only and the chair frames
them: turn 0 is its opening brief; turns 1 .. max_turns − N are the opening round and
the rebuttal rounds; turn max_turns − N + 1 is its pre-closing list of unengaged points;
the N turns after it are the closing round; the last, max_turns + 2, is its synthesis.
With sealed openings (section 4, "Sealed openings") the opening round, turns 1 .. N, is written
blind: every seat commits its opening's hash before any opening is appended.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .vocabulary import Phase

__all__ = ["CHAIR_SEAT", "CHAIR_TURNS", "Schedule"]

CHAIR_SEAT = 0  # the chair's turns have no stance: outcomes read the panel's alone
CHAIR_TURNS = 3  # the opening brief, the pre-closing and the synthesis
TWO_SEATS = 2  # a duel, as every record was before panels


@dataclass(frozen=True, kw_only=True)
class Schedule:
    """A duel's shape: how many seats, how many turns the panel writes, and whether a chair frames them."""

    seats: int
    max_turns: int  # the panel's turns; a chair's three come on top
    chair: bool
    sealed_openings: bool = False  # every seat commits its opening before any is revealed
    on_fabrication: str = "redact"  # a source ruled fabricated: "redact" its claim, or "invalidate" the duel too

    @classmethod
    def recorded(cls, fields: Mapping[str, Any]) -> Schedule:
        """The schedule a state or a front matter records, its values checked by the reader:
        one written before panels has no ``seats`` (a duel of two), one without a chair no ``chair``."""
        return cls(
            seats=fields.get("seats", TWO_SEATS),
            max_turns=fields["max_turns"],
            chair=fields.get("chair", False),
            sealed_openings=fields.get("sealed_openings", False),
            on_fabrication=fields.get("on_fabrication", "redact"),
        )

    def fields(self) -> dict[str, Any]:
        """The fields an artifact (and a report) writes, the inverse of :meth:`recorded`: ``seats``
        only when not two, ``chair`` and ``sealed_openings`` only when set, so a two-seat duel reads as before panels."""
        return {
            "max_turns": self.max_turns,
            **({"seats": self.seats} if self.seats != TWO_SEATS else {}),
            **({"chair": True} if self.chair else {}),
            **({"sealed_openings": True} if self.sealed_openings else {}),
            **({"on_fabrication": self.on_fabrication} if self.on_fabrication != "redact" else {}),
        }

    @property
    def first(self) -> int:
        """The number of the first turn: the chair's opening brief is turn 0."""
        return 0 if self.chair else 1

    @property
    def last(self) -> int:
        """The number of the last turn: the chair's synthesis, or turn ``max_turns`` without a chair."""
        return self.max_turns + CHAIR_TURNS - 1 if self.chair else self.max_turns

    @property
    def turn_count(self) -> int:
        """How many turns a duel that runs its course has."""
        return self.last - self.first + 1

    @property
    def pre_closing(self) -> int | None:
        """The chair's pre-closing turn; None without a chair."""
        return self.max_turns - self.seats + 1 if self.chair else None

    @property
    def openings(self) -> range:
        """The numbers of the opening round, the panel's first turn each: 1 .. seats, with or without a chair."""
        return range(1, self.seats + 1)

    def sealed(self, number: int) -> bool:
        """Whether turn ``number`` is a sealed opening: written before any other seat's opening is seen."""
        return self.sealed_openings and number in self.openings

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
        """The seat that writes turn ``number``: :data:`CHAIR_SEAT` for a chair turn, else round-robin,
        so with two seats seat 1 writes the odd turns and seat 2 the even ones (docs/protocol.md section 4)."""
        index = self.panel_index(number)
        return CHAIR_SEAT if index is None else (index - 1) % self.seats + 1

    def others_since(self, seat: int, latest: int) -> list[int]:
        """The turns up to ``latest`` that other seats wrote since ``seat``'s own last one (the peer's one
        in a duel; N - 1 in a panel, and a chair's), oldest first."""
        found = []
        for number in range(latest, self.first - 1, -1):
            if self.speaker(number) == seat:
                break
            found.append(number)
        return found[::-1]

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
