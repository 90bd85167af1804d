"""`duel join --verify`: a participant opens the URLs of its own drafts before appending them and
those of each peer turn, telling its model (docs/protocol.md section 10, "Inside a duel").

The pure parts and the checker run in process against the fake web; the duels are real
`duel join` processes through the real SDKs against the fake model servers (slow)."""

from __future__ import annotations

import functools
import io
import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_participant import claude_env, clean_env, finish, gpt_env, start, wait_for_seat

from rp1_duel.coordination import (
    CheckedCitation,
    CitationsVerified,
    CitationVerdicts,
    DuelService,
    Event,
    Usage,
    UsageRecorded,
)
from rp1_duel.errors import DuelError
from rp1_duel.participant._deadlines import Deadlines, TurnStopped
from rp1_duel.participant._seat_checks import SeatChecks
from rp1_duel.participant.checking import OWN_DRAFTS_MECHANICAL, CitationCheck, CitationChecker
from rp1_duel.participant.console import ConsoleReporter
from rp1_duel.participant.prompt import build_request, peer_verdicts
from rp1_duel.participant.providers.anthropic import AnthropicProvider
from rp1_duel.participant.voters import ProviderVoter
from rp1_duel.record import Citation, CitationEntry, History, RecordFile, validate_file
from rp1_duel.review.watch import event_line
from rp1_duel.turns import read_source
from rp1_duel.verify import Fetcher, FetchPolicy, Verifier
from rp1_duel.vocabulary import CitationKind, Confidence, EventType, RecordCode, Verdict

from fake_debater import asked, debater, prompt_text
from fake_models import FakeAnthropicServer
from fake_web import CLAIM, STATED, honest_vote
from helpers import DUEL, claim, make_turn

ALICE = ("Alice", "claude-code", "claude-x")


def checker(voters=()) -> CitationChecker:
    return CitationChecker(Verifier(Fetcher(FetchPolicy(allow_private_hosts=True)), voters), voters)


def empty_history(source: Path) -> History:
    return History(source=read_source(source), source_names=("design.md",), schedule=DUEL)


def entry(item: str, verdict: str, line: int, reason: str = "why", confidence: str | None = None) -> CitationEntry:
    url = item.split(maxsplit=1)[0]
    return CitationEntry(
        citation=Citation(
            turn=3,
            turn_sha256="0" * 64,
            section="Counterpoints",
            line=line,
            item=item,
            kind=CitationKind.URL,
            url=url,
            excerpt=None,
            claim=CLAIM,
        ),
        verdict=verdict,
        confidence=confidence,
        reason=reason,
    )


# -- the participant's own draft --------------------------------------------------------------


def test_a_draft_is_read_as_the_record_will_read_it_once_appended(service, source, pair, web):
    alice, _bob = pair
    cited = (f'{web.url("/states")} "{STATED}"', web.url("/missing"))
    draft = "\n---\n" + make_turn(
        1, *ALICE, counterclaim=CLAIM, citing=cited, position_extra=f" See {web.url('/plain.txt')}."
    )
    found = CitationChecker.draft_citations(1, draft, empty_history(source))
    service.append(alice.seat, claim(service, alice), draft, release=True)

    record = RecordFile.read(service.status(duel_id=alice.duel_id).duel.debate_path)
    history = record.history()
    assert found == CitationChecker.turn_citations(1, history)  # the same citations, hashes and lines as recorded
    assert [(c.url, c.excerpt, c.claim) for c in found] == [
        (web.url("/states"), STATED, CLAIM),
        (web.url("/missing"), None, CLAIM),
        (web.url("/plain.txt"), None, None),
    ]
    assert found[0].turn_sha256 == history.blocks[0].sha256


def test_a_fabricated_citation_becomes_a_violation_at_its_line_of_the_draft_as_written(source, web):
    turn = make_turn(1, *ALICE, counterclaim=CLAIM, citing=(web.url("/states"), web.url("/missing")))
    draft = "\n---\n" + turn  # two lines the stored turn does not have
    check = checker().check(1, "p-1", CitationChecker.draft_citations(1, draft, empty_history(source)), draft=1)

    [violation] = check.violations(draft)
    assert violation.code == RecordCode.CITATION_FABRICATED and violation.line is not None
    assert draft.splitlines()[violation.line - 1] == f"  - {web.url('/missing')}"
    assert violation.message.startswith(f"{web.url('/missing')}: dead link: HTTP 404")
    assert violation.section == "Counterpoints"
    assert check.counts() == {Verdict.FABRICATED: 1, Verdict.UNJUDGED: 1}


def test_a_participant_judges_its_own_drafts_mechanically_and_the_peers_turns_with_its_voters(source, web):
    citations = CitationChecker.draft_citations(
        1, make_turn(1, *ALICE, counterclaim=CLAIM, citing=(web.url("/states"),)), empty_history(source)
    )
    with FakeAnthropicServer(responder=honest_vote) as claude:
        voter = ProviderVoter(AnthropicProvider("claude-x", api_key="k", base_url=claude.base_url))
        checks = checker([voter])
        own = checks.check(1, "p-1", citations, draft=1)
        assert claude.requests == []  # no vote on its own draft
        peer = checks.check(1, "p-2", citations)
        assert len(claude.requests) == 3
    assert (own.entries[0].verdict, own.entries[0].reason) == (
        Verdict.UNJUDGED,
        f"the page is there; {OWN_DRAFTS_MECHANICAL}",
    )
    assert (peer.entries[0].verdict, peer.entries[0].confidence) == (Verdict.VERIFIED, Confidence.HIGH)
    assert (own.voters, peer.voters) == ((), ("anthropic:claude-x",))
    assert web.count("/states") == 1  # one verifier a run: a page is fetched once across drafts and turns


def test_a_draft_without_urls_is_not_fetched_or_checked(source, web):
    checks = checker()
    found = CitationChecker.draft_citations(1, make_turn(1, *ALICE), empty_history(source))
    assert found == []  # source references and principles were checked at append, or cannot be
    assert checks.check(1, "p-1", found, draft=1) == CitationCheck(number=1, writer_id="p-1", draft=1, entries=())
    assert web.requests == []


# -- what the peer is told ----------------------------------------------------------------------


def test_the_peer_verdicts_block_names_each_citation_problems_first_and_how_it_was_checked():
    entries = [
        entry("https://example.org/fine", Verdict.REACHABLE, 5),
        entry(
            'https://example.org/a "a quote"',
            Verdict.FABRICATED,
            9,
            "the quoted excerpt is not on the page",
            Confidence.HIGH,
        ),
    ]
    block = peer_verdicts(3, "Bob", entries, ())
    assert block.splitlines() == [
        (
            "Citation check of turn 3 (Bob's): each URL it cites was opened (mechanically: dead links and quoted "
            "excerpts, claims not judged):"
        ),
        '- line 9: https://example.org/a "a quote" — fabricated (high): the quoted excerpt is not on the page',
        "- line 5: https://example.org/fine — reachable: why",
        (
            "A fabricated citation (a dead link, or a quote its page does not hold) or an unreliable one is fair to "
            "challenge in your Counterpoints; do not rely on it."
        ),
    ]
    assert "claims judged by anthropic:claude-x, openai:gpt-x" in peer_verdicts(
        3, "Bob", entries, ("anthropic:claude-x", "openai:gpt-x")
    )
    assert peer_verdicts(3, "Bob", [], ()) == ""  # a turn that cites no URL: nothing to say


def test_a_long_list_of_verdicts_is_cut_keeping_the_fabricated_ones_and_counting_the_rest():
    entries = [entry(f"https://example.org/{n}", Verdict.REACHABLE, n) for n in range(12)]
    entries.append(entry("https://example.org/dead", Verdict.FABRICATED, 40))
    lines = peer_verdicts(3, "Bob", entries, ()).splitlines()
    assert lines[1].startswith("- line 40: https://example.org/dead — fabricated")
    assert lines[-2] == "- and 3 more: 3 reachable"
    assert len(lines) == 13


def test_the_verdicts_go_in_the_instruction_and_leave_the_cached_prefix_as_it_was():
    block = peer_verdicts(1, "Bob", [entry("https://example.org/a", Verdict.FABRICATED, 9)], ())
    request = functools.partial(
        build_request,
        duel_id="d",
        system="SYSTEM",
        blocks=[],
        number=2,
        max_turns=4,
        heading="## Turn 2 — A (d / m) — STANCE",
        own_turns_before=0,
    )
    plain, told = request(), request(verdicts=block)
    assert (told.system, told.history, told.cache_key) == (plain.system, plain.history, plain.cache_key)
    assert told.instruction == plain.instruction + "\n" + block


def test_a_peer_check_abandoned_at_the_deadline_stops_every_later_try_of_the_turn(service, source, pair, web):
    """The deadline a seat keeps may pass a moment before the service's, which then offers the floor again: that
    try of the turn stops too, and neither asks the model without the verdicts nor fetches the pages again."""
    alice, bob = pair
    turn = make_turn(1, *ALICE, counterclaim=CLAIM, citing=(web.url("/slow"),))  # 3 s: longer than the turn has
    service.append(alice.seat, claim(service, alice), turn, release=True)
    status = service.status(bob.duel_id, participant_id=bob.id)
    checks = SeatChecks(
        checker=checker(),
        service=service,
        seat=bob.seat,
        schedule=status.duel.schedule,
        reporter=ConsoleReporter("Bob", io.StringIO(), quiet=True),
        deadlines=Deadlines(time.time),
        allow_private_hosts=True,
    )
    history = RecordFile.read(status.duel.debate_path).history()

    for _ in range(2):
        with pytest.raises(TurnStopped):
            checks.peer_verdicts(history, status, time.time() + 0.3, threading.Event())

    time.sleep(0.1)  # the abandoned fetch has had time to reach the page, a second one too
    assert web.count("/slow") == 1


# -- events, console, summary ---------------------------------------------------------------------


def test_verdicts_are_logged_by_the_seat_without_waking_anyone_even_after_the_close(service, pair, web):
    alice, bob = pair
    check = CitationCheck(
        number=1,
        writer_id=bob.id,
        draft=None,
        entries=(entry(web.url("/missing"), Verdict.FABRICATED, 7, "dead link"),),
    )
    service.release_lock(alice.seat, claim(service, alice), close=True, outcome="INVALIDATED", reason="over")
    before = service.debate.read_state(alice.duel_id)
    service.record_verdicts(alice.seat, 1, check.verdicts())
    after = service.debate.read_state(alice.duel_id)
    [logged] = service.events(alice.duel_id, (EventType.CITATIONS_VERIFIED,))
    assert logged.participant_id == alice.id
    dead = web.url("/missing")
    assert logged.data == CitationsVerified(
        1,
        CitationVerdicts(
            writer=bob.id,
            draft=None,
            sent_back=False,
            voters=(),
            counts={"fabricated": 1},
            citations=(
                CheckedCitation(line=7, item=dead, url=dead, verdict="fabricated", confidence=None, reason="dead link"),
            ),
        ),
    )
    assert (after.rev, after.event_seq) == (before.rev, before.event_seq + 1)  # logged, and no waiter woken
    with pytest.raises(DuelError) as refused:
        service.record_verdicts(type(alice.seat)(alice.duel_id, alice.id, "wrong-token"), 1, check.verdicts())
    assert refused.value.code == "PARTICIPANT_AUTH_FAILED"


def test_watch_says_whose_urls_were_checked_and_what_went_back_for_repair():
    draft = CitationVerdicts(
        writer="p-1", draft=2, sent_back=True, voters=(), counts={"fabricated": 1, "reachable": 2}, citations=()
    )
    event = Event(seq=9, ts="", duel_id="d", participant_id="p-1", data=CitationsVerified(3, draft))
    assert event_line(event, {"p-1": "Alice"}, {}).text == (
        "Alice checked the URLs draft 2 of turn 3 cites: 1 fabricated, 2 reachable; sent back for repair"
    )
    turn = CitationVerdicts(writer="p-1", draft=None, sent_back=False, voters=(), counts={"verified": 1}, citations=())
    peer = Event(seq=9, ts="", duel_id="d", participant_id="p-1", data=CitationsVerified(3, turn))
    assert event_line(peer, {"p-1": "Alice"}, {}).text == "Alice checked the URLs turn 3 cites: 1 verified"


def test_the_console_says_what_verification_does_and_quiet_says_nothing():
    shown, hidden = io.StringIO(), io.StringIO()
    for stream, quiet in ((shown, False), (hidden, True)):
        console = ConsoleReporter("Claude", stream, quiet=quiet)
        console.verifying(4, None, 3)
        console.verified(4, None, {"fabricated": 1, "reachable": 2}, sent_back=True)
        console.verifying(3, "Bob", 1)
        console.verified(3, "Bob", {"unjudged": 1}, sent_back=False)
    assert shown.getvalue().splitlines() == [
        "[Claude] verifying 3 citations of turn 4…",
        "[Claude] turn 4: 1 fabricated of 3 citations, sent back for repair",
        "[Claude] verifying 1 citation of Bob's turn 3…",
        "[Claude] Bob's turn 3: 1 citation checked (1 unjudged)",
    ]
    assert hidden.getvalue() == ""


def test_the_summary_counts_drafts_sent_back_own_turns_as_appended_and_peer_turns_once():
    def logged(number, draft, counts, *, sent_back=False, who="me"):
        return Event(
            seq=0,
            ts="",
            duel_id="d",
            participant_id=who,
            data=CitationsVerified(
                number,
                CitationVerdicts(writer=who, draft=draft, sent_back=sent_back, voters=(), counts=counts, citations=()),
            ),
        )

    events = [
        logged(2, None, {"fabricated": 1, "unjudged": 1}),
        logged(2, None, {"fabricated": 1, "unjudged": 1}),  # a resumed run checked it again: counted once
        logged(3, 1, {"fabricated": 1, "reachable": 1}, sent_back=True),
        logged(3, 2, {"reachable": 1}),  # the draft appended
        logged(5, 1, {"fabricated": 2}),  # repairs used up: not sent back, turn 5 never appended
        logged(4, None, {"verified": 3}, who="peer"),
        Event(seq=0, ts="", duel_id="d", participant_id="me", data=UsageRecorded(turn_number=3, usage=Usage())),
    ]
    assert CitationChecker.summary(events, "me", [1, 3]) == {
        "drafts_sent_back": 1,
        "own_turns": {"reachable": 1},
        "peer_turns": {"fabricated": 1, "unjudged": 1},
    }


# -- duels: real `duel join` processes --------------------------------------------------------------

INVENTED = "/lease-study-2031"  # a 404 on the fake web: a page the model made up


def stance(n: int, limit: int) -> str:
    return "ACCEPTING_CONSENSUS" if n >= limit - 1 else "OPEN_TO_DEBATE"


def citing_turn(body: dict, *cited: str) -> str:
    n, name, harness, model, limit = asked(body)
    return make_turn(n, name, harness, model, stance(n, limit), counterclaim=CLAIM, citing=cited)


def instruction_of(request: dict) -> str:
    """The last text of a request: the instruction, after the cached system and history."""
    body = request["body"]
    if "system" in body:  # Anthropic
        return body["messages"][-1]["content"][-1]["text"]
    return body["messages"][-1]["content"]


def events_of(debate_dir: Path, duel_id: str) -> list[dict]:
    log = debate_dir / ".duel" / "duels" / duel_id / "events.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()]


def verdict_events(debate_dir: Path, duel_id: str) -> list[dict]:
    return [event for event in events_of(debate_dir, duel_id) if event["type"] == "citations_verified"]


@pytest.mark.slow
def test_an_invented_url_goes_back_for_repair_and_the_peer_is_told_the_verdicts_of_the_fixed_turn(
    source, debate_dir, web, anthropic_server, openai_server
):
    quoted = f'{web.url("/states")} "{STATED}"'
    anthropic_server.responder = lambda body: citing_turn(
        body, quoted, *(() if "CITATION_FABRICATED" in prompt_text(body) else (web.url(INVENTED),))
    )
    openai_server.responder = lambda body: citing_turn(body, web.url("/reports"))
    args = ("--verify", "--allow-private-hosts", "--max-turns", "2")
    claude = start(source, debate_dir, "--model", "claude-x", *args, env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    gpt = start(source, debate_dir, "--model", "gpt-x", *args, env=gpt_env(openai_server))
    (code_c, result_c, err_c), (code_g, result_g, err_g) = finish(claude), finish(gpt)

    assert (code_c, code_g) == (0, 0), err_c + err_g
    assert result_c["outcome"] == "ACCEPTED_CONSENSUS"
    # The repair request names the fabricated citation; no model was asked to vote (no --voter).
    assert (len(anthropic_server.requests), len(openai_server.requests)) == (2, 1)
    draft, repair = (instruction_of(r) for r in anthropic_server.requests)
    assert "CITATION_FABRICATED" not in draft
    assert re.search(
        rf"- CITATION_FABRICATED \(line \d+\): {re.escape(web.url(INVENTED))}: dead link: HTTP 404", repair
    )
    # The artifact holds the fixed turn.
    text = Path(result_c["debate_path"]).read_text()
    assert web.url("/states") in text and INVENTED not in text
    assert validate_file(result_c["debate_path"]).valid
    # Each check is an event: Claude's two drafts (the first sent back), GPT's check of turn 1,
    # GPT's own draft, and Claude's check of the turn that closed the duel.
    claude_id, gpt_id = result_c["participant_id"], result_g["participant_id"]
    found = [
        (
            e["participant_id"],
            e["data"]["turn_number"],
            e["data"]["writer"],
            e["data"]["draft"],
            e["data"]["sent_back"],
            e["data"]["counts"],
        )
        for e in verdict_events(debate_dir, result_c["duel_id"])
    ]
    assert found == [
        (claude_id, 1, claude_id, 1, True, {"fabricated": 1, "unjudged": 1}),
        (claude_id, 1, claude_id, 2, False, {"unjudged": 1}),
        (gpt_id, 1, claude_id, None, False, {"unjudged": 1}),
        (gpt_id, 2, gpt_id, 1, False, {"unjudged": 1}),
        (claude_id, 2, gpt_id, None, False, {"unjudged": 1}),
    ]
    first = verdict_events(debate_dir, result_c["duel_id"])[0]["data"]["citations"]
    assert [(c["url"], c["verdict"]) for c in first] == [
        (web.url("/states"), "unjudged"),
        (web.url(INVENTED), "fabricated"),
    ]
    # GPT's request for turn 2 carries the verdicts of turn 1, in its instruction.
    told = instruction_of(openai_server.requests[0])
    assert "Citation check of turn 1 (Claude's)" in told
    assert f"{quoted} — unjudged: the page is there, and the quoted excerpt is on it" in told
    # One fetch a page a participant: Claude's second draft reused the first's /states.
    assert (web.count("/states"), web.count(INVENTED), web.count("/reports")) == (2, 1, 2)
    assert "verifying 2 citations of turn 1…" in err_c
    assert "turn 1: 1 fabricated of 2 citations, sent back for repair" in err_c
    assert "turn 1 draft 1 rejected: CITATION_FABRICATED; asking for a repair" in err_c
    assert "Claude's turn 1: 1 citation checked (1 unjudged)" in err_g
    assert result_c["verification"] == {
        "drafts_sent_back": 1,
        "own_turns": {"unjudged": 1},
        "peer_turns": {"unjudged": 1},
    }
    assert result_g["verification"] == {
        "drafts_sent_back": 0,
        "own_turns": {"unjudged": 1},
        "peer_turns": {"unjudged": 1},
    }


def scripted_first(
    source: Path, debate_dir: Path, tmp_path: Path, *cited: str, settings: tuple[str, ...] = ()
) -> subprocess.Popen:
    """Bob, scripted and without --verify, takes seat 1 of a two-turn duel: turn 1 cites ``cited``."""
    folder = tmp_path / "bob"
    folder.mkdir()
    (folder / "1.md").write_text(
        make_turn(1, "Bob", "duel", "scripted:bob", "ACCEPTING_CONSENSUS", counterclaim=CLAIM, citing=cited)
    )
    bob = start(
        source,
        debate_dir,
        "--model",
        f"scripted:{folder}",
        "--name",
        "Bob",
        "--max-turns",
        "2",
        *settings,
        env=clean_env(),
    )
    wait_for_seat(debate_dir, source)
    return bob


@pytest.mark.slow
def test_a_peer_quote_that_is_not_on_its_page_is_named_in_the_next_prompt(
    source, debate_dir, tmp_path, web, anthropic_server
):
    misquoted = f'{web.url("/silent")} "renewed every five minutes"'
    bob = scripted_first(source, debate_dir, tmp_path, misquoted)
    anthropic_server.responder = debater
    code, result, err = finish(
        start(
            source,
            debate_dir,
            "--model",
            "claude-x",
            "--verify",
            "--allow-private-hosts",
            env=claude_env(anthropic_server),
        )
    )

    assert code == 0, err
    [request] = anthropic_server.requests
    told = instruction_of(request)
    assert "Citation check of turn 1 (Bob's)" in told
    assert f"{misquoted} — fabricated (high): the quoted excerpt is not on the page" in told
    assert "mechanically: dead links and quoted excerpts, claims not judged" in told
    [checked] = verdict_events(debate_dir, result["duel_id"])
    assert (checked["data"]["writer"], checked["data"]["counts"]) == (
        DuelService(debate_dir).status(target=str(source)).participants[0].id,
        {"fabricated": 1},
    )
    assert "Bob's turn 1: 1 citation checked (1 fabricated)" in err
    assert finish(bob)[0] == 0


@pytest.mark.slow
def test_with_a_voter_the_peers_claims_are_judged_by_the_quorum_and_the_prompt_says_by_whom(
    source, debate_dir, tmp_path, web, anthropic_server, openai_server
):
    bob = scripted_first(source, debate_dir, tmp_path, web.url("/states"))
    anthropic_server.responder, openai_server.responder = debater, honest_vote
    env = {**claude_env(anthropic_server), "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": openai_server.base_url}
    code, result, err = finish(
        start(
            source, debate_dir, "--model", "claude-x", "--verify", "--allow-private-hosts", "--voter", "gpt-x", env=env
        )
    )

    assert code == 0, err
    assert "preparing: voter openai:gpt-x: gpt-x is served by " in err  # checked before the seat was taken
    assert len(openai_server.requests) == 3  # the quorum's three seats, on the peer's one claim
    told = instruction_of(anthropic_server.requests[0])
    assert "its claims judged by openai:gpt-x" in told
    assert f"{web.url('/states')} — verified (high): supported by the page" in told
    [checked] = verdict_events(debate_dir, result["duel_id"])
    assert (checked["data"]["voters"], checked["data"]["counts"]) == (["openai:gpt-x"], {"verified": 1})
    assert finish(bob)[0] == 0


def slow_pages(web, count: int) -> tuple[str, ...]:
    """``count`` distinct URLs of the fake web's slow page: two fetched at once (one host), 3 s each."""
    return tuple(web.url(f"/slow?copy={n}") for n in range(count))


@pytest.mark.slow
def test_the_lease_is_kept_fresh_while_the_peers_pages_are_fetched(source, debate_dir, tmp_path, web, anthropic_server):
    bob = scripted_first(source, debate_dir, tmp_path, *slow_pages(web, 4), settings=("--lease-seconds", "5"))
    anthropic_server.responder = debater
    code, result, err = finish(
        start(
            source,
            debate_dir,
            "--model",
            "claude-x",
            "--verify",
            "--allow-private-hosts",
            env=claude_env(anthropic_server),
        )
    )

    assert code == 0, err
    assert result["turns_written"] == [2], err  # appended under the lease it held before the 6 s of fetching
    assert "not appended" not in err and "lease lost" not in err
    kinds = [(e["type"], e["participant_id"]) for e in events_of(debate_dir, result["duel_id"])]
    me = result["participant_id"]
    granted, checked = kinds.index(("lock_acquired", me)), kinds.index(("citations_verified", me))
    assert ("lock_refreshed", me) in kinds[granted:checked]
    assert finish(bob)[0] == 0


@pytest.mark.slow
def test_a_check_still_fetching_at_the_turn_deadline_is_abandoned_and_the_duel_ends_timeout(
    source, debate_dir, tmp_path, web, anthropic_server
):
    bob = scripted_first(source, debate_dir, tmp_path, *slow_pages(web, 4), settings=("--turn-timeout-seconds", "4"))
    anthropic_server.responder = debater
    code, result, err = finish(
        start(
            source,
            debate_dir,
            "--model",
            "claude-x",
            "--verify",
            "--allow-private-hosts",
            env=claude_env(anthropic_server),
        ),
        timeout=60,
    )

    assert (code, result["outcome"], result["turns_written"]) == (0, "TIMEOUT", []), err
    assert "turn deadline passed: turn 2 was not finished within 4 s" in err
    assert anthropic_server.requests == []  # the model was never asked: the check used the turn's time
    assert finish(bob)[1]["outcome"] == "TIMEOUT"


def imported_modules(stderr: str) -> set[str]:
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


@pytest.mark.slow
def test_join_without_verify_loads_no_fetcher_and_no_page_extractor(source, debate_dir, tmp_path):
    script = tmp_path / "ada"
    script.mkdir()
    (script / "1.md").write_text("never played")
    debate_dir.mkdir(parents=True, exist_ok=True)  # each run's debate dir is made in it; a missing parent is refused
    network = {"rp1_duel.verify.fetch", "rp1_duel.verify._extraction", "rp1_duel.verify.run", "inscriptis", "pypdf"}
    loaded = {}
    for flags in ((), ("--verify",)):
        argv = [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "rp1_duel",
            "join",
            "--target",
            str(source),
            "--debate-dir",
            str(debate_dir / "-".join(flags or ("plain",))),
            "--model",
            f"scripted:{script}",
            "--name",
            "Ada",
            "--peer-wait-seconds",
            "1",
            *flags,
        ]
        done = subprocess.run(argv, capture_output=True, text=True, env=clean_env(), timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
        loaded[flags] = imported_modules(done.stderr)
    assert not loaded[()] & network
    assert "rp1_duel.participant.checking" not in loaded[()]
    assert {"rp1_duel.verify.fetch", "rp1_duel.verify.run"} <= loaded[("--verify",)]  # what the check above looks for


@pytest.mark.slow
@pytest.mark.parametrize("flags", [("--voter", "gpt-x")])
def test_a_verify_flag_without_verify_is_a_usage_error(source, debate_dir, flags):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "rp1_duel",
            "join",
            "--target",
            str(source),
            "--debate-dir",
            str(debate_dir),
            "--model",
            "claude-x",
            "--json",
            *flags,
        ],
        capture_output=True,
        text=True,
        env=clean_env(ANTHROPIC_API_KEY="k"),
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stdout)["error"]["code"] == "INVALID_ARGUMENT"
    assert done.stderr.strip() == f"duel: INVALID_ARGUMENT: {flags[0]} needs --verify"
    assert not debate_dir.exists()
