"""``duel bench run``'s money cap: each seat's share of what remains (docs/bench.md, "The money cap").

Every seat runs with ``duel join --budget-usd SHARE``, which stops it before a request that would pass
its share. The shares granted to the seats still running are held back until their run ends and its
spend is known; so the spend of the finished runs, plus the shares of the running ones, never passes
the cap, and no request can pass it either. Pure: the scheduler in :mod:`.run` keeps the ledger.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

__all__ = ["MIN_SHARE_USD", "BudgetLedger", "seat_share"]

# Below a tenth of a cent no turn-sized request of a priced model fits: such a share only stops its seat.
MIN_SHARE_USD: Final = 0.001
_MICRO: Final = 1_000_000  # shares are whole micro-dollars, rounded down, so they never sum past what is free


def seat_share(*, free_usd: float, seats_starting: int) -> float:
    """Each seat's share when ``seats_starting`` seats (those of every run that may start now) split
    ``free_usd`` evenly, rounded down to the micro-dollar; 0 when nothing is free."""
    if free_usd <= 0 or seats_starting <= 0:
        return 0.0
    return math.floor(free_usd * _MICRO / seats_starting) / _MICRO


@dataclass(kw_only=True)
class BudgetLedger:
    """What a bench may still spend: its cap, what the finished runs spent, and the shares held by running ones."""

    cap_usd: float
    settled_usd: float = 0.0  # spent by the runs that ended
    held: dict[str, float] = field(default_factory=dict)  # run key -> the shares of its seats, summed
    costliest_draft_usd: float = 0.0  # the most one turn's requests have cost so far

    @property
    def free_usd(self) -> float:
        """What no run holds and none has spent."""
        return self.cap_usd - self.settled_usd - sum(self.held.values())

    def useful(self, share: float) -> bool:
        """Whether a seat can do anything with ``share``: at least :data:`MIN_SHARE_USD` and what the
        costliest turn so far cost (a seat that cannot pay for one turn only stops its duel)."""
        return share >= max(MIN_SHARE_USD, self.costliest_draft_usd)

    def hold(self, run: str, share: float, seats: int) -> None:
        """Hold ``share`` for each of the ``seats`` of ``run`` until it ends."""
        self.held[run] = share * seats

    def settle(self, run: str, spent_usd: float, costliest_draft_usd: float) -> None:
        """``run`` ended having spent ``spent_usd``: its shares are freed, its spend counted."""
        self.held.pop(run, None)
        self.settled_usd += spent_usd
        self.costliest_draft_usd = max(self.costliest_draft_usd, costliest_draft_usd)
