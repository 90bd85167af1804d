"""Ctrl-C never cuts an op in half: a stop signal that lands anywhere in a claim, a refresh or a
release takes effect when the op ends, so the duel's lock is free for the clean-up that follows
(a participant gives the floor back) and no lease is left held. Python raises KeyboardInterrupt
wherever the main thread is, the first line of a lock's ``__exit__`` included; the panel's Ctrl-C
test caught a seat keeping a lease that way about one run in ten."""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import rp1_duel
from rp1_duel.cli.stopping import stop_as_ctrl_c
from rp1_duel.coordination._retrying import _nesting
from rp1_duel.coordination.service import DuelService
from rp1_duel.coordination.storage import DirectoryStore, DuelLock

from helpers import Player, claim, join

WATCHED = (str(Path(rp1_duel.__file__).parent), contextlib.__file__)
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@pytest.fixture
def stop_handlers() -> Iterator[Callable[[int, FrameType | None], Any]]:
    """The handlers every `duel` command installs, this process's own put back afterwards."""
    before = {number: signal.getsignal(number) for number in STOP_SIGNALS}
    stop_as_ctrl_c()
    yield signal.getsignal(signal.SIGINT)  # type: ignore[misc]
    for number, handler in before.items():
        signal.signal(number, handler)


def interrupted_at(point: int, op: Callable[[], object], handler: Callable[[int, FrameType | None], Any]) -> bool:
    """Run ``op``, a SIGINT landing at its ``point``-th place where Python runs a signal's handler (the
    start of a function, the return from a C function) in duel's code or contextlib's, the handler run
    there as a real signal's would be; whether it ended in KeyboardInterrupt."""
    seen = 0

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        nonlocal seen
        if event in ("call", "c_return") and frame.f_code.co_filename.startswith(WATCHED):
            seen += 1
            if seen == point:
                handler(signal.SIGINT, frame)

    sys.setprofile(profile)
    try:
        op()
    except KeyboardInterrupt:
        return True
    finally:
        sys.setprofile(None)
        assert _nesting.depth == 0  # no bookkeeping of the op's is left behind for the next one
    return False


def give_the_floor_back(service: DuelService, player: Player) -> None:
    """What an interrupted participant does (``Duelist.interrupt``): release the lease it holds,
    seen or not; the service hands a holder its own lease again."""
    if service.status(player.duel_id).lock.owner_participant_id == player.id:
        lease = service.claim_lock(player.seat).lease
        assert lease is not None
        service.release_lock(player.seat, lease)


def assert_lock_free(service: DuelService, duel_id: str) -> None:
    """The duel's lock can be taken at once (a stuck one would first cost the clean-up 30 s)."""
    if isinstance(service.store, DirectoryStore):
        with DuelLock(service.store.debate.duel_folder(duel_id) / "lock", timeout=0.2):
            pass


def prepared(service: DuelService, alice: Player, op: str) -> Callable[[], object]:
    """The op to interrupt, its lease claimed beforehand (outside it) where it needs one."""
    if op == "claim":
        return lambda: service.claim_lock(alice.seat)
    lease = claim(service, alice)
    if op == "refresh":
        return lambda: service.refresh_lock(alice.seat, lease)
    return lambda: service.release_lock(alice.seat, lease)


@pytest.mark.slow  # an op run once for each of its lines: about 5 s an op
@pytest.mark.parametrize("op", ["claim", "refresh", "release"])
def test_ctrl_c_landing_anywhere_in_an_op_leaves_the_lock_free_and_no_lease_held(
    service_on_each_store, source, op, stop_handlers
):
    service = service_on_each_store
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    join(service, source, "Bob", harness="codex", model_id="gpt-x")

    point = 1
    while interrupted_at(point, prepared(service, alice, op), stop_handlers):
        assert_lock_free(service, alice.duel_id)
        give_the_floor_back(service, alice)
        assert service.status(alice.duel_id).lock.owner_participant_id is None, f"cut at point {point}"
        point += 1
    assert point > 20  # cut at every point the op has, then run whole


def test_ctrl_c_landing_as_a_claim_writes_is_raised_once_the_claim_is_whole(service, pair, stop_handlers, monkeypatch):
    alice, _ = pair
    save = service.store.save

    def signalled_save(*args: Any) -> None:
        stop_handlers(signal.SIGINT, None)  # the signal lands as the write begins
        save(*args)

    monkeypatch.setattr(service.store, "save", signalled_save)
    with pytest.raises(KeyboardInterrupt):
        service.claim_lock(alice.seat)
    assert service.status(alice.duel_id).lock.owner_participant_id == alice.id  # written whole, then raised
    assert_lock_free(service, alice.duel_id)


def test_a_second_ctrl_c_is_raised_at_once(service, pair, stop_handlers, monkeypatch):
    alice, _ = pair
    save = service.store.save

    def twice_signalled_save(*args: Any) -> None:
        stop_handlers(signal.SIGINT, None)
        stop_handlers(signal.SIGINT, None)  # a person who will not wait for the op
        save(*args)

    monkeypatch.setattr(service.store, "save", twice_signalled_save)
    with pytest.raises(KeyboardInterrupt):
        service.claim_lock(alice.seat)
    assert service.status(alice.duel_id).lock.owner_participant_id is None  # cut short: nothing written
    assert_lock_free(service, alice.duel_id)  # the sections it was in still ended
