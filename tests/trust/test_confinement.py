"""Paths stay inside (issue 42, item 1): a path duel reads or writes because a record, a
configuration file or a repository says so never leaves the project, never lands inside
``.git/``, and the document a record revises is Markdown (docs/protocol.md section 3, "Paths
that data names")."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest

from rp1_duel.cli.skill_setup import install_mcp_report, install_report
from rp1_duel.configuration import Flags, load_config
from rp1_duel.confinement import confine, project_of
from rp1_duel.coordination import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.record import apply_agreed, validate_file
from rp1_duel.vocabulary import ACCEPTED_CONSENSUS

from helpers import claim, duel_command, join, make_turn, replace_edit, with_edits

ALICE, BOB = ("Alice", "claude-code", "claude-x"), ("Bob", "codex", "gpt-x")
ACCEPT = "ACCEPTING_CONSENSUS"
HOOK = '[core]\n\tfsmonitor = "touch PWNED"'


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=60)
    return done.stdout


def refused(call: object, *args: object, **kwargs: object) -> DuelError:
    with pytest.raises(DuelError) as caught:
        call(*args, **kwargs)  # type: ignore[operator]
    return caught.value


# -- confine: the one check -------------------------------------------------------------------------


def test_a_path_inside_the_project_is_resolved(tmp_path):
    (tmp_path / "docs").mkdir()
    assert confine(tmp_path / "docs" / "x.md", project=tmp_path, what="the document") == tmp_path / "docs" / "x.md"


def test_a_path_out_of_the_project_is_refused_with_its_code(tmp_path):
    error = refused(confine, tmp_path / ".." / "elsewhere.md", project=tmp_path, what="the document")
    assert error.code == "PATH_OUTSIDE_PROJECT"
    assert error.message == f"the document {tmp_path.parent / 'elsewhere.md'} lies outside the project {tmp_path}"


def test_a_path_inside_git_is_refused_however_it_is_spelled(tmp_path):
    (tmp_path / ".git").mkdir()
    for spelled in (".git/config", "docs/../.git/config", ".GIT/hooks/pre-commit"):
        error = refused(confine, tmp_path / spelled, project=tmp_path, what="the document")
        assert error.code == "PATH_OUTSIDE_PROJECT"
        assert "lands inside .git/" in error.message


def test_a_symbolic_link_is_judged_by_where_it_leads(tmp_path):
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / ".git").mkdir(parents=True)
    outside.mkdir()
    (project / "debates").symlink_to(outside)
    (project / "guide.md").symlink_to(project / ".git" / "config")
    away = refused(confine, project / "debates" / "d.md", project=project, what="the debate dir")
    assert "lies outside the project" in away.message and f"(it leads to {outside / 'd.md'})" in away.message
    into_git = refused(confine, project / "guide.md", project=project, what="the document")
    assert "lands inside .git/" in into_git.message


def test_the_project_is_the_git_work_tree_else_the_folder(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "docs").mkdir()
    assert project_of(tmp_path / "repo" / "docs") == tmp_path / "repo"
    (tmp_path / "plain").mkdir()
    assert project_of(tmp_path / "plain") == tmp_path / "plain"


# -- validate and apply: the document a record revises --------------------------------------------


def forge_source_path(artifact: Path, source_path: str) -> None:
    """Rewrite the front matter's ``source_path`` (it is not hashed: only the checks below catch it)."""
    text = artifact.read_text(encoding="utf-8")
    recorded = next(line for line in text.splitlines() if line.startswith("source_path:"))
    artifact.write_text(text.replace(recorded, f"source_path: {source_path}", 1), encoding="utf-8")


def agreed_duel(service: DuelService, source: Path, find: str, revised_text: str) -> Path:
    """Alice and Bob agree on ``source`` with ``find`` replaced: the closed artifact."""
    revised = source.read_text(encoding="utf-8").replace(find, revised_text)
    revision = "r-" + hashlib.sha256(revised.encode()).hexdigest()[:12]
    alice, bob = (join(service, source, name, harness=h, model_id=m) for name, h, m in (ALICE, BOB))
    texts = (
        with_edits(make_turn(1, *ALICE), replace_edit("hook", find, revised_text)),
        with_edits(make_turn(2, *BOB, ACCEPT), accepts=revision),
        with_edits(make_turn(3, *ALICE, ACCEPT), accepts=revision),
    )
    path = ""
    for number, text in enumerate(texts):
        player = (alice, bob)[number % 2]
        path = service.append(player.seat, claim(service, player), text, release=True).debate_path
    service.release_lock(alice.seat, claim(service, alice), close=True, outcome=ACCEPTED_CONSENSUS)
    return Path(path)


EXPIRY = "Leases expire after fifteen minutes unless refreshed."


def test_a_record_whose_document_is_not_markdown_does_not_validate_or_apply(service, source):
    artifact = agreed_duel(service, source, EXPIRY, "Leases expire.")
    (source.parent / "build.sh").write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    forge_source_path(artifact, "../build.sh")
    report = validate_file(artifact)
    assert [problem.code for problem in report.problems] == ["FRONT_MATTER"]
    assert "source_path does not name a Markdown file" in report.problems[0].message
    assert refused(apply_agreed, artifact).code == "ARTIFACT_TAMPERED"


def test_a_document_that_leads_into_git_is_never_written(service, source, tmp_path):
    (tmp_path / ".git").mkdir()
    artifact = agreed_duel(service, source, EXPIRY, "Leases expire.")
    config = tmp_path / ".git" / "config"
    config.write_bytes(source.read_bytes())  # what the record's hash names, now in git's own file
    source.unlink()
    source.symlink_to(config)
    report = validate_file(artifact)
    assert report.problems == []  # the record is consistent; its document is not read
    assert any("lands inside .git/" in note for note in report.notes)
    error = refused(apply_agreed, artifact)
    assert error.code == "PATH_OUTSIDE_PROJECT" and "lands inside .git/" in error.message
    assert config.read_bytes() == source.read_bytes()


def test_a_document_that_leads_to_another_file_kind_is_not_applied(service, source, tmp_path):
    artifact = agreed_duel(service, source, EXPIRY, "Leases expire.")
    script = tmp_path / "build.sh"
    script.write_bytes(source.read_bytes())
    source.unlink()
    source.symlink_to(script)
    error = refused(apply_agreed, artifact)
    assert error.code == "TARGET_NOT_MARKDOWN"
    assert script.read_bytes() == script.read_bytes() and "Leases expire.\n" not in script.read_text(encoding="utf-8")


def test_a_document_outside_the_root_is_refused_with_its_code(service, source, debate_dir):
    artifact = agreed_duel(service, source, EXPIRY, "Leases expire.")
    error = refused(apply_agreed, artifact, root=debate_dir)
    assert error.code == "PATH_OUTSIDE_PROJECT"
    assert error.message == f"the document {source} lies outside the project {debate_dir}: pass --root to allow it"


# -- the attack, end to end in a fresh clone ---------------------------------------------------------


def config_turn(turn: str) -> str:
    """``turn`` citing a git config as its document: by lines and a quoted excerpt, as any turn may."""
    return (
        turn.replace("design.md#Lease semantics", "design.md#Core")
        .replace("design.md#Failure handling", "design.md:2-3")
        .replace('design.md "Leases expire after fifteen minutes unless refreshed."', 'design.md "bare = false"')
    )


@pytest.mark.slow  # git and duel processes
def test_a_committed_link_to_git_config_never_lets_apply_run_a_command(tmp_path):
    """The third audit's critical finding: a record whose document is a committed symbolic link to
    ``.git/config``, agreed on a revision that adds ``core.fsmonitor``. Before the fix, ``duel
    apply`` wrote it and the next ``git status`` ran the attacker's command."""
    origin, victim, attacker = tmp_path / "origin", tmp_path / "victim", tmp_path / "attacker"
    origin.mkdir()
    git("init", "-q", "-b", "main", cwd=origin)
    (origin / "README.md").write_text("# Project\n", encoding="utf-8")
    git("add", ".", cwd=origin)
    git("-c", "user.name=a", "-c", "user.email=a@a", "commit", "-qm", "start", cwd=origin)
    # The victim's git writes its config with headings a turn can address (comments to git); a clone's
    # config is the same at the same path, so the attacker can predict it.
    template = tmp_path / "template"
    template.mkdir()
    (template / "config").write_text("# Repository settings\n\n## Core\n\n[core]\n\tbare = false\n", encoding="utf-8")
    git("clone", "-q", f"--template={template}", str(origin), str(victim), cwd=tmp_path)
    predicted = (victim / ".git" / "config").read_bytes()

    # The attacker duels over a copy of that config, named design.md, to a revision with a hook in it.
    (attacker / "docs").mkdir(parents=True)
    copy = attacker / "docs" / "design.md"
    copy.write_bytes(predicted)
    service = DuelService(attacker / "debates")
    revised = predicted.decode().replace("[core]", HOOK, 1)
    revision = "r-" + hashlib.sha256(revised.encode()).hexdigest()[:12]
    alice, bob = (join(service, copy, name, harness=h, model_id=m) for name, h, m in (ALICE, BOB))
    texts = (
        with_edits(config_turn(make_turn(1, *ALICE)), replace_edit("hook", "[core]", HOOK)),
        with_edits(config_turn(make_turn(2, *BOB, ACCEPT)), accepts=revision),
        with_edits(config_turn(make_turn(3, *ALICE, ACCEPT)), accepts=revision),
    )
    artifact = Path()
    for number, text in enumerate(texts):
        player = (alice, bob)[number % 2]
        artifact = Path(service.append(player.seat, claim(service, player), text, release=True).debate_path)
    service.release_lock(alice.seat, claim(service, alice), close=True, outcome=ACCEPTED_CONSENSUS)

    # It commits the record, its conclusion naming the file the victim's duel apply would see (the
    # conclusion is not hashed), and in place of the document a link into .git/.
    (origin / "debates").mkdir()
    recorded = artifact.read_text(encoding="utf-8")
    forged = re.sub(r"\| Document changes \| `[^`]+`", "| Document changes | `.git/config`", recorded)
    (origin / "debates" / artifact.name).write_text(forged, encoding="utf-8")
    (origin / "docs").mkdir()
    (origin / "docs" / "design.md").symlink_to(Path("..") / ".git" / "config")
    git("add", ".", cwd=origin)
    git("-c", "user.name=a", "-c", "user.email=a@a", "commit", "-qm", "a duel", cwd=origin)

    # The victim pulls it, checks the record, and applies it.
    git("pull", "-q", cwd=victim)
    record = str(Path("debates") / artifact.name)
    checked = duel_command("validate", record, "--json", cwd=victim)
    assert checked.returncode == 0, checked.stdout + checked.stderr  # consistent: the document is not read
    assert "lands inside .git/" in json.dumps(json.loads(checked.stdout))
    applied = duel_command("apply", record, cwd=victim)
    assert applied.returncode == 1
    assert applied.stderr.startswith("duel: PATH_OUTSIDE_PROJECT: the document ")
    assert "lands inside .git/" in applied.stderr and applied.stderr.count("\n") == 1
    assert (victim / ".git" / "config").read_bytes() == predicted
    git("status", "--short", cwd=victim)
    assert not (victim / "PWNED").exists()


# -- the debate dir, the state folder and duel skill's files ----------------------------------------


def clone_with(tmp_path: Path) -> tuple[Path, Path]:
    """A cloned work tree, and a folder outside it."""
    root, outside = tmp_path / "clone", tmp_path / "outside"
    (root / ".git").mkdir(parents=True)
    outside.mkdir()
    return root, outside


def test_a_committed_debates_link_out_of_the_project_is_refused(tmp_path):
    root, outside = clone_with(tmp_path)
    (root / "debates").symlink_to(outside)
    error = refused(load_config, root, {"HOME": str(tmp_path)})
    assert error.code == "PATH_OUTSIDE_PROJECT"
    assert error.message.endswith(f"(it leads to {outside}): pass --debate-dir to use it anyway")
    assert load_config(root, {"HOME": str(tmp_path)}, Flags(debate_dir=str(outside))).debate_dir == str(outside)


def test_a_committed_debates_link_into_git_is_refused(tmp_path):
    root, _ = clone_with(tmp_path)
    (root / "debates").symlink_to(root / ".git")
    assert "lands inside .git/" in refused(load_config, root, {"HOME": str(tmp_path)}).message


def test_a_project_debate_dir_inside_git_needs_trust(tmp_path):
    root, _ = clone_with(tmp_path)
    (root / "duel.toml").write_text('debate_dir = ".git/hooks"\n', encoding="utf-8")
    error = refused(load_config, root, {"HOME": str(tmp_path)})
    assert (error.code, error.details["key"]) == ("UNTRUSTED_CONFIG", "debate_dir")


@pytest.mark.parametrize("committed", ["AGENTS.md", ".claude"])
def test_duel_skill_never_writes_through_a_committed_link_out_of_the_project(tmp_path, committed):
    root, outside = clone_with(tmp_path)
    victim = outside / "notes.md"
    victim.write_text("mine\n", encoding="utf-8")
    (root / committed).symlink_to(victim if committed == "AGENTS.md" else outside)
    harness = "codex" if committed == "AGENTS.md" else "claude-code"
    error = refused(install_report, harness, scope="project", home=tmp_path / "home", project=root)
    assert error.code == "PATH_OUTSIDE_PROJECT" and error.message.endswith("remove the link, or use --scope user")
    assert victim.read_text(encoding="utf-8") == "mine\n" and sorted(p.name for p in outside.iterdir()) == ["notes.md"]
    mcp = refused(install_mcp_report, harness, scope="project", home=tmp_path / "home", project=root)
    assert mcp.code == "PATH_OUTSIDE_PROJECT"
    assert not (root / ".mcp.json").exists() and not (root / ".codex").exists()


def test_a_user_install_follows_the_users_own_links(tmp_path):
    home, dotfiles = tmp_path / "home", tmp_path / "dotfiles"
    (home / ".codex" / "prompts").mkdir(parents=True)
    dotfiles.mkdir()
    (home / ".codex" / "prompts" / "duel.md").symlink_to(dotfiles / "duel.md")
    install_report("codex", scope="user", home=home, project=tmp_path / "project")
    assert "Take part in a duel" in (dotfiles / "duel.md").read_text(encoding="utf-8")


def test_a_planted_events_log_link_is_never_written_through(service, source, debate_dir, tmp_path):
    alice = join(service, source, ALICE[0], harness=ALICE[1], model_id=ALICE[2])
    log = debate_dir / ".duel" / "duels" / alice.duel_id / "events.jsonl"
    kept = tmp_path / "kept.txt"
    kept.write_text("untouched\n" * 10_000, encoding="utf-8")  # longer than the log: it would be cut to its size
    log.unlink()
    log.symlink_to(kept)
    with pytest.raises(DuelError):
        join(service, source, BOB[0], harness=BOB[1], model_id=BOB[2])
    assert kept.read_text(encoding="utf-8") == "untouched\n" * 10_000


def test_a_committed_patch_or_pinned_copy_that_links_out_of_the_project_is_never_read(service, source, tmp_path):
    artifact = agreed_duel(service, source, EXPIRY, "Leases expire.")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.patch"
    outside.write_text("secret\n", encoding="utf-8")
    patch = artifact.with_name(f"{artifact.stem}.revision.patch")
    patch.unlink()
    patch.symlink_to(outside)
    problems = validate_file(artifact).problems
    assert [problem.code for problem in problems] == ["PATCH_MISMATCH"]
    assert "lies outside the project" in problems[0].message and "secret" not in problems[0].message
    pinned = next((artifact.parent / ".duel" / "duels").glob("*/source"))
    pinned.unlink()
    pinned.symlink_to(outside)
    source.write_text("# Moved on\n", encoding="utf-8")  # only the pinned copy could have the recorded version
    assert any("source locators were not checked" in note for note in validate_file(artifact).notes)
