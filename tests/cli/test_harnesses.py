"""The real harnesses (issue 37): Claude Code, Codex and Gemini CLI, at the versions `.ci/run` pins in
`.harnesses/`, each set up by nothing but `duel skill --harness X --mcp --install` and the trust step it
prints, run headless against a scripted model on 127.0.0.1 (tests/fake_agents.py), take a seat and finish
a duel against a peer the test drives through the library."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fake_agents import AgentServer, AnthropicAgentServer, GeminiAgentServer, ResponsesAgentServer, ScriptedAgent

from rp1_duel.coordination import DuelService
from rp1_duel.mcp_server.seat import WAIT_BOUND_SECONDS

from helpers import SOURCE, claim, join, make_turn

pytestmark = pytest.mark.slow  # a harness, a duel mcp server and a model server per test

BIN = Path(__file__).resolve().parents[2] / ".harnesses" / "node_modules" / ".bin"
DUEL_TOOLS = {f"duel_{op}" for op in ("join", "status", "rules", "read", "claim", "append", "wait", "release", "close")}
RUN_SECONDS = 240  # a whole duel, the harness's start included
PROMPT = "Take part in the duel about design.md with the duel tools, until it is closed."


def harness_command(name: str) -> Path:
    """The pinned harness's executable; the test is skipped, saying why, when it is not installed."""
    path = BIN / name
    if not path.exists():
        pytest.skip(f"{name} is not installed in {BIN.parent.parent}: .ci/run installs the pinned harnesses there")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh project: a git work tree holding the source and a three-turn duel.toml (the agent's turns 1 and 3)."""
    folder = tmp_path / "project"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "design.md").write_text(SOURCE, encoding="utf-8")
    (folder / "duel.toml").write_text("[duel]\nmax_turns = 3\n", encoding="utf-8")
    return folder


def harness_env(home: Path, **extra: str) -> dict[str, str]:
    """A user's environment and nothing of the test's: this virtualenv's `duel` on PATH, and ``home``."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    kept = {key: os.environ[key] for key in ("LANG", "TMPDIR") if key in os.environ}
    return kept | {"PATH": path, "HOME": str(home), "TERM": "dumb", "NO_COLOR": "1"} | extra


def install(harness: str, project: Path, home: Path) -> None:
    """`duel skill --harness HARNESS --mcp --install` in ``project``, then the trust step it prints, as a user would."""
    home.mkdir(exist_ok=True)
    done = subprocess.run(
        ["duel", "skill", "--harness", harness, "--mcp", "--install"],
        cwd=project,
        env=harness_env(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    step = re.search(r"^to do: .*(add to|merge into) (\S+):\n(.*)", done.stdout, re.MULTILINE | re.DOTALL)
    if step is None:
        return
    how, path, text = step.group(1), Path(step.group(2)), step.group(3)
    path.parent.mkdir(parents=True, exist_ok=True)
    if how == "merge into":
        old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        path.write_text(json.dumps(merged(old, json.loads(text))), encoding="utf-8")
    else:
        with path.open("a", encoding="utf-8") as config:
            config.write(text)


def merged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``old`` with ``new`` merged in, object by object, as a user merges a snippet into a settings file."""
    both = dict(old)
    for key, value in new.items():
        both[key] = merged(both[key], value) if isinstance(value, dict) and isinstance(both.get(key), dict) else value
    return both


class Peer(threading.Thread):
    """The second seat, through the library: joins once the agent has, and answers its first turn at once."""

    def __init__(self, project: Path):
        super().__init__(name="peer", daemon=True)
        self.project, self.moved = project, threading.Event()
        self.error: Exception | None = None
        self.tokens: list[str] = []

    def run(self) -> None:
        try:
            self.play()
        except Exception as exc:  # noqa: BLE001  reported by the test, not lost in a thread
            self.error = exc

    def play(self) -> None:
        service = DuelService(self.project / "debates")
        deadline = time.monotonic() + RUN_SECONDS
        while not ((self.project / "debates").is_dir() and service.duel_ids()):
            assert time.monotonic() < deadline, "the agent never joined"
            time.sleep(0.1)
        peer = join(service, self.project / "design.md", "Peer", harness="codex", model_id="peer-model")
        self.tokens.append(peer.token)
        while service.status(peer.duel_id).turn_count < 1:
            assert time.monotonic() < deadline, "the agent never wrote its turn"
            time.sleep(0.1)
        lease = claim(service, peer)
        self.tokens.append(str(lease))
        service.append(peer.seat, lease, make_turn(2, "Peer", "codex", "peer-model"), release=True)
        self.moved.set()


def duel_against_peer(harness: str, project: Path, wire: type[AgentServer], command: list[str], **env: str) -> None:
    """Run ``command`` (the harness, headless) in ``project`` against the scripted model on ``wire`` and the
    peer; check the duel it finishes, the tools it was offered, the waits, and what reached the model."""
    peer = Peer(project)
    agent = ScriptedAgent(project / "design.md", "Agent", harness, "fake-model", peer.moved)
    with wire(agent) as server:
        peer.start()
        harness_process = subprocess.Popen(
            [part.replace("{base_url}", server.base_url) for part in command],
            cwd=project,
            env=harness_env(
                project.parent / "home", **{k: v.replace("{base_url}", server.base_url) for k, v in env.items()}
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        try:
            out, err = harness_process.communicate(timeout=RUN_SECONDS)
        except subprocess.TimeoutExpired:
            harness_process.kill()
            out, err = harness_process.communicate()
    peer.join(10)
    trail = (
        f"exit {harness_process.returncode}\nstdout: {out[-3000:]}\nstderr: {err[-3000:]}\n"
        f"paths: {server.paths[:20]}\nlast results: {agent.results[-3:]}"
    )
    assert peer.error is None, f"{peer.error!r}\n{trail}"
    assert agent.tools_seen, trail
    first = {name for name in agent.tools_seen[0] if name.endswith(tuple(DUEL_TOOLS))}
    assert {tool for tool in DUEL_TOOLS if any(name.endswith(tool) for name in first)} == DUEL_TOOLS, trail

    service = DuelService(project / "debates")
    [duel_id] = service.duel_ids()
    status = service.status(duel_id)
    assert status.duel.status == "CLOSED", trail
    assert status.duel.outcome == "MAX_TURNS", trail
    assert [(p.seat, p.display_name, p.harness) for p in status.participants] == [
        (1, "Agent", harness),
        (2, "Peer", "codex"),
    ]
    validated = subprocess.run(
        ["duel", "validate", status.duel.debate_path], cwd=project, capture_output=True, text=True, timeout=60
    )
    assert validated.returncode == 0, validated.stdout + validated.stderr

    waits = agent.wait_seconds()
    after_the_peer_moved = waits[-1]  # the agent's wait after its own turn, started once the peer had answered it
    assert after_the_peer_moved < WAIT_BOUND_SECONDS / 3, waits

    stashed = [
        json.loads(path.read_text(encoding="utf-8"))["participant_token"]
        for path in (project / "debates" / ".duel" / "participants").glob("*.json")
    ]
    said = "\n".join(agent.results)
    assert len(agent.results) >= 6
    for token in [*stashed, *peer.tokens]:
        assert token not in said
    assert not re.search(r"(participant|lease)_token", said)


def test_claude_code_set_up_by_duel_skill_finishes_a_duel_headless(project: Path) -> None:
    claude = harness_command("claude")
    install("claude-code", project, project.parent / "home")
    duel_against_peer(
        "claude-code",
        project,
        AnthropicAgentServer,
        [str(claude), "-p", PROMPT, "--model", "claude-sonnet-4-6"],
        ANTHROPIC_BASE_URL="{base_url}",
        ANTHROPIC_API_KEY="sk-ant-fake",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
    )


def test_codex_set_up_by_duel_skill_finishes_a_duel_headless(project: Path) -> None:
    codex = harness_command("codex")
    install("codex", project, project.parent / "home")
    provider = '{name = "fake", base_url = "{base_url}/v1", wire_api = "responses", env_key = "FAKE_API_KEY"}'
    duel_against_peer(
        "codex",
        project,
        ResponsesAgentServer,
        [
            str(codex),
            "exec",
            "-c",
            f"model_providers.fake={provider}",
            "-c",
            'model_provider="fake"',
            "-m",
            "fake-model",
            PROMPT,
        ],
        FAKE_API_KEY="sk-fake",
    )


def test_gemini_cli_set_up_by_duel_skill_finishes_a_duel_headless(project: Path) -> None:
    gemini = harness_command("gemini")
    install("gemini", project, project.parent / "home")
    # The user's own choice, as `gemini` asks it at first start: an API key (whose base URL the fake serves).
    user_settings = project.parent / "home" / ".gemini" / "settings.json"
    user_settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}), encoding="utf-8")
    duel_against_peer(
        "gemini",
        project,
        GeminiAgentServer,
        [str(gemini), "-p", PROMPT, "-m", "gemini-2.5-pro"],
        GOOGLE_GEMINI_BASE_URL="{base_url}",
        GEMINI_API_KEY="fake-key",
    )
