"""Leases under real contention: many processes, one duel, one file lock or one database row.

Ten worker processes (five per seat, so several processes share one participant and
compete with each other as well as with the peer) hammer claim/refresh/release on ONE
duel for a few seconds. No turn is appended and turn 1's deadline (1 s) has passed before
the run begins, so turn 1 is lost: seat 1's ordinary claims are refused
(``turn_deadline_passed``), and both seats compete for timeout leases. Every grant is timed from the outside, and the run must
show mutual exclusion, fresh monotonic fences, successful releases and a clean log, over
each store (docs/protocol.md section 4, "Stores").
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from rp1_duel.coordination import DuelService, LockAcquired, LockReleased
from rp1_duel.settings import DuelSettings

from helpers import Player, join

pytestmark = pytest.mark.slow  # ten processes contend for a few seconds

SOURCE = "# Lease design\n\n## Lease semantics\nLeases expire unless refreshed.\n"
WORKERS_PER_SEAT = 5
RUN_SECONDS = 4.0
MIN_GRANTS = 50  # on a loaded machine the run goes on past RUN_SECONDS until this many grants
HARD_STOP_SECONDS = 30.0

WORKER = textwrap.dedent(
    r"""
    MIN_GRANTS, HARD_STOP_SECONDS = {min_grants}, {hard_stop}
    import json, random, sys, time
    from rp1_duel.coordination.results import Seat
    from rp1_duel.coordination.service import DuelService
    from rp1_duel.errors import DuelError

    debate_dir, duel_id, pid, token, seat, start, stop, out, seed, store = sys.argv[1:]
    seat, start, stop = int(seat), float(start), float(stop)
    rnd = random.Random(int(seed))
    svc = DuelService(debate_dir, store=store or None)
    me = Seat(duel_id, pid, token, seat)
    records = []
    while time.time() < start:
        time.sleep(0.001)
    def done():
        now = time.time()
        # On a slow machine keep contending past `stop` until enough grants are in.
        return now >= stop + HARD_STOP_SECONDS or (now >= stop and svc.status(duel_id).lock.fence > MIN_GRANTS)

    while not done():
        # Seat 2 mostly asks for the timeout path; seat 1 mostly for its turn.
        for_timeout = rnd.random() < (0.8 if seat == 2 else 0.1)
        t_call = time.time()
        try:
            claim = svc.claim_lock(me, for_timeout=for_timeout)
        except DuelError as exc:
            records.append({"kind": "claim_error", "code": exc.code, "message": exc.message})
            continue
        t_acquired = time.time()
        if not claim.acquired:
            records.append({"kind": "refused", "reason": claim.reason, "for_timeout": for_timeout,
                            "owner": claim.owner_participant_id})
            time.sleep(rnd.uniform(0, 0.010))
            continue
        lease = claim.lease
        if claim.reason == "already_held":
            # A sibling process of the same participant holds it: same lease back, not ours to release.
            records.append({"kind": "shared", "lease_token": lease.value,
                            "t_call": t_call, "t_return": t_acquired})
            time.sleep(rnd.uniform(0, 0.010))
            continue
        grant = {"kind": "grant", "fence": int(lease.value.split("-", 1)[0]),
                 "lease_token": lease.value, "reason": claim.reason,
                 "next_step": claim.next_step, "seat": seat,
                 "t_call": t_call, "t_acquired": t_acquired}
        time.sleep(rnd.uniform(0, 0.003))
        if rnd.random() < 0.3:
            try:
                grant["refreshed"] = svc.refresh_lock(me, lease).refreshed
            except DuelError as exc:
                grant["refreshed"] = exc.code
        grant["t_released"] = time.time()
        try:
            grant["released"] = svc.release_lock(me, lease).released
        except DuelError as exc:
            grant["released"] = exc.code
        grant["t_release_return"] = time.time()
        records.append(grant)
        if seat == 1:
            time.sleep(rnd.uniform(0, 0.004))  # leave the peer a window for its timeout path
    with open(out, "w") as handle:
        json.dump(records, handle)
    """
)


def _join(service: DuelService, source: Path, name: str, settings: DuelSettings) -> Player:
    return join(service, source, name, harness="test", model_id="m", settings=settings)


@pytest.fixture(scope="module", params=["directory", "postgresql"])
def contended_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("contention")
    source = root / "design.md"
    source.write_text(SOURCE, encoding="utf-8")
    debate_dir = root / "debates"
    store = ""
    if request.param == "postgresql":
        import psycopg

        server = request.getfixturevalue("postgres_server")
        with psycopg.connect(server.url(), autocommit=True) as conn:
            conn.execute("CREATE SCHEMA contention")
        store = server.url("contention")
    service = DuelService(debate_dir, store=store or None)
    settings = DuelSettings(max_turns=6, lease_seconds=5, peer_wait_seconds=1, turn_timeout_seconds=1)
    one = _join(service, source, "Alice", settings)
    two = _join(service, source, "Bob", settings)
    assert (one.seat.number, two.seat.number) == (1, 2)
    assert one.duel_id == two.duel_id
    duel_id = one.duel_id
    worker = root / "worker.py"
    worker.write_text(WORKER.replace("{min_grants}", str(MIN_GRANTS)).replace("{hard_stop}", str(HARD_STOP_SECONDS)))

    start = time.time() + 1.5  # every worker imported and waiting before the first claim
    stop = start + RUN_SECONDS
    procs, outs = [], []
    for i in range(2 * WORKERS_PER_SEAT):
        seat = one if i % 2 == 0 else two
        out = root / f"records-{i}.json"
        outs.append(out)
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    str(worker),
                    str(debate_dir),
                    duel_id,
                    seat.id,
                    seat.token,
                    str(seat.seat.number),
                    repr(start),
                    repr(stop),
                    str(out),
                    str(i),
                    store,
                ],
                stderr=subprocess.PIPE,
            )
        )
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
    records = [r for out in outs for r in json.loads(out.read_text())]
    return {
        "records": records,
        "grants": sorted((r for r in records if r["kind"] == "grant"), key=lambda r: r["t_acquired"]),
        "store": service.store,
        "kind": request.param,
        "duel_id": duel_id,
        "tokens": [one.token, two.token],
    }


def test_contention_exercises_both_seats_refusals_and_shared_leases_without_errors(
    contended_run: dict[str, Any],
) -> None:
    records, grants = contended_run["records"], contended_run["grants"]
    assert len(grants) > MIN_GRANTS, f"only {len(grants)} grants"
    assert any(g["seat"] == 1 for g in grants)
    # The timeout path is open to both seats once the turn deadline passed and nobody holds a lease.
    assert any(g["seat"] == 2 for g in grants), "no timeout lease was ever granted to seat 2"
    assert any(r["kind"] == "refused" and r["reason"] == "turn_deadline_passed" for r in records)
    assert any(r["kind"] == "refused" and r["reason"] == "lease_held_by_peer" for r in records)
    assert any(r["kind"] == "shared" for r in records), "no two processes of one seat ever met"
    assert not [r for r in records if r["kind"] == "claim_error"]


def test_contended_leases_never_overlap(contended_run: dict[str, Any]) -> None:
    grants = contended_run["grants"]
    for before, after in itertools.pairwise(grants):
        assert after["t_acquired"] >= before["t_released"], (before, after)


def test_fences_are_fresh_and_increase_with_acquisition_time(contended_run: dict[str, Any]) -> None:
    grants = contended_run["grants"]
    fences = [g["fence"] for g in grants]
    assert len(set(fences)) == len(fences)
    assert fences == sorted(fences), "fence order differs from acquisition order"
    # Every grant of the duel was seen by a worker, so the fences are exactly 1..N.
    assert fences == list(range(1, len(fences) + 1))
    state = contended_run["store"].read_state(contended_run["duel_id"])
    assert state.fence == len(fences)
    assert state.lease is None  # every grant was released


def test_every_granted_lease_is_released_by_its_holder(contended_run: dict[str, Any]) -> None:
    for grant in contended_run["grants"]:
        assert grant["released"] is True, grant
        assert grant.get("refreshed", True) is True, grant
        assert grant["t_release_return"] - grant["t_acquired"] < 5, "held past its lease"
        assert (grant["reason"], grant["next_step"]) == ("timeout_due", "close_timeout"), grant


def test_same_participant_gets_the_live_lease_back(contended_run: dict[str, Any]) -> None:
    """A second process of the holder's seat gets the holder's lease, never a new one."""
    by_token = {g["lease_token"]: g for g in contended_run["grants"]}
    shared = [r for r in contended_run["records"] if r["kind"] == "shared"]
    for answer in shared:
        grant = by_token.get(answer["lease_token"])
        assert grant is not None, answer
        # The answer was given while that grant was held.
        assert answer["t_call"] <= grant["t_release_return"] and answer["t_return"] >= grant["t_call"], (answer, grant)


def test_events_log_is_gapless_and_parses_after_contention(contended_run: dict[str, Any]) -> None:
    store, duel_id = contended_run["store"], contended_run["duel_id"]
    state = store.read_state(duel_id)
    events = store.events(state).read()
    if contended_run["kind"] == "directory":
        raw = store.debate.events_path(duel_id).read_bytes()
        assert len(raw) == state.event_bytes
        assert [json.loads(line) for line in raw.decode("utf-8").splitlines()] == [e.to_json() for e in events]
    assert [e.seq for e in events] == list(range(len(events)))
    assert len(events) == state.event_seq
    acquired = [e.data.fence for e in events if isinstance(e.data, LockAcquired)]
    released = [e.data.fence for e in events if isinstance(e.data, LockReleased)]
    assert acquired == list(range(1, len(contended_run["grants"]) + 1))
    assert sorted(released) == acquired
    text = json.dumps([e.to_json() for e in events])
    for secret in contended_run["tokens"] + [g["lease_token"] for g in contended_run["grants"]]:
        assert secret not in text
