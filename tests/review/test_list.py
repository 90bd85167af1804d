"""`duel list`: every duel of a debate dir with its status, outcome, participants, turns and
last activity; an open duel nobody has been seen in for a lease is flagged silent. Pure rows
on a manual clock, then `duel list` as a real process on real debate dirs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timezone
from pathlib import Path

import pytest

from rp1_duel.clock import ManualClock
from rp1_duel.coordination import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.review.listing import ListedDuel, UnreadableDuel, ago, duels_table, list_duels, listed

from helpers import SOURCE, Player, claim, clock_in_the_past, join, make_turn, tree_snapshot

HOUR = 3600.0


def seated(service: DuelService, folder: Path, name: str, topic: str) -> tuple[Player, Player]:
    """A new duel about its own source ``folder/name/design.md``, two participants seated."""
    source = folder / name / "design.md"
    source.parent.mkdir()
    source.write_text(SOURCE, encoding="utf-8")
    return (
        join(service, source, "Alice", harness="claude-code", model_id="claude-x", topic=topic),
        join(service, source, "Bob", harness="codex", model_id="gpt-x", topic=topic),
    )


def closed_in_dissent(service: DuelService, alice: Player, bob: Player) -> None:
    lease = claim(service, alice)
    service.append(alice.seat, lease, make_turn(1, "Alice", "claude-code", "claude-x", "DISSENTING"), release=True)
    lease = claim(service, bob)
    service.append(bob.seat, lease, make_turn(2, "Bob", "codex", "gpt-x", "DISSENTING"))
    service.release_lock(bob.seat, lease, close=True, outcome="DISSENT")


def three_duels(debate_dir: Path, folder: Path, clock: ManualClock) -> dict[str, str]:
    """An hour ago: a duel closed in dissent, and one left open after turn 1 (silent now).
    Now: a fresh duel, both present. Returns their ids by name."""
    service = DuelService(debate_dir, clock=clock)
    closed = seated(service, folder, "closed", "Closed one")
    closed_in_dissent(service, *closed)
    silent = seated(service, folder, "silent", "Silent one")
    service.append(
        silent[0].seat, claim(service, silent[0]), make_turn(1, "Alice", "claude-code", "claude-x"), release=True
    )
    clock.advance(HOUR)
    active = seated(service, folder, "active", "Active one")
    return {"closed": closed[0].duel_id, "silent": silent[0].duel_id, "active": active[0].duel_id}


# -- rows on a manual clock ------------------------------------------------------------------


def test_an_open_duel_nobody_was_seen_in_for_a_lease_is_silent(service, pair, clock):
    alice, _bob = pair
    status = service.status(alice.duel_id)
    assert not listed(status, clock()).silent
    clock.advance(599.9)
    assert not listed(status, clock()).silent
    clock.advance(0.1)
    row = listed(status, clock())
    assert row.silent and row.idle_seconds == pytest.approx(600) and not any(p.present for p in row.participants)


def test_one_participant_seen_keeps_a_duel_from_being_silent(service, pair, clock):
    alice, _bob = pair
    clock.advance(HOUR)
    service.status(alice.duel_id, participant_id=alice.id, participant_token=alice.token)  # a mark: Alice is here
    row = listed(service.status(alice.duel_id), clock())
    assert not row.silent and [p.present for p in row.participants] == [True, False]
    assert row.last_activity_at == clock().wall and row.idle_seconds == 0


def test_a_closed_duel_is_never_silent_and_its_last_activity_is_its_close(service, pair, clock):
    alice, bob = pair
    clock.advance(10)
    closed_in_dissent(service, alice, bob)
    clock.advance(HOUR)
    row = listed(service.status(alice.duel_id), clock())
    assert row.status == "closed" and row.outcome == "DISSENT" and row.pending_outcome is None and not row.silent
    assert row.last_activity_at == pytest.approx(clock().wall - HOUR) and row.turn_count == 2


def test_setting_the_wall_clock_forward_makes_no_duel_silent(service, pair, clock):
    alice, _bob = pair
    clock.set_wall(HOUR)  # NTP, a person: no time passed on the monotonic clock
    row = listed(service.status(alice.duel_id), clock())
    assert not row.silent and row.idle_seconds < 1


def test_durations_are_said_as_people_say_them():
    assert [ago(s) for s in (0, 59.9, 60, 3599, 3600, 86399, 86400 * 3, -4)] == [
        "0s",
        "59s",
        "1m",
        "59m",
        "1h",
        "23h",
        "3d",
        "0s",
    ]


def test_the_table_aligns_its_columns_and_flags_silent_duels(debate_dir, tmp_path):
    clock = ManualClock(1_800_000_000.0)
    ids = three_duels(debate_dir, tmp_path, clock)
    clock.advance(5)
    rows = list_duels(DuelService(debate_dir, clock=clock))
    assert [row.duel_id for row in rows] == [ids["closed"], ids["silent"], ids["active"]]  # oldest first
    lines = duels_table(rows, tz=timezone.utc).splitlines()
    assert lines[0].split() == ["DUEL", "STATUS", "OUTCOME", "TURNS", "PARTICIPANTS", "LAST", "ACTIVITY"]
    assert lines[1].split() == [
        ids["closed"],
        "closed",
        "DISSENT",
        "2/6",
        "Alice,",
        "Bob",
        "2027-01-15",
        "08:00",
        "(1h",
        "ago)",
    ]
    assert lines[2].split() == [
        ids["silent"],
        "open",
        "—",
        "1/6",
        "Alice,",
        "Bob",
        "2027-01-15",
        "08:00",
        "(1h",
        "ago)",
        "SILENT",
    ]
    assert lines[3].split() == [
        ids["active"],
        "open",
        "—",
        "0/6",
        "Alice,",
        "Bob",
        "2027-01-15",
        "09:00",
        "(5s",
        "ago)",
    ]
    column = lines[0].index("STATUS")
    assert [line[column:].split()[0] for line in lines[1:]] == ["closed", "open", "open"]  # aligned


def test_a_reached_outcome_not_yet_closed_is_listed_as_pending(service, pair, clock):
    alice, bob = pair
    lease = claim(service, alice)
    service.append(alice.seat, lease, make_turn(1, "Alice", "claude-code", "claude-x", "DISSENTING"), release=True)
    service.append(bob.seat, claim(service, bob), make_turn(2, "Bob", "codex", "gpt-x", "DISSENTING"))
    rows = list_duels(service)
    assert isinstance(rows[0], ListedDuel) and rows[0].pending_outcome == "DISSENT" and rows[0].outcome is None
    assert "DISSENT pending" in duels_table(rows).splitlines()[1]


def test_an_unreadable_state_is_listed_with_its_error_and_a_folder_without_state_is_not(service, pair, debate_dir):
    alice, _bob = pair
    (debate_dir / ".duel" / "duels" / alice.duel_id / "state.json").write_text("{not json")
    (debate_dir / ".duel" / "duels" / "2027-01-15-being-created").mkdir()
    rows = list_duels(service)
    assert len(rows) == 1 and isinstance(rows[0], UnreadableDuel) and rows[0].code == "STATE_CORRUPT"
    assert rows[0].to_dict() == {
        "duel_id": alice.duel_id,
        "status": "unreadable",
        "error": {"code": "STATE_CORRUPT", "message": rows[0].message},
    }


def test_a_debate_dir_that_is_a_file_is_refused_and_one_without_state_has_no_duels(tmp_path):
    not_a_folder = tmp_path / "debates"
    not_a_folder.write_text("")
    with pytest.raises(DuelError) as refused:
        list_duels(DuelService(not_a_folder))
    assert refused.value.code == "DEBATE_DIR_INVALID"
    (tmp_path / "nothing").mkdir()
    assert list_duels(DuelService(tmp_path / "nothing")) == [] and not any((tmp_path / "nothing").iterdir())


# -- `duel list` as a real process -------------------------------------------------------------


def duel_list(debate_dir: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUEL_")}
    return subprocess.run(
        [sys.executable, "-m", "rp1_duel", "list", "--debate-dir", str(debate_dir), *flags],
        capture_output=True,
        text=True,
        env={**env, "TZ": "UTC"},
        timeout=60,
    )


@pytest.mark.slow
def test_duel_list_json_gives_every_duel_with_status_outcome_participants_turns_and_activity(debate_dir, tmp_path):
    ids = three_duels(debate_dir, tmp_path, clock_in_the_past(HOUR))
    before = tree_snapshot(debate_dir)
    proc = duel_list(debate_dir, "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {row["duel_id"]: row for row in json.loads(proc.stdout)}
    assert list(rows) == [ids["closed"], ids["silent"], ids["active"]]
    closed, silent, active = rows[ids["closed"]], rows[ids["silent"]], rows[ids["active"]]
    assert closed["status"] == "closed" and closed["outcome"] == "DISSENT" and not closed["silent"]
    assert closed["turn_count"] == 2 and closed["max_turns"] == 6 and closed["topic"] == "Closed one"
    assert silent["status"] == "open" and silent["outcome"] is None and silent["turn_count"] == 1
    assert silent["silent"] and silent["idle_seconds"] >= HOUR - 5
    assert not any(p["present"] for p in silent["participants"])
    assert active["status"] == "open" and not active["silent"] and active["idle_seconds"] < 60
    assert [
        (p["seat"], p["display_name"], p["harness"], p["model_id"], p["present"]) for p in active["participants"]
    ] == [(1, "Alice", "claude-code", "claude-x", True), (2, "Bob", "codex", "gpt-x", True)]
    assert set(active) == {
        "duel_id",
        "topic",
        "status",
        "outcome",
        "pending_outcome",
        "turn_count",
        "max_turns",
        "participants",
        "created_at",
        "last_activity_at",
        "idle_seconds",
        "silent",
        "debate_path",
    }
    assert active["debate_path"] == str(debate_dir / f"{ids['active']}.md")
    assert tree_snapshot(debate_dir) == before  # listing writes nothing


@pytest.mark.slow
def test_duel_list_prints_a_table_flagging_the_silent_duel(debate_dir, tmp_path):
    ids = three_duels(debate_dir, tmp_path, clock_in_the_past(HOUR))
    proc = duel_list(debate_dir)
    assert proc.returncode == 0 and proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("DUEL") and len(lines) == 4
    flagged = [line.split()[0] for line in lines[1:] if line.endswith("SILENT")]
    assert flagged == [ids["silent"]]


@pytest.mark.slow
def test_duel_list_of_a_dir_without_duels_says_so_and_creates_nothing(tmp_path):
    empty = tmp_path / "debates"
    empty.mkdir()
    proc = duel_list(empty, "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout) == [] and not any(empty.iterdir())
    proc = duel_list(empty)
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == f"no duels in {empty}\n"


@pytest.mark.slow
def test_duel_list_lists_an_unreadable_duel_and_exits_1(service, pair, debate_dir):
    alice, _bob = pair
    (debate_dir / ".duel" / "duels" / alice.duel_id / "state.json").write_text("[]")
    proc = duel_list(debate_dir)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[1].split()[:3] == [alice.duel_id, "unreadable", "STATE_CORRUPT"]
