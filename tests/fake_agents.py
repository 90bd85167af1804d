"""A scripted agent behind fake model APIs on 127.0.0.1, for the real harnesses (tests/test_harnesses.py).

A harness (Claude Code, Codex, Gemini CLI) sends its whole conversation with each request; the server
reads the tool results out of it in that API's wire format, asks the :class:`ScriptedAgent` what the
model does next (a tool call, or a last word), and streams that back as the API would. The agent
follows duel's ``next_step`` from each tool result, as the skill tells a model to.

Wires: the Anthropic Messages API (``POST /v1/messages``, streamed), the OpenAI Responses API
(``POST /v1/responses``, streamed: what Codex speaks to a custom provider), and the Gemini API
(``POST /v1beta/models/M:streamGenerateContent``, and ``:generateContent``).

With ``DUEL_AGENT_LOG=FILE`` set, every request is appended to FILE as a JSON line: what to read when a
new harness version fails its test.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from local_server import LocalServer, served_by

from helpers import make_turn

# A duel tool under the harness's prefix: mcp__duel__duel_join (Claude Code), duel_join in the mcp__duel
# namespace (Codex), mcp_duel_duel_join (Gemini CLI).
TOOL = re.compile(r"(duel_(?:join|status|rules|read|wait|claim|append|commit_opening|release|close))$")
DEFERRED = re.compile(r"\bmcp__duel__duel_[a-z_]+")  # duel's tools as Claude Code names them
NEXT_STEP = re.compile(r"""next_step\W{1,8}([a-z_]+)""")  # in JSON, JSON in a string, or words


@dataclass
class Call:
    """A tool call the model makes: the duel tool's name, and its arguments."""

    tool: str
    arguments: dict[str, Any]


@dataclass
class ScriptedAgent:
    """The model's side of a duel: join, then do what each answer's ``next_step`` says, until ``closed``.

    ``peer_moved`` is set by the test once the peer has appended after the agent: the agent's first wait
    after its own append is held back until then, so that wait starts after the peer already moved."""

    target: Path
    name: str
    harness: str
    model: str
    peer_moved: threading.Event
    tools_seen: list[list[str]] = field(default_factory=list)  # the tool names of each request that had tools
    results: list[str] = field(default_factory=list)  # every tool result the harness sent back, as text
    calls: list[tuple[Call, float]] = field(default_factory=list)  # each call and when it was sent
    answered: dict[int, float] = field(default_factory=dict)  # call index -> when its result came back
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self, tools: list[str], results: list[tuple[str, str]]) -> Call | str:
        """What the model answers a request offering ``tools`` whose conversation holds ``results``
        ((tool, text), in order): a :class:`Call`, or a closing text."""
        with self.lock:
            if not tools:
                return "OK."  # a harness's side request (a title, a summary): no tools, no duel
            self.tools_seen.append(tools)
            for index in range(len(self.answered), min(len(results), len(self.calls))):
                self.answered[index] = time.monotonic()
                self.results.append(results[index][1])
            if len(results) < len(self.calls):  # a retried request: answer what was answered before
                return self.calls[len(results)][0]
            call = self.decide(results)
            if isinstance(call, Call):
                self.calls.append((call, time.monotonic()))
            return call

    def decide(self, results: list[tuple[str, str]]) -> Call | str:
        if not results:
            return Call("duel_join", {"target": str(self.target), "name": self.name, "model": self.model})
        tool, text = results[-1]
        steps = NEXT_STEP.findall(text)
        step = steps[-1] if steps else "none"
        if step in ("wait_peer", "wait_turn"):
            if tool.endswith("duel_append"):
                assert self.peer_moved.wait(120), "the peer never moved"
            return Call("duel_wait", {})
        if step == "claim_lock":
            return Call("duel_claim", {})
        if step == "compose_turn":
            number = 2 * sum(1 for call, _ in self.calls if call.tool == "duel_append") + 1
            turn = make_turn(number, self.name, self.harness, self.model)
            return Call("duel_append", {"turn": turn})
        if step == "release_lock":
            return Call("duel_release", {})
        if step == "close":
            return Call("duel_close", {})
        return f"Stopped at next_step {step}: {text[:300]}"

    def wait_seconds(self) -> list[float]:
        """How long each duel_wait took, from the call going out to its result coming back."""
        return [
            self.answered[index] - sent
            for index, (call, sent) in enumerate(self.calls)
            if call.tool == "duel_wait" and index in self.answered
        ]


def tool_name(name: str) -> str:
    """The duel tool a harness's tool name stands for ("" when none)."""
    match = TOOL.search(name)
    return match.group(1) if match else ""


class AgentServer(LocalServer):
    """One fake model API; :meth:`answer` writes the response in the wire's format."""

    def __init__(self, agent: ScriptedAgent):
        self.agent = agent
        self.requests: list[dict[str, Any]] = []  # every request body, in order
        self.paths: list[str] = []
        super().__init__(_Handler)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def respond(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        raise NotImplementedError

    def send_events(self, handler: BaseHTTPRequestHandler, events: Iterator[str]) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.end_headers()
        for event in events:
            handler.wfile.write(event.encode("utf-8"))
            handler.wfile.flush()


def send_json(handler: BaseHTTPRequestHandler, status: int, body: dict[str, Any]) -> None:
    encoded = json.dumps(body).encode("utf-8")
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(encoded)))
    handler.end_headers()
    handler.wfile.write(encoded)


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.0: a stream's end is the connection's, as no length is known before it.
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  quiet
        pass

    def do_POST(self) -> None:
        server = served_by(self, AgentServer)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        server.paths.append(self.path)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            send_json(self, 400, {"error": {"message": "not JSON"}})
            return
        server.requests.append(body)
        if os.environ.get("DUEL_AGENT_LOG"):
            with open(os.environ["DUEL_AGENT_LOG"], "a", encoding="utf-8") as log:
                log.write(json.dumps({"path": self.path, "body": body}) + "\n")
        server.respond(self, body)

    def do_GET(self) -> None:
        served_by(self, AgentServer).paths.append(self.path)
        send_json(self, 404, {"error": {"type": "not_found_error", "message": "not here"}})


def _sse(event: str | None, data: dict[str, Any]) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n"


# -- Anthropic Messages API (Claude Code) ---------------------------------------------------------
class AnthropicAgentServer(AgentServer):
    """``POST /v1/messages``: tool results are ``tool_result`` blocks of the user turns."""

    searched = False  # whether the deferred tools were loaded (ToolSearch)

    def respond(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if not handler.path.startswith("/v1/messages") or handler.path.startswith("/v1/messages/count_tokens"):
            send_json(handler, 200, {"input_tokens": 100})
            return
        loaded = [tool["name"] for tool in body.get("tools") or [] if "name" in tool]
        # Claude Code defers MCP tools: named in a system reminder, their schemas loaded through ToolSearch.
        first = body.get("messages", [])[:1]
        deferred = sorted(set(DEFERRED.findall(_anthropic_text(first[0]["content"]) if first else "")) - set(loaded))
        tools = loaded + deferred
        names: dict[str, str] = {}
        results: list[tuple[str, str]] = []
        for message in body.get("messages", []):
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_use":
                    names[block["id"]] = block["name"]
                elif block.get("type") == "tool_result":
                    results.append((names.get(block["tool_use_id"], ""), _anthropic_text(block.get("content"))))
        duel_results = [(tool_name(name), text) for name, text in results if tool_name(name)]
        answer = self.agent.next(tools, duel_results)
        prefix = next((name.removesuffix("duel_join") for name in tools if name.endswith("duel_join")), "")
        content: dict[str, Any]
        if isinstance(answer, Call) and deferred and not self.searched:
            self.searched = True  # as a model does: load the deferred tools' schemas first
            answer = Call("ToolSearch", {"query": "select:" + ",".join(deferred)})
            prefix = ""
        if isinstance(answer, Call):
            call_id = f"toolu_{len(self.requests):04d}"
            content = {"type": "tool_use", "id": call_id, "name": prefix + answer.tool, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(answer.arguments)}
            stop = "tool_use"
        else:
            content, delta, stop = {"type": "text", "text": ""}, {"type": "text_delta", "text": answer}, "end_turn"
        message = {
            "id": f"msg_{len(self.requests):04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        if not body.get("stream"):
            final = {**content, **({"input": answer.arguments} if isinstance(answer, Call) else {"text": answer})}
            send_json(handler, 200, {**message, "content": [final], "stop_reason": stop})
            return
        events = [
            _sse("message_start", {"type": "message_start", "message": message}),
            _sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": content}),
            _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
            _sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            ),
            _sse("message_stop", {"type": "message_stop"}),
        ]
        self.send_events(handler, iter(events))


def _anthropic_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content or [] if isinstance(block, dict))


Wire = Callable[[ScriptedAgent], AgentServer]


# -- OpenAI Responses API (Codex) ----------------------------------------------------------------
class ResponsesAgentServer(AgentServer):
    """``POST /v1/responses``: tool results are ``function_call_output`` items of the input."""

    def respond(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        tools = [name for tool in body.get("tools") or [] for name in _responses_tool_names(tool)]
        names: dict[str, str] = {}
        results: list[tuple[str, str]] = []
        for given in body.get("input") or []:
            if given.get("type") == "function_call":
                names[given["call_id"]] = f"{given.get('namespace', '')} {given.get('name', '')}".strip()
            elif given.get("type") == "function_call_output":
                results.append((names.get(given["call_id"], ""), _responses_text(given.get("output"))))
        duel_results = [(tool_name(name), text) for name, text in results if tool_name(name)]
        answer = self.agent.next(tools, duel_results)
        number = len(self.requests)
        if isinstance(answer, Call):
            name = next((name for name in tools if tool_name(name) == answer.tool), answer.tool)
            namespace, _, short = name.rpartition(" ")
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{number}",
                "call_id": f"call_{number}",
                "name": short,
                "arguments": json.dumps(answer.arguments),
                "status": "completed",
            } | ({"namespace": namespace} if namespace else {})
        else:
            text = {"type": "output_text", "text": answer, "annotations": []}
            item = {
                "type": "message",
                "id": f"msg_{number}",
                "role": "assistant",
                "status": "completed",
                "content": [text],
            }
        response = {
            "id": f"resp_{number}",
            "object": "response",
            "status": "in_progress",
            "model": body.get("model", ""),
        }
        usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
        events = [
            _sse("response.created", {"type": "response.created", "response": response}),
            _sse("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
            _sse("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            _sse(
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {**response, "status": "completed", "output": [item], "usage": usage},
                },
            ),
        ]
        self.send_events(handler, iter(events))


def _responses_tool_names(tool: dict[str, Any]) -> list[str]:
    """A tool's name, or a namespace's tools' names as ``NAMESPACE NAME`` (Codex puts a server's tools in one)."""
    if "name" in tool and tool.get("type") == "function":
        return [tool["name"]]
    inner = tool.get("tools") or []
    return [f"{tool.get('name', '')} {sub.get('name', '')}" for sub in inner if isinstance(sub, dict)]


def _responses_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        return json.dumps(output)
    return "\n".join(part.get("text", "") for part in output or [] if isinstance(part, dict))


# -- Gemini API (Gemini CLI) ---------------------------------------------------------------------
class GeminiAgentServer(AgentServer):
    """``POST /v1beta/models/M:streamGenerateContent`` (and ``:generateContent``): tool results are
    ``functionResponse`` parts of the contents."""

    def respond(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if ":countTokens" in handler.path:
            send_json(handler, 200, {"totalTokens": 100})
            return
        tools = [
            declaration["name"]
            for tool in body.get("tools") or []
            for declaration in tool.get("functionDeclarations") or []
            if "name" in declaration
        ]
        results = [
            (part["functionResponse"].get("name", ""), _gemini_text(part["functionResponse"].get("response")))
            for content in body.get("contents") or []
            for part in content.get("parts") or []
            if "functionResponse" in part
        ]
        duel_results = [(tool_name(name), text) for name, text in results if tool_name(name)]
        answer = self.agent.next(tools, duel_results)
        if isinstance(answer, Call):
            name = next((name for name in tools if tool_name(name) == answer.tool), answer.tool)
            part: dict[str, Any] = {"functionCall": {"name": name, "args": answer.arguments}}
        else:
            part = {"text": answer}
        chunk = {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": handler.path.split("/models/")[-1].split(":")[0],
        }
        if ":streamGenerateContent" not in handler.path:
            send_json(handler, 200, chunk)
            return
        self.send_events(handler, iter([_sse(None, chunk)]))


def _gemini_text(response: Any) -> str:
    """A function response's text: Gemini CLI wraps the tool's in ``{"output": …}``."""
    if isinstance(response, dict) and isinstance(response.get("output"), str):
        return str(response["output"])
    return json.dumps(response)
