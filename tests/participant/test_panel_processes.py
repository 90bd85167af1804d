"""A three-seat panel of real `duel join` processes (issue 13): Claude and GPT through the real
SDKs against fake servers on 127.0.0.1, and a scripted third panelist, to consensus, to dissent
and to a timeout of one seat; with --verify, a panelist is told of every other seat's turn."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_panels import scripted_panelist
from test_participant import claude_env, finish, gpt_env, start, wait_for_seat

from rp1_duel.record import validate_file
from rp1_duel.vocabulary import ACCEPTED_CONSENSUS, DISSENT

from fake_debater import asked, prompt_text
from fake_web import CLAIM
from helpers import make_turn, panel

pytestmark = pytest.mark.slow
OPEN, ACCEPT, DISS = "OPEN_TO_DEBATE", "ACCEPTING_CONSENSUS", "DISSENTING"


def plays(stances: list[str], citing: tuple[str, ...] = ()) -> Callable[[dict[str, Any]], str]:
    """A fake model answering turn n with ``stances[n - 1]`` (citing ``citing``)."""

    def respond(body: dict[str, Any]) -> str:
        n, name, harness, model, _ = asked(body)
        return make_turn(n, name, harness, model, stances[n - 1], counterclaim=CLAIM if citing else None, citing=citing)

    return respond


def run_panel(
    source: Path,
    debate_dir: Path,
    tmp_path: Path,
    anthropic_server,
    openai_server,
    stances: list[str],
    *flags: str,
    gpt_cites: tuple[str, ...] = (),
) -> list[tuple[int, dict, str]]:
    """Claude (seat 1), GPT (seat 2) and a scripted Cy (seat 3) join in seat order."""
    anthropic_server.responder = plays(stances)
    openai_server.responder = plays(stances, gpt_cites)
    claude = start(source, debate_dir, "--model", "claude-x", "--seats", "3", *flags, env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source, count=1)
    gpt = start(source, debate_dir, "--model", "gpt-x", "--seats", "3", *flags, env=gpt_env(openai_server))
    wait_for_seat(debate_dir, source, count=2)
    own = {n: stance for n, stance in enumerate(stances, start=1) if panel(3).speaker(n) == 3}
    cy = scripted_panelist(source, debate_dir, tmp_path, "Cy", 3, own, *flags)
    return [finish(process) for process in (claude, gpt, cy)]


def test_claude_gpt_and_a_script_reach_consensus_and_the_record_validates(
    source, debate_dir, tmp_path, anthropic_server, openai_server
):
    finished = run_panel(
        source,
        debate_dir,
        tmp_path,
        anthropic_server,
        openai_server,
        [OPEN, OPEN, OPEN, ACCEPT, ACCEPT, ACCEPT],
        "--max-turns",
        "6",
    )

    assert [(code, result["outcome"], result["turns_written"]) for code, result, _ in finished] == [
        (0, ACCEPTED_CONSENSUS, [1, 4]),
        (0, ACCEPTED_CONSENSUS, [2, 5]),
        (0, ACCEPTED_CONSENSUS, [3, 6]),
    ]
    assert (len(anthropic_server.requests), len(openai_server.requests)) == (2, 2)
    # Claude's second turn is asked with the two turns the others wrote since its first in the history.
    history = prompt_text(anthropic_server.requests[1]["body"])
    assert "## Turn 2 — GPT (duel / gpt-x)" in history and "## Turn 3 — Cy (duel / scripted:cy)" in history
    assert "Write turn 4 of at most 6." in history
    report = validate_file(finished[0][1]["debate_path"])
    assert report.valid, report.problems
    assert "seats: 3" in Path(finished[0][1]["debate_path"]).read_text()


def test_a_panel_where_every_seat_dissents_ends_dissent_at_the_end_of_the_round(
    source, debate_dir, tmp_path, anthropic_server, openai_server
):
    # Nine turns allowed; every seat is DISSENTING by turn 6, so the panel ends there.
    finished = run_panel(
        source,
        debate_dir,
        tmp_path,
        anthropic_server,
        openai_server,
        [OPEN, OPEN, OPEN, DISS, DISS, DISS],
        "--max-turns",
        "9",
    )

    assert [(code, result["outcome"]) for code, result, _ in finished] == [(0, DISSENT)] * 3, finished[0][2]
    assert [result["turns_written"] for _, result, _ in finished] == [[1, 4], [2, 5], [3, 6]]
    assert validate_file(finished[0][1]["debate_path"]).valid


def test_a_model_that_stalls_past_the_turn_deadline_times_the_panel_out_for_every_seat(
    source, debate_dir, tmp_path, anthropic_server, openai_server
):
    # GPT's second request never finishes: its server keeps the stream open, silent, past the deadline.
    openai_server.script = [{}, {"think_seconds": 30}]
    finished = run_panel(
        source,
        debate_dir,
        tmp_path,
        anthropic_server,
        openai_server,
        [OPEN] * 9,
        "--max-turns",
        "9",
        "--turn-timeout-seconds",
        "4",
    )

    assert [(result["outcome"], result["turns_written"]) for _, result, _ in finished] == [
        ("TIMEOUT", [1, 4]),
        ("TIMEOUT", [2]),
        ("TIMEOUT", [3]),
    ]
    assert all(code == 0 for code, _, _ in finished)  # a timeout is an outcome: the duel completed
    assert [result["reason"] for _, result, _ in finished] == ["seat 2 (GPT) did not finish turn 5 by its deadline"] * 3
    assert 'outcome: "TIMEOUT"' in Path(finished[0][1]["debate_path"]).read_text()
    assert validate_file(finished[0][1]["debate_path"]).valid


def test_with_verify_a_panelist_checks_every_turn_the_others_wrote_since_its_own(
    source, debate_dir, tmp_path, anthropic_server, openai_server, web
):
    # Only GPT (seat 2) cites a URL. Claude writes turn 4 after GPT's turn 2 and Cy's turn 3:
    # it checks both, not only the latest, and again turns 5 and 6 once the panel has ended.
    finished = run_panel(
        source,
        debate_dir,
        tmp_path,
        anthropic_server,
        openai_server,
        [OPEN, OPEN, OPEN, ACCEPT, ACCEPT, ACCEPT],
        "--max-turns",
        "6",
        "--verify",
        "--allow-private-hosts",
        gpt_cites=(web.url("/states"),),
    )

    assert [result["outcome"] for _, result, _ in finished] == [ACCEPTED_CONSENSUS] * 3, finished[0][2]
    (_, claude, claude_err), (_, gpt, _), _ = finished
    told = prompt_text(anthropic_server.requests[1]["body"])
    assert "Citation check of turn 2 (GPT's)" in told and web.url("/states") in told
    duel_dir = debate_dir / ".duel" / "duels" / claude["duel_id"]
    events = [json.loads(line) for line in (duel_dir / "events.jsonl").read_text().splitlines()]
    checked = [
        (event["data"]["turn_number"], event["data"]["writer"])
        for event in events
        if event["type"] == "citations_verified" and event["participant_id"] == claude["participant_id"]
    ]
    assert checked == [(2, gpt["participant_id"]), (5, gpt["participant_id"])]
    assert claude["verification"]["peer_turns"] == {"unjudged": 2}
    assert "GPT's turn 2: 1 citation checked (1 unjudged)" in claude_err
