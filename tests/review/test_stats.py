"""`duel stats` counts the duels of a folder together (docs/protocol.md section 11, "`duel stats`").

A dozen duels of known outcomes are played through the lock service into one debate dir (tests/helpers.py),
two of them with recorded usage under a price table of the test's, one with a verification sidecar holding a
fabricated citation; beside them an artifact that cannot be read and a Markdown file that is no artifact. The
command runs as a real process; every expected number is worked out by hand from the table below.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_panels import play, seat_panel
from test_report_decision import write_sidecar
from test_report_openings import ACCEPT, CONV, DISS, OPEN, played, timed_out

from rp1_duel.coordination import Provenance, Usage
from rp1_duel.review.stats import read_stats, stats_table
from rp1_duel.vocabulary import ACCEPTED_CONSENSUS

from helpers import claim, join, make_turn, panel

FABRICATED = "https://example.org/no-such-study"
# duel: stances → outcome, turns, the openings' verdict → what the debate did to it
#  1  CONV CONV ACCEPT ACCEPT               ACCEPTED_CONSENSUS 4  unanimous accept  kept     cost $3 (recorded)
#  2  CONV DISS ACCEPT ACCEPT               ACCEPTED_CONSENSUS 4  split             decided  cost $1 (recorded)
#  3  OPEN OPEN ACCEPT ACCEPT               ACCEPTED_CONSENSUS 4  all undecided     decided  cost unknown (no usage)
#  4  DISS DISS                             DISSENT            2  unanimous reject  kept     Bob cites a fabricated URL
#  5  CONV CONV DISS DISS                   DISSENT            4  unanimous accept  reversed
#  6  OPEN OPEN DISS DISS                   DISSENT            4  all undecided     decided
#  7  OPEN × 6                              MAX_TURNS          6  all undecided     kept
#  8  CONV CONV OPEN × 4                    MAX_TURNS          6  unanimous accept  undone
#  9  OPEN OPEN, then a timeout             TIMEOUT            2                    unknown
# 10  DISS, then abandoned                  INVALIDATED        1  incomplete        unknown
# 11  panel of 3: CONV CONV DISS ACCEPT × 3 ACCEPTED_CONSENSUS 6  majority accept   kept
# 12  CONV, still open                      open               1                    unknown


def a_dozen_duels(service, source, clock) -> Path:
    """The duels of the table above, and beside them an unreadable artifact and a file that is none; the first duel's artifact."""
    first, players = played(service, source, [CONV, CONV, ACCEPT, ACCEPT])
    service.record_usage(players[1].seat, 1, Usage(input_tokens=1_000_000, requests=2, repairs=1))  # $1
    service.record_usage(players[2].seat, 2, Usage(input_tokens=1_000_000, requests=1))  # $2
    _, players = played(service, source, [CONV, DISS, ACCEPT, ACCEPT])
    service.record_usage(players[1].seat, 1, Usage(input_tokens=500_000, requests=1))  # $0.50
    service.record_usage(players[2].seat, 2, Usage(input_tokens=250_000, requests=1, repairs=2))  # $0.50
    played(service, source, [OPEN, OPEN, ACCEPT, ACCEPT])
    fourth, _ = played(service, source, [DISS, DISS], citing={2: (FABRICATED,)})
    write_sidecar(fourth, fabricated={FABRICATED})
    played(service, source, [CONV, CONV, DISS, DISS])
    played(service, source, [OPEN, OPEN, DISS, DISS])
    played(service, source, [OPEN] * 6)
    played(service, source, [CONV, CONV, OPEN, OPEN, OPEN, OPEN])
    timed_out(service, played(service, source, [OPEN, OPEN])[1], clock)
    _, players = played(service, source, [DISS])
    service.abandon(players[1].duel_id, reason="nobody came back")
    seats = seat_panel(service, source)
    play(service, seats, CONV, CONV, DISS, ACCEPT, ACCEPT, ACCEPT)
    closer = seats[panel(3).speaker(6)]
    service.release_lock(closer.seat, claim(service, closer), close=True, outcome=ACCEPTED_CONSENSUS)
    played(service, source, [CONV])
    root = first.parent
    (root / "broken.md").write_bytes(b"---\nduel_id: broken\n---\n\xff\xfe not UTF-8\n")
    (root / "notes.md").write_text("# Notes\n\nNot a duel.\n", encoding="utf-8")
    return first


def duel_stats(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps({"date": "2027-01-01", "models": {"claude-x": {"input": 1.0}, "gpt-x": {"input": 2.0}}}),
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUEL_")}
    return subprocess.run(
        [sys.executable, "-m", "rp1_duel", "stats", *args],
        capture_output=True,
        text=True,
        env={**env, "DUEL_PRICES": str(prices)},
        timeout=120,
    )


@pytest.mark.slow
def test_duel_stats_json_counts_a_dozen_duels_and_names_the_unreadable_one(
    service, source, clock, debate_dir, tmp_path
):
    first_path = a_dozen_duels(service, source, clock)
    proc = duel_stats(tmp_path, str(debate_dir), "--json")
    assert proc.returncode == 1, proc.stderr  # an artifact could not be read
    assert "Traceback" not in proc.stderr
    data = json.loads(proc.stdout)
    assert data["count"] == 12
    assert [(row["outcome"], row["duels"], row["turns"], row["cost_usd"]) for row in data["outcomes"]] == [
        ("ACCEPTED_CONSENSUS", 4, {"known": 4, "mean": 4.5, "median": 4.0}, {"known": 2, "mean": 2.0, "median": 2.0}),
        ("DISSENT", 3, {"known": 3, "mean": 3.333333, "median": 4.0}, {"known": 0, "mean": None, "median": None}),
        ("MAX_TURNS", 2, {"known": 2, "mean": 6.0, "median": 6.0}, {"known": 0, "mean": None, "median": None}),
        ("TIMEOUT", 1, {"known": 1, "mean": 2.0, "median": 2.0}, {"known": 0, "mean": None, "median": None}),
        ("INVALIDATED", 1, {"known": 1, "mean": 1.0, "median": 1.0}, {"known": 0, "mean": None, "median": None}),
        ("open", 1, {"known": 1, "mean": 1.0, "median": 1.0}, {"known": 0, "mean": None, "median": None}),
    ]
    assert data["openings"] == {
        "compared": 9,
        "changed": 5,
        "changes": {"kept": 4, "decided": 3, "reversed": 1, "undone": 1, "unknown": 3},
        "transitions": [
            {"openings": None, "final": None, "change": "kept", "duels": 1},
            {"openings": "accept", "final": "accept", "change": "kept", "duels": 2},
            {"openings": "reject", "final": "reject", "change": "kept", "duels": 1},
            {"openings": None, "final": "accept", "change": "decided", "duels": 2},
            {"openings": None, "final": "reject", "change": "decided", "duels": 1},
            {"openings": "accept", "final": "reject", "change": "reversed", "duels": 1},
            {"openings": "accept", "final": None, "change": "undone", "duels": 1},
        ],
    }
    assert data["models"] == [
        {
            "model": "carol-1",
            "seats": 1,
            "repairs": None,
            "repairs_unknown": 1,
            "fabricated": None,
            "fabricated_unknown": 1,
        },
        {
            "model": "claude-x",
            "seats": 12,
            "repairs": 1,
            "repairs_unknown": 10,
            "fabricated": 0,
            "fabricated_unknown": 11,
        },
        {"model": "gpt-x", "seats": 12, "repairs": 2, "repairs_unknown": 10, "fabricated": 1, "fabricated_unknown": 11},
    ]
    broken = str(debate_dir / "broken.md")
    assert [(row["path"], row["code"]) for row in data["unreadable"]] == [(broken, "UNREADABLE")]
    assert [row["path"] for row in data["skipped"]] == [str(debate_dir / "notes.md")]
    (first,) = [row for row in data["duels"] if row["path"] == str(first_path)]
    assert sorted(row["cost_usd"] for row in data["duels"] if row["cost_usd"] is not None) == [1.0, 3.0]
    assert {key: first[key] for key in ("outcome", "turns", "cost_usd", "openings", "change")} == {
        "outcome": "ACCEPTED_CONSENSUS",
        "turns": 4,
        "cost_usd": 3.0,
        "openings": "unanimous accept",
        "change": "kept",
    }


@pytest.mark.slow
def test_duel_stats_prints_tables_saying_unknown_where_nothing_was_recorded(
    service, source, clock, debate_dir, tmp_path
):
    a_dozen_duels(service, source, clock)
    proc = duel_stats(tmp_path, str(debate_dir))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"12 duels in {debate_dir}, 1 unreadable"
    assert lines[2].split() == [
        "OUTCOME",
        "DUELS",
        "PROVISIONAL",
        "TURNS",
        "MEAN",
        "TURNS",
        "MEDIAN",
        "COST",
        "MEAN",
        "COST",
        "MEDIAN",
    ]
    # Claude against GPT, and a panel of three families: none provisional.
    assert " ".join(lines[3].split()) == "ACCEPTED_CONSENSUS 4 0 4.5 4.0 $2.00 (2 of 4 known) $2.00"
    assert lines[4].split() == ["DISSENT", "3", "0", "3.3", "4.0", "unknown", "unknown"]
    assert (
        "Against the openings' vote: the debate changed the verdict in 5 of 9 finished duels "
        "(3 not finished: TIMEOUT, INVALIDATED or open)." in lines
    )
    assert "reversed  accept            reject           1" in lines
    assert "undone    accept            nothing          1" in lines
    assert "carol-1   1      unknown (not recorded)  unknown (not verified)" in lines
    assert "gpt-x     12     2 (10 not recorded)     1 (11 not verified)" in lines
    broken = debate_dir / "broken.md"
    why = "'utf-8' codec can't decode byte 0xff in position 24: invalid start byte"
    assert lines[-2:] == ["Unreadable:", f"  {broken}: UNREADABLE: cannot read {broken}: {why}"]


def test_duel_stats_of_a_folder_that_does_not_exist_is_one_line_and_exit_1(tmp_path):
    proc = duel_stats(tmp_path, str(tmp_path / "nowhere"))
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == f"duel: DEBATE_DIR_INVALID: no debate dir {tmp_path / 'nowhere'}: not a folder\n"


@pytest.mark.slow
def test_a_script_s_repairs_are_counted_not_said_to_be_unrecorded(tmp_path):
    demo = subprocess.run(
        [sys.executable, "-m", "rp1_duel", "demo", "--dir", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert demo.returncode == 0, demo.stderr
    proc = duel_stats(tmp_path, str(tmp_path / "demo"), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [(row["model"], row["repairs"], row["repairs_unknown"]) for row in data["models"]] == [
        ("scripted:ada", 0, 0),
        ("scripted:brook", 0, 0),
    ]
    assert data["duels"][0]["cost_usd"] == 0.0  # a script spends nothing


def test_a_person_s_repairs_are_counted_as_duel_join_records_them(service, source, debate_dir):
    hana = join(service, source, "Hana", harness="duel", model_id="human")
    join(service, source, "Ada", harness="duel", model_id="scripted:ada")
    # `duel join` logs each of a person's drafts with no request of a model: here one rejected, then the turn.
    asked = Provenance(provider="human", requested_model="human", served_model=None, reasoning=None)
    service.record_usage(hana.seat, 1, Usage(repairs=0, seconds=40.0), provenance=asked)
    service.record_usage(hana.seat, 1, Usage(repairs=1, seconds=20.0), provenance=asked, repair_codes=("SECTIONS",))
    lease = claim(service, hana)
    service.append(hana.seat, lease, make_turn(1, "Hana", "duel", "human"))
    service.release_lock(hana.seat, lease)
    stats = read_stats(debate_dir, env={})
    assert [(row.model, row.repairs, row.repairs_unknown) for row in stats.models] == [
        ("human", 1, 0),
        ("scripted:ada", None, 1),  # it wrote no turn and logged nothing
    ]
    (human,) = [line for line in stats_table(stats).splitlines() if line.startswith("human ")]
    assert human.split()[:3] == ["human", "1", "1"]
