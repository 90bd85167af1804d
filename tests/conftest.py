"""Shared fixtures: a temp debate dir with a source, a service on a manual clock, the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fake_models import anthropic_server, openai_server  # noqa: F401 (fixtures for every test file)
from rp1_duel.clock import ManualClock
from rp1_duel.service import DuelService, DuelSettings

SOURCE = """# Lease design

## Lease semantics
Leases expire after fifteen minutes unless refreshed.
A holder refreshes its lease while it works.

## Turn order
Seat 1 writes odd turns and seat 2 writes even turns.

## Failure handling
A crashed holder loses the floor when its lease expires.
"""


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "design.md"
    path.write_text(SOURCE, encoding="utf-8")
    return path


@pytest.fixture
def debate_dir(tmp_path: Path) -> Path:
    return tmp_path / "debates"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def service(debate_dir: Path, clock: ManualClock) -> DuelService:
    return DuelService(debate_dir, clock=clock)


@dataclass
class Seat:
    duel_id: str
    id: str
    token: str
    seat: int
    name: str


def join(service: DuelService, source: Path, name: str, **kwargs: Any) -> Seat:
    settings = kwargs.pop("settings", DuelSettings())
    data = service.join(target=str(source), participant_name=name, settings=settings, **kwargs)
    return Seat(data["duel_id"], data["participant_id"], data["participant_token"], data["seat"], name)


@pytest.fixture
def pair(service: DuelService, source: Path) -> tuple[Seat, Seat]:
    """Two participants in one duel, defaults as the protocol gives them."""
    return join(service, source, "Alice", harness="claude-code", model_id="claude-x"), join(
        service, source, "Bob", harness="codex", model_id="gpt-x"
    )


@dataclass
class ToolResult:
    code: int
    envelope: dict[str, Any]
    stderr: str

    @property
    def data(self) -> dict[str, Any]:
        assert self.envelope["success"], self.envelope
        return self.envelope["data"]

    @property
    def error(self) -> dict[str, Any]:
        assert not self.envelope["success"], self.envelope
        return self.envelope["error"]


def run_tools(*args: str, debate_dir: Path | None = None, stdin: bytes | None = None,
              env: dict[str, str] | None = None, timeout: float = 60) -> ToolResult:
    """Run `duel tools …` as a real process; stdout must be exactly one JSON object."""
    argv = [sys.executable, "-m", "rp1_duel.cli", "tools", *args]
    if debate_dir is not None:
        argv += ["--debate-dir", str(debate_dir)]
    full_env = {k: v for k, v in os.environ.items() if k not in ("DUEL_PARTICIPANT_TOKEN", "DUEL_DIR")}
    full_env.update(env or {})
    proc = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout, env=full_env)
    out = proc.stdout.decode()
    assert out.count("\n") == 1, f"stdout must be one JSON line, got: {out!r} / {proc.stderr!r}"
    assert "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    return ToolResult(proc.returncode, json.loads(out), proc.stderr.decode())
