"""``duel mcp``: a seat for an agent harness over the Model Context Protocol.

:mod:`.seat` is the seat itself, library code with no MCP in it; :mod:`.server` binds it to the
official ``mcp`` SDK, which only ``duel mcp`` imports. It may import the participant package and
every layer below it; only :mod:`rp1_duel.cli` imports it.
"""
