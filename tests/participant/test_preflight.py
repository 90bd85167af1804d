"""Preflight (issue 9, finding 3): before `duel join` takes a seat, each provider checks what it
can without composing: the key and the model's name through the real SDKs against the fake
servers, the editor of a person, the files of a script."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import pytest

from rp1_duel.participant.providers import ProviderError
from rp1_duel.participant.providers.human import HumanProvider
from rp1_duel.participant.providers.scripted import ScriptedProvider

from fake_models import FakeAnthropicServer, FakeModelServer, FakeOpenAIServer


@pytest.fixture(autouse=True)
def no_real_credentials(monkeypatch):
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "OPENAI_")) or name in ("VISUAL", "EDITOR"):
            monkeypatch.delenv(name)


def provider_for(server: FakeModelServer, model: str):
    if isinstance(server, FakeAnthropicServer):
        from rp1_duel.participant.providers.anthropic import AnthropicProvider

        return AnthropicProvider(model, api_key="test-key", base_url=server.base_url)
    from rp1_duel.participant.providers.openai import OpenAIProvider

    return OpenAIProvider(model, api_key="test-key", base_url=server.base_url)


@pytest.fixture(params=["anthropic", "openai"])
def server(request):
    kind = {"anthropic": FakeAnthropicServer, "openai": FakeOpenAIServer}[request.param]
    with kind(models=["model-one", "model-two"]) as fake:
        yield fake


def preflight_error(server: FakeModelServer, model: str) -> ProviderError:
    with pytest.raises(ProviderError) as raised:
        provider_for(server, model).preflight()
    assert "\n" not in raised.value.message
    return raised.value


def test_preflight_looks_the_model_up_without_composing(server):
    said = provider_for(server, "model-two").preflight()
    assert "model-two is served by" in said
    assert (server.lookups, server.requests) == (["/v1/models/model-two"], [])


def test_preflight_names_a_mistyped_model_and_the_closest_served_one(server):
    error = preflight_error(server, "model-tow")
    assert error.code == "PROVIDER_MODEL_NOT_FOUND"
    assert "no model 'model-tow'" in error.message
    assert "did you mean model-two" in error.message


@pytest.mark.parametrize(
    ("status", "code"),
    [(401, "PROVIDER_AUTH"), (403, "PROVIDER_AUTH"), (500, "PROVIDER_UNAVAILABLE"), (429, "PROVIDER_UNAVAILABLE")],
)
@pytest.mark.slow
def test_preflight_refuses_a_bad_key_or_an_unavailable_provider(server, status, code):
    server.fail_status = status
    error = preflight_error(server, "model-one")
    assert (error.code, f"HTTP {status}" in error.message) == (code, True)


@pytest.mark.slow
def test_preflight_of_a_provider_that_is_down_fails_quickly(server):
    server.stop()
    started = time.monotonic()
    assert preflight_error(server, "model-one").code == "PROVIDER_UNAVAILABLE"
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(("model", "expected"), [("model-one", None), ("model-0ne", "PROVIDER_MODEL_NOT_FOUND")])
def test_a_server_without_model_retrieval_is_checked_against_its_model_list(model, expected):
    with FakeOpenAIServer(models=["model-one"], lookup="list") as vllm:
        if expected is None:
            assert "is served by" in provider_for(vllm, model).preflight()
        else:
            assert preflight_error(vllm, model).code == expected
        assert vllm.lookups == [f"/v1/models/{model}", "/v1/models"]


def test_a_server_without_any_model_lookup_is_said_to_be_unchecked_not_refused():
    with FakeOpenAIServer(models=["model-one"], lookup="none") as bare:
        said = provider_for(bare, "anything").preflight()
    assert said == f"anything not checked: {bare.base_url} has no model lookup"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_person_s_missing_editor_is_refused_before_joining(tmp_path):
    with pytest.raises(ProviderError) as raised:
        HumanProvider(editor=str(tmp_path / "no-such-editor")).preflight()
    assert raised.value.code == "INVALID_ARGUMENT"
    assert HumanProvider(stdin=io.StringIO()).preflight() == "a person writes the turns on standard input"


def test_a_person_at_a_terminal_without_editor_settings_gets_vi_checked(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no vi here
    with pytest.raises(ProviderError) as raised:
        HumanProvider(stdin=Terminal()).preflight()
    assert "'vi'" in raised.value.message


def test_a_script_with_an_unreadable_turn_is_refused_before_joining(tmp_path):
    (tmp_path / "1.md").write_text("a turn\n")
    (tmp_path / "2.md").write_bytes(b"\xff\xfe not UTF-8")
    with pytest.raises(ProviderError) as raised:
        ScriptedProvider(tmp_path).preflight()
    assert (raised.value.code, "2.md" in raised.value.message) == ("INVALID_ARGUMENT", True)
    (tmp_path / "2.md").write_text("another turn\n")
    assert ScriptedProvider(tmp_path).preflight() == f"2 scripted turns in {Path(tmp_path)}"


@pytest.mark.parametrize(
    ("kind", "model", "belongs"),
    [
        ("openai", "claude-sonnet-5-5", "Anthropic model: pass --provider anthropic"),
        ("anthropic", "gpt-6.1-sol", "OpenAI model: pass --provider openai"),
    ],
)
def test_a_model_named_for_the_other_provider_is_pointed_there(kind, model, belongs):
    fake = {"anthropic": FakeAnthropicServer, "openai": FakeOpenAIServer}[kind]
    with fake(models=["model-one"]) as server:
        error = preflight_error(server, model)
    assert error.code == "PROVIDER_MODEL_NOT_FOUND"
    assert error.message.endswith(f"it is named like an {belongs}, or check --model")


def test_a_model_named_for_the_server_asked_is_only_checked(server):
    mine = "claude-opus-9" if isinstance(server, FakeAnthropicServer) else "gpt-9"
    assert preflight_error(server, mine).message.endswith(": check --model")
