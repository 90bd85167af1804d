"""`duel join` when a model fails for good (issue 28 item 3), and what is kept of a draft that was
rejected (item 5): real processes, a fake model server."""

from __future__ import annotations

import json
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from test_participant import claude_env, finish, scripted_peer, start, wait_for_seat

from rp1_duel.coordination import DuelService

from fake_debater import debater, sloppy_then_fixed

pytestmark = pytest.mark.slow


def logged(debate_dir: Path, duel_id: str, kind: str) -> list[dict]:
    log = debate_dir / ".duel" / "duels" / duel_id / "events.jsonl"
    return [e for e in map(json.loads, log.read_text().splitlines()) if e["type"] == kind]


def test_a_model_that_fails_for_good_is_named_in_the_log_and_in_the_timeout_reason(
    source, debate_dir, anthropic_server, tmp_path
):
    # Claude's answer breaks off after five chunks, and 8 s leave no time for a retry: its seat stops.
    anthropic_server.responder = debater
    anthropic_server.script = [{"error_after_chunks": 5}]
    args = ("--model", "claude-x", "--max-turns", "2", "--turn-timeout-seconds", "8", "--lease-seconds", "5")
    claude = start(source, debate_dir, *args, env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    bob = scripted_peer(source, debate_dir, tmp_path, [2], max_turns=2)
    out, err = claude.communicate(timeout=60)
    code, result, bob_err = finish(bob, timeout=60)

    assert claude.returncode == 1, err
    assert json.loads(out)["error"]["code"] == "PROVIDER_UNAVAILABLE"
    assert "the model failed writing turn 1 (PROVIDER_UNAVAILABLE); the failure is logged" in err
    failed = logged(debate_dir, result["duel_id"], "provider_failed")
    assert [(e["data"]["seat"], e["data"]["turn_number"], e["data"]["code"]) for e in failed] == [
        (1, 1, "PROVIDER_UNAVAILABLE")
    ]
    assert "in the middle of its answer" in failed[0]["data"]["message"]
    # The request that failed was paid for: it is counted, its tokens estimated.
    (usage,) = logged(debate_dir, result["duel_id"], "usage")
    assert usage["participant_id"] == failed[0]["participant_id"]
    data = usage["data"]
    assert (data["turn_number"], data["requests"], data["output_estimated"]) == (1, 1, True)
    assert data["input_tokens"] > 0 and data["output_tokens"] > 0

    # Bob waits out the turn deadline and closes TIMEOUT: the reason names seat 1, its turn and why.
    assert (code, result["outcome"]) == (0, "TIMEOUT"), bob_err
    reason = result["reason"]
    assert reason.startswith(
        "seat 1 (Claude) did not finish turn 1 by its deadline; its model failed (PROVIDER_UNAVAILABLE): "
    )
    assert "the peer" not in reason
    assert f"| Reason | {reason} |" in Path(result["debate_path"]).read_text()


def test_a_rejected_draft_is_kept_owner_only_beside_the_token_and_the_console_says_where(
    source, debate_dir, anthropic_server, tmp_path
):
    anthropic_server.responder = sloppy_then_fixed
    claude = start(source, debate_dir, "--model", "claude-x", "--max-turns", "2", env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    bob = scripted_peer(source, debate_dir, tmp_path, [2], max_turns=2)
    code, result, err = finish(claude)
    assert code == 0, err
    assert finish(bob)[0] == 0

    found = re.search(r"the rejected draft is kept in (\S+)", err)
    assert found, err
    kept = Path(found.group(1))
    participants = debate_dir / ".duel" / "participants"
    assert kept.parent.parent == participants and kept.parent.name.endswith(".drafts")
    assert kept.name == f"{result['duel_id']}-turn-1-draft-1.md"
    assert "(non-blocking)" not in kept.read_text() and "## Turn 1" in kept.read_text()  # the answer as it came
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert [p.name for p in kept.parent.iterdir()] == [kept.name]  # the accepted draft is the turn: not kept


STORE_FAILS_ONCE = """
import errno, sys
from rp1_duel.coordination import _record_writer as record_writer
from rp1_duel.cli import main

real = record_writer.write_artifact
def disk_full_on_the_first_turn(tx, turns, conclusion=None, *, create=False):
    if not isinstance(turns, str) and len(turns) == 1:  # turn 1 is being appended
        raise OSError(errno.ENOSPC, "No space left on device")
    real(tx, turns, conclusion, create=create)
record_writer.write_artifact = disk_full_on_the_first_turn
main()
"""


def test_a_turn_the_store_failed_to_take_is_kept_and_appended_on_resume_without_a_new_request(
    source, debate_dir, anthropic_server, tmp_path
):
    anthropic_server.responder = debater
    script = tmp_path / "store_fails.py"
    script.write_text(STORE_FAILS_ONCE)
    args = ("--target", str(source), "--debate-dir", str(debate_dir), "--json", "--model", "claude-x")
    failing = subprocess.Popen(
        [sys.executable, str(script), "join", *args, "--max-turns", "2"],
        env=claude_env(anthropic_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_seat(debate_dir, source)
    bob = scripted_peer(source, debate_dir, tmp_path, [2], max_turns=2)
    out, failed_err = failing.communicate(timeout=60)
    assert failing.returncode == 1, failed_err
    error = json.loads(out)["error"]
    assert error["code"] == "STORAGE_FAILED"
    found = re.search(
        r"the valid turn 1 the model wrote is kept in (\S+), and running the same command", error["message"]
    )
    assert found, error
    kept = Path(found.group(1))
    assert kept.name.endswith("-turn-1-unsaved.md") and stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert len(anthropic_server.requests) == 1
    answer = kept.read_text()
    status = DuelService(debate_dir).status(target=str(source))
    assert status.turn_count == 0 and status.lock.owner_participant_id is None  # nothing half-written, no lease left

    claude = subprocess.Popen(
        [sys.executable, "-m", "rp1_duel", "join", *args],
        env=claude_env(anthropic_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    code, result, err = finish(claude)
    assert code == 0, err
    assert finish(bob)[0] == 0
    assert f"turn 1: using the valid draft kept in {kept}, without a new model request" in err
    assert len(anthropic_server.requests) == 1  # the paid answer was used, not asked again
    assert answer.strip() in Path(result["debate_path"]).read_text()
    assert not kept.exists()
