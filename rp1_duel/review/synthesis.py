"""The chair's synthesis as a report shows it: its sections whole, beside each seat's final stance.

A synthesis may not overrule a seat silently (docs/protocol.md section 7, SILENT_OVERRULE); a reader
checks it the same way, with each panel seat's final stance (its name, stance and last turn) next to
what the chair concluded and where it says it departs from a seat (section 11, "A chair").

Pure, as :mod:`rp1_duel.review.report` is: it reads the replayed history.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..record import History
from ..vocabulary import SYNTHESIS

__all__ = ["FinalStance", "SynthesisView", "synthesis_view"]


@dataclass(kw_only=True, frozen=True)
class FinalStance:
    """A panel seat's last word before the synthesis: who, its stance, and the turn that took it."""

    seat: int
    name: str
    stance: str | None
    turn: int


@dataclass(kw_only=True, frozen=True)
class SynthesisView:
    """The chair's synthesis, section by section, with each panel seat's final stance beside it."""

    turn: int
    text: str  # the Synthesis section, whole
    agreed: tuple[str, ...]
    still_open: tuple[str, ...]
    departures: tuple[str, ...]  # where the synthesis says it overrules a seat's final stance
    final_stances: tuple[FinalStance, ...]  # by seat


def synthesis_view(history: History, names: Mapping[int, str]) -> SynthesisView | None:
    """The synthesis of a chaired duel once written; None before it, and without a chair."""
    schedule = history.schedule
    if not schedule.chair or schedule.last not in history.numbers:
        return None
    turn = history.turn(schedule.last)
    section = turn.sections.get(SYNTHESIS)
    finals = history.final_turns(before=schedule.last)
    return SynthesisView(
        turn=schedule.last,
        text=section.body.strip() if section else "",
        agreed=tuple(item.text for item in turn.agreed),
        still_open=tuple(item.text for item in turn.still_open),
        departures=tuple(item.text for item in turn.departures),
        final_stances=tuple(
            FinalStance(
                seat=seat, name=names.get(seat, f"seat {seat}"), stance=history.turn(number).stance, turn=number
            )
            for seat, number in sorted(finals.items())
        ),
    )
