"""The document changes during a duel: the source is pinned at the join, every turn is checked
against the pinned version, every seat is told, and live append and `duel validate` agree."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_participant import claude_env, finish, gpt_env, start, wait_for_seat

from rp1_duel.coordination import DuelService, SourceChanged
from rp1_duel.errors import DuelError
from rp1_duel.record import validate_file
from rp1_duel.vocabulary import EventType

from fake_debater import debater
from helpers import Player, claim, join, make_turn

ADDED = "\n## Appendix\nBrand new words written after the join.\n"


def alice_and_bob(service: DuelService, source: Path) -> tuple[Player, Player]:
    return (
        join(service, source, "Alice", harness="claude-code", model_id="claude-x"),
        join(service, source, "Bob", harness="codex", model_id="gpt-x"),
    )


def test_a_turn_citing_text_added_after_the_join_is_refused_and_old_text_still_counts(service, source):
    alice, _ = alice_and_bob(service, source)
    source.write_text(source.read_text() + ADDED)
    lease = claim(service, alice)
    citing_new = make_turn(1, "Alice", "claude-code", "claude-x", citing=('design.md "Brand new words"',))
    with pytest.raises(DuelError) as refused:
        service.append(alice.seat, lease, citing_new)
    assert refused.value.code == "TURN_INVALID"
    assert [v["code"] for v in refused.value.details["violations"]] == ["SOURCE_REF_NOT_FOUND"]
    appended = service.append(alice.seat, lease, make_turn(1, "Alice", "claude-code", "claude-x"))
    assert appended.turn_number == 1


def test_each_new_content_of_the_file_is_logged_once_as_source_changed(service, source):
    alice, bob = alice_and_bob(service, source)
    original = source.read_text()
    source.write_text(original + ADDED)
    service.append(alice.seat, claim(service, alice), make_turn(1, "Alice", "claude-code", "claude-x"), release=True)
    service.append(bob.seat, claim(service, bob), make_turn(2, "Bob", "codex", "gpt-x"), release=True)
    source.write_text(original + ADDED + "One more line.\n")
    service.append(alice.seat, claim(service, alice), make_turn(3, "Alice", "claude-code", "claude-x"))
    logged = service.events(alice.duel_id, (EventType.SOURCE_CHANGED,))
    assert [(event.participant_id, type(event.data)) for event in logged] == [(None, SourceChanged)] * 2
    assert len({event.data.sha256 for event in logged if isinstance(event.data, SourceChanged)}) == 2


def test_validate_outside_git_checks_the_pinned_copy_as_live_append_did(service, source):
    alice, bob = alice_and_bob(service, source)
    source.write_text(source.read_text() + ADDED)
    for n, player in ((1, alice), (2, bob)):
        name, harness, model = ("Alice", "claude-code", "claude-x") if n == 1 else ("Bob", "codex", "gpt-x")
        result = service.append(player.seat, claim(service, player), make_turn(n, name, harness, model), release=True)
    report = validate_file(result.debate_path)
    assert report.valid, report.problems
    assert any("checked against the copy pinned at the join" in note for note in report.notes), report.notes


def test_the_pinned_source_is_what_the_service_hands_a_participant(service, source):
    alice, _ = alice_and_bob(service, source)
    before = source.read_text()
    source.write_text("# Replaced\n")
    pinned = service.source(alice.duel_id)
    assert (pinned.text, pinned.name) == (before, "design.md")


@pytest.mark.slow  # two `duel join` processes on the fake model servers
def test_every_seat_is_told_when_its_copy_changes_and_the_duel_runs_to_its_outcome(
    source, debate_dir, anthropic_server, openai_server
):
    anthropic_server.responder = openai_server.responder = debater
    claude = start(source, debate_dir, "--model", "claude-x", "--max-turns", "4", env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    source.write_text(source.read_text() + ADDED)
    gpt = start(source, debate_dir, "--model", "gpt-x", env=gpt_env(openai_server))
    (code_c, result_c, err_c), (code_g, _, err_g) = finish(claude), finish(gpt)
    assert (code_c, code_g) == (0, 0), err_c
    told = "design.md changed on disk since the duel began: every turn is still checked against the version pinned"
    assert told in err_c and told in err_g
    assert err_c.count(told) == 1  # once per new content, not once per turn
    assert "Brand new words" not in anthropic_server.requests[-1]["body"]["system"][0]["text"]
    assert validate_file(result_c["debate_path"]).valid
