"""Signed turns: a participant signs each turn with an SSH key (`ssh-keygen -Y sign`), the
signature lives in the artifact, and `duel validate --allowed-signers FILE` proves who wrote
each turn, where the hash chain alone proves only consistency. Real keys, real ssh-keygen."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from rp1_duel.coordination import DuelSealed, DuelService, Provenance, Usage
from rp1_duel.errors import DuelError
from rp1_duel.record import ArtifactReport, FrontMatter, parse, signatures, validate_file
from rp1_duel.record.artifact import conclusion_text, parse_conclusion
from rp1_duel.review.report import Report
from rp1_duel.review.report_files import read_report
from rp1_duel.review.report_html import render_html
from rp1_duel.review.report_markdown import render_markdown
from rp1_duel.vocabulary import EventType

from helpers import Player, ToolResult, claim, join, make_turn, run_tools

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen (OpenSSH) is not installed")

ALICE = ("Alice", "claude-code", "claude-x")  # as the `pair` fixture seats them
BOB = ("Bob", "codex", "gpt-x")
STANCES = {1: "OPEN_TO_DEBATE", 2: "ACCEPTING_CONSENSUS", 3: "ACCEPTING_CONSENSUS"}  # ACCEPTED_CONSENSUS at turn 3


@dataclass(frozen=True)
class Keys:
    alice: Path
    bob: Path
    mallory: Path  # a real key the allowed signers file does not name
    allowed: Path  # names alice@example.com and bob@example.com


def new_key(folder: Path, name: str, passphrase: str = "") -> Path:
    path = folder / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C", name, "-f", str(path)],
        check=True,
        stdin=subprocess.DEVNULL,
    )
    return path


def public(key: Path) -> str:
    kind, blob, *_ = key.with_suffix(".pub").read_text().split()
    return f"{kind} {blob}"


@pytest.fixture(scope="module")
def key_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("keys")
    for name in ("alice", "bob", "mallory"):
        new_key(folder, name)
    return folder


@pytest.fixture
def keys(key_folder: Path, tmp_path: Path) -> Keys:
    """The module's keys (generated once), with an allowed signers file of the test's own."""
    alice, bob, mallory = (key_folder / name for name in ("alice", "bob", "mallory"))
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"alice@example.com {public(alice)}\nbob@example.com {public(bob)}\n")
    return Keys(alice, bob, mallory, allowed)


def turn(n: int) -> str:
    return make_turn(n, *(ALICE if n % 2 else BOB), stance=STANCES[n])


def play(
    service: DuelService,
    pair: tuple[Player, Player],
    keys: dict[int, Path | None],
    upto: int = 3,
    *,
    close: bool = True,
) -> Path:
    """Turns 1..upto, seat 1 signing with keys[1] and seat 2 with keys[2]; closed, and sealed with the
    closer's key, once an outcome is reached."""
    result = None
    for n in range(1, upto + 1):
        player = pair[(n - 1) % 2]
        lease = claim(service, player)
        result = service.append(player.seat, lease, turn(n), release=True, signing_key=keys[2 - n % 2])
        assert result.signed == (keys[2 - n % 2] is not None)
        if result.terminal_outcome and close:
            service.release_lock(
                player.seat, lease, close=True, outcome=result.terminal_outcome, signing_key=keys[2 - n % 2]
            )
    assert result is not None
    return Path(result.debate_path)


def codes(report: ArtifactReport) -> list[tuple[str, int | None]]:
    return [(p.code, p.turn) for p in report.problems]


def statuses(report: ArtifactReport) -> list[tuple[int, str, str | None]]:
    return [(s.turn, s.status, s.signer) for s in report.signatures]


def rehash_edited_turn(artifact: Path, number: int, old: str, new: str) -> None:
    """Edit turn ``number`` and recompute its sha256 and the next turn's prev: a consistent chain."""
    text = artifact.read_text(encoding="utf-8")
    block = next(b for b in parse(text).blocks if b.n == number)
    assert old in block.text
    edited = block.text.replace(old, new, 1)
    new_sha = hashlib.sha256(edited.encode()).hexdigest()
    artifact.write_text(text.replace(block.text, edited, 1).replace(block.sha256, new_sha), encoding="utf-8")


def resign(artifact: Path, number: int, key: Path) -> None:
    """Replace turn ``number``'s signature with one by ``key`` over the turn as it now stands."""
    text = artifact.read_text(encoding="utf-8")
    parsed = parse(text)
    block = next(b for b in parsed.blocks if b.n == number)
    front = FrontMatter.parse(parsed.front_matter)
    message = signatures.turn_message(
        front.duel_id,
        source_sha256=front.source_sha256,
        n=number,
        seat=2 - number % 2,
        prev=block.prev,
        sha256=block.sha256,
    )
    assert block.signature is not None
    artifact.write_text(text.replace(block.signature, signatures.sign(message, key)), encoding="utf-8")


EDIT = ("matters because reviewers read turn 2 later", "matters because auditors read turn 2 later")


# -- the problem: the chain proves consistency, not authorship ----------------------------------


def test_unsigned_turn_edited_and_rehashed_is_valid_without_allowed_signers_and_missing_with(service, pair, keys):
    artifact = play(service, pair, {1: None, 2: None})
    rehash_edited_turn(artifact, 2, *EDIT)
    assert validate_file(artifact).valid  # what issue 14 item 5 describes
    report = validate_file(artifact, allowed_signers=keys.allowed)
    missing = [("SIGNATURE_MISSING", 1), ("SIGNATURE_MISSING", 2), ("SIGNATURE_MISSING", 3), ("SEAL_MISSING", None)]
    assert codes(report) == missing
    assert statuses(report) == [(1, "unsigned", None), (2, "unsigned", None), (3, "unsigned", None)]


def test_signed_duel_validates_with_allowed_signers_and_names_each_turns_signer(service, pair, keys):
    artifact = play(service, pair, {1: keys.alice, 2: keys.bob})
    report = validate_file(artifact, allowed_signers=keys.allowed)
    assert report.valid, report.to_dict()
    assert report.outcome == "ACCEPTED_CONSENSUS"
    assert statuses(report) == [
        (1, "verified", "alice@example.com"),
        (2, "verified", "bob@example.com"),
        (3, "verified", "alice@example.com"),
    ]
    assert report.notes == []


def test_signed_duel_without_allowed_signers_is_checked_for_integrity_only(service, pair, keys):
    artifact = play(service, pair, {1: keys.alice, 2: keys.bob})
    report = validate_file(artifact)
    assert report.valid
    assert statuses(report) == [(1, "intact", None), (2, "intact", None), (3, "intact", None)]
    assert any("integrity only" in note for note in report.notes)


def test_signed_turn_edited_and_rehashed_with_its_chain_is_signature_invalid(service, pair, keys):
    artifact = play(service, pair, {1: keys.alice, 2: keys.bob})
    rehash_edited_turn(artifact, 2, *EDIT)
    for allowed in (keys.allowed, None):
        report = validate_file(artifact, allowed_signers=allowed)
        # The chain holds; turn 2's text and turn 3's prev no longer match what was signed.
        assert codes(report) == [("SIGNATURE_INVALID", 2), ("SIGNATURE_INVALID", 3)], report.to_dict()


def test_turn_resigned_with_a_key_not_in_allowed_signers_is_untrusted(service, pair, keys):
    artifact = play(service, pair, {1: keys.alice, 2: keys.bob})
    resign(artifact, 2, keys.mallory)  # Bob's only turn: his seat's key is whichever signed it
    assert validate_file(artifact).valid  # integrity alone cannot tell Mallory from Bob
    report = validate_file(artifact, allowed_signers=keys.allowed)
    assert codes(report) == [("SIGNATURE_UNTRUSTED", 2)]
    assert statuses(report)[1] == (2, "untrusted", None)


def test_a_seat_signed_by_another_principal_is_signer_changed(service, pair, keys):
    artifact = play(service, pair, {1: keys.alice, 2: keys.bob})
    resign(artifact, 3, keys.bob)  # Alice's seat, Bob's key
    report = validate_file(artifact, allowed_signers=keys.allowed)
    assert codes(report) == [("SIGNER_CHANGED", 3)]
    message = report.problems[0].message
    assert message.startswith("turn 3 is signed by bob@example.com (SHA256:")
    assert "but seat 1's turn 1 by alice@example.com (SHA256:" in message
    assert codes(validate_file(artifact)) == [("SIGNER_CHANGED", 3)]  # a changed key shows without the file too


def test_one_key_for_both_seats_is_refused_at_the_append_that_would_share_it(service, pair, keys):
    artifact = play(service, pair, {1: keys.alice, 2: None}, upto=1)
    bob = pair[1]
    with pytest.raises(DuelError) as caught:
        service.append(bob.seat, claim(service, bob), turn(2), signing_key=keys.alice)
    assert caught.value.code == "SIGNING_FAILED"
    assert "already signs seat 1's turns: one key signs one seat" in caught.value.message
    assert len(parse(artifact.read_text()).blocks) == 1


def test_a_record_whose_two_seats_share_a_key_or_a_principal_is_signer_shared(service, pair, keys, tmp_path):
    artifact = play(service, pair, {1: keys.alice, 2: keys.bob})
    same_principal = tmp_path / "one_principal"
    same_principal.write_text(f"alice@example.com {public(keys.alice)}\nalice@example.com {public(keys.bob)}\n")
    report = validate_file(artifact, allowed_signers=same_principal)
    assert codes(report) == [("SIGNER_SHARED", 2)]
    assert "seat 1 and seat 2 are both signed by alice@example.com" in report.problems[0].message
    resign(artifact, 2, keys.alice)  # one key, both seats: forged after the fact
    assert codes(validate_file(artifact)) == [("SIGNER_SHARED", 2)]
    assert codes(validate_file(artifact, allowed_signers=keys.allowed)) == [("SIGNER_SHARED", 2)]


def test_signed_turns_moved_into_another_duel_do_not_verify(service, pair, keys):
    artifact = play(service, pair, {1: keys.alice, 2: keys.bob})
    text = artifact.read_text()
    duel_id = pair[0].duel_id
    artifact.write_text(text.replace(f'duel_id: "{duel_id}"', 'duel_id: "2020-01-01-other"', 1))
    report = validate_file(artifact, allowed_signers=keys.allowed)
    moved = [("SIGNATURE_INVALID", 1), ("SIGNATURE_INVALID", 2), ("SIGNATURE_INVALID", 3), ("SEAL_INVALID", None)]
    assert codes(report) == moved


def test_front_matter_that_no_signed_message_holds_is_signature_invalid(service, pair, keys):
    artifact = play(service, pair, {1: keys.alice, 2: keys.bob}, upto=1)
    text = artifact.read_text()
    artifact.write_text(text.replace(f'duel_id: "{pair[0].duel_id}"', 'duel_id: "x\\nn=9"', 1))
    report = validate_file(artifact)
    assert codes(report) == [("SIGNATURE_INVALID", 1)]
    assert "cannot be rebuilt" in report.problems[0].message


def test_without_ssh_keygen_signatures_are_noted_unchecked_not_invalid(service, pair, keys, monkeypatch):
    artifact = play(service, pair, {1: keys.alice, 2: keys.bob}, upto=1)
    monkeypatch.setenv("PATH", "")
    report = validate_file(artifact)
    assert report.valid
    assert statuses(report) == [(1, "unchecked", None)]
    assert any(note.startswith("signatures were not checked: ssh-keygen not found") for note in report.notes)
    assert codes(validate_file(artifact, allowed_signers=keys.allowed)) == [("SIGNATURE_INVALID", 1)]


# -- signing in the service ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("missing", "No such file"),
        ("locked", "passphrase"),
        ("not-a-key", "not-a-key"),
    ],
)
def test_key_that_cannot_sign_is_signing_failed_with_nothing_appended_and_the_lease_usable(
    service, pair, tmp_path, monkeypatch, key, why
):
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)  # no agent to hold the locked key
    path = tmp_path / key
    if key == "locked":
        new_key(tmp_path, key, passphrase="secret words")
    elif key == "not-a-key":
        path.write_text("just text\n")
    alice = pair[0]
    artifact = Path(service.status(alice.duel_id).duel.debate_path)
    before = artifact.read_bytes()
    lease = claim(service, alice)
    started = time.monotonic()
    with pytest.raises(DuelError) as caught:
        service.append(alice.seat, lease, turn(1), signing_key=path)
    assert time.monotonic() - started < 5  # a passphrase prompt fails at once; it never waits for a person
    assert caught.value.code == "SIGNING_FAILED"
    assert why in caught.value.message and "\n" not in caught.value.message
    assert artifact.read_bytes() == before
    assert service.status(alice.duel_id).turn_count == 0
    assert service.append(alice.seat, lease, turn(1)).turn_number == 1  # the same lease still writes


def test_public_key_whose_private_half_is_in_ssh_agent_signs(service, pair, keys, tmp_path, monkeypatch):
    locked = new_key(tmp_path, "locked", passphrase="secret words")
    askpass = tmp_path / "askpass"
    askpass.write_text("#!/bin/sh\necho 'secret words'\n")
    askpass.chmod(0o700)
    socket = tmp_path / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(socket)], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 5
        while not socket.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        env = {**os.environ, "SSH_AUTH_SOCK": str(socket), "SSH_ASKPASS": str(askpass), "SSH_ASKPASS_REQUIRE": "force"}
        subprocess.run(
            ["ssh-add", "-q", str(locked)], env=env, check=True, stdin=subprocess.DEVNULL, capture_output=True
        )
        monkeypatch.setenv("SSH_AUTH_SOCK", str(socket))
        locked.unlink()  # only the public half is left on disk
        artifact = play(service, pair, {1: locked.with_suffix(".pub"), 2: None}, upto=1)
    finally:
        agent.terminate()
        agent.wait(timeout=5)
    keys.allowed.write_text(keys.allowed.read_text() + f"carol@example.com {public(locked)}\n")
    assert statuses(validate_file(artifact, allowed_signers=keys.allowed)) == [(1, "verified", "carol@example.com")]


def test_signature_lines_survive_later_appends_the_close_and_the_tamper_check(service, pair, keys):
    artifact = play(service, pair, {1: keys.alice, 2: None}, upto=1)
    first = parse(artifact.read_text()).blocks[0].signature
    assert first is not None
    play_rest = [(2, None), (3, keys.alice)]
    for n, key in play_rest:
        player = pair[(n - 1) % 2]
        lease = claim(service, player)
        result = service.append(player.seat, lease, turn(n), release=True, signing_key=key)
    service.release_lock(pair[0].seat, lease, close=True, outcome=result.terminal_outcome, signing_key=keys.alice)
    blocks = parse(artifact.read_text()).blocks
    assert [b.signature is not None for b in blocks] == [True, False, True]
    assert blocks[0].signature == first
    assert service.status(pair[0].duel_id).duel.invalid_reason is None
    report = validate_file(artifact, allowed_signers=keys.allowed)
    assert codes(report) == [("SIGNATURE_MISSING", 2)]


def test_signature_line_edited_during_the_duel_is_put_back_from_the_state(service, pair, keys):
    artifact = play(service, pair, {1: keys.alice, 2: keys.bob}, upto=1)
    signed = artifact.read_text()
    first = parse(signed).blocks[0].signature
    assert first is not None
    artifact.write_text(signed.replace(first, first[:-8] + "AAAAAAA="))  # well formed, wrong
    bob = pair[1]
    service.append(bob.seat, claim(service, bob), turn(2), release=True, signing_key=keys.bob)
    assert parse(artifact.read_text()).blocks[0].signature == first
    assert validate_file(artifact, allowed_signers=keys.allowed).valid


def test_tampered_record_closed_invalidated_keeps_every_signature_line(service, pair, keys):
    artifact = play(service, pair, {1: keys.alice, 2: keys.bob}, upto=2)
    rehash_edited_turn(artifact, 2, *EDIT)
    alice = pair[0]
    lease = claim(service, alice)
    with pytest.raises(DuelError) as caught:
        service.append(alice.seat, lease, turn(3))
    assert caught.value.code == "ARTIFACT_TAMPERED"
    service.release_lock(alice.seat, lease, close=True, outcome="INVALIDATED")
    blocks = parse(artifact.read_text()).blocks
    assert [b.signature is not None for b in blocks] == [True, True]
    report = validate_file(artifact, allowed_signers=keys.allowed)
    assert codes(report) == [("SIGNATURE_INVALID", 2), ("SEAL_MISSING", None)]


def test_unsigned_duel_writes_the_artifact_as_before(service, pair):
    artifact = play(service, pair, {1: None, 2: None})
    text = artifact.read_text()
    blocks = parse(text).blocks
    assert "duel:signature" not in text
    region = "\n".join(
        f"<!-- duel:turn n={b.n} sha256={b.sha256} prev={b.prev} -->\n{b.text}<!-- /duel:turn -->\n" for b in blocks
    )
    assert f"\n\n{region}\n## Terminal Conclusion\n" in text
    state = json.loads((artifact.parent / ".duel" / "duels" / pair[0].duel_id / "state.json").read_text())
    assert [t["signature"] for t in state["turns"]] == [None, None, None]
    assert validate_file(artifact).notes == []


# -- forged and misplaced signature lines -----------------------------------------------------


def signed_text(service, pair, keys) -> tuple[Path, str, str]:
    artifact = play(service, pair, {1: keys.alice, 2: None}, upto=2)
    text = artifact.read_text()
    line = next(line for line in text.splitlines() if line.startswith("<!-- duel:signature n=1 "))
    return artifact, text, line


def test_misplaced_or_malformed_signature_lines_are_structural_problems(service, pair, keys):
    _, text, line = signed_text(service, pair, keys)
    body = line.split("ssh=")[1].removesuffix(" -->")
    second_close = text.rindex("<!-- /duel:turn -->\n") + len("<!-- /duel:turn -->\n")
    forged = {
        "a blank line before it": text.replace("<!-- /duel:turn -->\n" + line, "<!-- /duel:turn -->\n\n" + line),
        "another turn's number": text[:second_close] + line + "\n" + text[second_close:],
        "twice": text.replace(line, line + "\n" + line),
        "before any turn": text.replace(line + "\n", "").replace("## Participants", line + "\n## Participants"),
        "inside a turn": text.replace("**Agreements**", line + "\n**Agreements**", 1),
        "not base64": text.replace(line, line.replace(body, "not base64!")),
        "too long": text.replace(line, line.replace(body, "A" * (signatures.SIGNATURE_MAX_CHARS + 4))),
        "a number no int holds": text.replace(line, line.replace("n=1", "n=" + "1" * 5000)),
    }
    for name, forgery in forged.items():
        assert parse(forgery).problems, name


def test_misplaced_signature_line_in_a_live_artifact_is_tampering(service, pair, keys):
    artifact, text, line = signed_text(service, pair, keys)
    artifact.write_text(text.replace("<!-- /duel:turn -->\n" + line, "<!-- /duel:turn -->\n\n" + line))
    alice = pair[0]
    lease = claim(service, alice)
    with pytest.raises(DuelError) as caught:
        service.append(alice.seat, lease, turn(3))
    assert caught.value.code == "ARTIFACT_TAMPERED"
    report = validate_file(artifact)
    assert [p.code for p in report.problems] == ["STRUCTURE"]


def test_signature_copied_onto_an_unsigned_turn_is_signature_invalid(service, pair, keys):
    artifact, text, line = signed_text(service, pair, keys)
    second_close = text.rindex("<!-- /duel:turn -->\n") + len("<!-- /duel:turn -->\n")
    artifact.write_text(text[:second_close] + line.replace("n=1", "n=2") + "\n" + text[second_close:])
    report = validate_file(artifact)
    assert codes(report) == [("SIGNATURE_INVALID", 2)]


def test_state_with_a_signature_that_is_not_base64_is_state_corrupt(service, pair, keys, debate_dir):
    play(service, pair, {1: keys.alice, 2: None}, upto=1)
    path = debate_dir / ".duel" / "duels" / pair[0].duel_id / "state.json"
    state = json.loads(path.read_text())
    state["turns"][0]["signature"] = "AAAA -->\n<!-- duel:turn n=9"
    path.write_text(json.dumps(state))
    with pytest.raises(DuelError) as caught:
        service.status(pair[0].duel_id)
    assert caught.value.code == "STATE_CORRUPT"


# -- the seat's declared signer, and the sealed ending (issue 25 item 2) -------------------------


def declared_pair(service: DuelService, source: Path) -> tuple[Player, Player]:
    """Alice and Bob, each declaring at the join the principal the allowed signers file gives their key."""
    return (
        join(service, source, ALICE[0], harness=ALICE[1], model_id=ALICE[2], signer="alice@example.com"),
        join(service, source, BOB[0], harness=BOB[1], model_id=BOB[2], signer="bob@example.com"),
    )


def test_keys_swapped_between_seats_that_declared_their_signers_are_signer_changed(service, source, keys):
    artifact = play(service, declared_pair(service, source), {1: keys.bob, 2: keys.alice})
    report = validate_file(artifact, allowed_signers=keys.allowed)
    assert codes(report)[:3] == [("SIGNER_CHANGED", 1), ("SIGNER_CHANGED", 2), ("SIGNER_CHANGED", 3)]
    assert "turn 1 is signed by bob@example.com" in report.problems[0].message
    assert "but seat 1 declared alice@example.com as its signer at its join" in report.problems[0].message
    assert ("SEAL_INVALID", None) in codes(report)  # Alice's seat sealed it with Bob's key too


def test_declared_signers_validate_and_are_written_in_the_front_matter(service, source, keys):
    artifact = play(service, declared_pair(service, source), {1: keys.alice, 2: keys.bob})
    front = FrontMatter.parse(parse(artifact.read_text()).front_matter)
    assert [(p.seat, p.signer) for p in front.participants] == [(1, "alice@example.com"), (2, "bob@example.com")]
    report = validate_file(artifact, allowed_signers=keys.allowed)
    assert report.valid, report.problems
    assert [(s.seat, s.status, s.signer) for s in report.seals] == [(1, "verified", "alice@example.com")]


def test_a_declared_signer_edited_in_the_front_matter_breaks_every_signature_of_its_seat(service, source, keys):
    artifact = play(service, declared_pair(service, source), {1: keys.alice, 2: keys.bob})
    text = artifact.read_text()
    artifact.write_text(text.replace('signer: "bob@example.com"', 'signer: "alice@example.com"', 1))
    found = codes(validate_file(artifact, allowed_signers=keys.allowed))
    assert ("SIGNATURE_INVALID", 2) in found and ("SIGNER_SHARED", None) in found


def test_a_signer_is_declared_once_for_one_seat(service, source):
    alice = join(service, source, ALICE[0], harness=ALICE[1], model_id=ALICE[2], signer="alice@example.com")
    with pytest.raises(DuelError) as caught:
        join(service, source, BOB[0], harness=BOB[1], model_id=BOB[2], signer="alice@example.com")
    assert caught.value.code == "INVALID_ARGUMENT"
    assert caught.value.message == "seat 1 declared signer alice@example.com: one signer holds one seat"
    assert service.status(alice.duel_id).participant_count == 1  # Bob was not seated
    token = {"participant_token": alice.seat.token}
    with pytest.raises(DuelError) as caught:
        join(service, source, ALICE[0], harness=ALICE[1], model_id=ALICE[2], signer="bob@example.com", **token)
    assert caught.value.code == "INVALID_ARGUMENT"
    assert caught.value.message == "seat 1 declared signer alice@example.com: it cannot change"
    with pytest.raises(DuelError) as caught:
        join(service, source, ALICE[0], harness=ALICE[1], model_id=ALICE[2], signer="a b", **token)
    assert caught.value.code == "INVALID_ARGUMENT"
    again = join(service, source, ALICE[0], harness=ALICE[1], model_id=ALICE[2], signer="alice@example.com", **token)
    assert again.seat == alice.seat


def test_a_record_cut_short_and_closed_timeout_by_hand_breaks_its_seal(service, pair, keys):
    artifact = play(service, pair, {1: keys.alice, 2: keys.bob})
    assert validate_file(artifact, allowed_signers=keys.allowed).valid
    text = artifact.read_text()
    parsed = parse(text)
    last = parsed.blocks[-1]
    start = text.index(f"<!-- duel:turn n={last.n} ")
    end = text.index("-->\n", text.index(f"<!-- duel:signature n={last.n} ")) + 4
    cut = (text[:start] + text[end:]).replace("ACCEPTED_CONSENSUS", "TIMEOUT")
    artifact.write_text(cut)
    report = validate_file(artifact, allowed_signers=keys.allowed)
    assert codes(report) == [("SEAL_INVALID", None)]
    assert "turns were cut off or added" in report.problems[0].message
    assert codes(validate_file(artifact)) == [("SEAL_INVALID", None)]  # the seal's integrity needs no file
    unsealed = "\n".join(line for line in cut.split("\n") if not line.startswith("<!-- duel:seal "))
    artifact.write_text(unsealed)
    assert codes(validate_file(artifact, allowed_signers=keys.allowed)) == [("SEAL_MISSING", None)]
    assert any("no seat sealed the ending" in note for note in validate_file(artifact).notes)


def test_the_other_seat_seals_after_the_close_once_and_only_with_its_own_key(service, pair, keys):
    alice, bob = pair
    artifact = play(service, pair, {1: keys.alice, 2: keys.bob})  # Alice closed and sealed it
    with pytest.raises(DuelError) as caught:
        service.seal(bob.seat, keys.mallory)
    assert caught.value.code == "SIGNING_FAILED"
    assert "seat 2 signs with SHA256:" in caught.value.message
    first = service.seal(bob.seat, keys.bob)
    assert (first.sealed, first.sealed_seats, first.outcome) == (True, [1, 2], "ACCEPTED_CONSENSUS")
    assert service.seal(bob.seat, keys.bob).sealed is False
    assert service.seal(alice.seat, keys.alice).sealed is False
    report = validate_file(artifact, allowed_signers=keys.allowed)
    assert report.valid, report.problems
    assert [(s.seat, s.signer) for s in report.seals] == [(1, "alice@example.com"), (2, "bob@example.com")]
    assert "  ending sealed by seat 2: signed by bob@example.com" in report.to_text()
    sealed = [(e.participant_id, e.data) for e in service.events(alice.duel_id, (EventType.DUEL_SEALED,))]
    assert sealed == [(alice.seat.participant_id, DuelSealed(1)), (bob.seat.participant_id, DuelSealed(2))]


def test_a_provisional_label_is_sealed_with_the_ending_and_the_other_seats_seal_keeps_it(service, pair, keys):
    bob = pair[1]
    # Bob (turn 2) asked for gpt-x, but a claude answered: every seat was a claude model.
    asked = Provenance(provider="openai", requested_model="gpt-x", served_model="claude-y", reasoning=None)
    service.record_usage(bob.seat, 2, Usage(requests=1), provenance=asked)
    artifact = play(service, pair, {1: keys.alice, 2: keys.bob})  # Alice closed and sealed it
    row = "| Provisional | every seat a claude model (claude-x, claude-y) |"
    assert row in artifact.read_text().splitlines()
    assert service.seal(bob.seat, keys.bob).sealed
    assert row in artifact.read_text().splitlines()
    assert validate_file(artifact, allowed_signers=keys.allowed).valid
    artifact.write_text(artifact.read_text().replace(row, row.replace("claude-y", "claude-z")))
    assert codes(validate_file(artifact, allowed_signers=keys.allowed)) == [("SEAL_INVALID", None)] * 2


def test_a_seal_is_refused_while_the_duel_is_open_and_on_an_edited_conclusion(service, pair, keys):
    alice, bob = pair
    artifact = play(service, pair, {1: keys.alice, 2: keys.bob}, upto=1)
    with pytest.raises(DuelError) as caught:
        service.seal(alice.seat, keys.alice)
    assert caught.value.code == "INVALID_ARGUMENT"
    play_turns = [(2, bob, keys.bob), (3, alice, keys.alice)]
    for n, player, key in play_turns:
        lease = claim(service, player)
        service.append(player.seat, lease, turn(n), signing_key=key, release=n < 3)
    service.release_lock(alice.seat, lease, close=True, outcome="ACCEPTED_CONSENSUS")  # closed unsealed
    text = artifact.read_text()
    assert "| Reason |" not in text  # a consensus has no reason: no row says `—`
    edited = text.replace("| Outcome | ACCEPTED_CONSENSUS |", "| Outcome | ACCEPTED_CONSENSUS |\n| Reason | agreed |")
    artifact.write_text(edited)
    with pytest.raises(DuelError) as caught:
        service.seal(bob.seat, keys.bob)
    assert caught.value.code == "ARTIFACT_TAMPERED"
    artifact.write_text(text)
    assert service.seal(bob.seat, keys.bob).sealed is True
    assert validate_file(artifact, allowed_signers=keys.allowed).valid


def test_a_conclusion_an_earlier_close_wrote_with_an_empty_reason_row_reads_back_as_written():
    earlier = (
        "| Field | Value |\n|---|---|\n| Outcome | ACCEPTED_CONSENSUS |\n| Closed at | 2026-11-24T10:00:00.000Z |\n"
        "| Candidate convergence | yes |\n| Reason | — |"
    )
    found = parse_conclusion(earlier)
    assert found is not None and found.reason is None
    assert conclusion_text(found) == earlier  # so a seat may still seal a duel closed before this
    assert "| Reason |" not in conclusion_text(replace(found, reason_row=False))


def test_a_close_with_a_key_that_cannot_sign_leaves_the_duel_open(service, pair, keys, tmp_path):
    alice, _ = pair
    play(service, pair, {1: keys.alice, 2: keys.bob}, upto=3, close=False)
    lease = claim(service, alice)
    with pytest.raises(DuelError) as caught:
        service.release_lock(alice.seat, lease, close=True, outcome="ACCEPTED_CONSENSUS", signing_key=tmp_path / "no")
    assert caught.value.code == "SIGNING_FAILED"
    assert service.status(alice.duel_id).duel.status == "ACTIVE"
    closed = service.release_lock(alice.seat, lease, close=True, outcome="ACCEPTED_CONSENSUS", signing_key=keys.alice)
    assert closed.closed


# -- the CLI, as real processes ------------------------------------------------------------------


def duel(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "rp1_duel", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in (env or os.environ).items() if not k.startswith("DUEL_")},
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.mark.slow  # `duel tools` and `duel validate` processes
def test_tools_append_signs_with_the_flag_or_the_environment_and_validate_names_the_signers(
    source, debate_dir, keys, tmp_path
):
    seats = []
    for name, harness, model in (ALICE, BOB):
        joined = run_tools(
            "join",
            "--target",
            str(source),
            "--participant-name",
            name,
            "--harness",
            harness,
            "--model-id",
            model,
            debate_dir=debate_dir,
        ).data
        seats.append(joined)

    def ids(seat: dict) -> tuple[str, ...]:
        return ("--duel-id", seat["duel_id"], "--participant-id", seat["participant_id"])

    for n, (flag, env) in enumerate(
        [(("--signing-key", str(keys.alice)), {}), ((), {"DUEL_SIGNING_KEY": str(keys.bob)})], start=1
    ):
        seat = seats[n - 1]
        auth = {"DUEL_PARTICIPANT_TOKEN": seat["participant_token"], **env}
        lease = run_tools("claim-lock", *ids(seat), debate_dir=debate_dir, env=auth).data["lease_token"]
        appended = run_tools(
            "append",
            *ids(seat),
            "--lease-token",
            lease,
            "--release",
            *flag,
            debate_dir=debate_dir,
            stdin=turn(n).encode(),
            env=auth,
        )
        assert appended.data["signed"] is True
    seat = seats[0]
    auth = {"DUEL_PARTICIPANT_TOKEN": seat["participant_token"]}
    lease = run_tools("claim-lock", *ids(seat), debate_dir=debate_dir, env=auth).data["lease_token"]
    refused = run_tools(
        "append",
        *ids(seat),
        "--lease-token",
        lease,
        "--signing-key",
        str(tmp_path / "nope"),
        debate_dir=debate_dir,
        stdin=turn(3).encode(),
        env=auth,
    )
    assert (refused.code, refused.error["code"]) == (1, "SIGNING_FAILED")

    artifact = Path(seats[0]["debate_path"])
    shown = duel("validate", "--allowed-signers", str(keys.allowed), str(artifact))
    assert shown.returncode == 0, shown.stdout
    assert "  turn 1: signed by alice@example.com\n  turn 2: signed by bob@example.com\n" in shown.stdout
    as_json = json.loads(duel("validate", "--json", "--allowed-signers", str(keys.allowed), str(artifact)).stdout)
    assert as_json["artifacts"][0]["signatures"] == [
        {"turn": 1, "status": "verified", "signer": "alice@example.com"},
        {"turn": 2, "status": "verified", "signer": "bob@example.com"},
    ]
    keys.allowed.write_text(f"alice@example.com {public(keys.alice)}\n")
    untrusted = duel("validate", "--allowed-signers", str(keys.allowed), str(artifact))
    assert untrusted.returncode == 1 and "SIGNATURE_UNTRUSTED" in untrusted.stdout
    missing = duel("validate", "--allowed-signers", str(tmp_path / "none"), str(artifact))
    assert missing.returncode == 2 and "not a readable file" in missing.stderr
    no_ssh = duel("validate", "--allowed-signers", str(keys.allowed), str(artifact), env={**os.environ, "PATH": ""})
    assert no_ssh.returncode == 2 and "needs ssh-keygen" in no_ssh.stderr


@pytest.mark.slow  # two `duel join` processes debate a whole duel
def test_duel_join_signing_key_signs_every_turn_of_a_whole_duel(source, debate_dir, keys, tmp_path):
    scripts = {}
    for name, seat_turns in (("ada", (1, 3)), ("bob", (2,))):
        folder = tmp_path / name
        folder.mkdir()
        for index, n in enumerate(seat_turns):
            (folder / f"{index}.md").write_text(make_turn(n, name.capitalize(), "duel", f"scripted:{name}", STANCES[n]))
        scripts[name] = folder
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUEL_")}

    def start(name: str, key: Path) -> subprocess.Popen[str]:
        argv = [
            sys.executable,
            "-m",
            "rp1_duel",
            "join",
            "--target",
            str(source),
            "--debate-dir",
            str(debate_dir),
            "--model",
            f"scripted:{scripts[name]}",
            "--json",
            "--quiet",
        ]
        return subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**env, "DUEL_SIGNING_KEY": str(key)}
        )

    ada = start("ada", keys.alice)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # Ada takes seat 1
        try:
            if DuelService(debate_dir).status(target=str(source)).participant_count:
                break
        except DuelError:  # no duel yet
            pass
        time.sleep(0.02)
    bob = start("bob", keys.bob)
    results = []
    for process in (ada, bob):
        out, err = process.communicate(timeout=90)
        assert process.returncode == 0 and "Traceback" not in err, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert results[0]["outcome"] == "ACCEPTED_CONSENSUS"
    report = validate_file(results[0]["debate_path"], allowed_signers=keys.allowed)
    assert report.valid, report.to_dict()
    assert statuses(report) == [
        (1, "verified", "alice@example.com"),
        (2, "verified", "bob@example.com"),
        (3, "verified", "alice@example.com"),
    ]


@pytest.mark.slow  # a `duel join` process
def test_duel_join_with_an_unreadable_signing_key_fails_before_taking_a_seat(source, debate_dir, tmp_path):
    (tmp_path / "1.md").write_text("unused")
    proc = duel(
        "join",
        "--target",
        str(source),
        "--debate-dir",
        str(debate_dir),
        "--model",
        f"scripted:{tmp_path}",
        "--signing-key",
        str(tmp_path / "nope"),
        "--json",
    )
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["error"]["code"] == "SIGNING_FAILED"
    assert not (debate_dir / ".duel" / "index.json").exists()


@pytest.mark.slow
def test_validate_checks_at_most_fifty_signatures_however_many_turns_a_file_holds(service, pair, keys, tmp_path):
    artifact = play(service, pair, {1: keys.alice, 2: None}, upto=1)
    text = artifact.read_text()
    line = next(line for line in text.splitlines() if line.startswith("<!-- duel:signature n=1 "))
    # Turn 1 and its signature, 60 times: the chain breaks, but each copy is well formed.
    start = text.index("<!-- duel:turn n=1 ")
    block = text[start : text.index(line) + len(line) + 1]
    copies = "\n".join(block.replace("n=1 ", f"n={n} ") for n in range(1, 61))
    artifact.write_text(text[:start] + copies + text[start + len(block) :])
    started = time.monotonic()
    report = validate_file(artifact, allowed_signers=keys.allowed)
    assert [s.status for s in report.signatures][50:] == ["unchecked"] * 10
    assert ("SIGNATURE_INVALID", 51) in codes(report)
    assert any("only the first 50 turns are checked" in p.message for p in report.problems if p.turn == 51)
    assert time.monotonic() - started < 30


def test_a_signed_panel_turn_names_its_own_seat_and_validates(service, source, keys):
    # Seat 3 writes turns 3 and 6: its signed message says seat=3, not the two-seat odd/even rule.
    from test_panels import PANEL, seat_panel

    players = seat_panel(service, source)
    keys.allowed.write_text(keys.allowed.read_text() + f"mallory@example.com {public(keys.mallory)}\n")
    seat_keys = {1: keys.alice, 2: keys.bob, 3: keys.mallory}  # one key a seat
    path = ""
    for number in range(1, 7):
        seat = 1 + (number - 1) % 3
        player = players[seat]
        stance = "ACCEPTING_CONSENSUS" if number > 3 else "OPEN_TO_DEBATE"
        path = service.append(
            player.seat,
            claim(service, player),
            make_turn(number, *PANEL[seat], stance=stance),
            release=True,
            signing_key=str(seat_keys[seat]),
        ).debate_path
    parsed = parse(Path(path).read_text(encoding="utf-8"))
    front, block = FrontMatter.parse(parsed.front_matter), parsed.blocks[5]
    signature = block.signature
    assert signature is not None

    def verified_as(seat: int) -> str:
        message = signatures.turn_message(
            front.duel_id, source_sha256=front.source_sha256, n=6, seat=seat, prev=block.prev, sha256=block.sha256
        )
        return signatures.check(message, signature, allowed_signers=keys.allowed).status

    assert (verified_as(3), verified_as(2)) == (signatures.VERIFIED, signatures.INVALID)
    report = validate_file(path, allowed_signers=keys.allowed)
    assert report.valid, report.problems
    assert [(s.status, s.signer) for s in report.signatures][2::3] == [(signatures.VERIFIED, "mallory@example.com")] * 2


@pytest.mark.slow  # `duel tools` processes
def test_tools_join_declares_a_signer_release_lock_seals_the_close_and_seal_adds_the_other_seat(
    source, debate_dir, keys
):
    seats = []
    for (name, harness, model), principal in zip((ALICE, BOB), ("alice@example.com", "bob@example.com"), strict=True):
        flags = ("--participant-name", name, "--harness", harness, "--model-id", model, "--signer", principal)
        seats.append(run_tools("join", "--target", str(source), *flags, debate_dir=debate_dir).data)

    def as_seat(n: int, *args: str, stdin: bytes | None = None) -> ToolResult:
        seat = seats[(n - 1) % 2]
        ids = ("--duel-id", seat["duel_id"], "--participant-id", seat["participant_id"])
        env = {
            "DUEL_PARTICIPANT_TOKEN": seat["participant_token"],
            "DUEL_SIGNING_KEY": str((keys.alice, keys.bob)[(n - 1) % 2]),
        }
        return run_tools(args[0], *ids, *args[1:], debate_dir=debate_dir, env=env, stdin=stdin)

    for n in (1, 2, 3):
        lease = as_seat(n, "claim-lock").data["lease_token"]
        appended = as_seat(
            n, "append", "--lease-token", lease, *(() if n == 3 else ("--release",)), stdin=turn(n).encode()
        )
    assert appended.data["terminal_outcome"] == "ACCEPTED_CONSENSUS"
    closed = as_seat(3, "release-lock", "--lease-token", lease, "--close", "--outcome", "ACCEPTED_CONSENSUS")
    assert closed.data["closed"] is True
    sealed = as_seat(2, "seal")
    assert (sealed.data["sealed"], sealed.data["sealed_seats"]) == (True, [1, 2])
    shown = json.loads(
        duel("validate", "--json", "--allowed-signers", str(keys.allowed), seats[0]["debate_path"]).stdout
    )
    assert shown["valid"] is True
    assert shown["artifacts"][0]["seals"] == [
        {"seat": 1, "status": "verified", "signer": "alice@example.com"},
        {"seat": 2, "status": "verified", "signer": "bob@example.com"},
    ]


# -- who signed each seat, as the report shows it (issue 42 item 8) ------------------------------


def fingerprint(key: Path) -> str:
    """``SHA256:…`` of a key, as ssh-keygen prints it and the report names it."""
    return signatures.key_fingerprint(key).split()[1]


def signed_by(report: Report) -> dict[str, list[tuple[str, str | None, str | None, tuple[int, ...]]]]:
    return {p.name: [(g.status, g.principal, g.key, g.turns) for g in p.signed_by] for p in report.participants}


def test_a_report_names_the_principal_that_signed_each_seat_even_keys_swapped_with_no_declared_signer(
    service, pair, keys
):
    artifact = play(service, pair, {1: keys.bob, 2: keys.alice})  # no --signer: this validates (protocol 3, Trust)
    assert validate_file(artifact, allowed_signers=keys.allowed).valid
    report = read_report(artifact, allowed_signers=keys.allowed)
    assert signed_by(report) == {
        "Alice": [("verified", "bob@example.com", fingerprint(keys.bob), (1, 3))],
        "Bob": [("verified", "alice@example.com", fingerprint(keys.alice), (2,))],
    }
    assert "| 1 | Alice | claude-code | claude-x | bob@example.com |" in render_markdown(report)
    assert "<td><code>claude-x</code></td><td>bob@example.com</td>" in render_html(report)
    alice = report.to_dict()["participants"][0]
    assert alice["signed_by"] == [
        {"status": "verified", "principal": "bob@example.com", "key": fingerprint(keys.bob), "turns": [1, 3]}
    ]


def test_without_allowed_signers_a_report_names_the_key_that_signed_each_seat(service, pair, keys):
    artifact = play(service, pair, {1: keys.bob, 2: keys.alice})
    report = read_report(artifact)
    assert signed_by(report)["Alice"] == [("intact", None, fingerprint(keys.bob), (1, 3))]
    assert f"key {fingerprint(keys.bob)} (not checked against allowed signers)" in render_html(report)


def test_a_report_says_unsigned_for_a_seat_whose_turns_carry_no_signature(service, pair, keys):
    artifact = play(service, pair, {1: None, 2: None})
    report = read_report(artifact, allowed_signers=keys.allowed)
    assert signed_by(report) == {"Alice": [("unsigned", None, None, (1, 3))], "Bob": [("unsigned", None, None, (2,))]}
    assert "| 2 | Bob | codex | gpt-x | unsigned |" in render_markdown(report)


def test_a_report_says_so_when_one_seat_s_turns_are_signed_by_more_than_one_principal(service, pair, keys):
    artifact = play(service, pair, {1: keys.alice, 2: keys.bob})
    resign(artifact, 3, keys.bob)
    report = read_report(artifact, allowed_signers=keys.allowed)
    assert [(g.principal, g.turns) for g in report.participants[0].signed_by] == [
        ("alice@example.com", (1,)),
        ("bob@example.com", (3,)),
    ]
    shown = "more than one signer: alice@example.com (turn 1); bob@example.com (turn 3)"
    assert shown in render_markdown(report) and shown in render_html(report)


@pytest.mark.slow  # a `duel report` process
def test_duel_report_allowed_signers_shows_each_seat_s_principal_and_refuses_a_missing_file(service, pair, keys):
    artifact = play(service, pair, {1: keys.bob, 2: keys.alice})
    shown = duel("report", "--format", "json", "--allowed-signers", str(keys.allowed), str(artifact))
    assert shown.returncode == 0, shown.stderr
    participants = json.loads(shown.stdout)["participants"]
    assert [[g["principal"] for g in p["signed_by"]] for p in participants] == [
        ["bob@example.com"],
        ["alice@example.com"],
    ]
    missing = duel("report", "--allowed-signers", str(keys.allowed) + ".missing", str(artifact))
    assert missing.returncode == 2
    assert "is not a readable file" in missing.stderr
