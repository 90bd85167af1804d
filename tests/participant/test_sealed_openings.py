"""Sealed openings (docs/protocol.md section 4, "Sealed openings"): every seat commits its opening's
hash before any opening is revealed, each reveal must match its commitment, and a silent seat times
the duel out by name. Through the service on each store, then through real processes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_participant import claude_env, clean_env, finish, gpt_env, start, wait_for_seat

from rp1_duel.clock import ManualClock
from rp1_duel.coordination import DuelService, OpeningCommitted
from rp1_duel.errors import DuelError
from rp1_duel.record import RecordFile, turn_block, validate_file
from rp1_duel.review.report_files import read_report
from rp1_duel.review.watch import event_line
from rp1_duel.settings import DuelSettings
from rp1_duel.turns import normalize_turn_text
from rp1_duel.vocabulary import (
    ACCEPTED_CONSENSUS,
    COMMIT_OPENING,
    INVALIDATED,
    TIMEOUT,
    WAIT_TURN,
    ErrorCode,
    EventType,
    RuleCode,
)

from fake_debater import asked, prompt_text
from helpers import (
    Player,
    ToolResult,
    claim,
    join,
    make_turn,
    replace_edit,
    run_tools,
    sealed_opening,
    with_edits,
)

SEALED = DuelSettings(sealed_openings=True)
OPEN, ACCEPT = "OPEN_TO_DEBATE", "ACCEPTING_CONSENSUS"
NAMES = {1: ("Alice", "claude-code", "claude-x"), 2: ("Bob", "codex", "gpt-x"), 3: ("Cleo", "gemini-cli", "gem-x")}


def opening(n: int, stance: str = "OPEN_TO_DEBATE") -> str:
    """Seat ``n``'s opening, turn ``n``, citing only the source: it has seen no other opening."""
    return sealed_opening(n, *NAMES[n], stance)


def seated(service: DuelService, source: Path, seats: int = 2) -> list[Player]:
    settings = DuelSettings(seats=seats, sealed_openings=True)
    return [
        join(service, source, NAMES[n][0], harness=NAMES[n][1], model_id=NAMES[n][2], settings=settings)
        for n in range(1, seats + 1)
    ]


def step_of(service: DuelService, player: Player) -> str | None:
    return service.status(player.duel_id, participant_id=player.id, participant_token=player.token).next_step


def test_every_seat_commits_before_any_opening_is_claimed(service_on_each_store: DuelService, source: Path) -> None:
    service = service_on_each_store
    alice, bob = seated(service, source)
    assert step_of(service, alice) == step_of(service, bob) == COMMIT_OPENING
    committed = service.commit_opening(alice.seat, opening(1))
    assert committed.waiting_for_seats == [2] and not committed.already_committed
    assert step_of(service, alice) == WAIT_TURN  # committed: it waits for bob's commitment
    refused = service.claim_lock(alice.seat)
    assert refused.lease is None and refused.reason == "waiting_for_commitments"
    assert service.commit_opening(bob.seat, opening(2)).waiting_for_seats == []
    service.append(alice.seat, claim(service, alice), opening(1), release=True)
    appended = service.append(bob.seat, claim(service, bob), opening(2), release=True)
    assert appended.turn_number == 2
    logged = service.events(alice.duel_id, (EventType.OPENING_COMMITTED,))
    events = [e.data for e in logged]
    assert [(e.seat, e.committed) for e in events if isinstance(e, OpeningCommitted)] == [(1, 1), (2, 2)]
    shown = event_line(logged[1], {bob.id: "Bob"}, {}).text  # as duel watch shows it
    assert shown.startswith("Bob committed a sealed opening, turn 2 (sha256 ") and "2 of 2" in shown


def test_commitment_is_the_hash_the_turn_block_gets(service: DuelService, source: Path) -> None:
    alice, bob = seated(service, source)
    text = opening(1)
    committed = service.commit_opening(alice.seat, text)
    assert committed.turn_sha256 == turn_block(1, normalize_turn_text(text), "0" * 64).sha256
    service.commit_opening(bob.seat, opening(2))
    appended = service.append(alice.seat, claim(service, alice), text, release=True)
    assert appended.turn_sha256 == committed.turn_sha256


def test_same_opening_committed_twice_changes_nothing(service: DuelService, source: Path) -> None:
    alice, _ = seated(service, source)
    first = service.commit_opening(alice.seat, opening(1))
    again = service.commit_opening(alice.seat, opening(1))
    assert again.already_committed and again.turn_sha256 == first.turn_sha256
    assert len(service.events(alice.duel_id, (EventType.OPENING_COMMITTED,))) == 1


def test_another_opening_after_commit_refused(service: DuelService, source: Path) -> None:
    alice, _ = seated(service, source)
    service.commit_opening(alice.seat, opening(1))
    with pytest.raises(DuelError) as refused:
        service.commit_opening(alice.seat, opening(1, "CONVERGING"))
    assert refused.value.code == ErrorCode.OPENING_COMMITTED


def test_revealing_another_opening_invalidates_the_duel(service_on_each_store: DuelService, source: Path) -> None:
    service = service_on_each_store
    alice, bob = seated(service, source)
    service.commit_opening(alice.seat, opening(1))
    service.commit_opening(bob.seat, opening(2))
    lease = claim(service, alice)
    with pytest.raises(DuelError) as refused:
        service.append(alice.seat, lease, opening(1, "CONVERGING"))
    assert refused.value.code == ErrorCode.OPENING_MISMATCH
    status = service.status(alice.duel_id, participant_id=alice.id, participant_token=alice.token)
    assert status.next_step == "close" and "not the one it committed" in (status.duel.invalid_reason or "")
    closed = service.release_lock(alice.seat, lease, close=True, outcome=INVALIDATED)
    assert closed.outcome == INVALIDATED and "seat 1 (Alice) revealed a sealed opening" in (closed.reason or "")


def test_invalid_opening_refused_at_commit(service: DuelService, source: Path) -> None:
    alice, _ = seated(service, source)
    with pytest.raises(DuelError) as refused:
        service.commit_opening(alice.seat, opening(1).replace("**Agreements**\n", ""))
    assert refused.value.code == ErrorCode.TURN_INVALID
    assert step_of(service, alice) == COMMIT_OPENING  # nothing committed: it may repair and commit


def test_sealed_opening_cannot_cite_another_opening(service: DuelService, source: Path) -> None:
    """Seat 2's opening is checked in the record as it stood before the round, even after turn 1 is in."""
    _, bob = seated(service, source)
    with pytest.raises(DuelError) as refused:
        service.commit_opening(bob.seat, make_turn(2, *NAMES[2]))  # addresses Turn 1
    codes = {v["code"] for v in refused.value.details["violations"]}
    assert RuleCode.ADDRESSES_UNKNOWN in codes


def test_sealed_opening_proposes_no_edits(service: DuelService, source: Path) -> None:
    alice, _ = seated(service, source)
    edited = with_edits(opening(1), replace_edit("shorter", "fifteen minutes", "five minutes"))
    with pytest.raises(DuelError) as refused:
        service.commit_opening(alice.seat, edited)
    codes = {v["code"] for v in refused.value.details["violations"]}
    assert codes == {RuleCode.SEALED_OPENING_EDITS}


def test_commit_refused_in_a_duel_without_sealed_openings(service: DuelService, source: Path) -> None:
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    join(service, source, "Bob", harness="codex", model_id="gpt-x")
    with pytest.raises(DuelError) as refused:
        service.commit_opening(alice.seat, opening(1))
    assert refused.value.code == ErrorCode.INVALID_ARGUMENT


def test_commit_refused_before_every_seat_is_taken(service: DuelService, source: Path) -> None:
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x", settings=SEALED)
    with pytest.raises(DuelError) as refused:
        service.commit_opening(alice.seat, opening(1))
    assert refused.value.code == ErrorCode.NOT_YOUR_TURN and "not every seat" in refused.value.message


def test_rebuttal_round_is_not_sealed(service: DuelService, source: Path) -> None:
    alice, bob = seated(service, source)
    service.commit_opening(alice.seat, opening(1))
    service.commit_opening(bob.seat, opening(2))
    service.append(alice.seat, claim(service, alice), opening(1), release=True)
    service.append(bob.seat, claim(service, bob), opening(2), release=True)
    with pytest.raises(DuelError) as refused:
        service.commit_opening(alice.seat, make_turn(3, *NAMES[1]))
    assert refused.value.code == ErrorCode.OPENING_COMMITTED  # its opening is fixed; turn 3 is claimed as usual
    service.append(alice.seat, claim(service, alice), make_turn(3, *NAMES[1]), release=True)


def test_three_seats_reveal_in_seat_order(service_on_each_store: DuelService, source: Path) -> None:
    service = service_on_each_store
    players = seated(service, source, seats=3)
    for n in (3, 1, 2):  # commitments come in any order
        service.commit_opening(players[n - 1].seat, opening(n))
    refused = service.claim_lock(players[2].seat)
    assert refused.lease is None and refused.reason == "not_your_turn"
    for n in (1, 2, 3):
        service.append(players[n - 1].seat, claim(service, players[n - 1]), opening(n), release=True)
    path = service.status(players[0].duel_id).duel.debate_path
    record = RecordFile.read(path)
    assert [block.n for block in record.parsed.blocks] == [1, 2, 3]
    assert record.front is not None and record.front.schedule.sealed_openings
    openings = read_report(path, env={}).openings  # the report says the vote of the openings was a blind one
    assert openings.sealed and openings.explanation.startswith("The sealed openings (written blind) were all undecided")


def test_silent_seat_times_out_by_name(service: DuelService, source: Path, clock: ManualClock) -> None:
    alice, bob = seated(service, source)
    service.commit_opening(alice.seat, opening(1))
    clock.advance(SEALED.turn_timeout_seconds + 1)
    with pytest.raises(DuelError) as late:
        service.commit_opening(bob.seat, opening(2))
    assert late.value.code == ErrorCode.TURN_DEADLINE_PASSED
    lease = service.claim_lock(alice.seat, for_timeout=True).lease
    assert lease is not None
    closed = service.release_lock(alice.seat, lease, close=True, outcome=TIMEOUT)
    assert closed.reason is not None
    assert closed.reason.startswith("seat 2 (Bob) did not commit its sealed opening by the deadline of turn 1")


def test_last_commitment_starts_the_reveal_deadline(service: DuelService, source: Path, clock: ManualClock) -> None:
    alice, bob = seated(service, source)
    service.commit_opening(alice.seat, opening(1))
    clock.advance(SEALED.turn_timeout_seconds - 10)
    service.commit_opening(bob.seat, opening(2))
    clock.advance(60)  # past the round's first deadline, inside the reveal's
    service.append(alice.seat, claim(service, alice), opening(1), release=True)


# -- through real processes ----------------------------------------------------------------


def tools_seat(debate_dir: Path, source: Path, n: int, *flags: str) -> tuple[str, str, dict[str, str]]:
    """Seat ``n`` joined through `duel tools join`: its duel id, participant id and token environment."""
    name, harness, model = NAMES[n]
    joined = run_tools(
        "join",
        "--target",
        str(source),
        "--participant-name",
        name,
        "--harness",
        harness,
        "--model-id",
        model,
        "--sealed-openings",
        *flags,
        debate_dir=debate_dir,
    ).data
    return joined["duel_id"], joined["participant_id"], {"DUEL_PARTICIPANT_TOKEN": joined["participant_token"]}


@pytest.mark.slow
def test_tools_seats_commit_read_nothing_and_a_changed_reveal_invalidates(
    debate_dir: Path, source: Path, tmp_path: Path
) -> None:
    duel, alice, alice_env = tools_seat(debate_dir, source, 1)
    _, bob, bob_env = tools_seat(debate_dir, source, 2)
    files = {n: tmp_path / f"opening-{n}.md" for n in (1, 2)}
    for n, path in files.items():
        path.write_text(opening(n))

    def tools(op: str, who: str, env: dict[str, str], *flags: str) -> ToolResult:
        return run_tools(op, "--duel-id", duel, "--participant-id", who, *flags, debate_dir=debate_dir, env=env)

    status = tools("status", alice, alice_env).data
    assert status["next_step"] == COMMIT_OPENING
    committed = tools("commit-opening", alice, alice_env, "--turn-file", str(files[1])).data
    assert committed["waiting_for_seats"] == [2] and committed["next_step"] == WAIT_TURN
    # Bob reads the record before committing his own opening: Alice's is nowhere in it.
    record = Path(tools("status", bob, bob_env).data["duel"]["debate_path"]).read_text()
    assert "<!-- duel:turn" not in record and "Alice (claude-code" not in record
    assert tools("claim-lock", alice, alice_env).data["reason"] == "waiting_for_commitments"
    tools("commit-opening", bob, bob_env, "--turn-file", str(files[2]))
    lease = tools("claim-lock", alice, alice_env).data["lease_token"]
    tools("append", alice, {**alice_env, "DUEL_LEASE_TOKEN": lease}, "--turn-file", str(files[1]), "--release")
    # Bob, having read Alice's opening, tries to reveal a different one.
    files[2].write_text(opening(2, "CONVERGING"))
    lease = tools("claim-lock", bob, bob_env).data["lease_token"]
    bob_lease = {**bob_env, "DUEL_LEASE_TOKEN": lease}
    refused = tools("append", bob, bob_lease, "--turn-file", str(files[2]), "--release")
    assert refused.error["code"] == ErrorCode.OPENING_MISMATCH and refused.code != 0
    closed = tools("release-lock", bob, bob_lease, "--close", "--outcome", INVALIDATED).data
    assert closed["outcome"] == INVALIDATED and "seat 2 (Bob) revealed a sealed opening" in closed["reason"]
    assert validate_file(closed_record(debate_dir, duel)).valid


def closed_record(debate_dir: Path, duel: str) -> str:
    return DuelService(debate_dir).status(duel).duel.debate_path


def blind(stances: list[str], seats: int) -> Callable[[dict[str, Any]], str]:
    """A fake model answering turn n with ``stances[n - 1]``: a sealed opening in the first round."""

    def respond(body: dict[str, Any]) -> str:
        n, name, harness, model, _ = asked(body)
        write = sealed_opening if n <= seats else make_turn
        return write(n, name, harness, model, stances[n - 1])

    return respond


@pytest.mark.slow
def test_claude_gpt_and_a_script_open_blind_then_debate(
    source: Path, debate_dir: Path, tmp_path: Path, anthropic_server: Any, openai_server: Any
) -> None:
    stances = [OPEN, OPEN, OPEN, ACCEPT, ACCEPT, ACCEPT]
    anthropic_server.responder = openai_server.responder = blind(stances, 3)
    flags = ("--seats", "3", "--max-turns", "6", "--sealed-openings")
    claude = start(source, debate_dir, "--model", "claude-x", *flags, env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source, count=1)
    gpt = start(source, debate_dir, "--model", "gpt-x", *flags, env=gpt_env(openai_server))
    wait_for_seat(debate_dir, source, count=2)
    script = tmp_path / "cy"
    script.mkdir()
    (script / "1.md").write_text(sealed_opening(3, "Cy", "duel", "scripted:cy", OPEN))
    (script / "2.md").write_text(make_turn(6, "Cy", "duel", "scripted:cy", ACCEPT))
    cy = start(source, debate_dir, "--model", f"scripted:{script}", "--name", "Cy", *flags, env=clean_env())
    finished = [finish(process) for process in (claude, gpt, cy)]

    assert [(code, result["outcome"]) for code, result, _ in finished] == [(0, ACCEPTED_CONSENSUS)] * 3, finished
    claude_opening, gpt_opening = (
        prompt_text(server.requests[0]["body"]) for server in (anthropic_server, openai_server)
    )
    assert "Write turn 1 of" in claude_opening and "Write turn 2 of" in gpt_opening
    # No other seat's text in a sealed opening's prompt: the history is empty, and no other seat's heading is there.
    assert "— GPT (" not in claude_opening and "— Claude (" not in gpt_opening
    for prompt in (claude_opening, gpt_opening):
        assert "(none yet: you open the debate)" in prompt and "— Cy (" not in prompt
        assert "This is a sealed opening" in prompt
    rebuttal = prompt_text(anthropic_server.requests[1]["body"])
    assert "## Turn 2 — GPT (duel / gpt-x)" in rebuttal and "## Turn 3 — Cy (duel / scripted:cy)" in rebuttal
    duel_id = DuelService(debate_dir).status(target=str(source)).duel.id
    kinds = [
        event.data.event_type
        for event in DuelService(debate_dir).events(duel_id, (EventType.OPENING_COMMITTED, EventType.TURN_APPENDED))
    ]
    assert kinds[:4] == [EventType.OPENING_COMMITTED] * 3 + [EventType.TURN_APPENDED]
    report = validate_file(finished[0][1]["debate_path"])
    assert report.valid, report.problems
    assert "sealed_openings: true" in Path(finished[0][1]["debate_path"]).read_text()
