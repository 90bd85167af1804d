"""Files that are not files (issue 42, items 4 and 8): every file duel reads from a debate folder, a
repository or a configuration location is a regular file, read up to the bound of its kind. A FIFO,
a symlink to a device or a 3 GiB sparse file in its place is a one-line error with a code, never a
hang, a memory blow-up or a traceback; a folder scan names what it skips and walks any depth
(docs/protocol.md section 3, "Files duel reads")."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_apply import agreeing, duel

from rp1_duel.cli import skill_setup
from rp1_duel.configuration import load_config, trust, trusted
from rp1_duel.errors import DuelError
from rp1_duel.files import MAX_ARTIFACT_BYTES, NotReadable, read_bounded
from rp1_duel.record import scan, validate_file
from rp1_duel.review.listing import UnreadableDuel, list_duels
from rp1_duel.review.stats import read_stats

from helpers import Player, claim, duel_command, join

# A hang is a failure, not a stuck suite: each test here gets seconds, not the suite's minutes.
pytestmark = pytest.mark.timeout(60)

KINDS = ["fifo", "dev-zero", "dev-urandom", "sparse"]
SPARSE_BYTES = 3 * 2**30


def make_hostile(path: Path, kind: str) -> None:
    """Put a FIFO, a symlink to /dev/zero or /dev/urandom, or a 3 GiB sparse file where ``path`` was."""
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind.startswith("dev-"):
        path.symlink_to(f"/dev/{kind.removeprefix('dev-')}")
    else:
        with path.open("wb") as handle:
            handle.truncate(SPARSE_BYTES)


def refusal(call: object, *args: object) -> DuelError:
    with pytest.raises(DuelError) as refused:
        call(*args)  # type: ignore[operator]
    return refused.value


def state_folder(debate_dir: Path, player: Player) -> Path:
    return debate_dir / ".duel" / "duels" / player.duel_id


# -- the one reader ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_read_bounded_refuses_a_file_that_is_no_regular_file_or_passes_its_bound(tmp_path, kind):
    path = tmp_path / "state.json"
    make_hostile(path, kind)
    with pytest.raises(NotReadable, match=r"not a regular file|larger than 8 MiB"):
        read_bounded(path, MAX_ARTIFACT_BYTES)


def test_read_bounded_reads_a_regular_file_up_to_its_bound_and_through_a_symlink(tmp_path):
    target = tmp_path / "real.json"
    target.write_bytes(b"x" * 1024)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert read_bounded(link, 1024) == b"x" * 1024
    target.write_bytes(b"x" * 1025)
    with pytest.raises(NotReadable, match="larger than 1 KiB"):
        read_bounded(target, 1024)


# -- the debate dir's own files ----------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_state_file_that_is_no_regular_file_is_state_corrupt(service, pair, debate_dir, kind):
    alice, _ = pair
    make_hostile(state_folder(debate_dir, alice) / "state.json", kind)
    error = refusal(service.status, alice.duel_id)
    assert error.code == "STATE_CORRUPT" and "state.json" in error.message


@pytest.mark.parametrize("kind", KINDS)
def test_an_index_that_is_no_regular_file_is_state_corrupt(service, pair, debate_dir, source, kind):
    make_hostile(debate_dir / ".duel" / "index.json", kind)
    error = refusal(join, service, source, "Carol")
    assert error.code == "STATE_CORRUPT" and "index.json" in error.message


@pytest.mark.parametrize("kind", KINDS)
def test_an_event_log_that_is_no_regular_file_is_state_corrupt_when_read(service, pair, debate_dir, kind):
    alice, _ = pair
    make_hostile(state_folder(debate_dir, alice) / "events.jsonl", kind)
    error = refusal(service.events, alice.duel_id, ("usage",))
    assert error.code == "STATE_CORRUPT" and "events.jsonl" in error.message


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_an_event_log_that_is_no_regular_file_is_refused_when_written(service, pair, debate_dir, kind):
    alice, _ = pair
    make_hostile(state_folder(debate_dir, alice) / "events.jsonl", kind)
    error = refusal(claim, service, alice)
    assert error.code == "STATE_CORRUPT" and "events.jsonl" in error.message


def test_an_event_log_is_read_only_up_to_its_bound_whatever_the_state_says(service, pair, debate_dir):
    alice, _ = pair
    folder = state_folder(debate_dir, alice)
    make_hostile(folder / "events.jsonl", "sparse")
    state = json.loads((folder / "state.json").read_bytes())
    state["event_bytes"] = SPARSE_BYTES  # a forged state counts 3 GiB of events
    (folder / "state.json").write_text(json.dumps(state))
    error = refusal(service.events, alice.duel_id, ("usage",))
    assert error.code == "STATE_CORRUPT" and "larger than 64 MiB" in error.message


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse"])
def test_list_names_a_duel_whose_state_is_no_regular_file_and_lists_the_others(
    service, pair, debate_dir, tmp_path, kind
):
    alice, _ = pair
    other = tmp_path / "other.md"
    other.write_text("# Other\n\nA second document.\n", encoding="utf-8")
    join(service, other, "Carol")
    make_hostile(state_folder(debate_dir, alice) / "state.json", kind)
    rows = list_duels(service)
    assert [type(row).__name__ for row in rows] == ["ListedDuel", "UnreadableDuel"]
    broken = rows[1]
    assert isinstance(broken, UnreadableDuel)
    assert (broken.duel_id, broken.code) == (alice.duel_id, "STATE_CORRUPT")


# -- a repository's files: the record's patch, configuration, the trust file ------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_revision_patch_that_is_no_regular_file_is_a_patch_mismatch(service, pair, tmp_path, kind):
    artifact = duel(service, pair, *agreeing())
    patch = next(artifact.parent.glob("*.revision.patch"))
    make_hostile(patch, kind)
    report = validate_file(artifact, root=tmp_path)
    assert not report.valid
    assert [problem.code for problem in report.problems] == ["PATCH_MISMATCH"]
    said = report.problems[0].message  # a link to a device leads out of the project, and is refused as such first
    assert any(reason in said for reason in ("not a regular file", "larger than", "lies outside the project"))


def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.mark.parametrize("name", ["duel.toml", "duel.local.toml"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_project_configuration_that_is_no_regular_file_is_invalid_config(tmp_path, name, kind):
    root = project(tmp_path)
    (root / "duel.toml").write_text('debate_dir = "debates"\n', encoding="utf-8")
    make_hostile(root / name, kind)
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    error = refusal(lambda: load_config(cwd=root, env=env))
    assert error.code == "INVALID_CONFIG" and name in error.message


@pytest.mark.parametrize("kind", KINDS)
def test_a_trust_file_that_is_no_regular_file_trusts_nothing_and_is_not_replaced(tmp_path, kind):
    root = project(tmp_path)
    config = root / "duel.toml"
    config.write_text('store = "postgresql://elsewhere/db"\n', encoding="utf-8")
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    record = tmp_path / "xdg" / "duel" / "trusted"
    record.parent.mkdir(parents=True)
    make_hostile(record, kind)
    assert not trusted(config, env)
    error = refusal(trust, config, env)
    assert error.code == "INVALID_CONFIG" and "trusted" in error.message
    assert record.is_symlink() or not record.is_file() or record.stat().st_size == SPARSE_BYTES


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse"])
def test_skill_install_refuses_an_agents_file_that_is_no_regular_file(tmp_path, kind):
    project_folder = tmp_path / "project"
    project_folder.mkdir()
    make_hostile(project_folder / "AGENTS.md", kind)
    error = refusal(
        lambda: skill_setup.install("codex", scope="project", home=tmp_path / "home", project=project_folder)
    )
    # A link to a device leads out of the project, and is refused as such before it is read.
    expected = "PATH_OUTSIDE_PROJECT" if kind == "dev-zero" else "SKILL_WRITE_FAILED"
    assert error.code == expected and "AGENTS.md" in error.message


# -- folder scans ----------------------------------------------------------------------------------


@pytest.fixture
def hostile_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder holding a FIFO, a /dev/zero symlink and a sparse file named *.md, and 1,500 nested folders."""
    root = tmp_path / "hostile"
    root.mkdir()
    for kind in ("fifo", "dev-zero", "sparse"):
        make_hostile(root / f"{kind}.md", kind)
    deep = root
    for _ in range(1500):  # one by one: mkdir(parents=True) recurses
        deep /= "d"
        deep.mkdir()
    (deep / "bottom.md").write_text("# Not a duel\n", encoding="utf-8")
    yield root
    (deep / "bottom.md").unlink()  # from the bottom up: pytest's clean-up (shutil.rmtree) recurses too
    while deep != root:
        deep.rmdir()
        deep = deep.parent


def test_a_scan_walks_any_depth_and_names_each_file_it_cannot_read(hostile_folder):
    root = hostile_folder
    found = scan([str(root)])
    assert found.found == []
    reasons = {path.name: reason for path, reason in found.skipped}
    assert reasons["fifo.md"] == reasons["dev-zero.md"] == "not a regular file"
    assert reasons["sparse.md"].startswith("larger than 8 MiB")
    assert reasons["bottom.md"].startswith("not a duel artifact")


def test_a_scan_does_not_follow_a_symlinked_folder(tmp_path):
    root = tmp_path / "scan"
    root.mkdir()
    (root / "loop").symlink_to(root)
    (root / "note.md").write_text("# Not a duel\n", encoding="utf-8")
    assert [path.name for path, _ in scan([str(root)]).skipped] == ["note.md"]


def test_stats_over_a_hostile_folder_names_what_it_skipped(hostile_folder):
    stats = read_stats(hostile_folder)
    assert stats.duels == () and stats.unreadable == ()
    assert {Path(path).name for path, _ in stats.skipped} == {"fifo.md", "dev-zero.md", "sparse.md", "bottom.md"}


# -- the commands, as people run them ---------------------------------------------------------------


def one_error_line(done: subprocess.CompletedProcess[str], code: str) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"duel: {code}: "), done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse"])
def test_duel_list_and_tools_status_end_at_once_on_a_state_file_that_is_no_file(
    service, pair, debate_dir, tmp_path, kind
):
    alice, _ = pair
    make_hostile(state_folder(debate_dir, alice) / "state.json", kind)
    listed = duel_command("list", "--json", "--debate-dir", str(debate_dir), cwd=tmp_path)
    assert listed.returncode == 1 and "Traceback" not in listed.stderr
    assert json.loads(listed.stdout)[0]["error"]["code"] == "STATE_CORRUPT"
    status = duel_command("tools", "status", "--duel-id", alice.duel_id, "--debate-dir", str(debate_dir), cwd=tmp_path)
    assert status.returncode == 1 and "Traceback" not in status.stderr
    assert json.loads(status.stdout)["error"]["code"] == "STATE_CORRUPT"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse"])
def test_duel_watch_ends_at_once_on_an_event_log_that_is_no_file(service, pair, debate_dir, tmp_path, kind):
    alice, _ = pair
    make_hostile(state_folder(debate_dir, alice) / "events.jsonl", kind)
    done = duel_command("watch", "--duel-id", alice.duel_id, "--debate-dir", str(debate_dir), cwd=tmp_path)
    assert done.returncode == 1
    one_error_line(done, "STATE_CORRUPT")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse"])
def test_duel_validate_and_apply_check_end_at_once_on_a_patch_that_is_no_file(service, pair, tmp_path, kind):
    artifact = duel(service, pair, *agreeing())
    make_hostile(next(artifact.parent.glob("*.revision.patch")), kind)
    validated = duel_command("validate", "--root", str(tmp_path), str(artifact), cwd=tmp_path)
    assert validated.returncode == 1 and "Traceback" not in validated.stderr
    assert "PATCH_MISMATCH" in validated.stdout
    checked = duel_command("apply", "--check", "--root", str(tmp_path), str(artifact), cwd=tmp_path)
    assert checked.returncode == 1
    one_error_line(checked, "ARTIFACT_TAMPERED")


@pytest.mark.slow
def test_duel_validate_stats_and_verify_over_a_hostile_folder_name_what_they_skipped(hostile_folder, tmp_path):
    root = hostile_folder
    shown = duel_command("validate", "--json", str(root), cwd=tmp_path)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert len(json.loads(shown.stdout)["skipped"]) == 4
    text = duel_command("validate", str(root), cwd=tmp_path)
    assert text.returncode == 0 and text.stdout.count("skipped (") == 4, text.stderr
    stats = duel_command("stats", "--json", str(root), cwd=tmp_path)
    assert stats.returncode == 0 and "Traceback" not in stats.stderr, stats.stderr
    assert len(json.loads(stats.stdout)["skipped"]) == 4
    verified = duel_command("verify", "--no-models", "--json", str(root), cwd=tmp_path)
    assert "Traceback" not in verified.stderr, verified.stderr
    assert len(json.loads(verified.stdout)["skipped"]) == 4
    said = duel_command("verify", "--no-models", str(root), cwd=tmp_path)
    assert said.stderr.count("skipped (") == 4, said.stderr


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse"])
def test_duel_config_trust_and_list_end_at_once_on_a_configuration_that_is_no_file(tmp_path, kind):
    root = project(tmp_path)
    make_hostile(root / "duel.toml", kind)
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    trusted_now = duel_command("config", "trust", str(root / "duel.toml"), cwd=root, env=env)
    assert trusted_now.returncode == 1
    one_error_line(trusted_now, "INVALID_CONFIG")
    listed = duel_command("list", cwd=root, env=env)
    assert listed.returncode == 1
    one_error_line(listed, "INVALID_CONFIG")
