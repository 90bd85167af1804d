"""`duel watch`: the lines said for events, the live view's model, the follower's reads
(only on change, only what is new, never a write), and `duel watch` as a real process
against a real running duel, through a pipe and on a pseudo-terminal."""

from __future__ import annotations

import fcntl
import io
import json
import os
import queue
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from datetime import timezone
from pathlib import Path

import pytest

from rp1_duel.cli import main
from rp1_duel.clock import ManualClock, iso
from rp1_duel.coordination import DuelService, Event, LockAcquired, ParticipantWaiting, Provenance, Usage
from rp1_duel.coordination.storage import LOG_START, EventCursor, EventLog
from rp1_duel.errors import DuelError
from rp1_duel.review import watch
from rp1_duel.review.terminal import TerminalDisplay
from rp1_duel.review.watch import Follower, PlainDisplay, appended, event_line, follow, headline, pick_duel
from rp1_duel.review.watch_model import EventLine, WatchView, countdown, situation, view_of

from helpers import SOURCE, Player, agreed_on_an_edit, claim, join, make_turn, run_tools, stop, tree_snapshot

ANSI = re.compile(r"\x1b\[")
ALICE = ("Alice", "claude-code", "claude-x")
TS = "2027-01-15T08:00:00.000Z"
BOB = ("Bob", "codex", "gpt-x")


def turn(n: int, player: tuple[str, str, str], stance: str = "OPEN_TO_DEBATE") -> str:
    return make_turn(n, *player, stance=stance)


def all_events(service: DuelService, duel_id: str) -> list[Event]:
    return service.observe(duel_id).events


def debate_to_dissent(service: DuelService, alice: Player, bob: Player) -> None:
    """Every kind of event a duel logs: a grant, a refresh, a rejected draft, turns, usage, the close."""
    lease = claim(service, alice)
    service.refresh_lock(alice.seat, lease)
    with pytest.raises(DuelError):
        service.append(alice.seat, lease, "## Turn 1 — Alice (claude-code / claude-x) — DISSENTING\n")
    service.append(alice.seat, lease, turn(1, ALICE, "DISSENTING"), release=True, stripped=("fence",))
    service.record_usage(
        alice.seat,
        1,
        Usage(input_tokens=1200, output_tokens=340, cache_read_tokens=800, requests=2, retries=1, seconds=12.34),
    )
    lease = claim(service, bob)
    service.append(bob.seat, lease, turn(2, BOB, "DISSENTING"), release=True)
    service.release_lock(bob.seat, lease, close=True, outcome="DISSENT", reason="no common ground")


# -- what a line says ------------------------------------------------------------------------


def test_a_headline_is_the_first_sentence_of_the_position_on_one_line():
    assert headline("Leases are  too long.\nA crash blocks\nthe peer. More.") == "Leases are too long."
    assert headline("No sentence end here") == "No sentence end here"
    assert headline("Version 1.2 is fine. Really.") == "Version 1.2 is fine."


def test_a_long_headline_is_cut_with_an_ellipsis():
    cut = headline("word " * 40, width=30)
    assert len(cut) == 30 and cut.endswith("…") and cut.startswith("word word")


def test_every_event_of_a_duel_gets_a_line_saying_who_did_what(service, pair):
    alice, bob = pair
    debate_to_dissent(service, alice, bob)
    events = all_events(service, alice.duel_id)
    names = {alice.id: "Alice", bob.id: "Bob"}
    headlines = {1: "On fifteen-minute leases (turn 1): short leases bound how long a crashed holder blocks its peer."}
    lines = [event_line(e, names, headlines) for e in events]
    texts = [line.text for line in lines]
    assert [line.seq for line in lines] == list(range(len(events)))
    assert [line.ts for line in lines] == [e.ts for e in events]
    waiting, acquired = events[1].data, events[3].data
    assert isinstance(waiting, ParticipantWaiting) and isinstance(acquired, LockAcquired)
    expires = acquired.expires_at
    assert texts[:4] == [
        "Alice joined seat 1 (claude-code / claude-x)",
        f"Alice waits for every seat to be taken until {waiting.until}",
        "Bob joined seat 2 (codex / gpt-x)",
        f"Alice holds the floor (lease 1, until {expires})",
    ]
    assert texts[4].startswith("Alice refreshed lease 1 until ")
    assert texts[5].startswith("a draft of turn 1 by Alice was rejected: ")  # the codes: the test below
    assert texts[6] == f"turn 1 by Alice (DISSENTING): {headlines[1]} [removed fence]"
    assert texts[7] == "Alice released the floor (lease 1)"
    assert texts[8] == (
        "Alice's model on turn 1: input 2,000 tokens (800 read from the cache), 340 out, 12.3 s, 1 retries"
    )
    assert texts[9].startswith("Bob holds the floor (lease 2, until ")
    assert texts[10] == "turn 2 by Bob (DISSENTING)"  # no headline known: the turn alone
    assert texts[-2:] == ["Bob released the floor (lease 2)", "Bob closed the duel: DISSENT (no common ground)"]


def test_a_model_that_failed_is_named_with_its_seat_turn_and_error(service, pair):
    alice, _bob = pair
    service.record_provider_failure(alice.seat, 1, "PROVIDER_REJECTED", "anthropic rejected the request (HTTP 400)")
    failed = all_events(service, alice.duel_id)[-1]
    assert event_line(failed, {alice.id: "Alice"}, {}).text == (
        "Alice's model failed writing turn 1 (PROVIDER_REJECTED): anthropic rejected the request (HTTP 400); "
        "seat 1 stopped, and its turn times out at its deadline unless it is run again"
    )


def test_a_person_who_aborted_is_said_to_have_aborted_not_a_model_to_have_failed(service, pair):
    alice, _bob = pair
    service.record_provider_failure(alice.seat, 1, "HUMAN_ABORTED", "the editor exited with status 1")
    failed = all_events(service, alice.duel_id)[-1]
    assert event_line(failed, {alice.id: "Alice"}, {}).text == (
        "Alice aborted writing turn 1 (HUMAN_ABORTED): the editor exited with status 1; "
        "seat 1 stopped, and its turn times out at its deadline unless it is run again"
    )


def test_a_seat_stopped_at_its_money_cap_is_said_to_have_reached_it_not_a_model_to_have_failed(service, pair):
    alice, _bob = pair
    spent = "spent $1.0030 of its $1.1000 cap (--budget-usd) on claude-x"
    service.record_provider_failure(alice.seat, 3, "BUDGET_EXCEEDED", spent)
    failed = all_events(service, alice.duel_id)[-1]
    assert event_line(failed, {alice.id: "Alice"}, {}).text == (
        f"Alice reached its money cap writing turn 3 (BUDGET_EXCEEDED): {spent}; "
        "seat 1 stopped, and its turn times out at its deadline unless it is run again"
    )


def test_input_is_one_figure_with_its_cached_and_cache_written_parts_in_brackets(service, pair):
    alice, _bob = pair
    service.record_usage(
        alice.seat,
        1,
        Usage(input_tokens=41, output_tokens=900, cache_write_tokens=3097, seconds=2.0, output_estimated=True),
    )
    used = all_events(service, alice.duel_id)[-1]
    assert event_line(used, {alice.id: "Alice"}, {}).text == (
        "Alice's model on turn 1: input 3,138 tokens (3,097 written to the cache), ~900 out, 2.0 s"
    )


def test_a_rejected_draft_line_names_the_violated_rules(service, pair):
    alice, _bob = pair
    lease = claim(service, alice)
    with pytest.raises(DuelError) as refused:
        service.append(alice.seat, lease, "## Turn 1 — Alice (claude-code / claude-x) — DISSENTING\n")
    codes = sorted({v["code"] for v in refused.value.details["violations"]})
    rejected = all_events(service, alice.duel_id)[-1]
    assert (
        event_line(rejected, {alice.id: "Alice"}, {}).text
        == f"a draft of turn 1 by Alice was rejected: {', '.join(codes)}"
    )


def test_a_draft_duel_join_rejected_is_shown_rejected_with_its_repair(service, pair):
    alice, bob = pair
    # `duel join` checks its drafts before appending: the repair's usage event names the codes the draft before broke.
    service.record_usage(alice.seat, 1, Usage(input_tokens=10, output_tokens=20, requests=1, seconds=1.0))
    service.record_usage(
        alice.seat, 1, Usage(input_tokens=10, output_tokens=20, requests=1, seconds=1.0), repair_codes=("SECTIONS",)
    )
    person = Provenance(provider="human", requested_model="human", served_model=None, reasoning=None)
    service.record_usage(bob.seat, 2, Usage(seconds=30.0), provenance=person, repair_codes=("CITATIONS", "STANCE"))
    first, repair, persons = (
        event_line(e, {alice.id: "Alice", bob.id: "Bob"}, {}).text for e in all_events(service, alice.duel_id)[-3:]
    )
    assert first == "Alice's model on turn 1: input 10 tokens, 20 out, 1.0 s"
    assert (
        repair
        == "a draft of turn 1 by Alice was rejected: SECTIONS; Alice's model on turn 1: input 10 tokens, 20 out, 1.0 s"
    )
    assert persons == (
        "a draft of turn 2 by Bob was rejected: CITATIONS, STANCE; Bob (human) wrote a draft of turn 2 in 30.0 s"
    )


def logged(kind: str, data: dict, seq: int = 4, participant_id: str | None = None) -> Event:
    """An event as a reader of the log gets it."""
    return Event.from_json(
        {"seq": seq, "ts": TS, "type": kind, "duel_id": "d", "participant_id": participant_id, "data": data}
    )


def test_an_unknown_or_malformed_event_is_shown_as_its_type_and_data():
    unknown = logged("future_thing", {"x": 1})
    assert event_line(unknown, {}, {}).text == 'future_thing {"x": 1}'
    broken = logged("lock_acquired", {"fence": 2}, participant_id="p-00000000")
    assert event_line(broken, {}, {}).text == 'lock_acquired {"fence": 2}'
    assert (
        event_line(logged("record_invalidated", {"reason": "edited"}), {}, {}).text == "the record is invalid: edited"
    )
    odd_turn = logged("turn_appended", {"turn_number": "x"}, seq=6, participant_id="p-1")
    assert event_line(odd_turn, {}, {}) == EventLine(
        seq=6, ts=TS, kind="turn_appended", text='turn_appended {"turn_number": "x"}'
    )
    late = logged("lock_refreshed", {"fence": 3, "expires_at": "later"})
    assert event_line(late, {}, {}).text == 'lock_refreshed {"fence": 3, "expires_at": "later"}'
    assert appended([odd_turn, broken, unknown]) == []  # no stance or headline is taken from them


def test_event_times_are_shown_in_the_format_given():
    event = logged("lock_refreshed", {"fence": 3, "expires_at": "2027-01-15T08:10:00.000Z"}, participant_id="p-1")
    terminal = TerminalDisplay(io.StringIO(), tz=timezone.utc)
    assert event_line(event, {"p-1": "Ada"}, {}, terminal.time_of).text == "Ada refreshed lease 3 until 08:10:00"


# -- the view's model ------------------------------------------------------------------------


def test_the_view_counts_the_lease_and_the_deadline_down_without_reading_again(service, pair, clock):
    alice, _bob = pair
    claim(service, alice)
    status = service.status(alice.duel_id)
    later = view_of(status, clock().wall + 100)
    assert later.floor == "Alice" and later.lease_left == pytest.approx(500)
    assert later.deadline_left == pytest.approx(1700)
    assert [(s.name, s.holds_floor, s.writes_next) for s in later.seats] == [
        ("Alice", True, True),
        ("Bob", False, False),
    ]
    assert situation(later, iso) == (
        f"turn 1 of 6 is Alice's, due by {iso(status.turn_deadline)} (28:20 left)",
        "floor: Alice, lease 8:20 left",
    )


def test_an_expired_lease_frees_the_floor_and_a_passed_deadline_makes_a_timeout_due(service, pair, clock):
    alice, _bob = pair
    claim(service, alice)
    status = service.status(alice.duel_id)
    expired = view_of(status, clock().wall + 600)
    assert expired.floor is None and expired.lease_left is None and not expired.seats[0].holds_floor
    assert situation(expired)[1] == "floor: free"
    overdue = view_of(status, clock().wall + 1800)
    assert situation(overdue)[0] == "turn 1 of 6 is Alice's, past its deadline: a TIMEOUT close is due"


def test_one_participant_waits_for_a_second_until_the_peer_wait_ends(service, source, clock):
    alice = join(service, source, "Alice")
    status = service.status(alice.duel_id)
    assert situation(view_of(status, clock().wall + 60))[0] == "waiting for a second participant, 14:00 left"
    assert situation(view_of(status, clock().wall + 900))[0] == "nobody came: a TIMEOUT close is due"


def test_a_reached_outcome_asks_for_a_close_and_a_closed_duel_shows_its_outcome_and_record(service, pair, clock):
    alice, bob = pair
    lease = claim(service, alice)
    service.append(alice.seat, lease, turn(1, ALICE, "DISSENTING"), release=True)
    lease = claim(service, bob)
    service.append(bob.seat, lease, turn(2, BOB, "DISSENTING"), release=True)
    pending = view_of(service.status(alice.duel_id), clock().wall, {bob.id: "DISSENTING"})
    assert situation(pending) == (
        "DISSENT reached after 2 turns: a participant must close the duel",
        "floor: Bob, lease 10:00 left",
    )
    assert not any(seat.writes_next for seat in pending.seats)
    assert [seat.stance for seat in pending.seats] == [None, "DISSENTING"]
    service.release_lock(bob.seat, lease, close=True, outcome="DISSENT", reason="no common ground")
    closed = view_of(service.status(alice.duel_id), clock().wall)
    assert closed.closed and closed.outcome == "DISSENT"
    assert situation(closed) == (
        "outcome: DISSENT after 2 of 6 turns (no common ground)",
        f"record: {closed.debate_path}",
    )


def test_a_seat_unseen_for_a_lease_is_not_present(service, pair, clock):
    alice, _bob = pair
    status = service.status(alice.duel_id)
    assert all(seat.present for seat in view_of(status, clock().wall + 599).seats)
    gone = view_of(status, clock().wall + 600)
    assert not any(seat.present for seat in gone.seats) and gone.seats[0].seen_ago == pytest.approx(600)


def test_countdowns_round_up_to_the_second():
    assert [countdown(s) for s in (0, 0.2, 59.5, 61, 3600, 3725.1, -5)] == [
        "0:00",
        "0:01",
        "1:00",
        "1:01",
        "1:00:00",
        "1:02:06",
        "0:00",
    ]


# -- reading as the duel changes ---------------------------------------------------------------


class Counting(DuelService):
    """The real service, counting the reads a watcher makes."""

    observed: list[EventCursor]

    def observe(self, duel_id, since=LOG_START):
        self.observed.append(since)
        return super().observe(duel_id, since)


def counting(debate_dir: Path, clock: ManualClock) -> Counting:
    service = Counting(debate_dir, clock=clock)
    service.observed = []
    return service


def test_the_follower_reads_only_when_the_state_changed_and_only_what_is_new(service, pair, debate_dir, clock):
    alice, _bob = pair
    watcher = counting(debate_dir, clock)
    follower = Follower(watcher, alice.duel_id)
    first = follower.poll()
    assert first is not None and [e.type for e in first.events][:3] == [
        "participant_registered",
        "participant_waiting",
        "participant_registered",
    ]
    assert follower.poll() is None and follower.poll() is None
    assert len(watcher.observed) == 1  # two polls, two stat() calls, no read
    claim(service, alice)
    seen = follower.poll()
    assert seen is not None and [e.type for e in seen.events] == ["lock_acquired"]
    assert watcher.observed[-1] == first.cursor and seen.cursor.seq == first.cursor.seq + 1


def test_a_refresh_and_a_rejected_draft_reach_the_follower_though_they_wake_no_wait(service, pair, debate_dir, clock):
    alice, _bob = pair
    lease = claim(service, alice)
    follower = Follower(DuelService(debate_dir, clock=clock), alice.duel_id)
    follower.poll()
    rev = service.debate.read_state(alice.duel_id).rev
    service.refresh_lock(alice.seat, lease)
    with pytest.raises(DuelError):
        service.append(alice.seat, lease, "not a turn")
    seen = follower.poll()
    assert seen is not None and [e.type for e in seen.events] == ["lock_refreshed", "turn_rejected"]
    assert service.debate.read_state(alice.duel_id).rev == rev  # what `wait` looks at did not move


def test_the_event_reader_seeks_from_a_cursor_and_refuses_one_past_the_log(service, pair):
    alice, _bob = pair
    claim(service, alice)
    state = service.debate.read_state(alice.duel_id)
    log = EventLog(service.debate.events_path(alice.duel_id), state)
    everything = log.read()
    offset = len((json.dumps(everything[0].to_json(), ensure_ascii=False) + "\n").encode())
    assert log.read(EventCursor(1, offset)) == everything[1:]
    assert log.read(log.end) == []
    with pytest.raises(DuelError) as past:
        log.read(EventCursor(99, state.event_bytes + 10))
    assert past.value.code == "STATE_CORRUPT"
    with pytest.raises(DuelError) as misplaced:
        log.read(EventCursor(2, offset))
    assert misplaced.value.code == "STATE_CORRUPT"
    path = service.debate.events_path(alice.duel_id)
    path.write_bytes(path.read_bytes()[:offset] + b"[]" + b" " * (state.event_bytes - offset - 3) + b"\n")
    with pytest.raises(DuelError) as not_an_object:
        log.read(EventCursor(1, offset))
    assert not_an_object.value.code == "STATE_CORRUPT"


class Recorder:
    """A display that keeps what it was shown."""

    def __init__(self):
        self.lines: list[EventLine] = []
        self.views: list[WatchView] = []
        self.closed: WatchView | None = None
        self.stopped = False

    def time_of(self, moment: float) -> str:
        return iso(moment)

    def event(self, line: EventLine) -> None:
        self.lines.append(line)

    def show(self, view: WatchView) -> None:
        self.views.append(view)

    def pause(self) -> None:
        pass

    def close(self, view: WatchView) -> None:
        self.closed = view

    def stop(self) -> None:
        self.stopped = True


def test_follow_shows_the_history_then_each_change_until_the_close(service, pair, debate_dir, clock):
    alice, bob = pair
    steps = iter(
        [
            lambda: claim(service, alice),
            lambda: None,  # nothing changes: no line, no read
            lambda: service.append(
                alice.seat, service.claim_lock(alice.seat).lease, turn(1, ALICE, "DISSENTING"), release=True
            ),
            lambda: service.append(bob.seat, claim(service, bob), turn(2, BOB, "DISSENTING")),
            lambda: service.release_lock(bob.seat, service.claim_lock(bob.seat).lease, close=True, outcome="DISSENT"),
        ]
    )
    shown_at: list[int] = []

    def sleep(_seconds: float) -> None:
        shown_at.append(len(display.lines))
        next(steps)()
        clock.advance(0.5)

    display = Recorder()
    last = follow(DuelService(debate_dir, clock=clock), alice.duel_id, display, sleep=sleep)
    assert last.closed and last.outcome == "DISSENT" and display.closed == last and display.stopped
    assert shown_at[:2] == [3, 4] and shown_at[2] == 4  # the history first, then one grant, then nothing new
    kinds = [line.kind for line in display.lines]
    assert kinds[3:] == [
        "lock_acquired",
        "turn_appended",
        "lock_released",
        "lock_acquired",
        "turn_appended",
        "lock_released",
        "duel_closed",
    ]
    turn_1 = display.lines[4].text
    assert turn_1.startswith("turn 1 by Alice (DISSENTING): On fifteen-minute leases (turn 1): short leases")
    assert [s.stance for s in last.seats] == ["DISSENTING", "DISSENTING"]


def test_follow_on_a_closed_duel_shows_its_history_and_outcome_at_once(service, pair, debate_dir, clock):
    alice, bob = pair
    debate_to_dissent(service, alice, bob)
    display = Recorder()

    def never(_seconds: float) -> None:
        raise AssertionError("a closed duel is not waited on")

    last = follow(DuelService(debate_dir, clock=clock), alice.duel_id, display, sleep=never)
    assert display.closed == last and last.outcome == "DISSENT"
    assert len(display.lines) == len(all_events(service, alice.duel_id)) and display.views == []


def test_watch_on_a_duel_that_agreed_a_revision_ends_saying_it_its_patch_and_how_to_apply_it(
    service, pair, debate_dir, capsys
):
    path, revision = agreed_on_an_edit(service, *pair)
    with pytest.raises(SystemExit) as done:
        main(["watch", "--debate-dir", str(debate_dir), "--duel-id", pair[0].duel_id])
    out, err = capsys.readouterr()
    assert done.value.code == 0
    assert f"outcome: ACCEPTED_CONSENSUS after 3 of 6 turns; record: {path}" in out
    patch = path.with_name(f"{pair[0].duel_id}.revision.patch")
    assert err.splitlines()[:3] == [f"revision: {revision}", f"patch: {patch}", f"apply it: duel apply {path}"]


def test_following_a_duel_writes_nothing(service, pair, debate_dir, clock):
    alice, bob = pair
    debate_to_dissent(service, alice, bob)
    before = tree_snapshot(debate_dir)
    follow(DuelService(debate_dir, clock=clock), pick_duel(service, alice.duel_id), Recorder())
    assert tree_snapshot(debate_dir) == before


# -- choosing the duel -------------------------------------------------------------------------


def test_without_an_id_watch_picks_the_only_active_duel(service, pair, tmp_path):
    alice, bob = pair
    assert pick_duel(service, None) == alice.duel_id
    debate_to_dissent(service, alice, bob)
    with pytest.raises(DuelError) as none:
        pick_duel(service, None)
    assert none.value.code == "DUEL_NOT_FOUND" and none.value.details["candidates"] == [alice.duel_id]
    assert none.value.message.endswith(
        f": pass --duel-id to watch a closed one, {alice.duel_id} (duel list shows them all)"
    )
    assert pick_duel(service, alice.duel_id) == alice.duel_id  # a closed duel, named


def test_without_an_id_several_active_duels_are_refused_by_name(service, pair, tmp_path):
    alice, _bob = pair
    other = tmp_path / "other.md"
    other.write_text(SOURCE, encoding="utf-8")
    carol = join(service, other, "Carol")
    with pytest.raises(DuelError) as several:
        pick_duel(service, None)
    assert several.value.code == "INVALID_ARGUMENT"
    assert several.value.details["candidates"] == sorted([alice.duel_id, carol.duel_id])
    assert alice.duel_id in several.value.message and carol.duel_id in several.value.message


# -- the two displays --------------------------------------------------------------------------


def test_the_plain_display_writes_one_flushed_line_per_event_and_no_ansi_codes(service, pair, clock):
    alice, bob = pair
    debate_to_dissent(service, alice, bob)
    out = io.StringIO()
    follow(service, alice.duel_id, PlainDisplay(out))
    lines = out.getvalue().splitlines()
    events = all_events(service, alice.duel_id)
    assert len(lines) == len(events) + 1 and not ANSI.search(out.getvalue())
    assert all(line.startswith(event.ts + " ") for line, event in zip(lines, events, strict=False))
    assert lines[-1].startswith("outcome: DISSENT after 2 of 6 turns (no common ground); record: ")


def test_the_terminal_panel_shows_seats_stances_floor_and_countdowns(service, pair, clock):
    from rich.console import Console

    alice, _bob = pair
    lease = claim(service, alice)
    service.append(alice.seat, lease, turn(1, ALICE, "DISSENTING"))
    view = view_of(service.status(alice.duel_id), clock().wall + 30, {alice.id: "DISSENTING"})
    console = Console(record=True, width=100, file=io.StringIO())
    console.print(TerminalDisplay(io.StringIO(), tz=timezone.utc).panel(view))
    text = console.export_text()
    assert "Lease design" in text and alice.duel_id in text
    assert re.search(r"▶ 1\s+Alice\s+claude-code / claude-x\s+DISSENTING\s+30s ago", text)
    assert re.search(r"  2\s+Bob\s+codex / gpt-x\s+—\s+30s ago", text)
    assert "turn 2 of 6 is Bob's, due by" in text and "floor: Alice, lease 9:30 left" in text  # not released yet


# -- `duel watch` as a real process -------------------------------------------------------------


def duel_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "rp1_duel", *args]


def process_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUEL_") and k != "PYTHONUNBUFFERED"}  # flushes
    env.update(TZ="UTC", COLUMNS="120", LINES="40", TERM="xterm-256color")
    return env


class Lines:
    """A process's standard output, line by line, as it comes."""

    def __init__(self, proc: subprocess.Popen[str]):
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        assert proc.stdout is not None
        stream = proc.stdout

        def pump() -> None:
            for line in stream:
                self.queue.put(line.rstrip("\n"))
            self.queue.put(None)

        threading.Thread(target=pump, daemon=True).start()

    def until(self, pattern: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            self.seen.append(line)
            if re.search(pattern, line):
                return line
        raise AssertionError(f"no line matching {pattern!r} in {self.seen}")


def tools_join(source: Path, debate_dir: Path, name: str, harness: str, model: str) -> dict:
    return run_tools(
        "join",
        "--target",
        str(source),
        "--participant-name",
        name,
        "--harness",
        harness,
        "--model-id",
        model,
        debate_dir=debate_dir,
    ).data


def as_participant(joined: dict, *args: str, debate_dir: Path, lease: str | None = None, stdin: bytes | None = None):
    env = {"DUEL_PARTICIPANT_TOKEN": joined["participant_token"], **({"DUEL_LEASE_TOKEN": lease} if lease else {})}
    return run_tools(
        *args,
        "--duel-id",
        joined["duel_id"],
        "--participant-id",
        joined["participant_id"],
        debate_dir=debate_dir,
        env=env,
        stdin=stdin,
    )


@pytest.mark.slow
def test_watch_through_a_pipe_prints_each_event_as_it_lands_and_exits_0_at_the_close(source, debate_dir):
    alice = tools_join(source, debate_dir, *ALICE)
    proc = subprocess.Popen(
        duel_command("watch", "--debate-dir", str(debate_dir)),
        stdin=subprocess.DEVNULL,  # no keyboard: the test's terminal, if any, is left alone
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=process_env(),
    )
    try:
        out = Lines(proc)
        out.until(r"Alice waits for every seat to be taken")
        bob = tools_join(source, debate_dir, *BOB)
        out.until(r"Bob joined seat 2 \(codex / gpt-x\)$")  # seen live, before the duel ends
        lease = as_participant(alice, "claim-lock", debate_dir=debate_dir).data["lease_token"]
        out.until(r"Alice holds the floor \(lease 1, until ")
        as_participant(alice, "refresh-lock", debate_dir=debate_dir, lease=lease)
        out.until(r"Alice refreshed lease 1 until ")
        rejected = as_participant(alice, "append", debate_dir=debate_dir, lease=lease, stdin=b"## Turn 1\n")
        assert rejected.code == 3
        codes = sorted({v["code"] for v in rejected.error["details"]["violations"]})
        out.until(re.escape(f"a draft of turn 1 by Alice was rejected: {', '.join(codes)}"))
        as_participant(
            alice,
            "append",
            "--release",
            debate_dir=debate_dir,
            lease=lease,
            stdin=turn(1, ALICE, "DISSENTING").encode(),
        )
        position = "On fifteen-minute leases (turn 1): short leases bound how long a crashed holder blocks its peer."
        out.until(re.escape(f"turn 1 by Alice (DISSENTING): {headline(position)}") + "$")
        lease = as_participant(bob, "claim-lock", debate_dir=debate_dir).data["lease_token"]
        as_participant(bob, "append", debate_dir=debate_dir, lease=lease, stdin=turn(2, BOB, "DISSENTING").encode())
        out.until(r"turn 2 by Bob \(DISSENTING\): On refreshing while working")
        as_participant(bob, "release-lock", "--close", "--outcome", "DISSENT", debate_dir=debate_dir, lease=lease)
        out.until(r"Bob closed the duel: DISSENT$")
        last = out.until(r"^outcome: ")
        assert proc.wait(timeout=10) == 0
        assert proc.stderr is not None
        assert proc.stderr.read() == f"review: duel report {alice['debate_path']} --format html -o report.html\n"
    finally:
        stop(proc)
    assert last == f"outcome: DISSENT after 2 of 6 turns; record: {debate_dir / alice['duel_id']}.md"
    stamped = [line for line in out.seen if not line.startswith("outcome: ")]
    assert all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ", line) for line in stamped)
    assert not any(ANSI.search(line) for line in out.seen)


def read_pty(master: int, proc: subprocess.Popen[bytes], timeout: float) -> bytes:
    """Everything written to the pseudo-terminal until the process exits."""
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed its side
                break
            if not chunk:
                break
            chunks.append(chunk)
        elif proc.poll() is not None:
            break
    return b"".join(chunks)


@pytest.mark.slow
def test_watch_on_a_terminal_shows_the_live_view_and_exits_0_at_the_close(tmp_path, debate_dir):
    examples = Path(watch.__file__).parent.parent / "participant" / "examples"
    source = tmp_path / "build-cache.md"
    shutil.copyfile(examples / "build-cache.md", source)

    def player(name: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            duel_command(
                "join",
                "--target",
                str(source),
                "--debate-dir",
                str(debate_dir),
                "--name",
                name,
                "--model",
                f"scripted:{examples / name.lower()}",
                "--quiet",
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=process_env(),
        )

    ada = player("Ada")
    reader = DuelService(debate_dir)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not (reader.debate.state_root.exists() and reader.latest_duel_ids()):
        time.sleep(0.05)
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    watcher = subprocess.Popen(
        duel_command("watch", "--debate-dir", str(debate_dir)),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=process_env(),
        close_fds=True,
    )
    os.close(slave)
    brook = None
    try:
        time.sleep(1.0)  # the live view is drawn before the peer comes
        brook = player("Brook")
        screen = read_pty(master, watcher, timeout=60).decode("utf-8", "replace")
        assert watcher.wait(timeout=10) == 0
        assert ada.wait(timeout=30) == 0 and brook.wait(timeout=30) == 0
    finally:
        for proc in (ada, brook, watcher):
            if proc is not None:
                stop(proc)
        os.close(master)
    assert ANSI.search(screen), "a terminal gets the live view"
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen)
    assert "Shared build cache: eviction policy" in plain
    assert re.search(r"1\s+Ada\s+duel / scripted:ada", plain) and re.search(r"2\s+Brook\s+duel / scripted:brook", plain)
    assert "waiting for a second participant" in plain
    assert re.search(r"turn 5 by Ada \(ACCEPTING_CONSENSUS\): Consensus", plain)
    assert "outcome: ACCEPTED_CONSENSUS after 5 of 6 turns" in plain


@pytest.mark.slow
def test_watching_an_open_duel_changes_none_of_its_files_and_ctrl_c_exits_130(source, debate_dir):
    alice = tools_join(source, debate_dir, *ALICE)
    tools_join(source, debate_dir, *BOB)
    as_participant(alice, "claim-lock", debate_dir=debate_dir)
    before = tree_snapshot(debate_dir)
    proc = subprocess.Popen(
        duel_command("watch", "--debate-dir", str(debate_dir), "--duel-id", alice["duel_id"]),
        stdin=subprocess.DEVNULL,  # no keyboard: the test's terminal, if any, is left alone
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=process_env(),
    )
    out = Lines(proc)
    out.until(r"Alice holds the floor")
    time.sleep(1.5)  # a second and a half of polling
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=10) == 130
    stop(proc)
    assert tree_snapshot(debate_dir) == before


@pytest.mark.slow
def test_watch_without_an_id_names_the_active_duels_or_says_there_is_none(source, debate_dir, tmp_path):
    empty = tmp_path / "nothing-here"
    proc = subprocess.run(
        duel_command("watch", "--debate-dir", str(empty)), capture_output=True, text=True, env=process_env(), timeout=30
    )
    assert proc.returncode == 1 and proc.stderr.startswith("duel: DUEL_NOT_FOUND: no duel state in ")
    assert not empty.exists()  # watching creates nothing
    first = tools_join(source, debate_dir, *ALICE)
    other = tmp_path / "other.md"
    other.write_text(SOURCE, encoding="utf-8")
    second = tools_join(other, debate_dir, *BOB)
    proc = subprocess.run(
        duel_command("watch", "--debate-dir", str(debate_dir)),
        capture_output=True,
        text=True,
        env=process_env(),
        timeout=30,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("duel: INVALID_ARGUMENT: 2 duels are active in ")
    assert first["duel_id"] in proc.stderr and second["duel_id"] in proc.stderr
