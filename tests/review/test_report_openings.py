"""`duel report` holds the outcome against what a vote of the openings alone would have decided
(docs/protocol.md section 11, "Against the openings").

Duels are played through the lock service with scripted turns (tests/helpers.py); the expected verdicts and
sentences are read off the stances by hand.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from test_chair import seat_chaired_panel, write
from test_panels import play, seat_panel

from rp1_duel.clock import ManualClock
from rp1_duel.coordination import DuelService
from rp1_duel.review import Flip, flip_ledger
from rp1_duel.review.report_files import read_report
from rp1_duel.review.report_html import render_html
from rp1_duel.review.report_markdown import render_markdown
from rp1_duel.schedule import Schedule
from rp1_duel.vocabulary import ACCEPTED_CONSENSUS, TIMEOUT

from helpers import DUEL, DUELISTS, Player, claim, history_of, join, make_turn, panel

OPEN, CONV, ACCEPT, DISS = "OPEN_TO_DEBATE", "CONVERGING", "ACCEPTING_CONSENSUS", "DISSENTING"


def played(
    service: DuelService,
    source: Path,
    stances: list[str],
    *,
    citing: dict[int, tuple[str, ...]] | None = None,
    schedule: Schedule = DUEL,
) -> tuple[Path, dict[int, Player]]:
    """A duel of two through the service, closed by the writer of the turn that reaches an outcome: turn N is
    ``make_turn(N, …, stances[N-1])`` citing ``citing[N]``. The artifact and the seated players."""
    players = {
        seat: join(service, source, name, harness=harness, model_id=model)
        for seat, (name, harness, model) in DUELISTS.items()
    }
    path = ""
    for number, stance in enumerate(stances, start=1):
        seat = schedule.speaker(number)
        text = make_turn(number, *DUELISTS[seat], stance, citing=(citing or {}).get(number, ()))
        lease = claim(service, players[seat])
        appended = service.append(players[seat].seat, lease, text)
        outcome = appended.terminal_outcome
        service.release_lock(players[seat].seat, lease, close=bool(outcome), outcome=outcome)
        path = appended.debate_path
    return Path(path), players


def timed_out(service: DuelService, players: dict[int, Player], clock: ManualClock) -> None:
    """The next writer sits past its turn deadline, and closes the duel TIMEOUT."""
    writer = players[DUEL.speaker(service.status(players[1].duel_id).next_turn)]
    claim(service, writer)
    clock.advance(1800)
    lease = service.claim_lock(writer.seat, for_timeout=True).lease
    assert lease is not None
    service.release_lock(writer.seat, lease, close=True, outcome=TIMEOUT)


def openings_of(path: Path | str):
    return read_report(path, env={}).openings


def test_split_openings_then_a_consensus_changed_the_verdict(service, source):
    found = openings_of(played(service, source, [CONV, DISS, ACCEPT, ACCEPT])[0])
    assert [(v.seat, v.turn, v.stance, v.vote) for v in found.votes] == [(1, 1, CONV, "accept"), (2, 2, DISS, "reject")]
    assert (found.verdict, found.kind, found.decides) == ("split", "split", None)
    assert (found.outcome, found.final, found.change, found.changed) == (ACCEPTED_CONSENSUS, "accept", "decided", True)
    assert found.explanation == (
        "The openings were split (seat 1 accept, seat 2 reject), which decides nothing; the debate reached "
        "ACCEPTED_CONSENSUS: it changed the verdict, deciding what the openings left open."
    )
    assert found.votes[0].first_line == (
        "On fifteen-minute leases (turn 1): short leases bound how long a crashed holder blocks its peer."
    )


def test_openings_converging_and_a_consensus_did_not_change_the_verdict(service, source):
    found = openings_of(played(service, source, [CONV, CONV, ACCEPT, ACCEPT])[0])
    assert (found.verdict, found.decides, found.final, found.change, found.changed) == (
        "unanimous accept",
        "accept",
        "accept",
        "kept",
        False,
    )
    assert found.explanation == (
        "The openings were unanimous accept (seat 1 accept, seat 2 accept); the debate reached "
        "ACCEPTED_CONSENSUS: it did not change the verdict."
    )


def test_openings_dissenting_and_a_dissent_did_not_change_the_verdict(service, source):
    found = openings_of(played(service, source, [DISS, DISS])[0])
    assert (found.verdict, found.decides, found.outcome, found.final, found.change) == (
        "unanimous reject",
        "reject",
        "DISSENT",
        "reject",
        "kept",
    )


def test_a_flip_from_unanimous_accepting_openings_to_dissent_is_said_plainly(service, source):
    found = openings_of(played(service, source, [CONV, CONV, DISS, DISS])[0])
    assert (found.verdict, found.outcome, found.change, found.changed) == (
        "unanimous accept",
        "DISSENT",
        "reversed",
        True,
    )
    assert found.explanation == (
        "The openings were unanimous accept (seat 1 accept, seat 2 accept); the debate reached DISSENT: "
        "it changed the verdict, reversing it from accept to reject."
    )


def test_max_turns_decides_nothing_so_it_undoes_a_verdict_or_keeps_none(service, source):
    undone = openings_of(played(service, source, [CONV, CONV, OPEN, OPEN, OPEN, OPEN])[0])
    assert (undone.outcome, undone.final, undone.change, undone.changed) == ("MAX_TURNS", None, "undone", True)
    assert undone.explanation.endswith(
        "the debate ended MAX_TURNS, which decides nothing (the turns ran out with neither consensus nor dissent): "
        "it changed the verdict, leaving open what the openings decided."
    )
    kept = openings_of(played(service, source, [OPEN] * 6)[0])
    assert (kept.verdict, kept.decides, kept.change, kept.changed) == ("all undecided", None, "kept", False)
    assert kept.explanation.startswith("The openings were all undecided (seat 1 undecided, seat 2 undecided), ")
    assert kept.explanation.endswith(": it did not change the verdict.")


def test_a_duel_that_did_not_finish_cannot_be_compared(service, source, clock):
    path, players = played(service, source, [CONV, CONV])
    assert openings_of(path).explanation == (
        "The openings were unanimous accept (seat 1 accept, seat 2 accept); the debate is still open: "
        "whether it changes the verdict is not known yet."
    )
    timed_out(service, players, clock)
    found = openings_of(path)
    assert (found.outcome, found.final, found.change, found.changed) == (TIMEOUT, None, "unknown", None)
    assert found.explanation == (
        "The openings were unanimous accept (seat 1 accept, seat 2 accept); the debate ended TIMEOUT before a "
        "verdict (a seat did not finish its turn in time): whether it would have changed the verdict is not known."
    )


def test_openings_a_seat_never_wrote_are_incomplete(service, source):
    path, players = played(service, source, [DISS])
    service.abandon(players[1].duel_id, reason="nobody came back")
    found = openings_of(path)
    assert [(v.seat, v.turn, v.vote, v.first_line) for v in found.votes][1] == (2, None, None, "")
    assert (found.verdict, found.kind, found.decides, found.change) == (
        "incomplete (1 of 2 seats opened)",
        "incomplete",
        None,
        "unknown",
    )
    assert found.explanation == (
        "The openings were incomplete, 1 of 2 seats opened (seat 1 reject, seat 2 did not open), which decides "
        "nothing; the debate ended INVALIDATED, with no verdict (the record was found invalid, or the duel abandoned): "
        "whether it would have changed the verdict is not known."
    )


def test_a_panels_openings_are_decided_by_a_majority_of_its_seats(service, source):
    players = seat_panel(service, source)
    path = play(service, players, CONV, CONV, DISS, ACCEPT, ACCEPT, ACCEPT)
    closer = players[panel(3).speaker(6)]
    service.release_lock(closer.seat, claim(service, closer), close=True, outcome=ACCEPTED_CONSENSUS)
    found = openings_of(path)
    assert [(v.seat, v.turn, v.vote) for v in found.votes] == [(1, 1, "accept"), (2, 2, "accept"), (3, 3, "reject")]
    assert (found.verdict, found.kind, found.decides, found.change) == (
        "majority accept (2 of 3)",
        "majority",
        "accept",
        "kept",
    )
    assert found.explanation == (
        "The openings were majority accept, 2 of 3 (seat 1 accept, seat 2 accept, seat 3 reject); the debate reached "
        "ACCEPTED_CONSENSUS: it did not change the verdict."
    )


def test_a_panel_mostly_undecided_is_said_so_in_words(service, source):
    players = seat_panel(service, source)
    path = play(service, players, OPEN, OPEN, DISS)
    found = openings_of(path)
    assert (found.verdict, found.kind, found.decides) == ("mostly undecided (2 of 3)", "majority", None)
    assert found.explanation.startswith("The openings were mostly undecided, 2 of 3 (seat 1 undecided, ")


def test_a_chaired_panel_votes_with_its_opening_round_and_not_the_chair(service, source):
    players = seat_chaired_panel(service, source)
    path = write(service, players, 9)  # brief, opening round OPEN_TO_DEBATE, rebuttal, pre-closing, closing, synthesis
    service.release_lock(players[0].seat, claim(service, players[0]), close=True, outcome=ACCEPTED_CONSENSUS)
    found = openings_of(path)
    assert [(v.seat, v.turn, v.vote) for v in found.votes] == [
        (1, 1, "undecided"),
        (2, 2, "undecided"),
        (3, 3, "undecided"),
    ]
    assert (found.verdict, found.outcome, found.change) == ("all undecided", ACCEPTED_CONSENSUS, "decided")


def test_every_format_shows_the_openings_right_after_the_decision(service, source):
    report = read_report(played(service, source, [CONV, DISS, ACCEPT, ACCEPT])[0], env={})
    sentence = report.openings.explanation
    md = render_markdown(report)
    assert md.index("### Decision") < md.index("### Against the openings' vote") < md.index("### What the debate")
    assert f"**{sentence}**" in md  # a change is in bold
    assert "| Bob | [2](" in md and "| DISSENTING | reject | On refreshing while working (turn 2): " in md
    page = render_html(report)
    assert (
        page.index("<h2>Decision</h2>")
        < page.index("<h2>Against the openings' vote</h2>")
        < page.index("What the debate")
    )
    assert f"<strong>{html.escape(sentence)}</strong>" in page
    data = json.loads(json.dumps(report.to_dict()))
    assert list(data).index("openings") == list(data).index("decision") + 1
    assert data["openings"]["verdict"] == "split" and data["openings"]["changed"] is True
    assert data["openings"]["votes"][1] == {
        "seat": 2,
        "turn": 2,
        "stance": DISS,
        "vote": "reject",
        "first_line": "On refreshing while working (turn 2): background refresh lets a slow model keep the floor honestly.",
    }


def test_a_verdict_kept_is_not_in_bold(service, source):
    report = read_report(played(service, source, [DISS, DISS])[0], env={})
    md = render_markdown(report)
    assert f"\n{report.openings.explanation}\n" in md and f"**{report.openings.explanation}**" not in md


def test_the_flip_ledger_lists_every_stance_move_with_the_reason_its_turn_cites(service, source):
    found = openings_of(played(service, source, [OPEN, DISS, CONV, ACCEPT, ACCEPT])[0])
    assert found.flips == (
        Flip(seat=1, turn=3, from_stance=OPEN, to_stance=CONV, reason="Turn 2"),
        Flip(seat=2, turn=4, from_stance=DISS, to_stance=ACCEPT, reason="Turn 3"),
        Flip(seat=1, turn=5, from_stance=CONV, to_stance=ACCEPT, reason="Turn 4"),
    )


def test_the_flip_ledger_counts_moves_away_from_consensus_too(service, source):
    found = openings_of(played(service, source, [CONV, CONV, DISS, DISS])[0])
    assert [(f.seat, f.turn, f.from_stance, f.to_stance) for f in found.flips] == [
        (1, 3, CONV, DISS),
        (2, 4, CONV, DISS),
    ]


def test_a_seat_that_holds_its_stance_has_no_flips(service, source):
    assert openings_of(played(service, source, [DISS, DISS])[0]).flips == ()


def test_a_move_citing_no_revision_support_has_an_empty_reason_and_no_stance_moves_nothing():
    def turn(n: int, stance: str, support: str = "") -> str:
        text = make_turn(n, *DUELISTS[DUEL.speaker(n)], stance)
        return text.split("**Stance Revision Support**")[0] + f"**Stance Revision Support**\n{support}"

    history = history_of(
        (
            turn(1, OPEN),
            turn(2, DISS),
            turn(3, "NO_SUCH_STANCE"),  # names no known stance: seat 1 is still OPEN_TO_DEBATE
            turn(4, DISS),
            turn(5, ACCEPT),  # silent: cites nothing for moving
            turn(6, ACCEPT, "- Turn 5\n- Principle: the peer's lease bound answers the doubt\n"),
        )
    )
    assert flip_ledger(history) == (
        Flip(seat=1, turn=5, from_stance=OPEN, to_stance=ACCEPT, reason=""),
        Flip(
            seat=2,
            turn=6,
            from_stance=DISS,
            to_stance=ACCEPT,
            reason="Turn 5; Principle: the peer's lease bound answers the doubt",
        ),
    )


def test_a_chaired_panels_ledger_follows_each_seat_across_the_chairs_turns(service, source):
    players = seat_chaired_panel(service, source)
    path = write(service, players, 9)  # brief, opening round OPEN_TO_DEBATE, pre-closing, closing ACCEPTING, synthesis
    assert [(f.seat, f.turn, f.from_stance, f.to_stance) for f in openings_of(path).flips] == [
        (1, 5, OPEN, ACCEPT),
        (2, 6, OPEN, ACCEPT),
        (3, 7, OPEN, ACCEPT),
    ]


def test_every_format_shows_the_flip_ledger_in_the_openings_section(service, source):
    report = read_report(played(service, source, [OPEN, DISS, CONV, ACCEPT, ACCEPT])[0], env={})
    md = render_markdown(report)
    section = md[md.index("### Against the openings' vote") : md.index("### What the debate")]
    assert "Flip ledger: every stance change and the reason its turn cites" in section
    assert "| Bob | [4](" in section and "| DISSENTING | ACCEPTING_CONSENSUS | Turn 3 |" in section
    page = render_html(report)
    part = page[page.index("<h2>Against the openings' vote</h2>") : page.index("What the debate")]
    assert "Flip ledger" in part and "<code>DISSENTING</code>" in part and "Turn 3" in part
    data = json.loads(json.dumps(report.to_dict()))
    assert data["openings"]["flips"][1] == {
        "seat": 2,
        "turn": 4,
        "from_stance": DISS,
        "to_stance": ACCEPT,
        "reason": "Turn 3",
    }


def test_a_duel_with_no_flips_says_so_under_the_ledger(service, source):
    md = render_markdown(read_report(played(service, source, [DISS, DISS])[0], env={}))
    assert "No seat changed its stance." in md
