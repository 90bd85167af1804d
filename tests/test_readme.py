"""The README's promises that can be run: its library example works as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).parent.parent / "README.md"


def library_example() -> str:
    section = README.read_text(encoding="utf-8").split("## Library", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found, "the README's Library section shows a Python example"
    return found.group(1)


@pytest.mark.slow  # a process: the example runs as a user would run it
def test_the_readme_library_example_runs_as_written_and_appends_a_turn(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", library_example()], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "1 claim_lock\n"
    artifact = next((tmp_path / "debates").glob("*.md")).read_text(encoding="utf-8")
    assert "## Turn 1 — Alice (unknown / unknown-model) — OPEN_TO_DEBATE" in artifact
