"""The audience (docs/protocol.md section 4, "The audience"): questions to named seats between rounds,
two a round, each due at the addressed seat's next turn, which must answer it; final thoughts once the
duel is closed. Through the service on each store, the record, `duel validate`, and real processes."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_participant import claude_env, finish, gpt_env, start, wait_for_seat

from rp1_duel.audience import FINAL_THOUGHT_CHARS, FINAL_THOUGHTS_PER_DUEL
from rp1_duel.coordination import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.record import RecordFile, validate_file
from rp1_duel.review.report_files import read_report
from rp1_duel.review.report_markdown import render_markdown
from rp1_duel.settings import DuelSettings
from rp1_duel.vocabulary import ACCEPTED_CONSENSUS, ErrorCode, EventType, RuleCode

from fake_debater import asked, prompt_text
from helpers import Player, claim, join, make_turn

ALICE, BOB = ("Alice", "claude-code", "claude-x"), ("Bob", "codex", "gpt-x")
ANSWER = "Fifteen minutes bounds the wait after a crash while leaving a slow model room to finish its turn."


def answering(turn: str, answers: dict[int, str]) -> str:
    """``turn`` with an **Audience Answers** section after its six."""
    items = "".join(f"- Q{number}: {text}\n" for number, text in answers.items())
    return turn + "**Audience Answers**\n" + items


def write(service: DuelService, player: Player, text: str) -> None:
    service.append(player.seat, claim(service, player), text, release=True)


def ask(service: DuelService, duel_id: str, seat: int, text: str = "Why fifteen minutes and not five?") -> dict:
    return service.ask(duel_id, to_seat=seat, question=text, by="Dana").to_dict()["question"]


def test_a_question_is_due_at_the_seats_next_turn_which_must_answer_it(
    service_on_each_store: DuelService, source: Path
) -> None:
    service = service_on_each_store
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    write(service, alice, make_turn(1, *ALICE))
    write(service, bob, make_turn(2, *BOB))
    question = ask(service, alice.duel_id, 1)
    assert (question["id"], question["round"], question["to"], question["due_turn"]) == (1, 1, 1, 3)
    lease = claim(service, alice)
    with pytest.raises(DuelError) as unanswered:
        service.append(alice.seat, lease, make_turn(3, *ALICE))
    assert {v["code"] for v in unanswered.value.details["violations"]} == {RuleCode.QUESTION_UNANSWERED}
    service.append(alice.seat, lease, answering(make_turn(3, *ALICE), {1: ANSWER}), release=True)
    asked = service.events(alice.duel_id, (EventType.QUESTION_ASKED,))
    assert len(asked) == 1 and asked[0].participant_id is None


def test_questions_wait_for_the_opening_round(service: DuelService, pair: tuple[Player, Player]) -> None:
    alice, _ = pair
    write(service, alice, make_turn(1, *ALICE))
    with pytest.raises(DuelError) as early:
        ask(service, alice.duel_id, 2)
    assert early.value.code == ErrorCode.QUESTION_REFUSED


def test_a_third_question_in_a_round_is_refused(service: DuelService, pair: tuple[Player, Player]) -> None:
    alice, bob = pair
    write(service, alice, make_turn(1, *ALICE))
    write(service, bob, make_turn(2, *BOB))
    ask(service, alice.duel_id, 1)
    ask(service, alice.duel_id, 2, "Who refreshes the lease when the model is slow?")
    with pytest.raises(DuelError) as full:
        ask(service, alice.duel_id, 1, "And a third question?")
    assert full.value.code == ErrorCode.QUESTIONS_FULL and full.value.details == {"round": 1}
    write(service, alice, answering(make_turn(3, *ALICE), {1: ANSWER}))
    write(
        service,
        bob,
        answering(
            make_turn(4, *BOB), {2: "The participant's own process refreshes it in the background while it writes."}
        ),
    )
    assert ask(service, alice.duel_id, 1, "A question of round two?")["round"] == 2


def test_a_question_to_the_seat_holding_the_floor_is_due_at_its_following_turn(
    service: DuelService, pair: tuple[Player, Player]
) -> None:
    alice, bob = pair
    write(service, alice, make_turn(1, *ALICE))
    write(service, bob, make_turn(2, *BOB))
    lease = claim(service, alice)  # alice may be writing turn 3 already
    assert ask(service, alice.duel_id, 1)["due_turn"] == 5
    service.append(alice.seat, lease, make_turn(3, *ALICE), release=True)  # turn 3 owes nothing


def test_a_seat_with_no_turn_left_cannot_be_asked(service: DuelService, source: Path) -> None:

    from helpers import join

    settings = DuelSettings(max_turns=2)
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x", settings=settings)
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x", settings=settings)
    write(service, alice, make_turn(1, *ALICE))
    lease = claim(service, bob)
    with pytest.raises(DuelError) as late:
        ask(service, alice.duel_id, 1)
    assert late.value.code == ErrorCode.QUESTION_REFUSED
    service.release_lock(bob.seat, lease)


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("Yes, because it works.", "says too little"),
        ("Why fifteen minutes and not five? Why fifteen minutes and not five?", "restates the question"),
    ],
)
def test_a_dodge_is_not_an_answer(service: DuelService, pair: tuple[Player, Player], answer: str, why: str) -> None:
    alice, bob = pair
    write(service, alice, make_turn(1, *ALICE))
    write(service, bob, make_turn(2, *BOB))
    ask(service, alice.duel_id, 1)
    with pytest.raises(DuelError) as dodged:
        service.append(alice.seat, claim(service, alice), answering(make_turn(3, *ALICE), {1: answer}))
    [violation] = dodged.value.details["violations"]
    assert violation["code"] == RuleCode.QUESTION_UNANSWERED and why in violation["message"]


def test_an_answer_to_no_question_due_is_refused(service: DuelService, pair: tuple[Player, Player]) -> None:
    alice, bob = pair
    write(service, alice, make_turn(1, *ALICE))
    write(service, bob, make_turn(2, *BOB))
    with pytest.raises(DuelError) as stray:
        service.append(alice.seat, claim(service, alice), answering(make_turn(3, *ALICE), {7: ANSWER}))
    assert "Q7, which is no audience question due" in stray.value.details["violations"][0]["message"]


def test_questions_and_final_thoughts_are_in_the_record_and_validate_checks_the_answers(
    service: DuelService, pair: tuple[Player, Player]
) -> None:
    alice, bob = pair
    write(service, alice, make_turn(1, *ALICE))
    write(service, bob, make_turn(2, *BOB))
    ask(service, alice.duel_id, 1)
    with pytest.raises(DuelError) as early:
        service.add_final_thoughts(alice.duel_id, by="Dana", text="Too soon.")
    assert early.value.code == ErrorCode.QUESTION_REFUSED
    write(service, alice, answering(make_turn(3, *ALICE, "ACCEPTING_CONSENSUS"), {1: ANSWER}))
    write(service, bob, make_turn(4, *BOB, "ACCEPTING_CONSENSUS"))
    lease = claim(service, bob)  # the turn that reached the outcome keeps the floor to close
    closed = service.release_lock(bob.seat, lease, close=True, outcome=ACCEPTED_CONSENSUS)
    assert closed.outcome == ACCEPTED_CONSENSUS
    said = service.add_final_thoughts(alice.duel_id, by="Dana", text="A fair\nexchange; the answer on leases helped.")
    assert said.to_dict()["final_thought"]["text"] == "A fair exchange; the answer on leases helped."
    path = service.status(alice.duel_id).duel.debate_path
    front = RecordFile.read(path).front
    assert front is not None and [q.text for q in front.questions] == ["Why fifteen minutes and not five?"]
    assert [t.by for t in front.final_thoughts] == ["Dana"]
    report = validate_file(path)
    assert report.valid, report.problems
    # A question added to the header by hand is owed by a turn that never answered it: validate says so.
    text = Path(path).read_text()
    forged = text.replace("due_turn: 3", "due_turn: 4")
    Path(path).write_text(forged)
    assert RuleCode.QUESTION_UNANSWERED in {p.code for p in validate_file(path).problems}


def closed(service: DuelService, pair: tuple[Player, Player]) -> str:
    """Close the pair's duel at consensus after two rounds; its duel id."""
    alice, bob = pair
    write(service, alice, make_turn(1, *ALICE))
    write(service, bob, make_turn(2, *BOB))
    write(service, alice, make_turn(3, *ALICE, "ACCEPTING_CONSENSUS"))
    write(service, bob, make_turn(4, *BOB, "ACCEPTING_CONSENSUS"))
    service.release_lock(bob.seat, claim(service, bob), close=True, outcome=ACCEPTED_CONSENSUS)
    return alice.duel_id


def test_final_thoughts_are_one_per_author(service: DuelService, pair: tuple[Player, Player]) -> None:
    duel_id = closed(service, pair)
    service.add_final_thoughts(duel_id, by="Dana", text="A fair exchange.")
    for by in ("Dana", "dana"):
        with pytest.raises(DuelError) as again:
            service.add_final_thoughts(duel_id, by=by, text="And one more thing.")
        assert again.value.code == ErrorCode.QUESTION_REFUSED
    front = RecordFile.read(service.status(duel_id).duel.debate_path).front
    assert front is not None and [t.text for t in front.final_thoughts] == ["A fair exchange."]


def test_final_thoughts_are_capped_per_duel(service: DuelService, pair: tuple[Player, Player]) -> None:
    duel_id = closed(service, pair)
    for k in range(FINAL_THOUGHTS_PER_DUEL):
        service.add_final_thoughts(duel_id, by=f"reader{k}", text="Well argued.")
    with pytest.raises(DuelError) as full:
        service.add_final_thoughts(duel_id, by="latecomer", text="Well argued.")
    assert full.value.code == ErrorCode.QUESTIONS_FULL
    state = service.status(duel_id)
    front = RecordFile.read(state.duel.debate_path).front
    assert front is not None and len(front.final_thoughts) == FINAL_THOUGHTS_PER_DUEL


def test_a_final_thought_over_its_size_limit_is_refused(service: DuelService, pair: tuple[Player, Player]) -> None:
    duel_id = closed(service, pair)
    with pytest.raises(DuelError) as long:
        service.add_final_thoughts(duel_id, by="Dana", text="x" * (FINAL_THOUGHT_CHARS + 1))
    assert long.value.code == ErrorCode.INVALID_ARGUMENT


def test_a_record_with_the_most_and_longest_final_thoughts_still_validates_and_reports(
    service: DuelService, pair: tuple[Player, Player]
) -> None:
    duel_id = closed(service, pair)
    widest = ('"\\' * FINAL_THOUGHT_CHARS)[:FINAL_THOUGHT_CHARS]  # each character written as two in the header
    for k in range(FINAL_THOUGHTS_PER_DUEL):
        service.add_final_thoughts(duel_id, by=f"reader-with-a-long-name-{k:02d}".ljust(64, "x"), text=widest)
    path = service.status(duel_id).duel.debate_path
    validated = validate_file(path)
    assert validated.valid, validated.problems
    report = read_report(path, env={})
    assert report.to_dict()["outcome"]["outcome"] == ACCEPTED_CONSENSUS
    assert len(report.to_dict()["audience"]["final_thoughts"]) == FINAL_THOUGHTS_PER_DUEL
    assert render_markdown(report).count("reader-with-a-long-name-") == FINAL_THOUGHTS_PER_DUEL


# -- through real processes ----------------------------------------------------------------

_DUE = re.compile(r"^- Q(\d+) \(from [^)]*\): (.+)$", re.MULTILINE)


def answers_the_audience(stances: list[str], slow_turn: int | None = None) -> Callable[[dict[str, Any]], str]:
    """A fake model writing turn n with ``stances[n - 1]``, answering every audience question its prompt lists."""

    def respond(body: dict[str, Any]) -> str:
        n, name, harness, model, _ = asked(body)
        if n == slow_turn:
            time.sleep(2)  # long enough for a question to come in while this turn is being written
        due = _DUE.findall(prompt_text(body))
        answers = "".join(f"- Q{number}: {ANSWER}\n" for number, _ in due)
        return make_turn(n, name, harness, model, stances[n - 1]) + (f"**Audience Answers**\n{answers}" if due else "")

    return respond


def wait_until(check: Callable[[], bool], limit: float = 30) -> None:
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.slow
def test_a_question_reaches_the_addressed_seats_next_prompt_and_its_turn_answers_it(
    source: Path, debate_dir: Path, anthropic_server: Any, openai_server: Any
) -> None:
    stances = ["OPEN_TO_DEBATE", "OPEN_TO_DEBATE", "ACCEPTING_CONSENSUS", "ACCEPTING_CONSENSUS"]
    anthropic_server.responder = answers_the_audience(stances, slow_turn=3)
    openai_server.responder = answers_the_audience(stances)
    claude = start(source, debate_dir, "--model", "claude-x", "--max-turns", "4", env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    gpt = start(source, debate_dir, "--model", "gpt-x", env=gpt_env(openai_server))
    service = DuelService(debate_dir)
    wait_until(lambda: service.status(target=str(source)).turn_count >= 2)
    duel_id = service.status(target=str(source)).duel.id
    question = service.ask(duel_id, to_seat=2, question="What does a crashed holder cost its peer?", by="Dana")
    assert question.to_dict()["question"]["due_turn"] == 4
    finished = [finish(process) for process in (claude, gpt)]

    assert [result["outcome"] for _, result, _ in finished] == [ACCEPTED_CONSENSUS] * 2, finished
    turn_4_prompt = prompt_text(openai_server.requests[-1]["body"])
    assert "- Q1 (from Dana): What does a crashed holder cost its peer?" in turn_4_prompt
    assert "Q1 (from Dana)" not in prompt_text(anthropic_server.requests[-1]["body"])  # seat 1 owes nothing
    record = RecordFile.read(finished[0][1]["debate_path"])
    assert f"- Q1: {ANSWER}" in record.parsed.blocks[3].body
    assert validate_file(finished[0][1]["debate_path"]).valid


def audience_model(seat: int) -> Callable[[dict[str, Any]], str]:
    """A fake audience model: a question to ``seat`` between rounds, final thoughts at the close."""

    def respond(body: dict[str, Any]) -> str:
        if "final thoughts" in prompt_text(body).split("The debate so far")[-1]:
            return "The debate settled the lease length; it never weighed clock skew between machines."
        return f"To: seat {seat}\nQuestion: Would a five-minute lease hurt a slow model more than it helps?"

    return respond


@pytest.mark.slow
def test_a_model_audience_asks_a_third_question_is_refused_and_final_thoughts_close_it(
    source: Path, debate_dir: Path, openai_server: Any
) -> None:
    service = DuelService(debate_dir)
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    openai_server.responder = audience_model(1)
    openai_server.delay_per_chunk = 0.05  # the person's question lands first
    audience = start(
        source, debate_dir, "--role", "audience", "--model", "gpt-x", "--name", "Eve", env=gpt_env(openai_server)
    )
    write(service, alice, make_turn(1, *ALICE))
    write(service, bob, make_turn(2, *BOB))
    ask(service, alice.duel_id, 2)
    wait_until(lambda: len(RecordFile.read(service.status(alice.duel_id).duel.debate_path).front.questions) == 2)  # type: ignore[union-attr]
    with pytest.raises(DuelError) as full:
        ask(service, alice.duel_id, 1, "One question too many?")
    assert full.value.code == ErrorCode.QUESTIONS_FULL
    lease = claim(service, alice)
    with pytest.raises(DuelError) as unanswered:  # Eve's question to seat 1, due at turn 3
        service.append(alice.seat, lease, make_turn(3, *ALICE, "ACCEPTING_CONSENSUS"))
    assert unanswered.value.details["violations"][0]["code"] == RuleCode.QUESTION_UNANSWERED
    service.append(alice.seat, lease, answering(make_turn(3, *ALICE, "ACCEPTING_CONSENSUS"), {2: ANSWER}), release=True)
    write(service, bob, answering(make_turn(4, *BOB, "ACCEPTING_CONSENSUS"), {1: ANSWER}))
    service.release_lock(bob.seat, claim(service, bob), close=True, outcome=ACCEPTED_CONSENSUS)
    code, result, err = finish(audience)

    assert code == 0, err
    assert [(q["id"], q["to"], q["by"]) for q in result["asked"]] == [(2, 1, "Eve")]
    assert result["final_thoughts"].startswith("The debate settled the lease length")
    front = RecordFile.read(service.status(alice.duel_id).duel.debate_path).front
    assert front is not None and [(t.by, t.text[:14]) for t in front.final_thoughts] == [("Eve", "The debate set")]
    assert front.questions[1].text == "Would a five-minute lease hurt a slow model more than it helps?"
    assert validate_file(service.status(alice.duel_id).duel.debate_path).valid


def test_the_front_matter_reads_one_field_a_line_in_a_pull_request_diff(service: DuelService, source: Path) -> None:
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    write(service, alice, make_turn(1, *ALICE))
    write(service, bob, make_turn(2, *BOB))
    ask(service, alice.duel_id, 2)
    path = Path(service.status(alice.duel_id).duel.debate_path)
    header = path.read_text(encoding="utf-8").split("---\n")[1]
    # A field holding a person's words (the topic, a question) is as long as they are; no other line is long.
    assert [line for line in header.splitlines() if len(line) > 100 and not line.lstrip().startswith("text:")] == []
    assert '  - id: "p-' in header and "audience:\n  questions:\n    - id: 1\n" in header
    front = RecordFile.read(str(path)).front
    assert front is not None and [p.display_name for p in front.participants] == ["Alice", "Bob"]
    assert [q.due_turn for q in front.questions] == [4]
