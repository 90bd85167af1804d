"""Fake Anthropic and OpenAI model servers on 127.0.0.1, speaking the real wire format.

Tests point the real SDK clients at them by base URL, so the whole client path (request
building, SSE parsing, error classes, retries) is exercised without calling a real API.

This module is a pytest plugin (conftest lists it in ``pytest_plugins``): every test module
gets the ``anthropic_server`` / ``openai_server`` fixtures without importing them, and may
import the server classes. Beside ``duel join`` processes, run one as a process:

    python tests/fake_models.py --kind anthropic --port-file PORT_FILE [--responder MODULE:FUNC]
        [--port N] [--delay-per-chunk SECONDS] [--fail-status CODE] [--requests-log JSONL] [--script JSON]
        [--serve-as MODEL]

It prints its port on standard output, writes it to PORT_FILE (atomically, so a poller sees
the whole number or nothing) and serves until SIGTERM or SIGINT.

``script`` (``--script``, a JSON list) scripts what production APIs do, one action per
request in order; once it runs out, requests are answered normally. An action is an object
with any of:

- ``status`` (with ``retry_after``, seconds): answer with that HTTP error, e.g. 429 or 529;
- ``error_after_chunks`` (with ``error_type``, default ``overloaded_error``): an error event
  inside the stream (Anthropic ``event: error``; OpenAI an ``error`` chunk) after N chunks;
- ``end_after_chunks``: end the stream cleanly after N chunks, without its closing events;
- ``reset_after_chunks``: announce a long body, then close the connection after N chunks
  (the client sees the connection drop);
- ``think_seconds``: stay silent that long before the first chunk (keep-alives only, as
  a reasoning model does).

``serve_as`` (``--serve-as``) names the model every answer says served it, as an API that answers a
request for one model with another does; by default an answer names the model requested.

``FakeOpenAIServer(flavor=…, context_window=N)`` answers as a local server does (the prompt
counted as ``_input_tokens``, the answer a token a chunk): ``"llama-cpp-python"`` answers a
streamed prompt longer than the window with HTTP 200 and an empty stream and an unstreamed
one with its HTTP 400 ``context_length_exceeded``, sends no usage chunk, and reads
``max_tokens`` but not ``max_completion_tokens``; ``"llama-server"`` (llama.cpp) answers HTTP
400 ``exceed_context_size_error``. Either ends an answer with ``finish_reason: "length"`` when
the window fills up.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from local_server import LocalServer, served_by

DEFAULT_TEXT = "This is the fake model's answer."

Responder = Callable[[dict], str]


def fixed_text(body: dict) -> str:
    return DEFAULT_TEXT


class FakeModelServer(LocalServer):
    """One model endpoint; the responder's text is streamed a word per chunk."""

    kind = ""
    path = ""

    def __init__(
        self,
        responder: Responder = fixed_text,
        delay_per_chunk: float = 0.0,
        fail_status: int | None = None,
        *,
        truncated: bool = False,
        drop_after_chunks: int | None = None,
        port: int = 0,
        requests_log: Path | None = None,
        script: list[dict] | None = None,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        models: list[str] | None = None,
        lookup: str = "retrieve",
        flavor: str = "openai",
        context_window: int | None = None,
        serve_as: str | None = None,
    ):
        # All of these are read at each request, so a test may change them between requests.
        self.responder = responder
        self.delay_per_chunk = delay_per_chunk
        self.fail_status = fail_status
        self.truncated = truncated  # answer as if the model hit its output-token limit
        self.drop_after_chunks = drop_after_chunks  # close the connection mid-stream, as a dying server does
        self.script = list(script or [])  # per-request actions (module docstring), consumed in order
        self.cache_read_tokens = cache_read_tokens  # reported in every answer's usage
        self.cache_write_tokens = cache_write_tokens
        self.models = models  # the models served (others are 404, as real APIs answer); None: any name
        self.lookup = lookup  # GET /v1/models[/{id}]: "retrieve" both, "list" the list only (vLLM), "none"
        self.flavor = flavor  # an OpenAI server's: "openai", "llama-cpp-python" or "llama-server" (docstring)
        self.context_window = context_window  # prompt and answer, in tokens; None: no limit
        self.serve_as = serve_as  # the model its answers name; None: the one requested
        self.requests: list[dict] = []
        self.lookups: list[str] = []  # the paths of the model lookups (GET), kept apart from the requests
        self._requests_log = requests_log
        self._log_lock = threading.Lock()
        super().__init__(_Handler, port)

    @property
    def base_url(self) -> str:
        """What to pass as the SDK's base_url."""
        return f"http://127.0.0.1:{self.port}"

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        raw = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        body = json.loads(raw or b"{}")
        headers = {name.lower(): value for name, value in handler.headers.items()}
        self._record({"path": handler.path, "headers": headers, "body": body, "received_at": time.monotonic()})
        if urlsplit(handler.path).path != self.path:
            return _send_json(handler, 404, self.error_body(404))
        with self._log_lock:
            action = self.script.pop(0) if self.script else {}
        status = action.get("status", self.fail_status)
        if status is not None:
            retry_after = action.get("retry_after")
            headers = {} if retry_after is None else {"retry-after": str(retry_after)}
            return _send_json(handler, status, self.error_body(status), headers)
        if self.models is not None and body.get("model") not in self.models:
            return _send_json(handler, 404, self.error_body(404))
        refused = self.refusal(body)
        if refused is not None:
            return _send_json(handler, 400, refused)
        text = self.responder(body)
        chunks = re.findall(r"\s*\S+\s*|\s+", text)
        if not body.get("stream"):
            return _send_json(handler, 200, self.message(body, text, len(chunks)))
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        if "reset_after_chunks" in action:  # a body it will never finish: the client sees the connection drop
            handler.send_header("Content-Length", str(10**9))
        handler.end_headers()
        try:
            for event in self.stream(body, chunks, action):
                handler.wfile.write(event.encode("utf-8"))
                handler.wfile.flush()
        except (_Dropped, BrokenPipeError, ConnectionResetError):
            pass  # the stream ends here, without its closing events

    def handle_get(self, handler: BaseHTTPRequestHandler) -> None:
        """The model lookup: GET /v1/models/{id} and GET /v1/models, as far as ``lookup`` serves them."""
        self.lookups.append(handler.path)
        path = urlsplit(handler.path).path
        model = path.removeprefix("/v1/models/") if path.startswith("/v1/models/") else None
        served = (path == "/v1/models" and self.lookup != "none") or (model and self.lookup == "retrieve")
        if not served:
            return _send_json(handler, 404, self.error_body(404))
        if self.fail_status is not None:
            return _send_json(handler, self.fail_status, self.error_body(self.fail_status))
        if model is None:
            return _send_json(handler, 200, self.model_list(self.models or []))
        if self.models is not None and model not in self.models:
            return _send_json(handler, 404, self.error_body(404))
        return _send_json(handler, 200, self.model_info(model))

    def paced(self, chunks: list[str], action: dict) -> Iterator[str]:
        """The chunks as the model sends them: slowly if asked, cut short or broken by an error if scripted."""
        silent_until = time.monotonic() + action.get("think_seconds", 0)
        while time.monotonic() < silent_until:
            time.sleep(min(0.25, silent_until - time.monotonic()))
            yield self.keep_alive()
        error_at = action.get("error_after_chunks")
        drop_at = action.get("end_after_chunks", action.get("reset_after_chunks", self.drop_after_chunks))
        for index, chunk in enumerate(chunks):
            if index == error_at:
                raise _InStreamError(action.get("error_type", "overloaded_error"))
            if index == drop_at:
                raise _Dropped
            if self.delay_per_chunk:
                time.sleep(self.delay_per_chunk)
            yield chunk

    def served(self, body: dict) -> str:
        """The model an answer says served it: ``serve_as``, else the one requested."""
        return self.serve_as if self.serve_as is not None else body.get("model", "")

    def _record(self, record: dict) -> None:
        with self._log_lock:
            self.requests.append(record)
            if self._requests_log is not None:
                with self._requests_log.open("a", encoding="utf-8") as log:
                    log.write(json.dumps(record) + "\n")

    def refusal(self, body: dict) -> dict | None:  # noqa: ARG002  a hook: this kind refuses nothing
        """The HTTP 400 body of a request this server refuses before answering, if it does."""
        return None

    # Each kind of server answers in its own format.
    def error_body(self, status: int) -> dict:
        raise NotImplementedError

    def message(self, body: dict, text: str, output_tokens: int) -> dict:
        raise NotImplementedError

    def keep_alive(self) -> str:
        raise NotImplementedError

    def stream(self, body: dict, chunks: list[str], action: dict) -> Iterator[str]:
        raise NotImplementedError

    def model_info(self, model: str) -> dict:
        raise NotImplementedError

    def model_list(self, models: list[str]) -> dict:
        raise NotImplementedError


ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class FakeAnthropicServer(FakeModelServer):
    """POST /v1/messages, with the Messages API's SSE events or its JSON message."""

    kind = "anthropic"
    path = "/v1/messages"

    def error_body(self, status: int) -> dict:
        error_type = ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": error_type, "message": f"fake {error_type} ({status})"}}

    def message(self, body: dict, text: str, output_tokens: int) -> dict:
        return {
            "id": f"msg_fake{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": self.served(body),
            "content": [{"type": "text", "text": text}],
            "stop_reason": "max_tokens" if self.truncated else "end_turn",
            "stop_sequence": None,
            "usage": _anthropic_usage(body, output_tokens, self.cache_read_tokens, self.cache_write_tokens),
        }

    def keep_alive(self) -> str:
        return _event("ping")

    def stream(self, body: dict, chunks: list[str], action: dict) -> Iterator[str]:
        start = self.message(body, "", 1)
        start.update(content=[], stop_reason=None)
        yield _event("message_start", message=start)
        yield _event("content_block_start", index=0, content_block={"type": "text", "text": ""})
        yield _event("ping")
        try:
            for chunk in self.paced(chunks, action):
                if chunk == self.keep_alive():
                    yield chunk
                else:
                    yield _event("content_block_delta", index=0, delta={"type": "text_delta", "text": chunk})
        except _InStreamError as error:
            yield _event("error", error={"type": error.kind, "message": f"fake {error.kind} in the stream"})
            return
        yield _event("content_block_stop", index=0)
        stop_reason = "max_tokens" if self.truncated else "end_turn"
        yield _event(
            "message_delta",
            delta={"stop_reason": stop_reason, "stop_sequence": None},
            usage={"output_tokens": len(chunks)},
        )
        yield _event("message_stop")

    def model_info(self, model: str) -> dict:
        return {"type": "model", "id": model, "display_name": model, "created_at": "2026-01-01T00:00:00Z"}

    def model_list(self, models: list[str]) -> dict:
        data = [self.model_info(model) for model in models]
        return {
            "data": data,
            "has_more": False,
            "first_id": models[0] if models else None,
            "last_id": models[-1] if models else None,
        }


class FakeOpenAIServer(FakeModelServer):
    """POST /v1/chat/completions, with Chat Completions chunks (`data:` lines) or its JSON completion."""

    kind = "openai"
    path = "/v1/chat/completions"

    def refusal(self, body: dict) -> dict | None:
        prompt, window = _input_tokens(body), self.context_window
        if window is None or prompt <= window:
            return None
        if self.flavor == "llama-server":
            message = "the request exceeds the available context size, try increasing it"
            error = {"code": 400, "message": message, "type": "exceed_context_size_error"}
            return {"error": {**error, "n_prompt_tokens": prompt, "n_ctx": window}}
        if self.flavor == "llama-cpp-python" and not body.get("stream"):  # streamed: 200 and nothing (stream)
            message = (
                f"This model's maximum context length is {window} tokens. However, you requested {prompt} tokens "
                f"({prompt} in the messages, None in the completion). Please reduce the length of the messages "
                "or completion."
            )
            error = {"message": message, "type": "invalid_request_error", "param": "messages"}
            return {"error": {**error, "code": "context_length_exceeded"}}
        return None

    def fitted(self, body: dict, chunks: list[str]) -> tuple[list[str], bool]:
        """The chunks the server sends, and whether it stopped for length: at its ceiling or a full window."""
        ceiling_name = "max_completion_tokens" if self.flavor == "openai" else "max_tokens"
        limits = [body.get(ceiling_name)]
        if self.context_window is not None:
            limits.append(self.context_window - _input_tokens(body))
        limit = min((limit for limit in limits if limit is not None), default=None)
        if self.truncated or (limit is not None and len(chunks) > limit):
            return chunks[: max(limit or 0, 0)] if limit is not None else chunks, True
        return chunks, False

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def error_body(self, status: int) -> dict:
        code = "invalid_api_key" if status == 401 else None
        message = f"fake openai error ({status})"
        return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}

    def message(self, body: dict, text: str, output_tokens: int) -> dict:
        completion = self._envelope(body, "chat.completion")
        chunks, cut = self.fitted(body, re.findall(r"\s*\S+\s*|\s+", text))
        answer = {"role": "assistant", "content": "".join(chunks)}
        output_tokens = len(chunks)
        finish_reason = "length" if cut else "stop"
        completion["choices"] = [{"index": 0, "message": answer, "logprobs": None, "finish_reason": finish_reason}]
        completion["usage"] = _openai_usage(body, output_tokens, self.cache_read_tokens)
        return completion

    def keep_alive(self) -> str:
        return ": keep-alive\n\n"

    def stream(self, body: dict, chunks: list[str], action: dict) -> Iterator[str]:
        def chunk(delta: dict, finish_reason: str | None = None) -> str:
            data = self._envelope(body, "chat.completion.chunk")
            data["choices"] = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]
            return _data(data)

        window = self.context_window
        if self.flavor == "llama-cpp-python" and window is not None and _input_tokens(body) > window:
            return  # HTTP 200 and not one chunk
        chunks, cut = self.fitted(body, chunks)
        yield chunk({"role": "assistant", "content": ""})
        try:
            for piece in self.paced(chunks, action):
                yield piece if piece == self.keep_alive() else chunk({"content": piece})
        except _InStreamError as error:
            # As OpenAI sends it: a data line holding only an error object, then the end.
            yield _data(
                {
                    "error": {
                        "message": f"fake {error.kind} in the stream",
                        "type": error.kind,
                        "param": None,
                        "code": None,
                    }
                }
            )
            return
        yield chunk({}, "length" if cut else "stop")
        if (body.get("stream_options") or {}).get("include_usage") and self.flavor != "llama-cpp-python":
            usage = self._envelope(body, "chat.completion.chunk")
            usage.update(choices=[], usage=_openai_usage(body, len(chunks), self.cache_read_tokens))
            yield _data(usage)
        yield "data: [DONE]\n\n"

    def model_info(self, model: str) -> dict:
        return {"id": model, "object": "model", "created": 1_767_225_600, "owned_by": "fake"}

    def model_list(self, models: list[str]) -> dict:
        return {"object": "list", "data": [self.model_info(model) for model in models]}

    def _envelope(self, body: dict, kind: str) -> dict:
        return {
            "id": f"chatcmpl-fake{len(self.requests)}",
            "object": kind,
            "created": int(time.time()),
            "model": self.served(body),
            "system_fingerprint": None,
        }


def _anthropic_usage(body: dict, output_tokens: int, cache_read: int = 0, cache_write: int = 0) -> dict:
    # Anthropic's input_tokens leaves out what was read from or written to the cache.
    return {
        "input_tokens": _input_tokens(body),
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
    }


def _openai_usage(body: dict, output_tokens: int, cache_read: int = 0) -> dict:
    # OpenAI's prompt_tokens include the cached ones.
    prompt = _input_tokens(body) + cache_read
    return {
        "prompt_tokens": prompt,
        "completion_tokens": output_tokens,
        "total_tokens": prompt + output_tokens,
        "prompt_tokens_details": {"cached_tokens": cache_read},
    }


def _input_tokens(body: dict) -> int:
    return len(json.dumps(body)) // 4  # about four characters a token


def _event(kind: str, **fields: object) -> str:
    """An Anthropic server-sent event: its name is repeated as the data's type."""
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n"


def _data(data: dict) -> str:
    return f"data: {json.dumps(data)}\n\n"


def _send_json(handler: BaseHTTPRequestHandler, status: int, payload: dict, headers: dict | None = None) -> None:
    encoded = json.dumps(payload).encode("utf-8")
    handler.send_response(status)
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(encoded)))
    handler.end_headers()
    handler.wfile.write(encoded)


class _Dropped(Exception):
    pass


class _InStreamError(Exception):
    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        served_by(self, FakeModelServer).handle(self)

    def do_GET(self) -> None:
        served_by(self, FakeModelServer).handle_get(self)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002  BaseHTTPRequestHandler's signature
        pass  # keep test output clean


SERVERS = {"anthropic": FakeAnthropicServer, "openai": FakeOpenAIServer}


@pytest.fixture
def anthropic_server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


def load_responder(spec: str) -> Responder:
    """``MODULE:FUNC``, importable from the current directory or PYTHONPATH."""
    module_name, _, function_name = spec.partition(":")
    if not function_name:
        raise SystemExit(f"--responder wants MODULE:FUNC, not {spec!r}")
    sys.path.insert(0, os.getcwd())
    return getattr(importlib.import_module(module_name), function_name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a fake model API on 127.0.0.1.")
    parser.add_argument("--kind", choices=sorted(SERVERS), required=True)
    parser.add_argument("--port", type=int, default=0, help="default: any free port")
    parser.add_argument("--port-file", type=Path, help="write the port here once listening")
    parser.add_argument("--responder", help="MODULE:FUNC taking the request body, returning the text")
    parser.add_argument("--delay-per-chunk", type=float, default=0.0)
    parser.add_argument("--fail-status", type=int)
    parser.add_argument("--requests-log", type=Path, help="append every request here as a JSON line")
    parser.add_argument("--script", type=json.loads, default=[], help="per-request actions, a JSON list")
    parser.add_argument("--cache-read-tokens", type=int, default=0)
    parser.add_argument("--cache-write-tokens", type=int, default=0)
    parser.add_argument("--serve-as", help="the model every answer names (default: the one requested)")
    args = parser.parse_args(argv)

    server = SERVERS[args.kind](
        responder=load_responder(args.responder) if args.responder else fixed_text,
        delay_per_chunk=args.delay_per_chunk,
        fail_status=args.fail_status,
        port=args.port,
        requests_log=args.requests_log,
        script=args.script,
        cache_read_tokens=args.cache_read_tokens,
        cache_write_tokens=args.cache_write_tokens,
        serve_as=args.serve_as,
    )
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    server.start()
    if args.port_file is not None:
        temporary = args.port_file.with_name(f"{args.port_file.name}.tmp")
        temporary.write_text(f"{server.port}\n", encoding="utf-8")
        os.replace(temporary, args.port_file)
    print(server.port, flush=True)  # noqa: T201  the port is this process's answer to whoever started it
    stopping.wait()
    server.stop()


if __name__ == "__main__":
    main()
