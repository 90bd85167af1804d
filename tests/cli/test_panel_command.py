"""`duel panel`: every seat of a lineup from one command, each its own `duel join` process
(issue 13, item 3): the lineup's rules, a panel of Claude, GPT and a script to consensus, a
seat that fails before taking its seat, and Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from test_participant import clean_env, wait_for_seat

from rp1_duel.configuration import Config, Layer, merge
from rp1_duel.coordination import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.participant.panel import (
    PanelSeat,
    SeatRun,
    join_command,
    lineup_seats,
    panel_summary,
    seat_environment,
    shared_flags,
)
from rp1_duel.record import validate_file
from rp1_duel.settings import DuelSettings
from rp1_duel.vocabulary import ACCEPTED_CONSENSUS, ErrorCode

from fake_debater import asked, prompt_text
from helpers import agreed_on_an_edit, join, make_turn

OPEN, ACCEPT = "OPEN_TO_DEBATE", "ACCEPTING_CONSENSUS"


def config_of(panel: dict[str, Any]) -> Config:
    return merge([Layer("lineup", "/p/lineup.toml", {"panel": panel})])


# -- the lineup -----------------------------------------------------------------------------------


def test_a_lineup_becomes_each_seats_join_flags_in_seat_order():
    config = config_of(
        {
            "seats": {
                "2": {"model": "gpt-x", "max_output_tokens": 4096, "persona": "skeptic"},
                "1": {"name": "Ada", "provider": "anthropic", "model": "claude-x"},
            }
        }
    )
    assert lineup_seats(config) == [
        PanelSeat("seat 1 (Ada)", ("--name", "Ada", "--provider", "anthropic", "--model", "claude-x")),
        PanelSeat("seat 2 (skeptic)", ("--model", "gpt-x", "--max-output-tokens", "4096", "--persona", "skeptic")),
    ]


def test_the_store_reaches_each_seat_in_its_environment_never_on_its_command_line():
    url = "postgresql://duel:hunter2@db/duel"
    config = merge([Layer("lineup", "/p/lineup.toml", {"store": url, "panel": {"seats": {"1": {}, "2": {}}}})])
    flags = shared_flags(config, DuelSettings(), topic=None, config_files=[])
    command = join_command("/p/design.md", shared=flags, seat=lineup_seats(config)[0])
    assert not any("hunter2" in part for part in command)  # a command line is public: ps shows it to every user
    assert seat_environment(config.store)["DUEL_STORE"] == url
    assert seat_environment(None) == dict(os.environ)  # no store: the seats inherit this environment as it is


def test_a_lineups_chair_joins_last_with_the_chair_role_and_every_seat_creates_a_chaired_duel():
    config = config_of({"seats": {"1": {"name": "A"}, "2": {"name": "B"}}, "chair": {"name": "C", "model": "m"}})
    assert lineup_seats(config)[-1] == PanelSeat("the chair (C)", ("--role", "chair", "--name", "C", "--model", "m"))
    flags = shared_flags(config, DuelSettings(seats=2, chair=True), topic=None, config_files=[])
    assert "--chair" in flags and flags[flags.index("--max-turns") + 1] == "6"


@pytest.mark.parametrize(
    ("seats", "problem"),
    [
        ({}, "no lineup"),
        ({"1": {"model": "claude-x"}}, "at least two"),
        ({"1": {"model": "a"}, "3": {"model": "b"}}, "seats 1, 3: a lineup numbers its seats 1, 2, …"),
        ({"1": {"name": "Ada"}, "2": {"name": "Ada"}}, "'Ada' names more than one seat"),
    ],
)
def test_a_lineup_without_seats_1_to_n_or_with_a_name_twice_is_invalid_config(seats, problem):
    with pytest.raises(DuelError) as raised:
        lineup_seats(config_of({"seats": seats}))
    assert raised.value.code == ErrorCode.INVALID_CONFIG
    assert problem in raised.value.message


def test_the_panels_summary_names_the_agreed_revision_and_its_patch(debate_dir, source):
    service = DuelService(debate_dir)
    alice, bob = (
        join(service, source, "Alice", harness="claude-code", model_id="claude-x"),
        join(service, source, "Bob", harness="codex", model_id="gpt-x"),
    )
    path, revision = agreed_on_an_edit(service, alice, bob)
    seats = [{"seat": 1, "outcome": ACCEPTED_CONSENSUS, "debate_path": str(path)}, None]
    shown = panel_summary([cast("SeatRun", SimpleNamespace(result=result)) for result in seats])
    patch = path.with_name(f"{alice.duel_id}.revision.patch")
    assert (shown["revision"], shown["patch"]) == (revision, str(patch))
    assert panel_summary([cast("SeatRun", SimpleNamespace(result=None))]) | {"seats": []} == {
        "outcome": None,
        "debate_path": None,
        "revision": None,
        "patch": None,
        "seats": [],
    }


def test_every_seat_joins_with_the_duels_settings_in_full_and_the_lineup_file():
    config = config_of({"seats": {"1": {}, "2": {}, "3": {}}})
    flags = shared_flags(
        config, DuelSettings(seats=3, lease_seconds=30), topic="Leases", config_files=["/p/lineup.toml"]
    )
    pairs = dict(zip(flags[::2], flags[1::2], strict=True))
    assert pairs == {
        "--debate-dir": "debates",
        "--topic": "Leases",
        "--max-turns": "9",
        "--lease-seconds": "30",
        "--peer-wait-seconds": "900",
        "--turn-timeout-seconds": "1800",
        "--seats": "3",
        "--config": "/p/lineup.toml",
    }
    assert join_command("/d.md", shared=flags, seat=PanelSeat("seat 1", ("--name", "A")))[-3:] == [
        "--name",
        "A",
        "--json",
    ]


# -- duel panel: real processes ------------------------------------------------------------------


def scripted_seat(tmp_path: Path, name: str, turns: dict[int, str]) -> Path:
    folder = tmp_path / name.lower()
    folder.mkdir()
    for index, (number, stance) in enumerate(sorted(turns.items()), start=1):
        (folder / f"{index}.md").write_text(make_turn(number, name, "duel", f"scripted:{folder.name}", stance))
    return folder


def plays(stances: list[str]):
    def respond(body: dict) -> str:
        n, name, harness, model, _ = asked(body)
        return make_turn(n, name, harness, model, stances[n - 1])

    return respond


def lineup_of(*seats: tuple[str, str], extra: str = "") -> str:
    """A lineup file: seat k is ``seats[k - 1]`` (name, model)."""
    return extra + "".join(
        f'[panel.seats.{number}]\nname = "{name}"\nmodel = "{model}"\n'
        for number, (name, model) in enumerate(seats, start=1)
    )


def panel(tmp_path: Path, source: Path, debate_dir: Path, lineup: str, *flags: str, env: dict[str, str]):
    (tmp_path / "lineup.toml").write_text(lineup)
    argv = [
        sys.executable,
        "-m",
        "rp1_duel",
        "panel",
        "--target",
        str(source),
        "--lineup",
        str(tmp_path / "lineup.toml"),
        "--debate-dir",
        str(debate_dir),
        "--json",
        *flags,
    ]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)


@pytest.mark.slow
def test_duel_panel_runs_claude_gpt_and_a_script_to_consensus_from_one_lineup(
    tmp_path, source, debate_dir, anthropic_server, openai_server
):
    stances = [OPEN, OPEN, OPEN, ACCEPT, ACCEPT, ACCEPT]
    anthropic_server.responder = openai_server.responder = plays(stances)
    cy = scripted_seat(tmp_path, "Cy", {3: OPEN, 6: ACCEPT})
    lineup = f"""
[panel]
topic = "Lease design"
[panel.seats.1]
name = "Claude"
model = "claude-x"
[panel.seats.2]
name = "GPT"
model = "gpt-x"
persona = "skeptic"
[panel.seats.3]
name = "Cy"
model = "scripted:{cy}"
[duel]
max_turns = 6
"""
    env = clean_env(
        ANTHROPIC_API_KEY="k",
        ANTHROPIC_BASE_URL=anthropic_server.base_url,
        OPENAI_API_KEY="k",
        OPENAI_BASE_URL=openai_server.base_url,
    )
    out, err = panel(tmp_path, source, debate_dir, lineup, env=env).communicate(timeout=120)

    assert "Traceback" not in err
    summary = json.loads(out)
    assert summary["outcome"] == ACCEPTED_CONSENSUS, err
    assert (summary["revision"], summary["patch"]) == (None, None)  # the panel agreed to change nothing
    assert [(s["seat"], s["turns_written"]) for s in summary["seats"]] == [(1, [1, 4]), (2, [2, 5]), (3, [3, 6])]
    assert validate_file(summary["debate_path"]).valid
    text = Path(summary["debate_path"]).read_text()
    assert 'topic: "Lease design"' in text and "seats: 3" in text
    # Each seat's lines reach the terminal under its name; the skeptic persona reached GPT's model only.
    assert "[Claude] turn 1 accepted" in err and "[GPT] turn 2 accepted" in err and "[Cy] turn 3 accepted" in err
    assert "skeptic" in prompt_text(openai_server.requests[0]["body"]).lower()
    assert "skeptic" not in prompt_text(anthropic_server.requests[0]["body"]).lower()
    assert f"duel panel: ACCEPTED_CONSENSUS → {summary['debate_path']}" in err


@pytest.mark.slow
def test_a_seat_that_fails_before_taking_its_seat_stops_the_panel_and_leaves_no_lease(tmp_path, source, debate_dir):
    ada = scripted_seat(tmp_path, "Ada", {1: OPEN})
    lineup = lineup_of(
        ("Ada", f"scripted:{ada}"), ("Bea", f"scripted:{tmp_path / 'missing'}"), ("Cy", f"scripted:{ada}")
    )
    process = panel(tmp_path, source, debate_dir, lineup, env=clean_env())
    out, err = process.communicate(timeout=60)

    assert process.returncode == 1
    assert "[seat 2 (Bea)] duel: INVALID_ARGUMENT: scripted:" in err  # Bea's own error, said to be hers
    assert "is not a directory holding *.md turns" in err
    assert err.strip().splitlines()[-1] == (
        "duel: PANEL_SEAT_FAILED: seat 2 (Bea) ended before taking its seat (its error is above)"
    )
    assert json.loads(out)["error"]["code"] == "PANEL_SEAT_FAILED"
    status = DuelService(debate_dir).status(target=str(source))
    assert [p.display_name for p in status.participants] == ["Ada"]  # Ada's seat is kept
    assert status.lock.owner_participant_id is None


@pytest.mark.slow
def test_ctrl_c_stops_every_seat_which_keeps_its_seat_and_exits_130(tmp_path, source, debate_dir):
    ada, bea = scripted_seat(tmp_path, "Ada", {1: OPEN}), scripted_seat(tmp_path, "Bea", {2: OPEN})
    lineup = lineup_of(("Ada", f"scripted:{ada}"), ("Bea", f"scripted:{bea}"), ("Human", "human"))
    # The third seat is a person who is never done: the panel waits on turn 3.
    env = clean_env(EDITOR="sleep 60")
    process = panel(tmp_path, source, debate_dir, lineup, env=env)
    wait_for_seat(debate_dir, source, count=3, limit=60)
    deadline = time.monotonic() + 30
    while DuelService(debate_dir).status(target=str(source)).turn_count < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)

    assert process.returncode == 130, err
    assert "duel panel: interrupted" in err and "Traceback" not in err
    status = DuelService(debate_dir).status(target=str(source))
    assert status.lock.owner_participant_id is None and status.participant_count == 3
    assert os.path.exists(status.duel.debate_path)


def seat_processes(debate_dir: Path) -> list[int]:
    """The pids of every process whose command line names ``debate_dir``: the panel's seats."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if str(debate_dir).encode() in command and b" join " in command:
                found.append(int(entry.name))
    return found


@pytest.mark.slow
def test_a_closed_terminal_sighup_takes_every_seat_down_with_the_panel(tmp_path, source, debate_dir):
    ada, bea = scripted_seat(tmp_path, "Ada", {1: OPEN}), scripted_seat(tmp_path, "Bea", {2: OPEN})
    lineup = lineup_of(("Ada", f"scripted:{ada}"), ("Bea", f"scripted:{bea}"), ("Human", "human"))
    process = panel(tmp_path, source, debate_dir, lineup, env=clean_env(EDITOR="sleep 60"))
    wait_for_seat(debate_dir, source, count=3, limit=60)
    process.send_signal(signal.SIGHUP)
    _, err = process.communicate(timeout=60)

    assert process.returncode == 130, err
    assert "duel panel: interrupted" in err and "Traceback" not in err
    deadline = time.monotonic() + 10
    while seat_processes(debate_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert seat_processes(debate_dir) == []  # no orphan keeps a seat
    assert DuelService(debate_dir).status(target=str(source)).lock.owner_participant_id is None


@pytest.mark.slow
def test_a_seat_that_fails_after_taking_its_seat_stops_the_panel_at_once(tmp_path, source, debate_dir):
    # Bea's script holds one turn: at her second (turn 4) she fails SCRIPT_EXHAUSTED while Ada waits.
    ada, bea = scripted_seat(tmp_path, "Ada", {1: OPEN, 3: OPEN, 5: OPEN}), scripted_seat(tmp_path, "Bea", {2: OPEN})
    lineup = lineup_of(("Ada", f"scripted:{ada}"), ("Bea", f"scripted:{bea}"))
    started = time.monotonic()
    process = panel(tmp_path, source, debate_dir, lineup, env=clean_env())
    _, err = process.communicate(timeout=90)

    assert time.monotonic() - started < 60, err  # not the turn timeout of 30 minutes
    assert "SCRIPT_EXHAUSTED" in err
    assert "duel panel: seat 2 (Bea) ended with exit 1: stopping every seat" in err
    assert process.returncode != 0
    assert DuelService(debate_dir).status(target=str(source)).lock.owner_participant_id is None


@pytest.mark.slow
def test_duel_panel_runs_a_chaired_lineup_through_its_phases_to_consensus(tmp_path, source, debate_dir):
    from test_chair import ANSWERS, PANEL, addressing, brief, heading, pre_closing, synthesis

    seats = []
    for seat, (name, _, _) in PANEL.items():
        who = (name, "duel", f"scripted:{name.lower()}")
        closing = make_turn(seat + 4, *who, stance=ACCEPT).replace(
            "**Agreements**\n", addressing(4, *ANSWERS) + "**Agreements**\n"
        )
        folder = tmp_path / name.lower()
        folder.mkdir()
        (folder / "1.md").write_text(make_turn(seat, *who, stance=OPEN))
        (folder / "2.md").write_text(closing)
        seats.append((name, f"scripted:{folder}"))
    chair = ("Chair", "duel", "scripted:chair")
    (tmp_path / "chair").mkdir()
    for index, text in enumerate(
        [
            brief(chair),
            pre_closing(4).replace(heading(4), heading(4, chair)),
            synthesis(8).replace(heading(8), heading(8, chair)),
        ],
        start=1,
    ):
        (tmp_path / "chair" / f"{index}.md").write_text(text)
    lineup = (
        lineup_of(*seats, extra="[duel]\nmax_turns = 6\n")
        + f'[panel.chair]\nname = "Chair"\nmodel = "scripted:{tmp_path / "chair"}"\n'
    )
    process = panel(tmp_path, source, debate_dir, lineup, env=clean_env())
    out, err = process.communicate(timeout=120)

    assert process.returncode == 0, err
    summary = json.loads(out)
    assert summary["outcome"] == ACCEPTED_CONSENSUS
    assert [(s["seat"], s["turns_written"]) for s in summary["seats"]] == [
        (1, [1, 5]),
        (2, [2, 6]),
        (3, [3, 7]),
        (0, [0, 4, 8]),
    ]
    assert validate_file(summary["debate_path"]).valid


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_panel_rerun_in_a_folder_holding_its_earlier_duels_seats_the_lineup_in_order(tmp_path, source, debate_dir):
    """Issue 38, item 1: the wait for each seat counted the earlier, closed duel's participants, so a rerun
    could start seat 2 before seat 1 had joined (2 of 4 reruns ended INVALIDATED)."""
    seats = [
        (name, f"scripted:{scripted_seat(tmp_path, name, turns)}")
        for name, turns in (("Ann", {1: OPEN, 4: ACCEPT}), ("Ben", {2: OPEN, 5: ACCEPT}), ("Cat", {3: OPEN, 6: ACCEPT}))
    ]
    lineup = lineup_of(*seats, extra='[panel]\ntopic = "Lease design"\n[duel]\nmax_turns = 6\n')
    for rerun in range(10):
        out, err = panel(tmp_path, source, debate_dir, lineup, env=clean_env()).communicate(timeout=120)
        summary = json.loads(out)
        assert summary["outcome"] == ACCEPTED_CONSENSUS, (rerun, err)
        assert [(s["seat"], s["turns_written"]) for s in summary["seats"]] == [(1, [1, 4]), (2, [2, 5]), (3, [3, 6])]
    assert len(list(debate_dir.glob("*.md"))) == 10
