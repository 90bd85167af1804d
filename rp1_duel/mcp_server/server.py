"""The MCP server of ``duel mcp``: :class:`~.seat.AgentSeat` as tools and resources, over stdio.

Built on the official ``mcp`` SDK (imported only here, and only ``duel mcp`` imports this):
tools with typed inputs and structured results, progress notifications and the client's
cancellation. A refusal is an MCP tool error (``isError``) whose structured content is the
``duel tools`` error object, so an agent reads the same codes either way. The seat is opened by the
first call (:class:`LazySeat`): ``initialize`` and ``tools/list`` wait for none of its modules.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Final, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import ValidationError

from ..errors import DuelError, invalid_argument
from ..printable import printable, printable_json
from ._schema import (
    AppendAnswer,
    AppendedTurn,
    ClaimAnswer,
    CloseOutcome,
    CommitAnswer,
    ForTimeout,
    JoinAnswer,
    JoinRole,
    Model,
    Name,
    Page,
    Persona,
    ReadAnswer,
    Reason,
    Release,
    ReleaseAnswer,
    SeenStep,
    StatusAnswer,
    Target,
    TimeoutSeconds,
    Topic,
    Turn,
    WaitAnswer,
    What,
)

if TYPE_CHECKING:
    from .seat import AgentSeat  # loaded with the seat, at the first call (docs/protocol.md, "duel mcp": start-up)

__all__ = ["RESOURCES", "StopIsNoError", "build_server", "serve"]

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
# Reading tools change nothing an agent must weigh; the others write to the duel but never destroy (decision).
READING: Final = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITING: Final = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)
JOINING: Final = WRITING.model_copy(update={"idempotent_hint": True, "open_world_hint": False})  # again: the same seat
CLOSING: Final = WRITING.model_copy(update={"open_world_hint": False})
CITING: Final = WRITING.model_copy(update={"open_world_hint": True})  # a turn's cited sources may be fetched
# What a wrong argument must be, by its JSON Schema type.
EXPECTED: Final = {"string": "a string", "integer": "a whole number", "number": "a number", "boolean": "true or false"}

ToolFunction = TypeVar("ToolFunction", bound=Callable[..., Any])


class DuelServer(MCPServer):
    """The SDK's server, whose refusal of an argument the tool's schema rejects is duel's ``INVALID_ARGUMENT``."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """The tool's answer; arguments of the wrong type or out of bounds, refused naming each field."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            schemas = {tool.name: tool.input_schema for tool in await self.list_tools()}
            return _refusal(_wrong_arguments(name, exc.__cause__, schemas.get(name, {})))


def _wrong_arguments(tool: str, error: ValidationError, schema: dict[str, Any]) -> DuelError:
    """What each field the SDK refused must be, from the tool's input schema (not pydantic's words)."""
    properties = schema.get("properties", {})
    missing = {str(each["loc"][0]) for each in error.errors() if each["loc"] and each["type"] == "missing"}
    fields = sorted({str(each["loc"][0]) for each in error.errors() if each["loc"]})
    said = [
        f"{field} {'is required:' if field in missing else 'must be'} {_expected(properties.get(field, {}))}"
        for field in fields
    ]
    return invalid_argument(f"{tool}: {'; '.join(said) or 'its arguments do not fit its input schema'}", fields=fields)


def _expected(schema: dict[str, Any]) -> str:
    """A JSON Schema in words: "a number from 0 to 3600", "one of source, turns"."""
    alternatives = [each for each in schema.get("anyOf", [schema]) if each.get("type") != "null"]
    said = []
    for each in alternatives:
        if "enum" in each:
            said.append("one of " + ", ".join(str(value) for value in each["enum"]))
            continue
        words = EXPECTED.get(each.get("type", ""), "a value of its type")
        low, high = each.get("minimum"), each.get("maximum")
        if low is not None and high is not None:
            words += f" from {low:g} to {high:g}"
        elif low is not None:
            words += f" of at least {low:g}"
        said.append(words)
    return " or ".join(said) or "left out"


def _compact(data: dict[str, Any]) -> str:
    """An answer as compact JSON, what a model reads best of a record (the structured content is the same)."""
    return printable_json(data, compact=True)


def _page_text(page: dict[str, Any]) -> str:
    """A page of duel_read as the Markdown it is, under a line saying which."""
    return printable(f"{page['name']}, page {page['page']} of {page['pages']}:\n\n{page['text']}")


def _markdown(call: Callable[[], str]) -> CallToolResult:
    """Markdown to read, not data: as text content only, with no structured copy a harness would show escaped."""
    try:
        return CallToolResult(content=[TextContent(type="text", text=call())])
    except DuelError as exc:
        return _refusal(exc)


def _answer(data: dict[str, Any], text: Callable[[dict[str, Any]], str] = _compact) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text(data))], structured_content=data)


def _refusal(error: DuelError) -> CallToolResult:
    body = {"error": error.to_dict()}
    return CallToolResult(
        content=[TextContent(type="text", text=_compact(body))], structured_content=body, is_error=True
    )


async def _run(
    call: Callable[[], dict[str, Any]], text: Callable[[dict[str, Any]], str] = _compact, *, abandonable: bool = False
) -> CallToolResult:
    """A seat's call in a worker thread (the service blocks): its answer, or its refusal as a tool error.
    ``abandonable``: a cancelled call answers nothing at once, its thread left to end by itself."""

    def settled() -> CallToolResult:
        try:
            return _answer(call(), text)
        except DuelError as exc:
            return _refusal(exc)

    return await anyio.to_thread.run_sync(settled, abandon_on_cancel=abandonable)


class LazySeat:
    """The seat, opened by the first call that needs it: ``initialize`` and ``tools/list`` are answered before the
    seat's modules (the service, the participant loop, the citation checker) are even imported."""

    def __init__(self, open_seat: Callable[[], AgentSeat]):
        self._open = open_seat
        self._seat: AgentSeat | None = None
        self._opening = threading.Lock()  # two first calls at once open one seat

    def __call__(self) -> AgentSeat:
        """The seat, opened now if no call has opened it yet."""
        with self._opening:
            if self._seat is None:
                self._seat = self._open()
            return self._seat

    def stop(self) -> None:
        """The server is ending: a seat opened is stopped (:meth:`AgentSeat.stop`); none opened, nothing to do."""
        if self._seat is not None:
            self._seat.stop()


def serve(open_seat: Callable[[], AgentSeat]) -> None:
    """Serve the seat ``open_seat`` opens (at the first call) on standard input and output until the client goes (or
    a stop signal: Ctrl-C, and SIGTERM and SIGHUP as every command takes them, :mod:`rp1_duel.cli.stopping`): then
    the floor is given back and the seat kept, for a server started again to resume. A stop is raised, as
    KeyboardInterrupt, once it is."""
    seat = LazySeat(open_seat)
    quiet = StopIsNoError()
    logging.getLogger("asyncio").addFilter(quiet)
    try:
        build_server(seat).run("stdio")  # standard output is the protocol's: every other line goes to stderr
    finally:
        logging.getLogger("asyncio").removeFilter(quiet)
        seat.stop()


class StopIsNoError(logging.Filter):
    """Drops asyncio's report of a task that a stop signal ended. The signal raises KeyboardInterrupt in whatever
    runs: when that is one of the server's tasks, ``asyncio.run`` logs the task at its shutdown as an unhandled
    exception, with a traceback, though the stop is what the user asked for and the command says so in one line.
    Any other error asyncio reports is kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        """False for a record whose exception is a stop alone (a KeyboardInterrupt, or a group of nothing else)."""
        return not _stop_alone(record.exc_info[1] if record.exc_info else None)


def _stop_alone(raised: BaseException | None) -> bool:
    if isinstance(raised, KeyboardInterrupt):
        return True
    inner = getattr(
        raised, "exceptions", None
    )  # an exception group: built in from Python 3.11, anyio's backport before
    return isinstance(inner, tuple) and bool(inner) and all(_stop_alone(exception) for exception in inner)


def build_server(seat: LazySeat) -> MCPServer:
    """The server of one seat."""
    server = DuelServer("duel", instructions=INSTRUCTIONS)
    _add_reading(server, seat)
    _add_floor(server, seat)
    _add_resources(server, seat)
    return server


def _tool(server: MCPServer, annotations: ToolAnnotations) -> Callable[[ToolFunction], ToolFunction]:
    """Register a tool, described by its docstring as one paragraph (no source indentation reaches the model)."""

    def register(function: ToolFunction) -> ToolFunction:
        described = " ".join((function.__doc__ or "").split())
        server.add_tool(function, description=described, annotations=annotations)
        return function

    return register


def _add_reading(server: MCPServer, seat: LazySeat) -> None:
    """The tools that join, look and wait."""

    @_tool(server, JOINING)
    async def duel_join(
        target: Target = None,
        name: Name = None,
        model: Model = None,
        topic: Topic = None,
        role: JoinRole = None,
        persona: Persona = None,
    ) -> Annotated[CallToolResult, JoinAnswer]:
        """Take your seat in the duel about `target` (a Markdown file); each argument defaults to the
        server's. Joining again resumes the same seat."""
        return await _run(
            lambda: seat().join(target=target, name=name, model=model, topic=topic, role=role, persona=persona)
        )

    @_tool(server, READING)
    async def duel_status() -> Annotated[CallToolResult, StatusAnswer]:
        """The duel now: its state, whose turn it is, the seconds left, and your next step in words."""
        return await _run(lambda: seat().status())

    @_tool(server, READING)
    async def duel_rules() -> CallToolResult:
        """The turn's format and every rule the service checks, and the outcomes, as Markdown."""
        return await anyio.to_thread.run_sync(lambda: _markdown(lambda: seat().rules()))

    @_tool(server, READING)
    async def duel_read(what: What = "turns", page: Page = 1) -> Annotated[CallToolResult, ReadAnswer]:
        """A page of `what`: `source` (the document, with line numbers) or `turns` (the debate so far)."""
        return await _run(lambda: seat().read(what, page), _page_text)

    @_tool(server, READING)
    async def duel_wait(
        ctx: Context, timeout_seconds: TimeoutSeconds = None, next_step: SeenStep = None
    ) -> Annotated[CallToolResult, WaitAnswer]:
        """Block until your next step changes, reporting progress meanwhile; it returns at once when it already
        has (since your last answer, or since `next_step`), and after the server's bound (45 s unless set) with
        `changed: false`: then call it again."""
        stop = threading.Event()

        def wait() -> dict[str, Any]:
            opened = seat()
            bound = opened.defaults.wait_seconds
            bound = bound if timeout_seconds is None else min(timeout_seconds, bound)

            def progress(seconds: float, line: str) -> None:
                if not stop.is_set():
                    anyio.from_thread.run(ctx.report_progress, seconds, bound, line)

            return opened.wait(bound, next_step=next_step, progress=progress, cancelled=stop.is_set)

        try:
            return await _run(wait, abandonable=True)  # a cancelled wait's thread ends within a slice
        finally:
            stop.set()


def _add_floor(server: MCPServer, seat: LazySeat) -> None:
    """The tools that take the floor, write a turn, and give the floor back."""

    @_tool(server, CLOSING)
    async def duel_claim(*, for_timeout: ForTimeout = False) -> Annotated[CallToolResult, ClaimAnswer]:
        """Ask for the floor (on your turn; `for_timeout` to close a duel whose deadline passed).
        Granted, the server keeps the lease fresh while you write, up to the turn deadline."""
        return await _run(lambda: seat().claim(for_timeout=for_timeout))

    @_tool(server, CITING)
    async def duel_append(
        turn: AppendedTurn = "", *, release: Release = True
    ) -> Annotated[CallToolResult, AppendAnswer]:
        """Append your turn (Markdown, as duel_rules gives it) and give the floor back. A rejected turn
        answers TURN_INVALID with every violation's code and line; you keep the floor to fix it. Sources your
        turn challenges are fetched and ruled on before the floor passes: `challenges` lists the rulings. With
        no turn, the sealed opening you committed is revealed."""
        return await _run(lambda: seat().append(turn, release=release))

    @_tool(server, CITING)
    async def duel_commit_opening(turn: Turn) -> Annotated[CallToolResult, CommitAnswer]:
        """In a duel whose openings are sealed (next_step commit_opening): commit your opening without the
        floor. It is checked like any turn and only its hash is kept until every seat has committed; then
        claim the floor and call duel_append with no turn to reveal it."""
        return await _run(lambda: seat().commit_opening(turn))

    @_tool(server, CLOSING)
    async def duel_release() -> Annotated[CallToolResult, ReleaseAnswer]:
        """Give the floor back without writing a turn."""
        return await _run(lambda: seat().release())

    @_tool(server, CLOSING)
    async def duel_close(
        outcome: CloseOutcome = None, reason: Reason = None
    ) -> Annotated[CallToolResult, ReleaseAnswer]:
        """Close the duel with the outcome it reached (or `outcome`: TIMEOUT after a deadline, INVALIDATED
        with a `reason` to give up)."""
        return await _run(lambda: seat().close(outcome=outcome, reason=reason))


def _add_resources(server: MCPServer, seat: LazySeat) -> None:
    """What an agent reads rather than calls, each at a stable URI."""

    @server.resource(
        "duel://artifact", name="artifact", description=RESOURCES["duel://artifact"], mime_type="text/markdown"
    )
    def artifact() -> str:
        return _text(lambda: seat().artifact_text())

    @server.resource("duel://source", name="source", description=RESOURCES["duel://source"], mime_type="text/markdown")
    def source() -> str:
        return _text(lambda: seat().source_text())

    @server.resource("duel://rules", name="rules", description=RESOURCES["duel://rules"], mime_type="text/markdown")
    def rules() -> str:
        return _text(lambda: seat().rules())


def _text(call: Callable[[], str]) -> str:
    """A resource's text; a refusal as its one-line error (a resource has no error result of its own)."""
    try:
        return call()
    except DuelError as exc:
        raise ResourceError(f"{exc.code}: {exc.message}") from None
