"""What ``duel mcp`` is started with, and the seat it opens at the first call.

``initialize`` and ``tools/list`` must answer before a harness gives up on a server (Codex waits
about a second for one not marked required), so the command checks only what is cheap at start
and leaves the seat, the service and its store to :meth:`SeatPlan.open`, which the server calls
at the first tool call or resource read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..participant import CitationChecker
    from ..settings import DuelSettings
    from .seat import AgentSeat

__all__ = ["SeatPlan"]


@dataclass(frozen=True, kw_only=True)
class SeatPlan:
    """The seat a ``duel mcp`` process serves, as its flags and configuration give it."""

    debate_dir: str
    store: str | None
    target: str | None  # absolute, as the folder the server started in names it
    name: str | None
    harness: str
    model: str
    topic: str | None
    settings: DuelSettings
    role: str | None
    persona: str | None
    wait_seconds: float
    checker: CitationChecker | None  # --verify: checked at start (a bad key is said then), used per append
    allow_private_hosts: bool
    on_store_wait: Callable[[str], None] | None = None  # told each pause of the store's retries (standard error)

    def open(self) -> AgentSeat:
        """The seat, its service and store opened: at the first call, never at start."""
        from ..coordination import DuelService
        from .seat import AgentSeat, SeatDefaults

        defaults = SeatDefaults(
            target=self.target,
            name=self.name,
            harness=self.harness,
            model=self.model,
            topic=self.topic,
            settings=self.settings,
            role=self.role,
            persona=self.persona,
            wait_seconds=self.wait_seconds,
        )
        service = DuelService(self.debate_dir, store=self.store)
        service.on_store_wait = self.on_store_wait
        return AgentSeat(service, defaults, self.checker, allow_private_hosts=self.allow_private_hosts)
