"""Leases and deadlines are judged on the monotonic clock of one boot (docs/protocol.md
section 4, "Clocks"): a wall-clock jump changes nothing but the times shown, a reboot
ends every lease."""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from rp1_duel.clock import boot_id, iso, utc_date
from rp1_duel.errors import DuelError

from helpers import claim, run_tools

DAY = 86_400.0
HOUR = 3_600.0


def code_of(call) -> str:
    with pytest.raises(DuelError) as info:
        call()
    return info.value.code


# -- through the library, on a manual clock (leases of 600 s, turns of 1800 s) --------------


def test_a_wall_clock_set_forward_does_not_time_out_a_refreshing_holder(service, pair, clock):
    alice, bob = pair
    lease = claim(service, alice)
    clock.advance(300)
    assert service.refresh_lock(alice.seat, lease).refreshed
    clock.set_wall(HOUR)  # NTP, or both participants suspended for an hour
    refused = service.claim_lock(bob.seat, for_timeout=True)
    assert (refused.acquired, refused.reason) == (False, "lease_held_by_peer")
    status = service.status(alice.duel_id, participant_id=bob.id)
    assert (status.lock.owner_participant_id, status.next_step) == (alice.id, "wait_turn")
    # Shown on the wall clock as it reads now: 600 s left on the lease, 1500 s on the turn.
    assert status.lock.lease_expires_at == pytest.approx(clock.wall + 600)
    assert status.turn_deadline == pytest.approx(clock.wall + 1500)
    assert service.refresh_lock(alice.seat, lease).refreshed


def test_a_wall_clock_set_back_a_day_ends_a_dead_holders_lease_on_time(service, pair, clock):
    alice, bob = pair
    lease = claim(service, alice)
    clock.set_wall(-DAY)
    clock.advance(599)
    assert service.status(alice.duel_id).lock.owner_participant_id == alice.id
    clock.advance(1)
    assert service.status(alice.duel_id).lock.owner_participant_id is None
    assert code_of(lambda: service.release_lock(alice.seat, lease)) == "LEASE_EXPIRED"
    clock.advance(1200)  # the turn began 1800 s ago on the monotonic clock
    assert service.claim_lock(bob.seat, for_timeout=True).reason == "timeout_due"


def test_a_reboot_ends_every_lease_and_carries_deadlines_over_on_the_wall_clock(service, pair, clock):
    alice, bob = pair
    lease = claim(service, alice)
    clock.advance(100)
    clock.reboot(downtime=200)
    status = service.status(alice.duel_id, participant_id=bob.id)
    assert status.lock.owner_participant_id is None
    assert status.next_step == "wait_turn"
    assert status.turn_deadline == pytest.approx(clock.wall + 1500)  # 300 s of the turn are gone
    assert code_of(lambda: service.append(alice.seat, lease, "x")) == "LEASE_EXPIRED"
    assert service.claim_lock(bob.seat, for_timeout=True).reason == "timeout_not_due"
    clock.advance(1500)
    assert service.claim_lock(bob.seat, for_timeout=True).reason == "timeout_due"


def test_the_first_write_after_a_reboot_anchors_the_duel_on_the_new_boot(service, pair, clock, debate_dir):
    alice, bob = pair
    clock.reboot(downtime=50)  # 50 s of the turn gone, as the wall clock tells
    assert service.claim_lock(bob.seat).reason == "not_your_turn"  # a write: the duel is now on boot-2
    state = json.loads((debate_dir / ".duel" / "duels" / alice.duel_id / "state.json").read_bytes())
    assert (state["version"], state["boot_id"]) == (2, "boot-2")
    clock.set_wall(-DAY)  # from here on the wall clock does not matter
    clock.advance(1749)
    assert service.claim_lock(bob.seat, for_timeout=True).reason == "timeout_not_due"
    clock.advance(1)
    assert service.claim_lock(bob.seat, for_timeout=True).reason == "timeout_due"


def test_a_version_1_state_is_read_on_the_wall_clock_and_kept_as_version_2(service, pair, clock, debate_dir):
    alice, bob = pair
    lease = claim(service, alice)
    path = debate_dir / ".duel" / "duels" / alice.duel_id / "state.json"
    path.write_text(json.dumps(as_version_1(json.loads(path.read_bytes()))))
    clock.advance(599)
    assert service.status(alice.duel_id).lock.owner_participant_id == alice.id
    assert service.refresh_lock(alice.seat, lease).refreshed  # a write: version 2 from now on
    state = json.loads(path.read_bytes())
    assert (state["version"], state["boot_id"], state["lease"]["expires_mono"]) == (2, clock.boot, clock.mono + 600)
    clock.set_wall(HOUR)
    assert service.claim_lock(bob.seat, for_timeout=True).reason == "lease_held_by_peer"


def as_version_1(state: dict[str, Any]) -> dict[str, Any]:
    """What a state file looked like before monotonic times: wall-clock times only."""
    to_wall = state.pop("wall_offset").__add__
    del state["boot_id"]
    state.update(version=1, turn_started_at=to_wall(state.pop("turn_started_mono")))
    del state["created_mono"]
    for participant in state["participants"]:
        participant["last_seen_at"] = to_wall(participant.pop("last_seen_mono"))
    lease = state["lease"]
    lease.update(granted_at=to_wall(lease.pop("granted_mono")), expires_at=to_wall(lease.pop("expires_mono")))
    return state


# -- real processes ------------------------------------------------------------------------


def ok(*args: str, wall_shift: float = 0.0) -> dict[str, Any]:
    result = run_tools(*args, wall_shift=wall_shift)
    assert result.code == 0, result.envelope
    return result.data


@pytest.mark.slow
def test_a_wall_clock_jump_neither_times_out_a_live_holder_nor_keeps_a_dead_one(source: Path, debate_dir: Path):
    """Processes whose wall clock reads +1 h or -1 day see the lease as the holder does."""
    common = [
        "--target",
        str(source),
        "--debate-dir",
        str(debate_dir),
        "--lease-seconds",
        "5",
        "--turn-timeout-seconds",
        "1800",
    ]
    alice = ok("join", *common, "--participant-name", "Alice")
    bob = ok("join", *common, "--participant-name", "Bob")
    ids = ["--duel-id", alice["duel_id"], "--debate-dir", str(debate_dir)]
    as_alice = [*ids, "--participant-id", alice["participant_id"], f"--participant-token={alice['participant_token']}"]
    as_bob = [*ids, "--participant-id", bob["participant_id"], f"--participant-token={bob['participant_token']}"]
    lease = ok("claim-lock", *as_alice)["lease_token"]

    # +1 h: the holder keeps refreshing; the peer, an hour ahead, may not time it out.
    for _ in range(3):
        assert ok("refresh-lock", *as_alice, "--lease-token", lease)["refreshed"] is True
        refused = ok("claim-lock", *as_bob, "--for-timeout", wall_shift=HOUR)
        assert (refused["acquired"], refused["reason"]) == (False, "lease_held_by_peer"), refused
        assert refused["next_step"] == "wait_turn"
        seen = ok("status", *ids, "--participant-id", bob["participant_id"], wall_shift=HOUR)
        assert seen["lock"]["owner_participant_id"] == alice["participant_id"]
    last_refresh = time.monotonic()

    # -1 day: the holder is gone; five seconds after its last refresh its lease is over all the same.
    time.sleep(max(0.0, last_refresh + 5.2 - time.monotonic()))
    behind = ok("status", *ids, "--participant-id", bob["participant_id"], wall_shift=-DAY)
    assert behind["lock"]["owner_participant_id"] is None, behind["lock"]
    assert behind["next_step"] == "wait_turn"  # the turn is Alice's and its deadline is far
    code = run_tools("refresh-lock", *as_alice, "--lease-token", lease, wall_shift=-DAY).data
    assert (code["refreshed"], code["reason"]) == (False, "lease_expired")


@pytest.mark.slow
def test_a_lease_from_before_a_reboot_is_over(source: Path, debate_dir: Path):
    """A state written in another boot (another boot id): its holder died with that boot."""
    common = ["--target", str(source), "--debate-dir", str(debate_dir), "--lease-seconds", "600"]
    alice = ok("join", *common, "--participant-name", "Alice")
    bob = ok("join", *common, "--participant-name", "Bob")
    ids = ["--duel-id", alice["duel_id"], "--debate-dir", str(debate_dir)]
    as_alice = [*ids, "--participant-id", alice["participant_id"], f"--participant-token={alice['participant_token']}"]
    as_bob = [*ids, "--participant-id", bob["participant_id"], f"--participant-token={bob['participant_token']}"]
    first = ok("claim-lock", *as_alice)
    state_file = debate_dir / ".duel" / "duels" / alice["duel_id"] / "state.json"
    state = json.loads(state_file.read_bytes())
    assert state["boot_id"] == boot_id() is not None
    state["boot_id"] = "0f0f0f0f-0000-4000-8000-000000000000"  # as if written before a reboot
    state_file.write_text(json.dumps(state))

    assert ok("status", *ids)["lock"]["owner_participant_id"] is None
    # The turn deadline is judged on the wall clock across the reboot: 30 minutes are not over.
    refused = ok("claim-lock", *as_bob, "--for-timeout")
    assert (refused["acquired"], refused["reason"]) == (False, "timeout_not_due"), refused
    again = ok("claim-lock", *as_alice)
    assert (again["acquired"], again["reason"]) == (True, "your_turn"), again
    assert again["lease_token"] != first["lease_token"]
    assert json.loads(state_file.read_bytes())["boot_id"] == boot_id()  # the first write re-anchored it


# Up to the year 9999 (datetime's last), and before 1970 too.
EPOCH_SECONDS = st.floats(min_value=-2e9, max_value=253402300799.0, allow_nan=False, allow_infinity=False)


@given(EPOCH_SECONDS)
@example(1_800_000_000.0005)  # half a millisecond: cut, never rounded up
@example(1_800_000_000.9999996)  # rounds up to the next second
@example(86_399.9999996)  # ... and to the next day
@example(-0.0000004)
def test_times_are_written_as_datetime_writes_them(ts):
    """The clock writes times through time, not datetime (start-up): the same bytes as datetime writes."""
    moment = datetime.fromtimestamp(ts, tz=timezone.utc)
    assert iso(ts) == moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    assert utc_date(ts) == moment.strftime("%Y-%m-%d")
