"""A new user's rough edges (issue 28, item 6): what a first run must not get wrong."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
import typer

from rp1_duel.cli import main
from rp1_duel.cli.app import app
from rp1_duel.configuration import project_folder
from rp1_duel.coordination import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.participant.console import ConsoleReporter
from rp1_duel.participant.personas import played
from rp1_duel.participant.providers import Progress
from rp1_duel.review.listing import ListedDuel, list_duels
from rp1_duel.review.watch_model import view_of
from rp1_duel.settings import DuelSettings

from helpers import Player, duel_citing, make_turn


def run_duel(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``duel ARGS`` in this process: its exit code, stdout and stderr."""
    with pytest.raises(SystemExit) as done:
        main(args)
    out, err = capsys.readouterr()
    code = done.value.code
    return code if isinstance(code, int) else 0, out, err


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "DUEL_DIR", "DUEL_STORE"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("text", ["", "  \n\n\t\n"])
def test_a_join_refuses_an_empty_or_blank_target(service: DuelService, tmp_path: Path, text: str) -> None:
    target = tmp_path / "empty.md"
    target.write_text(text, encoding="utf-8")
    with pytest.raises(DuelError) as refused:
        service.join(target=str(target), participant_name="Alice")
    assert refused.value.code == "TARGET_EMPTY"
    assert not service.debate.root.exists() or not any(service.debate.root.iterdir())


@pytest.mark.usefixtures("no_keys")
def test_duel_join_checks_the_file_before_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.md").write_text("\n", encoding="utf-8")
    code, _, err = run_duel(["join", "--target", "empty.md", "--model", "claude-x"], capsys)
    assert (code, err.split(":")[1].strip()) == (1, "TARGET_EMPTY")


@pytest.mark.usefixtures("no_keys")
def test_duel_join_checks_the_flag_ranges_before_the_model(source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_duel(["join", "--target", str(source), "--model", "claude-x", "--max-turns", "1"], capsys)
    assert code == 2
    assert "INVALID_ARGUMENT: --max-turns must be between" in err


def test_duel_alone_prints_its_help_and_no_empty_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_duel([], capsys)
    assert code == 2
    assert "Usage: duel" in out + err
    assert "duel: " not in err


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["join"], "duel: INVALID_ARGUMENT: Missing option '--target' (see duel join --help)\n"),
        (
            ["join", "--target"],
            "duel: INVALID_ARGUMENT: Option '--target' requires an argument (see duel join --help)\n",
        ),
        (["list", "--zzz"], "duel: INVALID_ARGUMENT: No such option: --zzz (see duel list --help)\n"),
        (["frob"], "duel: INVALID_ARGUMENT: No such command 'frob' (see duel --help)\n"),
        (
            ["report", "--format", "x", "a.md"],
            "duel: INVALID_ARGUMENT: --format must be one of md, github, html, json, not 'x'\n",
        ),
        (["validate", "/nonexistent/a.md"], "duel: INVALID_ARGUMENT: no such file or folder: /nonexistent/a.md\n"),
    ],
)
def test_a_usage_error_has_the_one_error_style_and_names_its_commands_help(
    args: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_duel(args, capsys)
    assert (code, err) == (2, expected)


def test_duel_list_of_a_debate_dir_that_does_not_exist_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_duel(["list", "--debate-dir", str(tmp_path / "nonexistent"), "--json"], capsys)
    assert code == 1
    assert err.startswith(f"duel: DEBATE_DIR_INVALID: no debate dir {tmp_path / 'nonexistent'}")
    assert '"success": false' in out
    (tmp_path / "empty").mkdir()
    assert run_duel(["list", "--debate-dir", str(tmp_path / "empty")], capsys)[0] == 0  # a folder with no duel yet


@pytest.mark.usefixtures("no_keys")
def test_a_debate_dir_whose_parent_does_not_exist_is_refused_not_created(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38, item 7: a mistyped --debate-dir made its whole tree, and the peer waited alone for 15 minutes."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "alice"
    script.mkdir()
    (script / "1.md").write_text(make_turn(1, "Alice", "duel", "scripted:alice"), encoding="utf-8")
    typo = tmp_path / "shraed" / "debates"
    code, _, err = run_duel(
        ["join", "--target", str(source), "--debate-dir", str(typo), "--model", f"scripted:{script}"], capsys
    )
    assert code == 1
    assert err.splitlines()[-1] == (
        f"duel: DEBATE_DIR_INVALID: no folder {typo.parent} to make the debate dir {typo.name} in: "
        "check the path for a typo, or create the folder first"
    )
    assert not typo.parent.exists()
    joined = DuelService(tmp_path / "debates").join(target=str(source), participant_name="Alice")  # as the README's
    assert joined.seat.number == 1 and (tmp_path / "debates" / ".duel").is_dir()  # first join: the folder is made


def test_nobody_is_present_in_a_closed_duel(service: DuelService, pair: tuple[Player, Player]) -> None:
    assert all(p.present for row in list_duels(service) if isinstance(row, ListedDuel) for p in row.participants)
    service.abandon(pair[0].duel_id, reason="done with it")
    (row,) = list_duels(service)
    assert isinstance(row, ListedDuel)
    assert [p.present for p in row.participants] == [False, False]
    assert [seat.present for seat in view_of(service.status(pair[0].duel_id), service.clock().wall).seats] == [
        False,
        False,
    ]


def test_duel_validate_strict_fails_turns_whose_source_was_not_checked(
    service: DuelService, source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    written = duel_citing(service, source, {})
    artifact = tmp_path / "clone" / "debates" / written.name  # a checkout with the artifact and no source
    artifact.parent.mkdir(parents=True)
    artifact.write_bytes(written.read_bytes())
    code, out, _ = run_duel(["validate", str(artifact)], capsys)
    assert code == 0
    assert ": valid (1 turn, open)" in out  # one turn, not "1 turns"
    code, out, _ = run_duel(["validate", "--strict", str(artifact)], capsys)
    assert code == 1
    assert "SOURCE_NOT_CHECKED no citation of the source was checked" in out
    (tmp_path / "nothing").mkdir()
    assert run_duel(["validate", str(tmp_path / "nothing")], capsys)[0] == 0
    code, _, err = run_duel(["validate", "--strict", str(tmp_path / "nothing")], capsys)
    assert (code, err) == (1, "no duel artifacts found (--strict fails)\n")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_live_line_is_ended_before_what_follows_it() -> None:
    stream = Terminal()
    console = ConsoleReporter("Ada", stream)
    console.composing()
    console.progress(Progress(output_tokens=42))
    console.end_live_line()
    stream.write("[Ada] interrupted\n")
    assert stream.getvalue().endswith("[Ada] writing… ~42 tokens, 0 s\n[Ada] interrupted\n")
    console.end_live_line()  # nothing drawn since: nothing to end
    assert stream.getvalue().endswith("tokens, 0 s\n[Ada] interrupted\n")


def test_a_persona_is_named_and_a_near_miss_suggested() -> None:
    assert played(None, {}) is None
    assert played(" Skeptic ", {}) == "persona: skeptic"
    assert played("skeptik", {}) == (
        "persona: as written, 'skeptik' (did you mean --persona skeptic? `duel config show` lists the named ones)"
    )
    assert played("a tired release manager", {}) == "persona: as written, 'a tired release manager'"


def test_duel_watch_ends_with_the_report_line(
    service: DuelService, pair: tuple[Player, Player], debate_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    duel_id = pair[0].duel_id
    service.abandon(duel_id, reason="over")
    code, out, err = run_duel(["watch", "--debate-dir", str(debate_dir), "--duel-id", duel_id], capsys)
    assert code == 0
    assert "outcome: INVALIDATED after 0 of 6 turns" in out
    assert err == f"review: duel report {debate_dir / duel_id}.md --format html -o report.html\n"


def test_joining_an_existing_duel_says_which_of_its_settings_differ(service: DuelService, source: Path) -> None:
    first = service.join(target=str(source), participant_name="Alice", settings=DuelSettings(max_turns=4))
    assert first.settings_note is None  # it created the duel: its settings are the ones asked for
    second = service.join(
        target=str(source), participant_name="Bob", settings=DuelSettings(max_turns=8, lease_seconds=30)
    )
    assert second.settings_note == "the duel's own settings apply: max_turns 4 (not 8), lease_seconds 600 (not 30)"
    assert second.to_dict()["settings_note"] == second.settings_note
    again = service.join(target=str(source), participant_name="Bob", participant_token=second.seat.token)
    assert again.settings_note is None  # the defaults, and max_turns not given: nothing differs
    assert "settings_note" not in first.to_dict()


@pytest.mark.parametrize("command", [[], ["join"], ["report"], ["verify"], ["config", "show"], ["abandon"]])
def test_help_shows_no_type_label_on_a_flag_or_a_repeated_option(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_duel([*command, "--help"], capsys)
    assert code == 0
    assert "--help" in out
    assert "<bool>" not in out
    assert not re.search(r"--[\w-]+\s+<list\[str\]>", out)  # a positional list keeps typer's label


def test_a_setting_that_is_on_or_off_is_said_in_words(service: DuelService, source: Path) -> None:
    service.join(target=str(source), participant_name="Alice", settings=DuelSettings(chair=True))
    second = service.join(target=str(source), participant_name="Bob", settings=DuelSettings(sealed_openings=True))
    assert second.settings_note == "the duel's own settings apply: chair on (not off), sealed_openings off (not on)"


def command_paths(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command of the tree under ``command`` (typer's click) that has a --help, as the words that call it."""
    found = [path] if command.add_help_option else []
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found += command_paths(sub, (*path, name))
    return found


def test_no_command_s_help_shows_a_type_label_on_a_flag(capsys: pytest.CaptureFixture[str]) -> None:
    paths = command_paths(typer.main.get_command(app))
    assert ("apply",) in paths and ("store", "init") in paths
    for path in paths:
        code, out, _ = run_duel([*path, "--help"], capsys)
        assert code == 0 and "--help" in out, path
        assert "<bool>" not in out, path


def test_skill_install_goes_where_the_configuration_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / "docs" / "design").mkdir(parents=True)
    monkeypatch.chdir(project / "docs" / "design")
    home = tmp_path / "home"
    code, out, _ = run_duel(["skill", "--harness", "claude-code", "--install", "--home", str(home)], capsys)
    assert code == 0, out
    assert (project / ".claude" / "skills" / "duel" / "SKILL.md").is_file()  # the work tree's top, not docs/design
    (project / "docs" / "duel.toml").write_text("", encoding="utf-8")
    assert project_folder(project / "docs" / "design", home_folder=home) == project / "docs"


# -- a second newcomer's pass (issue 38, item 7) ----------------------------------------------------


def test_a_document_holding_a_nul_byte_is_refused_at_join(service: DuelService, tmp_path: Path) -> None:
    target = tmp_path / "design.md"
    target.write_bytes(b"# Design\n\nLeases expire\x00 after ten minutes.\n")
    with pytest.raises(DuelError) as refused:
        service.join(target=str(target), participant_name="Alice", settings=DuelSettings())
    assert refused.value.code == "TARGET_UNREADABLE"
    assert refused.value.message.endswith("holds a NUL byte: not a text document")


def test_duel_demo_with_a_dir_it_cannot_use_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    in_the_way = tmp_path / "a-file"
    in_the_way.write_text("not a folder", encoding="utf-8")
    with pytest.raises(SystemExit) as ended:
        main(["demo", "--dir", str(in_the_way)])
    assert ended.value.code == 2
    assert capsys.readouterr().err == f"duel demo: INVALID_ARGUMENT: cannot use --dir {in_the_way}: File exists\n"


def test_the_document_given_where_a_record_belongs_gets_one_answer_from_every_command(source: Path) -> None:
    from rp1_duel.record import apply_agreed, validate_file
    from rp1_duel.review.report_files import read_report

    said = "not a duel artifact (no front matter, no turns): give the record from the debate dir"
    [problem] = validate_file(source).problems
    assert problem.code == "UNREADABLE" and problem.message.startswith(said)
    for command in (apply_agreed, read_report):
        with pytest.raises(DuelError) as refused:
            command(source)
        assert refused.value.code == "ARTIFACT_UNREADABLE", command
        assert refused.value.message.startswith(f"{source}: {said}")
