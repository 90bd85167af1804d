"""Text from a peer, a page or a hand-edited record never reaches a terminal raw (issue 25 item 4): a turn
holding a control character is refused, and every command shows such characters instead of sending them."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from rp1_duel.printable import printable
from rp1_duel.review.watch import PlainDisplay
from rp1_duel.review.watch_model import EventLine
from rp1_duel.turns.rules import validate_turn

from helpers import TURN_1, context

TITLE_CHANGE = "\x1b]0;pwned\x07"  # ESC … BEL: sets the terminal's title
CSI_C1 = "\x9b2J"  # C1 CSI: clears the screen on terminals that take 8-bit controls
REPORTS = Path(__file__).parent / "data" / "reports" / "debates"


def test_control_characters_are_shown_as_escapes_and_layout_is_kept():
    assert printable(f"a{TITLE_CHANGE}b\tc\nd{CSI_C1}\r") == "a\\u001b]0;pwned\\u0007b\tc\nd\\u009b2J\\u000d"


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
    PlainDisplay(out).event(EventLine(3, "2026-11-25T00:00:00.000Z", "turn_appended", f"turn 1 by Eve{TITLE_CHANGE}"))
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
