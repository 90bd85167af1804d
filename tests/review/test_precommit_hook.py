"""The `duel-validate` pre-commit hook (.pre-commit-hooks.yaml), run by the real pre-commit: a project's
`.pre-commit-config.yaml` names this repository at a commit, pre-commit installs duel from it into a
virtualenv of its own, and the hook checks the staged debate records as `duel validate --strict` does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rp1_duel.coordination import DuelService

from helpers import Player, agreed_on_an_edit

# pre-commit pip-installs duel from the hook's repository once for the module (a shared PRE_COMMIT_HOME);
# the test that comes first pays for that install.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
GIT_USER = ("-c", "user.name=Duel Tests", "-c", "user.email=tests@duel.invalid")


def git(folder: Path, *args: str) -> str:
    """``git …`` in ``folder``, as a test's user; its standard output."""
    return subprocess.run(
        ["git", *GIT_USER, *args], cwd=folder, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture(scope="module")
def hook_repository(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The project's working tree (what git tracks or would, uncommitted changes included) as one commit of a
    repository of its own: pre-commit installs a hook from a commit. Its path and the commit's SHA."""
    folder = tmp_path_factory.mktemp("hook-repository")
    listed = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():  # a file deleted but not yet staged is listed and absent
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, folder / name)
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "the working tree under test")
    return folder, git(folder, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pre-commit's cache for the module: the hook's environment is installed once, and never in ~/.cache."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path: Path, hook_repository: tuple[Path, str]) -> Path:
    """A git repository (the tests' ``source`` and ``debate_dir`` are in it) whose pre-commit configuration
    uses the duel-validate hook of ``hook_repository``."""
    repository, commit = hook_repository
    git(tmp_path, "init", "-q")
    (tmp_path / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {repository}\n    rev: {commit}\n    hooks: [{{id: duel-validate}}]\n", encoding="utf-8"
    )
    return tmp_path


def run_hooks(project: Path, pre_commit_home: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    """The real ``pre-commit run --files …`` in ``project``, the files staged first."""
    names = [str(path.relative_to(project)) for path in files]
    git(project, "add", ".pre-commit-config.yaml", *names)
    env = {**os.environ, "PRE_COMMIT_HOME": str(pre_commit_home), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--color", "never", "--files", *names],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=540,
        check=False,
    )


def with_one_character_of_turn_two_changed(record: Path) -> None:
    """One letter of turn 2's position changed in place, as a hand edit of the record would."""
    text = record.read_text(encoding="utf-8")
    position = text.index("**Position**", text.index("<!-- duel:turn n=2 "))
    changed = text.index("e", position + len("**Position**"))
    record.write_text(text[:changed] + "a" + text[changed + 1 :], encoding="utf-8")


def test_the_hook_passes_a_staged_valid_record_and_its_document(
    project: Path, pre_commit_home: Path, service: DuelService, source: Path, pair: tuple[Player, Player]
) -> None:
    record, _ = agreed_on_an_edit(service, *pair)
    ran = run_hooks(project, pre_commit_home, source, record)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "duel validate" in ran.stdout and "Passed" in ran.stdout


def test_the_hook_fails_a_record_with_one_character_of_a_turn_changed_and_names_the_problem(
    project: Path, pre_commit_home: Path, service: DuelService, source: Path, pair: tuple[Player, Player]
) -> None:
    record, _ = agreed_on_an_edit(service, *pair)
    with_one_character_of_turn_two_changed(record)
    ran = run_hooks(project, pre_commit_home, source, record)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "Failed" in ran.stdout and "INVALID" in ran.stdout and "HASH_MISMATCH" in ran.stdout, ran.stdout


def test_the_hook_fails_a_record_whose_document_is_not_in_the_repository(
    project: Path, pre_commit_home: Path, service: DuelService, source: Path, pair: tuple[Player, Player]
) -> None:
    """--strict: a record whose quotes and headings could not be checked against its document does not pass."""
    record, _ = agreed_on_an_edit(service, *pair)
    source.unlink()
    shutil.rmtree(record.parent / ".duel")  # the pinned copy is not committed (.duel/ ignores itself)
    ran = run_hooks(project, pre_commit_home, record)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "SOURCE_NOT_CHECKED" in ran.stdout, ran.stdout


def test_the_hook_checks_a_record_filed_in_a_folder_under_debates(
    project: Path, pre_commit_home: Path, service: DuelService, source: Path, pair: tuple[Player, Player]
) -> None:
    record, _ = agreed_on_an_edit(service, *pair)
    filed = record.parent / "2026" / record.name
    filed.parent.mkdir()
    record.rename(filed)
    with_one_character_of_turn_two_changed(filed)
    ran = run_hooks(project, pre_commit_home, source, filed)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "HASH_MISMATCH" in ran.stdout, ran.stdout
