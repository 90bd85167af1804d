"""The MCP server of ``duel mcp``: :class:`~.seat.AgentSeat` as tools and resources, over stdio.

Built on the official ``mcp`` SDK (imported only here, and only ``duel mcp`` imports this):
tools with typed inputs and structured results, progress notifications and the client's
cancellation. A refusal is an MCP tool error (``isError``) whose structured content is the
``duel tools`` error object, so an agent reads the same codes either way.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any, Final

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.types import CallToolResult, TextContent

from ..errors import DuelError
from .seat import AgentSeat, Readable

__all__ = ["RESOURCES", "build_server", "serve"]

RESOURCES: Final = {
    "duel://artifact": "the debate record so far, as the participants commit it",
    "duel://source": "the document debated, as pinned at the join, with line numbers",
    "duel://rules": "the turn's format and rules, and the outcomes",
}
INSTRUCTIONS: Final = (
    "A duel: you and other agents debate a Markdown document in turns, each appending one validated turn. "
    "Call duel_join once, then follow next_step_words of every answer: duel_wait while others speak, "
    "duel_claim on your turn, duel_read and duel_rules to write it, duel_append to add it (a rejected turn "
    "lists each violation with its code and line: fix them and append again, the floor stays yours), "
    "until the duel is closed. The floor is kept for you while you think, up to the turn deadline."
)


def _answer(data: dict[str, Any] | str) -> CallToolResult:
    if isinstance(data, str):
        return CallToolResult(content=[TextContent(type="text", text=data)], structured_content={"text": data})
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(data))], structured_content=data)


def _refusal(error: DuelError) -> CallToolResult:
    body = {"error": error.to_dict()}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body))], structured_content=body, is_error=True
    )


def _settled(call: Callable[[], dict[str, Any] | str]) -> CallToolResult:
    """A seat's answer, or its refusal as a tool error."""
    try:
        return _answer(call())
    except DuelError as exc:
        return _refusal(exc)


async def _run(call: Callable[[], dict[str, Any] | str]) -> CallToolResult:
    """A seat's call in a worker thread: the service blocks."""
    return await anyio.to_thread.run_sync(lambda: _settled(call))


def serve(seat: AgentSeat) -> None:
    """Serve ``seat`` on standard input and output until the client goes (or a stop signal: Ctrl-C, and SIGTERM
    and SIGHUP as every command takes them, :mod:`rp1_duel.cli.stopping`): then the floor is given back and the
    seat kept, for a server started again to resume. A stop is raised, as KeyboardInterrupt, once it is."""
    try:
        build_server(seat).run("stdio")  # standard output is the protocol's: every other line goes to stderr
    finally:
        seat.stop()


def build_server(seat: AgentSeat) -> MCPServer:
    """The server of one seat."""
    server = MCPServer("duel", instructions=INSTRUCTIONS)
    _add_reading(server, seat)
    _add_floor(server, seat)
    _add_resources(server, seat)
    return server


def _add_reading(server: MCPServer, seat: AgentSeat) -> None:
    """The tools that join, look and wait."""

    @server.tool()
    async def duel_join(
        target: str | None = None,
        name: str | None = None,
        model: str | None = None,
        topic: str | None = None,
        role: str | None = None,
        persona: str | None = None,
    ) -> CallToolResult:
        """Take your seat in the duel about `target` (a Markdown file); each argument defaults to the
        server's. Joining again resumes the same seat."""
        return await _run(
            lambda: seat.join(target=target, name=name, model=model, topic=topic, role=role, persona=persona)
        )

    @server.tool()
    async def duel_status() -> CallToolResult:
        """The duel now: its state, whose turn it is, the seconds left, and your next step in words."""
        return await _run(seat.status)

    @server.tool()
    async def duel_rules() -> CallToolResult:
        """The turn's format and every rule the service checks, and the outcomes."""
        return await _run(seat.rules)

    @server.tool()
    async def duel_read(what: Readable = "turns", page: int = 1) -> CallToolResult:
        """A page of `what`: `source` (the document, with line numbers) or `turns` (the debate so far)."""
        return await _run(lambda: seat.read(what, page))

    @server.tool()
    async def duel_wait(
        ctx: Context, timeout_seconds: float | None = None, next_step: str | None = None
    ) -> CallToolResult:
        """Block until your next step changes, reporting progress meanwhile; it returns at once when it already
        has (since your last answer, or since `next_step`), and after the server's bound (45 s unless set) with
        `changed: false`: then call it again."""
        stop = threading.Event()
        bound = (
            seat.defaults.wait_seconds if timeout_seconds is None else min(timeout_seconds, seat.defaults.wait_seconds)
        )

        def progress(seconds: float, line: str) -> None:
            if not stop.is_set():
                anyio.from_thread.run(ctx.report_progress, seconds, bound, line)

        def wait() -> dict[str, Any]:
            return seat.wait(bound, next_step=next_step, progress=progress, cancelled=stop.is_set)

        try:
            return await anyio.to_thread.run_sync(
                lambda: _settled(wait),
                abandon_on_cancel=True,  # a cancelled wait answers nothing; its thread ends within a slice
            )
        finally:
            stop.set()


def _add_floor(server: MCPServer, seat: AgentSeat) -> None:
    """The tools that take the floor, write a turn, and give the floor back."""

    @server.tool()
    async def duel_claim(*, for_timeout: bool = False) -> CallToolResult:
        """Ask for the floor (on your turn; `for_timeout` to close a duel whose deadline passed).
        Granted, the server keeps the lease fresh while you write, up to the turn deadline."""
        return await _run(lambda: seat.claim(for_timeout=for_timeout))

    @server.tool()
    async def duel_append(turn: str = "", *, release: bool = True) -> CallToolResult:
        """Append your turn (Markdown, as duel_rules gives it) and give the floor back. A rejected turn
        answers TURN_INVALID with every violation's code and line; you keep the floor to fix it. Sources your
        turn challenges are fetched and ruled on before the floor passes: `challenges` lists the rulings. With
        no turn, the sealed opening you committed is revealed."""
        return await _run(lambda: seat.append(turn, release=release))

    @server.tool()
    async def duel_commit_opening(turn: str) -> CallToolResult:
        """In a duel whose openings are sealed (next_step commit_opening): commit your opening without the
        floor. It is checked like any turn and only its hash is kept until every seat has committed; then
        claim the floor and call duel_append with no turn to reveal it."""
        return await _run(lambda: seat.commit_opening(turn))

    @server.tool()
    async def duel_release() -> CallToolResult:
        """Give the floor back without writing a turn."""
        return await _run(seat.release)

    @server.tool()
    async def duel_close(outcome: str | None = None, reason: str | None = None) -> CallToolResult:
        """Close the duel with the outcome it reached (or `outcome`: TIMEOUT after a deadline, INVALIDATED
        with a `reason` to give up)."""
        return await _run(lambda: seat.close(outcome=outcome, reason=reason))


def _add_resources(server: MCPServer, seat: AgentSeat) -> None:
    """What an agent reads rather than calls, each at a stable URI."""

    @server.resource(
        "duel://artifact", name="artifact", description=RESOURCES["duel://artifact"], mime_type="text/markdown"
    )
    def artifact() -> str:
        return _text(seat.artifact_text)

    @server.resource("duel://source", name="source", description=RESOURCES["duel://source"], mime_type="text/markdown")
    def source() -> str:
        return _text(seat.source_text)

    @server.resource("duel://rules", name="rules", description=RESOURCES["duel://rules"], mime_type="text/markdown")
    def rules() -> str:
        return _text(seat.rules)


def _text(call: Callable[[], str]) -> str:
    """A resource's text; a refusal as its one-line error (a resource has no error result of its own)."""
    try:
        return call()
    except DuelError as exc:
        raise ResourceError(f"{exc.code}: {exc.message}") from None
