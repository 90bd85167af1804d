"""A chair (issue 13, item 2): seat 0 frames a panel with an opening brief (turn 0), a
pre-closing list of unengaged points the closing round must address, and a synthesis;
it takes no stance, and outcomes wait for the closing round.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_participant import clean_env, finish, start, wait_for_seat

from rp1_duel.coordination import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.participant.loop import awaited
from rp1_duel.participant.prompt import chair_system_prompt, instruction, system_prompt
from rp1_duel.record import (
    Claimant,
    FrontMatter,
    FrontMatterError,
    History,
    RecordFile,
    apply_agreed,
    parse,
    validate_file,
)
from rp1_duel.record.outcomes import TurnSummary, evaluate
from rp1_duel.review.assessment import assessment_prompt
from rp1_duel.review.listing import ListedDuel, duels_table, list_duels
from rp1_duel.review.report import build_report
from rp1_duel.review.report_html import render_html
from rp1_duel.review.report_markdown import render_markdown
from rp1_duel.review.watch_model import situation, view_of
from rp1_duel.schedule import Schedule
from rp1_duel.settings import DuelSettings
from rp1_duel.turns import phase_note, read_source, validate_turn
from rp1_duel.turns.revision import revision_id
from rp1_duel.vocabulary import ACCEPTED_CONSENSUS, DISSENT, Phase, Role

from helpers import SOURCE, Player, claim, join, make_turn, panel, replace_edit, run_tools, with_edits

OPEN, CONV, ACCEPT, DISS = "OPEN_TO_DEBATE", "CONVERGING", "ACCEPTING_CONSENSUS", "DISSENTING"
PANEL = {1: ("Alice", "claude-code", "claude-x"), 2: ("Bob", "codex", "gpt-x"), 3: ("Carol", "script", "carol-1")}
CHAIR = ("Chair", "duel", "chair-1")
SCHEDULE = Schedule(seats=3, max_turns=6, chair=True)  # 0 brief; 1-3 opening; 4 pre-closing; 5-7 closing; 8 synthesis
POINTS = (
    "Turn 2 asked whether a refresh may outlive the turn deadline, and nobody answered it.",
    "Turn 3 raised the cost of fencing tokens for storage that cannot compare them.",
)


def heading(n: int, who: tuple[str, str, str] = CHAIR, slot: str = "CHAIR") -> str:
    name, harness, model = who
    return f"## Turn {n} \u2014 {name} ({harness} / {model}) \u2014 {slot}\n"


def brief(who: tuple[str, str, str] = CHAIR) -> str:
    return (
        heading(0, who) + "**Question**\nAre fifteen-minute leases the right default?\n"
        "**Lineup**\n- Alice (seat 1), Bob (seat 2) and Carol (seat 3), each from their own harness.\n"
        "**What A Good Answer Looks Like**\n- It cites the design's lease semantics and weighs crash recovery.\n"
    )


def pre_closing(n: int = 4, points: tuple[str, ...] = POINTS) -> str:
    return heading(n) + "**Unengaged Points**\n" + "".join(f"{k}. {point}\n" for k, point in enumerate(points, 1))


def synthesis(n: int = 8) -> str:
    return (
        heading(n) + "**Synthesis**\nThe panel accepted fifteen-minute leases, as Turn 5 argued.\n"
        "**Still Open**\n- Whether fencing tokens need a benchmark.\n"
    )


def addressing(pre_closing_turn: int, *excerpts: str) -> str:
    return "".join(
        f'- Addresses: Turn {pre_closing_turn} "{excerpt}"\n'
        f"  Claim: the closing answer to {excerpt[:20]} is the design's own rule\n"
        f"  Support:\n  - design.md#Failure handling\n"
        for excerpt in excerpts
    )


ANSWERS = ("a refresh may outlive the turn deadline", "cost of fencing tokens")


def panel_turn(n: int, stance: str, schedule: Schedule = SCHEDULE, answers: tuple[str, ...] = ANSWERS) -> str:
    """A valid panel turn n; a closing-round one addresses the unengaged points with ``answers``."""
    text = make_turn(n, *PANEL[schedule.speaker(n)], stance=stance)
    if schedule.phase(n) == Phase.CLOSING:
        text = text.replace("**Agreements**\n", addressing(schedule.pre_closing or 0, *answers) + "**Agreements**\n")
    return text


def history_upto(number: int, schedule: Schedule = SCHEDULE, stance: str = OPEN) -> History:
    """The history of a chaired panel of three before turn ``number``, every panel turn with ``stance``."""
    history = History(source=None, source_names=("design.md",), schedule=schedule)
    for n in range(number):
        text = brief() if n == 0 else pre_closing(n) if n == schedule.pre_closing else panel_turn(n, stance, schedule)
        report = validate_turn(text, history.context_for(claimant_of(n, schedule)))
        assert report.ok, (n, report.violations)
        history.accept(None, report.turn)  # type: ignore[arg-type]
    return history


def claimant_of(n: int, schedule: Schedule = SCHEDULE) -> Claimant:
    seat = schedule.speaker(n)
    return Claimant(*(CHAIR if seat == 0 else PANEL[seat]))


def codes_and_lines(text: str, number: int, schedule: Schedule = SCHEDULE) -> list[tuple[str, int | None]]:
    history = history_upto(number, schedule)
    report = validate_turn(text, history.context_for(claimant_of(number, schedule)))
    return [(v.code, v.line) for v in report.violations]


# -- the schedule (pure) ---------------------------------------------------------------------------


def test_the_chair_writes_turn_0_the_pre_closing_and_the_synthesis_around_the_panel():
    assert [SCHEDULE.speaker(n) for n in range(9)] == [0, 1, 2, 3, 0, 1, 2, 3, 0]
    assert [SCHEDULE.phase(n) for n in range(9)] == [
        Phase.OPENING_BRIEF,
        Phase.OPENING,
        Phase.OPENING,
        Phase.OPENING,
        Phase.PRE_CLOSING,
        Phase.CLOSING,
        Phase.CLOSING,
        Phase.CLOSING,
        Phase.SYNTHESIS,
    ]
    three_rounds = Schedule(seats=3, max_turns=9, chair=True)
    assert [three_rounds.speaker(n) for n in range(12)] == [0, 1, 2, 3, 1, 2, 3, 0, 1, 2, 3, 0]
    assert [three_rounds.phase(n) for n in (4, 6, 7, 8, 10, 11)] == [
        Phase.REBUTTAL,
        Phase.REBUTTAL,
        Phase.PRE_CLOSING,
        Phase.CLOSING,
        Phase.CLOSING,
        Phase.SYNTHESIS,
    ]
    assert (three_rounds.first, three_rounds.pre_closing, three_rounds.last, three_rounds.turn_count) == (0, 7, 11, 12)


def test_without_a_chair_the_schedule_is_round_robin_from_turn_1():
    plain = Schedule(seats=3, max_turns=9, chair=False)
    assert [plain.speaker(n) for n in range(1, 10)] == [1, 2, 3, 1, 2, 3, 1, 2, 3]
    assert (plain.first, plain.last, plain.pre_closing, plain.phase(1)) == (1, 9, None, None)
    assert [plain.own_turns_before(n) for n in (1, 3, 4, 9)] == [0, 0, 1, 2]


def test_each_writer_counts_its_own_turns_so_a_script_plays_its_files_in_order():
    assert [SCHEDULE.own_turns_before(n) for n in range(9)] == [0, 0, 0, 0, 1, 1, 1, 1, 2]


def test_a_chaired_duel_needs_two_rounds_and_defaults_to_three():
    assert DuelSettings(seats=3, chair=True).schedule == Schedule(seats=3, max_turns=9, chair=True)
    DuelSettings(seats=3, max_turns=6, chair=True).check()
    with pytest.raises(DuelError) as refused:
        DuelSettings(seats=3, max_turns=5, chair=True).check()
    assert (refused.value.code, refused.value.details) == ("INVALID_ARGUMENT", {"flag": "--max-turns"})
    DuelSettings(seats=3, max_turns=5).check()  # without a chair, one round is enough


# -- the chair's grammar ------------------------------------------------------------------------------


def test_the_chairs_three_turns_pass_their_rules():
    assert codes_and_lines(brief(), 0) == []
    assert codes_and_lines(pre_closing(), 4) == []
    history = history_upto(8)
    assert validate_turn(synthesis(), history.context_for(Claimant(*CHAIR))).ok


def test_an_opening_brief_missing_a_section_or_with_another_phases_is_chair_format():
    missing_lineup = brief().replace(
        "**Lineup**\n- Alice (seat 1), Bob (seat 2) and Carol (seat 3), each from their own harness.\n", ""
    )
    assert codes_and_lines(missing_lineup, 0) == [("CHAIR_FORMAT", None)]
    with_synthesis = brief() + "**Synthesis**\nToo early.\n"
    assert codes_and_lines(with_synthesis, 0) == [("CHAIR_FORMAT", 8)]
    empty_question = brief().replace("Are fifteen-minute leases the right default?\n", "")
    assert codes_and_lines(empty_question, 0) == [("CHAIR_FORMAT", 2)]


def test_the_chair_takes_no_stance_and_a_panelist_takes_no_chair():
    assert codes_and_lines(brief().replace("CHAIR\n", "CONVERGING\n", 1), 0) == [("HEADING", 1)]
    panelist_as_chair = make_turn(1, *PANEL[1]).replace("OPEN_TO_DEBATE", "CHAIR", 1)
    assert codes_and_lines(panelist_as_chair, 1) == [("HEADING", 1)]
    chair_in_a_panel_turn = brief().replace("Turn 0", "Turn 1")  # turn 1 is Alice's: not the chair's
    history = history_upto(1)
    codes = {v.code for v in validate_turn(chair_in_a_panel_turn, history.context_for(Claimant(*CHAIR))).violations}
    assert "HEADING" in codes and "SECTION_MISSING" in codes


def test_without_a_chair_a_chair_heading_is_still_a_stance_violation():
    history = History(source=None, source_names=("design.md",), schedule=panel(3))
    turn = make_turn(1, *PANEL[1]).replace("OPEN_TO_DEBATE", "CHAIR", 1)
    assert [v.code for v in validate_turn(turn, history.context_for(Claimant(*PANEL[1]))).violations] == ["STANCE"]


def test_unengaged_points_are_one_to_three_each_naming_an_earlier_panel_turn():
    four = (*POINTS, "Turn 1 said more.", "Turn 2 said more too.")
    assert codes_and_lines(pre_closing(points=four), 4) == [("CHAIR_FORMAT", 2)]
    uncited = ("Nobody answered the refresh question.",)
    assert codes_and_lines(pre_closing(points=uncited), 4) == [("CHAIR_FORMAT", 3)]
    chairs_own = ("Turn 0 asked a question nobody took up.",)
    assert codes_and_lines(pre_closing(points=chairs_own), 4) == [("CHAIR_FORMAT", 3)]
    future = ("Turn 6 will raise something.",)
    assert codes_and_lines(pre_closing(points=future), 4) == [("TURN_REF_NOT_FOUND", 3)]
    misquoted = ('Turn 2 "leases never expire" went unanswered.',)
    assert codes_and_lines(pre_closing(points=misquoted), 4) == [("TURN_REF_NOT_FOUND", 3)]


def test_a_chair_turn_keeps_the_safety_rules():
    raw = pre_closing().replace("nobody answered it.", "nobody answered it. <details>hidden</details>")
    assert ("RAW_HTML", 3) in codes_and_lines(raw, 4)
    assert ("UNSAFE_STRUCTURE", 8) in codes_and_lines(brief() + "# Not a turn heading\n", 0)


# -- the closing check ----------------------------------------------------------------------------------


def test_a_closing_turn_that_leaves_a_point_unaddressed_is_refused_naming_it():
    text = panel_turn(5, OPEN, answers=ANSWERS[:1])
    found = codes_and_lines(text, 5)
    assert found == [("UNENGAGED_POINTS", 4)]
    report = validate_turn(text, history_upto(5).context_for(claimant_of(5)))
    assert "point 2 of Turn 4" in report.violations[0].message and "fencing tokens" in report.violations[0].message


def test_a_closing_turn_addressing_every_point_is_accepted():
    assert codes_and_lines(panel_turn(5, OPEN), 5) == []


def test_an_excerpt_counts_only_for_the_point_it_is_quoted_from():
    both_from_point_one = panel_turn(5, OPEN, answers=(ANSWERS[0], "outlive the turn deadline"))
    assert codes_and_lines(both_from_point_one, 5) == [("UNENGAGED_POINTS", 4)]


def test_rebuttal_turns_need_not_address_the_points():
    schedule = Schedule(seats=3, max_turns=9, chair=True)
    assert codes_and_lines(make_turn(4, *PANEL[1]), 4, schedule) == []


# -- outcomes ---------------------------------------------------------------------------------------------


C = None  # a chair turn


def chaired(*stances: str | None) -> list[TurnSummary]:
    """Turns 0, 1, … of SCHEDULE with these stances (C: the chair's, which has none)."""
    return [
        TurnSummary(seat=SCHEDULE.speaker(n), stance=stance or "", has_blocking=False)
        for n, stance in enumerate(stances)
    ]


def test_outcomes_wait_for_the_synthesis_after_the_closing_round():
    opening_accepts = chaired(C, ACCEPT, ACCEPT, ACCEPT)  # consensus after one round, without a chair
    assert evaluate(opening_accepts, SCHEDULE).outcome is None
    closing_round = chaired(C, OPEN, OPEN, OPEN, C, ACCEPT, ACCEPT, ACCEPT)  # no synthesis yet
    assert evaluate(closing_round, SCHEDULE).outcome is None
    assert evaluate(closing_round, SCHEDULE).candidate_convergence
    complete = chaired(C, OPEN, OPEN, OPEN, C, ACCEPT, ACCEPT, ACCEPT, C)
    assert [t.seat for t in complete] == [0, 1, 2, 3, 0, 1, 2, 3, 0]
    assert evaluate(complete, SCHEDULE).outcome == ACCEPTED_CONSENSUS
    assert evaluate(chaired(C, OPEN, OPEN, OPEN, C, ACCEPT, DISS, ACCEPT, C), SCHEDULE).outcome == DISSENT


# -- the service ----------------------------------------------------------------------------------------------


def seat_chaired_panel(service, source: Path, **settings) -> dict[int, Player]:
    players = {
        seat: join(
            service,
            source,
            name,
            harness=harness,
            model_id=model,
            settings=DuelSettings(seats=3, max_turns=6, chair=True, **settings),
        )
        for seat, (name, harness, model) in PANEL.items()
    }
    players[0] = join(service, source, CHAIR[0], harness=CHAIR[1], model_id=CHAIR[2], role=Role.CHAIR)
    return players


def write(service, players: dict[int, Player], count: int, closing_stance: str = ACCEPT) -> str:
    """Append the next ``count`` turns of SCHEDULE; the artifact's path."""
    path = ""
    for _ in range(count):
        number = service.status(players[1].duel_id).next_turn
        seat, phase = SCHEDULE.speaker(number), SCHEDULE.phase(number)
        if phase == Phase.OPENING_BRIEF:
            text = brief()
        elif phase == Phase.PRE_CLOSING:
            text = pre_closing(number)
        elif phase == Phase.SYNTHESIS:
            text = synthesis(number)
        else:
            text = panel_turn(number, OPEN if phase == Phase.OPENING else closing_stance)
        path = service.append(players[seat].seat, claim(service, players[seat]), text, release=True).debate_path
    return path


def test_a_chaired_panel_begins_with_the_chair_once_every_seat_is_taken(service, source, clock):
    players = {
        seat: join(service, source, name, settings=DuelSettings(seats=3, chair=True))
        for seat, (name, _, _) in PANEL.items()
    }
    assert service.status(players[1].duel_id, participant_id=players[1].id).next_step == "wait_peer"
    chair = join(service, source, "Chair", role=Role.CHAIR)
    assert chair.seat.number == 0
    assert situation(view_of(service.status(chair.duel_id), clock().wall))[0].startswith("turn 0 of 11 is Chair's")
    status = service.status(chair.duel_id, participant_id=chair.id)
    assert (status.next_step, status.next_turn, status.next_turn_seat, status.turn_count) == ("claim_lock", 0, 0, 0)
    assert service.claim_lock(players[1].seat).reason == "not_your_turn"


def test_a_chaired_panel_reaches_consensus_after_the_synthesis_and_validates(service, source, debate_dir):
    players = seat_chaired_panel(service, source)
    write(service, players, 8)
    status = service.status(players[1].duel_id)
    assert (status.duel.pending_outcome, status.next_turn_seat) == (
        None,
        0,
    )  # the closing round accepted: synthesis due
    path = write(service, players, 1)
    assert service.status(players[1].duel_id).duel.pending_outcome == ACCEPTED_CONSENSUS
    service.release_lock(players[0].seat, claim(service, players[0]), close=True, outcome=ACCEPTED_CONSENSUS)
    text = Path(path).read_text()
    assert "max_turns: 6\nseats: 3\nchair: true\n" in text and "| Seats | 3 |\n| Chair | yes |" in text
    assert "<!-- duel:turn n=0 " in text and "| chair | Chair |" in text
    report = validate_file(path)
    assert report.valid, report.problems
    assert (report.turns, report.implied_outcome) == (9, ACCEPTED_CONSENSUS)
    state = json.loads((debate_dir / ".duel" / "duels" / players[1].duel_id / "state.json").read_text())
    assert state["chair"] is True and sorted(p["seat"] for p in state["participants"]) == [0, 1, 2, 3]


def test_a_synthesis_may_propose_edits_but_the_agreed_revision_is_the_one_the_panel_accepted(service, source):
    players = seat_chaired_panel(service, source)
    write(service, players, 8)  # the closing round accepts the document as it is
    edit = replace_edit("expiry", "fifteen minutes", "ten minutes")
    chair = players[0]
    path = service.append(chair.seat, claim(service, chair), with_edits(synthesis(8), edit), release=True).debate_path
    assert service.status(chair.duel_id).duel.pending_outcome == ACCEPTED_CONSENSUS
    service.release_lock(chair.seat, claim(service, chair), close=True, outcome=ACCEPTED_CONSENSUS)
    assert validate_file(path).valid
    agreed = apply_agreed(path)  # the chair accepts for no one: its edit is not applied
    assert (agreed.agreed.changed, agreed.agreed.id, agreed.written) == (False, revision_id(SOURCE), None)
    assert source.read_text(encoding="utf-8") == SOURCE


def test_duel_list_counts_the_chairs_turns_among_the_turns_to_write(service, source):
    players = seat_chaired_panel(service, source)
    write(service, players, 9)
    [row] = list_duels(service)
    assert isinstance(row, ListedDuel)
    assert (row.turn_count, row.schedule.max_turns, row.schedule.turn_count) == (9, 6, 9)
    assert " 9/9 " in duels_table([row])


def test_a_closing_turn_missing_a_point_is_refused_by_the_service(service, source):
    players = seat_chaired_panel(service, source)
    write(service, players, 5)
    alice = players[1]
    with pytest.raises(DuelError) as refused:
        service.append(alice.seat, claim(service, alice), panel_turn(5, ACCEPT, answers=ANSWERS[1:]))
    assert refused.value.code == "TURN_INVALID"
    assert [v["code"] for v in refused.value.details["violations"]] == ["UNENGAGED_POINTS"]


def test_a_chaired_artifact_edited_fails_duel_validate(service, source):
    players = seat_chaired_panel(service, source)
    path = write(service, players, 9)
    text = Path(path).read_text()
    Path(path).write_text(text.replace("chair: true\n", ""))
    assert "FRONT_MATTER" in {p.code for p in validate_file(path).problems}  # seat 0 without a chair
    Path(path).write_text(text.replace("Turn 2 asked whether", "Turn 2 wondered whether"))
    assert "HASH_MISMATCH" in {p.code for p in validate_file(path).problems}


def test_a_silent_chair_times_the_panel_out(service, source, clock):
    players = seat_chaired_panel(service, source)
    clock.advance(1800)  # turn 0, the chair's, was never written
    assert service.status(players[2].duel_id, participant_id=players[2].id).next_step == "claim_timeout"
    granted = service.claim_lock(players[2].seat, for_timeout=True)
    closed = service.release_lock(players[2].seat, granted.lease, close=True, outcome="TIMEOUT")
    assert closed.outcome == "TIMEOUT"
    assert validate_file(service.status(players[2].duel_id).duel.debate_path).valid


# -- roles ---------------------------------------------------------------------------------------------------------


def test_the_chair_role_is_refused_on_a_duel_without_a_chair(service, source, pair):
    with pytest.raises(DuelError) as refused:
        join(service, source, "Chair", role=Role.CHAIR)
    assert refused.value.code == "INVALID_ARGUMENT" and "has no chair" in refused.value.message


def test_a_second_chair_is_duel_full(service, source):
    join(service, source, "Chair", role=Role.CHAIR, settings=DuelSettings(seats=2))  # implies --chair
    with pytest.raises(DuelError) as refused:
        join(service, source, "Other", role=Role.CHAIR)
    assert refused.value.code == "DUEL_FULL" and "already has a chair" in refused.value.message


def test_panel_seats_and_the_chairs_fill_separately(service, source):
    join(service, source, "Alice", settings=DuelSettings(chair=True))
    join(service, source, "Bob")
    with pytest.raises(DuelError) as refused:
        join(service, source, "Carol")
    assert refused.value.code == "DUEL_FULL" and "the chair's seat is open" in refused.value.message
    assert join(service, source, "Chair", role=Role.CHAIR).seat.number == 0


def test_a_participant_resumes_only_in_its_own_role(service, source):
    join(service, source, "Chair", role=Role.CHAIR)
    with pytest.raises(DuelError) as refused:
        join(service, source, "Chair")
    assert refused.value.code == "INVALID_ARGUMENT" and "holds the chair" in refused.value.message


def test_a_duel_without_a_chair_keeps_its_state_and_json_as_before(service, source, pair, debate_dir):
    state = json.loads((debate_dir / ".duel" / "duels" / pair[0].duel_id / "state.json").read_text())
    assert "chair" not in state
    status = service.status(pair[0].duel_id).to_dict()
    assert "chair" not in status["duel"] and "next_turn" not in status
    created = service.join(target=str(source), participant_name="Zed", topic="Another topic").to_dict()
    assert "chair" not in created and created["seat"] == 1


def test_front_matter_with_a_chair_below_two_rounds_is_refused():
    raw = (
        "duel_id: d\ntopic: t\ntopic_slug: t\nsource_path: s.md\nsource_sha256: x\nmax_turns: 5\nseats: 3\n"
        "chair: true\nstatus: ACTIVE\noutcome: null\ncreated_at: c\nclosed_at: null\nparticipants: []\n"
    )
    with pytest.raises(FrontMatterError):
        FrontMatter.parse(raw)
    assert FrontMatter.parse(raw.replace("max_turns: 5", "max_turns: 6")).schedule.chair is True


# -- duel report and duel watch -----------------------------------------------------------------------------------


def test_duel_report_and_watch_show_the_chairs_turns_without_a_stance(service, source, clock):
    players = seat_chaired_panel(service, source)
    path = write(service, players, 9)
    service.release_lock(players[0].seat, claim(service, players[0]), close=True, outcome=ACCEPTED_CONSENSUS)
    report = build_report(RecordFile.read(path).text, path)
    assert [(entry.turn, entry.seat, entry.stance) for entry in report.timeline][:2] == [(0, 0, None), (1, 1, OPEN)]
    assert report.timeline[0].headline.startswith("Question: Are fifteen-minute leases")
    assert report.outcome.outcome == ACCEPTED_CONSENSUS and not report.problems
    assert report.outcome.deciding_turns == (5, 6, 7)  # the closing round, the chair aside
    chair = report.participant(0)
    assert chair is not None and chair.turns == (0, 4, 8) and report.to_dict()["chair"] is True
    markdown, html = render_markdown(report), render_html(report)

    def turn(n: int) -> str:  # a turn number links to the turn's heading in the artifact
        return f"{Path(path).name}#{report.anchor_of(n)}"

    assert report.anchor_of(0) == "turn-0--chair-duel--chair-1--chair"  # "Turn 0 — Chair (duel / chair-1) — CHAIR"
    assert (
        f"| [0]({turn(0)}) | Chair | no stance | 0 | Question: Are fifteen-minute leases the right default? |"
        in markdown
    )
    assert f"| [4]({turn(4)}) | Chair | no stance | 0 | Unengaged Points: Turn 2 asked whether a refresh" in markdown
    assert f'<td class="n"><a href="{turn(0)}">0</a></td><td><span style="color:#1f2328">Chair</span></td>' in html
    # The charts leave the chair out: rounds name the panel's turns (the closing round is 5-7), and the
    # stance axis runs over turns 0-8, as written.
    assert 'x-axis "round (turns)" ["1-3", "5-7"]' in markdown
    assert markdown.startswith("## Panel report: Lease design") and "<h1>Panel report: Lease design</h1>" in html
    axis = re.findall(r'text-anchor="middle">(\d+)</text>', html)
    assert axis == [str(n) for n in range(9)]
    status = service.status(players[1].duel_id)
    assert situation(view_of(status, clock().wall)) == (
        "outcome: ACCEPTED_CONSENSUS after 9 of 9 turns",
        f"record: {path}",
    )


def test_the_assessment_prompt_names_each_seats_turns_and_the_chairs(service, source):
    players = seat_chaired_panel(service, source)
    path = write(service, players, 9)
    parsed = parse(Path(path).read_text())
    prompt = assessment_prompt(FrontMatter.parse(parsed.front_matter), parsed.blocks)
    assert "- seat 0: Chair (chair-1), turns 0, 4 and 8 (the chair: it takes no stance)\n" in prompt
    assert "- seat 3: Carol (carol-1), turns 3 and 7\n" in prompt and "9 of 9 turns" in prompt


# -- real processes ---------------------------------------------------------------------------------------------------


def script_dir(tmp_path: Path, name: str, texts: list[str]) -> Path:
    folder = tmp_path / name.lower()
    folder.mkdir()
    for index, text in enumerate(texts, start=1):
        (folder / f"{index}.md").write_text(text)
    return folder


@pytest.mark.slow
def test_tools_join_takes_the_chair_seat_and_refuses_a_chair_where_there_is_none(source, debate_dir):
    def tools_join(name: str, *flags: str):
        return run_tools("join", "--target", str(source), "--participant-name", name, *flags, debate_dir=debate_dir)

    alice = tools_join("Alice", "--chair")
    assert (alice.code, alice.envelope["data"]["chair"], alice.envelope["data"]["max_turns"]) == (0, True, 6)
    chair = tools_join("Chair", "--role", "chair")
    assert (chair.code, chair.envelope["data"]["seat"]) == (0, 0)
    second = tools_join("Other", "--role", "chair")
    assert second.envelope["error"]["code"] == "DUEL_FULL"


@pytest.mark.slow
def test_a_chaired_panel_of_join_processes_reaches_consensus_and_validates(source, debate_dir, tmp_path):
    def scripted(name: str, texts: list[str], *flags: str):
        folder = script_dir(tmp_path, name, texts)
        return start(
            source,
            debate_dir,
            "--model",
            f"scripted:{folder}",
            "--name",
            name,
            "--seats",
            "3",
            "--max-turns",
            "6",
            "--chair",
            *flags,
            env=clean_env(),
        )

    model = "scripted:{}"
    processes = []
    for seat, (name, _, _) in PANEL.items():
        who = (name, "duel", model.format(name.lower()))
        texts = [
            make_turn(seat, *who, stance=OPEN),
            make_turn(seat + 4, *who, stance=ACCEPT).replace(
                "**Agreements**\n", addressing(4, *ANSWERS) + "**Agreements**\n"
            ),
        ]
        processes.append(scripted(name, texts))
        wait_for_seat(debate_dir, source, count=seat)
    chair = ("Chair", "duel", "scripted:chair")
    processes.append(
        scripted(
            "Chair",
            [
                brief(chair),
                pre_closing(4).replace(heading(4), heading(4, chair)),
                synthesis(8).replace(heading(8), heading(8, chair)),
            ],
            "--role",
            "chair",
        )
    )
    finished = [finish(process) for process in processes]
    assert [(code, result["outcome"], result["seat"]) for code, result, _ in finished] == [
        (0, ACCEPTED_CONSENSUS, 1),
        (0, ACCEPTED_CONSENSUS, 2),
        (0, ACCEPTED_CONSENSUS, 3),
        (0, ACCEPTED_CONSENSUS, 0),
    ], finished[0][2]
    assert [result["turns_written"] for _, result, _ in finished] == [[1, 5], [2, 6], [3, 7], [0, 4, 8]]
    report = validate_file(finished[0][1]["debate_path"])
    assert report.valid, report.problems


# -- the participant's prompt ----------------------------------------------------------------------------------------


def test_the_chairs_prompt_gives_its_three_formats_and_rules_but_not_the_panels(source):
    system = chair_system_prompt(
        "Chair", topic="Lease design", source=read_source(source), source_name="design.md", persona=None, seats=3
    )
    assert "**Question**" in system and "**Unengaged Points**" in system and "**Synthesis**" in system
    assert "`CHAIR_FORMAT`" in system and "`UNENGAGED_POINTS`" not in system and "**Novel Argument**" not in system
    text = instruction(
        0,
        max_turns=8,
        heading=heading(0).rstrip("\n"),
        by_chair=True,
        phase=phase_note(Phase.OPENING_BRIEF, lineup=["Alice (claude-code / claude-x), seat 1"]),
    )
    assert "\n## Turn 0 \u2014 Chair (duel / chair-1) \u2014 CHAIR\n" in text and "STANCE" not in text
    assert "present the lineup (Alice (claude-code / claude-x), seat 1)" in text


def test_each_chair_phase_and_the_closing_round_are_told_what_they_are_for():
    assert "List 1 to 3" in phase_note(Phase.PRE_CLOSING)
    assert "the panel's outcome is ACCEPTED_CONSENSUS" in phase_note(Phase.SYNTHESIS, outcome=ACCEPTED_CONSENSUS)
    points = history_upto(5).turns[4].points
    closing = phase_note(Phase.CLOSING, points=points, pre_closing=4)
    assert '`Addresses: Turn 4 "…"`' in closing and f"1. {POINTS[0]}\n2. {POINTS[1]}\n" in closing
    assert phase_note(Phase.REBUTTAL) == phase_note(None) == ""


def test_a_panelist_of_a_chaired_panel_is_told_of_the_chair(source):
    chaired_prompt = system_prompt(
        "Alice",
        topic="Lease design",
        source=read_source(source),
        source_name="design.md",
        persona=None,
        position=None,
        schedule=SCHEDULE,
    )
    assert "A chair, who takes no stance" in chaired_prompt
    plain = system_prompt(
        "Alice",
        topic="Lease design",
        source=read_source(source),
        source_name="design.md",
        persona=None,
        position=None,
        schedule=panel(3),
    )
    assert "A chair, who takes no stance" not in plain


def test_a_join_waits_for_the_panelists_and_the_chair_still_missing_never_for_0(
    service: DuelService, source: Path, tmp_path: Path
) -> None:
    ann = join(service, source, "Ann", settings=DuelSettings(seats=3, chair=True))
    assert awaited(service.status(ann.duel_id)) == "2 more of 3 panelists and the chair"
    join(service, source, "Bo")
    join(service, source, "Cy")
    assert awaited(service.status(ann.duel_id)) == "the chair"  # not "0 more of 3 panelists"
    other = tmp_path / "other.md"
    other.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    di = join(service, other, "Di", settings=DuelSettings(seats=3, chair=True))
    join(service, other, "Chair", role=Role.CHAIR)
    assert awaited(service.status(di.duel_id)) == "2 more of 3 panelists"  # the chair is no panelist
