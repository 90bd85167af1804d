"""Crashes: a lease holder killed with SIGKILL, and writers killed mid-write.

(a) The holder of seat 1's lease dies without releasing it: the peer is refused until
    the lease expires, the restarted seat-1 process resumes with its token and gets a
    fresh lease with a larger fence (the dead process's token is fenced out), and seat 2
    can take the timeout path once the turn deadline has passed and no live lease is held.
(b) A writer doing join/claim/refresh/release in a tight loop is killed at a random
    moment, many times over: the state, the index and the event log always read back
    whole, no lease outlives its expiry, and the next op succeeds.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from rp1_duel.clock import Instant, system_clock
from rp1_duel.coordination import DebateDir, DuelService, LeaseToken
from rp1_duel.settings import DuelSettings

from helpers import join, run_tools, stop

pytestmark = pytest.mark.slow  # kill -9 of real processes, and waits for real leases to expire

SOURCE = "# Lease design\n\n## Failure handling\nA crashed holder loses the floor when its lease expires.\n"
LEASE_SECONDS = 5
TURN_TIMEOUT_SECONDS = 10  # longer than a lease: the killed holder's lease ends by expiry, not by the deadline


def tools(*args: str) -> tuple[int, dict[str, Any]]:
    """`duel tools …` as a real process: one JSON line on stdout, no traceback.

    Tokens are passed as `--participant-token=…`: a token may begin with `-`.
    """
    result = run_tools(*args)
    return result.code, result.envelope


def ok(*args: str) -> dict[str, Any]:
    code, envelope = tools(*args)
    assert code == 0 and envelope["success"], envelope
    return envelope["data"]


def moved(now: Instant, seconds: float) -> Instant:
    return Instant(now.wall + seconds, now.mono + seconds, now.boot)


def epoch(iso_text: str) -> float:
    return datetime.strptime(iso_text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


HOLDER = textwrap.dedent(
    r"""
    import json, sys, time
    from rp1_duel.coordination.service import DuelService

    debate_dir, target, token = sys.argv[1:]
    svc = DuelService(debate_dir)
    me = svc.join(target=target, participant_name="Alice", harness="crashy", model_id="m1",
                  participant_token=token)
    claim = svc.claim_lock(me.seat)
    print(json.dumps(claim.to_dict()), flush=True)  # the claim as `duel tools claim-lock` would answer it
    time.sleep(600)  # holding the lease until killed
    """
)


def _claimed_by_a_killed_holder(tmp_path: Path, debate: str, source: Path, token: str) -> dict[str, Any]:
    """The claim of a process that joined as seat 1 with ``token``, then was killed with SIGKILL holding the lease."""
    holder = tmp_path / "holder.py"
    holder.write_text(HOLDER)
    proc = subprocess.Popen(
        [sys.executable, str(holder), debate, str(source), token],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    try:
        first: dict[str, Any] = json.loads(proc.stdout.readline())
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        stop(proc)
    assert proc.returncode == -signal.SIGKILL
    return first


def _refusals_until(until: float, seat: list[str], owner: str, expires_at: str) -> int:
    """How many claims by ``seat`` (plain and for a timeout, in turn) were refused, up to the time ``until``:
    each is refused because ``owner`` holds the lease until ``expires_at``."""
    refusals = 0
    while time.time() < until:
        extra = ["--for-timeout"] if refusals % 2 else []
        code, envelope = tools("claim-lock", *seat, *extra)
        assert code == 0, envelope
        data = envelope["data"]
        assert data["acquired"] is False, data
        assert data["reason"] == "lease_held_by_peer", data
        assert data["owner_participant_id"] == owner
        assert data["wait_until"] == expires_at
        assert data["lease_expires_at"] == expires_at
        assert 0 < data["retry_after_seconds"] <= LEASE_SECONDS
        assert data["next_step"] == "wait_turn"
        assert data.get("lease_token") is None
        refusals += 1
        time.sleep(0.1)
    return refusals


def test_killed_holder_loses_lease_at_expiry(tmp_path: Path) -> None:
    source = tmp_path / "design.md"
    source.write_text(SOURCE, encoding="utf-8")
    debate = str(tmp_path / "debates")
    common = [
        "--target",
        str(source),
        "--debate-dir",
        debate,
        "--lease-seconds",
        str(LEASE_SECONDS),
        "--turn-timeout-seconds",
        str(TURN_TIMEOUT_SECONDS),
    ]
    one = ok("join", *common, "--participant-name", "Alice", "--harness", "crashy", "--model-id", "m1")
    two = ok("join", *common, "--participant-name", "Bob", "--harness", "steady", "--model-id", "m2")
    duel = one["duel_id"]
    assert (one["seat"], two["seat"]) == (1, 2)
    seat2 = [
        "--duel-id",
        duel,
        "--debate-dir",
        debate,
        "--participant-id",
        two["participant_id"],
        f"--participant-token={two['participant_token']}",
    ]

    first = _claimed_by_a_killed_holder(tmp_path, debate, source, one["participant_token"])
    assert first["acquired"] is True and first["lease_token"].startswith("1-"), first
    expires_at = first["lease_expires_at"]
    expiry = epoch(expires_at)

    # The dead process still holds the lease until it expires: the peer is refused.
    status = ok("status", "--duel-id", duel, "--debate-dir", debate)
    assert status["lock"] == {"owner_participant_id": one["participant_id"], "lease_expires_at": expires_at, "fence": 1}
    # Up to a margin before expiry: a claim processed after expiry would win.
    assert _refusals_until(expiry - 1.0, seat2, one["participant_id"], expires_at) >= 4

    time.sleep(max(0.0, expiry - time.time()) + 0.1)
    assert ok("status", "--duel-id", duel, "--debate-dir", debate)["lock"]["owner_participant_id"] is None

    # The restarted seat-1 process resumes with its token and gets a fresh, larger fence.
    again = ok(
        "join",
        *common,
        "--participant-name",
        "Alice",
        "--harness",
        "crashy",
        "--model-id",
        "m1",
        f"--participant-token={one['participant_token']}",
    )
    assert (again["participant_id"], again["seat"], again["duel_id"]) == (one["participant_id"], 1, duel)
    seat1 = [
        "--duel-id",
        duel,
        "--debate-dir",
        debate,
        "--participant-id",
        one["participant_id"],
        f"--participant-token={one['participant_token']}",
    ]
    fresh = ok("claim-lock", *seat1)
    assert fresh["acquired"] is True and fresh["reason"] == "your_turn", fresh
    assert fresh["lease_token"].startswith("2-")
    assert fresh["lease_token"] != first["lease_token"]
    assert fresh["next_step"] == "compose_turn"

    # The dead process's lease token is fenced out for good.
    code, envelope = tools("release-lock", *seat1, "--lease-token", first["lease_token"])
    assert code == 1 and envelope["error"]["code"] == "LEASE_NOT_HELD", envelope

    # The fresh lease ends at the turn deadline; until then no timeout, after it nothing is written.
    deadline = ok("status", "--duel-id", duel, "--debate-dir", debate)["turn_deadline"]
    assert fresh["lease_expires_at"] == deadline
    refused = ok("claim-lock", *seat2, "--for-timeout")
    assert refused["acquired"] is False and refused["reason"] == "lease_held_by_peer", refused
    time.sleep(max(0.0, epoch(deadline) - time.time()) + 0.1)
    code, envelope = tools("release-lock", *seat1, "--lease-token", fresh["lease_token"])
    assert code == 1 and envelope["error"]["code"] == "TURN_DEADLINE_PASSED", envelope

    timeout = ok("claim-lock", *seat2, "--for-timeout")
    assert timeout["acquired"] is True and timeout["reason"] == "timeout_due", timeout
    assert timeout["lease_token"].startswith("3-")
    assert timeout["next_step"] == "close_timeout"
    assert (
        ok("status", "--duel-id", duel, "--debate-dir", debate, "--participant-id", one["participant_id"])["next_step"]
        == "wait_turn"
    )  # the peer closes

    events = [
        json.loads(line) for line in (Path(debate) / ".duel" / "duels" / duel / "events.jsonl").read_text().splitlines()
    ]
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert [e["data"]["fence"] for e in events if e["type"] == "lock_acquired"] == [1, 2, 3]


WRITER = textwrap.dedent(
    r"""
    import importlib, os, sys
    from rp1_duel.coordination.results import Seat
    from rp1_duel.coordination.service import DuelService
    from rp1_duel.settings import DuelSettings

    debate_dir, target, duel_id, pid, token = sys.argv[1:]
    settings = DuelSettings(lease_seconds=5, turn_timeout_seconds=60)
    svc = DuelService(debate_dir)
    seat = Seat(duel_id, pid, token)
    importlib.import_module("rp1_duel.coordination._record_writer")  # warm: kills should land in writes, not imports
    print("ready", flush=True)
    k = 0
    while True:
        if k % 4 == 0:
            svc.join(target=target, participant_name="Alice", harness="crashy", model_id="m1",
                     participant_token=token, settings=settings)
        if k % 10 == 5:  # a new duel: index.json and a fresh state folder are written too
            svc.join(target=target, topic=f"side {os.getpid()} {k}", participant_name="Side", settings=settings)
        claim = svc.claim_lock(seat)
        assert claim.acquired, claim
        if k % 3 == 0:
            assert svc.refresh_lock(seat, claim.lease).refreshed
        assert svc.release_lock(seat, claim.lease).released
        k += 1
    """
)


def _check_log_prefix(debate: DebateDir, duel_id: str) -> Any:
    """state.json parses both ways; the log up to what the state knows is whole and gapless."""
    path = debate.duel_folder(duel_id) / "state.json"
    raw = json.loads(path.read_bytes())
    state = debate.read_state(duel_id)
    assert raw["fence"] == state.fence
    events = debate.events_path(duel_id)
    log = events.read_bytes() if events.exists() else b""  # a duel killed right after its creation has none
    assert len(log) >= state.event_bytes
    known = log[: state.event_bytes].decode("utf-8").splitlines()
    assert [json.loads(line)["seq"] for line in known] == list(range(state.event_seq))
    return state


def _kill_a_writer(argv: list[str], rnd: random.Random) -> None:
    """Starts the writer ``argv`` and kills it with SIGKILL at a random moment of its loop."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline() == b"ready\n", proc.stderr.read()
    time.sleep(rnd.uniform(0, 0.080))
    os.kill(proc.pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGKILL, err.decode()  # the writer never failed on its own


def test_killed_writers_never_leave_a_half_written_state(tmp_path: Path) -> None:
    source = tmp_path / "design.md"
    source.write_text(SOURCE, encoding="utf-8")
    debate_dir = tmp_path / "debates"
    debate = DebateDir(debate_dir)
    service = DuelService(debate_dir)
    settings = DuelSettings(lease_seconds=LEASE_SECONDS, turn_timeout_seconds=60)
    one = join(service, source, "Alice", harness="crashy", model_id="m1", settings=settings)
    join(service, source, "Bob", harness="steady", model_id="m2", settings=settings)
    duel, pid, token = one.duel_id, one.id, one.token
    writer = tmp_path / "writer.py"
    writer.write_text(WRITER)
    rnd = random.Random(1234)
    tails = 0

    for _ in range(36):
        _kill_a_writer([sys.executable, str(writer), str(debate_dir), str(source), duel, pid, token], rnd)
        state = _check_log_prefix(debate, duel)
        tails += debate.events_path(duel).stat().st_size > state.event_bytes
        index = json.loads((debate.state_root / "index.json").read_bytes())
        assert index == debate.read_index()
        for other in index.values():
            _check_log_prefix(debate, other)

        # No lease outlives its expiry: a moment past lease_seconds, nobody holds one.
        now = time.monotonic()
        if state.lease is not None:
            assert state.lease.expires_mono <= now + LEASE_SECONDS
        later = DuelService(debate_dir, clock=lambda: moved(system_clock(), LEASE_SECONDS + 0.01))
        assert later.status(duel).lock.owner_participant_id is None

        # The next op works: the same participant gets the lease (fresh, or the dead
        # writer's own back) and releases it; the log is then whole and gapless.
        claim = service.claim_lock(one.seat)
        assert claim.acquired is True and claim.reason in ("your_turn", "already_held"), claim
        assert service.release_lock(one.seat, claim.lease).released is True
        after = _check_log_prefix(debate, duel)
        assert after.lease is None
        assert debate.events_path(duel).stat().st_size == after.event_bytes

    state = debate.read_state(duel)
    assert state.fence > 36, "the writers hardly ever got going"
    print(f"{state.fence} grants, {tails} dead-writer log tails cut back")  # noqa: T201  shown with pytest -s

    # Leftover temp files of killed writers, and a planted one, are ignored by readers and removed by the
    # next writer under the lock.
    folder = debate.duel_folder(duel)
    planted = folder / ".state.json.deadbeef.tmp"
    planted.write_bytes(b'{"half": ')
    (debate.state_root / ".index.json.cafebabe.tmp").write_bytes(b"\x00\xff")
    assert ok("status", "--duel-id", duel, "--debate-dir", str(debate_dir))["lock"]["owner_participant_id"] is None
    claimed = ok(
        "claim-lock",
        "--duel-id",
        duel,
        "--debate-dir",
        str(debate_dir),
        "--participant-id",
        pid,
        f"--participant-token={token}",
    )
    assert claimed["acquired"] is True
    rejoin = service.join(
        target=str(source),
        participant_name="Alice",
        harness="crashy",
        model_id="m1",
        participant_token=token,
        settings=settings,
    )
    assert rejoin.duel_id == duel
    assert service.release_lock(one.seat, LeaseToken(claimed["lease_token"])).released is True
    assert not planted.exists() and list(folder.glob("*.tmp")) == []
    assert json.loads((folder / "state.json").read_bytes())["lease"] is None
