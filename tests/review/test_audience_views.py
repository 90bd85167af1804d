"""The audience as people meet it (docs/protocol.md sections 2 and 11): `duel ask` as a real process, the
`a` key of `duel watch` on a pseudo-terminal, the watch's lines for the audience's events, and the
report's audience section in md, html and json."""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rp1_duel.cli import main
from rp1_duel.coordination import DuelService
from rp1_duel.record import RecordFile
from rp1_duel.review.assessment import assessment_prompt
from rp1_duel.review.report_files import read_report
from rp1_duel.review.report_html import render_html
from rp1_duel.review.report_markdown import render_markdown
from rp1_duel.review.watch import Follower
from rp1_duel.vocabulary import ACCEPTED_CONSENSUS, ACCEPTING_CONSENSUS

from helpers import Player, claim, join, make_turn, stop

ALICE, BOB = ("Alice", "claude-code", "claude-x"), ("Bob", "codex", "gpt-x")
WHY = "Why fifteen minutes and not five?"
WHO = "Who refreshes the lease when the model is slow?"
ANSWER = "Fifteen minutes bounds the wait after a crash while leaving a slow model room to finish its turn."
THOUGHTS = "A fair exchange; the answer on leases helped."


def write(service: DuelService, player: Player, text: str) -> None:
    service.append(player.seat, claim(service, player), text, release=True)


def opened(service: DuelService, source: Path) -> tuple[Player, Player]:
    """A duel whose opening round is written: questions may be asked. Bob's opening accepts already, so a
    turn of Alice's that accepts too reaches the outcome."""
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    write(service, alice, make_turn(1, *ALICE))
    write(service, bob, make_turn(2, *BOB, ACCEPTING_CONSENSUS))
    return alice, bob


def close_at_turn_3(service: DuelService, alice: Player, *, answering_q1: bool = True) -> None:
    """Alice's turn 3 (answering Q1) reaches ACCEPTED_CONSENSUS; she closes the duel before Bob's turn 4."""
    lease = claim(service, alice)
    answers = f"**Audience Answers**\n- Q1: {ANSWER}\n" if answering_q1 else ""
    turn = make_turn(3, *ALICE, ACCEPTING_CONSENSUS) + answers
    service.append(alice.seat, lease, turn)
    service.release_lock(alice.seat, lease, close=True, outcome=ACCEPTED_CONSENSUS)


def artifact_of(service: DuelService, player: Player) -> Path:
    return Path(service.status(player.duel_id).duel.debate_path)


# -- `duel ask`, a real process ----------------------------------------------------------------


def duel(*args: str, login: str = "dana") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUEL_")}
    env.update(LOGNAME=login, USER=login)  # whom getpass names
    return subprocess.run(
        [sys.executable, "-m", "rp1_duel", *args], capture_output=True, text=True, timeout=60, env=env, check=False
    )


@pytest.fixture
def live(debate_dir: Path) -> DuelService:
    """The service on the real clocks, as the `duel` processes run it."""
    return DuelService(debate_dir)


@pytest.mark.slow
def test_duel_ask_admits_two_questions_a_round_and_refuses_the_third_with_questions_full(live, source, debate_dir):
    alice, _bob = opened(live, source)
    where = ("--debate-dir", str(debate_dir))
    first = duel("ask", *where, "--duel-id", alice.duel_id, "--to", "1", "--name", "Dana", WHY)
    assert (first.returncode, first.stdout, first.stderr) == (
        0,
        "Q1 asked after round 1: seat 1 answers it in turn 3\n",
        "",
    )
    second = duel("ask", *where, "--to", "2", "--json", WHO)  # the only active duel, asked as the login user
    assert second.returncode == 0 and second.stderr == ""
    answer = json.loads(second.stdout)
    assert answer["success"] and answer["duel_id"] == alice.duel_id
    assert {k: answer["question"][k] for k in ("id", "round", "to", "by", "text", "due_turn")} == {
        "id": 2,
        "round": 1,
        "to": 2,
        "by": "dana",
        "text": WHO,
        "due_turn": 4,
    }
    third = duel("ask", *where, "--to", "1", "And a third question?")
    assert (third.returncode, third.stdout) == (1, "")
    assert third.stderr == "duel: QUESTIONS_FULL: round 1 has its 2 questions already; ask after the next round\n"
    as_json = duel("ask", *where, "--to", "1", "--json", "And a third question?")
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["error"]["code"] == "QUESTIONS_FULL"
    front = RecordFile.read(artifact_of(live, alice)).front
    assert front is not None and [(q.id, q.by, q.to_seat, q.text) for q in front.questions] == [
        (1, "Dana", 1, WHY),
        (2, "dana", 2, WHO),
    ]


@pytest.mark.slow
def test_duel_ask_before_the_opening_round_ends_is_refused_and_a_bad_seat_is_a_usage_error(live, source, debate_dir):
    alice = join(live, source, "Alice", harness="claude-code", model_id="claude-x")
    join(live, source, "Bob", harness="codex", model_id="gpt-x")
    write(live, alice, make_turn(1, *ALICE))
    early = duel("ask", "--debate-dir", str(debate_dir), "--duel-id", alice.duel_id, "--to", "2", WHY)
    assert (early.returncode, early.stdout) == (1, "")
    assert early.stderr == "duel: QUESTION_REFUSED: questions come after the opening round\n"
    nobody = duel("ask", "--debate-dir", str(debate_dir), "--duel-id", alice.duel_id, "--to", "3", WHY)
    assert nobody.returncode == 2 and nobody.stderr == "duel: INVALID_ARGUMENT: questions go to a panel seat, 1 to 2\n"


@pytest.mark.slow
def test_final_thoughts_are_refused_while_the_duel_is_open_and_recorded_once_it_is_closed(live, source, debate_dir):
    alice, _bob = opened(live, source)
    where = ("--debate-dir", str(debate_dir), "--duel-id", alice.duel_id)
    early = duel("ask", *where, "--final", THOUGHTS)
    assert (early.returncode, early.stdout) == (1, "")
    assert early.stderr == "duel: QUESTION_REFUSED: final thoughts come once the duel is closed\n"
    close_at_turn_3(live, alice, answering_q1=False)
    said = duel("ask", *where, "--final", THOUGHTS, login="carol")
    path = artifact_of(live, alice)
    assert (said.returncode, said.stderr) == (0, "")
    assert said.stdout == f"final thoughts recorded in {path} (shown in its report; they change no outcome)\n"
    front = RecordFile.read(path).front
    assert front is not None and [(t.by, t.text) for t in front.final_thoughts] == [("carol", THOUGHTS)]
    assert front.outcome == ACCEPTED_CONSENSUS
    asked = duel("ask", *where, "--to", "1", WHY)
    assert asked.returncode == 1 and asked.stderr.startswith("duel: DUEL_CLOSED: ")
    nothing_open = duel("ask", "--debate-dir", str(debate_dir), "--to", "1", WHY)
    assert (
        nothing_open.returncode == 1
        and nothing_open.stderr == f"duel: DUEL_NOT_FOUND: no active duel in {debate_dir}\n"
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["ask", "Why?"], "say which seat to ask with --to SEAT (or give final thoughts with --final)"),
        (["ask", "--to", "1", "--final", "Fine."], "--final takes no --to: final thoughts are about the whole duel"),
    ],
)
def test_duel_ask_needs_a_seat_or_final_but_not_both(args, said, capsys, tmp_path):
    with pytest.raises(SystemExit) as done:
        main([*args, "--debate-dir", str(tmp_path / "debates")])
    out, err = capsys.readouterr()
    assert (done.value.code, out, err) == (2, "", f"duel: INVALID_ARGUMENT: {said}\n")
    assert not (tmp_path / "debates").exists()  # refused before anything is read or made


# -- `duel watch`: the audience's events, and the `a` key on a terminal ---------------------------


def test_watch_names_who_asked_which_seat_with_the_question_and_the_final_thoughts(service, source):
    alice, _bob = opened(service, source)
    follower = Follower(service, alice.duel_id)
    follower.poll()
    service.ask(alice.duel_id, to_seat=1, question=WHY, by="Dana")
    seen = follower.poll()
    assert seen is not None and [line.text for line in follower.lines(seen)] == [
        f"Dana asked seat 1 Q1 (due at turn 3): {WHY}"
    ]
    close_at_turn_3(service, alice)
    follower.poll()
    service.add_final_thoughts(alice.duel_id, by="Dana", text=THOUGHTS)
    seen = follower.poll()
    assert seen is not None and [line.text for line in follower.lines(seen)] == [
        "Dana added final thoughts (shown in the report; they change no outcome)"
    ]


class Terminal:
    """A pseudo-terminal a `duel watch` process runs on, as its controlling terminal: what it wrote, as text."""

    def __init__(self, *args: str, env: dict[str, str]):
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
        self.screen = ""
        slave = self.slave

        def own_terminal() -> None:  # a session of its own, the pty its terminal: Ctrl-C reaches it as typed
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rp1_duel", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            preexec_fn=own_terminal,  # noqa: PLW1509  the child runs no thread before exec
        )

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def until(self, pattern: str, timeout: float = 30.0) -> str:
        """The screen so far, as text, once ``pattern`` is on it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", self.screen)
            if re.search(pattern, plain):
                return plain
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                self.screen += os.read(self.master, 65536).decode("utf-8", "replace")
        raise AssertionError(f"{pattern!r} never showed: {self.screen[-2000:]!r}")

    def close(self) -> None:
        stop(self.proc)
        os.close(self.master)
        os.close(self.slave)


@pytest.mark.slow
def test_the_a_key_of_duel_watch_asks_a_seat_and_shows_the_answer_and_a_refusal(live, source, debate_dir):
    alice, _bob = opened(live, source)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUEL_")}
    env.update(LOGNAME="dana", USER="dana", TERM="xterm-256color", TZ="UTC", COLUMNS="200", LINES="40")
    terminal = Terminal("watch", "--debate-dir", str(debate_dir), env=env)
    before = termios.tcgetattr(terminal.slave)
    try:
        first = terminal.until(r"press a to ask a seat a question")
        assert first.strip().splitlines()[0].endswith("press a to ask a seat a question (Ctrl-C stops watching)")
        terminal.until(r"turn 2 by Bob")
        terminal.type("a")
        terminal.until(r"ask seat \(1 Alice, 2 Bob\): $")
        terminal.type("1\n")
        terminal.until(r"question: $")
        terminal.type(f"{WHY}\n")
        terminal.until(r"your question is Q1, asked after round 1: seat 1 answers it in turn 3")
        terminal.until(re.escape(f"dana asked seat 1 Q1 (due at turn 3): {WHY}"))
        live.ask(alice.duel_id, to_seat=2, question=WHO, by="Erin")
        terminal.until(re.escape(f"Erin asked seat 2 Q2 (due at turn 4): {WHO}"))
        terminal.type("a")
        terminal.until(r"ask seat \(1 Alice, 2 Bob\): $")
        terminal.type("2\nAnd a third question?\n")
        terminal.until(
            r"your question was refused: QUESTIONS_FULL: round 1 has its 2 questions already; ask after the next round"
        )
        terminal.type("a")
        terminal.until(r"ask seat \(1 Alice, 2 Bob\): $")
        terminal.type("two\nWhy?\n")
        terminal.until(r"your question was refused: INVALID_ARGUMENT: the seat is a number, not 'two'")
        assert termios.tcgetattr(terminal.slave)[3] & termios.ICANON == 0  # watching again, a key at a time
        terminal.type("\x03")  # Ctrl-C, as typed: the terminal sends SIGINT
        assert terminal.proc.wait(timeout=10) == 130
        assert termios.tcgetattr(terminal.slave) == before  # the terminal is as the watch found it
    finally:
        terminal.close()
    front = RecordFile.read(artifact_of(live, alice)).front
    assert front is not None and [(q.id, q.by, q.to_seat, q.text) for q in front.questions] == [
        (1, "dana", 1, WHY),
        (2, "Erin", 2, WHO),
    ]


# -- the report ---------------------------------------------------------------------------------


@pytest.fixture
def asked_and_closed(service: DuelService, source: Path) -> Path:
    """Q1 to Alice, answered in turn 3; Q2 to Bob, due at turn 4, which never came: the duel ended at turn 3;
    then Dana's final thoughts."""
    alice, _bob = opened(service, source)
    service.ask(alice.duel_id, to_seat=1, question=WHY, by="Dana")
    service.ask(alice.duel_id, to_seat=2, question=WHO, by="Erin")
    close_at_turn_3(service, alice)
    service.add_final_thoughts(alice.duel_id, by="Dana", text=THOUGHTS)
    return artifact_of(service, alice)


def test_the_report_json_pairs_each_question_with_its_answer_and_keeps_the_final_thoughts(asked_and_closed):
    front = RecordFile.read(asked_and_closed).front
    assert front is not None
    asked_at = [q.asked_at for q in front.questions]
    audience = read_report(str(asked_and_closed), env={}).to_dict()["audience"]
    assert audience == {
        "questions": [
            {
                "id": 1,
                "round": 1,
                "by": "Dana",
                "to_seat": 1,
                "due_turn": 3,
                "text": WHY,
                "asked_at": asked_at[0],
                "answer": ANSWER,
                "status": "answered",
            },
            {
                "id": 2,
                "round": 1,
                "by": "Erin",
                "to_seat": 2,
                "due_turn": 4,
                "text": WHO,
                "asked_at": asked_at[1],
                "answer": None,
                "status": "ended_first",
            },
        ],
        "final_thoughts": [{"by": "Dana", "text": THOUGHTS, "at": front.final_thoughts[0].at}],
    }


def test_a_report_without_an_audience_has_no_audience_key_or_section(service, source):
    alice, _bob = opened(service, source)
    report = read_report(str(artifact_of(service, alice)), env={})
    assert report.audience is None and "audience" not in report.to_dict()
    assert "The audience" not in render_markdown(report) and "The audience" not in render_html(report)


def test_the_markdown_report_shows_each_question_its_answer_or_why_none_and_the_final_thoughts(asked_and_closed):
    text = render_markdown(read_report(str(asked_and_closed), env={}))
    section = text[text.index("### The audience") :]
    turn_3 = re.search(r"\[3\]\([^)]*#turn-3[^)]*\)", section)
    assert turn_3 is not None
    assert section.startswith(
        "### The audience\n\n"
        f"- **Q1**, asked by Dana after round 1, to Alice (seat 1), due at turn {turn_3.group()}: {WHY}  \n"
        f"  Alice answered: {ANSWER}\n"
        f"- **Q2**, asked by Erin after round 1, to Bob (seat 2), due at turn 4: {WHO}  \n"
        "  _not answered: the duel ended first_\n\n"
        "**Final thoughts (the audience's; they change no outcome)**:\n\n"
        f"- Dana: {THOUGHTS}\n"
    )


class Text(HTMLParser):
    """An HTML page's text, its tags' whitespace aside."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def page_text(html_text: str) -> str:
    parser = Text()
    parser.feed(html_text)
    parser.close()
    return "".join(parser.parts)


def test_the_html_report_shows_each_question_its_answer_or_why_none_and_the_final_thoughts(asked_and_closed):
    text = page_text(render_html(read_report(str(asked_and_closed), env={})))
    assert (
        "The audience"
        f"Q1. {WHY}asked by Dana after round 1, to Alice (seat 1), due at turn 3; Alice answered:{ANSWER}"
        f"Q2. {WHO}asked by Erin after round 1, to Bob (seat 2), due at turn 4.not answered: the duel ended first"
        f"Final thoughts (the audience's; they change no outcome)Dana: {THOUGHTS}"
    ) in text


def test_an_answer_is_shown_with_its_question_wherever_the_report_shows_it(asked_and_closed):
    record = RecordFile.read(asked_and_closed)
    assert record.front is not None and f"- Q1: {ANSWER}" in record.text  # the turn's body: the answer alone
    report = read_report(str(asked_and_closed), env={})
    md, page = render_markdown(report), page_text(render_html(report))
    assert md.count(ANSWER) == page.count(ANSWER) == 1  # only in the audience section, under its question
    assert md.index(WHY) < md.index(ANSWER) and page.index(WHY) < page.index(ANSWER)
    # The assessor reads every turn's body: the questions those answers answer are in the record it is given.
    prompt = assessment_prompt(record.front, record.parsed.blocks)
    assert (
        "Audience questions (a turn answers each under Audience Answers as `- Q<id>: …`):\n"
        f"- Q1, asked by Dana after round 1, to seat 1, due at turn 3: {WHY}\n"
        f"- Q2, asked by Erin after round 1, to seat 2, due at turn 4: {WHO}\n"
    ) in prompt
    assert prompt.index(WHO) < prompt.index(f"- Q1: {ANSWER}")


def test_a_due_turn_written_without_its_answer_or_not_yet_written_says_so(service, source):
    alice, _bob = opened(service, source)
    service.ask(alice.duel_id, to_seat=1, question=WHY, by="Dana")
    service.ask(alice.duel_id, to_seat=2, question=WHO, by="Erin")
    write(service, alice, make_turn(3, *ALICE) + f"**Audience Answers**\n- Q1: {ANSWER}\n")
    path = artifact_of(service, alice)
    # By hand, Q2 is moved to turn 3, which answers only Q1: no service writes such a record.
    q2 = f'text: "{WHO}"\n      due_turn: '
    path.write_text(path.read_text(encoding="utf-8").replace(q2 + "4", q2 + "3"), encoding="utf-8")
    moved = read_report(str(path), env={})
    assert moved.audience is not None and [(q.status, q.answer) for q in moved.audience.questions] == [
        ("answered", ANSWER),
        ("not_in_turn", None),
    ]
    assert "_not answered: turn 3 does not answer it_" in render_markdown(moved)
    path.write_text(path.read_text(encoding="utf-8").replace(q2 + "3", q2 + "5"), encoding="utf-8")
    waiting = read_report(str(path), env={})
    assert waiting.audience is not None and waiting.audience.questions[1].status == "due"
    assert "not answered yet: turn 5 is still to be written" in page_text(render_html(waiting))
