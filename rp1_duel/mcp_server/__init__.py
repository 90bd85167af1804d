"""``duel mcp``: a seat for an agent harness over the Model Context Protocol.

:mod:`.seat` is the seat itself, library code with no MCP in it; :mod:`.server` binds it to the
official ``mcp`` SDK, which only ``duel mcp`` imports. It may import the participant package and
every layer below it; only :mod:`rp1_duel.cli` imports it.

This module is its face (:func:`rp1_duel.lazy_exports`: naming it loads neither the seat nor the SDK);
the tools' schema is private (``_schema``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import lazy_exports

_EXPORTS = {
    "AgentSeat": ".seat",
    "SeatDefaults": ".seat",
    "SeatPlan": ".launch",
    "serve": ".server",
}
__all__ = ["AgentSeat", "SeatDefaults", "SeatPlan", "serve"]

if TYPE_CHECKING:
    from .launch import SeatPlan
    from .seat import AgentSeat, SeatDefaults
    from .server import serve
else:
    __getattr__ = lazy_exports(__name__, _EXPORTS)
