"""Model providers, through the real SDK clients talking to fake servers on 127.0.0.1."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TextIO

import pytest

from rp1_duel.participant import prompt
from rp1_duel.participant.providers import (
    Progress,
    Provider,
    ProviderError,
    TurnRequest,
    select_provider,
    status_error,
)
from rp1_duel.participant.providers.human import SECTION_LABELS, HumanProvider
from rp1_duel.participant.providers.scripted import ScriptedProvider
from rp1_duel.record import Claimant
from rp1_duel.turns import validate_turn

from fake_models import DEFAULT_TEXT, FakeAnthropicServer, FakeModelServer, FakeOpenAIServer
from helpers import context, stop

REPO = Path(__file__).resolve().parents[2]
HEADING = "## Turn 3 — Ada (claude-code / claude-sonnet-5-5) — OPEN_TO_DEBATE"
SYSTEM = "You debate design.md.\n1: # Design\n2: Leases expire after fifteen minutes."
TURN_1 = "<!-- duel:turn n=1 -->\n## Turn 1 — Ada\n**Position**\nLeases are too long.\n<!-- /duel:turn -->\n"
TURN_2 = "<!-- duel:turn n=2 -->\n## Turn 2 — Bo\n**Position**\nThey are fine.\n<!-- /duel:turn -->\n"
ANSWER = "## Turn 3 — Ada\n**Position**\nLeases should be five minutes long, renewed by heartbeat.\n"
INSTRUCTION = f"Write turn 3 with this heading:\n{HEADING}"


def turn_request(history: str = TURN_1 + TURN_2, instruction: str = INSTRUCTION) -> TurnRequest:
    return TurnRequest(system=SYSTEM, history=history, instruction=instruction, cache_key="duel-0123", heading=HEADING)


@pytest.fixture(autouse=True)
def no_real_credentials(monkeypatch):
    """Never let an SDK find a real key, base URL or profile, nor a person's editor."""
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "OPENAI_")) or name in ("VISUAL", "EDITOR"):
            monkeypatch.delenv(name)


def anthropic_provider(server: FakeModelServer) -> Provider:
    from rp1_duel.participant.providers.anthropic import AnthropicProvider

    return AnthropicProvider("claude-sonnet-5-5", api_key="test-key", base_url=server.base_url, timeout=5)


def openai_provider(server: FakeModelServer) -> Provider:
    from rp1_duel.participant.providers.openai import OpenAIProvider

    return OpenAIProvider("gpt-6.1-sol", api_key="test-key", base_url=server.base_url, timeout=5)


PROVIDERS: dict[str, tuple[type[FakeModelServer], Callable[[FakeModelServer], Provider]]] = {
    "anthropic": (FakeAnthropicServer, anthropic_provider),
    "openai": (FakeOpenAIServer, openai_provider),
}


@pytest.fixture(params=sorted(PROVIDERS))
def server_and_provider(request):
    server_class, make_provider = PROVIDERS[request.param]
    with server_class() as server:
        yield server, make_provider(server)


# Streaming, progress and errors, the same for both SDK-backed providers


def test_streamed_text_is_assembled_and_progress_grows(server_and_provider):
    server, provider = server_and_provider
    server.responder = lambda body: ANSWER
    seen: list[Progress] = []

    composition = provider.compose(turn_request(), seen.append)

    assert composition.text == ANSWER
    estimates = [p.output_tokens for p in seen if p.estimated]
    assert estimates == sorted(estimates)
    assert estimates[-1] > estimates[0]
    assert len(estimates) >= len(ANSWER.split())  # at least one report per streamed word
    assert not seen[-1].estimated  # the API's own count comes last
    assert seen[-1].output_tokens == composition.usage.output_tokens > 0


def test_a_slow_model_reports_progress_while_it_streams(server_and_provider):
    server, provider = server_and_provider
    server.responder = lambda body: "one two three four"
    server.delay_per_chunk = 0.05
    times: list[float] = []
    started = time.monotonic()

    provider.compose(turn_request(), lambda tokens: times.append(time.monotonic() - started))

    assert times[-1] >= 4 * 0.05
    assert times[0] < times[-1] - 0.1  # the first report came well before the end


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (401, "PROVIDER_AUTH"),
        (403, "PROVIDER_AUTH"),
        (400, "PROVIDER_REJECTED"),
        (404, "PROVIDER_REJECTED"),
        (429, "PROVIDER_UNAVAILABLE"),
        (500, "PROVIDER_UNAVAILABLE"),
        (529, "PROVIDER_UNAVAILABLE"),
    ],
)
def test_http_errors_become_provider_errors(server_and_provider, status, code):
    server, provider = server_and_provider
    server.fail_status = status

    with pytest.raises(ProviderError) as raised:
        provider.compose(turn_request(), lambda tokens: None)

    assert raised.value.code == code
    assert f"HTTP {status}" in raised.value.message
    assert "fake" in raised.value.message
    assert "\n" not in str(raised.value)


def test_a_server_that_is_down_is_unavailable_quickly(server_and_provider):
    server, provider = server_and_provider
    server.stop()
    started = time.monotonic()

    with pytest.raises(ProviderError) as raised:
        provider.compose(turn_request(), lambda tokens: None)

    assert raised.value.code == "PROVIDER_UNAVAILABLE"
    assert str(server.port) in raised.value.message
    assert "\n" not in raised.value.message
    assert time.monotonic() - started < 3


def test_an_answer_cut_at_the_token_limit_is_a_bad_response(server_and_provider):
    server, provider = server_and_provider
    server.truncated = True

    with pytest.raises(ProviderError) as raised:
        provider.compose(turn_request(), lambda tokens: None)

    assert raised.value.code == "PROVIDER_BAD_RESPONSE"
    assert str(turn_request().max_tokens) in raised.value.message


def test_a_stream_cut_mid_answer_is_unavailable_not_a_short_turn(server_and_provider):
    server, provider = server_and_provider
    server.responder = lambda body: ANSWER
    server.drop_after_chunks = 3

    with pytest.raises(ProviderError) as raised:
        provider.compose(turn_request(), lambda tokens: None)

    assert raised.value.code == "PROVIDER_UNAVAILABLE"
    assert "before the answer was complete" in raised.value.message


def test_an_empty_answer_is_a_bad_response(server_and_provider):
    server, provider = server_and_provider
    server.responder = lambda body: ""

    with pytest.raises(ProviderError) as raised:
        provider.compose(turn_request(), lambda tokens: None)

    assert raised.value.code == "PROVIDER_BAD_RESPONSE"


@pytest.mark.parametrize("status", [429, 500, 503, 529])
def test_overload_and_rate_limits_are_retryable_with_the_servers_retry_after(server_and_provider, status):
    server, provider = server_and_provider
    server.script = [{"status": status, "retry_after": 3}]

    with pytest.raises(ProviderError) as raised:
        provider.compose(turn_request(), lambda progress: None)

    assert (raised.value.retryable, raised.value.retry_after) == (True, 3.0)
    assert len(server.requests) == 1  # the SDK itself does not retry: the participant does


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_permanent_errors_are_not_retryable(server_and_provider, status):
    server, provider = server_and_provider
    server.script = [{"status": status}]

    with pytest.raises(ProviderError) as raised:
        provider.compose(turn_request(), lambda progress: None)

    assert raised.value.retryable is False


def test_an_error_event_inside_the_stream_is_retryable_and_named_as_such(server_and_provider):
    server, provider = server_and_provider
    server.responder = lambda body: ANSWER
    server.script = [{"error_after_chunks": 2}]

    with pytest.raises(ProviderError) as raised:
        provider.compose(turn_request(), lambda progress: None)

    assert raised.value.code == "PROVIDER_UNAVAILABLE"
    assert raised.value.retryable
    assert "in the middle of its answer (overloaded_error)" in raised.value.message
    assert "HTTP 200" not in raised.value.message
    assert "unreadable" not in raised.value.message


def test_a_connection_dropped_mid_stream_is_retryable_and_not_called_unreachable(server_and_provider):
    server, provider = server_and_provider
    server.responder = lambda body: ANSWER
    server.script = [{"reset_after_chunks": 2}]

    with pytest.raises(ProviderError) as raised:
        provider.compose(turn_request(), lambda progress: None)

    message = raised.value.message
    assert raised.value.retryable
    assert "dropped in the middle of its answer" in message
    assert "cannot reach" not in message
    cause = message.split(": ", 1)[1]
    assert message.count(cause) == 1 and "Connection error." not in message  # the cause once, not twice


def test_a_stream_ended_before_its_closing_event_is_retryable(server_and_provider):
    server, provider = server_and_provider
    server.responder = lambda body: ANSWER
    server.script = [{"end_after_chunks": 2}]

    with pytest.raises(ProviderError) as raised:
        provider.compose(turn_request(), lambda progress: None)

    assert raised.value.retryable
    assert "before the answer was complete" in raised.value.message


def test_usage_reports_input_output_and_cache_tokens_from_the_api(server_and_provider):
    server, provider = server_and_provider
    server.cache_read_tokens, server.cache_write_tokens = 1200, 300

    usage = provider.compose(turn_request(), lambda progress: None).usage

    assert usage.requests == 1
    assert usage.output_tokens == len(DEFAULT_TEXT.split())
    assert usage.cache_read_tokens == 1200
    assert usage.input_tokens > 0
    assert not usage.output_estimated
    if server.kind == "anthropic":
        assert usage.cache_write_tokens == 300
    else:  # OpenAI counts cached tokens inside prompt_tokens; usage keeps them apart
        body_tokens = len(json.dumps(server.requests[0]["body"])) // 4
        assert usage.input_tokens == body_tokens


@pytest.mark.slow
def test_a_model_thinking_in_silence_is_waited_for(server_and_provider):
    server, provider = server_and_provider
    server.script = [{"think_seconds": 1.0}]
    started = time.monotonic()

    assert provider.compose(turn_request(), lambda progress: None).text == DEFAULT_TEXT
    assert time.monotonic() - started >= 1.0


@pytest.mark.parametrize("level", ["low", "high"])
def test_reasoning_level_maps_to_each_apis_own_control(anthropic_server, openai_server, level):
    from rp1_duel.participant.providers.anthropic import AnthropicProvider
    from rp1_duel.participant.providers.openai import OpenAIProvider

    AnthropicProvider("claude-x", api_key="k", base_url=anthropic_server.base_url, reasoning=level).compose(
        turn_request(), print
    )
    OpenAIProvider("gpt-x", api_key="k", base_url=openai_server.base_url, reasoning=level).compose(
        turn_request(), print
    )

    claude, gpt = anthropic_server.requests[0]["body"], openai_server.requests[0]["body"]
    assert claude["thinking"] == {"type": "adaptive"}
    assert claude["output_config"] == {"effort": level}
    assert gpt["reasoning_effort"] == level


def test_without_reasoning_the_models_default_is_left_alone(anthropic_server, openai_server):
    anthropic_provider(anthropic_server).compose(turn_request(), lambda progress: None)
    openai_provider(openai_server).compose(turn_request(), lambda progress: None)

    assert "thinking" not in anthropic_server.requests[0]["body"]
    assert "output_config" not in anthropic_server.requests[0]["body"]
    assert "reasoning_effort" not in openai_server.requests[0]["body"]


def test_error_messages_are_one_bounded_line():
    error = status_error(
        "openai", status=401, body={"error": {"message": "bad\nkey  " + "x" * 1000}}, fallback="fallback"
    )

    assert error.code == "PROVIDER_AUTH"
    assert "\n" not in error.message
    assert len(error.message) <= 400
    assert error.message.startswith("openai refused the credentials (HTTP 401): bad key")
    assert (
        "model not found" in status_error("ollama", status=404, body={"error": "model not found"}, fallback="x").message
    )
    assert status_error("openai", status=502, body=None, fallback="Bad gateway").message.endswith("Bad gateway")


# Anthropic: what goes on the wire


def test_anthropic_request_caches_the_stable_prefix_and_the_history(anthropic_server):
    anthropic_provider(anthropic_server).compose(turn_request(), lambda tokens: None)

    body = anthropic_server.requests[0]["body"]
    assert body["model"] == "claude-sonnet-5-5"
    assert body["stream"] is True
    assert body["max_tokens"] == 16000
    assert body["system"] == [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
    [message] = body["messages"]
    assert message["role"] == "user"
    history, instruction = message["content"]
    assert history == {"type": "text", "text": TURN_1 + TURN_2, "cache_control": {"type": "ephemeral"}}
    assert instruction == {"type": "text", "text": turn_request().instruction}  # changes every time: never cached


def test_anthropic_first_turn_sends_no_empty_history_block(anthropic_server):
    anthropic_provider(anthropic_server).compose(turn_request(history=""), lambda tokens: None)

    [instruction] = anthropic_server.requests[0]["body"]["messages"][0]["content"]
    assert instruction["text"] == turn_request().instruction


def without_cache_marks(blocks: list[dict]) -> list[str]:
    return [json.dumps({key: value for key, value in block.items() if key != "cache_control"}) for block in blocks]


def test_anthropic_successive_turns_share_the_prefix_byte_for_byte(anthropic_server):
    provider = anthropic_provider(anthropic_server)
    turn_3, turn_4 = "## Turn 3 — Ada\n…\n", "## Turn 4 — Bo\n…\n"
    provider.compose(turn_request(history=TURN_1 + TURN_2), lambda tokens: None)
    later = turn_request(history=TURN_1 + TURN_2 + turn_3 + turn_4, instruction="Write turn 5.")
    provider.compose(later, lambda tokens: None)

    first, second = (record["body"] for record in anthropic_server.requests)
    assert json.dumps(first["system"]) == json.dumps(second["system"])
    first_history = first["messages"][0]["content"][:-1]
    second_history = second["messages"][0]["content"][:-1]
    # The earlier history stays a block of its own, so the block boundary the first request
    # cached is found again by the second; only the newest block carries the cache mark.
    assert without_cache_marks(second_history[: len(first_history)]) == without_cache_marks(first_history)
    assert second_history[-1] == {"type": "text", "text": turn_3 + turn_4, "cache_control": {"type": "ephemeral"}}
    assert ["cache_control" in block for block in second_history] == [False, True]


def test_anthropic_repair_of_a_turn_resends_the_same_history_blocks(anthropic_server):
    provider = anthropic_provider(anthropic_server)
    provider.compose(turn_request(), lambda tokens: None)
    provider.compose(turn_request(instruction="Fix: SECTION_EMPTY Agreements"), lambda tokens: None)

    first, second = (record["body"]["messages"][0]["content"] for record in anthropic_server.requests)
    assert json.dumps(first[:-1]) == json.dumps(second[:-1])


def test_anthropic_history_that_does_not_extend_the_last_one_starts_over(anthropic_server):
    provider = anthropic_provider(anthropic_server)
    provider.compose(turn_request(history=TURN_1 + TURN_2), lambda tokens: None)
    provider.compose(turn_request(history=TURN_2), lambda tokens: None)

    history = anthropic_server.requests[1]["body"]["messages"][0]["content"][:-1]
    assert [block["text"] for block in history] == [TURN_2]


# OpenAI: what goes on the wire


def test_openai_request_is_streamed_keyed_and_ordered_for_prefix_caching(openai_server):
    openai_provider(openai_server).compose(turn_request(), lambda tokens: None)

    body = openai_server.requests[0]["body"]
    assert body["model"] == "gpt-6.1-sol"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["prompt_cache_key"] == "duel-0123"
    assert body["max_completion_tokens"] == 16000
    assert "max_tokens" not in body
    assert body["messages"] == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": TURN_1 + TURN_2},
        {"role": "user", "content": turn_request().instruction},
    ]


def test_openai_successive_turns_share_the_prefix_byte_for_byte(openai_server):
    provider = openai_provider(openai_server)
    provider.compose(turn_request(history=TURN_1), lambda tokens: None)
    provider.compose(turn_request(history=TURN_1 + TURN_2, instruction="Write turn 5."), lambda tokens: None)

    first, second = (json.dumps(record["body"]["messages"]) for record in openai_server.requests)
    prefix = json.dumps([{"role": "system", "content": SYSTEM}, {"role": "user", "content": TURN_1}])[:-3]
    assert first.startswith(prefix)
    assert second.startswith(prefix)


def test_openai_first_turn_sends_no_empty_history_message(openai_server):
    openai_provider(openai_server).compose(turn_request(history=""), lambda tokens: None)

    assert [message["role"] for message in openai_server.requests[0]["body"]["messages"]] == ["system", "user"]


def test_an_openai_compatible_server_needs_no_key(openai_server):
    provider = select_provider("llama3.1:8b", provider=None, base_url=openai_server.base_url, env={})

    assert (provider.name, provider.model) == ("openai", "llama3.1:8b")
    assert provider.compose(turn_request(), lambda tokens: None).text == "This is the fake model's answer."
    assert openai_server.requests[0]["body"]["model"] == "llama3.1:8b"
    assert openai_server.requests[0]["headers"]["authorization"] == "Bearer no-key-needed"


def test_the_env_mapping_is_authoritative_over_the_process_environment(anthropic_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # the discard port: must not be used
    monkeypatch.setenv("ANTHROPIC_API_KEY", "process-key")
    env = {"ANTHROPIC_API_KEY": "mapping-key", "ANTHROPIC_BASE_URL": anthropic_server.base_url}

    provider = select_provider(None, provider=None, base_url=None, env=env)

    assert provider.compose(turn_request(), lambda tokens: None).text == "This is the fake model's answer."
    assert anthropic_server.requests[0]["headers"]["authorization"] == "Bearer mapping-key"


# select_provider

ANTHROPIC = {"ANTHROPIC_API_KEY": "a-key"}
OPENAI = {"OPENAI_API_KEY": "o-key"}
BOTH = {**ANTHROPIC, **OPENAI}


@pytest.mark.parametrize(
    ("model", "provider", "base_url", "env", "expected"),
    [
        ("claude-opus-5", None, None, BOTH, ("anthropic", "claude-opus-5", "https://api.anthropic.com")),
        ("gpt-6.1-sol", None, None, BOTH, ("openai", "gpt-6.1-sol", "https://api.openai.com/v1")),
        ("o1", None, None, OPENAI, ("openai", "o1", "https://api.openai.com/v1")),
        ("o3-mini", None, None, OPENAI, ("openai", "o3-mini", "https://api.openai.com/v1")),
        ("o4-mini", None, None, OPENAI, ("openai", "o4-mini", "https://api.openai.com/v1")),
        ("chatgpt-4o-latest", None, None, OPENAI, ("openai", "chatgpt-4o-latest", "https://api.openai.com/v1")),
        (None, None, None, BOTH, ("anthropic", "claude-sonnet-5-5", "https://api.anthropic.com")),
        (None, None, None, OPENAI, ("openai", "gpt-6.1-sol", "https://api.openai.com/v1")),
        (None, "openai", None, BOTH, ("openai", "gpt-6.1-sol", "https://api.openai.com/v1")),
        ("claude-opus-5", "openai", "http://gateway/v1", {}, ("openai", "claude-opus-5", "http://gateway/v1")),
        ("my-model", "anthropic", None, ANTHROPIC, ("anthropic", "my-model", "https://api.anthropic.com")),
        ("llama3.1", None, "http://localhost:11434/v1", {}, ("openai", "llama3.1", "http://localhost:11434/v1")),
        ("qwen3", None, None, {"OPENAI_BASE_URL": "http://vllm:8000/v1"}, ("openai", "qwen3", "http://vllm:8000/v1")),
        (None, None, "http://localhost:8080/v1", ANTHROPIC, ("openai", "", "http://localhost:8080/v1")),
        ("claude-haiku-5-5", None, "http://proxy", {}, ("anthropic", "claude-haiku-5-5", "http://proxy")),
        (
            "claude-haiku-5-5",
            None,
            None,
            {**ANTHROPIC, "ANTHROPIC_BASE_URL": "http://proxy"},
            ("anthropic", "claude-haiku-5-5", "http://proxy"),
        ),
    ],
)
def test_select_provider_chooses_by_model_provider_base_url_and_environment(model, provider, base_url, env, expected):
    from rp1_duel.participant.providers.anthropic import AnthropicProvider
    from rp1_duel.participant.providers.openai import OpenAIProvider

    chosen = select_provider(model, provider=provider, base_url=base_url, env=env)

    assert isinstance(chosen, (AnthropicProvider, OpenAIProvider))
    assert (chosen.name, chosen.model, chosen.base_url) == expected


FIVE_OPTIONS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "--base-url", "--model human", "--model scripted:DIR")


@pytest.mark.parametrize(
    ("model", "provider", "env", "missing"),
    [
        (None, None, {}, None),
        ("claude-sonnet-5-5", None, OPENAI, "ANTHROPIC_API_KEY"),
        ("gpt-6.1-sol", None, ANTHROPIC, "OPENAI_API_KEY"),
        (None, "openai", ANTHROPIC, "OPENAI_API_KEY"),
    ],
)
def test_missing_credentials_name_every_way_out(model, provider, env, missing):
    with pytest.raises(ProviderError) as raised:
        select_provider(model, provider=provider, base_url=None, env=env)

    assert raised.value.code == "PROVIDER_NO_CREDENTIALS"
    assert all(option in raised.value.message for option in FIVE_OPTIONS)
    assert "\n" not in raised.value.message
    if missing:
        assert f"needs {missing}" in raised.value.message


@pytest.mark.parametrize(("model", "provider"), [("mistral-large", None), (None, "gemini"), ("gpt-6.1-sol", "human")])
def test_unknown_providers_are_invalid_arguments(model, provider):
    with pytest.raises(ProviderError) as raised:
        select_provider(model, provider=provider, base_url=None, env=BOTH)

    assert raised.value.code == "INVALID_ARGUMENT"


def test_select_provider_gives_people_and_scripts_without_credentials(tmp_path):
    (tmp_path / "turns").mkdir()
    (tmp_path / "turns" / "01.md").write_text(ANSWER)

    human = select_provider("human", provider=None, base_url=None, env={})
    scripted = select_provider(f"scripted:{tmp_path / 'turns'}", provider=None, base_url=None, env={})

    assert (human.name, human.model) == ("human", "human")
    assert (scripted.name, scripted.model) == ("scripted", "scripted:turns")


def test_importing_the_providers_imports_no_sdk():
    probe = "import sys, rp1_duel.participant.providers; print([m for m in ('anthropic', 'openai', 'httpx2') if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)

    assert result.stdout.strip() == "[]"


# The human provider

TURN_BY_HAND = f"{HEADING}\n**Position**\nFive minutes, renewed by heartbeat.\n"


def fake_editor(tmp_path: Path, body: str) -> str:
    """An $EDITOR that keeps a copy of what it was shown (seen-1.md, seen-2.md…), then runs ``body``."""
    script = tmp_path / "editor.py"
    script.write_text(
        textwrap.dedent(
            """\
            import pathlib, sys
            path = pathlib.Path(sys.argv[1])
            here = pathlib.Path(__file__).parent
            (here / f"seen-{len(list(here.glob('seen-*.md'))) + 1}.md").write_text(path.read_text())
            """
        )
        + textwrap.dedent(body)
    )
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def writes(text: str) -> str:
    return f"path.write_text({text!r})\n"


def human(editor: str | None = None, stdin: TextIO | None = None) -> HumanProvider:
    return HumanProvider(editor=editor, stdin=stdin or io.StringIO(""), stderr=io.StringIO())


def test_human_edits_a_skeleton_with_the_exact_heading(tmp_path):
    editor = fake_editor(tmp_path, writes(f"%% my own note\n{TURN_BY_HAND}"))

    text = human(editor).compose(turn_request(), lambda tokens: None).text

    assert text == TURN_BY_HAND
    seen = (tmp_path / "seen-1.md").read_text().splitlines()
    body = [line for line in seen if line and not line.startswith("%%")]
    assert body == [HEADING, *SECTION_LABELS]
    assert f"%% {HEADING}" in seen
    assert "%% Write turn 3 with this heading:" in seen


def test_human_skeleton_takes_the_heading_from_the_request_not_from_the_instruction(tmp_path):
    editor = fake_editor(tmp_path, writes(TURN_BY_HAND))
    human(editor).compose(turn_request(instruction="Write turn 3."), lambda tokens: None)
    seen = (tmp_path / "seen-1.md").read_text().splitlines()
    assert [line for line in seen if line and not line.startswith("%%")] == [HEADING, *SECTION_LABELS]


def test_the_prompt_asks_for_the_heading_the_rules_expect():
    ctx = context(2)
    claimant = Claimant(ctx.participant_name, ctx.harness, ctx.model_id)
    asked = prompt.heading(2, claimant, by_chair=False)
    [missing] = [v.message for v in validate_turn("**Position**\nLeases.\n", ctx).violations if v.code == "HEADING"]
    assert missing == f"the turn must begin with its heading: `{asked}`"
    request = prompt.build_request(
        duel_id="d", system="s", blocks=[], number=2, max_turns=6, heading=asked, own_turns_before=0
    )
    assert request.heading == asked and f"\n{asked}\n" in request.instruction


def test_human_repair_reopens_the_draft_with_the_violations_on_top(tmp_path):
    editor = fake_editor(tmp_path, writes(TURN_BY_HAND))
    provider = human(editor)
    provider.compose(turn_request(), lambda tokens: None)
    repair = f"{INSTRUCTION}\nYour draft was rejected:\n- SECTION_EMPTY: Agreements is empty"

    provider.compose(turn_request(instruction=repair), lambda tokens: None)

    seen = (tmp_path / "seen-2.md").read_text()
    assert seen.startswith("%% Write turn 3")
    assert "%% - SECTION_EMPTY: Agreements is empty\n" in seen
    assert seen.endswith(TURN_BY_HAND)  # the draft, not a new skeleton


@pytest.mark.parametrize(
    "body",
    [
        "pass\n",  # saved unchanged: the skeleton
        writes("%% only notes\n\n"),
        "sys.exit(1)\n",
    ],
)
def test_human_can_abandon_a_turn(tmp_path, body):
    with pytest.raises(ProviderError) as raised:
        human(fake_editor(tmp_path, body)).compose(turn_request(), lambda tokens: None)

    assert raised.value.code == "HUMAN_ABORTED"


def test_a_failed_editor_keeps_the_draft_in_the_file_the_request_names(tmp_path):
    draft = tmp_path / "drafts" / "turn-3-person.md"
    draft.parent.mkdir()
    request = replace(turn_request(), draft_path=str(draft))
    with pytest.raises(ProviderError) as raised:
        human(fake_editor(tmp_path, writes(TURN_BY_HAND) + "sys.exit(3)\n")).compose(request, lambda tokens: None)

    assert "status 3" in raised.value.message and f"the draft is kept in {draft}" in raised.value.message
    assert draft.read_text() == TURN_BY_HAND


def test_a_missing_editor_is_an_invalid_argument(tmp_path):
    with pytest.raises(ProviderError) as raised:
        human(str(tmp_path / "no-such-editor")).compose(turn_request(), lambda tokens: None)

    assert raised.value.code == "INVALID_ARGUMENT"


def test_human_reads_a_piped_turn_from_standard_input():
    stderr = io.StringIO()
    provider = HumanProvider(editor=None, stdin=io.StringIO(f"%% ignored\n{TURN_BY_HAND}\n\n"), stderr=stderr)

    assert provider.compose(turn_request(), lambda tokens: None).text == TURN_BY_HAND
    assert HEADING in stderr.getvalue()  # the person is told what to write
    with pytest.raises(ProviderError) as raised:  # the pipe is spent
        provider.compose(turn_request(), lambda tokens: None)
    assert raised.value.code == "HUMAN_ABORTED"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_human_at_a_terminal_uses_the_editor_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("EDITOR", fake_editor(tmp_path, writes(TURN_BY_HAND)))

    assert human(stdin=Terminal()).compose(turn_request(), lambda tokens: None).text == TURN_BY_HAND
    assert (tmp_path / "seen-1.md").exists()


# The scripted provider


@pytest.fixture
def script(tmp_path) -> Path:
    directory = tmp_path / "bo-script"
    directory.mkdir()
    (directory / "02-second.md").write_text("second turn, no final newline")
    (directory / "01-first.md").write_text("first turn  \n\n")
    (directory / "10-third.md").write_text("third turn\n")
    (directory / "notes.txt").write_text("not a turn")
    return directory


def test_scripted_turns_play_in_sorted_order_as_they_are_then_run_out(script):
    provider = ScriptedProvider(script)
    played = [provider.compose(replace(turn_request(), own_turns_before=i), lambda tokens: None).text for i in range(3)]

    assert played == ["first turn  \n\n", "second turn, no final newline", "third turn\n"]
    assert (provider.name, provider.model) == ("scripted", "scripted:bo-script")
    with pytest.raises(ProviderError) as raised:
        provider.compose(replace(turn_request(), own_turns_before=3), lambda tokens: None)
    assert raised.value.code == "SCRIPT_EXHAUSTED"


def test_a_resumed_or_repairing_script_replays_the_same_file(script):
    first = ScriptedProvider(script).compose(replace(turn_request(), own_turns_before=1), lambda tokens: None).text
    again = ScriptedProvider(script).compose(replace(turn_request(), own_turns_before=1), lambda tokens: None).text

    assert first == again == "second turn, no final newline"


@pytest.mark.parametrize("name", ["missing", "empty"])
def test_a_script_needs_a_directory_of_turns(tmp_path, name):
    (tmp_path / "empty").mkdir()

    with pytest.raises(ProviderError) as raised:
        ScriptedProvider(tmp_path / name)

    assert raised.value.code == "INVALID_ARGUMENT"


# The fake servers themselves


def test_fake_servers_answer_non_streaming_requests_too(anthropic_server, openai_server):
    import anthropic
    import openai

    message = anthropic.Anthropic(api_key="k", base_url=anthropic_server.base_url, max_retries=0).messages.create(
        model="claude-sonnet-5-5", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
    )
    completion = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0).chat.completions.create(
        model="gpt-6.1-sol", messages=[{"role": "user", "content": "hi"}]
    )

    [block] = message.content
    assert isinstance(block, anthropic.types.TextBlock) and completion.usage is not None
    assert block.text == completion.choices[0].message.content == "This is the fake model's answer."
    assert message.usage.output_tokens == completion.usage.completion_tokens == 6


@pytest.mark.slow  # the fake server as a process of its own
def test_a_fake_server_runs_as_a_process_beside_duel(tmp_path):
    responder = "def answer(body):\n    return 'echo: ' + body['messages'][-1]['content']\n"
    (tmp_path / "echo_responder.py").write_text(responder)
    port_file, log = tmp_path / "port", tmp_path / "requests.jsonl"
    command = [sys.executable, str(REPO / "tests" / "fake_models.py"), "--kind", "openai"]
    command += ["--port-file", str(port_file), "--responder", "echo_responder:answer", "--requests-log", str(log)]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    try:
        port = int(process.stdout.readline())
        assert port_file.read_text().strip() == str(port)
        from rp1_duel.participant.providers.openai import OpenAIProvider

        provider = OpenAIProvider("gpt-6.1-sol", api_key="k", base_url=f"http://127.0.0.1:{port}/v1")
        assert provider.compose(turn_request(instruction="Say hi."), lambda tokens: None).text == "echo: Say hi."
        assert json.loads(log.read_text())["body"]["prompt_cache_key"] == "duel-0123"
    finally:
        process.terminate()
        assert process.wait(timeout=5) == 0
        stop(process)
