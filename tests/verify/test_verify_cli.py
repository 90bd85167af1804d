"""`duel verify` and `duel validate --require-verified` as real processes, on a real duel's artifact,
against the fake web and the fake model servers (docs/protocol.md section 10)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from fake_models import FakeAnthropicServer, FakeOpenAIServer
from fake_web import CLAIM, honest_vote
from helpers import duel_citing

pytestmark = pytest.mark.slow

MODEL_VARIABLES = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL")


def duel(*args, tmp_path, env=None):
    full = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES}
    full.update(XDG_CACHE_HOME=str(tmp_path / "cache"), **(env or {}))
    proc = subprocess.run(
        [sys.executable, "-m", "rp1_duel", *map(str, args)], capture_output=True, text=True, env=full, timeout=120
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.fixture
def dead_link(service, source, web):
    return duel_citing(service, source, {"counterclaim": CLAIM, "citing": (web.url("/states"), web.url("/missing"))})


@pytest.fixture
def sound(service, source, web):
    return duel_citing(service, source, {"counterclaim": CLAIM, "citing": (web.url("/states"),)})


def test_a_fabricated_citation_fails_verify_and_require_verified(dead_link, tmp_path):
    verified = duel("verify", "--allow-private-hosts", dead_link, tmp_path=tmp_path)
    assert verified.returncode == 1, verified.stderr
    assert "url fabricated (high): dead link: HTTP 404 Not Found" in verified.stdout
    assert "url unjudged" in verified.stdout and "(written)" in verified.stdout
    assert "no model configured: mechanical verdicts only" in verified.stderr and "--voter MODEL" in verified.stderr
    assert dead_link.with_name(dead_link.stem + ".verify.json").is_file()

    plain = duel("validate", dead_link, tmp_path=tmp_path)
    assert plain.returncode == 0 and "verification: current, 1 turn covered" in plain.stdout
    required = duel("validate", "--require-verified", dead_link, tmp_path=tmp_path)
    assert required.returncode == 1 and "CITATION_FABRICATED turn 1:" in required.stdout


def test_a_sound_artifact_passes_and_a_rerun_rewrites_nothing(sound, tmp_path):
    first = duel("verify", "--allow-private-hosts", sound, tmp_path=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    side = sound.with_name(sound.stem + ".verify.json")
    written = side.read_bytes()
    again = duel("verify", "--allow-private-hosts", sound, tmp_path=tmp_path)
    assert again.returncode == 0 and "(unchanged)" in again.stdout and side.read_bytes() == written
    assert duel("validate", "--require-verified", sound, tmp_path=tmp_path).returncode == 0


def test_without_allow_private_hosts_this_machine_is_not_fetched(sound, web, tmp_path):
    verified = duel("verify", sound, tmp_path=tmp_path)
    assert verified.returncode == 0
    assert "url unverifiable: the page could not be read: 127.0.0.1: 127.0.0.1 is a loopback address" in verified.stdout
    assert web.requests == []


def test_voters_from_the_keys_set_judge_the_claim(sound, tmp_path):
    with FakeAnthropicServer(responder=honest_vote) as claude, FakeOpenAIServer(responder=honest_vote) as gpt:
        env = {
            "ANTHROPIC_API_KEY": "a",
            "ANTHROPIC_BASE_URL": claude.base_url,
            "OPENAI_API_KEY": "o",
            "OPENAI_BASE_URL": gpt.base_url,
        }
        verified = duel("verify", "--allow-private-hosts", "--json", sound, tmp_path=tmp_path, env=env)
    assert verified.returncode == 0, verified.stderr
    result = json.loads(verified.stdout)
    assert result["models"] and result["voters"] == ["anthropic:claude-sonnet-5-5", "openai:gpt-6.1-sol"]
    judged = next(c for c in result["artifacts"][0]["citations"] if c["kind"] == "url")
    assert (judged["verdict"], judged["confidence"]) == ("verified", "high")
    assert [(v["voter"], v["brief"]) for v in judged["votes"]] == [
        ("anthropic:claude-sonnet-5-5", "support"),
        ("openai:gpt-6.1-sol", "support"),
        ("anthropic:claude-sonnet-5-5", "refute"),
    ]
    assert claude.lookups == ["/v1/models/claude-sonnet-5-5"], "the voter was checked before any fetch"


def test_no_models_keeps_the_verdicts_mechanical_even_with_a_key(sound, tmp_path):
    with FakeAnthropicServer(responder=honest_vote) as claude:
        env = {"ANTHROPIC_API_KEY": "a", "ANTHROPIC_BASE_URL": claude.base_url}
        verified = duel("verify", "--allow-private-hosts", "--no-models", sound, tmp_path=tmp_path, env=env)
    assert verified.returncode == 0 and "--no-models: mechanical verdicts only" in verified.stderr
    assert "url unjudged" in verified.stdout and claude.requests == []


def test_a_named_voter_on_an_openai_compatible_server(sound, tmp_path):
    with FakeOpenAIServer(responder=honest_vote) as local:
        verified = duel(
            "verify",
            "--allow-private-hosts",
            "--json",
            "--voter",
            "llama3.1",
            "--base-url",
            local.base_url,
            sound,
            tmp_path=tmp_path,
        )
    result = json.loads(verified.stdout)
    assert result["voters"] == ["openai:llama3.1"] and {r["body"]["model"] for r in local.requests} == {"llama3.1"}


def test_a_refused_key_stops_before_anything_is_fetched(sound, web, tmp_path):
    with FakeAnthropicServer(fail_status=401) as claude:
        env = {"ANTHROPIC_API_KEY": "bad", "ANTHROPIC_BASE_URL": claude.base_url}
        verified = duel("verify", "--allow-private-hosts", sound, tmp_path=tmp_path, env=env)
    assert verified.returncode == 1 and verified.stderr.strip().splitlines()[-1].startswith("duel: PROVIDER_AUTH: ")
    assert web.requests == []


@pytest.mark.parametrize(
    "args",
    [
        ["no-such-file.md"],
        ["--voter", "a", "--voter", "b", "--voter", "c", "--voter", "d"],
        ["--base-url", "http://127.0.0.1:9/v1"],
        ["--frobnicate"],
    ],
)
def test_wrong_arguments_exit_2(sound, tmp_path, args):
    verified = duel("verify", *args, sound, tmp_path=tmp_path, env={"ANTHROPIC_API_KEY": "a"})
    assert verified.returncode == 2 and verified.stderr.startswith("duel: ")


def test_an_edited_artifact_is_one_error_line(sound, tmp_path):
    sound.write_text(sound.read_text().replace("Argument 1", "Argument one"))
    verified = duel("verify", "--allow-private-hosts", "--json", sound, tmp_path=tmp_path)
    assert verified.returncode == 1
    assert verified.stderr.strip().splitlines()[-1].startswith("duel: ARTIFACT_TAMPERED: ")
    assert json.loads(verified.stdout)["artifacts"][0]["error"]["code"] == "ARTIFACT_TAMPERED"
