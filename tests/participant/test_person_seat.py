"""A person in a seat (`--model human`) and a script (`--model scripted:DIR`): what the editor shows, the draft
kept between runs, the editor ended with its participant, a person's repairs, a script's rejected turn."""

from __future__ import annotations

import contextlib
import io
import json
import os
import pty
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rp1_duel.coordination.service import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.participant.console import ConsoleReporter
from rp1_duel.participant.loop import Duelist, ParticipantConfig, ParticipantResult
from rp1_duel.participant.providers import ProviderError
from rp1_duel.participant.providers.human import HumanProvider
from rp1_duel.settings import DuelSettings
from rp1_duel.turns.rules import TurnViolation
from rp1_duel.vocabulary import ACTIVE

from helpers import Player, claim, join, make_turn, replace_edit, with_edits

HANA = ("Hana", "duel", "human")


def person_editor(tmp_path: Path, *answers: dict[str, Any]) -> str:
    """An $EDITOR that keeps what it was shown (seen-1.md, seen-2.md…) and its pid (editor.pid), then does its
    k-th answer (the last one again past the end): ``write`` a text, ``hang`` (sleep), ``exit`` with a status."""
    folder = tmp_path / "editor"
    folder.mkdir(exist_ok=True)
    (folder / "answers.json").write_text(json.dumps(answers))
    script = folder / "editor.py"
    script.write_text(
        textwrap.dedent(
            """\
            import json, os, pathlib, sys, time
            path = pathlib.Path(sys.argv[1])
            here = pathlib.Path(__file__).parent
            n = len(list(here.glob("seen-*.md"))) + 1
            (here / f"seen-{n}.md").write_text(path.read_text())
            answers = json.loads((here / "answers.json").read_text())
            answer = answers[min(n, len(answers)) - 1]
            if answer.get("write") is not None:
                path.write_text(answer["write"])
            (here / "editor.pid").write_text(str(os.getpid()))
            if answer.get("hang"):
                time.sleep(120)
            sys.exit(answer.get("exit", 0))
            """
        )
    )
    return f"{sys.executable} {script}"


def seen(tmp_path: Path, n: int) -> str:
    return (tmp_path / "editor" / f"seen-{n}.md").read_text()


def person(debate_dir: Path, source: Path, editor: str, settings: DuelSettings) -> Duelist:
    config = ParticipantConfig(target=str(source), debate_dir=str(debate_dir), name="Hana", settings=settings)
    provider = HumanProvider(editor=editor, stdin=io.StringIO(""), stderr=io.StringIO())
    return Duelist(config, provider, ConsoleReporter("Hana", io.StringIO()), service=DuelService(debate_dir))


class Running:
    """A participant's run in a thread of this process: what it returned, or raised."""

    def __init__(self, duelist: Duelist):
        self.duelist = duelist
        self.answer: list[ParticipantResult | BaseException] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.answer.append(self.duelist.run())
        except BaseException as exc:  # noqa: BLE001  handed to the test by result()
            self.answer.append(exc)

    def result(self) -> ParticipantResult:
        self.thread.join(60)
        [answer] = self.answer
        if isinstance(answer, BaseException):
            raise answer
        return answer


def seated(service: DuelService, source: Path, count: int) -> None:
    def enough() -> bool:
        with contextlib.suppress(DuelError):
            return service.status(target=str(source)).participant_count >= count
        return False

    wait_for(enough)


def play(service: DuelService, player: Player, text: str) -> None:
    service.append(player.seat, claim(service, player), text, release=True)


def drafts_of(debate_dir: Path) -> list[Path]:
    return sorted(debate_dir.glob(".duel/participants/*.drafts/*"))


@pytest.fixture
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temp folder, empty and this test's own: what is left in it is seen."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


# -- the editor's notes ---------------------------------------------------------------------------------


def test_the_notes_hold_the_turns_since_the_person_s_last_the_edits_in_force_and_the_warnings(
    tmp_path: Path, source: Path, debate_dir: Path
) -> None:
    settings = DuelSettings(seats=3, max_turns=3)
    service = DuelService(debate_dir)
    bea = join(service, source, "Bea", settings=settings, harness="duel", model_id="m")
    cy = join(service, source, "Cy", settings=settings, harness="duel", model_id="m")
    turn_3 = make_turn(3, *HANA)
    running = Running(person(debate_dir, source, person_editor(tmp_path, {"write": turn_3}), settings))
    seated(service, source, 3)
    play(service, bea, make_turn(1, "Bea", "duel", "m"))
    edit = replace_edit("shorter", "Leases expire after fifteen minutes unless refreshed.", "Leases expire in 5 min.")
    play(service, cy, with_edits(make_turn(2, "Cy", "duel", "m"), edit))
    source.write_text(source.read_text() + "\nA line added on disk.\n")  # a warning, printed before the editor opens

    running.result()

    notes = [line for line in seen(tmp_path, 1).splitlines() if line.startswith("%%")]
    shown = "\n".join(notes)
    assert "%% ## Turn 1 — Bea (duel / m) — OPEN_TO_DEBATE" in notes  # an earlier turn: its heading
    assert (
        "%% On fifteen-minute leases (turn 1): short leases bound how long a crashed holder blocks its peer." in notes
    )
    assert "Argument 1:" not in shown  # and no more of it
    assert "%% ## Turn 2 — Cy (duel / m) — OPEN_TO_DEBATE" in notes  # the latest: in full
    assert "%% Argument 2: refreshing while working matters because reviewers read turn 2 later." in notes
    assert "%% -Leases expire after fifteen minutes unless refreshed." in notes  # the diff of the edits in force
    assert "%% +Leases expire in 5 min." in notes
    assert any("design.md changed on disk since the duel began" in line for line in notes)


# -- the draft, kept and reopened -------------------------------------------------------------------------


def test_an_aborted_turn_s_draft_is_kept_owner_only_and_reopened_by_the_rerun(
    tmp_path: Path, source: Path, debate_dir: Path, own_tmp: Path
) -> None:
    settings = DuelSettings(max_turns=2)
    service = DuelService(debate_dir)
    bea = join(service, source, "Bea", settings=settings, harness="duel", model_id="m")
    half = "## Turn 2 — Hana (duel / human) — STANCE\n**Position**\nHalf a thought, to finish later.\n"
    editor = person_editor(tmp_path, {"write": half, "exit": 1}, {"write": make_turn(2, *HANA, "ACCEPTING_CONSENSUS")})
    first = Running(person(debate_dir, source, editor, settings))
    seated(service, source, 2)
    play(service, bea, make_turn(1, "Bea", "duel", "m", "ACCEPTING_CONSENSUS"))
    with pytest.raises(ProviderError) as aborted:
        first.result()
    first.duelist.interrupt()  # as `duel join` does on an error: the floor back, the seat kept
    assert aborted.value.code == "HUMAN_ABORTED"
    [kept] = drafts_of(debate_dir)
    assert str(kept) in aborted.value.message
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert list(own_tmp.iterdir()) == []  # no duel-turn-*.md left behind

    result = person(debate_dir, source, editor, settings).run()

    assert seen(tmp_path, 2).endswith(half)  # the draft, not a blank skeleton
    assert result.turns_written == [2]
    assert drafts_of(debate_dir) == [] and list(own_tmp.iterdir()) == []


# -- a person's repairs, a model's last one -------------------------------------------------------------------


def test_a_person_may_repair_past_three_drafts_until_the_deadline(
    tmp_path: Path, source: Path, debate_dir: Path
) -> None:
    settings = DuelSettings(max_turns=2)
    service = DuelService(debate_dir)
    bea = join(service, source, "Bea", settings=settings, harness="duel", model_id="m")
    broken = {"write": "## Turn 2 — Hana (duel / human) — ACCEPTING_CONSENSUS\n**Position**\nNot yet.\n"}
    editor = person_editor(tmp_path, *[broken] * 5, {"write": make_turn(2, *HANA, "ACCEPTING_CONSENSUS")})
    running = Running(person(debate_dir, source, editor, settings))
    seated(service, source, 2)
    play(service, bea, make_turn(1, "Bea", "duel", "m", "ACCEPTING_CONSENSUS"))

    result = running.result()

    assert result.turns_written == [2] and result.outcome == "ACCEPTED_CONSENSUS"
    assert "%% The turn is due by" in seen(tmp_path, 6)  # a person is told the deadline, not a count of tries


def test_a_model_s_last_repair_is_announced() -> None:
    stream = io.StringIO()
    violations = [TurnViolation(code="HEADING", message="the turn must begin with its heading", line=1)]
    reporter = ConsoleReporter("Claude", stream)
    reporter.turn_rejected(3, violations, 1, None, repairs_left=2)
    reporter.turn_rejected(3, violations, 3, None, repairs_left=1)
    reporter.turn_rejected(3, violations, 4, None, repairs_left=0)
    reporter.turn_rejected(3, violations, 9, None, repairs_left=None)
    lines = [line for line in stream.getvalue().splitlines() if "rejected" in line]
    assert lines == [
        "[Claude] turn 3 draft 1 rejected: HEADING; asking for a repair",
        (
            "[Claude] turn 3 draft 3 rejected: HEADING; asking for the last repair "
            "(last try: one more rejection ends the duel INVALIDATED)"
        ),
        "[Claude] turn 3 draft 4 rejected: HEADING; no repairs left",
        "[Claude] turn 3 draft 9 rejected: HEADING; reopening it to fix, until the turn deadline",
    ]


# -- the editor ends with its participant: real processes --------------------------------------------------


def clean_env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "DUEL_")) and k not in ("EDITOR", "VISUAL")
    }
    return {**env, **extra}


def join_command(source: Path, debate_dir: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "rp1_duel", "join", "--target", str(source), "--debate-dir", str(debate_dir), *args]


def wait_for(found: Any, limit: float = 30) -> None:
    deadline = time.monotonic() + limit
    while not found():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError):  # a zombie is dead: its parent has not reaped it yet
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    return True


def drain(fd: int) -> None:
    with contextlib.suppress(OSError):
        while os.read(fd, 1024):
            pass


@pytest.fixture
def terminal() -> Iterator[int]:
    """A real terminal for standard input (so a person's editor is used), its output read and dropped."""
    main_fd, terminal_fd = pty.openpty()
    threading.Thread(target=drain, args=(main_fd,), daemon=True).start()
    yield terminal_fd
    os.close(terminal_fd)


def bea_opens(tmp_path: Path, source: Path, debate_dir: Path) -> tuple[DuelService, Player, str]:
    """Bea takes seat 1; Hana's editor, when it opens, writes half a turn and hangs."""
    service = DuelService(debate_dir)
    bea = join(service, source, "Bea", settings=DuelSettings(max_turns=4), harness="duel", model_id="m")
    half = "## Turn 2 — Hana (duel / human) — STANCE\n**Position**\nHalf a thought.\n"
    return service, bea, person_editor(tmp_path, {"write": half, "hang": True})


def the_floor_is_free_and_the_seat_kept(service: DuelService, source: Path) -> None:
    status = service.status(target=str(source))
    assert status.lock.owner_participant_id is None
    assert status.participant_count == 2 and status.duel.status == ACTIVE


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_ends_the_editor_releases_the_floor_and_keeps_the_draft(
    tmp_path: Path, source: Path, debate_dir: Path, terminal: int, stop: signal.Signals
) -> None:
    service, bea, editor = bea_opens(tmp_path, source, debate_dir)
    process = subprocess.Popen(
        join_command(source, debate_dir, "--model", "human", "--name", "Hana"),
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(EDITOR=editor),
    )
    seated(service, source, 2)
    play(service, bea, make_turn(1, "Bea", "duel", "m"))
    pid_file = tmp_path / "editor" / "editor.pid"
    wait_for(pid_file.exists)
    wait_for(lambda: drafts_of(debate_dir) and "Half a thought" in drafts_of(debate_dir)[0].read_text())
    process.send_signal(stop)
    _, err = process.communicate(timeout=20)

    assert process.returncode == 130, err
    assert "Traceback" not in err
    wait_for(lambda: not alive(int(pid_file.read_text())), limit=10)
    the_floor_is_free_and_the_seat_kept(service, source)
    [kept] = drafts_of(debate_dir)
    assert "Half a thought" in kept.read_text()


@pytest.mark.slow
def test_a_closed_output_pipe_ends_the_editor_and_releases_the_floor(
    tmp_path: Path, source: Path, debate_dir: Path, terminal: int
) -> None:
    service, bea, editor = bea_opens(tmp_path, source, debate_dir)
    process = subprocess.Popen(
        join_command(source, debate_dir, "--model", "human", "--name", "Hana"),
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(EDITOR=editor),
    )
    seated(service, source, 2)
    play(service, bea, make_turn(1, "Bea", "duel", "m"))
    pid_file = tmp_path / "editor" / "editor.pid"
    wait_for(pid_file.exists)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # `duel join … | head` after head has quit
    process.stderr.close()
    process.wait(timeout=20)

    wait_for(lambda: not alive(int(pid_file.read_text())), limit=10)
    the_floor_is_free_and_the_seat_kept(service, source)


@pytest.mark.slow
def test_duel_panel_stopped_during_a_person_s_turn_ends_the_editor_and_exits(
    tmp_path: Path, source: Path, debate_dir: Path, terminal: int
) -> None:
    bea = tmp_path / "bea"
    bea.mkdir()
    (bea / "1.md").write_text(make_turn(1, "Bea", "duel", "scripted:bea"))
    (tmp_path / "lineup.toml").write_text(
        f'[panel.seats.1]\nname = "Bea"\nmodel = "scripted:{bea}"\n[panel.seats.2]\nname = "Hana"\nmodel = "human"\n'
    )
    editor = person_editor(tmp_path, {"write": None, "hang": True})
    argv = [
        sys.executable,
        "-m",
        "rp1_duel",
        "panel",
        "--target",
        str(source),
        "--lineup",
        str(tmp_path / "lineup.toml"),
    ]
    process = subprocess.Popen(
        [*argv, "--debate-dir", str(debate_dir)],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(EDITOR=editor),
    )
    pid_file = tmp_path / "editor" / "editor.pid"
    wait_for(pid_file.exists, limit=60)
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)

    assert time.monotonic() - started < 20, err  # not when the editor gives up on its own
    assert process.returncode == 130, err
    assert not alive(int(pid_file.read_text()))
    the_floor_is_free_and_the_seat_kept(DuelService(debate_dir), source)


# -- a script's rejected turn stops its seat ------------------------------------------------------------------


@pytest.mark.slow
def test_a_script_s_rejected_turn_stops_its_seat_and_names_the_file_to_fix(
    tmp_path: Path, source: Path, debate_dir: Path
) -> None:
    service = DuelService(debate_dir)
    bea = join(service, source, "Bea", settings=DuelSettings(max_turns=4), harness="duel", model_id="m")
    script = tmp_path / "cy"
    script.mkdir()
    broken = script / "01-opening.md"
    broken.write_text("## Turn 2 — Cy (duel / scripted:cy) — OPEN_TO_DEBATE\n**Position**\nToo short.\n")

    process = subprocess.Popen(
        join_command(source, debate_dir, "--model", f"scripted:{script}", "--name", "Cy"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    seated(service, source, 2)
    play(service, bea, make_turn(1, "Bea", "duel", "m"))
    _, err = process.communicate(timeout=60)

    assert process.returncode == 3, err  # TURN_INVALID's exit code, as `duel tools append` gives it
    assert "asking for a repair" not in err and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("duel: TURN_INVALID: ") and str(broken) in last and "SECTION_MISSING" in last
    assert last.endswith("fix the file; your seat is kept: run the same command to resume")
    the_floor_is_free_and_the_seat_kept(service, source)
