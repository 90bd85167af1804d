"""Rulings in the record (docs/protocol.md section 10, "Rulings"): what a seat's verification of a peer
turn found is written into the artifact by the service, chained by hash; a fabricated source redacts its
claim from every view, and no later turn may make it again; `duel validate` checks the chain."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest
from test_participant import claude_env, clean_env, finish, gpt_env, start, wait_for_seat

from rp1_duel.coordination import CheckedCitation, CitationVerdicts, DuelService
from rp1_duel.errors import DuelError
from rp1_duel.participant.prompt import history_text
from rp1_duel.record import RecordFile, validate_file
from rp1_duel.record.artifact import sha256_text
from rp1_duel.record.rulings import GENESIS, NOVEL, Ruling, parse_ruling, ruling_text
from rp1_duel.review.report_files import read_report
from rp1_duel.review.report_html import render_html
from rp1_duel.review.report_markdown import render_markdown
from rp1_duel.review.watch import Follower
from rp1_duel.settings import DuelSettings
from rp1_duel.vocabulary import ACCEPTED_CONSENSUS, INVALIDATED, ErrorCode, EventType, RecordCode, RuleCode, Verdict

from fake_debater import asked, prompt_text
from fake_web import FakeWeb
from helpers import Player, claim, join, make_turn

ALICE, BOB = ("Alice", "claude-code", "claude-x"), ("Bob", "codex", "gpt-x")
DEAD = "https://dead.example/lease-study"
LIVE = "https://live.example/lease-study"
CLAIM = "a lease of fifteen minutes halves lost turns in the field"


def cited_turn(n: int, who: tuple[str, str, str], stance: str = "OPEN_TO_DEBATE") -> str:
    return make_turn(n, *who, stance, counterclaim=CLAIM, citing=(DEAD, LIVE))


def verdicts(turn: str, found: dict[str, str], reason: str = "the page said {verdict}") -> CitationVerdicts:
    """What a seat's `--verify` would log for ``turn``'s URLs: ``found`` maps each URL to its verdict."""
    items = [line.strip() for line in turn.split("\n")]
    citations = tuple(
        CheckedCitation(
            line=items.index(f"- {url}") + 1,
            item=url,
            url=url,
            verdict=verdict,
            confidence="high",
            reason=reason.format(verdict=verdict),
        )
        for url, verdict in found.items()
    )
    counts = {verdict: list(found.values()).count(verdict) for verdict in set(found.values())}
    return CitationVerdicts(
        writer="p-00000000", draft=None, sent_back=False, voters=(), counts=counts, citations=citations
    )


def write(service: DuelService, player: Player, text: str) -> None:
    service.append(player.seat, claim(service, player), text, release=True)


@pytest.fixture
def ruled(service: DuelService, source: Path) -> tuple[DuelService, Player, Player]:
    """Alice's turn 1 cites a dead link and a live one; Bob's verification rules on both."""
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    write(service, alice, cited_turn(1, ALICE))
    found = {DEAD: Verdict.FABRICATED, LIVE: Verdict.VERIFIED}
    service.record_verdicts(bob.seat, 1, verdicts(cited_turn(1, ALICE), found))
    return service, alice, bob


def test_a_verification_becomes_rulings_in_the_record(ruled: tuple[DuelService, Player, Player]) -> None:
    service, alice, _ = ruled
    record = RecordFile.read(service.status(alice.duel_id).duel.debate_path)
    assert [(r.r, r.turn, r.where, r.verdict, r.by) for r in record.rulings] == [
        (1, 1, "counterpoint 1", Verdict.FABRICATED, "seat 2's verification"),
        (2, 1, "counterpoint 1", Verdict.VERIFIED, "seat 2's verification"),
    ]
    assert record.parsed.blocks[0].actual_sha256 == record.parsed.blocks[0].sha256  # the turn is untouched
    assert "## Rulings" in record.text and "Redacted: the claim of turn 1, counterpoint 1" in record.text
    written = service.events(alice.duel_id, (EventType.RULING_WRITTEN,))
    assert [event.data.to_json()["verdict"] for event in written] == [Verdict.FABRICATED, Verdict.VERIFIED]


def test_the_same_citation_is_ruled_on_once(ruled: tuple[DuelService, Player, Player]) -> None:
    service, alice, bob = ruled
    service.record_verdicts(bob.seat, 1, verdicts(cited_turn(1, ALICE), {DEAD: Verdict.VERIFIED}))
    assert len(RecordFile.read(service.status(alice.duel_id).duel.debate_path).rulings) == 2


def test_a_redacted_claim_is_in_no_view(ruled: tuple[DuelService, Player, Player]) -> None:
    service, alice, _ = ruled
    path = service.status(alice.duel_id).duel.debate_path
    assert CLAIM in Path(path).read_text()  # the record keeps the turn byte for byte
    history = RecordFile.read(path).history()
    prompt = history_text(history.shown_blocks())
    assert CLAIM not in prompt and "[redacted: ruling 1 found its source fabricated]" in prompt
    report = read_report(path, env={})
    data = report.to_dict()
    for shown in (render_markdown(report), render_html(report), json.dumps(data)):
        assert CLAIM not in shown
    assert "its claim is redacted" in render_markdown(report) and "its claim is redacted" in render_html(report)
    assert [(r["r"], r["verdict"], r["redacts"]) for r in data["rulings"]] == [
        (1, "fabricated", True),
        (2, "verified", False),
    ]
    keys = list(data)
    assert keys.index("alerts") < keys.index("rulings") < keys.index("decision")  # at the top, with the decision


def test_evidence_quoting_a_tag_is_inert_in_the_record_and_shown_as_text_in_reports(
    service: DuelService, source: Path
) -> None:
    alice = join(service, source, *ALICE[:1], harness=ALICE[1], model_id=ALICE[2])
    bob = join(service, source, *BOB[:1], harness=BOB[1], model_id=BOB[2])
    write(service, alice, cited_turn(1, ALICE))
    quoted = 'the page reads <script>alert(1)</script> and <!-- no --> "5 < 6"'
    service.record_verdicts(bob.seat, 1, verdicts(cited_turn(1, ALICE), {LIVE: Verdict.UNRELIABLE}, quoted))
    path = service.status(alice.duel_id).duel.debate_path
    written = Path(path).read_text()
    assert "<script>" not in written and "<!-- no -->" not in written  # nothing of the page is markup there
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in written
    report = read_report(path, env={})
    assert report.to_dict()["rulings"][0]["evidence"] == quoted  # the text as the page had it
    page = render_html(report)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&amp;lt;" not in page  # escaped once
    assert "<script>" not in page
    assert "&lt;script>alert(1)&lt;/script>" in render_markdown(report)  # md escapes `<` only, as for any record text


def test_a_later_turn_may_not_repeat_a_redacted_claim(ruled: tuple[DuelService, Player, Player]) -> None:
    service, _, bob = ruled
    lease = claim(service, bob)
    with pytest.raises(DuelError) as repeated:
        service.append(bob.seat, lease, make_turn(2, *BOB, counterclaim=CLAIM))
    assert {v["code"] for v in repeated.value.details["violations"]} == {RuleCode.REDACTED_REPEATED}
    service.append(bob.seat, lease, make_turn(2, *BOB), release=True)


def test_validate_checks_the_rulings_chain_after_the_close(ruled: tuple[DuelService, Player, Player]) -> None:
    service, alice, bob = ruled
    write(service, bob, make_turn(2, *BOB, "ACCEPTING_CONSENSUS"))
    write(service, alice, make_turn(3, *ALICE, "ACCEPTING_CONSENSUS", previous_stance="OPEN_TO_DEBATE"))
    path = service.status(alice.duel_id).duel.debate_path
    if service.status(alice.duel_id).duel.pending_outcome == ACCEPTED_CONSENSUS:
        service.release_lock(alice.seat, claim(service, alice), close=True, outcome=ACCEPTED_CONSENSUS)
    assert validate_file(path).valid, validate_file(path).problems
    text = Path(path).read_text()
    Path(path).write_text(text.replace("`fabricated`", "`verified`", 1))  # a redaction ruling undone by hand
    codes = {problem.code for problem in validate_file(path).problems}
    assert RecordCode.HASH_MISMATCH in codes


def test_a_ruling_edited_while_the_duel_is_open_is_tampering(ruled: tuple[DuelService, Player, Player]) -> None:
    service, alice, bob = ruled
    path = Path(service.status(alice.duel_id).duel.debate_path)
    path.write_text(path.read_text().replace("the page said fabricated", "the page said nothing"))
    with pytest.raises(DuelError) as tampered:
        service.append(bob.seat, claim(service, bob), make_turn(2, *BOB))
    assert tampered.value.code == ErrorCode.ARTIFACT_TAMPERED and "ruling 1" in tampered.value.message


def test_on_fabrication_invalidate_ends_the_duel(service: DuelService, source: Path) -> None:
    settings = DuelSettings(on_fabrication="invalidate")
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x", settings=settings)
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x", settings=settings)
    write(service, alice, cited_turn(1, ALICE))
    service.record_verdicts(bob.seat, 1, verdicts(cited_turn(1, ALICE), {LIVE: Verdict.VERIFIED}))
    assert service.status(alice.duel_id).duel.invalid_reason is None  # a verified source disqualifies no one
    service.record_verdicts(bob.seat, 1, verdicts(cited_turn(1, ALICE), {DEAD: Verdict.FABRICATED}))
    status = service.status(bob.duel_id, participant_id=bob.id, participant_token=bob.token)
    assert status.next_step == "close" and "a disqualification" in (status.duel.invalid_reason or "")
    closed = service.release_lock(bob.seat, claim(service, bob), close=True, outcome=INVALIDATED)
    assert closed.outcome == INVALIDATED
    front = RecordFile.read(closed.to_dict().get("debate_path") or status.duel.debate_path).front
    assert front is not None and front.schedule.on_fabrication == "invalidate"


# -- what a ruling may say (section 10, "Rulings": `duel validate` holds each to its turn) ------------

ELSEWHERE = "https://elsewhere.example/never-cited"
NOVEL_URL = "https://novel.example/lease-survey"


def forge(path: Path, r: int, change: Callable[[Ruling], Ruling], *, extra: str = "") -> None:
    """Ruling ``r`` of the record the service wrote at ``path`` changed as a forger would: its text rewritten
    (``extra`` lines added), its hash and every later ``prev`` recomputed, so that the chain holds."""
    text, prev = path.read_text(), GENESIS
    for block in RecordFile.read(path).parsed.rulings:
        ruling = parse_ruling(block.r, block.text)
        assert ruling is not None
        written = ruling_text(change(ruling)) + extra if block.r == r else block.text
        sha = sha256_text(written)
        marker = f"r={block.r} sha256={block.sha256} prev={block.prev} -->\n"
        text = text.replace(marker + block.text, f"r={block.r} sha256={sha} prev={prev} -->\n{written}")
        prev = sha
    path.write_text(text)


@pytest.mark.parametrize(
    ("r", "change", "extra", "why"),
    [
        (2, lambda ruling: replace(ruling, url=ELSEWHERE), "", f"does not cite <{ELSEWHERE}> in its counterpoint 1"),
        (1, lambda ruling: replace(ruling, seat=2), "", "names seat 2 for turn 1, which seat 1 wrote"),
        (2, lambda ruling: replace(ruling, where="counterpoint 2"), "", "turn 1 has no counterpoint 2 citing a URL"),
        (1, lambda ruling: replace(ruling, where=NOVEL), "", "turn 1 has no novel argument citing a URL"),
        (1, lambda ruling: replace(ruling, before=5), "", "before turn 5, but the record ends at turn 1"),
        (2, lambda ruling: replace(ruling, before=1), "", "before turn 1, not after the turn it rules on"),
        (2, lambda ruling: ruling, "- Redacted: the claim of turn 1\n", "text the service never writes"),
    ],
    ids=[
        "url-not-cited",
        "other-seat",
        "no-such-counterpoint",
        "novel-without-url",
        "before-later",
        "before-its-turn",
        "extra-line",
    ],
)
def test_a_forged_ruling_is_a_violation_even_rechained(
    ruled: tuple[DuelService, Player, Player], r: int, change: Callable[[Ruling], Ruling], extra: str, why: str
) -> None:
    service, alice, _ = ruled
    path = Path(service.status(alice.duel_id).duel.debate_path)
    assert validate_file(path).valid, validate_file(path).problems
    forge(path, r, change, extra=extra)
    problems = validate_file(path).problems
    assert [(p.code, p.line is not None) for p in problems] == [(RecordCode.RULING_MISMATCH, True)], problems
    assert problems[0].message.startswith(f"ruling {r} ") and why in problems[0].message


@pytest.mark.slow
def test_duel_validate_names_a_ruling_on_a_url_the_turn_does_not_cite(
    ruled: tuple[DuelService, Player, Player],
) -> None:
    service, alice, _ = ruled
    path = Path(service.status(alice.duel_id).duel.debate_path)
    forge(path, 2, lambda ruling: replace(ruling, url=ELSEWHERE))
    done = subprocess.run(
        [sys.executable, "-m", "rp1_duel", "validate", str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1 and "INVALID" in done.stdout, done.stdout + done.stderr
    assert f"RULING_MISMATCH ruling 2 on turn 1: turn 1 does not cite <{ELSEWHERE}>" in done.stdout


def test_honest_rulings_of_every_kind_validate(service: DuelService, source: Path) -> None:
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    novel = '- design.md "Leases expire after fifteen minutes unless refreshed."\n'
    first = cited_turn(1, ALICE).replace(novel, f"{novel}- {NOVEL_URL}\n")
    write(service, alice, first)
    found = {DEAD: Verdict.FABRICATED, LIVE: Verdict.VERIFIED, NOVEL_URL: Verdict.UNRELIABLE}
    service.record_verdicts(bob.seat, 1, verdicts(first, found))
    second = make_turn(2, *BOB).replace(novel, f"{novel}- {DEAD}/2\n")
    write(service, bob, second)
    service.record_verdicts(alice.seat, 2, verdicts(second, {f"{DEAD}/2": Verdict.FABRICATED}))
    path = service.status(alice.duel_id).duel.debate_path
    assert [(r.turn, r.seat, r.where, r.verdict) for r in RecordFile.read(path).rulings] == [
        (1, 1, "counterpoint 1", Verdict.FABRICATED),
        (1, 1, "counterpoint 1", Verdict.VERIFIED),
        (1, 1, NOVEL, Verdict.UNRELIABLE),
        (2, 2, NOVEL, Verdict.FABRICATED),
    ]
    assert validate_file(path).valid, validate_file(path).problems
    assert "[redacted: ruling 4 found its source fabricated]" in render_markdown(read_report(path, env={}))


def test_the_service_rules_on_no_citation_its_turn_does_not_make(service: DuelService, source: Path) -> None:
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    write(service, alice, cited_turn(1, ALICE))
    check = verdicts(cited_turn(1, ALICE), {DEAD: Verdict.FABRICATED})
    lying = replace(check, citations=(replace(check.citations[0], url=ELSEWHERE),))  # a seat's check, forged
    assert service.record_verdicts(bob.seat, 1, lying) == []
    path = service.status(alice.duel_id).duel.debate_path
    assert RecordFile.read(path).rulings == () and validate_file(path).valid


# -- challenges (section 10, "Challenges") ---------------------------------------------------------


def challenging(turn: str, *items: str) -> str:
    """``turn`` with a **Source Challenges** section after its six."""
    return turn + "**Source Challenges**\n" + "".join(f"- {item}\n" for item in items)


@pytest.mark.parametrize(
    ("item", "code"),
    [
        (f"Turn 1 {DEAD}: the study never measured lost turns in the field", None),
        (f"Turn 1 {DEAD}", RuleCode.CHALLENGE_NO_CLAIM),
        (f"Turn 1 {DEAD}: wrong", RuleCode.CHALLENGE_NO_CLAIM),
        ("Turn 1 https://never.example/cited: the study never measured lost turns", RuleCode.CHALLENGE_UNKNOWN),
        (f"Turn 7 {DEAD}: the study never measured lost turns in the field", RuleCode.CHALLENGE_UNKNOWN),
        ("the dead link: it never measured lost turns", RuleCode.CHALLENGE_UNKNOWN),
    ],
)
def test_a_challenge_names_an_existing_citation_and_the_claim_it_fails(
    service: DuelService, source: Path, item: str, code: str | None
) -> None:
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    write(service, alice, cited_turn(1, ALICE))
    lease = claim(service, bob)
    if code is None:
        service.append(bob.seat, lease, challenging(make_turn(2, *BOB), item), release=True)
        return
    with pytest.raises(DuelError) as refused:
        service.append(bob.seat, lease, challenging(make_turn(2, *BOB), item))
    assert {v["code"] for v in refused.value.details["violations"]} == {code}


def test_a_participant_cannot_challenge_its_own_source(service: DuelService, source: Path) -> None:
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    write(service, alice, cited_turn(1, ALICE))
    write(service, bob, make_turn(2, *BOB))
    with pytest.raises(DuelError) as refused:
        service.append(
            alice.seat,
            claim(service, alice),
            challenging(make_turn(3, *ALICE), f"Turn 1 {DEAD}: my own claim was wrong"),
        )
    assert "this participant's own" in refused.value.details["violations"][0]["message"]


# -- through the real SDKs, the fake model servers and the fake web ----------------------------------

DEAD_CLAIM = "every lease study shows fifteen minutes halves the lost turns"


def challenger(web: FakeWeb, stances: list[str]) -> Callable[[dict[str, Any]], str]:
    """Seat 1 cites a dead page for its counterpoint's claim; seat 2 challenges it in turn 2."""

    def respond(body: dict[str, Any]) -> str:
        n, name, harness, model, _ = asked(body)
        if n == 1:
            return make_turn(
                1, name, harness, model, stances[0], counterclaim=DEAD_CLAIM, citing=(web.url("/missing"),)
            )
        turn = make_turn(n, name, harness, model, stances[n - 1])
        if n == 2:
            turn = challenging(
                turn, f"Turn 1 {web.url('/missing')}: the page never supported the claim about lost turns"
            )
        return turn

    return respond


@pytest.mark.slow
def test_a_challenged_dead_link_is_ruled_fabricated_and_its_claim_hidden_everywhere(
    source: Path, debate_dir: Path, anthropic_server: Any, openai_server: Any, web: FakeWeb
) -> None:
    stances = ["OPEN_TO_DEBATE", "OPEN_TO_DEBATE", "ACCEPTING_CONSENSUS", "ACCEPTING_CONSENSUS"]
    anthropic_server.responder = openai_server.responder = challenger(web, stances)
    claude = start(source, debate_dir, "--model", "claude-x", "--max-turns", "4", env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    gpt = start(source, debate_dir, "--model", "gpt-x", "--allow-private-hosts", env=gpt_env(openai_server))
    finished = [finish(process) for process in (claude, gpt)]

    assert [result["outcome"] for _, result, _ in finished] == [ACCEPTED_CONSENSUS] * 2, finished
    path = finished[0][1]["debate_path"]
    record = RecordFile.read(path)
    [ruling] = record.rulings
    assert (ruling.turn, ruling.verdict, ruling.by, ruling.before) == (
        1,
        Verdict.FABRICATED,
        "seat 2's challenge in turn 2",
        3,
    )
    assert DEAD_CLAIM in Path(path).read_text()  # the record keeps turn 1 byte for byte
    next_prompt = prompt_text(anthropic_server.requests[1]["body"])  # Claude's turn 3, after the ruling
    assert DEAD_CLAIM not in next_prompt and "[redacted: ruling 1 found its source fabricated]" in next_prompt
    report = read_report(path, env={})
    for shown in (render_markdown(report), render_html(report), json.dumps(report.to_dict())):
        assert DEAD_CLAIM not in shown
    service = DuelService(debate_dir)
    watcher = Follower(service, record.front.duel_id if record.front else "")
    lines = [line.text for line in watcher.lines(cast("Any", watcher.poll()))]
    assert not any(DEAD_CLAIM in line for line in lines)
    assert any(line.startswith("ruling 1 on turn 1, counterpoint 1: fabricated") for line in lines)
    assert validate_file(path).valid, validate_file(path).problems


@pytest.mark.slow
def test_the_floor_is_kept_while_challenged_pages_load_and_the_ruling_comes_before_the_peers_claim(
    source: Path, debate_dir: Path, tmp_path: Path, anthropic_server: Any, web: FakeWeb
) -> None:
    slow = [web.url(f"/slow-missing?copy={n}") for n in range(4)]  # dead links, two at a time from one host, 3 s each
    folder = tmp_path / "bob"  # Bob, scripted, cites them all in turn 1 and claims turn 3 the moment he may
    folder.mkdir()
    for n, stance in ((1, "OPEN_TO_DEBATE"), (3, "ACCEPTING_CONSENSUS")):
        turn = make_turn(n, "Bob", "duel", "scripted:bob", stance, counterclaim=DEAD_CLAIM, citing=tuple(slow))
        (folder / f"{n}.md").write_text(turn if n == 1 else make_turn(n, "Bob", "duel", "scripted:bob", stance))
    argv = ("--model", f"scripted:{folder}", "--name", "Bob", "--max-turns", "4", "--lease-seconds", "5")
    bob = start(source, debate_dir, *argv, env=clean_env())
    wait_for_seat(debate_dir, source)

    def respond(body: dict[str, Any]) -> str:
        n, name, harness, model, _ = asked(body)
        stance = "OPEN_TO_DEBATE" if n == 2 else "ACCEPTING_CONSENSUS"
        turn = make_turn(n, name, harness, model, stance)
        return challenging(
            turn, *(f"Turn 1 {url}: the page never supported the claim about lost turns" for url in slow)
        )

    anthropic_server.responder = respond
    alice = start(source, debate_dir, "--model", "claude-x", "--allow-private-hosts", env=claude_env(anthropic_server))
    finished = [finish(process) for process in (bob, alice)]

    assert [result["outcome"] for _, result, _ in finished] == [ACCEPTED_CONSENSUS] * 2, finished
    me = finished[1][1]["participant_id"]
    wanted = (EventType.TURN_APPENDED, EventType.RULING_WRITTEN, EventType.LOCK_REFRESHED, EventType.LOCK_ACQUIRED)
    logged = DuelService(debate_dir).events(finished[1][1]["duel_id"], wanted)
    kinds = [(event.type, event.participant_id) for event in logged]
    appended, ruled = kinds.index((EventType.TURN_APPENDED, me)), kinds.index((EventType.RULING_WRITTEN, me))
    assert (EventType.LOCK_REFRESHED, me) in kinds[appended:ruled]  # the 6 s of pages outlast a 5 s lease
    peer_claims = [n for n, (kind, who) in enumerate(kinds) if kind == EventType.LOCK_ACQUIRED and who != me]
    assert next(n for n in peer_claims if n > appended) > ruled  # turn 3 is claimed only once the rulings are in


def test_a_chairs_turn_acknowledges_each_ruling_since_its_last() -> None:
    from test_chair import SCHEDULE, claimant_of, history_upto, pre_closing

    from rp1_duel.turns import validate_turn

    history = history_upto(SCHEDULE.pre_closing or 0)
    history.rulings = (
        Ruling(
            r=1,
            turn=1,
            seat=1,
            where="counterpoint 1",
            url=DEAD,
            verdict=Verdict.FABRICATED,
            evidence="HTTP 404",
            by="seat 2's verification",
            before=2,
        ),
        Ruling(
            r=2,
            turn=2,
            seat=2,
            where="counterpoint 1",
            url=LIVE,
            verdict=Verdict.VERIFIED,
            evidence="the page states it",
            by="seat 3's verification",
            before=3,
        ),
    )
    number = SCHEDULE.pre_closing or 0
    silent = validate_turn(pre_closing(number), history.context_for(claimant_of(number)))
    assert [v.code for v in silent.violations] == [RuleCode.RULING_UNACKNOWLEDGED] * 2
    said = pre_closing(number) + "Ruling 1 found turn 1's source fabricated; Ruling 2 verified turn 2's.\n"
    assert validate_turn(said, history.context_for(claimant_of(number))).ok


# -- corrections (section 10, "Corrections") -------------------------------------------------------

NEW = "https://new.example/lease-study"


def correcting(turn: str, *items: str) -> str:
    """``turn`` with a **Source Corrections** section after its six."""
    return turn + "**Source Corrections**\n" + "".join(f"- {item}\n" for item in items)


@pytest.fixture
def unreliable(service: DuelService, source: Path) -> tuple[DuelService, Player, Player]:
    """Alice's turn 1 cites two pages; Bob's verification finds the live one unreliable; Bob writes turn 2."""
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    write(service, alice, cited_turn(1, ALICE))
    service.record_verdicts(bob.seat, 1, verdicts(cited_turn(1, ALICE), {LIVE: Verdict.UNRELIABLE}))
    write(service, bob, make_turn(2, *BOB))
    return service, alice, bob


def test_only_a_correction_replaces_a_source_ruled_unreliable(unreliable: tuple[DuelService, Player, Player]) -> None:
    service, alice, _ = unreliable
    lease = claim(service, alice)
    with pytest.raises(DuelError) as again:
        service.append(alice.seat, lease, make_turn(3, *ALICE, counterclaim=CLAIM, citing=(LIVE,)))
    assert {v["code"] for v in again.value.details["violations"]} == {RuleCode.RULED_SOURCE_CITED}
    corrected = correcting(
        make_turn(3, *ALICE), f"Replacing {LIVE} with {NEW}: the study moved to its publisher's site"
    )
    service.append(alice.seat, lease, corrected, release=True)


@pytest.mark.parametrize(
    ("item", "why"),
    [
        (f"Replacing {DEAD} with {NEW}: the study moved to its publisher's site", "no source of this participant's"),
        (f"Replacing {LIVE} with {LIVE}: the study moved to its publisher's site", "no new source"),
        (f"Replacing {LIVE} with {NEW}: moved", "says why"),
        (f"Swap {LIVE} for {NEW}", "reads `Replacing"),
    ],
)
def test_a_correction_names_a_ruled_source_of_ones_own_a_new_one_and_why(
    unreliable: tuple[DuelService, Player, Player], item: str, why: str
) -> None:
    service, alice, _ = unreliable
    with pytest.raises(DuelError) as refused:
        service.append(alice.seat, claim(service, alice), correcting(make_turn(3, *ALICE), item))
    [violation] = refused.value.details["violations"]
    assert violation["code"] == RuleCode.CORRECTION_INVALID and why in violation["message"]


@pytest.mark.parametrize("verdict", [Verdict.VERIFIED, Verdict.FABRICATED])
def test_a_correction_is_verified_like_any_citation(
    unreliable: tuple[DuelService, Player, Player], verdict: str
) -> None:
    service, alice, bob = unreliable
    why = "the study moved to its publisher's site, which states the figure"
    turn = correcting(make_turn(3, *ALICE), f"Replacing {LIVE} with {NEW}: {why}")
    service.append(alice.seat, claim(service, alice), turn, release=True)
    line = turn.split("\n").index(f"- Replacing {LIVE} with {NEW}: {why}") + 1
    check = CitationVerdicts(
        writer=bob.id,
        draft=None,
        sent_back=False,
        voters=(),
        counts={verdict: 1},
        citations=(
            CheckedCitation(
                line=line,
                item=turn.split("\n")[line - 1],
                url=NEW,
                verdict=verdict,
                confidence="high",
                reason=f"the page said {verdict}",
            ),
        ),
    )
    service.record_verdicts(bob.seat, 3, check)
    path = service.status(alice.duel_id).duel.debate_path
    ruling = RecordFile.read(path).rulings[-1]
    assert (ruling.turn, ruling.where, ruling.url, ruling.verdict) == (3, "correction 1", NEW, verdict)
    assert validate_file(path).valid, validate_file(path).problems  # a ruling on a correction is one its turn makes
    shown = render_markdown(read_report(path, env={}))
    assert ("its claim is redacted" in shown) == (verdict == Verdict.FABRICATED)  # a fabricated new source fails too


def test_require_verified_fails_only_an_unredacted_fabricated_citation(
    service: DuelService, source: Path, web: FakeWeb
) -> None:
    from test_verify_sidecar import write as write_sidecar

    dead = web.url("/missing")
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    write(service, alice, make_turn(1, *ALICE, citing=(web.url("/states"), dead)))
    artifact = Path(service.status(alice.duel_id).duel.debate_path)
    write_sidecar(artifact, artifact.parent)
    assert [p.code for p in validate_file(artifact, require_verified=True).problems] == [RecordCode.CITATION_FABRICATED]
    turn = RecordFile.read(artifact).parsed.blocks[0].body
    line = turn.split("\n").index(f"  - {dead}") + 1
    check = CitationVerdicts(
        writer=bob.id,
        draft=None,
        sent_back=False,
        voters=(),
        counts={"fabricated": 1},
        citations=(
            CheckedCitation(
                line=line,
                item=dead,
                url=dead,
                verdict=Verdict.FABRICATED,
                confidence="high",
                reason="dead link: HTTP 404",
            ),
        ),
    )
    service.record_verdicts(bob.seat, 1, check)
    assert validate_file(artifact, require_verified=True).valid  # redacted by ruling 1: dealt with


def test_duel_stats_counts_fabricated_sources_from_the_rulings(
    ruled: tuple[DuelService, Player, Player], debate_dir: Path
) -> None:
    from rp1_duel.review.stats import read_stats

    rows = {row.model: row for row in read_stats(debate_dir, env={}).models}
    assert (rows["claude-x"].fabricated, rows["gpt-x"].fabricated) == (1, 0)  # no sidecar: the rulings tell
