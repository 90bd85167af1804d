"""Who wrote each turn, with what, and what a report's headline names beside the outcome (docs/protocol.md
section 9, the ``usage`` event's provenance; section 11, "Provenance and the headline's alerts").

The served model is recorded through the real SDKs against the fake servers (tests/fake_models.py), one of them
answering as another model than the one asked for; the headline's alerts are checked on duels written through the
library on a manual clock. Expected values are read off the scripted duels by hand.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from test_participant import claude_env, clean_env, finish, gpt_env, start, wait_for_seat

from rp1_duel.clock import ManualClock
from rp1_duel.coordination import DuelService, Usage
from rp1_duel.coordination.events import Provenance, UsageRecorded, parse_event, same_model
from rp1_duel.errors import DuelError
from rp1_duel.review.report_files import read_report
from rp1_duel.review.report_html import render_html
from rp1_duel.review.report_markdown import render_markdown
from rp1_duel.review.watch import event_line
from rp1_duel.settings import DuelSettings
from rp1_duel.vocabulary import EventType

from fake_debater import debater, sloppy_then_fixed
from helpers import claim, join, make_turn

DEBATES = Path(__file__).parents[1] / "data" / "reports" / "debates"
OLD_LOG = DEBATES / "2026-11-24-lease-duration.md"  # its usage events were logged before provenance


def header(markdown: str) -> str:
    """The report's top, above the decision: the outcome, its explanation and the alerts."""
    return markdown.split("### Decision", 1)[0]


# -- which model answered (section 9, decision) --------------------------------------------------------


def test_a_dated_snapshot_of_the_alias_asked_for_is_the_same_model_and_nothing_else_is():
    assert same_model("claude-sonnet-4-5", "claude-sonnet-4-5")
    assert same_model("claude-sonnet-4-5", "claude-sonnet-4-5-20250929")
    assert same_model("gpt-4o", "gpt-4o-2024-08-06")
    assert same_model("claude-sonnet-4-5-20250929", "claude-sonnet-4-5")  # a snapshot asked for, named by its alias
    assert not same_model("claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20251001")  # another snapshot
    assert not same_model("claude-sonnet-4", "claude-sonnet-4-5")
    assert not same_model("gpt-4o", "gpt-4o-mini")
    assert not same_model("claude-sonnet-4-5", "claude-sonnet-4-5-preview")
    assert not same_model("gpt-6.1-sol", "gpt-5-mini")
    assert not Provenance(
        provider="openai", requested_model="gpt-x", served_model=None, reasoning=None
    ).served_other  # the API did not say: no mismatch
    assert Provenance(provider="openai", requested_model="gpt-x", served_model="gpt-y", reasoning="high").served_other


# -- the usage event, old and new --------------------------------------------------------------------


OLD_USAGE = (
    '{"seq": 10, "ts": "2027-01-15T08:00:39.000Z", "type": "usage", "duel_id": "d", "participant_id": "p-1", '
    '"data": {"turn_number": 1, "input_tokens": 1200, "output_tokens": 340, "cache_read_tokens": 800, '
    '"cache_write_tokens": 64, "requests": 2, "retries": 1, "repairs": 1, "seconds": 12.346, '
    '"output_estimated": false, "input_estimated": false}}'
)


def test_an_old_usage_event_without_provenance_reads_and_writes_back_its_bytes():
    event = parse_event(OLD_USAGE)
    assert event.data == UsageRecorded(
        turn_number=1,
        usage=Usage(
            input_tokens=1200,
            output_tokens=340,
            cache_read_tokens=800,
            cache_write_tokens=64,
            requests=2,
            retries=1,
            repairs=1,
            seconds=12.346,
        ),
    )
    assert event.data.provenance is None and event.data.repair_codes == ()
    assert json.dumps(event.to_json()) == OLD_USAGE


def test_a_usage_event_carries_the_drafts_provenance_after_its_counts():
    data = UsageRecorded(
        turn_number=3,
        usage=Usage(input_tokens=10, output_tokens=5, requests=1, repairs=1),
        provenance=Provenance(provider="openai", requested_model="gpt-x", served_model="gpt-y", reasoning="low"),
        repair_codes=("NOVELTY",),
    )
    written = data.to_json()
    assert list(written)[-5:] == ["provider", "requested_model", "served_model", "reasoning", "repair_codes"]
    assert written["served_model"] == "gpt-y" and written["repair_codes"] == ["NOVELTY"]
    assert UsageRecorded.from_json(written) == data
    assert (
        "repair_codes"
        not in UsageRecorded(
            turn_number=3,
            usage=Usage(),
            provenance=Provenance(provider="human", requested_model="human", served_model=None, reasoning=None),
        ).to_json()
    )


def test_the_report_of_an_old_log_says_the_provenance_was_not_recorded():
    report = read_report(OLD_LOG, env={})
    first = report.provenance[0]
    assert (first.turn, first.seat, first.written, first.provider) == (1, 1, True, None)
    assert (first.requested_model, first.served_model, first.model_mismatch) == ("claude-sonnet-5-5", None, False)
    assert first.usage is not None and first.usage.usage.requests == 1
    assert [turn.turn for turn in report.provenance] == [1, 2, 3, 4, 5]
    assert not [alert for alert in report.alerts if alert.kind == "model_mismatch"]
    row = next(line for line in render_markdown(report).splitlines() if line.startswith("| [1]("))
    assert "| Claude | not recorded | claude-sonnet-5-5 | not recorded | not recorded |" in row


def test_duel_watch_says_who_wrote_a_draft_without_a_model_and_which_model_answered_instead(service, pair):
    alice, bob = pair
    service.record_usage(
        alice.seat,
        1,
        Usage(seconds=42.0),
        provenance=Provenance(provider="human", requested_model="human", served_model=None, reasoning=None),
    )
    asked = Provenance(provider="openai", requested_model="gpt-x", served_model="gpt-y", reasoning="low")
    service.record_usage(
        bob.seat, 2, Usage(input_tokens=900, output_tokens=210, requests=1, seconds=3.5), provenance=asked
    )
    names = {alice.id: "Alice", bob.id: "Bob"}
    lines = [event_line(event, names, {}).text for event in service.events(alice.duel_id, (EventType.USAGE,))]
    assert lines == [
        "Alice (human) wrote a draft of turn 1 in 42.0 s",
        "Bob's model on turn 2: input 900 tokens, 210 out, 3.5 s; asked for gpt-x, answered as gpt-y",
    ]


# -- the headline names what the outcome must not hide -------------------------------------------------


ALICE, BOB = ("Alice", "duel", "claude-x"), ("Bob", "codex", "gpt-x")


def test_the_headline_names_a_timeout_a_stopped_seat_and_every_repaired_turn(source, debate_dir):
    clock = ManualClock()
    service = DuelService(debate_dir, clock=clock)
    alice = join(service, source, "Alice", harness="duel", model_id="claude-x")
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    # Turn 1: `duel join` repairs its drafts before appending (usage events say which rules they broke).
    lease = claim(service, alice)
    asked = Provenance(provider="anthropic", requested_model="claude-x", served_model="claude-x", reasoning="high")
    service.record_usage(
        alice.seat, 1, Usage(input_tokens=100, output_tokens=50, requests=1, seconds=2.0), provenance=asked
    )
    for codes in (("SECTION_MISSING", "NOVELTY"), ("SECTION_MISSING",)):
        repair = Usage(input_tokens=100, output_tokens=50, requests=1, repairs=1, seconds=2.0)
        service.record_usage(alice.seat, 1, repair, provenance=asked, repair_codes=codes)
    service.append(alice.seat, lease, make_turn(1, *ALICE), release=True)
    # Turn 2: an agent through `duel tools` is refused by the service, then accepted.
    lease = claim(service, bob)
    with pytest.raises(DuelError) as refused:
        service.append(bob.seat, lease, make_turn(2, *BOB).replace(" (non-blocking)", ""))
    assert refused.value.code == "TURN_INVALID"
    service.append(bob.seat, lease, make_turn(2, *BOB), release=True)
    # Turn 3: Alice's model fails for good; her turn times out and Bob closes TIMEOUT.
    lease = claim(service, alice)
    failed = Usage(input_tokens=0, output_tokens=0, requests=4, retries=3, seconds=30.0)
    service.record_usage(
        alice.seat,
        3,
        failed,
        provenance=Provenance(provider="anthropic", requested_model="claude-x", served_model=None, reasoning="high"),
    )
    service.record_provider_failure(alice.seat, 3, "PROVIDER_UNAVAILABLE", "anthropic is unavailable (HTTP 529)")
    service.release_lock(alice.seat, lease)
    clock.advance(DuelSettings().turn_timeout_seconds + 1)
    timeout = service.claim_lock(bob.seat, for_timeout=True).lease
    assert timeout is not None
    service.release_lock(bob.seat, timeout, close=True, outcome="TIMEOUT")

    report = read_report(debate_dir / f"{alice.duel_id}.md", env={})
    expected = [
        ("timeout", 1, [3], "TIMEOUT on turn 3: seat 1 (Alice) did not finish it by its deadline"),
        (
            "seat_stopped",
            1,
            [3],
            (
                "Seat 1 (Alice) stopped at turn 3: its model failed (PROVIDER_UNAVAILABLE): anthropic is "
                "unavailable (HTTP 529)"
            ),
        ),
        ("repaired", 1, [1], "Turn 1 (seat 1, Alice) was accepted after 2 repairs (NOVELTY, SECTION_MISSING)"),
        ("repaired", 2, [2], "Turn 2 (seat 2, Bob) was accepted after 1 repair (UNRESOLVED_TAG)"),
    ]
    alerts = report.to_dict()["alerts"]
    assert [(a["kind"], a["seat"], a["turns"], a["text"]) for a in alerts] == expected
    assert list(report.to_dict())[13] == "alerts"  # the first thing after the record's facts, before the decision
    top = header(render_markdown(report))
    assert [line for line in top.splitlines() if line.startswith("- ⚠")] == [f"- ⚠ {text}." for *_, text in expected]
    page = render_html(report).split("<h2>Decision</h2>", 1)[0]
    assert all(f"<li>⚠ {text}.</li>" in page for *_, text in expected)
    # The turn that was never written is still on the provenance table, with what its requests cost.
    third = report.provenance[2]
    assert (third.turn, third.written, third.repairs, third.served_model) == (3, False, 0, None)
    assert third.usage is not None and (third.usage.usage.requests, third.usage.usage.retries) == (4, 3)
    assert "| 3 (not written) | Alice | anthropic | claude-x | not said | high |" in render_markdown(report)


def test_the_headline_says_a_person_aborted_not_that_a_model_failed(source, debate_dir):
    service = DuelService(debate_dir, clock=ManualClock())
    hana = join(service, source, "Hana", model_id="human")
    join(service, source, "Bob")
    service.record_provider_failure(hana.seat, 1, "HUMAN_ABORTED", "no turn was written (empty or unchanged)")
    report = read_report(debate_dir / f"{hana.duel_id}.md", env={})
    assert [alert.text for alert in report.alerts] == [
        "Seat 1 (Hana) stopped at turn 1: the person aborted (HUMAN_ABORTED): no turn was written (empty or unchanged)"
    ]


def test_a_timeout_before_turn_1_names_the_seat_never_taken(source, debate_dir):
    clock = ManualClock()
    service = DuelService(debate_dir, clock=clock)
    alice = join(service, source, "Alice", harness="duel", model_id="claude-x")
    clock.advance(DuelSettings().peer_wait_seconds + 1)
    lease = service.claim_lock(alice.seat, for_timeout=True).lease
    assert lease is not None
    service.release_lock(alice.seat, lease, close=True, outcome="TIMEOUT")
    report = read_report(debate_dir / f"{alice.duel_id}.md", env={})
    assert [(a.kind, a.seat, a.turns, a.text) for a in report.alerts] == [
        ("timeout", 2, (), "TIMEOUT before turn 1: seat 2 was not taken by the end of the peer wait")
    ]
    assert report.provenance == ()


# -- through the real SDKs, on the fake servers ------------------------------------------------------


def usage_events(debate_dir: Path, duel_id: str) -> list[dict]:
    log = debate_dir / ".duel" / "duels" / duel_id / "events.jsonl"
    return [event for event in map(json.loads, log.read_text().splitlines()) if event["type"] == "usage"]


def provenance_of(event: dict) -> tuple:
    data = event["data"]
    return (data["turn_number"], data["provider"], data["requested_model"], data["served_model"], data["reasoning"])


@pytest.mark.slow
def test_the_served_model_is_recorded_through_both_sdks_and_is_the_one_asked_for(
    source, debate_dir, anthropic_server, openai_server
):
    anthropic_server.responder = openai_server.responder = debater
    claude = start(source, debate_dir, "--model", "claude-x", "--max-turns", "4", env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    gpt = start(source, debate_dir, "--model", "gpt-x", "--reasoning", "low", env=gpt_env(openai_server))
    (code_c, result_c, err_c), (code_g, _, err_g) = finish(claude), finish(gpt)
    assert (code_c, code_g) == (0, 0), err_c + err_g

    assert [provenance_of(event) for event in usage_events(debate_dir, result_c["duel_id"])] == [
        (1, "anthropic", "claude-x", "claude-x", None),
        (2, "openai", "gpt-x", "gpt-x", "low"),
        (3, "anthropic", "claude-x", "claude-x", None),
        (4, "openai", "gpt-x", "gpt-x", "low"),
    ]
    assert "the API answered as" not in err_c + err_g
    report = read_report(result_c["debate_path"], env={})
    assert report.alerts == ()
    assert [(t.turn, t.provider, t.served_model, t.model_mismatch) for t in report.provenance] == [
        (1, "anthropic", "claude-x", False),
        (2, "openai", "gpt-x", False),
        (3, "anthropic", "claude-x", False),
        (4, "openai", "gpt-x", False),
    ]
    row = next(line for line in render_markdown(report).splitlines() if line.startswith("| [2](") and "openai" in line)
    assert "| GPT | openai | gpt-x | gpt-x | low |" in row
    assert "⚠" not in row


@pytest.mark.slow
def test_report_names_served_model_mismatch(source, debate_dir, anthropic_server, openai_server):
    anthropic_server.responder, openai_server.responder = sloppy_then_fixed, debater
    anthropic_server.serve_as = "claude-sonnet-5-5-20261001"  # the snapshot the alias points to: the same model
    openai_server.serve_as = "gpt-5-mini"  # another model than the one asked for
    claude = start(
        source, debate_dir, "--model", "claude-sonnet-5-5", "--max-turns", "4", env=claude_env(anthropic_server)
    )
    wait_for_seat(debate_dir, source)
    gpt = start(source, debate_dir, "--model", "gpt-6.1-sol", env=gpt_env(openai_server))
    (code_c, result_c, err_c), (code_g, _, err_g) = finish(claude), finish(gpt)
    assert (code_c, code_g) == (0, 0), err_c + err_g
    said = "asked for gpt-6.1-sol, the API answered as gpt-5-mini: logged, and `duel report` names it"
    assert err_g.count(said) == 1, err_g  # once, not at every turn
    assert "the API answered as" not in err_c

    recorded = [
        (provenance_of(e), e["data"].get("repair_codes")) for e in usage_events(debate_dir, result_c["duel_id"])
    ]
    assert recorded == [
        ((1, "anthropic", "claude-sonnet-5-5", "claude-sonnet-5-5-20261001", None), None),
        ((1, "anthropic", "claude-sonnet-5-5", "claude-sonnet-5-5-20261001", None), ["UNRESOLVED_TAG"]),
        ((2, "openai", "gpt-6.1-sol", "gpt-5-mini", None), None),
        ((3, "anthropic", "claude-sonnet-5-5", "claude-sonnet-5-5-20261001", None), None),
        ((3, "anthropic", "claude-sonnet-5-5", "claude-sonnet-5-5-20261001", None), ["UNRESOLVED_TAG"]),
        ((4, "openai", "gpt-6.1-sol", "gpt-5-mini", None), None),
    ]

    report = read_report(result_c["debate_path"], env={})
    data = report.to_dict()
    assert [(a["kind"], a["seat"], a["turns"], a["text"]) for a in data["alerts"]] == [
        (
            "model_mismatch",
            2,
            [2, 4],
            "Seat 2 (GPT) asked for gpt-6.1-sol; the API answered as gpt-5-mini (turns 2 and 4)",
        ),
        ("repaired", 1, [1], "Turn 1 (seat 1, Claude) was accepted after 1 repair (UNRESOLVED_TAG)"),
        ("repaired", 1, [3], "Turn 3 (seat 1, Claude) was accepted after 1 repair (UNRESOLVED_TAG)"),
    ]
    turns = {turn["turn"]: turn for turn in data["provenance"]}
    assert (turns[2]["requested_model"], turns[2]["served_model"], turns[2]["model_mismatch"]) == (
        "gpt-6.1-sol",
        "gpt-5-mini",
        True,
    )
    assert (turns[1]["served_model"], turns[1]["model_mismatch"]) == ("claude-sonnet-5-5-20261001", False)
    assert turns[1]["usage"]["requests"] == 2 and turns[1]["usage"]["repairs"] == 1
    assert turns[2]["usage"]["cost_usd"] > 0  # priced as the model asked for

    markdown = render_markdown(report)
    top = header(markdown)
    assert "⚠ 1 seat answered by another model than asked for" in top.splitlines()[2]
    assert "- ⚠ Seat 2 (GPT) asked for gpt-6.1-sol; the API answered as gpt-5-mini (turns 2 and 4)." in top
    gpt_row = next(line for line in markdown.splitlines() if line.startswith("| [4](") and "| openai |" in line)
    assert "| **⚠ gpt-5-mini, not the model asked for** |" in gpt_row
    claude_row = next(line for line in markdown.splitlines() if line.startswith("| [3](") and "| anthropic |" in line)
    assert "| claude-sonnet-5-5 | claude-sonnet-5-5-20261001 | default |" in claude_row
    assert "| 1 (UNRESOLVED_TAG) |" in claude_row
    page = render_html(report)
    assert '<td class="other-model">⚠ gpt-5-mini, not the model asked for</td>' in page


@pytest.mark.slow
def test_a_scripts_turns_log_who_wrote_them_and_show_no_model_figures(source, debate_dir, tmp_path):
    def seat(name: str, turns: tuple[int, ...]) -> subprocess.Popen:
        folder = tmp_path / name.lower()
        folder.mkdir()
        for index, n in enumerate(turns):
            (folder / f"{index:02d}.md").write_text(make_turn(n, name, "duel", f"scripted:{name.lower()}"))
        argv = ("--model", f"scripted:{folder}", "--name", name, "--max-turns", "2")
        return start(source, debate_dir, *argv, env=clean_env())

    alice = seat("Alice", (1,))
    wait_for_seat(debate_dir, source)
    bob = seat("Bob", (2,))
    (code_a, result_a, err_a), (code_b, _, err_b) = finish(alice), finish(bob)
    assert (code_a, code_b) == (0, 0), err_a + err_b

    events = usage_events(debate_dir, result_a["duel_id"])
    assert [provenance_of(e) for e in events] == [
        (1, "scripted", "scripted:alice", None, None),
        (2, "scripted", "scripted:bob", None, None),
    ]
    assert all(e["data"]["requests"] == 0 and e["data"]["input_tokens"] == 0 for e in events)
    report = read_report(result_a["debate_path"], env={})
    assert report.alerts == ()
    row = next(
        line for line in render_markdown(report).splitlines() if line.startswith("| [1](") and "scripted" in line
    )
    assert "| Alice | scripted | scripted:alice | — | — | — | — | — | 0 |" in row
    assert "tokens" not in header(render_markdown(report)).splitlines()[2]  # no model was asked: no tokens, no cost
