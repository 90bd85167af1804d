"""The library's calls that take a seat handle and a lease token: the two secrets are two
types, and one passed where the other goes is refused at run time too, with
``INVALID_ARGUMENT`` naming the type and never the secret; the duel is left as it was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rp1_duel.coordination import DuelService, LeaseToken, Seat
from rp1_duel.errors import DuelError

from helpers import claim, join, make_turn

# The service as Any: each call swaps the handles on purpose, which the type checker would refuse.
Swap = Callable[[Any, Seat, LeaseToken], Any]

SWAPS: dict[str, Swap] = {
    "claim_lock(lease)": lambda s, seat, lease: s.claim_lock(lease),
    "refresh_lock(lease, seat)": lambda s, seat, lease: s.refresh_lock(lease, seat),
    "release_lock(lease, seat)": lambda s, seat, lease: s.release_lock(lease, seat),
    "release_lock(seat, seat)": lambda s, seat, lease: s.release_lock(seat, seat),
    "append(lease, seat, …)": lambda s, seat, lease: s.append(
        lease,
        seat,
        make_turn(1, "Alice", "claude-code", "claude-x"),
    ),
    "append(seat, lease.value, …)": lambda s, seat, lease: s.append(
        seat,
        lease.value,
        make_turn(1, "Alice", "claude-code", "claude-x"),
    ),
    "record_usage(lease, …)": lambda s, seat, lease: s.record_usage(lease, 1, {}),
    "record_verdicts(lease, …)": lambda s, seat, lease: s.record_verdicts(lease, 1, {}),
}


@pytest.mark.parametrize("call", SWAPS.values(), ids=SWAPS.keys())
def test_a_lease_passed_for_the_seat_or_the_seat_for_the_lease_is_invalid_argument(
    service: DuelService, source: Path, call: Swap
) -> None:
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    join(service, source, "Bob", harness="codex", model_id="gpt-x")
    lease = claim(service, alice)
    before = service.status(alice.seat.duel_id)

    with pytest.raises(DuelError) as refused:
        call(service, alice.seat, lease)

    assert refused.value.code == "INVALID_ARGUMENT"
    assert "expected the" in refused.value.message
    assert lease.value not in refused.value.message and alice.seat.token not in refused.value.message
    after = service.status(alice.seat.duel_id)
    assert (after.lock.fence, after.turn_count) == (before.lock.fence, before.turn_count)


def test_prepare_store_creates_the_debate_dirs_state_folder_and_says_where(debate_dir: Path) -> None:
    service = DuelService(debate_dir)
    assert service.prepare_store() == str(debate_dir)
    assert (debate_dir / ".duel" / "duels").is_dir()
    assert service.prepare_store() == str(debate_dir)  # again: nothing to do
