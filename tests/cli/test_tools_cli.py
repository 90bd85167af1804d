"""`duel tools …` as real processes: the JSON envelope, exit codes and error codes (section 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rp1_duel.coordination import DuelService, Seat, Usage
from rp1_duel.coordination.storage import SEEN_RESOLUTION_SECONDS
from rp1_duel.errors import DuelError

from helpers import join, run_tools

pytestmark = pytest.mark.slow  # every test starts `duel tools` processes


def joined(source: Path, debate_dir: Path, name: str, *extra: str) -> dict:
    return run_tools("join", "--target", str(source), "--participant-name", name, *extra, debate_dir=debate_dir).data


def test_success_envelope_has_exactly_the_protocol_keys(source, debate_dir):
    result = run_tools("join", "--target", str(source), "--participant-name", "Alice", debate_dir=debate_dir)
    assert result.code == 0
    assert set(result.envelope) == {"success", "tool", "command", "data"}
    assert result.envelope["tool"] == "duel"
    assert result.envelope["command"] == "join"


@pytest.mark.parametrize(
    ("target", "code"),
    [
        ("/nonexistent/design.md", "TARGET_UNREADABLE"),
        ("{tmp}/notes.txt", "TARGET_NOT_MARKDOWN"),
        ("{tmp}", "TARGET_NOT_MARKDOWN"),
    ],
)
def test_bad_targets_have_their_codes(source, debate_dir, target, code):
    (source.parent / "notes.txt").write_text("x")
    result = run_tools(
        "join", "--target", target.format(tmp=source.parent), "--participant-name", "A", debate_dir=debate_dir
    )
    assert (result.code, result.error["code"]) == (1, code)
    assert set(result.envelope) == {"success", "tool", "command", "error"}
    assert "\n" not in result.error["message"]


def test_a_relative_target_is_taken_from_the_working_directory_as_duel_join_takes_it(source, debate_dir, monkeypatch):
    monkeypatch.chdir(source.parent)
    joined = run_tools("join", "--target", source.name, "--participant-name", "A", debate_dir=debate_dir)
    assert joined.data["source_path"] == str(source)
    status = run_tools("status", "--target", source.name, debate_dir=debate_dir)
    assert status.data["duel"]["id"] == joined.data["duel_id"]


def test_unreadable_target_is_target_unreadable(source, debate_dir):
    source.write_bytes(b"\xff\xfe not utf-8")
    result = run_tools("join", "--target", str(source), "--participant-name", "A", debate_dir=debate_dir)
    assert result.error["code"] == "TARGET_UNREADABLE"


def test_debate_dir_that_is_a_file_is_invalid(source, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    result = run_tools("join", "--target", str(source), "--participant-name", "A", debate_dir=blocker)
    assert (result.code, result.error["code"]) == (1, "DEBATE_DIR_INVALID")


@pytest.mark.parametrize("name", ["a/b", "line\nbreak", "x" * 10_000])
def test_bad_names_are_invalid_arguments_exit_2(source, debate_dir, name):
    result = run_tools("join", "--target", str(source), "--participant-name", name, debate_dir=debate_dir)
    assert (result.code, result.error["code"]) == (2, "INVALID_ARGUMENT")
    assert not debate_dir.exists()


@pytest.mark.parametrize(
    "args",
    [
        ("claim-lock", "--duel-id", "x"),  # missing --participant-id
        ("join", "--bogus"),
        ("join", "--target", "/x.md", "--participant-name", "A", "--max-turns", "many"),
        ("frobnicate",),
    ],
)
def test_wrong_flags_exit_2_with_an_envelope(debate_dir, args):
    result = run_tools(*args, debate_dir=debate_dir)
    assert (result.code, result.error["code"]) == (2, "INVALID_ARGUMENT")


def test_unknown_duel_and_participant_are_not_found(source, debate_dir):
    alice = joined(source, debate_dir, "Alice")
    assert run_tools("status", "--duel-id", "no-such-duel", debate_dir=debate_dir).error["code"] == "DUEL_NOT_FOUND"
    assert run_tools("status", "--duel-id", "../../etc", debate_dir=debate_dir).error["code"] == "DUEL_NOT_FOUND"
    result = run_tools("status", "--duel-id", alice["duel_id"], "--participant-id", "p-nobody", debate_dir=debate_dir)
    assert (result.code, result.error["code"]) == (1, "PARTICIPANT_NOT_FOUND")
    result = run_tools(
        "wait", "--duel-id", alice["duel_id"], "--participant-id", "p-nobody", "--timeout", "0", debate_dir=debate_dir
    )
    assert result.error["code"] == "PARTICIPANT_NOT_FOUND"


def test_status_of_a_dir_without_duels_is_not_found(tmp_path, source):
    result = run_tools("status", "--target", str(source), debate_dir=tmp_path / "empty")
    assert result.error["code"] == "DUEL_NOT_FOUND"
    assert not (tmp_path / "empty").exists()  # status changes nothing


def test_wrong_token_full_duel_and_taken_seat_are_refused(source, debate_dir):
    alice = joined(source, debate_dir, "Alice")
    joined(source, debate_dir, "Bob")
    claim = run_tools(
        "claim-lock",
        "--duel-id",
        alice["duel_id"],
        "--participant-id",
        alice["participant_id"],
        "--participant-token",
        "wrong",
        debate_dir=debate_dir,
    )
    assert (claim.code, claim.error["code"]) == (1, "PARTICIPANT_AUTH_FAILED")
    assert (
        run_tools("join", "--target", str(source), "--participant-name", "Carol", debate_dir=debate_dir).error["code"]
        == "DUEL_FULL"
    )
    assert (
        run_tools("join", "--target", str(source), "--participant-name", "Alice", debate_dir=debate_dir).error["code"]
        == "SEAT_TAKEN"
    )


def test_token_may_come_from_the_environment(source, debate_dir):
    alice = joined(source, debate_dir, "Alice")
    joined(source, debate_dir, "Bob")
    claim = run_tools(
        "claim-lock",
        "--duel-id",
        alice["duel_id"],
        "--participant-id",
        alice["participant_id"],
        debate_dir=debate_dir,
        env={"DUEL_PARTICIPANT_TOKEN": alice["participant_token"]},
    )
    assert claim.code == 0
    assert claim.data["acquired"]


def test_wait_and_status_authenticate_a_token_from_flag_or_environment(source, debate_dir):
    alice = joined(source, debate_dir, "Alice")
    joined(source, debate_dir, "Bob")
    ids = ("--duel-id", alice["duel_id"], "--participant-id", alice["participant_id"])
    wrong = run_tools("wait", *ids, "--timeout", "0", "--participant-token", "pt_wrong", debate_dir=debate_dir)
    assert (wrong.code, wrong.error["code"]) == (1, "PARTICIPANT_AUTH_FAILED")
    wrong = run_tools("status", *ids, debate_dir=debate_dir, env={"DUEL_PARTICIPANT_TOKEN": "pt_wrong"})
    assert (wrong.code, wrong.error["code"]) == (1, "PARTICIPANT_AUTH_FAILED")

    def seen() -> str:
        return run_tools("status", "--duel-id", alice["duel_id"], debate_dir=debate_dir).data["participants"][0][
            "last_seen_at"
        ]

    token = {"DUEL_PARTICIPANT_TOKEN": alice["participant_token"]}
    before = seen()
    time.sleep(SEEN_RESOLUTION_SECONDS)  # marks closer together than this are not written
    assert run_tools("wait", *ids, "--timeout", "0", debate_dir=debate_dir, env=token).code == 0
    after_wait = seen()
    time.sleep(SEEN_RESOLUTION_SECONDS)
    assert run_tools("status", *ids, "--participant-token", alice["participant_token"], debate_dir=debate_dir).code == 0
    assert before < after_wait < seen()
    # Without --participant-id a status stays read-only, even with the token in the environment.
    assert run_tools("status", "--duel-id", alice["duel_id"], debate_dir=debate_dir, env=token).code == 0
    assert (
        run_tools(
            "status",
            "--duel-id",
            alice["duel_id"],
            "--participant-token",
            alice["participant_token"],
            debate_dir=debate_dir,
        ).error["code"]
        == "INVALID_ARGUMENT"
    )


def test_refusal_is_an_answer_exit_0(source, debate_dir):
    alice = joined(source, debate_dir, "Alice")
    claim = run_tools(
        "claim-lock",
        "--duel-id",
        alice["duel_id"],
        "--participant-id",
        alice["participant_id"],
        "--participant-token",
        alice["participant_token"],
        debate_dir=debate_dir,
    )
    assert claim.code == 0
    assert claim.data["acquired"] is False
    assert claim.data["next_step"] == "wait_peer"


def test_expired_lease_is_lease_expired(source, debate_dir):
    alice = joined(source, debate_dir, "Alice", "--lease-seconds", "5")
    joined(source, debate_dir, "Bob")
    auth = (
        "--duel-id",
        alice["duel_id"],
        "--participant-id",
        alice["participant_id"],
        "--participant-token",
        alice["participant_token"],
    )
    lease = run_tools("claim-lock", *auth, debate_dir=debate_dir).data["lease_token"]
    time.sleep(5.1)
    refresh = run_tools("refresh-lock", *auth, "--lease-token", lease, debate_dir=debate_dir)
    assert refresh.code == 0
    assert refresh.data["refreshed"] is False
    release = run_tools("release-lock", *auth, "--lease-token", lease, debate_dir=debate_dir)
    assert (release.code, release.error["code"]) == (1, "LEASE_EXPIRED")


def test_claim_status_refresh_and_close_work_through_the_cli(source, debate_dir, tmp_path):
    alice = joined(source, debate_dir, "Alice", "--harness", "claude-code", "--model-id", "claude-x")
    bob = joined(source, debate_dir, "Bob", "--harness", "codex", "--model-id", "gpt-x")
    duel = alice["duel_id"]
    auth = (
        "--duel-id",
        duel,
        "--participant-id",
        alice["participant_id"],
        "--participant-token",
        alice["participant_token"],
    )
    claim = run_tools("claim-lock", *auth, debate_dir=debate_dir).data
    assert claim["acquired"]
    assert claim["next_step"] == "compose_turn"
    status = run_tools("status", "--duel-id", duel, "--participant-id", bob["participant_id"], debate_dir=debate_dir)
    assert claim["lease_token"] not in json.dumps(status.envelope)
    assert status.data["lock"]["owner_participant_id"] == alice["participant_id"]
    assert run_tools("refresh-lock", *auth, "--lease-token", claim["lease_token"], debate_dir=debate_dir).data[
        "refreshed"
    ]
    summary = tmp_path / "summary.md"
    summary.write_text("Stopped by the operator.\n")
    closed = run_tools(
        "release-lock",
        *auth,
        "--lease-token",
        claim["lease_token"],
        "--close",
        "--outcome",
        "INVALIDATED",
        "--reason",
        "operator stop",
        "--summary-file",
        str(summary),
        debate_dir=debate_dir,
    )
    assert closed.data["closed"]
    assert closed.data["outcome"] == "INVALIDATED"
    assert "Stopped by the operator." in Path(alice["debate_path"]).read_text()
    again = run_tools("claim-lock", *auth, debate_dir=debate_dir)
    assert again.error["code"] == "DUEL_CLOSED"


def test_debate_dir_comes_from_duel_dir_in_the_environment(source, tmp_path):
    env_dir = tmp_path / "from-env"
    result = run_tools("join", "--target", str(source), "--participant-name", "A", env={"DUEL_DIR": str(env_dir)})
    assert Path(result.data["debate_path"]).parent == env_dir


# Each would cost `duel tools status` more than the rest of the command (bench/bench_startup.py):
# the lock is fcntl.flock, called directly, and the JSON front is argparse.
HEAVY = {"filelock", "typer", "click", "anthropic", "openai", "mistune", "pydantic", "rich", "psycopg", "frontmatter"}


@pytest.mark.parametrize("as_seat", [False, True], ids=["plain", "as-a-seat"])
def test_status_imports_no_lock_package_cli_framework_model_sdk_or_markdown_parser(source, debate_dir, as_seat):
    """Agents poll it, one process a poll: what it imports is most of what they wait for."""
    alice = joined(source, debate_dir, "Alice")
    seat = ["--participant-id", alice["participant_id"], f"--participant-token={alice['participant_token']}"]
    status = ["tools", "status", "--duel-id", alice["duel_id"], "--debate-dir", str(debate_dir)]
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "rp1_duel", *status, *(seat if as_seat else [])],
        capture_output=True,
        text=True,
        env={**os.environ},
    )
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["success"]
    assert "rp1_duel.coordination.service" in imported  # what the process imported is listed
    assert not {name.split(".")[0] for name in imported} & HEAVY
    # A duel that logged no usage: no event type is built, nor the answers of the ops that write.
    loaded_for_writes = {
        "rp1_duel.coordination.events",
        "rp1_duel.coordination._event_core",
        "rp1_duel.coordination._claim_result",
    }
    assert not imported & (loaded_for_writes | {"rp1_duel.turns.markdown", "rp1_duel.record.history", "subprocess"})
    assert not imported & {"threading", "secrets", "shutil", "datetime"}  # each costs every poll a millisecond or so


# Run as `duel tools` runs, then list the frozen dataclasses of every rp1_duel module the process loaded.
_FROZEN_DATACLASSES_OF_A_STATUS = """
import sys
from rp1_duel.cli.tools import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(sorted(
    f"{module.__name__}.{name}"
    for module in list(sys.modules.values()) if module.__name__.startswith("rp1_duel")
    for name, kind in vars(module).items()
    if isinstance(kind, type) and kind.__module__ == module.__name__
    and getattr(getattr(kind, "__dataclass_params__", None), "frozen", False)
))
"""


def test_status_builds_no_frozen_dataclass_but_the_schedule_and_usage(source, debate_dir):
    """A frozen dataclass costs start-up about a millisecond to build, five times a NamedTuple: the
    modules a polled status loads build none but these two (one built by keyword, one summed)."""
    alice = joined(source, debate_dir, "Alice")
    seat = ["--participant-id", alice["participant_id"], f"--participant-token={alice['participant_token']}"]
    status = ["status", "--duel-id", alice["duel_id"], "--debate-dir", str(debate_dir), *seat]
    proc = subprocess.run(
        [sys.executable, "-c", _FROZEN_DATACLASSES_OF_A_STATUS, *status], capture_output=True, text=True, check=True
    )
    assert json.loads(proc.stdout.splitlines()[0])["success"]
    assert proc.stdout.splitlines()[-1] == str(["rp1_duel.coordination.counts.Usage", "rp1_duel.schedule.Schedule"])


def test_status_shows_each_participants_usage_and_cost_summed_from_its_usage_events(source, debate_dir):
    service = DuelService(debate_dir)
    alice = join(service, source, "Alice", model_id="claude-sonnet-5-5")
    bob = join(service, source, "Bob", model_id="local-model")
    turn = Usage(input_tokens=1000, output_tokens=2000, cache_read_tokens=3000, requests=2, retries=1, seconds=4.0)
    service.record_usage(alice.seat, 1, turn)
    service.record_usage(alice.seat, 3, turn)

    usage = run_tools("status", "--duel-id", alice.seat.duel_id, debate_dir=debate_dir).data["usage"]

    mine = usage[alice.seat.participant_id]
    assert (mine["output_tokens"], mine["requests"], mine["retries"], mine["seconds"]) == (4000, 4, 2, 8.0)
    assert mine["cost_usd"] == pytest.approx(2 * (1000 * 2 + 2000 * 10 + 3000 * 0.2) / 1e6)
    assert usage[bob.seat.participant_id]["requests"] == 0
    assert usage[bob.seat.participant_id]["cost_usd"] is None  # no price for a local model
    with pytest.raises(DuelError) as refused:
        service.record_usage(Seat(alice.seat.duel_id, alice.seat.participant_id, "wrong"), 1, turn)
    assert refused.value.code == "PARTICIPANT_AUTH_FAILED"


NICENESS_AT_EXIT = (
    "import atexit, os, runpy, sys; atexit.register(lambda: print('niceness', os.nice(0), file=sys.stderr)); "
    "sys.argv = ['duel', *sys.argv[1:]]; runpy.run_module('rp1_duel', run_name='__main__')"
)


@pytest.mark.skipif(not hasattr(os, "nice"), reason="POSIX only")
def test_a_wait_lowers_its_cpu_priority_and_other_commands_keep_theirs(source, debate_dir):
    alice = joined(source, debate_dir, "Alice")
    ids = ("--duel-id", alice["duel_id"], "--participant-id", alice["participant_id"])

    def niceness(*args: str) -> int:
        argv = [sys.executable, "-c", NICENESS_AT_EXIT, "tools", *args, *ids, "--debate-dir", str(debate_dir)]
        ran = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
        return int(ran.stderr.split("niceness")[-1])

    mine = os.nice(0)
    if mine >= 19:
        pytest.skip("this process runs at the lowest priority already")
    assert niceness("wait", "--timeout", "0") == 19  # the lowest
    assert niceness("status") == mine


def test_a_wait_run_in_a_callers_own_process_leaves_its_priority(source, debate_dir, monkeypatch):
    """Only the `duel tools wait` process lowers itself: a program (a test suite) that runs the op in
    its own process would otherwise run at the lowest priority from then on."""
    from rp1_duel.cli import tools, tools_parser

    alice = joined(source, debate_dir, "Alice")
    ids = ["--duel-id", alice["duel_id"], "--participant-id", alice["participant_id"]]
    args = tools_parser.parse(["wait", *ids, "--timeout", "0", "--debate-dir", str(debate_dir)])
    monkeypatch.setenv("DUEL_PARTICIPANT_TOKEN", alice["participant_token"])
    before = os.nice(0)
    assert tools.run("wait", args)["next_step"] == "wait_peer"
    assert os.nice(0) == before
