"""No silent overruling by a chair (docs/protocol.md section 7, "Chair turns", SILENT_OVERRULE): a synthesis
that records as agreed what a seat's final turn did not accept says so item by item, under Departures; and a
report shows each seat's final stance beside the synthesis (section 11).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_chair import CHAIR, OPEN, SCHEDULE, brief, claimant_of, heading, panel_turn, pre_closing, seat_chaired_panel

from rp1_duel.errors import DuelError
from rp1_duel.participant.prompt import chair_system_prompt
from rp1_duel.record import Claimant, History, validate_file
from rp1_duel.review.report import build_report
from rp1_duel.review.report_html import render_html
from rp1_duel.review.report_markdown import render_markdown
from rp1_duel.turns import phase_note, read_source, validate_turn
from rp1_duel.vocabulary import DISSENT, Phase

from helpers import claim

ACCEPT, DISS, CONV = "ACCEPTING_CONSENSUS", "DISSENTING", "CONVERGING"
# What every panel turn of tests/helpers.make_turn lists under Agreements.
SEAT_ORDER = "The design keeps seat order fixed"
DEPARTURE = (
    "- Seat 2 (DISSENTING, Turn 6): the synthesis keeps fifteen-minute leases, because Turn 5 and Turn 7 "
    "showed crash recovery needs them.\n"
)


def synthesis(*, agreed: str = "", departures: str = "", still_open: str = "") -> str:
    return (
        heading(8)
        + "**Synthesis**\nThe panel kept fifteen-minute leases, as Turn 5 argued.\n"
        + (f"**Agreed**\n{agreed}" if agreed else "")
        + (f"**Still Open**\n{still_open}" if still_open else "")
        + (f"**Departures**\n{departures}" if departures else "")
    )


def closing(*stances: str) -> History:
    """SCHEDULE's history up to the synthesis: an opening round, the pre-closing, a closing round with these
    stances (seats 1, 2, 3)."""
    history = History(source=None, source_names=("design.md",), schedule=SCHEDULE)
    for n in range(8):
        if n == 0:
            text = brief()
        elif n == SCHEDULE.pre_closing:
            text = pre_closing(n)
        else:
            text = panel_turn(n, OPEN if n < 4 else stances[n - 5])
        report = validate_turn(text, history.context_for(claimant_of(n)))
        assert report.ok, (n, report.violations)
        history.accept(None, report.turn)  # type: ignore[arg-type]
    return history


def violations(text: str, *stances: str) -> list[tuple[str, int | None, str | None]]:
    report = validate_turn(text, closing(*stances).context_for(Claimant(*CHAIR)))
    return [(v.code, v.line, v.section) for v in report.violations]


# -- the rule (pure) -----------------------------------------------------------------------------------------


def test_a_synthesis_recording_agreement_a_dissenter_did_not_give_is_silent_overrule():
    text = synthesis(agreed="- Leases last fifteen minutes.\n")
    assert violations(text, ACCEPT, DISS, ACCEPT) == [("SILENT_OVERRULE", 5, "Agreed")]
    report = validate_turn(text, closing(ACCEPT, DISS, ACCEPT).context_for(Claimant(*CHAIR)))
    message = report.violations[0].message
    assert "Seat 2 (DISSENTING in Turn 6) did not agree to" in message and "**Departures**" in message


def test_a_synthesis_that_says_so_item_by_item_passes():
    text = synthesis(agreed="- Leases last fifteen minutes.\n", departures=DEPARTURE)
    assert violations(text, ACCEPT, DISS, ACCEPT) == []


def test_an_agreed_list_of_only_what_the_dissenter_agreed_to_passes():
    agreed = f'- Seat order stays fixed: Turn 6 "{SEAT_ORDER}".\n'
    assert violations(synthesis(agreed=agreed), ACCEPT, DISS, ACCEPT) == []


def test_every_seat_not_accepting_must_have_given_the_agreement_not_only_dissenters():
    agreed = f'- Seat order stays fixed: Turn 6 "{SEAT_ORDER}".\n'
    assert violations(synthesis(agreed=agreed), CONV, DISS, ACCEPT) == [("SILENT_OVERRULE", 5, "Agreed")]
    both = f'- Seat order stays fixed: Turn 5 "{SEAT_ORDER}" and Turn 6 "{SEAT_ORDER}".\n'
    assert violations(synthesis(agreed=both), CONV, DISS, ACCEPT) == []


def test_only_the_seats_final_turn_gives_its_agreement():
    """Turn 2, seat 2's opening, lists the same agreement; its final turn is the one that counts."""
    agreed = f'- Seat order stays fixed: Turn 2 "{SEAT_ORDER}".\n'
    assert violations(synthesis(agreed=agreed), ACCEPT, DISS, ACCEPT) == [("SILENT_OVERRULE", 5, "Agreed")]
    not_an_agreement = '- Leases stay: Turn 6 "doubts point 6".\n'  # in turn 6, but not in its Agreements
    assert violations(synthesis(agreed=not_an_agreement), ACCEPT, DISS, ACCEPT) == [("SILENT_OVERRULE", 5, "Agreed")]


def test_when_every_seat_accepts_the_agreed_items_need_no_quotes():
    assert violations(synthesis(agreed="- Leases last fifteen minutes.\n"), ACCEPT, ACCEPT, ACCEPT) == []


def test_a_departure_names_a_panel_seat_and_its_final_stance():
    agreed = "- Leases last fifteen minutes.\n"
    wrong_stance = DEPARTURE.replace("DISSENTING", "CONVERGING")
    assert violations(synthesis(agreed=agreed, departures=wrong_stance), ACCEPT, DISS, ACCEPT) == [
        ("SILENT_OVERRULE", 5, "Agreed"),
        ("SILENT_OVERRULE", 7, "Departures"),
    ]
    no_seat = "- Bob held out, and the synthesis overrules him.\n"
    assert violations(synthesis(departures=no_seat), ACCEPT, DISS, ACCEPT) == [("SILENT_OVERRULE", 5, "Departures")]
    the_chair = DEPARTURE.replace("Seat 2", "Seat 0")
    assert violations(synthesis(departures=the_chair), ACCEPT, DISS, ACCEPT) == [("SILENT_OVERRULE", 5, "Departures")]
    lower_case = DEPARTURE.replace("DISSENTING", "dissenting")  # a stance is named in any letter case
    assert violations(synthesis(agreed=agreed, departures=lower_case), ACCEPT, DISS, ACCEPT) == []


def test_departures_come_after_still_open_and_only_in_the_synthesis():
    still_open = "**Still Open**\n- Whether fencing needs a benchmark.\n"
    text = synthesis(departures=DEPARTURE) + still_open
    assert violations(text, ACCEPT, DISS, ACCEPT) == [("CHAIR_FORMAT", 6, "Still Open")]
    history = History(source=None, source_names=("design.md",), schedule=SCHEDULE)
    brief_with_departures = brief() + f"**Departures**\n{DEPARTURE}"
    codes = [v.code for v in validate_turn(brief_with_departures, history.context_for(Claimant(*CHAIR))).violations]
    assert codes == ["CHAIR_FORMAT"]


def test_the_chair_is_taught_the_rule_and_told_each_seats_final_stance(source):
    system = chair_system_prompt(
        "Chair", topic="Lease design", source=read_source(source), source_name="design.md", persona=None, seats=3
    )
    assert "`SILENT_OVERRULE`" in system and "**Departures**" in system
    note = phase_note(Phase.SYNTHESIS, outcome=DISSENT, final_stances=["Seat 2, Bob: DISSENTING in Turn 6"])
    assert "- Seat 2, Bob: DISSENTING in Turn 6\n" in note and "(`SILENT_OVERRULE`)" in note
    assert "Each seat's final stance" not in phase_note(Phase.SYNTHESIS, outcome=DISSENT)


# -- the service, duel validate and the report --------------------------------------------------------------------


def write_panel(service, players, stances: tuple[str, ...]) -> None:
    """Turns 0-7 of SCHEDULE: the closing round with these stances."""
    for n in range(8):
        seat = SCHEDULE.speaker(n)
        text = brief() if n == 0 else pre_closing(n) if n == 4 else panel_turn(n, OPEN if n < 4 else stances[n - 5])
        service.append(players[seat].seat, claim(service, players[seat]), text, release=True)


def test_the_service_refuses_a_silent_overrule_and_takes_the_synthesis_that_says_so(service, source):
    players = seat_chaired_panel(service, source)
    write_panel(service, players, (ACCEPT, DISS, ACCEPT))
    chair = players[0]
    lease = claim(service, chair)
    with pytest.raises(DuelError) as refused:
        service.append(chair.seat, lease, synthesis(agreed="- Leases last fifteen minutes.\n"))
    assert refused.value.code == "TURN_INVALID"
    assert [v["code"] for v in refused.value.details["violations"]] == ["SILENT_OVERRULE"]
    text = synthesis(agreed="- Leases last fifteen minutes.\n", departures=DEPARTURE)
    path = service.append(chair.seat, lease, text, release=True).debate_path
    assert validate_file(path).valid


def test_the_report_shows_each_seats_final_stance_beside_the_synthesis(service, source):
    players = seat_chaired_panel(service, source)
    write_panel(service, players, (ACCEPT, DISS, ACCEPT))
    chair = players[0]
    agreed = f'- Leases last fifteen minutes.\n- Seat order stays fixed: Turn 6 "{SEAT_ORDER}".\n'
    text = synthesis(agreed=agreed, departures=DEPARTURE, still_open="- Whether fencing needs a benchmark.\n")
    path = service.append(chair.seat, claim(service, chair), text, release=True).debate_path
    service.release_lock(chair.seat, claim(service, chair), close=True, outcome=DISSENT)
    report = build_report(Path(path).read_text(), path)
    view = report.synthesis
    assert view is not None and view.turn == 8
    assert view.text == "The panel kept fifteen-minute leases, as Turn 5 argued."
    assert view.agreed == ("Leases last fifteen minutes.", f'Seat order stays fixed: Turn 6 "{SEAT_ORDER}".')
    assert view.still_open == ("Whether fencing needs a benchmark.",)
    assert view.departures == (DEPARTURE[2:].strip(),)
    assert [(s.seat, s.name, s.stance, s.turn) for s in view.final_stances] == [
        (1, "Alice", ACCEPT, 5),
        (2, "Bob", DISS, 6),
        (3, "Carol", ACCEPT, 7),
    ]
    data = json.loads(json.dumps(report.to_dict()))["synthesis"]
    assert data["final_stances"][1] == {"seat": 2, "name": "Bob", "stance": DISS, "turn": 6}
    assert data["departures"] == [DEPARTURE[2:].strip()]
    markdown, page = render_markdown(report), render_html(report)
    turn = f"{Path(path).name}#{report.anchor_of(6)}"
    assert "### The chair's synthesis" in markdown
    assert f"| 2 | Bob | **DISSENTING** | [6]({turn}) |" in markdown
    assert "**Departures** (where the synthesis overrules a seat's final stance):\n- Seat 2 (DISSENTING" in markdown
    assert '<h2>The chair\'s synthesis</h2><div class="pair">' in page
    assert '<td class="n">2</td><td><span style="color:#c2560c">Bob</span></td><td><strong>DISSENTING' in page
    assert "<h3>Departures</h3><ul><li>Seat 2 (DISSENTING, Turn 6)" in page


def test_a_duel_without_a_chair_has_no_synthesis_in_its_report(service, source, pair):
    alice, _ = pair
    path = service.status(alice.duel_id).duel.debate_path
    report = build_report(Path(path).read_text(), path)
    assert report.synthesis is None and "synthesis" not in report.to_dict()
    assert "synthesis" not in render_markdown(report).casefold()
