"""The composite action (action.yml): its inputs mirror `duel ci github`'s options, and its last step
(.github/duel-ci.sh), run as the runner runs it, drives the real `duel ci github` against the fake GitHub."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml

from rp1_duel.cli.app import app
from rp1_duel.coordination import DuelService

from fake_github import PULL, REPOSITORY, TOKEN, FakeGitHub, commit, event
from helpers import Player, agreed_on_an_edit

ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEP = ROOT / ".github" / "duel-ci.sh"
# Inputs that set up the run rather than mirror an option.
SET_UP = {"github-token", "python-version"}


def ci_github_options() -> set[str]:
    """The long names of `duel ci github`'s options, without the dashes."""
    command: Any = typer.main.get_command(app)  # typer's own click: its classes are not click's
    params = command.commands["ci"].commands["github"].params
    names = {name for param in params for name in param.opts if name.startswith("--")}
    return {name.removeprefix("--") for name in names} - {"help"}


def test_the_actions_inputs_mirror_the_options_of_duel_ci_github() -> None:
    inputs = set(ACTION["inputs"]) - SET_UP
    assert inputs == (ci_github_options() - {"no-comment"}) | {"comment"}
    script = STEP.read_text(encoding="utf-8")
    for option in ci_github_options():
        assert f"--{option}" in script, f"the action never passes --{option}"


def test_the_action_passes_its_inputs_as_environment_never_spliced_into_a_script() -> None:
    """An input is data: `${{ inputs.… }}` inside `run:` would let a value become shell code."""
    for step in ACTION["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step
    assert ACTION["runs"]["using"] == "composite"
    installs = [step["run"] for step in ACTION["runs"]["steps"] if "pip install" in step.get("run", "")]
    assert installs == ['python -m pip install --quiet --disable-pip-version-check "$GITHUB_ACTION_PATH"']


def run_step(folder: Path, github: FakeGitHub, event_path: Path, **inputs: str) -> subprocess.CompletedProcess[str]:
    """The action's last step in ``folder``, its inputs as the runner passes them (``DUEL_*``), with the
    workflow run's environment and this interpreter's `duel` first on PATH."""
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "NO_COLOR": "1",
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_STEP_SUMMARY": str(folder / ".git" / "summary.md"),
        "GITHUB_WORKSPACE": str(folder),
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": github.url,
        "RUNNER_TEMP": str(folder / ".git"),
        **{f"DUEL_{name.upper().replace('-', '_')}": value for name, value in inputs.items()},
    }
    return subprocess.run(
        ["bash", str(STEP)], cwd=folder, env=env, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.slow
def test_the_actions_step_comments_the_decision_and_honours_its_flag_inputs(
    tmp_path: Path, base: str, github: FakeGitHub, service: DuelService, pair: tuple[Player, Player]
) -> None:
    record, _ = agreed_on_an_edit(service, *pair)
    head = commit(tmp_path, "a design and its debate")
    pull_request = event(tmp_path, base, head)

    quiet = run_step(tmp_path, github, pull_request, comment="false", require_consensus="true")
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert github.requests == [] and f"debates/{record.name}: passed (ACCEPTED_CONSENSUS)" in quiet.stdout

    ran = run_step(tmp_path, github, pull_request, glob="debates/*.md", require_verified="false")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert len(github.calls("POST", rf"/repos/{REPOSITORY}/issues/{PULL}/comments")) == 1
    assert (tmp_path / ".git" / "summary.md").read_text(encoding="utf-8").count(f"debates/{record.name}") >= 1

    wrong = run_step(tmp_path, github, pull_request, require_consensus="yes")
    assert wrong.returncode == 2 and wrong.stderr == 'duel review: the input require-consensus is "true" or "false"\n'


@pytest.mark.slow
def test_the_allowed_signers_are_read_from_the_base_commit_never_from_the_pull_request(
    tmp_path: Path, base: str, github: FakeGitHub, service: DuelService, pair: tuple[Player, Player]
) -> None:
    """A pull request that adds its own signers file must not choose who may sign its records."""
    agreed_on_an_edit(service, *pair)
    (tmp_path / "allowed_signers").write_text("mallory@example.invalid ssh-ed25519 AAAAC3Nza\n", encoding="utf-8")
    head = commit(tmp_path, "a debate, and a signers file of the pull request's own")
    ran = run_step(tmp_path, github, event(tmp_path, base, head), allowed_signers="allowed_signers")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert ran.stderr == "duel review: allowed-signers: allowed_signers is not in the pull request's base commit\n"
    assert github.requests == []
