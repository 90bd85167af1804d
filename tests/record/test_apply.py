"""``duel apply`` (issue 22, item 4): the revision a duel agreed on, applied to its document by a
person, and only to the version the duel recorded (docs/protocol.md section 2, ``duel apply``)."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from rp1_duel.errors import DuelError
from rp1_duel.record import agreed_ending, apply_agreed
from rp1_duel.vocabulary import ACCEPTED_CONSENSUS, DISSENT

from helpers import (
    SOURCE,
    Player,
    agreed_on_an_edit,
    claim,
    duel_command,
    join,
    make_turn,
    replace_edit,
    with_edits,
)

ALICE, BOB = ("Alice", "claude-code", "claude-x"), ("Bob", "codex", "gpt-x")
OPEN, ACCEPT, DISS = "OPEN_TO_DEBATE", "ACCEPTING_CONSENSUS", "DISSENTING"
EXPIRY = "Leases expire after fifteen minutes unless refreshed."
CONFIGURABLE = "Leases expire after `lease_seconds` unless refreshed."
REVISED = SOURCE.replace(EXPIRY, CONFIGURABLE)


def rid(document: str) -> str:
    return "r-" + hashlib.sha256(document.encode()).hexdigest()[:12]


def duel(service, pair: tuple[Player, Player], *texts: str, outcome: str | None = ACCEPTED_CONSENSUS) -> Path:
    """Turns ``texts`` written seat by seat, then the duel closed with ``outcome`` (left open when
    None): the artifact."""
    path = ""
    for number, text in enumerate(texts):
        player = pair[number % 2]
        path = service.append(player.seat, claim(service, player), text, release=True).debate_path
    if outcome is not None:
        closer = pair[(len(texts) - 1) % 2]
        service.release_lock(closer.seat, claim(service, closer), close=True, outcome=outcome)
    return Path(path)


def agreeing(document: str = SOURCE, revised: str = REVISED) -> tuple[str, str, str]:
    """Alice proposes the configurable expiry, and both accept it: ``revised`` is ``document`` with it."""
    return (
        with_edits(make_turn(1, *ALICE), replace_edit("expiry", EXPIRY, CONFIGURABLE)),
        with_edits(make_turn(2, *BOB, ACCEPT), accepts=rid(revised)),
        with_edits(make_turn(3, *ALICE, ACCEPT), accepts=rid(revised)),
    )


def seats(service, document: Path) -> tuple[Player, Player]:
    """Alice and Bob in a duel about ``document``."""
    return tuple(
        join(service, document, name, harness=harness, model_id=model) for name, harness, model in (ALICE, BOB)
    )  # type: ignore[return-value]


def refusal(artifact: Path, **flags) -> DuelError:
    with pytest.raises(DuelError) as refused:
        apply_agreed(artifact, **flags)
    return refused.value


def test_apply_writes_the_agreed_revision_over_the_document_and_keeps_its_mode(service, pair, source):
    artifact = duel(service, pair, *agreeing())
    source.chmod(0o640)
    result = apply_agreed(artifact)
    assert source.read_text(encoding="utf-8") == REVISED
    assert (source.stat().st_mode & 0o777, result.written) == (0o640, source)
    assert result.to_text() == f"applied {rid(REVISED)} to {source}: +1 -1 lines"
    assert result.to_dict() == {
        "revision": rid(REVISED),
        "document": str(source),
        "changed": True,
        "added": 1,
        "removed": 1,
        "check": False,
        "written": str(source),
        "state": "applied",
        "conflicts": 0,
    }


def test_apply_to_another_file_leaves_the_document_as_it_is(service, pair, source, tmp_path):
    artifact = duel(service, pair, *agreeing())
    source.chmod(0o604)
    out = tmp_path / "out" / "revised.md"
    out.parent.mkdir()
    result = apply_agreed(artifact, to=out)
    assert (out.read_text(encoding="utf-8"), source.read_text(encoding="utf-8")) == (REVISED, SOURCE)
    assert out.stat().st_mode & 0o777 == 0o604  # a new file takes the document's mode
    assert result.to_text() == f"applied {rid(REVISED)} to {source}, written to {out}: +1 -1 lines"


def test_apply_check_says_it_would_apply_and_writes_nothing(service, pair, source, tmp_path):
    artifact = duel(service, pair, *agreeing())
    result = apply_agreed(artifact, check=True, to=tmp_path / "out.md")
    assert (result.written, source.read_text(encoding="utf-8")) == (None, SOURCE)
    assert not (tmp_path / "out.md").exists()
    assert result.to_text() == f"{rid(REVISED)} applies to {source}: +1 -1 lines (--check: nothing written)"


LATER = "A line added since the duel.\n"


@pytest.mark.parametrize("use_git", [True, False], ids=["git-merge-file", "merge3"])
def test_a_document_that_moved_on_gets_the_agreed_change_merged_in(service, pair, source, use_git):
    artifact = duel(service, pair, *agreeing())
    source.write_text(SOURCE + LATER, encoding="utf-8")
    checked = apply_agreed(artifact, check=True, use_git=use_git)
    assert (checked.state, checked.written, source.read_text(encoding="utf-8")) == ("merged", None, SOURCE + LATER)
    assert checked.to_text().endswith(
        "merged with the changes made since the duel: +1 -1 lines (--check: nothing written)"
    )
    result = apply_agreed(artifact, use_git=use_git)
    assert source.read_text(encoding="utf-8") == REVISED + LATER  # today's line kept, the agreed change brought in
    assert (result.state, result.conflicts, result.written) == ("merged", 0, source)


@pytest.mark.parametrize("use_git", [True, False], ids=["git-merge-file", "merge3"])
def test_a_change_to_the_same_lines_is_written_with_conflict_markers_and_check_says_so_first(
    service, pair, source, use_git
):
    artifact = duel(service, pair, *agreeing())
    elsewhere = SOURCE.replace(EXPIRY, "Leases expire after five minutes unless refreshed.")
    source.write_text(elsewhere, encoding="utf-8")
    refused = refusal(artifact, check=True, use_git=use_git)
    assert (refused.code, refused.details) == ("MERGE_CONFLICT", {"conflicts": 1})
    assert source.read_text(encoding="utf-8") == elsewhere  # --check wrote nothing
    result = apply_agreed(artifact, use_git=use_git)
    written = source.read_text(encoding="utf-8")
    assert (result.state, result.conflicts) == ("conflicted", 1)
    assert "<<<<<<< today\nLeases expire after five minutes" in written
    assert f"=======\n{CONFIGURABLE}\n>>>>>>> agreed\n" in written
    assert result.to_text().startswith(f"applied {rid(REVISED)} to {source} with conflicts in 1 place:")


def test_to_writes_the_agreed_revision_of_the_recorded_version_whatever_the_document_became(
    service, pair, source, tmp_path
):
    artifact = duel(service, pair, *agreeing())
    source.write_text("# Rewritten\n\nNothing of the old text.\n", encoding="utf-8")
    apply_agreed(artifact, to=tmp_path / "out.md")
    assert (tmp_path / "out.md").read_text(encoding="utf-8") == REVISED


def test_a_recorded_version_found_nowhere_is_source_mismatch(service, pair, source, debate_dir):
    artifact = duel(service, pair, *agreeing())
    source.write_text(SOURCE + LATER, encoding="utf-8")
    for pinned in (debate_dir / ".duel" / "duels").glob("*/source"):
        pinned.unlink()  # no file, no git history, no pinned copy: nothing to recompute the revision over
    refused = refusal(artifact)
    assert refused.code == "SOURCE_MISMATCH"
    assert "is not in the working tree, its git history or the copy pinned at the join" in refused.message


def test_applying_twice_says_the_document_holds_the_revision_already(service, pair, source):
    artifact = duel(service, pair, *agreeing())
    apply_agreed(artifact)
    again = apply_agreed(artifact)
    assert (again.state, again.written) == ("already_applied", None)
    assert again.to_text() == f"already applied: {source} holds {rid(REVISED)}"
    assert source.read_text(encoding="utf-8") == REVISED


def test_a_duel_that_ended_in_dissent_or_is_open_has_no_agreed_revision(service, pair, source):
    dissent = (make_turn(1, *ALICE, DISS), make_turn(2, *BOB, DISS))
    refused = refusal(duel(service, pair, *dissent, outcome=DISSENT))
    assert (refused.code, refused.message) == ("NO_AGREED_REVISION", "no agreed revision: the duel ended DISSENT")
    assert refused.details == {"outcome": "DISSENT"}
    reopened = seats(service, source)  # a new duel on the same document, the first being closed
    refused = refusal(duel(service, reopened, make_turn(1, *ALICE), outcome=None))
    assert (refused.code, refused.message) == ("NO_AGREED_REVISION", "no agreed revision: the duel is still open")
    assert refused.details == {"outcome": None}


def test_a_tampered_artifact_is_refused_with_a_pointer_to_duel_validate(service, pair, source):
    artifact = duel(service, pair, *agreeing())
    text = artifact.read_text(encoding="utf-8")
    artifact.write_text(text.replace("`lease_seconds`", "`lease_minutes`", 1), encoding="utf-8")
    refused = refusal(artifact)
    assert refused.code == "ARTIFACT_TAMPERED"
    assert "HASH_MISMATCH" in refused.message and refused.message.endswith(f"run duel validate {artifact}")
    assert source.read_text(encoding="utf-8") == SOURCE


def test_a_consensus_without_edits_says_no_change_and_writes_nothing(service, pair, source):
    artifact = duel(service, pair, make_turn(1, *ALICE), make_turn(2, *BOB, ACCEPT), make_turn(3, *ALICE, ACCEPT))
    before = source.stat().st_mtime_ns
    result = apply_agreed(artifact, to=source.with_name("out.md"))
    assert (result.agreed.changed, result.agreed.id, result.written) == (False, rid(SOURCE), None)
    assert result.to_text() == f"no change to the document: the duel agreed on {source} as it is ({rid(SOURCE)})"
    assert source.stat().st_mtime_ns == before
    assert not source.with_name("out.md").exists()


def test_the_revision_keeps_the_documents_bom_and_crlf_line_ends(service, tmp_path):
    document = "\ufeff" + SOURCE.replace("\n", "\r\n")
    source = tmp_path / "design.md"
    source.write_bytes(document.encode("utf-8"))
    revised = document.replace(EXPIRY, CONFIGURABLE)
    apply_agreed(duel(service, seats(service, source), *agreeing(document, revised)))
    assert source.read_bytes() == revised.encode("utf-8")


def test_an_unreadable_artifact_is_artifact_unreadable(tmp_path):
    assert refusal(tmp_path / "missing.md").code == "ARTIFACT_UNREADABLE"


# -- the command ----------------------------------------------------------------------------------


def duel_apply(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return duel_command("apply", *args, cwd=cwd)


@pytest.mark.slow  # processes
def test_duel_apply_checks_applies_then_says_already_applied(service, pair, source, tmp_path):
    artifact = duel(service, pair, *agreeing()).relative_to(tmp_path)
    checked = duel_apply(str(artifact), "--check", cwd=tmp_path)
    assert (checked.returncode, checked.stdout, checked.stderr) == (
        0,
        f"{rid(REVISED)} applies to design.md: +1 -1 lines (--check: nothing written)\n",
        "",
    )
    applied = duel_apply(str(artifact), "--json", cwd=tmp_path)
    assert applied.returncode == 0, applied.stderr
    assert json.loads(applied.stdout) == {
        "success": True,
        "revision": rid(REVISED),
        "document": "design.md",
        "changed": True,
        "added": 1,
        "removed": 1,
        "check": False,
        "written": str(source),
        "state": "applied",
        "conflicts": 0,
    }
    assert source.read_text(encoding="utf-8") == REVISED
    again = duel_apply(str(artifact), cwd=tmp_path)
    assert (again.returncode, again.stdout, again.stderr) == (
        0,
        f"already applied: design.md holds {rid(REVISED)}\n",
        "",
    )


@pytest.mark.slow  # processes
def test_duel_apply_on_a_dissent_is_a_refusal_exit_1_not_a_usage_error(service, pair, tmp_path):
    """Issue 38, item 7: a valid record that agreed on nothing exited 2, the code of a wrong flag."""
    artifact = duel(service, pair, make_turn(1, *ALICE, DISS), make_turn(2, *BOB, DISS), outcome=DISSENT)
    for flags in ((), ("--check",)):
        refused = duel_apply(str(artifact), *flags, cwd=tmp_path)
        assert (refused.returncode, refused.stderr) == (
            1,
            "duel: NO_AGREED_REVISION: no agreed revision: the duel ended DISSENT\n",
        )


@pytest.mark.slow  # git and duel processes
def test_git_apply_3_merges_the_duels_patch_into_a_document_that_moved_on(service, pair, source, tmp_path):
    """The patch names both blobs (`index`), so git's own three-way apply works where the plain one cannot."""

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "-C", str(tmp_path), *args], capture_output=True, text=True, check=False)

    git("init", "-q")
    git("add", "design.md")
    git("-c", "user.name=a", "-c", "user.email=a@a", "commit", "-qm", "the document the duel debates")
    artifact = duel(service, pair, *agreeing())
    patch = artifact.with_name(f"{artifact.stem}.revision.patch")
    assert patch.read_text(encoding="utf-8").startswith("diff --git a/")
    moved_on = SOURCE.replace("# Lease design\n", "# Lease design\n\nA line added at the top since.\n")
    source.write_text(moved_on, encoding="utf-8")
    git("-c", "user.name=a", "-c", "user.email=a@a", "commit", "-qam", "moved on")
    assert git("apply", "--check", str(patch)).returncode != 0  # the plain apply may fail on a moved document
    done = git("apply", "-3", str(patch))
    assert done.returncode == 0, done.stderr
    assert source.read_text(encoding="utf-8") == moved_on.replace(EXPIRY, CONFIGURABLE)
    assert duel_command("validate", str(artifact), cwd=tmp_path).returncode == 0  # the patch still validates


@pytest.mark.slow  # a process
def test_duel_apply_with_conflicts_writes_the_markers_and_exits_1(service, pair, source, tmp_path):
    artifact = duel(service, pair, *agreeing())
    source.write_text(SOURCE.replace(EXPIRY, "Leases never expire."), encoding="utf-8")
    checked = duel_apply(str(artifact), "--check", cwd=tmp_path)
    assert checked.returncode == 1 and checked.stderr.startswith("duel: MERGE_CONFLICT: ")
    done = duel_apply(str(artifact), cwd=tmp_path)
    assert done.returncode == 1 and "with conflicts in 1 place" in done.stdout
    assert "<<<<<<< today" in source.read_text(encoding="utf-8")


def test_an_agreed_ending_names_the_revision_its_patch_and_the_apply_command(service, pair):
    path, revision = agreed_on_an_edit(service, *pair)
    patch = path.with_name(f"{pair[0].duel_id}.revision.patch")
    agreed = agreed_ending(path)
    assert agreed.lines() == (f"revision: {revision}", f"patch: {patch}", f"apply it: duel apply {path}")
    assert agreed.fields() == {"revision": revision, "patch": str(patch)}
    patch.unlink()  # a database store's patch is written on the host that closed
    assert agreed_ending(path).lines() == (f"revision: {revision}", f"apply it: duel apply {path}")


def test_an_ending_that_agreed_no_revision_or_cannot_be_read_says_nothing(service, pair, tmp_path):
    alice, bob = pair
    alices, bobs = ("Alice", "claude-code", "claude-x"), ("Bob", "codex", "gpt-x")
    service.append(alice.seat, claim(service, alice), make_turn(1, *alices), release=True)
    service.append(bob.seat, claim(service, bob), make_turn(2, *bobs, "ACCEPTING_CONSENSUS"), release=True)
    lease = claim(service, alice)
    appended = service.append(alice.seat, lease, make_turn(3, *alices, "ACCEPTING_CONSENSUS"))
    service.release_lock(alice.seat, lease, close=True, outcome=ACCEPTED_CONSENSUS)  # no edit: no change
    for path in (appended.debate_path, tmp_path / "missing.md", tmp_path):
        assert agreed_ending(path).lines() == ()
        assert agreed_ending(path).fields() == {"revision": None, "patch": None}
