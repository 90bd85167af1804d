"""``duel validate`` as library calls: :func:`validate_paths` takes files as given and
searches folders; a report's ``to_text()`` is what the command prints. And
:func:`rp1_duel.record.verification.write`, the sidecar written whole, readable by all."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rp1_duel.coordination import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.record import Sidecar, load, validate_paths, write

from helpers import claim, join, make_turn

SIDECAR = Sidecar(
    duel_id="d", artifact="d.md", chain_head="0" * 64, turns=0, verified_at="2026-11-25T00:00:00Z", voters=()
)


def duel(service: DuelService, source: Path) -> Path:
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    join(service, source, "Bob", harness="codex", model_id="gpt-x")
    appended = service.append(alice.seat, claim(service, alice), make_turn(1, "Alice", "claude-code", "claude-x"))
    return Path(appended.debate_path)


def test_validate_paths_searches_folders_for_artifacts_and_takes_files_as_given(service, source, debate_dir):
    artifact = duel(service, source)
    (debate_dir / "notes.md").write_text("# Notes, not a duel\n")
    missing = debate_dir / "missing.md"

    found = validate_paths([str(debate_dir), str(missing)])

    assert [report.path for report in found] == [str(artifact), str(missing)]
    assert [report.valid for report in found] == [True, False]


def test_a_report_as_text_is_its_verdict_line_then_a_line_per_problem(service, source):
    artifact = duel(service, source)
    [valid] = validate_paths([str(artifact)])
    artifact.write_text(artifact.read_text().replace("Argument 1", "Argument one"))
    [broken] = validate_paths([str(artifact)])

    assert valid.to_text() == f"{artifact}: valid (1 turn, open)"
    lines = broken.to_text().splitlines()
    assert lines[0] == f"{artifact}: INVALID (1 turn, open)"
    assert len(lines) == 1 + len(broken.problems) + len(broken.notes)
    assert lines[1] == f"  line {broken.problems[0].line}: {broken.problems[0].code} {broken.problems[0].message}"


def test_a_sidecar_is_written_whole_and_readable_by_all(tmp_path):
    path = tmp_path / "d.verify.json"
    write(path, SIDECAR)
    assert load(path) == SIDECAR
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["d.verify.json"]  # no temp file left


def test_a_sidecar_that_cannot_be_written_is_storage_failed(tmp_path):
    with pytest.raises(DuelError) as refused:
        write(tmp_path / "no-such-folder" / "d.verify.json", SIDECAR)
    assert refused.value.code == "STORAGE_FAILED"
