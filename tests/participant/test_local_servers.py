"""Local model servers as they really answer (issue 28 item 4), through the real openai SDK talking to
fake servers that behave like llama-cpp-python's and llama.cpp's: a prompt longer than the context
window, no usage, max_tokens read and max_completion_tokens not, no model lookup by id."""

from __future__ import annotations

import os
import time

import pytest

from rp1_duel.coordination import Usage
from rp1_duel.participant.console import ConsoleReporter
from rp1_duel.participant.providers import ProviderError, TurnRequest, select_provider
from rp1_duel.review.report_text import token_counts
from rp1_duel.vocabulary import ErrorCode

from fake_models import DEFAULT_TEXT, FakeOpenAIServer

GGUF = "/home/ada/models/SmolLM2-135M-Instruct.Q4_1.gguf"
LONG = "word " * 4000  # about 5,000 tokens to the fake servers' count


def request(history: str = "") -> TurnRequest:
    return TurnRequest(system="You debate design.md.", history=history, instruction="Write turn 1.", cache_key="k")


@pytest.fixture(autouse=True)
def no_real_credentials(monkeypatch):
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "OPENAI_")):
            monkeypatch.delenv(name)


def local(server: FakeOpenAIServer, model: str | None = GGUF, max_output_tokens: int | None = None):
    return select_provider(model, provider=None, base_url=server.base_url, env={}, max_output_tokens=max_output_tokens)


def failure(server: FakeOpenAIServer, history: str = LONG) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        local(server).compose(request(history), lambda progress: None)
    return caught.value


@pytest.mark.parametrize("flavor", ["llama-cpp-python", "llama-server"])
def test_a_prompt_longer_than_the_context_window_fails_at_once_naming_the_context_and_the_fix(flavor):
    with FakeOpenAIServer(flavor=flavor, context_window=512) as server:
        started = time.monotonic()
        error = failure(server)

    assert time.monotonic() - started < 5
    assert error.code == ErrorCode.PROVIDER_CONTEXT_EXCEEDED
    assert not error.retryable
    assert "context window" in error.message
    assert "--n_ctx" in error.message and "-c" in error.message and "num_ctx" in error.message
    assert "\n" not in error.message
    if flavor == "llama-cpp-python":  # the empty stream, then one unstreamed probe that returns the real error
        assert [r["body"].get("stream") for r in server.requests] == [True, None]
        assert "maximum context length is 512 tokens" in error.message
    else:  # llama.cpp says it at once
        assert len(server.requests) == 1
        assert "exceeds the available context size" in error.message


def test_an_empty_stream_whose_probe_answers_is_the_turn_counted_as_two_requests(monkeypatch):
    with FakeOpenAIServer(flavor="llama-cpp-python") as server:
        monkeypatch.setattr(server, "stream", lambda body, chunks, action: iter(()))  # every stream empty
        composed = local(server).compose(request(), lambda progress: None)

    assert composed.text == DEFAULT_TEXT
    assert composed.usage.requests == 2


def test_an_empty_stream_whose_probe_fails_for_a_while_is_a_cut_stream_retried(monkeypatch):
    with FakeOpenAIServer(flavor="llama-cpp-python") as server:
        monkeypatch.setattr(server, "stream", lambda body, chunks, action: iter(()))
        server.script = [{}, {"status": 503}, {"status": 503}]  # the stream, the probe and its one retry
        error = failure(server, history="")

    assert (error.code, error.retryable) == (ErrorCode.PROVIDER_UNAVAILABLE, True)
    assert "closed the stream" in error.message


def test_a_base_url_server_gets_no_output_ceiling_unless_set_and_then_as_max_tokens():
    with FakeOpenAIServer(flavor="llama-cpp-python") as server:
        local(server).compose(request(), lambda progress: None)
        local(server, max_output_tokens=300).compose(request(), lambda progress: None)

    unset, given = (r["body"] for r in server.requests)
    assert "max_tokens" not in unset and "max_completion_tokens" not in unset
    assert given["max_tokens"] == 300 and "max_completion_tokens" not in given


def test_openai_gets_max_completion_tokens_its_default_or_the_one_set(openai_server):
    from rp1_duel.participant.providers.openai import OpenAIProvider

    for ceiling in (None, 3000):
        provider = OpenAIProvider("gpt-x", api_key="k", base_url=openai_server.base_url, max_output_tokens=ceiling)
        provider.compose(request(), lambda progress: None)

    default, given = (r["body"] for r in openai_server.requests)
    assert (default["max_completion_tokens"], given["max_completion_tokens"]) == (16000, 3000)
    assert "max_tokens" not in default and "max_tokens" not in given


@pytest.mark.parametrize(
    ("ceiling", "says"),
    [
        (None, "its context window filled up; give the server a larger context (llama-cpp-python --n_ctx"),
        (5, "it reached max_tokens (5) or its context window filled up; raise --max-output-tokens"),
    ],
)
def test_a_finish_for_length_says_what_happened(ceiling, says):
    answer = "word " * 200
    server = FakeOpenAIServer(responder=lambda body: answer, flavor="llama-cpp-python", context_window=150)
    with server, pytest.raises(ProviderError) as caught:
        local(server, max_output_tokens=ceiling).compose(request(), lambda progress: None)

    assert caught.value.code == ErrorCode.PROVIDER_BAD_RESPONSE
    assert says in caught.value.message
    assert "16000" not in caught.value.message and "max_completion_tokens" not in caught.value.message


def test_a_server_that_sends_no_usage_gets_both_counts_estimated_and_marked(capsys):
    with FakeOpenAIServer(flavor="llama-cpp-python") as server:
        usage = local(server).compose(request(history="x" * 4000), lambda progress: None).usage

    assert usage.input_estimated and usage.output_estimated
    assert usage.input_tokens >= 1000  # about four characters a token
    ConsoleReporter("Local", quiet=False).composed(usage)
    line = capsys.readouterr().err
    assert f"wrote ~{usage.output_tokens} tokens" in line
    assert f"input ~{usage.input_tokens:,} tokens" in line and "estimated" in line


def test_the_report_marks_each_estimated_count():
    from rp1_duel.participant.usage import PricedUsage

    priced = PricedUsage(
        Usage(input_tokens=1200, output_tokens=30, input_estimated=True, output_estimated=True), None, None
    )
    assert token_counts(priced) == "~1,200 in / ~30 out"


def test_without_a_model_the_servers_only_one_is_used():
    with FakeOpenAIServer(models=[GGUF], lookup="list") as server:
        provider = local(server, model=None)
        checked = provider.preflight()
        provider.compose(request(), lambda progress: None)

    assert provider.model == GGUF
    assert checked.startswith(f"{GGUF} is the only model {server.base_url} serves")
    assert server.requests[0]["body"]["model"] == GGUF


def test_without_a_model_a_server_of_several_lists_them():
    server = FakeOpenAIServer(models=["qwen3", "llama3.1"], lookup="list")
    with server, pytest.raises(ProviderError) as caught:
        local(server, model=None).preflight()

    assert caught.value.code == ErrorCode.PROVIDER_MODEL_NOT_FOUND
    assert "serves 2 models (qwen3, llama3.1): choose one with --model" in caught.value.message


@pytest.mark.parametrize(
    ("model", "warned"),
    [(GGUF, True), ("./models/smol.gguf", True), ("smollm2.GGUF", True), ("llama3.1", False), ("Qwen/Qwen3-8B", False)],
)
def test_a_model_id_that_is_a_file_path_is_flagged_with_an_alias_hint(model, warned):
    with FakeOpenAIServer(models=[model], lookup="list") as server:
        checked = local(server, model=model).preflight()

    assert ("local file path" in checked and "--model_alias" in checked) == warned
