"""`duel join` against a REAL local model server: llama-cpp-python serving SmolLM2-135M-Instruct
(tests/llama_server.py), once with a context window too small for the prompt, once with 8k."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_participant import clean_env, finish, scripted_peer, start, wait_for_seat

from rp1_duel.coordination import Usage

from llama_server import LlamaServer, llama_server, needs_server

pytestmark = [pytest.mark.slow, needs_server(), pytest.mark.timeout(600)]

LOCAL = ("--name", "Local", "--max-turns", "2", "--base-url")  # then the server's URL; no --model: its only one


@pytest.fixture
def small_context(tmp_path: Path) -> Iterator[LlamaServer]:
    with llama_server(tmp_path, n_ctx=512) as server:  # served under its file path: no alias
        yield server


@pytest.fixture
def eight_k(tmp_path: Path) -> Iterator[LlamaServer]:
    with llama_server(tmp_path, n_ctx=8192, alias="smollm2") as server:
        yield server


def test_a_context_too_small_for_the_prompt_fails_within_seconds_naming_it(small_context, source, debate_dir, tmp_path):
    started = time.monotonic()
    local = start(source, debate_dir, *LOCAL, small_context.base_url, env=clean_env())
    wait_for_seat(debate_dir, source)
    peer = scripted_peer(source, debate_dir, tmp_path, [2], max_turns=2)
    code, out, err = finish(local, timeout=120)
    elapsed = time.monotonic() - started
    peer.terminate()
    peer.communicate(timeout=30)

    assert code == 1, err
    assert out["error"]["code"] == "PROVIDER_CONTEXT_EXCEEDED", err
    message = out["error"]["message"]
    assert "maximum context length is 512 tokens" in message and "--n_ctx" in message, message
    assert elapsed < 30, f"{elapsed:.1f} s: {err}"
    assert "retrying" not in err
    # The server's only model was used, and its id, a file path, is flagged with the alias to use.
    assert "is the only model" in err and "--model_alias" in err, err
    assert small_context.chat_requests() == 2  # the empty stream and the probe


def test_an_8k_context_runs_a_duel_to_its_outcome_and_records_the_servers_counts(eight_k, source, debate_dir, tmp_path):
    local = start(source, debate_dir, *LOCAL, eight_k.base_url, env=clean_env())
    wait_for_seat(debate_dir, source)
    peer = scripted_peer(source, debate_dir, tmp_path, [2], max_turns=2)
    code, out, err = finish(local, timeout=540)
    peer_code, _, _ = finish(peer, timeout=60)

    # A 135M model seldom writes a valid turn: INVALIDATED after its repairs is an outcome like any other.
    assert out.get("outcome") is not None, err
    assert (code, peer_code) == ((0, 0) if out["outcome"] != "INVALIDATED" else (1, 1)), err
    usage = Usage.from_json(out["usage"])
    # llama-cpp-python sends no usage: both counts are estimates, marked, and every request is counted.
    assert usage.input_estimated and usage.output_estimated, out["usage"]
    assert usage.requests == eight_k.chat_requests(), err
    # The server's own counts (its timings): the estimates come close, request by request.
    events = [json.loads(line) for path in debate_dir.rglob("events.jsonl") for line in path.read_text().splitlines()]
    recorded = [Usage.from_json(event["data"]) for event in events if event["type"] == "usage"]
    generated = eight_k.generated_tokens()
    assert len(recorded) == len(generated), (recorded, generated)
    assert abs(sum(u.output_tokens for u in recorded) - sum(generated)) <= 0.25 * sum(generated) + 10
    first_prompt = eight_k.prompt_tokens()[0]  # the only one evaluated whole: nothing cached before it
    assert abs(recorded[0].input_tokens - first_prompt) <= 0.25 * first_prompt, (recorded[0], first_prompt)
