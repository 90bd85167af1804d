"""docs/protocol.md section 9: the bytes of ``events.jsonl`` and of what its readers print.

One duel, driven through the library on a manual clock, logs every event type; the log and
the readers' outputs (``duel watch`` through a pipe, the usage of ``duel tools status``,
``duel join --json``'s usage and verification, ``duel report --format json``) must equal the
recordings under ``tests/data/events``, captured before events were typed. Participant ids
are random: each is replaced by its name before comparing.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from rp1_duel.cli.tools import usage_by_participant
from rp1_duel.clock import ManualClock
from rp1_duel.coordination import DuelService, Usage
from rp1_duel.coordination.events import Event, EventData, UnknownEvent, parse_event
from rp1_duel.errors import DuelError
from rp1_duel.participant.checking import CitationCheck, CitationChecker
from rp1_duel.participant.usage import recorded, summary
from rp1_duel.record import Citation, CitationEntry, VoteRecord
from rp1_duel.review.report_files import read_report
from rp1_duel.review.watch import PlainDisplay, follow
from rp1_duel.vocabulary import CitationKind, EventType, Verdict

from helpers import Player, claim, join, make_turn

RECORDINGS = Path(__file__).parents[1] / "data" / "events"
ALICE = ("Alice", "claude-code", "claude-sonnet-5-5")
BOB = ("Bob", "codex", "gpt-6.1-sol")  # after taking its seat over from gpt-x
URL = "https://example.org/leases"


def citation(line: int, item: str) -> Citation:
    return Citation(
        turn=1,
        turn_sha256="0" * 64,
        section="Counterpoints",
        line=line,
        item=item,
        kind=CitationKind.URL,
        url=URL,
        excerpt=None,
        claim="leases expire",
    )


def checks(alice: Player, bob: Player) -> tuple[CitationCheck, CitationCheck]:
    """Bob's check of Alice's turn 1 by a voter, and Alice's own draft of turn 3, sent back."""
    vote = VoteRecord(
        voter="anthropic:claude-x",
        brief="support",
        answer="supports",
        excerpt="Leases expire.",
        basis="states",
        valid=True,
        reason=None,
    )
    judged = CitationEntry(
        citation=citation(5, f"{URL} — leases expire"),
        verdict=Verdict.VERIFIED,
        confidence="high",
        reason="the page says so",
        votes=(vote,),
    )
    dead = CitationEntry(citation=citation(9, URL), verdict=Verdict.FABRICATED, confidence=None, reason="dead link")
    return CitationCheck(number=1, writer_id=alice.id, draft=None, entries=(judged,)), CitationCheck(
        number=3, writer_id=alice.id, draft=1, entries=(dead,)
    )


def seated(service: DuelService, source: Path, who: tuple[str, str, str], **kwargs: str) -> Player:
    name, harness, model_id = who
    return join(service, source, name, harness=harness, model_id=model_id, **kwargs)


def drive(service: DuelService, source: Path, clock: ManualClock) -> tuple[str, dict[str, str]]:
    """A duel that logs every event type of section 9; its id, and each participant's id → name."""
    alice = seated(service, source, ALICE)  # registered, waiting
    clock.advance(1)
    seated(service, source, ALICE, participant_token=alice.token)  # resumed
    clock.advance(1)
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    clock.advance(1)
    seated(service, source, BOB, participant_token=bob.token)  # taken over
    clock.advance(1)
    lease = claim(service, alice)
    clock.advance(30)
    service.refresh_lock(alice.seat, lease)
    with pytest.raises(DuelError):
        service.append(alice.seat, lease, make_turn(1, *ALICE).replace("(non-blocking)", ""))  # rejected
    clock.advance(5)
    service.append(alice.seat, lease, make_turn(1, *ALICE), release=True, stripped=("reasoning", "fence"))
    service.record_usage(
        alice.seat,
        1,
        Usage(
            input_tokens=1200,
            output_tokens=340,
            cache_read_tokens=800,
            cache_write_tokens=64,
            requests=2,
            retries=1,
            repairs=1,
            seconds=12.34567,
        ),
    )
    peer_check, draft_check = checks(alice, bob)
    clock.advance(2)
    lease = claim(service, bob)
    service.record_verdicts(bob.seat, 1, peer_check.verdicts())
    clock.advance(20)
    service.append(bob.seat, lease, make_turn(2, *BOB, stance="CONVERGING"), release=True)
    service.record_usage(
        bob.seat, 2, Usage(input_tokens=900, output_tokens=210, requests=1, seconds=3.5, output_estimated=True)
    )
    clock.advance(3)
    lease = claim(service, alice)
    service.record_verdicts(alice.seat, 3, draft_check.verdicts(sent_back=True))
    service.append(alice.seat, lease, make_turn(3, *ALICE, stance="CONVERGING"), release=True)  # candidate
    clock.advance(601)  # Alice idle for a lease: her seat may be taken back
    alice = seated(service, source, ALICE)  # reclaimed
    lease = claim(service, bob)
    service.record_provider_failure(bob.seat, 4, "PROVIDER_UNAVAILABLE", "openai closed the stream too soon")
    artifact = Path(service.status(alice.duel_id).duel.debate_path)
    artifact.write_text(artifact.read_text().replace("reviewers read turn 1 later", "nobody reads turn 1"))
    with pytest.raises(DuelError):
        service.append(bob.seat, lease, make_turn(4, *BOB, stance="CONVERGING"))  # invalidated
    clock.advance(1)
    service.release_lock(bob.seat, lease, close=True, outcome="INVALIDATED", reason="turn 1 was edited")
    return alice.duel_id, {alice.id: "p-alice", bob.id: "p-bob"}


def named(text: str, names: dict[str, str]) -> str:
    for participant_id, name in names.items():
        text = text.replace(participant_id, name)
    return text


@pytest.fixture
def duel(service: DuelService, source: Path, clock: ManualClock) -> tuple[str, dict[str, str]]:
    return drive(service, source, clock)


def recording(name: str) -> str:
    return (RECORDINGS / name).read_text(encoding="utf-8")


def test_the_log_holds_every_event_type_in_the_recorded_bytes(service, duel):
    duel_id, names = duel
    written = named(service.debate.events_path(duel_id).read_text(encoding="utf-8"), names)
    assert written == recording("every-type.jsonl")
    types = {json.loads(line)["type"] for line in written.splitlines()}
    assert len(types) == 16  # every row of section 9's table


def test_duel_watch_through_a_pipe_prints_the_recorded_lines(service, duel):
    duel_id, names = duel
    printed = io.StringIO()
    follow(service, duel_id, PlainDisplay(printed))
    shown = named(printed.getvalue(), names).replace(str(service.debate.root), "<debate dir>")
    assert shown == recording("every-type.watch.txt")


def test_duel_tools_status_shows_the_recorded_usage(service, duel):
    duel_id, names = duel
    usage = usage_by_participant(service, service.status(duel_id))
    assert named(json.dumps(usage, ensure_ascii=False, indent=1), names) + "\n" == recording(
        "every-type.tools-usage.json"
    )


def test_duel_join_json_sums_the_recorded_usage_and_verification(service, duel):
    duel_id, names = duel
    events = service.events(duel_id, (EventType.USAGE, EventType.TURN_APPENDED, EventType.CITATIONS_VERIFIED))
    models = {"p-alice": ALICE[2], "p-bob": BOB[2]}
    written = {"p-alice": [1, 3], "p-bob": [2]}
    shown = {
        name: {
            "usage": summary(recorded(events, participant_id), models[name], {}).to_json(),
            "verification": CitationChecker.summary(events, participant_id, written[name]),
        }
        for participant_id, name in names.items()
    }
    assert json.dumps(shown, ensure_ascii=False, indent=1) + "\n" == recording("every-type.join-summaries.json")


def test_the_report_json_of_the_duel_is_the_recorded_one(service, duel):
    duel_id, names = duel
    report = read_report(service.status(duel_id).duel.debate_path, env={})
    text = named(json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n", names)
    assert text.replace(str(service.debate.root), "<debate dir>") == recording("every-type.report.json")


# -- the types: a round trip, the wakes column, what a reader does with what it cannot read ------


def recorded_lines() -> list[str]:
    return recording("every-type.jsonl").splitlines()


def test_every_recorded_event_reads_as_its_type_and_writes_back_the_same_bytes():
    for line in recorded_lines():
        event = parse_event(line)
        assert not isinstance(event.data, UnknownEvent), line
        assert str(event.type) == json.loads(line)["type"]
        assert json.dumps(event.to_json(), ensure_ascii=False) == line
        assert Event.from_json(event.to_json()) == event


def test_only_bookkeeping_wakes_no_wait():
    logged = [parse_event(line).data for line in recorded_lines()]
    assert {data.event_type for data in logged if isinstance(data, EventData) and not data.wakes} == {
        EventType.LOCK_REFRESHED,
        EventType.TURN_REJECTED,
        EventType.USAGE,
        EventType.CITATIONS_VERIFIED,
    }


def test_an_event_type_this_version_does_not_know_is_kept_as_logged():
    line = '{"seq": 3, "ts": "2027-01-15T08:00:00.000Z", "type": "seat_swapped", "duel_id": "d", "participant_id": "p-1", "data": {"from": 1, "to": 2}}'
    event = parse_event(line)
    assert event.data == UnknownEvent("seat_swapped", {"from": 1, "to": 2})
    assert (event.seq, event.type, event.participant_id) == (3, "seat_swapped", "p-1")
    assert json.dumps(event.to_json(), ensure_ascii=False) == line


def test_data_that_does_not_fit_its_type_is_read_as_unknown_not_as_a_failure():
    line = '{"seq": 0, "ts": "", "type": "turn_appended", "duel_id": "d", "participant_id": "p-1", "data": {"turn_number": "1"}}'
    assert parse_event(line).data == UnknownEvent("turn_appended", {"turn_number": "1"})


def test_a_line_without_the_envelope_is_not_an_event():
    for line in ("[]", '{"seq": "0", "ts": "", "type": "usage", "duel_id": "d", "data": {}}', '{"seq": 0}'):
        with pytest.raises(ValueError):
            parse_event(line)


def test_readers_skip_an_unknown_event_in_the_log(service, duel):
    """A newer writer's event in the log: the service reads on, watch shows it as logged."""
    duel_id, names = duel
    path = service.debate.events_path(duel_id)
    state = service.debate.read_state(duel_id)
    future = '{"seq": 26, "ts": "2027-01-15T08:11:07.000Z", "type": "seat_swapped", "duel_id": "%s", "participant_id": null, "data": {"x": 1}}\n'
    blob = (future % duel_id).encode()
    path.write_bytes(path.read_bytes() + blob)
    state.event_seq, state.event_bytes = state.event_seq + 1, state.event_bytes + len(blob)
    service.store.save(state, [])
    assert [event.type for event in service.observe(duel_id).events][-2:] == [EventType.DUEL_CLOSED, "seat_swapped"]
    printed = io.StringIO()
    follow(service, duel_id, PlainDisplay(printed))
    assert '2027-01-15T08:11:07.000Z seat_swapped {"x": 1}' in printed.getvalue().splitlines()
    usage = usage_by_participant(service, service.status(duel_id))
    assert named(json.dumps(usage, ensure_ascii=False, indent=1), names) + "\n" == recording(
        "every-type.tools-usage.json"
    )


def test_reading_some_types_builds_only_those_and_still_refuses_a_line_that_is_no_event(service, duel):
    """`duel tools status` reads only usage events: the other lines are read as JSON, not built."""
    duel_id, _ = duel
    everything = service.store.events(service.store.read_state(duel_id)).read()
    wanted = (EventType.USAGE, EventType.LOCK_RELEASED)
    assert service.events(duel_id, wanted) == [event for event in everything if event.type in wanted]
    assert service.events(duel_id, ()) == []

    path = service.debate.events_path(duel_id)
    state = service.debate.read_state(duel_id)
    blob = b"[]\n"  # JSON, but no event: refused whatever types are asked for
    path.write_bytes(path.read_bytes() + blob)
    state.event_seq, state.event_bytes = state.event_seq + 1, state.event_bytes + len(blob)
    service.store.save(state, [])
    with pytest.raises(DuelError) as refused:
        service.events(duel_id, (EventType.USAGE,))
    assert refused.value.code == "STATE_CORRUPT"
