"""Text from a peer, a page or a hand-edited record never reaches a terminal raw (issue 25 item 4): a turn
holding a control character is refused, and every command shows such characters instead of sending them."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rp1_duel.printable import printable, printable_json
from rp1_duel.review.watch import PlainDisplay
from rp1_duel.review.watch_model import EventLine
from rp1_duel.turns import validate_turn

from helpers import TURN_1, context

TITLE_CHANGE = "\x1b]0;pwned\x07"  # ESC … BEL: sets the terminal's title
CSI_C1 = "\x9b2J"  # C1 CSI: clears the screen on terminals that take 8-bit controls
REPORTS = Path(__file__).parents[1] / "data" / "reports" / "debates"
# What a terminal obeys, and the lone surrogates a name's bytes that are not UTF-8 become (written back raw).
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
# A file name's part with a colour change, a title change and C1 CSI: as UTF-8 text, and as bytes that are not UTF-8.
HOSTILE = f"\x1b[31m{TITLE_CHANGE}\x9b"
HOSTILE_BYTES = os.fsdecode(b"\x1b[31m" + TITLE_CHANGE.encode() + b"\x9b")  # 0x9b alone: a lone surrogate


def test_control_characters_are_shown_as_escapes_and_layout_is_kept():
    assert printable(f"a{TITLE_CHANGE}b\tc\nd{CSI_C1}\r") == "a\\u001b]0;pwned\\u0007b\tc\nd\\u009b2J\\u000d"


@settings(deadline=None)
@given(st.text(st.characters(codec=None, max_codepoint=0xFFFF)) | st.text(st.characters(max_codepoint=0x7F)))
def test_every_character_a_terminal_obeys_is_shown_and_no_other(text):
    shown = RAW.sub(lambda found: f"\\u{ord(found.group()):04x}", text)

    assert printable(text) == shown


@pytest.mark.parametrize("control", [TITLE_CHANGE, CSI_C1, "\x7f", "\x08"])
def test_a_turn_holding_a_control_character_is_refused(control):
    text = TURN_1.replace("Fifteen-minute leases are too long", f"Fifteen-minute leases{control} are too long", 1)
    found = [(v.code, v.line) for v in validate_turn(text, context(1)).violations if v.code == "CONTROL_CHARACTER"]
    assert found == [("CONTROL_CHARACTER", 4)]  # the line after the heading


def test_a_tab_is_not_a_control_character_a_turn_is_refused_for():
    text = TURN_1.replace("Fifteen-minute leases are too long", "Fifteen-minute leases\tare too long", 1)
    assert "CONTROL_CHARACTER" not in {v.code for v in validate_turn(text, context(1)).violations}


def test_duel_watch_through_a_pipe_shows_a_peers_control_characters_instead_of_sending_them():
    out = io.StringIO()
    PlainDisplay(out).event(
        EventLine(seq=3, ts="2026-11-25T00:00:00.000Z", kind="turn_appended", text=f"turn 1 by Eve{TITLE_CHANGE}")
    )
    assert out.getvalue() == "2026-11-25T00:00:00.000Z turn 1 by Eve\\u001b]0;pwned\\u0007\n"


@pytest.mark.slow
def test_duel_report_of_a_hostile_record_writes_no_control_character_to_standard_output(tmp_path):
    forged = tmp_path / "forged.md"
    text = next(REPORTS.glob("*lease-duration.md")).read_text(encoding="utf-8")
    forged.write_text(text.replace("**Position**\n", f"**Position**\n{TITLE_CHANGE}{CSI_C1}", 1), encoding="utf-8")
    shown = subprocess.run(
        [sys.executable, "-m", "rp1_duel", "report", str(forged)], capture_output=True, text=True, check=False
    )
    assert shown.returncode == 0, shown.stderr
    assert "\\u001b]0;pwned\\u0007\\u009b2J" in shown.stdout
    assert not any(char in shown.stdout + shown.stderr for char in "\x1b\x07\x9b")


@pytest.mark.slow
def test_an_error_that_quotes_outside_text_is_printed_escaped(tmp_path):
    missing = tmp_path / f"no{TITLE_CHANGE}such.md"
    shown = subprocess.run(
        [sys.executable, "-m", "rp1_duel", "validate", str(missing)], capture_output=True, text=True, check=False
    )
    assert shown.returncode != 0
    assert not any(char in shown.stdout + shown.stderr for char in "\x1b\x07"), shown.stderr


def test_a_name_s_bytes_that_are_not_utf8_are_shown_as_escapes():
    assert printable(f"a{HOSTILE_BYTES}.md") == "a\\u001b[31m\\u001b]0;pwned\\u0007\\udc9b.md"


def test_json_text_shows_every_control_character_and_decodes_to_the_same_value():
    value = {"path": f"a{HOSTILE}{HOSTILE_BYTES}é\t.md"}
    text = printable_json(value)
    assert not RAW.search(text)
    assert "é" in text  # non-ASCII text stays readable
    assert json.loads(text) == value


def run_duel(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """``duel ARGS`` in ``cwd``, its output as bytes (a raw 0x9b is not UTF-8)."""
    return subprocess.run([sys.executable, "-m", "rp1_duel", *args], capture_output=True, cwd=cwd, check=False)


def raw_controls(shown: subprocess.CompletedProcess[bytes]) -> list[str]:
    """Every character of the command's output a terminal would obey (bytes that are not UTF-8 included)."""
    return RAW.findall(os.fsdecode(shown.stdout) + os.fsdecode(shown.stderr))


def hostile_copy(folder: Path, part: str) -> Path:
    """A real closed duel's artifact copied into ``folder`` under a name holding ``part``."""
    folder.mkdir(exist_ok=True)
    artifact = folder / f"2026-11-24-l{part}-duration.md"
    shutil.copyfile(next(REPORTS.glob("*lease-duration.md")), artifact)
    return artifact


@pytest.mark.slow
@pytest.mark.parametrize(
    "command", [["validate"], ["validate", "--json"], ["stats"], ["stats", "--json"], ["verify", "--no-models"]]
)
def test_a_folder_scan_shows_a_file_name_s_control_bytes_instead_of_sending_them(tmp_path, command):
    hostile_copy(tmp_path / "debates", HOSTILE_BYTES)
    (tmp_path / "debates" / f"broken{HOSTILE_BYTES}.md").write_text("---\nduel_id: x\n---\n", encoding="utf-8")
    shown = run_duel(*command, "debates", cwd=tmp_path)
    assert b"Traceback" not in shown.stderr, shown.stderr
    assert b"\\udc9b" in shown.stdout + shown.stderr  # the name is there, shown
    assert raw_controls(shown) == []


@pytest.mark.slow
def test_duel_validate_json_names_a_hostile_file_as_it_is(tmp_path):
    artifact = hostile_copy(tmp_path / "debates", HOSTILE_BYTES)
    shown = run_duel("validate", "--json", "debates", cwd=tmp_path)
    assert raw_controls(shown) == []
    assert [entry["path"] for entry in json.loads(shown.stdout)["artifacts"]] == [f"debates/{artifact.name}"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        ["validate", "{artifact}"],
        ["validate", "--json", "{artifact}"],
        ["list", "--debate-dir", "{folder}"],
        ["config", "trust", "{folder}/duel.toml"],
        ["skill", "--harness", "codex", "--install", "--project", "{folder}"],
        ["skill", "--harness", "codex", "--mcp", "--project", "{folder}"],
        ["validate", f"no-such-{HOSTILE_BYTES}.md"],  # refused as not UTF-8, and named
    ],
)
def test_every_command_shows_a_named_path_s_control_characters_instead_of_sending_them(tmp_path, command):
    folder = tmp_path / f"d{HOSTILE}"
    artifact = hostile_copy(folder, HOSTILE)
    (folder / "duel.toml").write_text("", encoding="utf-8")
    args = [arg.format(artifact=artifact, folder=folder) for arg in command]
    shown = run_duel(*args, cwd=tmp_path)
    assert b"Traceback" not in shown.stderr, shown.stderr
    assert re.search(rb"\\u(009b|dc9b)", shown.stdout + shown.stderr)  # the name is there, shown
    assert raw_controls(shown) == []
