"""A wait on the debate dir hears a change when it lands, not at its next poll (docs/protocol.md
section 4, "Waiting"): inotify on Linux, the poll elsewhere and as the safety net."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from rp1_duel.coordination import DuelService
from rp1_duel.coordination._state_watch import StateWatch

from helpers import claim, join

LONG = 5.0  # a sleep the watch must cut short: far longer than any wake, even on a loaded machine


def rename_into(folder: Path, after: float) -> threading.Thread:
    """In another thread, ``after`` seconds on: a file renamed into ``folder``, as a state write ends."""

    def write() -> None:
        time.sleep(after)
        (folder / "state.json.tmp").write_text("{}")
        (folder / "state.json.tmp").replace(folder / "state.json")

    thread = threading.Thread(target=write)
    thread.start()
    return thread


@pytest.mark.skipif(sys.platform != "linux", reason="inotify is Linux's")
def test_a_sleep_on_a_duel_folder_ends_when_a_file_is_renamed_into_it(tmp_path: Path) -> None:
    watch = StateWatch()
    watch.sleep(str(tmp_path), LONG)  # the first sleep adds the watch and returns at once
    writer = rename_into(tmp_path, after=0.05)
    started = time.monotonic()
    watch.sleep(str(tmp_path), LONG)
    slept = time.monotonic() - started
    writer.join()
    watch.close()
    assert slept < LONG / 2


def test_where_inotify_cannot_be_had_the_sleep_is_the_poll(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    watch = StateWatch()
    monkeypatch.setattr(watch, "_open", lambda: None)  # no inotify: another system, or its limit reached
    started = time.monotonic()
    watch.sleep(str(tmp_path), 0.2)
    watch.sleep(str(tmp_path), 0.2)
    assert time.monotonic() - started >= 0.4


@pytest.mark.skipif(sys.platform != "linux", reason="inotify is Linux's")
def test_a_waiting_seat_hears_a_release_made_in_another_thread(source: Path, debate_dir: Path) -> None:
    """A release in another thread ends a wait that has been watching: the wait returns with the change."""
    service = DuelService(debate_dir)
    alice, bob = join(service, source, "Alice"), join(service, source, "Bob")
    lease = claim(service, alice)

    def release_later() -> None:
        time.sleep(0.3)
        service.release_lock(alice.seat, lease)

    releaser = threading.Thread(target=release_later)
    releaser.start()
    waited = service.wait(bob.seat.duel_id, bob.seat.participant_id, timeout=LONG)
    releaser.join()
    assert waited.changed
    assert waited.waited_seconds < LONG / 2
