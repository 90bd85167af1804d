"""The documents' promises that can be checked: the README fits its reader and keeps its two
commands, the library example runs as written, and every link between the documents resolves."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
LIBRARY = ROOT / "docs" / "library.md"
DOCUMENTS = (README, LIBRARY, ROOT / "docs" / "guide.md", ROOT / "docs" / "protocol.md", ROOT / "CONTRIBUTING.md")


def library_example() -> str:
    found = re.search(r"```python\n(.*?)```", LIBRARY.read_text(encoding="utf-8"), re.DOTALL)
    assert found, "docs/library.md shows a Python example"
    return found.group(1)


def test_the_readme_fits_a_screen_and_then_a_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150
    first_screen = "\n".join(lines[:60])
    for shown in ("duel demo", "duel join --target", "duel report", "duel apply", "python -m pytest -q"):
        assert shown in first_screen, shown


def test_the_readme_test_command_is_what_ci_runs() -> None:
    readme = README.read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for step in (
        "ruff check rp1_duel tests bench",
        "ruff format --check rp1_duel tests bench",
        "mypy",
        "python -m pytest -q",
    ):
        assert step in readme and step in ci, step


def test_every_relative_link_between_the_documents_resolves() -> None:
    for document in DOCUMENTS:
        prose = re.sub(r"```.*?```|`[^`\n]*`", "", document.read_text(encoding="utf-8"), flags=re.DOTALL)
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", prose):
            assert (document.parent / target).exists(), f"{document.name} links {target}"


def test_every_file_of_the_repository_a_document_names_exists() -> None:
    """Test and bench files move when the tests are grouped by area: a path a reader is told to run must be there."""
    documents = (*DOCUMENTS, *sorted((ROOT / "docs").glob("*.md")))
    for document in documents:
        text = document.read_text(encoding="utf-8")
        for named in sorted(set(re.findall(r"\b((?:tests|bench|rp1_duel)/[\w/]+\.py)\b", text))):
            assert (ROOT / named).exists(), f"{document.name} names {named}"


def test_no_document_points_at_the_original_protocol() -> None:
    for document in DOCUMENTS:
        assert "../shared" not in document.read_text(encoding="utf-8"), document.name


@pytest.mark.slow  # a process: the example runs as a user would run it
def test_the_library_example_runs_as_written_and_appends_a_turn(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", library_example()], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "1 claim_lock\n"
    artifact = next((tmp_path / "debates").glob("*.md")).read_text(encoding="utf-8")
    assert "## Turn 1 — Alice (unknown / unknown-model) — OPEN_TO_DEBATE" in artifact
