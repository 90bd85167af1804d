"""Hostile local input: state files written by someone else, shared folders, characters
that would break the artifact's YAML header. Each test reproduces an attack or a loss
found by an audit, then checks the refusal (docs/protocol.md sections 3 and 6)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from rp1_duel.coordination import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.files import MAX_SOURCE_BYTES
from rp1_duel.record import FrontMatter, ParticipantEntry, validate_file
from rp1_duel.vocabulary import EventType

from helpers import DUEL, claim, join, make_turn


def code_of(call) -> str:
    with pytest.raises(DuelError) as caught:
        call()
    return caught.value.code


def state_file(debate_dir: Path, duel_id: str) -> Path:
    return debate_dir / ".duel" / "duels" / duel_id / "state.json"


def plant(debate_dir: Path, duel_id: str, **fields: object) -> None:
    path = state_file(debate_dir, duel_id)
    state = json.loads(path.read_bytes())
    state.update(fields)
    path.write_text(json.dumps(state))


def test_a_planted_artifact_path_outside_the_debate_dir_is_never_written(service, source, debate_dir, tmp_path):
    alice = join(service, source, "Alice")
    victim = tmp_path / "victim" / "authorized_keys"
    victim.parent.mkdir()
    victim.write_text("ssh-ed25519 AAAA mine\n")
    plant(debate_dir, alice.duel_id, artifact="../victim/authorized_keys", topic="ssh-ed25519 AAAA attacker")
    assert code_of(lambda: join(service, source, "Bob")) == "STATE_CORRUPT"
    assert code_of(lambda: service.claim_lock(alice.seat)) == "STATE_CORRUPT"
    assert victim.read_text() == "ssh-ed25519 AAAA mine\n"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("id", "../../x"),
        ("topic", "two\nlines"),
        ("topic_slug", "not-the-topics-slug"),
        ("source_path", "relative.md"),
        ("source_sha256", "zz"),
        ("status", "OPEN"),
        ("outcome", "WON"),
    ],
)
def test_identity_fields_of_a_state_file_are_checked_on_load(service, source, debate_dir, field, value):
    alice = join(service, source, "Alice")
    plant(debate_dir, alice.duel_id, **{field: value})
    assert code_of(lambda: service.status(alice.duel_id)) == "STATE_CORRUPT"


@pytest.mark.parametrize("name", ["Mallory\ufffe", "Mal\x7flory", "Mal\u0085lory", "Mal\u202elory"])
def test_a_participant_named_with_a_planted_character_is_refused_on_load(service, source, debate_dir, name):
    alice = join(service, source, "Alice")
    state = json.loads(state_file(debate_dir, alice.duel_id).read_bytes())
    state["participants"][0]["display_name"] = name
    state_file(debate_dir, alice.duel_id).write_text(json.dumps(state))
    assert code_of(lambda: service.status(alice.duel_id)) == "STATE_CORRUPT"


def test_the_state_folder_is_private_whatever_the_umask(debate_dir, source):
    old = os.umask(0)
    try:
        join(DuelService(debate_dir), source, "Alice")
    finally:
        os.umask(old)
    for folder in (debate_dir / ".duel", debate_dir / ".duel" / "duels"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_a_state_folder_others_can_write_is_refused(service, source, debate_dir):
    alice = join(service, source, "Alice")
    (debate_dir / ".duel").chmod(0o777)
    assert code_of(lambda: join(service, source, "Bob")) == "DEBATE_DIR_INVALID"
    assert code_of(lambda: service.status(alice.duel_id)) == "DEBATE_DIR_INVALID"
    (debate_dir / ".duel").chmod(0o700)
    assert service.status(alice.duel_id).participant_count == 1


@pytest.mark.parametrize("name", ["Eve\ufffe", "Eve\x7f", "E\u0085ve", "Eve\ud800", "Eve\U000f0000"])
def test_a_name_that_would_break_the_yaml_header_is_refused_at_join(service, source, name):
    join(service, source, "Alice")
    assert code_of(lambda: join(service, source, name)) == "INVALID_ARGUMENT"


def test_control_characters_in_the_sources_first_heading_do_not_break_the_duel(service, tmp_path):
    source = tmp_path / "design.md"
    source.write_text(
        "# Lease\x7f design\u0085 notes\n\n## Lease semantics\nLeases expire after fifteen minutes "
        "unless refreshed.\n\n## Failure handling\nA crashed holder loses the floor.\n"
    )
    alice = join(service, source, "Alice", harness="h", model_id="m")
    bob = join(service, source, "Bob", harness="h", model_id="m")
    assert service.status(alice.duel_id).duel.topic == "Lease design notes"
    for number, (player, name) in enumerate([(alice, "Alice"), (bob, "Bob")], start=1):
        appended = service.append(player.seat, claim(service, player), make_turn(number, name, "h", "m"), release=True)
    assert validate_file(appended.debate_path).valid


def test_the_yaml_header_round_trips_any_text_it_is_given():
    tricky = "a\x7fb\u0085c\ufffed\u2028e \"quoted\" and 'single' : # not a comment"
    front = FrontMatter(
        duel_id="d",
        topic=tricky,
        topic_slug="t",
        source_path="../s.md",
        source_sha256="0" * 64,
        schedule=DUEL,
        status="ACTIVE",
        outcome=None,
        created_at="2026-11-23T00:00:00.000Z",
        closed_at=None,
        participants=(
            ParticipantEntry(id="p-00000000", seat=1, display_name=tricky, harness="h", model_id="m", joined_at=None),
        ),
    )
    assert FrontMatter.parse(front.to_yaml()) == front


def test_a_source_too_large_to_debate_is_refused_at_join_without_reading_it_all(service, tmp_path):
    huge = tmp_path / "huge.md"
    with open(huge, "wb") as handle:
        handle.write(b"# Huge\n")
        handle.truncate(MAX_SOURCE_BYTES + 1)

    with pytest.raises(DuelError) as refused:
        join(service, huge, "Alice")

    assert refused.value.code == "TARGET_UNREADABLE"
    assert "larger than 16 MiB" in refused.value.message


def test_a_source_grown_too_large_mid_duel_is_told_and_turns_go_on_against_the_pinned_version(service, source):
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    join(service, source, "Bob", harness="codex", model_id="gpt-x")
    lease = claim(service, alice)
    with open(source, "ab") as handle:
        handle.truncate(MAX_SOURCE_BYTES + 1)

    appended = service.append(alice.seat, lease, make_turn(1, "Alice", "claude-code", "claude-x"))

    assert appended.turn_number == 1
    # Too large to hash within the bound: not read, so not told either; the pinned copy decides.
    assert service.events(alice.duel_id, (EventType.SOURCE_CHANGED,)) == []


def test_a_pinned_copy_edited_behind_the_service_is_target_unreadable(service, source, debate_dir):
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    join(service, source, "Bob", harness="codex", model_id="gpt-x")
    pinned = debate_dir / ".duel" / "duels" / alice.duel_id / "source"
    pinned.write_text("# Something else\n", encoding="utf-8")

    with pytest.raises(DuelError) as refused:
        service.append(alice.seat, claim(service, alice), make_turn(1, "Alice", "claude-code", "claude-x"))

    assert refused.value.code == "TARGET_UNREADABLE"
    assert "pinned copy no longer has the recorded hash" in refused.value.message
    assert refused.value.details["next_step"] == "close"
