"""`duel mcp` (issue 23; docs/protocol.md, "duel mcp"): two real MCP servers, each one seat,
driven through the official `mcp` client over stdio, duelling through a real debate dir."""

from __future__ import annotations

import builtins
import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent, TextResourceContents
from test_participant import clean_env
from test_rulings import CLAIM as REDACTED_CLAIM
from test_rulings import DEAD, LIVE, challenging, verdicts

from rp1_duel.cli.skill import MCP_RESOURCES, MCP_TOOLS
from rp1_duel.cli.skill_setup import mcp_server_command
from rp1_duel.coordination import DuelService
from rp1_duel.mcp_server.server import StopIsNoError
from rp1_duel.participant.audience import AudienceMember
from rp1_duel.participant.prompt import history_text
from rp1_duel.participant.providers.base import Composition, Provider, TurnRequest
from rp1_duel.record import RecordFile
from rp1_duel.review.report_files import read_report
from rp1_duel.review.report_html import render_html
from rp1_duel.review.report_markdown import render_markdown
from rp1_duel.review.watch import Follower
from rp1_duel.settings import DuelSettings
from rp1_duel.vocabulary import NEXT_STEPS, OUTCOMES, ROLES, EventType, RuleCode, Verdict

from fake_web import CLAIM, FakeWeb, honest_vote
from helpers import SOURCE, join, make_turn, sealed_opening

pytestmark = pytest.mark.slow  # real server processes

SEATS = {"Alice": ("claude-code", "claude-opus-4"), "Bob": ("codex", "gpt-5")}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A project folder: the source, and a duel.toml with short leases and a two-turn duel."""
    (tmp_path / "design.md").write_text(SOURCE, encoding="utf-8")
    (tmp_path / "duel.toml").write_text("[duel]\nlease_seconds = 5\nmax_turns = 2\n", encoding="utf-8")
    return tmp_path


class Seat:
    """A client session with one `duel mcp` server."""

    def __init__(self, session: ClientSession, name: str):
        self.session, self.name = session, name
        self.harness, self.model = SEATS[name]
        self.answers: list[str] = []  # every answer's text, to look for secrets in

    async def call(self, tool: str, progress: Any = None, **arguments: Any) -> CallToolResult:
        result = await self.session.call_tool(tool, arguments, progress_callback=progress)
        self.answers.append(json.dumps(result.structured_content))
        self.answers += [block.text for block in result.content if isinstance(block, TextContent)]
        return result

    async def text(self, tool: str, **arguments: Any) -> str:
        """The text content of a call that succeeds: what a harness shows its model."""
        result = await self.call(tool, **arguments)
        assert not result.is_error, result.content
        [block] = result.content
        assert isinstance(block, TextContent)
        return block.text

    async def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = await self.call(tool, **arguments)
        assert not result.is_error, result.structured_content
        data: dict[str, Any] = result.structured_content
        return data

    async def error(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = await self.call(tool, **arguments)
        assert result.is_error, result.structured_content
        error: dict[str, Any] = result.structured_content["error"]
        text = result.content[0]
        assert isinstance(text, TextContent) and error["code"] in text.text  # the text form carries the code too
        return error

    def turn(self, n: int, stance: str = "ACCEPTING_CONSENSUS") -> str:
        return make_turn(n, self.name, self.harness, self.model, stance)


def server_params(workspace: Path, name: str, *extra: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    harness, model = SEATS[name]
    args = ["-m", "rp1_duel", "mcp", "--target", "design.md", "--name", name, "--harness", harness]
    args += ["--model-id", model, "--debate-dir", str(workspace / "debates"), *extra]
    kept = {k: v for k, v in clean_env().items() if k in ("PATH", "PYTHONPATH", "HOME", "LANG")}
    return StdioServerParameters(command=sys.executable, args=args, env=kept | (env or {}), cwd=str(workspace))


@asynccontextmanager
async def mcp_seat(workspace: Path, name: str, *extra: str, env: dict[str, str] | None = None) -> AsyncIterator[Seat]:
    async with (
        stdio_client(server_params(workspace, name, *extra, env=env)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield Seat(session, name)


async def resource(seat: Seat, uri: str) -> str:
    contents = (await seat.session.read_resource(uri)).contents[0]
    assert isinstance(contents, TextResourceContents)
    return contents.text


async def floor_freed(workspace: Path, duel_id: str, *, within: float) -> None:
    """Return once nobody holds the floor; fail after ``within`` seconds."""
    service = DuelService(workspace / "debates")
    started = time.monotonic()
    while service.status(duel_id).lock.owner_participant_id is not None:
        assert time.monotonic() - started < within, f"the floor was still held after {within} s"
        await anyio.sleep(0.1)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    anyio.run(scenario)


def stashed_tokens(workspace: Path) -> list[str]:
    folder = workspace / "debates" / ".duel" / "participants"
    return [json.loads(path.read_text())["participant_token"] for path in folder.glob("*.json")]


def test_two_mcp_seats_duel_to_consensus_and_no_answer_shows_a_token(workspace):
    async def scenario() -> None:
        async with mcp_seat(workspace, "Alice") as alice, mcp_seat(workspace, "Bob") as bob:
            tools = {tool.name for tool in (await alice.session.list_tools()).tools}
            ops = ("join", "status", "rules", "read", "claim", "append", "commit_opening", "wait", "release", "close")
            assert tools == {f"duel_{op}" for op in ops}
            joined = await alice.ok("duel_join")
            assert joined["seat"] == 1 and "participant_token" not in joined
            await bob.ok("duel_join")
            status = await alice.ok("duel_status")
            assert status["next_step"] == "claim_lock" and "duel_claim" in status["next_step_words"]
            claimed = await alice.ok("duel_claim")
            assert claimed["acquired"] and "lease_token" not in claimed

            broken = await alice.error("duel_append", turn=alice.turn(1).replace("**Agreements**", "**Agreed**"))
            assert broken["code"] == "TURN_INVALID"
            violations = broken["details"]["violations"]
            assert {v["code"] for v in violations} >= {"SECTION_MISSING"}  # every violation, each with its code
            assert any("line" in v for v in violations)  # and its line, where it has one
            assert (await alice.ok("duel_status"))["lock"]["owner_participant_id"] == joined["participant_id"]

            assert (await alice.ok("duel_append", turn=alice.turn(1)))["turn_number"] == 1
            waited = await bob.ok("duel_wait", timeout_seconds=10)
            assert waited["next_step"] == "claim_lock"
            page = await bob.ok("duel_read", what="turns")
            assert "## Turn 1 — Alice (claude-code / claude-opus-4)" in page["text"]
            source = await bob.ok("duel_read", what="source")
            assert source["text"].splitlines()[0] == "    1  # Lease design"
            await bob.ok("duel_claim")
            appended = await bob.ok("duel_append", turn=bob.turn(2))
            assert appended["terminal_outcome"] == "ACCEPTED_CONSENSUS"
            closed = await bob.ok("duel_close")
            assert closed["closed"] and closed["outcome"] == "ACCEPTED_CONSENSUS"
            assert "**Position**" in await resource(alice, "duel://rules")
            assert "## Turn 2 — Bob (codex / gpt-5)" in await resource(alice, "duel://artifact")
            tokens = stashed_tokens(workspace)
            assert len(tokens) == 2
            said = "\n".join(alice.answers + bob.answers)
            assert not any(token in said for token in tokens)

    run(scenario)


def test_calls_out_of_order_or_with_wrong_arguments_get_tool_errors_with_codes(workspace):
    async def scenario() -> None:
        async with mcp_seat(workspace, "Alice") as alice:
            assert (await alice.error("duel_claim"))["code"] == "DUEL_NOT_FOUND"  # not joined yet
            await alice.ok("duel_join")
            assert (await alice.error("duel_read", what="source", page=0))["code"] == "INVALID_ARGUMENT"
            assert (await alice.error("duel_append", turn=alice.turn(1)))["code"] == "LEASE_NOT_HELD"
            refused = await alice.ok("duel_claim")  # the peer has not joined: refused, an answer
            assert not refused["acquired"]
            assert (await alice.error("duel_read", what="everything"))["code"] == "INVALID_ARGUMENT"

    run(scenario)


def test_a_wrong_typed_or_missing_argument_is_invalid_argument_naming_each_field(workspace):
    """The SDK's validation of a typed input answers as duel does: a code, and each field with what it must be."""

    async def scenario() -> None:
        async with mcp_seat(workspace, "Alice") as alice:
            await alice.ok("duel_join")
            wrong = await alice.error("duel_wait", timeout_seconds="soon")
            assert wrong == {
                "code": "INVALID_ARGUMENT",
                "message": "duel_wait: timeout_seconds must be a number from 0 to 3600",
                "details": {"fields": ["timeout_seconds"]},
            }
            both = await alice.error("duel_read", what="everything", page=0)
            assert both["code"] == "INVALID_ARGUMENT" and both["details"] == {"fields": ["page", "what"]}
            assert "page must be a whole number of at least 1" in both["message"]
            assert "what must be one of source, turns" in both["message"]
            missing = await alice.error("duel_commit_opening")
            assert missing["message"] == "duel_commit_opening: turn is required: a string"
            assert (await alice.error("duel_close", outcome="WON"))["details"] == {"fields": ["outcome"]}
            said = "\n".join(alice.answers)
            assert "pydantic" not in said and "validation error" not in said.lower()

    run(scenario)


READ_ONLY = {"duel_status", "duel_rules", "duel_read", "duel_wait"}


def test_tools_list_annotates_describes_and_bounds_every_tool_as_an_agent_reads_it(workspace):
    """What a harness shows its model before any call: annotations, one-paragraph descriptions, a description for
    every parameter, enums and bounds, and an output schema for every answer that is data."""

    async def scenario() -> None:
        async with mcp_seat(workspace, "Alice") as alice:
            tools = {tool.name: tool for tool in (await alice.session.list_tools()).tools}
        for name, tool in tools.items():
            hints = tool.annotations
            assert hints is not None, name
            assert hints.read_only_hint is (name in READ_ONLY), name
            if name not in READ_ONLY:
                assert hints.destructive_hint is False, name
            assert tool.description and "\n" not in tool.description and "  " not in tool.description, name
            for parameter, schema in tool.input_schema.get("properties", {}).items():
                assert schema.get("description"), f"{name}.{parameter} has no description"
            assert (tool.output_schema is None) is (name == "duel_rules"), name  # the rules are Markdown, not data
        properties = {name: tool.input_schema.get("properties", {}) for name, tool in tools.items()}
        assert enum(properties["duel_read"]["what"]) == ["source", "turns"]
        assert enum(properties["duel_join"]["role"]) == list(ROLES)
        assert enum(properties["duel_close"]["outcome"]) == list(OUTCOMES)
        assert enum(properties["duel_wait"]["next_step"]) == list(NEXT_STEPS)
        assert properties["duel_read"]["page"]["minimum"] == 1
        [bounded] = [each for each in properties["duel_wait"]["timeout_seconds"]["anyOf"] if each["type"] == "number"]
        assert (bounded["minimum"], bounded["maximum"]) == (0, 3600)
        stance = tools["duel_append"].output_schema["properties"]["stance"]  # type: ignore[index]
        assert enum(stance) == [
            "OPEN_TO_DEBATE",
            "CONVERGING",
            "ACCEPTING_CONSENSUS",
            "DISSENTING",
            "REVISING",
            "CHAIR",
        ]

    run(scenario)


def enum(schema: dict[str, Any]) -> list[Any]:
    """The values a schema allows, whether it is an enum, a nullable one, or a union of enums."""
    arms = schema.get("anyOf", [schema])
    return [value for arm in arms for value in arm.get("enum", [])]


def test_the_rules_reach_the_model_as_markdown_and_a_records_answer_as_compact_json(workspace):
    async def scenario() -> None:
        async with mcp_seat(workspace, "Alice") as alice:
            await alice.ok("duel_join")
            rules = await alice.call("duel_rules")
            assert rules.structured_content is None  # nothing for a harness to show escaped in its place
            text = await alice.text("duel_rules")
            assert text.startswith("Format") and "\n```markdown\n## Turn {N}" in text and "## Outcomes\n" in text
            status = await alice.call("duel_status")
            [block] = status.content
            assert isinstance(block, TextContent)
            assert json.loads(block.text) == status.structured_content  # the same data, compact
            assert ", " not in block.text.split('"duel"')[0] and '":' in block.text
            page = await alice.text("duel_read", what="source")
            assert page.startswith("design.md, page 1 of 1:\n\n    1  # Lease design\n")  # Markdown, not JSON

    run(scenario)


def test_a_wait_reports_progress_and_a_cancelled_wait_leaves_the_server_answering(workspace):
    async def scenario() -> None:
        async with mcp_seat(workspace, "Alice") as alice:
            await alice.ok("duel_join")
            heard: list[tuple[float, str | None]] = []

            async def progress(done: float, total: float | None, message: str | None) -> None:
                heard.append((done, message))

            waited = await alice.call("duel_wait", progress=progress, timeout_seconds=5)
            assert not waited.is_error and waited.structured_content["changed"] is False
            assert heard and all("waiting" in (message or "") for _, message in heard)

            with anyio.move_on_after(1.0):  # the client gives up: the SDK sends notifications/cancelled
                await alice.call("duel_wait", timeout_seconds=60)
            started = time.monotonic()
            assert (await alice.ok("duel_status"))["participant_count"] == 1
            assert time.monotonic() - started < 5

    run(scenario)


def test_a_killed_server_loses_no_turn_and_holds_the_floor_no_longer_than_its_lease(workspace):
    """A `kill -9` while holding the floor: the lease runs out; a new server resumes the same seat."""

    async def scenario() -> None:
        async with mcp_seat(workspace, "Alice") as alice, mcp_seat(workspace, "Bob") as bob:
            first = await alice.ok("duel_join")
            await bob.ok("duel_join")
            await alice.ok("duel_claim")
            os.kill(server_pid(workspace, "Alice"), signal.SIGKILL)
            await floor_freed(workspace, first["duel_id"], within=8)  # the lease is 5 s
        async with mcp_seat(workspace, "Alice") as again:
            resumed = await again.ok("duel_join")
            assert resumed["participant_id"] == first["participant_id"]
            assert (await again.ok("duel_claim"))["acquired"]
            assert (await again.ok("duel_append", turn=again.turn(1)))["turn_number"] == 1

    run(scenario)


def test_sigterm_gives_the_floor_back_and_keeps_the_seat(workspace):
    async def scenario() -> None:
        async with mcp_seat(workspace, "Alice") as alice, mcp_seat(workspace, "Bob") as bob:
            joined = await alice.ok("duel_join")
            await bob.ok("duel_join")
            await alice.ok("duel_claim")
            os.kill(server_pid(workspace, "Alice"), signal.SIGTERM)
            await floor_freed(workspace, joined["duel_id"], within=3)
            assert DuelService(workspace / "debates").status(joined["duel_id"]).participant_count == 2

    run(scenario)


def test_a_client_that_disconnects_mid_wait_leaves_the_floor_free_and_the_seat_kept(workspace):
    async def scenario() -> None:
        async with mcp_seat(workspace, "Bob") as bob:
            async with mcp_seat(workspace, "Alice") as alice:
                joined = await alice.ok("duel_join")
                await bob.ok("duel_join")
                assert (await alice.ok("duel_claim"))["acquired"]
                with anyio.move_on_after(1.0):
                    await alice.call("duel_wait", timeout_seconds=60)  # still waiting when the client goes
            await floor_freed(workspace, joined["duel_id"], within=3)
            assert (await bob.ok("duel_status"))["participant_count"] == 2

    run(scenario)


def test_a_debate_dir_it_cannot_write_is_refused_at_start(workspace):
    (workspace / "debates").write_text("a file, not a folder", encoding="utf-8")
    args = server_params(workspace, "Alice").args
    done = subprocess.run([sys.executable, *args], cwd=workspace, capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    assert done.stderr.startswith("duel: ") and "Traceback" not in done.stderr


def test_a_store_url_of_no_store_is_refused_at_start_though_the_store_opens_at_the_first_call(workspace):
    args = server_params(workspace, "Alice", "--store", "mysql://somewhere/duels").args
    done = subprocess.run([sys.executable, *args], cwd=workspace, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr.startswith("duel: ") and "postgresql://" in done.stderr and "Traceback" not in done.stderr


def server_pid(workspace: Path, name: str) -> int:
    """The pid of the `duel mcp` server seated as ``name`` in ``workspace``."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"mcp" in argv and name.encode() in argv and str(workspace / "debates").encode() in argv:
            return int(entry.name)
    raise AssertionError(f"no duel mcp server for {name}")


def test_the_entry_duel_skill_installs_starts_this_server_with_the_tools_its_skill_names(workspace):
    command, args = mcp_server_command("claude-code")
    env = {k: v for k, v in clean_env().items() if k in ("PATH", "PYTHONPATH", "HOME", "LANG")}
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(workspace))

    async def scenario() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name for tool in (await session.list_tools()).tools}
            resources = {str(resource.uri) for resource in (await session.list_resources()).resources}
            assert tools == set(MCP_TOOLS) and resources == set(MCP_RESOURCES)

    run(scenario)


def test_with_verify_an_append_citing_a_dead_page_is_refused_at_its_line_and_the_floor_kept(workspace, web):
    async def scenario() -> None:
        verify = ("--verify", "--allow-private-hosts")
        async with mcp_seat(workspace, "Alice", *verify) as alice, mcp_seat(workspace, "Bob") as bob:
            await alice.ok("duel_join")
            await bob.ok("duel_join")
            await alice.ok("duel_claim")
            cited = make_turn(
                1, "Alice", "claude-code", "claude-opus-4", counterclaim=CLAIM, citing=(web.url("/missing"),)
            )
            refused = await alice.error("duel_append", turn=cited)
            [violation] = refused["details"]["violations"]
            assert violation["code"] == "CITATION_FABRICATED"
            assert cited.splitlines()[violation["line"] - 1] == f"  - {web.url('/missing')}"
            assert (await alice.ok("duel_status"))["floor_held_by_you"]
            honest = make_turn(
                1, "Alice", "claude-code", "claude-opus-4", counterclaim=CLAIM, citing=(web.url("/states"),)
            )
            assert (await alice.ok("duel_append", turn=honest))["turn_number"] == 1
            assert web.count("/missing") == 1 and web.count("/states") == 1

    run(scenario)


def test_the_chair_takes_its_seat_through_the_same_tools(workspace):
    (workspace / "duel.toml").write_text("[duel]\nmax_turns = 4\n", encoding="utf-8")  # a chaired duel's least

    async def scenario() -> None:
        async with mcp_seat(workspace, "Alice", "--role", "chair") as chair, mcp_seat(workspace, "Bob") as bob:
            assert (await chair.ok("duel_join"))["seat"] == 0
            assert (await bob.ok("duel_join"))["seat"] == 1
            status = await chair.ok("duel_status")
            assert status["duel"]["chair"] is True and status["next_turn_seat"] == 0

    run(scenario)


def test_mcp_seats_commit_sealed_openings_and_reveal_them_with_an_empty_append(workspace):
    (workspace / "duel.toml").write_text("[duel]\nlease_seconds = 5\nmax_turns = 2\nsealed_openings = true\n")

    async def scenario() -> None:
        async with mcp_seat(workspace, "Alice") as alice, mcp_seat(workspace, "Bob") as bob:
            await alice.ok("duel_join")
            await bob.ok("duel_join")
            status = await alice.ok("duel_status")
            assert status["next_step"] == "commit_opening" and "duel_commit_opening" in status["next_step_words"]
            opening = {
                seat: sealed_opening(n, seat.name, seat.harness, seat.model, "ACCEPTING_CONSENSUS")
                for n, seat in ((1, alice), (2, bob))
            }
            assert (await alice.ok("duel_commit_opening", turn=opening[alice]))["waiting_for_seats"] == [2]
            assert "Alice" not in (await bob.ok("duel_read", what="turns"))["text"]  # nothing revealed yet
            await bob.ok("duel_commit_opening", turn=opening[bob])
            await alice.ok("duel_claim")
            assert (await alice.ok("duel_append"))["turn_number"] == 1  # no turn: the committed one
            await bob.ok("duel_claim")
            appended = await bob.ok("duel_append")
            assert appended["turn_number"] == 2 and appended["terminal_outcome"] == "ACCEPTED_CONSENSUS"

    run(scenario)


# -- challenges (docs/protocol.md section 10, "Challenges") -------------------------------------------

DEAD_CLAIM = "every lease study shows fifteen minutes halves the lost turns"
REDACTED = "[redacted: ruling 1 found its source fabricated]"


async def challenge_turn_1(alice: Seat, bob: Seat, claim: str, url: str, *, why: str) -> dict[str, Any]:
    """Alice's turn 1 cites ``url`` for ``claim``; Bob's turn 2 challenges it; Bob's append answer."""
    await alice.ok("duel_join")
    await bob.ok("duel_join")
    await alice.ok("duel_claim")
    await alice.ok("duel_append", turn=make_turn(1, *heading_of(alice), counterclaim=claim, citing=(url,)))
    await bob.ok("duel_wait", timeout_seconds=10)
    await bob.ok("duel_claim")
    return await bob.ok("duel_append", turn=challenging(make_turn(2, *heading_of(bob)), f"Turn 1 {url}: {why}"))


def heading_of(seat: Seat) -> tuple[str, str, str]:
    """The heading fields of ``seat``'s turns."""
    return seat.name, seat.harness, seat.model


def test_an_mcp_seats_challenge_of_a_dead_link_is_ruled_fabricated_before_the_floor_passes(workspace, web):
    (workspace / "duel.toml").write_text("[duel]\nlease_seconds = 5\nmax_turns = 4\n", encoding="utf-8")

    async def scenario() -> None:
        private = ("--allow-private-hosts",)  # the fake web is on 127.0.0.1
        async with mcp_seat(workspace, "Alice") as alice, mcp_seat(workspace, "Bob", *private) as bob:
            dead = web.url("/angled-404")
            why = "the page never supported the claim about lost turns"
            appended = await challenge_turn_1(alice, bob, DEAD_CLAIM, dead, why=why)
            [checked] = appended["challenges"]
            assert (checked["turn"], checked["writer"], checked["counts"]) == (1, "Alice", {"fabricated": 1})
            [ruling] = checked["rulings"]
            assert (ruling["r"], ruling["where"], ruling["url"], ruling["verdict"]) == (
                1,
                "counterpoint 1",
                dead,
                "fabricated",
            )
            assert (
                "HTTP 404 Not <b>Found</b>" in ruling["evidence"]
            )  # as the server said it, as the JSON report gives it
            assert web.count("/angled-404") == 1  # fetched by Bob's server, once

            duel_id = appended["duel_id"]
            await floor_freed(workspace, duel_id, within=5)  # the floor was given back, as asked
            service = DuelService(workspace / "debates")
            order = [e.type for e in service.events(duel_id, {EventType.RULING_WRITTEN, EventType.LOCK_RELEASED})]
            assert order[-2:] == [EventType.RULING_WRITTEN, EventType.LOCK_RELEASED]  # ruled before the floor passed
            record = RecordFile.read(appended["debate_path"])
            assert DEAD_CLAIM in record.text  # the record keeps turn 1 byte for byte
            [written] = record.rulings
            assert (written.turn, written.verdict, written.by, written.before) == (
                1,
                Verdict.FABRICATED,
                "seat 2's challenge in turn 2",
                3,
            )

            assert (await alice.ok("duel_wait", timeout_seconds=10))["next_step"] == "claim_lock"
            shown = (await alice.ok("duel_read", what="turns"))["text"]
            assert DEAD_CLAIM not in shown and REDACTED in shown  # as a duel join seat's next prompt shows it
            await alice.ok("duel_claim")
            again = await alice.error("duel_append", turn=make_turn(3, *heading_of(alice), counterclaim=DEAD_CLAIM))
            assert {v["code"] for v in again["details"]["violations"]} == {RuleCode.REDACTED_REPEATED}

    run(scenario)


def test_an_mcp_seats_challenge_of_a_page_that_supports_the_claim_is_ruled_verified_by_its_voters(
    workspace, web: FakeWeb, openai_server
):
    (workspace / "duel.toml").write_text("[duel]\nlease_seconds = 5\nmax_turns = 4\n", encoding="utf-8")
    openai_server.responder = honest_vote
    voters = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": openai_server.base_url}

    async def scenario() -> None:
        flags = ("--verify", "--allow-private-hosts", "--voter", "gpt-x")
        async with mcp_seat(workspace, "Alice") as alice, mcp_seat(workspace, "Bob", *flags, env=voters) as bob:
            live = web.url("/states")
            appended = await challenge_turn_1(alice, bob, CLAIM, live, why="the page is about something else entirely")
            [checked] = appended["challenges"]
            assert checked["counts"] == {"verified": 1}
            assert [(r["r"], r["url"], r["verdict"]) for r in checked["rulings"]] == [(1, live, "verified")]
            assert len(openai_server.requests) == 3  # the quorum's three seats, on the one challenged claim
            [written] = RecordFile.read(appended["debate_path"]).rulings
            assert (written.verdict, written.by, written.before) == (
                Verdict.VERIFIED,
                "seat 2's challenge in turn 2",
                3,
            )
            await floor_freed(workspace, appended["duel_id"], within=5)
            assert CLAIM in (await alice.ok("duel_read", what="turns"))["text"]  # a verified source redacts nothing

    run(scenario)


def asyncio_report(raised: BaseException | None) -> logging.LogRecord:
    """The record asyncio logs at ``asyncio.run``'s shutdown for a task that ended on ``raised``."""
    exc_info = (type(raised), raised, None) if raised is not None else None
    message = "unhandled exception during asyncio.run() shutdown"
    return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, message, None, exc_info)


def test_a_task_a_stop_signal_ended_is_not_reported_as_an_error_but_any_other_error_is() -> None:
    """A stop signal lands in whatever runs; when that is one of the server's tasks, asyncio reported the task with
    a traceback at its shutdown (under load, 19 of 60 servers sent SIGHUP right after `initialize`)."""
    group = getattr(builtins, "BaseExceptionGroup", None) or pytest.importorskip("exceptiongroup").BaseExceptionGroup
    quiet = StopIsNoError()
    assert not quiet.filter(asyncio_report(KeyboardInterrupt()))
    assert not quiet.filter(asyncio_report(group("unhandled errors in a TaskGroup", [KeyboardInterrupt()])))
    assert not quiet.filter(asyncio_report(group("nested", [group("inner", [KeyboardInterrupt()])])))
    assert quiet.filter(asyncio_report(group("both", [KeyboardInterrupt(), ValueError("broken")])))
    assert quiet.filter(asyncio_report(ValueError("broken")))
    assert quiet.filter(asyncio_report(None))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_ends_the_server_while_its_input_stays_open(workspace: Path, signum: int) -> None:
    """SIGTERM and SIGHUP end `duel mcp` as they end every command (exit 130), though the client never closes its end."""
    args = server_params(workspace, "Alice").args
    pipe = subprocess.PIPE
    with subprocess.Popen([sys.executable, *args], cwd=workspace, stdin=pipe, stdout=pipe, stderr=pipe) as server:
        assert server.stdin is not None and server.stdout is not None and server.stderr is not None
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}).encode())
        server.stdin.write(b"\n")
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1  # serving, its input open
        server.send_signal(signum)
        try:
            code = server.wait(timeout=5)
        finally:
            server.kill()
        said = server.stderr.read().decode()
        assert code == 130, said
        assert "interrupted" in said and "Traceback" not in said


SEAT_MODULES = ("rp1_duel.mcp_server.seat", "rp1_duel.coordination.service", "rp1_duel.participant")


def test_initialize_and_tools_list_load_none_of_the_seats_modules(workspace: Path) -> None:
    """Start-up is what a harness waits for (Codex gives a server about a second): until the first tool call the
    server imports neither the seat, nor the service, nor the participant package."""
    args = server_params(workspace, "Alice").args
    pipe = subprocess.PIPE
    argv = [sys.executable, "-X", "importtime", *args]
    with subprocess.Popen(argv, cwd=workspace, stdin=pipe, stdout=pipe, stderr=pipe) as server:
        assert server.stdin is not None and server.stdout is not None and server.stderr is not None
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ):
            server.stdin.write(json.dumps(message).encode() + b"\n")
            server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1
        listed = json.loads(server.stdout.readline())
        assert listed["id"] == 2 and len(listed["result"]["tools"]) == len(MCP_TOOLS)
        server.stdin.close()
        assert server.wait(timeout=10) == 0
        imported = {line.rsplit("|", 1)[-1].strip() for line in server.stderr.read().decode().splitlines()}
    assert [name for name in imported if name.startswith(SEAT_MODULES)] == []
    assert not (workspace / "debates").exists()  # nor is anything created


class RecordingModel:
    """A model that answers nothing and keeps every request: what an audience member's model is shown."""

    name, model, reasoning, remote = "recording", "recording", None, False

    def __init__(self) -> None:
        self.requests: list[TurnRequest] = []

    def preflight(self) -> str:
        return "recording"

    def compose(self, request: TurnRequest, _progress: Callable[[Any], None]) -> Composition:
        self.requests.append(request)
        return Composition(text="No question")


SETTINGS = DuelSettings(max_turns=2, lease_seconds=5)  # as the workspace's duel.toml has it


def test_a_redacted_claim_is_in_no_view_a_person_or_a_model_is_served(workspace: Path) -> None:
    """A claim whose source was ruled fabricated: in the record byte for byte, and in none of the report (Markdown,
    HTML, JSON), a seat's or the audience's prompt, watch, or what `duel mcp` serves (its resources and tools)."""
    service = DuelService(workspace / "debates")

    served: list[str] = []

    async def scenario() -> None:
        async with mcp_seat(workspace, "Alice") as alice:
            await alice.ok("duel_join")
            bob = join(service, workspace / "design.md", "Bob", harness="codex", model_id="gpt-5", settings=SETTINGS)
            await alice.ok("duel_claim")
            turn = make_turn(1, "Alice", *SEATS["Alice"], counterclaim=REDACTED_CLAIM, citing=(DEAD, LIVE))
            await alice.ok("duel_append", turn=turn)
            found = {DEAD: Verdict.FABRICATED, LIVE: Verdict.VERIFIED}
            service.record_verdicts(bob.seat, 1, verdicts(turn, found))
            served.extend([await resource(alice, uri) for uri in MCP_RESOURCES])
            for what in ("turns", "source"):
                served.append(json.dumps(await alice.ok("duel_read", what=what)))
            served.append(json.dumps(await alice.ok("duel_status")))
            served.append(await alice.text("duel_rules"))
            path.append(Path(service.status(bob.duel_id).duel.debate_path))

    path: list[Path] = []
    run(scenario)
    [artifact] = path
    assert REDACTED_CLAIM in artifact.read_text(encoding="utf-8")  # the record keeps the turn byte for byte
    assert "[redacted: ruling 1 found its source fabricated]" in served[0]  # duel://artifact: the turn, redacted
    record = RecordFile.read(artifact)
    assert record.front is not None
    report = read_report(artifact, env={})
    served += [render_markdown(report), render_html(report), json.dumps(report.to_dict())]
    served.append(history_text(record.history().shown_blocks()))  # a seat's prompt
    model = RecordingModel()
    member = AudienceMember(
        service, cast("Provider", model), name="Eve", target=str(workspace / "design.md"), topic=None, say=print
    )
    member._request(service.status(record.front.duel_id), "ask", 100)
    served.append(model.requests[0].history)  # the audience's prompt
    watcher = Follower(service, record.front.duel_id)
    served += [line.text for line in watcher.lines(cast("Any", watcher.poll()))]
    assert [view for view in served if REDACTED_CLAIM in view] == []
