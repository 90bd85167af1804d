"""`duel join` end to end: real processes, the real SDKs, fake model servers on 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rp1_duel.coordination import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.participant.console import ConsoleReporter
from rp1_duel.participant.loop import Duelist, ParticipantConfig
from rp1_duel.participant.providers.scripted import ScriptedProvider
from rp1_duel.record import FrontMatter, RecordFile, parse, validate_file
from rp1_duel.settings import DuelSettings

from fake_debater import REVISED, WRAPPINGS, debater, hopeless, reviser, sloppy_then_fixed, wrapped
from fake_models import FakeAnthropicServer, FakeOpenAIServer
from helpers import claim, join, lines_no_edit_wrote, make_turn, stop

# Every test runs `duel join` (or `duel demo`) as real processes: seconds each.
pytestmark = pytest.mark.slow

TESTS = Path(__file__).parents[1]


def clean_env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "DUEL_")) and k not in ("EDITOR", "VISUAL")
    }
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def claude_env(server: FakeAnthropicServer) -> dict[str, str]:
    return clean_env(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=server.base_url)


def gpt_env(server: FakeOpenAIServer) -> dict[str, str]:
    return clean_env(OPENAI_API_KEY="test-key", OPENAI_BASE_URL=server.base_url)


def start(
    source: Path,
    debate_dir: Path,
    *args: str,
    env: dict[str, str],
    stdin=subprocess.DEVNULL,
    sigint_ignored=False,
    as_json=True,
):
    argv = [
        sys.executable,
        "-m",
        "rp1_duel",
        "join",
        "--target",
        str(source),
        "--debate-dir",
        str(debate_dir),
        *(["--json"] if as_json else []),
        *args,
    ]
    if sigint_ignored:  # as `cmd &` in a script starts it: the process inherits SIGINT ignored
        argv = ["sh", "-c", 'trap "" INT; exec "$@"', "sh", *argv]
    return subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def finish(process: subprocess.Popen, timeout: float = 90) -> tuple[int, dict, str]:
    out, err = process.communicate(timeout=timeout)
    assert "Traceback" not in err, err
    return process.returncode, json.loads(out.strip().splitlines()[-1]), err


def wait_for_seat(debate_dir: Path, source: Path, count: int = 1, limit: float = 20) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        with contextlib.suppress(DuelError):  # the duel may not exist yet
            if DuelService(debate_dir).status(target=str(source)).participant_count >= count:
                return
        time.sleep(0.02)
    raise AssertionError("no participant joined")


def test_claude_and_gpt_finish_a_duel(source, debate_dir, anthropic_server, openai_server):
    anthropic_server.responder = openai_server.responder = debater
    claude = start(source, debate_dir, "--model", "claude-x", "--max-turns", "4", env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    gpt = start(source, debate_dir, "--model", "gpt-x", env=gpt_env(openai_server))
    (code_c, result_c, err_c), (code_g, result_g, _) = finish(claude), finish(gpt)
    assert (code_c, code_g) == (0, 0), err_c
    assert result_c["outcome"] == result_g["outcome"] == "ACCEPTED_CONSENSUS"
    assert result_c["success"] is result_g["success"] is True  # as a failure's false
    assert (result_c["revision"], result_c["patch"]) == (None, None)  # the duel agreed to change nothing
    assert (result_c["seat"], result_c["turns_written"], result_g["turns_written"]) == (1, [1, 3], [2, 4])
    assert "turn 1 accepted (OPEN_TO_DEBATE)" in err_c
    assert "ACCEPTED_CONSENSUS" in err_c
    assert validate_file(result_c["debate_path"]).valid
    # The wire: Anthropic's stable prefix is marked for caching; OpenAI's requests carry the duel id.
    claude_body = anthropic_server.requests[0]["body"]
    assert claude_body["model"] == "claude-x"
    assert claude_body["stream"] is True
    assert claude_body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert all(r["body"]["prompt_cache_key"] == result_g["duel_id"] for r in openai_server.requests)
    text = Path(result_c["debate_path"]).read_text()
    assert "Claude (duel / claude-x)" in text
    assert "GPT (duel / gpt-x)" in text


def test_claude_and_gpt_propose_amend_and_accept_a_revision_that_git_applies(
    source, debate_dir, anthropic_server, openai_server
):
    anthropic_server.responder = openai_server.responder = reviser
    args = ("--model", "claude-x", "--max-turns", "4", "--persona", "skeptic")
    claude = start(source, debate_dir, *args, env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    gpt = start(source, debate_dir, "--model", "gpt-x", env=gpt_env(openai_server))
    (code_c, result_c, err_c), (code_g, result_g, _) = finish(claude), finish(gpt)
    assert (code_c, code_g) == (0, 0), err_c
    assert result_c["outcome"] == result_g["outcome"] == "ACCEPTED_CONSENSUS"
    assert "REVISION_MISSING" in err_c  # turn 3 edited and accepted at once: the rejection named the new id
    artifact = Path(result_c["debate_path"])
    patch = artifact.with_name(f"{result_c['duel_id']}.revision.patch")
    conclusion = artifact.read_text().split("## Terminal Conclusion")[1]
    assert "| Document changes | `design.md` +2 -2 lines" in conclusion
    assert "| Accepted by | Claude, GPT |" in conclusion
    front = FrontMatter.parse(parse(artifact.read_text()).front_matter)
    assert [(p.display_name, p.persona) for p in front.participants] == [("Claude", "skeptic"), ("GPT", None)]
    assert validate_file(artifact).valid
    applied = subprocess.run(
        ["git", "apply", str(patch)], cwd=source.parent, capture_output=True, text=True, check=False
    )
    assert applied.returncode == 0, applied.stderr
    revised = source.read_text()
    assert REVISED in revised and "its turn is not written." in revised


def test_duel_join_ends_saying_the_agreed_revision_its_patch_and_how_to_apply_it(
    source, debate_dir, anthropic_server, openai_server
):
    anthropic_server.responder = openai_server.responder = reviser
    claude = start(source, debate_dir, "--model", "claude-x", "--max-turns", "4", env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    gpt = start(source, debate_dir, "--model", "gpt-x", env=gpt_env(openai_server), as_json=False)
    code_c, result_c, err_c = finish(claude)
    _, err_g = gpt.communicate(timeout=90)
    assert (code_c, gpt.returncode) == (0, 0), err_g
    artifact = result_c["debate_path"]
    patch = str(Path(artifact).with_name(f"{result_c['duel_id']}.revision.patch"))
    revision = RecordFile.read(artifact).history().revision
    assert revision is not None
    assert (result_c["revision"], result_c["patch"]) == (revision.id, patch)
    assert "[Claude] revision: " not in err_c  # with --json the object says it: a panel's seats run so
    lines = err_g.splitlines()  # without, a person reads it after the outcome
    ended = next(i for i, line in enumerate(lines) if line.startswith("[GPT] completed: ACCEPTED_CONSENSUS"))
    assert lines[ended + 1 : ended + 4] == [
        f"[GPT] revision: {revision.id}",
        f"[GPT] patch: {patch}",
        f"[GPT] apply it: duel apply {artifact}",
    ]


def test_wrapped_answers_are_extracted_without_a_repair_round_trip(source, debate_dir, anthropic_server, openai_server):
    anthropic_server.responder = openai_server.responder = wrapped
    claude = start(source, debate_dir, "--model", "claude-x", "--max-turns", "4", env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    gpt = start(source, debate_dir, "--model", "gpt-x", env=gpt_env(openai_server))
    (code_c, result_c, err_c), (code_g, result_g, _) = finish(claude), finish(gpt)
    assert (code_c, code_g) == (0, 0), err_c
    assert result_c["outcome"] == "ACCEPTED_CONSENSUS"
    assert (result_c["turns_written"], result_g["turns_written"]) == ([1, 3], [2, 4])
    # One request per turn: no wrapper cost a repair.
    assert (len(anthropic_server.requests), len(openai_server.requests)) == (2, 2)
    assert "turn 1: removed fence around the answer" in err_c
    log = (debate_dir / ".duel" / "duels" / result_c["duel_id"] / "events.jsonl").read_text().splitlines()
    appended = [json.loads(line)["data"] for line in log if '"type": "turn_appended"' in line]
    assert [event["stripped"] for event in appended] == [WRAPPINGS[n][1] for n in (1, 2, 3, 4)]
    assert validate_file(result_c["debate_path"]).valid
    text = Path(result_c["debate_path"]).read_text()
    assert "```" not in text and "<think>" not in text and "Let me know" not in text and "Here is my" not in text


def scripted_peer(
    source: Path,
    debate_dir: Path,
    tmp_path: Path,
    turns: list[int],
    max_turns: int = 4,
    stance=lambda n, limit: "ACCEPTING_CONSENSUS" if n >= limit - 1 else "OPEN_TO_DEBATE",
    **kw,
):
    """A peer that plays pre-written turns (valid against helpers.SOURCE) as Bob."""
    folder = tmp_path / "bob"
    folder.mkdir(exist_ok=True)
    for index, n in enumerate(turns):
        (folder / f"{index:02d}.md").write_text(make_turn(n, "Bob", "duel", "scripted:bob", stance(n, max_turns)))
    return start(source, debate_dir, "--model", f"scripted:{folder}", "--name", "Bob", env=clean_env(), **kw)


def test_an_invalid_draft_is_repaired_from_its_violations(source, debate_dir, anthropic_server, tmp_path):
    anthropic_server.responder = sloppy_then_fixed
    claude = start(source, debate_dir, "--model", "claude-x", "--max-turns", "2", env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    peer = scripted_peer(source, debate_dir, tmp_path, [2], max_turns=2)
    code, result, err = finish(claude)
    assert code == 0, err
    assert result["turns_written"] == [1], err
    assert "draft 1 rejected: UNRESOLVED_TAG" in err
    assert len(anthropic_server.requests) == 2
    repair = anthropic_server.requests[1]["body"]["messages"][-1]["content"][-1]["text"]
    assert "Violations:" in repair
    assert "UNRESOLVED_TAG" in repair
    assert finish(peer)[0] == 0


def test_a_participant_that_fails_three_repairs_invalidates_the_duel(source, debate_dir, anthropic_server, tmp_path):
    anthropic_server.responder = hopeless
    claude = start(source, debate_dir, "--model", "claude-x", env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    peer = scripted_peer(source, debate_dir, tmp_path, [2])
    code, result, err = finish(claude)
    assert code == 1, err
    assert result["outcome"] == "INVALIDATED"
    assert (result["state"], result["success"]) == ("invalidated", False)
    assert len(anthropic_server.requests) == 4  # the draft and three repairs
    assert "could not write a valid turn 1 after 3 repairs (UNRESOLVED_TAG)" in Path(result["debate_path"]).read_text()
    code, result, err = finish(peer)
    assert (code, result["outcome"]) == (1, "INVALIDATED")
    # The peer says why it exits 1, as its last line.
    assert err.strip().splitlines()[-1] == (
        "duel: INVALIDATED: Claude could not write a valid turn 1 after 3 repairs (UNRESOLVED_TAG)"
    )


def test_slow_model_keeps_its_lease_by_refreshing(source, debate_dir, anthropic_server, tmp_path):
    anthropic_server.responder = debater
    anthropic_server.delay_per_chunk = 0.04  # ~170 words: about 7 s, longer than the 5 s lease
    claude = start(
        source,
        debate_dir,
        "--model",
        "claude-x",
        "--max-turns",
        "2",
        "--lease-seconds",
        "5",
        env=claude_env(anthropic_server),
    )
    wait_for_seat(debate_dir, source)
    peer = scripted_peer(source, debate_dir, tmp_path, [2], max_turns=2)
    code, result, err = finish(claude)
    assert code == 0, err
    assert result["turns_written"] == [1], err
    log = (debate_dir / ".duel" / "duels" / result["duel_id"] / "events.jsonl").read_text()
    assert log.count('"type": "lock_refreshed"') >= 2
    assert finish(peer)[0] == 0


def claude_mid_turn(source, debate_dir, server, tmp_path, args, *, sigint_ignored=False):
    """A slow Claude (seat 1) and a scripted peer, returned once Claude's model is writing turn 1."""
    server.responder = debater
    server.delay_per_chunk = 0.05
    claude = start(source, debate_dir, *args, env=claude_env(server), sigint_ignored=sigint_ignored)
    wait_for_seat(debate_dir, source)
    peer = scripted_peer(source, debate_dir, tmp_path, [2], max_turns=2)
    deadline = time.monotonic() + 20
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    return claude, peer


def test_killed_participant_resumes_with_the_same_command(source, debate_dir, anthropic_server, tmp_path):
    args = ("--model", "claude-x", "--max-turns", "2", "--lease-seconds", "5")
    claude, peer = claude_mid_turn(source, debate_dir, anthropic_server, tmp_path, args)
    time.sleep(0.5)  # mid-stream, holding the lease
    os.kill(claude.pid, signal.SIGKILL)
    stop(claude)
    before = DuelService(debate_dir).status(target=str(source))
    assert before.turn_count == 0
    assert before.participant_count == 2
    anthropic_server.delay_per_chunk = 0
    again = start(source, debate_dir, *args, env=claude_env(anthropic_server))
    code, result, err = finish(again)
    assert code == 0, err
    assert result["turns_written"] == [1], err
    assert result["participant_id"] == before.participants[0].id  # the same seat, resumed
    assert finish(peer)[1]["outcome"] == "ACCEPTED_CONSENSUS"


def test_peer_that_never_comes_ends_in_timeout(source, debate_dir, tmp_path):
    script = tmp_path / "ada"
    script.mkdir()
    (script / "1.md").write_text("never played")
    lonely = start(
        source,
        debate_dir,
        "--model",
        f"scripted:{script}",
        "--name",
        "Ada",
        "--peer-wait-seconds",
        "1",
        env=clean_env(),
    )
    code, result, err = finish(lonely, timeout=30)
    assert code == 0, err
    assert result["outcome"] == "TIMEOUT", err
    assert "| Outcome | TIMEOUT |" in Path(result["debate_path"]).read_text()


def test_peer_that_never_answers_ends_in_timeout(source, debate_dir, tmp_path):
    # Bob joins second and answers turn 1 only; Ada's script has no turn for turn 3.
    ada = tmp_path / "ada"
    ada.mkdir()
    (ada / "1.md").write_text(make_turn(1, "Ada", "duel", "scripted:ada"))
    first = start(
        source,
        debate_dir,
        "--model",
        f"scripted:{ada}",
        "--name",
        "Ada",
        "--max-turns",
        "6",
        "--turn-timeout-seconds",
        "2",
        env=clean_env(),
    )
    wait_for_seat(debate_dir, source)
    peer = scripted_peer(source, debate_dir, tmp_path, [2])
    code, result, err = finish(first)
    assert code == 1, err
    assert "SCRIPT_EXHAUSTED" in err  # Ada cannot write turn 3: her process stops
    code, result, err = finish(peer, timeout=30)
    assert code == 0, err
    assert result["outcome"] == "TIMEOUT", err


def test_a_waiting_participant_keeps_its_seat_while_the_peer_writes_longer_than_a_lease(source, debate_dir, tmp_path):
    """`duel join` waits with its token: nobody can take its seat during a long peer turn."""
    service = DuelService(debate_dir)
    alice = join(service, source, "Alice", settings=DuelSettings(lease_seconds=5))
    script = tmp_path / "bob"
    script.mkdir()
    (script / "1.md").write_text("never played")
    bob = start(source, debate_dir, "--model", f"scripted:{script}", "--name", "Bob", env=clean_env())
    wait_for_seat(debate_dir, source, count=2)
    lease = claim(service, alice)
    writing_until = time.monotonic() + 8  # Alice's turn: longer than a lease, refreshed as she writes
    while time.monotonic() < writing_until:
        time.sleep(1)
        assert service.refresh_lock(alice.seat, lease).refreshed
    with pytest.raises(DuelError) as taken:
        service.join(target=str(source), participant_name="Bob", harness="duel", model_id="scripted:bob")
    assert taken.value.code == "SEAT_TAKEN"
    service.release_lock(alice.seat, lease, close=True, outcome="INVALIDATED", reason="the test is over")
    code, result, err = finish(bob)
    assert (code, result["outcome"]) == (1, "INVALIDATED"), err  # his token kept working to the end


def test_join_without_key_or_model_fails_in_one_line_naming_every_way_out(source, debate_dir):
    proc = subprocess.run(
        [sys.executable, "-m", "rp1_duel", "join", "--target", str(source)],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=source.parent,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    for option in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "--base-url", "--model human", "--model scripted:DIR"):
        assert option in proc.stderr
    assert not (source.parent / "debates").exists()


def test_a_person_at_a_terminal_writes_the_turn_in_the_editor_without_its_notes(source, debate_dir, tmp_path):
    editor = tmp_path / "fake-editor.py"
    editor.write_text(
        "import re, sys\n"
        "from helpers import make_turn\n"
        "path = sys.argv[1]\n"
        "text = open(path).read()\n"
        "n, name, harness, model = re.search(r'^## Turn (\\d+) — (.+?) \\((.+?) / (.+?)\\) — STANCE$', text, re.M).groups()\n"
        "open(path, 'w').write('%% notes stay out\\n' + make_turn(int(n), name, harness, model, 'ACCEPTING_CONSENSUS'))\n"
    )
    main_fd, terminal_fd = pty.openpty()  # a real terminal, so the editor path is taken
    threading.Thread(target=lambda: _drain(main_fd), daemon=True).start()
    person = start(
        source,
        debate_dir,
        "--model",
        "human",
        "--name",
        "Hana",
        "--max-turns",
        "2",
        env=clean_env(EDITOR=f"{sys.executable} {editor}"),
        stdin=terminal_fd,
    )
    os.close(terminal_fd)
    wait_for_seat(debate_dir, source)
    peer = scripted_peer(source, debate_dir, tmp_path, [2], max_turns=2)
    code, result, err = finish(person)
    assert code == 0, err
    assert result["outcome"] == "ACCEPTED_CONSENSUS", err
    text = Path(result["debate_path"]).read_text()
    assert "## Turn 1 — Hana (duel / human) — ACCEPTING_CONSENSUS" in text
    assert "notes stay out" not in text
    assert finish(peer)[0] == 0


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 1024):
            pass
    except OSError:
        pass


def test_demo_finishes_a_valid_duel_in_a_fresh_directory(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "rp1_duel", "demo", "--dir", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean_env(),
    )
    assert proc.returncode == 0, proc.stderr
    assert "outcome:  ACCEPTED_CONSENSUS" in proc.stderr
    assert "duel validate: valid" in proc.stderr
    artifacts = list((tmp_path / "demo" / "debates").glob("*.md"))
    assert len(artifacts) == 1
    assert validate_file(artifacts[0]).valid
    assert "scripted" in proc.stderr
    [review] = [line.split(":", 1)[1].split() for line in proc.stderr.splitlines() if line.startswith("review:")]
    assert review[:2] == ["duel", "report"]  # the command it suggests works as printed
    subprocess.run([sys.executable, "-m", "rp1_duel", *review[1:]], cwd=tmp_path, check=True, env=clean_env())
    assert "ACCEPTED_CONSENSUS" in (tmp_path / "report.html").read_text(encoding="utf-8")
    said = [line for line in proc.stderr.splitlines() if "revision: r-" in line or "duel apply " in line]
    assert [line.split(":", 1)[0] for line in said] == ["revision", "apply it"]  # once, in the summary; no seat's


def test_the_demos_agreed_patch_adds_only_lines_of_edits_in_force_and_says_what_the_debate_argued(tmp_path):
    """Issue 38, item 7: the demo's agreed patch said "removed a day later" where the debate said "after the
    longest job timeout", a detail no turn argued."""
    proc = subprocess.run(
        [sys.executable, "-m", "rp1_duel", "demo", "--dir", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean_env(),
    )
    assert proc.returncode == 0, proc.stderr
    [artifact] = (tmp_path / "demo" / "debates").glob("*.md")
    record = RecordFile.read(artifact)
    history = record.history()
    revision = history.revision
    assert revision is not None and revision.edits and not revision.problems
    accepting = {  # the edits the turns that accepted proposed (the latest of each name)
        edit.name: edit
        for number in history.numbers
        if history.turn(number).stance == "ACCEPTING_CONSENSUS"
        for edit in history.turn(number).edits.edits
    }
    assert dict(revision.edits) == accepting
    [patch_file] = artifact.parent.glob("*.revision.patch")
    patch = patch_file.read_text(encoding="utf-8")
    assert patch == revision.patch("build-cache.md")
    assert lines_no_edit_wrote(revision, patch) == []
    argued = "after the longest job timeout"
    assert argued in artifact.read_text(encoding="utf-8").split("**Proposed Edits**")[0]
    added = "\n".join(line for line in patch.splitlines() if line.startswith("+"))
    assert "longest job timeout" in added and "a day later" not in added


@pytest.mark.parametrize(
    ("stop_signal", "sigint_ignored"),
    [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGHUP, False), (signal.SIGINT, True)],
    ids=["ctrl-c", "sigterm", "sighup", "ctrl-c-started-ignored"],
)
def test_ctrl_c_sigterm_and_sighup_release_the_floor_and_keep_the_seat(
    source, debate_dir, anthropic_server, tmp_path, stop_signal, sigint_ignored
):
    args = ("--model", "claude-x", "--max-turns", "2")
    claude, peer = claude_mid_turn(source, debate_dir, anthropic_server, tmp_path, args, sigint_ignored=sigint_ignored)
    os.kill(claude.pid, stop_signal)
    _out, err = claude.communicate(timeout=30)
    assert claude.returncode == 130, err
    assert "run the same command to resume" in err
    assert "Traceback" not in err
    status = DuelService(debate_dir).status(target=str(source))
    assert status.lock.owner_participant_id is None
    assert status.turn_count == 0
    anthropic_server.delay_per_chunk = 0
    code, result, err = finish(start(source, debate_dir, *args, env=claude_env(anthropic_server)))
    assert code == 0, err
    assert result["participant_id"] == status.participants[0].id, err
    assert finish(peer)[1]["outcome"] == "ACCEPTED_CONSENSUS"


def test_a_reader_that_closes_the_output_stops_the_seat_with_the_floor_given_back(source, debate_dir, tmp_path):
    """Issue 38, item 7: `duel join … 2>&1 | head` (or `| less`, then q) killed the seat holding the floor."""
    script = tmp_path / "alice"
    script.mkdir()
    (script / "1.md").write_text(make_turn(1, "Alice", "duel", "scripted:alice"))
    argv = [sys.executable, "-m", "rp1_duel", "join", "--target", str(source), "--debate-dir", str(debate_dir)]
    alice = subprocess.Popen(
        [*argv, "--model", f"scripted:{script}", "--name", "Alice"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=clean_env(),
    )
    assert alice.stdout is not None
    while "waiting for a peer" not in (line := alice.stdout.readline()):
        assert line, "duel join ended before it waited for its peer"
    alice.stdout.close()  # the reader goes away; the next line is written once Alice holds the floor
    service = DuelService(debate_dir)
    bob = join(service, source, "Bob", topic="Lease design", harness="duel", model_id="scripted:bob")
    assert alice.wait(timeout=30) == 141  # as a closed pipe ends any tool, no traceback to a closed stream
    log = (debate_dir / ".duel" / "duels" / bob.duel_id / "events.jsonl").read_text()
    assert '"type": "lock_acquired"' in log  # Alice held the floor when she found her output closed
    assert service.status(bob.duel_id).lock.owner_participant_id is None
    refused = service.claim_lock(bob.seat)  # only the turn order stops the peer now, no lease left held
    assert (refused.reason, refused.owner_participant_id) == ("not_your_turn", None)
    rerun = subprocess.Popen(
        [*argv, "--model", f"scripted:{script}", "--name", "Alice"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )  # the seat was kept: the same command resumes it and writes turn 1 at once
    assert rerun.stderr is not None
    while "turn 1 accepted" not in (line := rerun.stderr.readline()):
        assert line, "the rerun ended before it wrote turn 1"
    stop(rerun)
    assert service.status(bob.duel_id).turn_count == 1


def test_a_rerun_after_its_duel_closed_says_the_earlier_outcome_before_a_new_duel_waits(source, debate_dir, tmp_path):
    """Issue 38, item 7: running the same `duel join` again after its duel closed silently started a new one."""
    scripts = {"Alice": (1, "OPEN_TO_DEBATE"), "Bob": (2, "ACCEPTING_CONSENSUS")}
    argv = {}
    for name, (number, stance) in scripts.items():
        folder = tmp_path / name.lower()
        folder.mkdir()
        (folder / "1.md").write_text(make_turn(number, name, "duel", f"scripted:{name.lower()}", stance))
        argv[name] = ("--model", f"scripted:{folder}", "--name", name, "--max-turns", "2")
    alice = start(source, debate_dir, *argv["Alice"], env=clean_env())
    wait_for_seat(debate_dir, source)
    bob = start(source, debate_dir, *argv["Bob"], env=clean_env())
    (code, first, err), _ = finish(alice), finish(bob)
    assert (code, first["outcome"]) == (0, "MAX_TURNS"), err
    rerun = start(source, debate_dir, *argv["Alice"], env=clean_env())
    assert rerun.stderr is not None
    lines = []
    while "waiting for a peer" not in (line := rerun.stderr.readline()):
        assert line, "the rerun ended before it waited"
        lines.append(line.rstrip("\n"))
    stop(rerun)
    new_duel = f"{first['duel_id']}-2"
    said = (
        f"[Alice] preparing: the earlier duel {first['duel_id']} on this document and topic closed MAX_TURNS "
        f"({first['debate_path']}); this run starts a new duel"
    )
    assert lines[-2:] == [said, f"[Alice] preparing: seat 1 of duel {new_duel} → {debate_dir / new_duel}.md"]


def test_ctrl_c_that_cuts_a_claim_short_still_releases_the_lease_it_granted(service, source, pair, tmp_path):
    # Ctrl-C between the service granting the lease and the claim returning: this process never
    # saw the lease, and must still give the floor back rather than hold it until it expires.
    alice, _ = pair
    script = tmp_path / "alice"
    script.mkdir()
    (script / "1.md").write_text(make_turn(1, "Alice", "claude-code", "scripted:alice"))
    config = ParticipantConfig(
        target=str(source), debate_dir=str(service.debate.root), name="Alice", harness="claude-code"
    )
    duelist = Duelist(config, ScriptedProvider(script), ConsoleReporter("Alice", quiet=True), service=service)
    duelist.seat = alice.seat
    assert service.claim_lock(alice.seat).lease is not None  # granted; the participant's answer is lost
    assert service.status(alice.duel_id).lock.owner_participant_id == alice.seat.participant_id

    duelist.interrupt()

    assert service.status(alice.duel_id).lock.owner_participant_id is None
    duelist.interrupt()  # nothing held: nothing is claimed, nothing changes
    assert service.status(alice.duel_id).lock.owner_participant_id is None


# -- issue 9, findings 3 and 5: a mistyped model or a bad key costs the peer nothing, a seat whose
# model failed before its first turn is taken over by the corrected run, and a model that never
# finishes cannot hold the duel past the turn deadline.


@pytest.fixture
def joined():
    """Starts `duel join` processes; any still running when the test ends (a failure) is killed."""
    processes: list[subprocess.Popen] = []

    def run(source: Path, debate_dir: Path, *args: str, env: dict[str, str]) -> subprocess.Popen:
        processes.append(start(source, debate_dir, *args, env=env))
        return processes[-1]

    yield run
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.communicate()


def bob_first(joined, source: Path, debate_dir: Path, tmp_path: Path):
    """Bob, scripted, takes seat 1 of a two-turn duel and writes turn 1."""
    folder = tmp_path / "bob"
    folder.mkdir()
    (folder / "1.md").write_text(make_turn(1, "Bob", "duel", "scripted:bob", "ACCEPTING_CONSENSUS"))
    bob = joined(
        source, debate_dir, "--model", f"scripted:{folder}", "--name", "Bob", "--max-turns", "2", env=clean_env()
    )
    wait_for_seat(debate_dir, source)
    return bob


def seated_models(debate_dir: Path, source: Path) -> list[str]:
    return [p.model_id for p in DuelService(debate_dir).status(target=str(source)).participants]


@pytest.mark.parametrize(
    ("fault", "model", "code", "says"),
    [
        ("mistyped model", "claude-xx", "PROVIDER_MODEL_NOT_FOUND", "no model 'claude-xx' (did you mean claude-x?)"),
        ("bad key", "claude-x", "PROVIDER_AUTH", "HTTP 401"),
    ],
)
def test_a_mistyped_model_or_a_bad_key_is_refused_before_joining(
    joined, source, debate_dir, tmp_path, fault, model, code, says
):
    server = FakeAnthropicServer(
        responder=debater, models=["claude-x"], fail_status=401 if fault == "bad key" else None
    )
    with server:
        bob = bob_first(joined, source, debate_dir, tmp_path)
        refused, out, err = finish(joined(source, debate_dir, "--model", model, env=claude_env(server)), timeout=60)
        assert refused == 1, err
        assert (out["error"]["code"], says in out["error"]["message"]) == (code, True), out
        assert seated_models(debate_dir, source) == ["scripted:bob"]  # the peer sees no second participant
        assert server.lookups[0] == f"/v1/models/{model}"
        assert server.requests == []  # no model request: nothing was composed
        server.fail_status = None
        code_c, result, err = finish(joined(source, debate_dir, "--model", "claude-x", env=claude_env(server)))
        assert (code_c, result["outcome"], result["turns_written"]) == (0, "ACCEPTED_CONSENSUS", [2]), err
        assert finish(bob)[0] == 0


def test_a_seat_whose_model_failed_before_its_first_turn_is_taken_over_by_the_corrected_run(
    joined, source, debate_dir, tmp_path
):
    # A server that cannot look models up: the typo passes preflight and fails at the turn, after the join.
    with FakeAnthropicServer(responder=debater, models=["claude-x"], lookup="none") as server:
        bob = bob_first(joined, source, debate_dir, tmp_path)
        failed, out, err = finish(joined(source, debate_dir, "--model", "claude-xx", env=claude_env(server)))
        assert (failed, out["error"]["code"]) == (1, "PROVIDER_REJECTED"), err
        assert "claude-xx not checked" in err
        assert seated_models(debate_dir, source) == ["scripted:bob", "claude-xx"]
        code_c, result, err = finish(joined(source, debate_dir, "--model", "claude-x", env=claude_env(server)))
        assert (code_c, result["outcome"], result["turns_written"]) == (0, "ACCEPTED_CONSENSUS", [2]), err
        assert seated_models(debate_dir, source) == ["scripted:bob", "claude-x"]
        assert finish(bob)[0] == 0
    text = Path(result["debate_path"]).read_text()
    assert "## Turn 2 — Claude (duel / claude-x)" in text
    assert validate_file(result["debate_path"]).valid


def test_a_model_that_never_finishes_cannot_hold_the_duel_past_the_turn_deadline(
    joined, source, debate_dir, tmp_path, anthropic_server
):
    anthropic_server.responder = debater
    anthropic_server.delay_per_chunk = 2.0  # ~170 words: minutes, while the turn has 6 s
    started = time.monotonic()
    claude = joined(
        source,
        debate_dir,
        "--model",
        "claude-x",
        "--max-turns",
        "2",
        "--lease-seconds",
        "5",
        "--turn-timeout-seconds",
        "6",
        env=claude_env(anthropic_server),
    )
    wait_for_seat(debate_dir, source)
    folder = tmp_path / "bob"
    folder.mkdir()
    (folder / "1.md").write_text("never played")
    bob = joined(source, debate_dir, "--model", f"scripted:{folder}", "--name", "Bob", env=clean_env())
    (code_c, result_c, err_c), (code_b, result_b, err_b) = finish(claude, timeout=40), finish(bob, timeout=40)
    assert time.monotonic() - started < 30
    assert (code_c, result_c["outcome"], result_c["turns_written"]) == (0, "TIMEOUT", []), err_c
    assert (code_b, result_b["outcome"]) == (0, "TIMEOUT"), err_b
    assert "turn deadline passed: turn 1 was not finished within 6 s" in err_c
    log = (debate_dir / ".duel" / "duels" / result_c["duel_id"] / "events.jsonl").read_text()
    assert '"type": "lock_refreshed"' in log  # the lease was kept while the model wrote, until the deadline
    assert '"type": "turn_appended"' not in log
    text = Path(result_c["debate_path"]).read_text()
    assert "| Outcome | TIMEOUT |" in text
    assert "| Reason | seat 1 (Claude) did not finish turn 1 by its deadline |" in text


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_demo_reruns_in_one_folder_seat_ada_first_and_reach_consensus_after_its_revision_is_applied(tmp_path):
    """Issue 38, items 1 and 3: a rerun raced for seat 1 (2 of 7 ended INVALIDATED), and once the demo's own
    `duel apply` line was followed every later demo debated the revised document and ended INVALIDATED."""
    demo = tmp_path / "demo"
    for rerun in range(10):
        proc = subprocess.run(
            [sys.executable, "-m", "rp1_duel", "demo", "--dir", str(demo)],
            capture_output=True,
            text=True,
            timeout=120,
            env=clean_env(),
        )
        assert proc.returncode == 0, (rerun, proc.stderr)
        assert "outcome:  ACCEPTED_CONSENSUS" in proc.stderr
        [artifact] = [line.split()[-1] for line in proc.stderr.splitlines() if line.startswith("artifact:")]
        assert "## Turn 1 — Ada (" in Path(artifact).read_text(encoding="utf-8")
        if rerun == 0:  # follow the demo's own advice once
            applied = subprocess.run(
                [sys.executable, "-m", "rp1_duel", "apply", artifact], capture_output=True, text=True, env=clean_env()
            )
            assert applied.returncode == 0, applied.stderr
