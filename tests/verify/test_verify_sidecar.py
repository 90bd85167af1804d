"""The verification sidecar: its format, read as untrusted input, and `duel validate`'s check that it
belongs to the artifact's chain and lists exactly what the turns cite (docs/protocol.md section 10)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rp1_duel.record import RecordFile, validate_file
from rp1_duel.record.verification import CURRENT, MISMATCH, STALE, SidecarError, check, dumps, load, loads
from rp1_duel.verify import Fetcher, FetchPolicy
from rp1_duel.verify.run import Verifier, verify_artifact
from rp1_duel.vocabulary import RecordCode, Verdict

from helpers import claim, duel_citing, make_turn


@pytest.fixture
def verified(service, source, web, tmp_path):
    """An artifact of two turns citing a page and a dead link, and its sidecar, written."""
    artifact = duel_citing(
        service,
        source,
        {"citing": (web.url("/states"), web.url("/missing"))},
        {"position_extra": f" {web.url('/plain.txt')}"},
    )
    write(artifact, tmp_path)
    return artifact


def write(artifact, tmp_path):
    done = verify_artifact(artifact, Verifier(Fetcher(FetchPolicy(allow_private_hosts=True))))
    done.sidecar_path.write_bytes(dumps(done.sidecar))
    return done.sidecar_path


def edit(artifact, change):
    path = artifact.with_name(artifact.stem + ".verify.json")
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def standing(artifact):
    record = RecordFile.read(artifact, find_source=False)
    assert record.front is not None
    return check(
        sidecar=load(artifact.with_name(artifact.stem + ".verify.json")),
        artifact_name=artifact.name,
        front=record.front,
        blocks=record.parsed.blocks,
        turns=record.history().turns,
    )


def test_the_sidecar_is_sorted_indented_json_ending_in_a_newline(verified):
    text = verified.with_name(verified.stem + ".verify.json").read_text()
    data = json.loads(text)
    assert text == json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    assert data["format"] == "duel-verify/1" and data["artifact"] == verified.name and data["turns"] == 2
    assert set(data["citations"][1]) == {
        "turn",
        "turn_sha256",
        "section",
        "line",
        "item",
        "kind",
        "url",
        "excerpt",
        "claim",
        "verdict",
        "confidence",
        "reason",
        "votes",
    }
    assert set(data["fetches"][data["citations"][1]["url"]]) == {
        "final_url",
        "status",
        "content_type",
        "content_sha256",
        "bytes",
        "fetched_at",
        "error",
        "detail",
    }
    assert loads(text.encode()) == load(verified.with_name(verified.stem + ".verify.json"))


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"{not json", "not JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "not JSON"),
        (b"\xff\xfe", "not JSON"),
        (b"[]", "not an object"),
        (b'{"format": "duel-verify/2"}', "format"),
        (b'{"format": "duel-verify/1", "duel_id": "d"}', "lacks 'fetches'"),
    ],
)
def test_a_sidecar_that_is_not_in_the_format_is_a_sidecar_error(data, said):
    with pytest.raises(SidecarError, match=said):
        loads(data)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d.update(turns=True), "turns is not a whole number"),
        (lambda d: d.update(turns=-1), "negative"),
        (lambda d: d["citations"][0].update(verdict="trustworthy"), "not one of"),
        (lambda d: d["citations"][0].update(kind="rumour"), "kind"),
        (lambda d: d["citations"][0].update(votes="none"), "not a list"),
        (lambda d: d["citations"][0].pop("item"), "lacks 'item'"),
        (lambda d: d["fetches"].update(x={"final_url": 3}), "final_url is not a string"),
        (lambda d: d.update(voters=[1]), "voters"),
    ],
)
def test_each_field_is_checked_for_its_type_and_words(verified, change, said):
    path = verified.with_name(verified.stem + ".verify.json")
    data = json.loads(path.read_text())
    change(data)
    with pytest.raises(SidecarError, match=said):
        loads(json.dumps(data).encode())


def test_a_sidecar_of_the_whole_chain_is_current(verified):
    assert standing(verified).status == CURRENT
    report = validate_file(verified, require_verified=False)
    assert report.valid and report.verification is not None and report.verification.status == CURRENT
    assert report.verification.verdicts[Verdict.FABRICATED] == 1


def test_a_sidecar_covering_fewer_turns_than_written_is_stale(service, source, web, tmp_path, pair):
    alice, bob = pair
    artifact = Path(
        service.append(
            alice.seat,
            claim(service, alice),
            make_turn(1, "Alice", "claude-code", "claude-x", citing=(web.url("/states"),)),
            release=True,
        ).debate_path
    )
    write(artifact, tmp_path)
    service.append(bob.seat, claim(service, bob), make_turn(2, "Bob", "codex", "gpt-x"), release=True)
    assert standing(artifact).status == STALE
    report = validate_file(artifact)
    assert report.valid and any("covers 1 of 2 turns" in note for note in report.notes)
    required = validate_file(artifact, require_verified=True)
    assert [p.code for p in required.problems] == [RecordCode.VERIFICATION_STALE]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d.update(duel_id="2026-01-01-other"), "for duel"),
        (lambda d: d.update(artifact="other.md"), "for artifact"),
        (lambda d: d.update(chain_head="f" * 64), "chain head"),
        (lambda d: d.update(turns=3), "chain head"),
        (lambda d: d["citations"].pop(2), "leaves out"),  # the fabricated citation, taken out to pass CI
        (lambda d: d["citations"].append(dict(d["citations"][1])), "which the turns it covers do not cite"),
        (lambda d: d["citations"][1].update(item="https://example.org/elsewhere"), "which the turns it covers do not"),
        (lambda d: d["citations"][1].update(claim="something else"), "which the turns it covers do not cite"),
        (lambda d: d["citations"].insert(0, d["citations"].pop(1)), "another order"),
        (lambda d: d["citations"][0].update(verdict="verified"), "cannot be verified"),
        (lambda d: d["fetches"].clear(), "no fetch record"),
        # A verdict word edited against the sidecar's own evidence (issue 25 item 3): the 404 is still recorded.
        (lambda d: d["citations"][2].update(verdict="unverifiable"), "unverifiable, but its fetch failed"),
        (lambda d: d["citations"][1].update(verdict="unverifiable"), "unverifiable, but its page was read"),
    ],
)
def test_a_sidecar_that_is_not_this_artifacts_makes_it_invalid(verified, change, said):
    edit(verified, change)
    assert standing(verified).status == MISMATCH
    report = validate_file(verified)
    assert not report.valid and {p.code for p in report.problems} == {RecordCode.VERIFICATION_MISMATCH}
    assert said in report.problems[0].message, report.problems[0].message


def test_a_sidecar_that_cannot_be_read_makes_the_artifact_invalid(verified):
    verified.with_name(verified.stem + ".verify.json").write_text("[")
    report = validate_file(verified)
    assert [p.code for p in report.problems] == [RecordCode.VERIFICATION_MISMATCH]


def test_a_sidecar_linked_from_outside_the_tree_is_not_read(verified, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere") / "x.verify.json"
    side = verified.with_name(verified.stem + ".verify.json")
    outside.write_bytes(side.read_bytes())
    side.unlink()
    side.symlink_to(outside)
    report = validate_file(verified, root=verified.parent.parent)
    assert [p.code for p in report.problems] == [RecordCode.VERIFICATION_MISMATCH]
    assert "it was not read" in report.problems[0].message


def test_a_fifo_in_place_of_the_sidecar_is_refused_without_hanging(verified):
    side = verified.with_name(verified.stem + ".verify.json")
    side.unlink()
    os.mkfifo(side)
    report = validate_file(verified)
    assert [p.code for p in report.problems] == [RecordCode.VERIFICATION_MISMATCH]


def test_require_verified_fails_each_fabricated_citation_at_its_line(verified):
    report = validate_file(verified, require_verified=True)
    assert [(p.code, p.turn) for p in report.problems] == [(RecordCode.CITATION_FABRICATED, 1)]
    assert report.problems[0].line is not None
    line = verified.read_text().split("\n")[report.problems[0].line - 1]
    assert line.strip() == "- " + report.problems[0].message.split()[2]  # the artifact's line of the dead link


def test_require_verified_fails_a_missing_sidecar(verified):
    verified.with_name(verified.stem + ".verify.json").unlink()
    assert validate_file(verified).valid
    assert [p.code for p in validate_file(verified, require_verified=True).problems] == [
        RecordCode.VERIFICATION_MISSING
    ]
