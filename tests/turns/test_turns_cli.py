"""Appending turns and closing through `duel tools` processes (sections 6 to 8), and `duel validate`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rp1_duel.coordination import DuelService

from helpers import make_turn, run_tools

pytestmark = pytest.mark.slow  # every test drives `duel tools` and `duel validate` processes

ALICE = ("Alice", "claude-code", "claude-x")
BOB = ("Bob", "codex", "gpt-x")


class CliDuel:
    """Two participants driving one duel through real `duel tools` processes."""

    def __init__(self, source: Path, debate_dir: Path, max_turns: int = 6):
        self.debate_dir = debate_dir
        self.seats = {}
        for seat, (name, harness, model) in ((1, ALICE), (2, BOB)):
            self.seats[seat] = run_tools(
                "join",
                "--target",
                str(source),
                "--participant-name",
                name,
                "--harness",
                harness,
                "--model-id",
                model,
                "--max-turns",
                str(max_turns),
                debate_dir=debate_dir,
            ).data
        self.duel_id = self.seats[1]["duel_id"]
        self.path = Path(self.seats[1]["debate_path"])
        self.stances: dict[int, str] = {}
        self.lease: dict[int, str] = {}

    def auth(self, seat: int) -> tuple[str, ...]:
        me = self.seats[seat]
        return (
            "--duel-id",
            self.duel_id,
            "--participant-id",
            me["participant_id"],
            "--participant-token",
            me["participant_token"],
        )

    def claim(self, seat: int) -> dict:
        data = run_tools("claim-lock", *self.auth(seat), debate_dir=self.debate_dir).data
        assert data["acquired"], data
        self.lease[seat] = data["lease_token"]
        return data

    def append(self, seat: int, text: str, *, release: bool = True):
        extra = ("--release",) if release else ()
        return run_tools(
            "append",
            *self.auth(seat),
            "--lease-token",
            self.lease[seat],
            "--turn-file",
            "-",
            *extra,
            debate_dir=self.debate_dir,
            stdin=text.encode(),
        )

    def turn(self, n: int, stance: str = "OPEN_TO_DEBATE", *, blocking: bool = False):
        seat = 1 if n % 2 else 2
        self.claim(seat)
        name, harness, model = ALICE if seat == 1 else BOB
        result = self.append(seat, make_turn(n, name, harness, model, stance, blocking=blocking))
        assert result.code == 0, result.envelope
        return result.data

    def close(self, seat: int, outcome: str, *extra: str):
        return run_tools(
            "release-lock",
            *self.auth(seat),
            "--lease-token",
            self.lease[seat],
            "--close",
            "--outcome",
            outcome,
            *extra,
            debate_dir=self.debate_dir,
        )


def validate(*paths: Path) -> tuple[int, dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "rp1_duel", "validate", "--json", *map(str, paths)], capture_output=True, text=True
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.parametrize(
    ("stances", "blocking_last", "outcome"),
    [
        (
            [
                "OPEN_TO_DEBATE",
                "OPEN_TO_DEBATE",
                "CONVERGING",
                "CONVERGING",
                "ACCEPTING_CONSENSUS",
                "ACCEPTING_CONSENSUS",
            ],
            False,
            "ACCEPTED_CONSENSUS",
        ),
        (
            ["OPEN_TO_DEBATE", "OPEN_TO_DEBATE", "OPEN_TO_DEBATE", "OPEN_TO_DEBATE", "DISSENTING", "DISSENTING"],
            False,
            "DISSENT",
        ),
        (["OPEN_TO_DEBATE"] * 6, True, "DISSENT"),
        (
            ["OPEN_TO_DEBATE", "OPEN_TO_DEBATE", "CONVERGING", "OPEN_TO_DEBATE", "CONVERGING", "REVISING"],
            False,
            "MAX_TURNS",
        ),
    ],
    ids=["consensus", "dissent-by-stance", "dissent-by-blocking-at-max", "max-turns"],
)
def test_six_turn_duel_reaches_its_outcome(source, debate_dir, stances, blocking_last, outcome):
    duel = CliDuel(source, debate_dir)
    for n, stance in enumerate(stances, start=1):
        data = duel.turn(n, stance, blocking=blocking_last and n == 6)
        assert data["turn_number"] == n
        assert data["stance"] == stance
        assert data["terminal_outcome"] == (outcome if n == 6 else None)
    assert data["next_step"] == "close"
    assert len(data["turn_sha256"]) == 64
    status = run_tools(
        "status", "--duel-id", duel.duel_id, "--participant-id", duel.seats[1]["participant_id"], debate_dir=debate_dir
    ).data
    assert status["next_step"] == "close"
    assert status["duel"]["pending_outcome"] == outcome
    # The outcome is reached: appends are refused, and only that outcome closes.
    refused = duel.append(2, make_turn(7, *BOB))
    assert refused.code == 1
    assert refused.error["code"] == "DUEL_CLOSED"
    wrong = "TIMEOUT" if outcome != "TIMEOUT" else "DISSENT"
    assert duel.close(2, wrong).error["code"] in ("OUTCOME_MISMATCH", "TIMEOUT_REJECTED")
    closed = duel.close(2, outcome)
    assert closed.data["closed"]
    assert closed.data["outcome"] == outcome
    text = duel.path.read_text()
    assert f"| Outcome | {outcome} |" in text
    assert text.count("<!-- duel:turn n=") == 6
    code, report = validate(duel.path)
    assert code == 0, report
    assert report["artifacts"][0]["implied_outcome"] == outcome


def test_candidate_convergence_is_reported_and_logged(source, debate_dir):
    duel = CliDuel(source, debate_dir)
    duel.turn(1, "OPEN_TO_DEBATE")
    assert duel.turn(2, "CONVERGING")["candidate_convergence"] is False
    assert duel.turn(3, "CONVERGING")["candidate_convergence"] is True
    events = (debate_dir / ".duel" / "duels" / duel.duel_id / "events.jsonl").read_text()
    assert '"type": "candidate_convergence"' in events


def test_rejected_turn_changes_nothing_and_lists_every_violation(source, debate_dir):
    duel = CliDuel(source, debate_dir)
    duel.claim(1)
    before = duel.path.read_bytes()
    bad = make_turn(1, *ALICE).replace("(non-blocking)", "").replace("## Turn 1 — Alice", "## Turn 2 — Mallory")
    result = duel.append(1, bad)
    assert result.code == 3
    assert result.error["code"] == "TURN_INVALID"
    codes = {v["code"] for v in result.error["details"]["violations"]}
    assert {"HEADING", "UNRESOLVED_TAG"} <= codes
    assert all("message" in v for v in result.error["details"]["violations"])
    assert duel.path.read_bytes() == before
    events = (debate_dir / ".duel" / "duels" / duel.duel_id / "events.jsonl").read_text()
    assert '"type": "turn_rejected"' in events
    # The lease survives a rejection: the fixed turn goes through.
    assert duel.append(1, make_turn(1, *ALICE)).code == 0


def test_turn_with_raw_html_is_refused_with_exit_3_and_nothing_is_written(source, debate_dir):
    duel = CliDuel(source, debate_dir)
    duel.claim(1)
    before = duel.path.read_bytes()
    hidden = make_turn(1, *ALICE).replace("**Agreements**\n", "**Agreements**\n<details>\n\n", 1)
    result = duel.append(1, hidden)
    assert result.code == 3
    assert result.error["code"] == "TURN_INVALID"
    [violation] = result.error["details"]["violations"]
    assert (violation["code"], violation["line"], violation["section"]) == ("RAW_HTML", 10, "Agreements")
    assert "`<details>`" in violation["message"]
    assert duel.path.read_bytes() == before
    # Written as code, the same words go through.
    shown = make_turn(1, *ALICE).replace("**Agreements**\n", "**Agreements**\n- `<details>` stays closed.\n", 1)
    assert duel.append(1, shown).code == 0
    assert "`<details>` stays closed." in duel.path.read_text()


def test_append_out_of_turn_or_without_lease_is_refused(source, debate_dir):
    duel = CliDuel(source, debate_dir)
    duel.claim(1)
    duel.lease[2] = duel.lease[1]
    assert duel.append(2, make_turn(1, *BOB)).error["code"] == "LEASE_NOT_HELD"
    assert duel.append(1, make_turn(1, *ALICE), release=False).code == 0
    # Still holding the lease, but turn 2 is Bob's.
    result = duel.append(1, make_turn(2, *ALICE))
    assert result.error["code"] == "NOT_YOUR_TURN"
    status = run_tools(
        "status", "--duel-id", duel.duel_id, "--participant-id", duel.seats[1]["participant_id"], debate_dir=debate_dir
    ).data
    assert status["next_step"] == "release_lock"


def test_edited_earlier_turn_is_tampering_and_only_invalidated_closes(source, debate_dir):
    duel = CliDuel(source, debate_dir)
    duel.turn(1)
    duel.turn(2)
    text = duel.path.read_text()
    duel.path.write_text(text.replace("On fifteen-minute leases", "On ten-minute leases", 1))
    duel.claim(1)
    result = duel.append(1, make_turn(3, *ALICE))
    assert result.error["code"] == "ARTIFACT_TAMPERED"
    assert "turn 1" in result.error["message"]
    assert duel.close(1, "MAX_TURNS").error["code"] == "ARTIFACT_TAMPERED"
    closed = duel.close(1, "INVALIDATED", "--reason", "someone edited turn 1")
    assert closed.data["outcome"] == "INVALIDATED"
    final = duel.path.read_text()
    assert "someone edited turn 1" in final
    assert "changed after it was accepted" in final
    assert "On ten-minute leases" in final  # kept as found, for the reviewer
    code, report = validate(duel.path)
    assert code == 1
    assert "HASH_MISMATCH" in {p["code"] for p in report["artifacts"][0]["problems"]}


def test_edited_front_matter_identity_is_tampering(source, debate_dir):
    duel = CliDuel(source, debate_dir)
    duel.turn(1)
    duel.path.write_text(duel.path.read_text().replace('topic: "Lease design"', 'topic: "Something else"'))
    duel.claim(2)
    assert duel.append(2, make_turn(2, *BOB)).error["code"] == "ARTIFACT_TAMPERED"


def test_vanished_source_allows_only_invalidated(source, debate_dir):
    duel = CliDuel(source, debate_dir)
    duel.turn(1)
    source.unlink()
    duel.claim(2)
    assert duel.append(2, make_turn(2, *BOB)).error["code"] == "TARGET_UNREADABLE"
    assert duel.close(2, "INVALIDATED").data["outcome"] == "INVALIDATED"
    assert "no longer exists" in duel.path.read_text()


def test_summary_file_lands_in_the_conclusion(source, debate_dir, tmp_path):
    duel = CliDuel(source, debate_dir, max_turns=2)
    duel.turn(1, "ACCEPTING_CONSENSUS")
    data = duel.turn(2, "ACCEPTING_CONSENSUS")
    assert data["terminal_outcome"] == "ACCEPTED_CONSENSUS"
    summary = tmp_path / "summary.md"
    summary.write_text("Both sides accept fifteen-minute leases.\n")
    assert duel.close(2, "ACCEPTED_CONSENSUS", "--summary-file", str(summary)).data["closed"]
    assert "### Summary\n\nBoth sides accept fifteen-minute leases." in duel.path.read_text()


def test_validate_flags_truncated_and_non_artifacts(source, debate_dir, tmp_path):
    duel = CliDuel(source, debate_dir)
    duel.turn(1)
    duel.turn(2)
    code, report = validate(duel.path)
    assert code == 0
    assert report["artifacts"][0]["turns"] == 2
    truncated = tmp_path / "truncated.md"
    text = duel.path.read_text()
    truncated.write_text(text[: text.index("**Agreements**", text.index("## Turn 2"))])
    code, report = validate(truncated)
    assert code == 1
    assert report["valid"] is False
    plain = tmp_path / "plain.md"
    plain.write_text("# Not a duel\n")
    code, report = validate(plain)
    assert code == 1
    assert report["artifacts"][0]["problems"][0]["code"] == "UNREADABLE"  # not a duel artifact at all


def test_validate_searches_folders_and_prints_for_people(source, debate_dir):
    duel = CliDuel(source, debate_dir)
    duel.turn(1)
    proc = subprocess.run(
        [sys.executable, "-m", "rp1_duel", "validate", str(debate_dir)], capture_output=True, text=True
    )
    assert proc.returncode == 0
    assert f"{duel.path}: valid (1 turn," in proc.stdout
    proc = subprocess.run(
        [sys.executable, "-m", "rp1_duel", "validate", str(debate_dir / "missing.md")], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "no such file" in proc.stderr


def test_validate_flags_a_forged_outcome(source, debate_dir):
    duel = CliDuel(source, debate_dir, max_turns=2)
    duel.turn(1)
    duel.turn(2)
    duel.close(2, "MAX_TURNS")
    duel.path.write_text(duel.path.read_text().replace('outcome: "MAX_TURNS"', 'outcome: "ACCEPTED_CONSENSUS"'))
    code, report = validate(duel.path)
    assert code == 1
    assert "OUTCOME_MISMATCH" in {p["code"] for p in report["artifacts"][0]["problems"]}


def test_a_rejected_turn_does_not_wake_the_waiting_peer(source, debate_dir):
    duel = CliDuel(source, debate_dir)
    duel.claim(1)
    service = DuelService(debate_dir)
    before = service.status(duel.duel_id)
    assert duel.append(1, make_turn(1, *ALICE).replace("(non-blocking)", "")).code == 3
    waited = service.wait(duel.duel_id, duel.seats[2]["participant_id"], timeout=0.3)
    assert waited.changed is False
    assert waited.turn_count == before.turn_count == 0
