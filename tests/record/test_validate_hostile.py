"""`duel validate` on artifacts anyone could have written, as CI runs it: it reads nothing
outside the artifact's tree, nothing unbounded, refuses YAML tricks with a problem (never
a traceback), finds altered artifacts in a folder scan, accepts CRLF and BOM checkouts,
and checks citations against the source version the duel recorded."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rp1_duel.coordination import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.record import collect, scan, validate_file
from rp1_duel.settings import DuelSettings

from helpers import claim, join, make_turn

SOURCE = """# Lease design

## Lease semantics
Leases expire after fifteen minutes unless refreshed.

## Failure handling
A crashed holder loses the floor when its lease expires.
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project folder (a git work tree) holding the source and a debates folder."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "design.md").write_text(SOURCE, encoding="utf-8")
    return root


def debate(root: Path, turns: int = 2) -> Path:
    """A real duel of ``turns`` turns in ``root/debates``; the artifact's path."""
    service = DuelService(root / "debates")
    source = root / "design.md"
    settings = DuelSettings(max_turns=6)
    players = [
        join(service, source, "Alice", harness="h", model_id="m", settings=settings),
        join(service, source, "Bob", harness="h", model_id="m", settings=settings),
    ]
    path = ""
    for number in range(1, turns + 1):
        player = players[(number - 1) % 2]
        path = service.append(
            player.seat, claim(service, player), make_turn(number, player.name, "h", "m"), release=True
        ).debate_path
    return Path(path)


def set_header(artifact: Path, field: str, value: str) -> None:
    text = artifact.read_text(encoding="utf-8")
    artifact.write_text(re.sub(rf"(?m)^{field}: .*$", f"{field}: {value}", text, count=1), encoding="utf-8")


def codes(report) -> set[str]:
    return {problem.code for problem in report.problems}


def test_a_source_outside_the_tree_is_never_read(repo, tmp_path):
    artifact = debate(repo)
    secret = tmp_path / "secret" / "design.md"
    secret.parent.mkdir()
    secret.write_text("DEPLOY_TOKEN=s3cr3t\n")
    for recorded in ('"../../secret/design.md"', f'"{secret}"'):
        set_header(artifact, "source_path", recorded)
        report = validate_file(artifact)
        assert any("outside" in note for note in report.notes), report.notes
        text = repr(report.to_dict())
        assert "DEPLOY_TOKEN" not in text and "SOURCE_REF_NOT_FOUND" not in text
    set_header(artifact, "source_path", '"/etc/passwd"')  # not Markdown: no join ever wrote it
    assert [problem.code for problem in validate_file(artifact).problems] == ["FRONT_MATTER"]


def test_a_source_that_is_a_fifo_or_a_device_is_not_read(repo):
    artifact = debate(repo)
    source = repo / "design.md"
    source.unlink()
    os.mkfifo(source)  # opening a FIFO for reading would block for ever
    shutil.rmtree(artifact.parent / ".duel")  # no pinned copy beside it either
    report = validate_file(artifact)
    assert any("not a regular file" in note for note in report.notes), report.notes
    source.unlink()
    source.symlink_to("/dev/zero")  # resolved first: outside the tree, so never opened
    assert any("outside" in note for note in validate_file(artifact).notes)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ('participants: &a ["x", "x"]\ntopic: *a', "anchors or aliases"),
        ("participants: 5", "not a list of participants"),
        ('participants: [{"id": "p-1", "seat": [1]}]', "seat is not 1 or 2"),
        ('topic: ["a", "b"]', "topic is not a single value"),
    ],
)
def test_hostile_front_matter_is_a_problem_never_a_traceback(repo, header, expected):
    artifact = debate(repo)
    field = header.split(":")[0] if not header.startswith("participants: &a") else "participants"
    text = artifact.read_text(encoding="utf-8")
    if header.startswith("participants: &a"):
        text = re.sub(r"(?m)^participants:( .*)?\n(?:  .*\n)*", 'participants: &a ["x", "x"]\n', text, count=1)
        text = re.sub(r"(?m)^topic: .*$", "topic: *a", text, count=1)
    else:
        text = re.sub(rf"(?m)^{field}:( .*)?\n(?:  .*\n)*", header + "\n", text, count=1)  # its lines, every one
    artifact.write_text(text, encoding="utf-8")
    report = validate_file(artifact)
    assert "FRONT_MATTER" in codes(report)
    assert any(expected in problem.message for problem in report.problems), report.problems


def test_an_alias_bomb_is_refused_before_it_expands(repo):
    artifact = debate(repo)
    bomb = "".join(
        f"l{i}: &l{i} [*l{i - 1}, *l{i - 1}, *l{i - 1}, *l{i - 1}, *l{i - 1}, *l{i - 1}]\n" for i in range(1, 12)
    )
    text = artifact.read_text(encoding="utf-8").replace("---\n", '---\nl0: &l0 "x"\n' + bomb, 1)
    artifact.write_text(text, encoding="utf-8")
    report = validate_file(artifact)
    assert any("anchors or aliases" in problem.message for problem in report.problems)


DEEP = "nested: " + "[" * 5000 + "]" * 5000 + "\n"  # thousands deep: a recursive YAML composer's stack runs out


def test_front_matter_nested_thousands_deep_is_a_problem_never_a_traceback(repo):
    artifact = debate(repo)
    artifact.write_text(artifact.read_text(encoding="utf-8").replace("---\n", "---\n" + DEEP, 1), encoding="utf-8")
    report = validate_file(artifact)
    assert [(p.code, p.message) for p in report.problems] == [
        ("FRONT_MATTER", "front matter is nested deeper than 16 levels")
    ]


def test_after_deep_nesting_is_edited_in_an_append_is_refused_and_the_duel_still_closes_invalidated(tmp_path):
    service = DuelService(tmp_path / "debates")
    source = tmp_path / "design.md"
    source.write_text(SOURCE, encoding="utf-8")
    alice, bob = join(service, source, "Alice"), join(service, source, "Bob")
    lease = claim(service, alice)
    artifact = next((tmp_path / "debates").glob("*.md"))
    artifact.write_text(artifact.read_text(encoding="utf-8").replace("---\n", "---\n" + DEEP, 1), encoding="utf-8")
    with pytest.raises(DuelError) as refused:
        service.append(alice.seat, lease, make_turn(1, "Alice", "duel", "m"))
    assert refused.value.code == "ARTIFACT_TAMPERED"
    closed = service.release_lock(alice.seat, lease, close=True, outcome="INVALIDATED", reason="the record was edited")
    assert closed.closed
    assert service.status(bob.duel_id).duel.status == "CLOSED"


def test_a_crlf_or_bom_checkout_of_an_honest_artifact_is_valid(repo):
    artifact = debate(repo)
    data = artifact.read_bytes()
    artifact.write_bytes(b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n"))
    assert collect([str(artifact.parent)]) == [artifact]
    report = validate_file(artifact)
    assert report.valid, report.problems


@pytest.mark.slow  # runs `duel validate` as a process
@pytest.mark.parametrize("alter", ["crlf", "bom", "reordered", "no front matter"])
def test_a_folder_scan_finds_altered_artifacts_and_fails_them(repo, alter):
    artifact = debate(repo)
    text = artifact.read_text(encoding="utf-8")
    forged = text.replace("Turn 1 —", "Turn 1 —  forged", 1)  # an edited turn: its hash no longer matches
    if alter == "crlf":
        data = forged.replace("\n", "\r\n").encode()
    elif alter == "bom":
        data = b"\xef\xbb\xbf" + forged.encode()
    elif alter == "reordered":
        head, _, rest = forged.partition("\n---\n")
        lines = head.split("\n")
        data = ("\n".join([lines[0], *reversed(lines[1:])]) + "\n---\n" + rest).encode()
    else:
        data = forged.split("\n---\n", 1)[1].encode()
    artifact.write_bytes(data)
    found = collect([str(repo / "debates")])
    assert found == [artifact]
    assert not validate_file(artifact).valid
    proc = subprocess.run(["duel", "validate", str(repo / "debates")], capture_output=True, text=True, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr


def _dodge(artifact: Path, dodge: str) -> Path:
    """The forged artifact moved or padded the way a dodge of a folder scan would (issue 25 item 3)."""
    text = artifact.read_text(encoding="utf-8").replace("Turn 1 —", "Turn 1 —  forged", 1)
    artifact.unlink()
    if dodge == "quoted id, marker after 1 MiB":
        head, _, rest = text.partition("\n---\n")
        text = head.replace("duel_id:", '"duel_id":', 1) + "\n---\n" + "\n" * (1024 * 1024 + 10) + rest
    elif dodge == "id after 4 KiB":
        head, _, rest = text.partition("\n---\n")
        lines = head.split("\n")
        ids = [line for line in lines if line.startswith("duel_id:")]
        others = [line for line in lines[1:] if not line.startswith("duel_id:")]
        padded = ["---", f"padding: {'x' * 5000}", *others, *ids]
        text = "\n".join(padded) + "\n---\n" + "\n" * (1024 * 1024 + 10) + rest
    target = {
        "upper-case .MD": artifact.with_suffix(".MD"),
        "in .duel/": artifact.parent / ".duel" / artifact.name,
        "in sub/.duel/": artifact.parent / "sub" / ".duel" / artifact.name,
    }.get(dodge, artifact)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


@pytest.mark.parametrize(
    "dodge", ["quoted id, marker after 1 MiB", "id after 4 KiB", "upper-case .MD", "in .duel/", "in sub/.duel/"]
)
def test_a_folder_scan_cannot_be_dodged_by_where_or_how_deep_the_artifact_hides(repo, dodge):
    forged = _dodge(debate(repo), dodge)
    assert forged in scan([str(repo / "debates")]).found
    assert not validate_file(forged).valid


@pytest.mark.slow  # runs `duel validate` as a process
def test_every_file_a_folder_scan_leaves_out_is_listed_with_its_reason(repo):
    debate(repo)
    notes = repo / "debates" / "notes.md"
    notes.write_text("# Notes\n\nSee `<!-- duel:turn n=N -->` in the docs.\n", encoding="utf-8")
    assert scan([str(repo / "debates")]).skipped == [
        (notes, "not a duel artifact: no duel_id in its front matter and no duel marker")
    ]
    proc = subprocess.run(["duel", "validate", str(repo / "debates")], capture_output=True, text=True, check=False)
    assert f"{notes}: skipped (not a duel artifact: no duel_id in its front matter and no duel marker)" in proc.stdout


def test_a_folder_scan_leaves_plain_markdown_alone(repo):
    debate(repo)
    (repo / "debates" / "notes.md").write_text("# Notes\n\nSee `<!-- duel:turn n=N -->` in the docs.\n")
    assert [path.name for path in collect([str(repo / "debates")])] == [
        path.name for path in (repo / "debates").glob("20*.md")
    ]


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e", *args], check=True, capture_output=True
    )


def test_citations_are_checked_against_the_recorded_source_found_in_git_history(repo):
    artifact = debate(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "debate")
    (repo / "design.md").write_text("# Lease design\n\nRewritten after the debate.\n", encoding="utf-8")
    git(repo, "commit", "-qam", "edit the design")
    report = validate_file(artifact)
    assert report.valid, report.problems
    assert any("recorded version from commit" in note for note in report.notes), report.notes


def test_an_edited_source_without_history_skips_locators_rather_than_fail_a_correct_record(repo):
    artifact = debate(repo)
    shutil.rmtree(repo / ".git")
    shutil.rmtree(artifact.parent / ".duel")  # a clone: the state folder is not committed
    (repo / "design.md").write_text("# Lease design\n\nRewritten after the debate.\n", encoding="utf-8")
    report = validate_file(artifact)
    assert report.valid, report.problems
    assert any("not in the git history" in note for note in report.notes), report.notes


def test_a_target_whose_link_names_another_kind_of_file_is_refused(service, tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("# Notes\n")
    link = tmp_path / "design.md"
    link.symlink_to(text)
    with pytest.raises(DuelError) as caught:
        service.join(target=str(link), participant_name="Alice")
    assert caught.value.code == "TARGET_NOT_MARKDOWN"


def test_a_fifo_target_is_refused_instead_of_hanging(service, tmp_path):
    fifo = tmp_path / "design.md"
    os.mkfifo(fifo)
    with pytest.raises(DuelError) as caught:
        service.join(target=str(fifo), participant_name="Alice")
    assert caught.value.code == "TARGET_UNREADABLE"
    assert "not a regular file" in caught.value.message


def test_raw_html_edited_into_the_terminal_conclusion_is_flagged(repo):
    service = DuelService(repo / "debates")
    source = repo / "design.md"
    alice = join(service, source, "Alice", harness="h", model_id="m")
    join(service, source, "Bob", harness="h", model_id="m")
    service.release_lock(
        alice.seat, claim(service, alice), close=True, outcome="INVALIDATED", reason="stopped", summary="We stopped."
    )
    artifact = Path(service.status(alice.duel_id).duel.debate_path)
    assert validate_file(artifact, root=repo).valid
    text = artifact.read_text(encoding="utf-8")
    artifact.write_text(text.replace("We stopped.", "We stopped.\n\n<script>alert(1)</script>"), encoding="utf-8")
    report = validate_file(artifact, root=repo)
    assert {p.code for p in report.problems} == {"RAW_HTML"}
    problem = report.problems[0]
    assert "Terminal Conclusion" in problem.message and "<script>" in problem.message
    assert problem.line is not None
    assert artifact.read_text(encoding="utf-8").split("\n")[problem.line - 1] == "<script>alert(1)</script>"
