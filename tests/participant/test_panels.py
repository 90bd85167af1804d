"""Panels: a duel of N seats (docs/protocol.md section 12; issue 13, item 1), two seats unchanged.

Turn n belongs to seat ((n - 1) mod N) + 1; every rule reads the latest turn of every
seat; turn 1 begins once every seat is taken; a silent seat times the panel out.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_participant import clean_env, finish, start, wait_for_seat

from rp1_duel.coordination._state import DuelState
from rp1_duel.errors import DuelError
from rp1_duel.record import Claimant, History, validate_file
from rp1_duel.record.artifact import FrontMatter, FrontMatterError, ParticipantEntry, front_matter_mapping
from rp1_duel.record.outcomes import Evaluation, TurnSummary, evaluate
from rp1_duel.review.watch_model import situation, view_of
from rp1_duel.schedule import Schedule
from rp1_duel.settings import DuelSettings
from rp1_duel.turns import parse_turn, read_source, validate_turn
from rp1_duel.vocabulary import ACCEPTED_CONSENSUS, DISSENT, MAX_TURNS

from helpers import DUEL, Player, claim, join, make_turn, panel, run_tools

OPEN, CONV, ACCEPT, DISS = "OPEN_TO_DEBATE", "CONVERGING", "ACCEPTING_CONSENSUS", "DISSENTING"
PANEL = {1: ("Alice", "claude-code", "claude-x"), 2: ("Bob", "codex", "gpt-x"), 3: ("Carol", "script", "carol-1")}


def panel_turns(seats: int, *turns: tuple[str, bool]) -> list[TurnSummary]:
    """Turns in order, seats round-robin from seat 1: (stance, has_blocking)."""
    return [
        TurnSummary(seat=panel(seats).speaker(n), stance=stance, has_blocking=blocking)
        for n, (stance, blocking) in enumerate(turns, start=1)
    ]


# -- turn order ------------------------------------------------------------------------------


def test_turns_go_round_robin_over_the_seats():
    assert [panel(3).speaker(n) for n in range(1, 8)] == [1, 2, 3, 1, 2, 3, 1]
    assert [panel(8).speaker(n) for n in (1, 8, 9, 16, 17)] == [1, 8, 1, 8, 1]


def test_two_seats_keep_odd_and_even_turns():
    assert [DUEL.speaker(n) for n in range(1, 7)] == [1, 2, 1, 2, 1, 2]


# -- outcomes ----------------------------------------------------------------------------------


def test_no_panel_outcome_before_every_seat_has_written():
    assert evaluate(panel_turns(3, (ACCEPT, False), (ACCEPT, False)), panel(3, 9)) == Evaluation(
        None, candidate_convergence=False
    )
    assert evaluate(panel_turns(3, (DISS, False), (DISS, False)), panel(3, 2)) == Evaluation(
        None, candidate_convergence=False
    )


def test_panel_consensus_needs_the_latest_turn_of_every_seat_to_accept_without_blocking():
    accepted = panel_turns(3, (OPEN, False), (ACCEPT, False), (ACCEPT, False), (ACCEPT, False))
    assert evaluate(accepted, panel(3, 9)) == Evaluation(ACCEPTED_CONSENSUS, candidate_convergence=True)
    two_of_three = panel_turns(3, (ACCEPT, False), (ACCEPT, False), (CONV, False))
    assert evaluate(two_of_three, panel(3, 9)) == Evaluation(None, candidate_convergence=True)
    blocked = panel_turns(3, (ACCEPT, False), (ACCEPT, True), (ACCEPT, False))
    assert evaluate(blocked, panel(3, 9)) == Evaluation(None, candidate_convergence=False)


def test_panel_dissents_early_only_when_every_seat_dissents():
    assert evaluate(panel_turns(3, (DISS, False), (DISS, False), (DISS, False)), panel(3, 9)).outcome == DISSENT
    one_dissenter = panel_turns(3, (CONV, False), (CONV, False), (DISS, False), (CONV, False), (CONV, False))
    assert evaluate(one_dissenter, panel(3, 9)).outcome is None


@pytest.mark.parametrize(
    "last_round", [((CONV, False), (CONV, False), (DISS, False)), ((CONV, False), (CONV, True), (ACCEPT, False))]
)
def test_panel_dissent_at_max_turns_while_any_seat_dissents_or_blocks(last_round):
    turns = panel_turns(3, (OPEN, False), (OPEN, False), (OPEN, False), *last_round)
    assert evaluate(turns, panel(3, 6)).outcome == DISSENT
    assert evaluate(turns, panel(3, 7)).outcome is None


def test_panel_ends_max_turns_when_the_last_turn_leaves_no_dissent_or_block():
    turns = panel_turns(3, (DISS, True), (OPEN, False), (OPEN, False), (CONV, False), (ACCEPT, False), (CONV, False))
    assert evaluate(turns, panel(3, 6)) == Evaluation(MAX_TURNS, candidate_convergence=True)


# -- settings ----------------------------------------------------------------------------------


def test_max_turns_defaults_to_three_rounds():
    assert DuelSettings().schedule == DUEL
    assert DuelSettings(seats=3).schedule == panel(3, 9)
    assert DuelSettings(max_turns=4, seats=3).schedule == panel(3, 4)


@pytest.mark.parametrize(
    ("settings", "flag"),
    [
        (DuelSettings(seats=9), "--seats"),
        (DuelSettings(seats=1), "--seats"),
        (DuelSettings(max_turns=2, seats=3), "--max-turns"),
    ],
)
def test_seats_out_of_range_or_fewer_turns_than_seats_are_refused(settings, flag):
    with pytest.raises(DuelError) as refused:
        settings.check()
    assert refused.value.code == "INVALID_ARGUMENT"
    assert refused.value.details == {"flag": flag}


# -- the record ----------------------------------------------------------------------------------


def front(seats: int, *participant_seats: int) -> FrontMatter:
    entries = tuple(
        ParticipantEntry(
            id=f"p-0000000{seat}", seat=seat, display_name=f"P{seat}", harness="h", model_id="m", joined_at=None
        )
        for seat in participant_seats
    )
    return FrontMatter(
        duel_id="d",
        topic="t",
        topic_slug="t",
        source_path="s.md",
        source_sha256="0" * 64,
        schedule=panel(seats, 9),
        status="ACTIVE",
        outcome=None,
        created_at="2026-11-23T00:00:00.000Z",
        closed_at=None,
        participants=entries,
    )


# What YAML refuses to read raw (DEL, C1, lone surrogates, U+FFFE, U+FFFF), and C0, which JSON escapes.
YAML_REFUSES = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


@settings(deadline=None)
@given(st.text(st.characters(codec=None, max_codepoint=0xFFFF)) | st.text(st.characters(max_codepoint=0x7F)))
def test_any_topic_is_written_into_the_header_escaped_and_read_back_as_it_was(topic):
    header = front(2, 1)._replace(topic=topic)

    written = header.to_yaml()

    assert not YAML_REFUSES.search(written.replace("\n", ""))  # a line end ends each field
    assert FrontMatter.parse(written).topic == topic


_REST = (
    "duel_id: d\ntopic: t\ntopic_slug: t\nsource_path: s.md\nsource_sha256: x\nmax_turns: 9\nstatus: ACTIVE\n"
    "outcome: null\ncreated_at: c\nclosed_at: null\n"
)


def test_two_seat_front_matter_is_written_as_before_panels():
    text = front(2, 1, 2).to_yaml()
    assert "seats" not in text
    assert list(front_matter_mapping(text)) == [
        "duel_id",
        "topic",
        "topic_slug",
        "source_path",
        "source_sha256",
        "max_turns",
        "status",
        "outcome",
        "created_at",
        "closed_at",
        "participants",
    ]
    assert FrontMatter.parse(text).schedule.seats == 2


def test_panel_front_matter_records_its_seats_after_max_turns():
    text = front(3, 1, 2, 3).to_yaml()
    assert "max_turns: 9\nseats: 3\n" in text
    assert FrontMatter.parse(text) == front(3, 1, 2, 3)


@pytest.mark.parametrize(
    "header", ["seats: 9\n", "seats: 1\n", "seats: three\n", "seats: true\n", "seats: 2\nparticipants: [{seat: 3}]\n"]
)
def test_front_matter_with_seats_out_of_range_or_a_seat_beyond_them_is_refused(header):
    with pytest.raises(FrontMatterError):
        FrontMatter.parse(header + _REST + ("" if "participants" in header else "participants: []\n"))


# -- the rules -----------------------------------------------------------------------------------


def without_revision_support(turn: str) -> str:
    return turn[: turn.index("**Stance Revision Support**")] + "**Stance Revision Support**\n"


def test_stance_revision_compares_with_the_participants_own_turn_a_round_back(tmp_path: Path):
    source = tmp_path / "design.md"
    source.write_text(
        "# Lease design\n\n## Lease semantics\nLeases expire after fifteen minutes unless refreshed."
        "\n\n## Failure handling\nA crashed holder loses the floor.\n"
    )
    history = History(source=read_source(source), source_names=("design.md",), schedule=panel(3))
    for n, stance in ((1, OPEN), (2, CONV), (3, CONV)):
        name, harness, model = PANEL[panel(3).speaker(n)]
        history.accept(None, parse_turn(make_turn(n, name, harness, model, stance)))  # type: ignore[arg-type]
    alice = Claimant(*PANEL[1])
    same_as_own = without_revision_support(make_turn(4, *PANEL[1], stance=OPEN))
    assert validate_turn(same_as_own, history.context_for(alice)).ok  # turn 3 was CONVERGING: not Alice's
    changed = without_revision_support(make_turn(4, *PANEL[1], stance=CONV))
    assert [v.code for v in validate_turn(changed, history.context_for(alice)).violations] == ["STANCE_REVISION"]


# -- the service -----------------------------------------------------------------------------------


def seat_panel(service, source: Path, seats: int = 3, **settings) -> dict[int, Player]:
    return {
        seat: join(
            service, source, name, harness=harness, model_id=model, settings=DuelSettings(seats=seats, **settings)
        )
        for seat, (name, harness, model) in PANEL.items()
        if seat <= seats
    }


def play(service, players: dict[int, Player], *stances: str, seats: int = 3) -> str:
    """Append one turn a stance, seats in turn; the artifact's path."""
    path = ""
    for stance in stances:
        number = service.status(players[1].duel_id).turn_count + 1
        player = players[panel(seats).speaker(number)]
        path = service.append(
            player.seat,
            claim(service, player),
            make_turn(number, *PANEL[panel(seats).speaker(number)], stance=stance),
            release=True,
        ).debate_path
    return path


def test_a_state_written_before_panels_reads_as_a_duel_of_two_seats(service, source):
    alice = join(service, source, "Alice")
    path = service.debate.root / ".duel" / "duels" / alice.duel_id / "state.json"
    written = path.read_bytes()
    assert DuelState.from_json(written, "here").to_json() == written  # the schedule keeps the file's bytes
    older = json.loads(written)
    del older["seats"]
    assert DuelState.from_json(json.dumps(older).encode(), "here").schedule == DUEL


def test_a_panel_state_keeps_its_seats_and_chair_where_state_files_had_them(service, source):
    chair = join(service, source, "Chair", role="chair", settings=DuelSettings(seats=3))
    path = service.debate.root / ".duel" / "duels" / chair.duel_id / "state.json"
    written = path.read_bytes()
    keys = list(json.loads(written))
    assert keys[keys.index("max_turns") :][:7] == [
        "max_turns",
        "lease_seconds",
        "peer_wait_seconds",
        "turn_timeout_seconds",
        "seats",
        "chair",
        "status",
    ]
    state = DuelState.from_json(written, "here")
    assert (state.schedule, state.to_json()) == (Schedule(seats=3, max_turns=9, chair=True), written)


def test_panel_turn_one_begins_once_every_seat_is_taken(service, source):
    alice = join(service, source, "Alice", settings=DuelSettings(seats=3))
    bob = join(service, source, "Bob")
    assert service.status(alice.duel_id, participant_id=alice.id).next_step == "wait_peer"
    refused = service.claim_lock(alice.seat)
    assert (refused.acquired, refused.reason) == (False, "waiting_for_peer")
    status = service.status(bob.duel_id)
    assert (status.turn_deadline, status.duel.schedule) == (None, panel(3, 9))
    carol = join(service, source, "Carol")
    assert carol.seat.number == 3
    assert service.status(alice.duel_id, participant_id=alice.id).next_step == "claim_lock"
    assert service.status(alice.duel_id).turn_deadline is not None


def test_a_join_beyond_the_panels_seats_is_duel_full(service, source):
    seat_panel(service, source)
    with pytest.raises(DuelError) as refused:
        join(service, source, "Dave")
    assert refused.value.code == "DUEL_FULL"
    assert "3 participants" in refused.value.message


def test_a_later_join_cannot_change_the_seats(service, source):
    join(service, source, "Alice", settings=DuelSettings(seats=3))
    joined = service.join(target=str(source), participant_name="Bob", settings=DuelSettings(seats=2))
    assert joined.to_dict()["seats"] == 3


def test_panel_seats_write_in_turn(service, source):
    players = seat_panel(service, source)
    assert [service.claim_lock(players[s].seat).reason for s in (2, 3)] == ["not_your_turn", "not_your_turn"]
    play(service, players, OPEN, OPEN, OPEN)
    refused = service.claim_lock(players[2].seat)
    assert refused.reason == "not_your_turn"
    assert service.status(players[1].duel_id).next_turn_seat == 1


def test_panel_reaches_consensus_when_every_latest_turn_accepts_and_validates(service, source):
    players = seat_panel(service, source)
    play(service, players, OPEN, OPEN, OPEN, ACCEPT, ACCEPT)
    assert service.status(players[1].duel_id).duel.pending_outcome is None  # Carol's latest turn is still open
    path = play(service, players, ACCEPT)
    assert service.status(players[1].duel_id).duel.pending_outcome == ACCEPTED_CONSENSUS
    closer = players[3]  # the writer of the turn that reached the outcome keeps the floor to close
    service.release_lock(closer.seat, claim(service, closer), close=True, outcome=ACCEPTED_CONSENSUS)
    text = Path(path).read_text()
    assert "max_turns: 9\nseats: 3\n" in text and "| Seats | 3 |" in text
    report = validate_file(path)
    assert report.valid, report.problems
    assert report.implied_outcome == ACCEPTED_CONSENSUS


def test_one_dissenter_ends_the_panel_dissent_only_at_the_last_turn(service, source):
    players = seat_panel(service, source, max_turns=6)
    path = play(service, players, OPEN, OPEN, DISS, CONV, CONV)
    assert service.status(players[1].duel_id).duel.pending_outcome is None
    path = play(service, players, DISS)
    assert service.status(players[1].duel_id).duel.pending_outcome == DISSENT
    assert validate_file(path).implied_outcome == DISSENT


def test_a_silent_seat_times_the_panel_out_for_every_participant(service, source, clock):
    players = seat_panel(service, source)
    play(service, players, OPEN)  # turn 2 is Bob's, and Bob says nothing
    assert not service.claim_lock(players[3].seat, for_timeout=True).acquired
    clock.advance(1800)
    assert service.status(players[3].duel_id, participant_id=players[3].id).next_step == "claim_timeout"
    granted = service.claim_lock(players[3].seat, for_timeout=True)
    assert granted.acquired
    closed = service.release_lock(players[3].seat, granted.lease, close=True, outcome="TIMEOUT")
    assert closed.outcome == "TIMEOUT"


def test_a_panel_short_of_a_seat_times_out_after_the_peer_wait(service, source, clock):
    alice = join(service, source, "Alice", settings=DuelSettings(seats=3, peer_wait_seconds=60))
    join(service, source, "Bob")
    clock.advance(60)
    granted = service.claim_lock(alice.seat, for_timeout=True)
    assert (granted.acquired, granted.reason) == (True, "timeout_due")


def test_duel_watch_waits_for_every_seat_of_a_panel(service, source, clock):
    alice = join(service, source, "Alice", settings=DuelSettings(seats=3))
    join(service, source, "Bob")
    status = service.status(alice.duel_id)
    assert (
        situation(view_of(status, clock().wall + 60))[0] == "waiting for 1 more participant (2 of 3 joined), 14:00 left"
    )
    assert situation(view_of(status, clock().wall + 900))[0] == "not everyone came: a TIMEOUT close is due"


def test_a_two_seat_artifact_carries_no_seats(service, source, pair):
    status = service.status(pair[0].duel_id)
    text = Path(status.duel.debate_path).read_text()
    assert "seats" not in text.split("\n---\n")[0]
    assert "| Seats |" not in text
    assert status.duel.schedule.seats == 2


def test_a_state_written_before_panels_reads_as_two_seats(service, source, pair, debate_dir):
    state_file = debate_dir / ".duel" / "duels" / pair[0].duel_id / "state.json"
    raw = json.loads(state_file.read_text())
    del raw["seats"]
    state_file.write_text(json.dumps(raw))
    assert service.status(pair[0].duel_id).duel.schedule.seats == 2
    assert claim(service, pair[0])


def test_a_state_with_more_participants_than_seats_is_corrupt(service, source, pair, debate_dir):
    state_file = debate_dir / ".duel" / "duels" / pair[0].duel_id / "state.json"
    raw = json.loads(state_file.read_text())
    raw["seats"] = 1
    state_file.write_text(json.dumps(raw))
    with pytest.raises(DuelError) as refused:
        service.status(pair[0].duel_id)
    assert refused.value.code == "STATE_CORRUPT"


# -- duel tools ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_tools_join_seats_a_panel_and_refuses_a_seat_beyond_it(source, debate_dir):
    def tools_join(name: str, *flags: str):
        return run_tools("join", "--target", str(source), "--participant-name", name, *flags, debate_dir=debate_dir)

    for flags, flag in ((("--seats", "9"), "--seats"), (("--seats", "3", "--max-turns", "2"), "--max-turns")):
        refused = tools_join("Alice", *flags)
        assert (refused.code, refused.envelope["error"]["details"]) == (2, {"flag": flag})
    joined = [tools_join(name, "--seats", "3") for name in ("Alice", "Bob", "Carol")]
    assert [(j.code, j.envelope["data"]["seat"], j.envelope["data"]["seats"]) for j in joined] == [
        (0, 1, 3),
        (0, 2, 3),
        (0, 3, 3),
    ]
    assert joined[0].envelope["data"]["max_turns"] == 9
    assert joined[1].envelope["data"]["next_step"] == "wait_peer"
    assert joined[2].envelope["data"]["next_step"] == "wait_turn"
    full = tools_join("Dave")
    assert (full.code, full.envelope["error"]["code"]) == (1, "DUEL_FULL")


# -- duel join: a panel of real processes ------------------------------------------------------------


def scripted_panelist(
    source: Path, debate_dir: Path, tmp_path: Path, name: str, seat: int, stances: dict[int, str], *flags: str
):
    """`duel join --model scripted:DIR` for seat ``seat``: it plays ``stances`` (turn number -> stance)."""
    script = tmp_path / name.lower()
    script.mkdir()
    for index, (number, stance) in enumerate(sorted(stances.items()), start=1):
        assert panel(3).speaker(number) == seat
        (script / f"{index}.md").write_text(make_turn(number, name, "duel", f"scripted:{script.name}", stance))
    return start(
        source, debate_dir, "--model", f"scripted:{script}", "--name", name, "--seats", "3", *flags, env=clean_env()
    )


def run_panel(source: Path, debate_dir: Path, tmp_path: Path, stances: list[str], *flags: str) -> list:
    """Three scripted panelists joining in seat order; turn n plays ``stances[n - 1]``."""
    processes = []
    for seat, name in enumerate(("Ada", "Bea", "Cy"), start=1):
        own = {n: stance for n, stance in enumerate(stances, start=1) if panel(3).speaker(n) == seat}
        processes.append(scripted_panelist(source, debate_dir, tmp_path, name, seat, own, *flags))
        wait_for_seat(debate_dir, source, count=seat)
    return [finish(process) for process in processes]


@pytest.mark.slow
def test_a_panel_of_three_join_processes_reaches_consensus_and_validates(source, debate_dir, tmp_path):
    finished = run_panel(source, debate_dir, tmp_path, [OPEN, OPEN, OPEN, ACCEPT, ACCEPT, ACCEPT], "--max-turns", "6")
    assert [(code, result["outcome"], result["seat"]) for code, result, _ in finished] == [
        (0, ACCEPTED_CONSENSUS, 1),
        (0, ACCEPTED_CONSENSUS, 2),
        (0, ACCEPTED_CONSENSUS, 3),
    ], finished[0][2]
    assert [result["turns_written"] for _, result, _ in finished] == [[1, 4], [2, 5], [3, 6]]
    report = validate_file(finished[0][1]["debate_path"])
    assert report.valid, report.problems


@pytest.mark.slow
def test_a_silent_panelist_times_the_panel_out_for_the_others(source, debate_dir, tmp_path):
    # Cy's script ends after turn 3: turn 6 is never written, and Ada or Bea ends the panel.
    stances = [OPEN, OPEN, OPEN, CONV, CONV]
    finished = run_panel(source, debate_dir, tmp_path, stances, "--max-turns", "9", "--turn-timeout-seconds", "2")
    (ada, ada_result, _), (bea, bea_result, _), (cy, _, cy_err) = finished
    assert cy == 1 and "SCRIPT_EXHAUSTED" in cy_err
    assert (ada, bea, ada_result["outcome"], bea_result["outcome"]) == (0, 0, "TIMEOUT", "TIMEOUT")
    reason = "seat 3 (Cy) did not finish turn 6 by its deadline; its model failed (SCRIPT_EXHAUSTED): all 1 scripted"
    assert reason in Path(ada_result["debate_path"]).read_text()


@pytest.mark.parametrize(
    ("schedule", "seat", "latest", "expected"),
    [
        (Schedule(seats=2, max_turns=6, chair=False), 1, 4, [4]),  # a duel: the peer's one turn since mine
        (Schedule(seats=3, max_turns=9, chair=False), 1, 6, [5, 6]),  # a panel: the N - 1 since mine
        (Schedule(seats=3, max_turns=9, chair=False), 3, 2, [1, 2]),  # before my first turn: every turn so far
        (Schedule(seats=3, max_turns=9, chair=True), 3, 2, [0, 1, 2]),  # the chair's brief counts
        (Schedule(seats=2, max_turns=6, chair=False), 2, 4, []),  # my own turn is the latest
    ],
)
def test_a_seat_is_shown_the_turns_others_wrote_since_its_own_last(
    schedule: Schedule, seat: int, latest: int, expected: list[int]
) -> None:
    assert schedule.others_since(seat, latest) == expected
