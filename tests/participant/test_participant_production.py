"""`duel join` against what production model APIs do (issue 9): real processes, the real SDKs,
fake servers scripted request by request (tests/fake_models.py)."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_participant import claude_env, clean_env, finish, gpt_env, scripted_peer, start, wait_for_seat

from fake_debater import debater

pytestmark = pytest.mark.slow


def events(debate_dir: Path, duel_id: str, kind: str) -> list[dict]:
    log = debate_dir / ".duel" / "duels" / duel_id / "events.jsonl"
    return [e for e in map(json.loads, log.read_text().splitlines()) if e["type"] == kind]


def wrote_seconds(err: str) -> list[float]:
    return [float(s) for s in re.findall(r"wrote ~?\d+ tokens in ([\d.]+)s", err)]


def test_a_duel_survives_rate_limits_overload_in_stream_errors_and_cut_streams(
    source, debate_dir, anthropic_server, openai_server
):
    anthropic_server.responder = openai_server.responder = debater
    anthropic_server.cache_read_tokens, anthropic_server.cache_write_tokens = 500, 100
    anthropic_server.script = [
        {"status": 429, "retry_after": 3},
        {"error_after_chunks": 3},  # turn 1
        {"reset_after_chunks": 2},
        {"end_after_chunks": 2},  # turn 3
    ]
    openai_server.script = [
        {"status": 529, "retry_after": 1},
        {"status": 503, "retry_after": 1},
        {"status": 529, "retry_after": 1},  # 2
        {"error_after_chunks": 2},  # turn 4
    ]
    claude = start(
        source, debate_dir, "--model", "claude-sonnet-5-5", "--max-turns", "4", env=claude_env(anthropic_server)
    )
    wait_for_seat(debate_dir, source)
    gpt = start(source, debate_dir, "--model", "gpt-6.1-sol", env=gpt_env(openai_server))
    (code_c, result_c, err_c), (code_g, result_g, err_g) = finish(claude), finish(gpt)

    assert (code_c, code_g) == (0, 0), err_c + err_g
    assert result_c["outcome"] == result_g["outcome"] == "ACCEPTED_CONSENSUS"
    assert (result_c["turns_written"], result_g["turns_written"]) == ([1, 3], [2, 4])
    # Told as it happens, timed from the request: the first turn waited 3 s for the rate limit.
    assert (
        "anthropic rate-limited the request (HTTP 429): fake rate_limit_error (429); retrying in 3 s (attempt 2)"
        in err_c
    )
    assert "in the middle of its answer (overloaded_error)" in err_c
    assert "dropped in the middle of its answer" in err_c
    assert "closed the stream before the answer was complete" in err_c
    assert "is unavailable (HTTP 529)" in err_g
    assert wrote_seconds(err_c)[0] >= 3.0, err_c
    # The usage, per participant, from the events.
    claude_usage, gpt_usage = result_c["usage"], result_g["usage"]
    assert (claude_usage["requests"], claude_usage["retries"]) == (6, 4)
    assert (gpt_usage["requests"], gpt_usage["retries"]) == (6, 4)
    assert claude_usage["cache_read_tokens"] == 1000 and claude_usage["cache_write_tokens"] == 200
    assert claude_usage["output_tokens"] > 0 and claude_usage["input_tokens"] > 0
    assert claude_usage["output_estimated"]  # the answers that broke off were paid for: counted, estimated
    assert claude_usage["cost_usd"] > 0 and gpt_usage["cost_usd"] > 0
    assert claude_usage["prices_date"]
    assert claude_usage["seconds"] >= 3.0
    recorded = events(debate_dir, result_c["duel_id"], "usage")
    assert [(e["participant_id"], e["data"]["turn_number"]) for e in recorded] == [
        (result_c["participant_id"], 1),
        (result_g["participant_id"], 2),
        (result_c["participant_id"], 3),
        (result_g["participant_id"], 4),
    ]


def test_retries_stop_at_the_turn_deadline_and_the_seat_is_kept_for_a_rerun(
    source, debate_dir, anthropic_server, tmp_path
):
    anthropic_server.responder = debater
    anthropic_server.script = [{"status": 529}] * 4  # 1, 2 and 4 s waits; then 8 s would pass the 40 s deadline
    args = ("--model", "claude-x", "--max-turns", "2", "--turn-timeout-seconds", "40")
    claude = start(source, debate_dir, *args, env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    peer = scripted_peer(source, debate_dir, tmp_path, [2], max_turns=2)
    out, err = claude.communicate(timeout=60)

    assert claude.returncode == 1, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("duel: PROVIDER_UNAVAILABLE: anthropic is unavailable (HTTP 529)")
    assert "gave up after 4 attempts" in last
    assert last.endswith("your seat is kept: run the same command to resume")
    assert json.loads(out)["error"]["code"] == "PROVIDER_UNAVAILABLE"

    code, result, err = finish(start(source, debate_dir, *args, env=claude_env(anthropic_server)))
    assert code == 0, err
    assert result["turns_written"] == [1]
    assert finish(peer)[1]["outcome"] == "ACCEPTED_CONSENSUS"


def test_a_permanent_error_is_not_retried_and_says_the_seat_is_kept(source, debate_dir, anthropic_server):
    anthropic_server.script = [{"status": 401}]
    claude = start(
        source, debate_dir, "--model", "claude-x", "--peer-wait-seconds", "60", env=claude_env(anthropic_server)
    )
    wait_for_seat(debate_dir, source)
    peer = start(source, debate_dir, "--model", "claude-y", "--name", "Other", env=claude_env(anthropic_server))
    _out, err = claude.communicate(timeout=60)
    peer.send_signal(signal.SIGINT)
    peer.communicate(timeout=30)

    assert claude.returncode == 1, err
    assert err.strip().splitlines()[-1] == (
        "duel: PROVIDER_AUTH: anthropic refused the credentials (HTTP 401): fake authentication_error (401); "
        "your seat is kept: run the same command to resume"
    )
    assert "retrying" not in err


def test_a_model_thinking_in_silence_shows_a_running_clock(source, debate_dir, anthropic_server, tmp_path):
    anthropic_server.responder = debater
    anthropic_server.script = [{"think_seconds": 3}]
    main_fd, terminal_fd = pty.openpty()  # stderr on a terminal: the live line is redrawn each second
    seen: list[bytes] = []
    threading.Thread(target=lambda: _drain(main_fd, seen), daemon=True).start()
    argv = [
        sys.executable,
        "-m",
        "rp1_duel",
        "join",
        "--target",
        str(source),
        "--debate-dir",
        str(debate_dir),
        "--model",
        "claude-x",
        "--max-turns",
        "2",
        "--json",
    ]
    claude = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=terminal_fd,
        text=True,
        env=claude_env(anthropic_server),
    )
    os.close(terminal_fd)
    wait_for_seat(debate_dir, source)
    peer = scripted_peer(source, debate_dir, tmp_path, [2], max_turns=2)
    out, _ = claude.communicate(timeout=60)
    assert claude.returncode == 0
    time.sleep(0.2)
    shown = b"".join(seen).decode(errors="replace")
    assert "thinking… 1 s" in shown and "thinking… 2 s" in shown, shown
    assert "writing… ~" in shown  # an estimate while it streams, labelled
    assert wrote_seconds(shown)[0] >= 3.0, shown
    assert json.loads(out)["turns_written"] == [1]
    assert finish(peer)[0] == 0


def test_a_resumed_participant_reports_every_turn_and_all_usage_of_its_seat(
    source, debate_dir, anthropic_server, tmp_path
):
    anthropic_server.responder = debater
    anthropic_server.script = [{}, {"think_seconds": 60}]  # turn 3 hangs: the person presses Ctrl-C
    args = ("--model", "claude-x", "--max-turns", "4")
    claude = start(source, debate_dir, *args, env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    peer = scripted_peer(source, debate_dir, tmp_path, [2, 4], max_turns=4)
    deadline = time.monotonic() + 30
    while len(anthropic_server.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    claude.send_signal(signal.SIGINT)
    claude.communicate(timeout=30)
    assert claude.returncode == 130

    code, result, err = finish(start(source, debate_dir, *args, env=claude_env(anthropic_server)))
    assert code == 0, err
    assert result["turns_written"] == [1, 3]  # the first run's turn too
    assert result["usage"]["requests"] == 2  # turn 1 (first run) and turn 3 (this run)
    assert result["usage"]["cost_usd"] is None  # claude-x is in no price table
    assert finish(peer)[1]["outcome"] == "ACCEPTED_CONSENSUS"


def _drain(fd: int, into: list[bytes]) -> None:
    try:
        while chunk := os.read(fd, 4096):
            into.append(chunk)
    except OSError:
        pass


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--reasoning", "extreme", "--reasoning must be one of low, medium, high, not 'extreme'"),
        ("--max-output-tokens", "0", "--max-output-tokens must be between 1 and 1000000, got 0"),
    ],
)
def test_an_unknown_reasoning_level_or_an_output_ceiling_out_of_range_is_refused_before_joining(
    source, debate_dir, flag, value, says
):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rp1_duel",
            "join",
            "--target",
            str(source),
            "--debate-dir",
            str(debate_dir),
            "--model",
            "claude-x",
            flag,
            value,
        ],
        capture_output=True,
        text=True,
        env=clean_env(ANTHROPIC_API_KEY="test-key"),
    )
    assert proc.returncode == 2
    assert proc.stderr == f"duel: INVALID_ARGUMENT: {says}\n"
    assert not debate_dir.exists()
