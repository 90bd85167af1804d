"""`duel join` when a model fails for good (issue 28 item 3): real processes, a fake model server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_participant import claude_env, finish, scripted_peer, start, wait_for_seat

from fake_debater import debater

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
