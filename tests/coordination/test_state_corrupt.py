"""A damaged state file is reported, never crashed on, and never touched.

Every `duel tools` op on a duel whose state.json (or the debate dir's index.json) is
damaged answers exit 1 with STATE_CORRUPT and a one-line message, prints no traceback,
and leaves the damaged bytes exactly as they were, for a person to look at.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from rp1_duel.coordination import DuelService
from rp1_duel.settings import DuelSettings

from helpers import claim, join, run_tools

pytestmark = pytest.mark.slow  # every test runs `duel tools` ops as processes

SOURCE = "# Lease design\n\n## Lease semantics\nLeases expire unless refreshed.\n"
TURN = "## Turn 1 — Alice (test / m1) — OPEN_TO_DEBATE\n**Position**\nLeases expire.\n"


def run_ops(ops: dict[str, list[str]]) -> dict[str, tuple[int, dict[str, Any], str]]:
    """Run several ops at once (none of them may write anything, so order does not matter)."""

    def tools(argv: list[str]) -> tuple[int, dict[str, Any], str]:
        result = run_tools(*argv)  # asserts one JSON line on stdout and no traceback
        return result.code, result.envelope, result.stderr

    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {name: pool.submit(tools, argv) for name, argv in ops.items()}
        return {name: future.result() for name, future in futures.items()}


@pytest.fixture
def duel(tmp_path: Path) -> dict[str, Any]:
    source = tmp_path / "design.md"
    source.write_text(SOURCE, encoding="utf-8")
    debate_dir = tmp_path / "debates"
    service = DuelService(debate_dir)
    settings = DuelSettings(lease_seconds=5)
    one = join(service, source, "Alice", harness="test", model_id="m1", settings=settings)
    two = join(service, source, "Bob", harness="test", model_id="m2", settings=settings)
    lease = claim(service, one)
    folder = debate_dir / ".duel" / "duels" / one.duel_id
    turn_file = tmp_path / "turn.md"
    turn_file.write_text(TURN, encoding="utf-8")
    return {
        "source": source,
        "dir": debate_dir,
        "one": one,
        "two": two,
        "lease": lease.value,
        "state": folder / "state.json",
        "events": folder / "events.jsonl",
        "index": debate_dir / ".duel" / "index.json",
        "turn_file": turn_file,
    }


def all_ops(d: dict[str, Any]) -> dict[str, list[str]]:
    """Every `duel tools` op, aimed at the duel (by id where it takes one)."""
    one, two, dir_ = d["one"], d["two"], ["--debate-dir", str(d["dir"])]
    by_id = ["--duel-id", one.duel_id, *dir_]
    me = [*by_id, "--participant-id", one.id, f"--participant-token={one.token}"]
    peer = [*by_id, "--participant-id", two.id, f"--participant-token={two.token}"]
    join_ = ["--target", str(d["source"]), *dir_, "--harness", "test"]
    return {
        "status": ["status", *by_id],
        "status-participant": ["status", *by_id, "--participant-id", one.id],
        "status-target": ["status", "--target", str(d["source"]), *dir_],
        "claim-lock": ["claim-lock", *peer],
        "claim-lock-timeout": ["claim-lock", *peer, "--for-timeout"],
        "refresh-lock": ["refresh-lock", *me, "--lease-token", d["lease"]],
        "release-lock": ["release-lock", *me, "--lease-token", d["lease"]],
        "release-lock-close": [
            "release-lock",
            *me,
            "--lease-token",
            d["lease"],
            "--close",
            "--outcome",
            "INVALIDATED",
            "--reason",
            "test",
        ],
        "append": ["append", *me, "--lease-token", d["lease"], "--turn-file", str(d["turn_file"])],
        "wait": ["wait", *by_id, "--participant-id", two.id, "--timeout", "0.5"],
        "join-resume": [
            "join",
            *join_,
            "--participant-name",
            "Alice",
            "--model-id",
            "m1",
            f"--participant-token={one.token}",
        ],
        "join-new": ["join", *join_, "--participant-name", "Carol", "--model-id", "m3"],
    }


def assert_state_corrupt(code: int, envelope: dict[str, Any], stderr: str, what: str) -> None:
    assert code == 1, (what, envelope)
    assert envelope["success"] is False and envelope["tool"] == "duel", (what, envelope)
    error = envelope["error"]
    assert error["code"] == "STATE_CORRUPT", (what, envelope)
    assert error["message"] and "\n" not in error["message"] and "\r" not in error["message"], (what, error)
    assert "Traceback" not in stderr, (what, stderr)


def _state(d: dict[str, Any]) -> dict[str, Any]:
    return json.loads(d["state"].read_bytes())


DAMAGES: dict[str, Callable[[bytes], bytes]] = {
    "truncated": lambda raw: raw[: len(raw) // 2],
    "empty": lambda raw: b"",
    "garbage": lambda raw: b"\x00\xff\xfe\x89PNG\r\n\x1a\n\xde\xad\xbe\xef" * 7,
    "wrong-version": lambda raw: json.dumps({**json.loads(raw), "version": 99}).encode(),
}
MORE_DAMAGES: dict[str, Callable[[bytes], bytes]] = {
    "no-version": lambda raw: json.dumps({k: v for k, v in json.loads(raw).items() if k != "version"}).encode(),
    "not-an-object": lambda raw: b"[1, 2, 3]",
    "null": lambda raw: b"null",
    "missing-field": lambda raw: json.dumps({k: v for k, v in json.loads(raw).items() if k != "participants"}).encode(),
    "unknown-field": lambda raw: json.dumps({**json.loads(raw), "surprise": 1}).encode(),
    "lease-not-an-object": lambda raw: json.dumps({**json.loads(raw), "lease": 5}).encode(),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_every_op_reports_a_corrupt_state_and_leaves_it_untouched(duel: dict[str, Any], damage: str) -> None:
    damaged = DAMAGES[damage](duel["state"].read_bytes())
    duel["state"].write_bytes(damaged)
    events_before = duel["events"].read_bytes()
    index_before = duel["index"].read_bytes()
    ops = all_ops(duel)
    for name, (code, envelope, stderr) in run_ops(ops).items():
        assert_state_corrupt(code, envelope, stderr, f"{damage}: {name}")
        assert envelope["command"] == ops[name][0]
    assert duel["state"].read_bytes() == damaged, f"{damage}: an op rewrote the damaged state"
    assert duel["events"].read_bytes() == events_before
    assert duel["index"].read_bytes() == index_before
    assert sorted(p.name for p in duel["state"].parent.iterdir() if p.name.endswith(".tmp")) == []


@pytest.mark.parametrize("damage", sorted(MORE_DAMAGES))
def test_malformed_state_json_is_reported_as_corrupt_and_left_untouched(duel: dict[str, Any], damage: str) -> None:
    damaged = MORE_DAMAGES[damage](duel["state"].read_bytes())
    duel["state"].write_bytes(damaged)
    ops = all_ops(duel)
    results = run_ops({name: ops[name] for name in ("status", "claim-lock", "wait", "join-resume")})
    for name, (code, envelope, stderr) in results.items():
        assert_state_corrupt(code, envelope, stderr, f"{damage}: {name}")
    assert duel["state"].read_bytes() == damaged


INDEX_DAMAGES: dict[str, bytes] = {
    "truncated": b'{"abc": "2026-',
    "empty": b"",
    "garbage": b"\x00\xff\xfe\xfd",
    "not-an-object": b'["2026-01-01-lease-design"]',
}


@pytest.mark.parametrize("damage", sorted(INDEX_DAMAGES))
def test_ops_that_find_a_duel_by_target_report_a_corrupt_index_and_leave_it_untouched(
    duel: dict[str, Any], damage: str
) -> None:
    damaged = INDEX_DAMAGES[damage]
    duel["index"].write_bytes(damaged)
    state_before = duel["state"].read_bytes()
    ops = all_ops(duel)
    results = run_ops({name: ops[name] for name in ("status-target", "join-resume", "join-new")})
    for name, (code, envelope, stderr) in results.items():
        assert_state_corrupt(code, envelope, stderr, f"index {damage}: {name}")
    assert duel["index"].read_bytes() == damaged, f"index {damage}: an op rewrote the damaged index"
    assert duel["state"].read_bytes() == state_before


def test_corrupt_index_spares_ops_by_duel_id(duel: dict[str, Any]) -> None:
    """The index only maps a source to its duel: a duel named by id still works."""
    duel["index"].write_bytes(b"\x00garbage")
    ops = all_ops(duel)
    for name, (code, envelope, stderr) in run_ops(
        {name: ops[name] for name in ("status", "claim-lock", "wait")}
    ).items():
        assert code == 0 and envelope["success"], (name, envelope, stderr)
    assert duel["index"].read_bytes() == b"\x00garbage"


# Well-formed JSON with the right fields but values of the wrong type.
TYPE_DAMAGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "fence-is-a-string": lambda s: s.update(fence="7"),
    "seat-is-a-string": lambda s: s["participants"][0].update(seat="1"),
    "expires-is-a-string": lambda s: s["lease"].update(expires_mono="soon"),
    "participants-are-a-dict": lambda s: s.update(participants={}),
}


@pytest.mark.parametrize("damage", sorted(TYPE_DAMAGES))
def test_mistyped_state_fields_are_reported_as_corrupt_and_left_untouched(duel: dict[str, Any], damage: str) -> None:
    raw = _state(duel)
    TYPE_DAMAGES[damage](raw)
    damaged = json.dumps(raw).encode()
    duel["state"].write_bytes(damaged)
    ops = all_ops(duel)
    results = run_ops({name: ops[name] for name in ("status", "claim-lock", "refresh-lock", "wait", "join-resume")})
    for name, (code, envelope, stderr) in results.items():
        assert_state_corrupt(code, envelope, stderr, f"{damage}: {name}")
    assert duel["state"].read_bytes() == damaged
