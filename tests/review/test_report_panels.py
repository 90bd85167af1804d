"""`duel report` of a panel (docs/protocol.md sections 11 and 12): turns attributed by the schedule,
the outcome read from every seat's latest turn, unresolved items answered by any other seat, one chart line per
seat. Two-seat reports are unchanged (tests/test_report.py)."""

from __future__ import annotations

import re
from pathlib import Path

from test_panels import PANEL, play, seat_panel
from test_report import parsed

from rp1_duel.record import parse
from rp1_duel.review.assessment import assessment_prompt
from rp1_duel.review.report import build_report, read_record
from rp1_duel.review.report_html import SEAT_DASHES, render_html
from rp1_duel.review.report_markdown import render_markdown
from rp1_duel.review.report_text import SEAT_COLOUR_NAMES, SEAT_COLOURS
from rp1_duel.settings import DuelSettings
from rp1_duel.vocabulary import ACCEPTED_CONSENSUS, DISSENT

from helpers import claim, join, make_turn, panel

OPEN, ACCEPT, CONV, DISS = "OPEN_TO_DEBATE", "ACCEPTING_CONSENSUS", "CONVERGING", "DISSENTING"


def closed_panel(service, source: Path, outcome: str, *stances: str, **settings) -> str:
    """A three-seat panel played through the service and closed by the writer of its last turn."""
    players = seat_panel(service, source, **settings)
    path = play(service, players, *stances)
    closer = players[panel(3).speaker(len(stances))]
    service.release_lock(closer.seat, claim(service, closer), close=True, outcome=outcome)
    return path


def report_of(path: str):
    return build_report(Path(path).read_text(), path)


def test_panel_report_attributes_each_turn_to_its_round_robin_seat(service, source):
    report = report_of(closed_panel(service, source, ACCEPTED_CONSENSUS, OPEN, OPEN, OPEN, ACCEPT, ACCEPT, ACCEPT))
    assert report.schedule.seats == 3
    assert [entry.seat for entry in report.timeline] == [1, 2, 3, 1, 2, 3]
    assert [(p.name, p.turns) for p in report.participants] == [("Alice", (1, 4)), ("Bob", (2, 5)), ("Carol", (3, 6))]
    assert [(e.turn, e.previous_stance) for e in report.timeline if e.changed] == [(4, OPEN), (5, OPEN), (6, OPEN)]
    assert [a.seat for a in report.novel_arguments] == [1, 2, 3, 1, 2, 3]
    assert {(row.turn, row.seat) for row in report.citations} <= {(n, panel(3).speaker(n)) for n in range(1, 7)}
    assert report.agreements[0].seats == (1, 2, 3)


def test_panel_consensus_report_names_every_seats_latest_turn(service, source):
    report = report_of(closed_panel(service, source, ACCEPTED_CONSENSUS, OPEN, OPEN, OPEN, ACCEPT, ACCEPT, ACCEPT))
    facts = report.outcome
    assert (facts.outcome, facts.implied, facts.rule, facts.deciding_turns) == (
        ACCEPTED_CONSENSUS,
        ACCEPTED_CONSENSUS,
        "both_accepting",
        (4, 5, 6),
    )
    assert facts.explanation == (
        "All 3 latest turns accept the consensus with no blocking item: turn 4 (Alice, "
        "ACCEPTING_CONSENSUS), turn 5 (Bob, ACCEPTING_CONSENSUS) and turn 6 (Carol, "
        "ACCEPTING_CONSENSUS)."
    )
    assert report.intact, report.problems


def test_panel_dissent_report_says_one_dissenter_was_left_at_the_last_turn(service, source):
    report = report_of(closed_panel(service, source, DISSENT, OPEN, OPEN, DISS, CONV, CONV, DISS, max_turns=6))
    assert (report.outcome.outcome, report.outcome.rule, report.outcome.deciding_turns) == (
        DISSENT,
        "last_turn_blocked",
        (4, 5, 6),
    )
    assert report.intact, report.problems


def test_an_item_is_answered_by_a_later_turn_of_any_other_seat(service, source):
    players = seat_panel(service, source)
    play(service, players, OPEN, OPEN)
    carol = players[3]
    answering_turn_1 = make_turn(3, *PANEL[3]).replace("- Addresses: Turn 2", "- Addresses: Turn 1")
    path = service.append(carol.seat, claim(service, carol), answering_turn_1, release=True).debate_path
    first = next(item for item in report_of(path).unresolved if item.raised_in == 1)
    assert (first.seat, first.answered_in) == (1, (2, 3))  # Bob's turn 2 and Carol's turn 3
    second = next(item for item in report_of(path).unresolved if item.raised_in == 2)
    assert second.answered_in == ()  # turn 3 countered turn 1, not Bob's turn 2


def test_panel_json_carries_its_seats_after_max_turns(service, source):
    data = report_of(play(service, seat_panel(service, source), OPEN, OPEN, OPEN)).to_dict()
    assert list(data)[10:13] == ["max_turns", "seats", "turn_count"] and data["seats"] == 3


def test_panel_mermaid_chart_has_one_line_per_seat_over_rounds_of_three(service, source):
    text = render_markdown(report_of(play(service, seat_panel(service, source), OPEN, OPEN, OPEN, CONV)))
    chart = text.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert '"plotColorPalette": "#1f6feb, #c2560c, #1a7f37"' in chart
    assert 'x-axis "round (turns)" ["1-3", "4-6"]' in chart
    assert re.findall(r"^  line \[(.*)\]$", chart, re.MULTILINE) == ["1, 3", "1", "1"]
    assert "Alice (blue) · Bob (orange) · Carol (green)" in chart
    assert "| Seat | Participant |" in text and "| 3 | Carol | script | carol-1 | — | [3](" in text  # turn 3, linked


def test_panel_html_is_well_formed_with_one_line_per_seat(service, source):
    page = render_html(
        report_of(closed_panel(service, source, ACCEPTED_CONSENSUS, OPEN, OPEN, OPEN, ACCEPT, ACCEPT, ACCEPT))
    )
    found = parsed(page)
    assert found.problems == [] and found.open == []
    assert "script" not in found.tags and found.loads == []
    assert found.tags.count("svg") == 1 and found.tags.count("polyline") == 3
    for seat in (1, 2, 3):
        assert f'stroke="{SEAT_COLOURS[seat]}" stroke-width="2.5"' in page
    assert 'stroke-dasharray="2 3"' in page and "Carol (seat 3)" in page


def test_eight_seats_have_eight_colours_and_dash_patterns():
    assert len({SEAT_COLOURS[s] for s in range(1, 9)}) == len({SEAT_DASHES[s] for s in range(1, 9)}) == 8
    assert len(set(SEAT_COLOUR_NAMES.values())) == 8


def test_an_eight_seat_legend_wraps_inside_the_chart(service, source):
    players = [
        join(
            service,
            source,
            f"Panelist number {seat}",
            harness="claude-code",
            model_id="claude-x",
            settings=DuelSettings(seats=8),
        )
        for seat in range(1, 9)
    ]
    path = ""
    for n, player in enumerate(players, start=1):
        turn = make_turn(n, player.name, "claude-code", "claude-x")
        path = service.append(player.seat, claim(service, player), turn, release=True).debate_path
    page = render_html(report_of(path))
    assert parsed(page).problems == []
    legend_x = [float(x) for x in re.findall(r'<line x1="([\d.]+)" x2="[\d.]+" y1="(?:14|34|54)', page)]
    assert len(legend_x) == 8 and max(legend_x) < 1000
    assert 'y1="34"' in page  # a second legend row
    assert page.count("<polyline") == 8


def test_the_assessment_prompt_names_each_panelists_turns(service, source):
    path = play(service, seat_panel(service, source), OPEN, OPEN, OPEN)
    record = read_record(Path(path).read_text(), path)
    prompt = assessment_prompt(record.front, parse(Path(path).read_text()).blocks)
    assert "- seat 3: Carol (carol-1), turns 3, 6, 9 and so on\n" in prompt
