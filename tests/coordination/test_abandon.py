"""``duel abandon``: a duel nobody will finish is closed INVALIDATED, with the reason recorded,
by one of its participants or by the owner of the debate dir (docs/protocol.md section 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rp1_duel.cli import main
from rp1_duel.coordination import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.record import validate_paths

from helpers import Player, claim, join, make_turn


def test_a_participant_abandons_while_the_peer_holds_the_floor(
    service: DuelService, pair: tuple[Player, Player]
) -> None:
    alice, bob = pair
    lease = claim(service, alice)
    service.append(alice.seat, lease, make_turn(1, "Alice", "claude-code", "claude-x"), release=True)
    claim(service, bob)  # Bob has the floor, and is never heard from again
    status = service.abandon(alice.duel_id, reason="Bob's model was retired", seat=alice.seat)
    assert (status.duel.status, status.duel.outcome) == ("CLOSED", "INVALIDATED")
    assert status.duel.reason == "abandoned by Alice (seat 1): Bob's model was retired"
    assert status.lock.owner_participant_id is None
    report = validate_paths([status.duel.debate_path])[0]
    assert report.valid, report.to_text()
    with pytest.raises(DuelError) as again:
        service.abandon(alice.duel_id, reason="twice", seat=alice.seat)
    assert again.value.code == "DUEL_CLOSED"


def test_the_owner_of_the_debate_dir_abandons_without_a_token(
    service: DuelService, pair: tuple[Player, Player]
) -> None:
    status = service.abandon(pair[0].duel_id, reason="stale since Tuesday")
    assert status.duel.outcome == "INVALIDATED"
    assert status.duel.reason is not None
    assert status.duel.reason.endswith(", the owner of the debate dir: stale since Tuesday")


def test_a_wrong_token_abandons_nothing(service: DuelService, pair: tuple[Player, Player]) -> None:
    wrong = type(pair[0].seat)(pair[0].duel_id, pair[0].id, "pt_wrong")
    with pytest.raises(DuelError) as forged:
        service.abandon(pair[0].duel_id, reason="not mine", seat=wrong)
    assert forged.value.code == "PARTICIPANT_AUTH_FAILED"
    assert service.status(pair[0].duel_id).duel.status == "ACTIVE"


@pytest.mark.slow
def test_a_database_store_has_no_owner_only_participants(postgres_url: str, debate_dir: Path, source: Path) -> None:
    from rp1_duel.coordination import DebateDir
    from rp1_duel.coordination._postgres import PostgresStore

    store = PostgresStore(postgres_url, DebateDir(debate_dir))
    service = DuelService(debate_dir, store=store)
    try:
        alice = join(service, source, "Alice", harness="h", model_id="m")
        with pytest.raises(DuelError) as refused:
            service.abandon(alice.duel_id, reason="not mine")
        assert refused.value.code == "PARTICIPANT_AUTH_FAILED"
        assert service.abandon(alice.duel_id, reason="mine", seat=alice.seat).duel.outcome == "INVALIDATED"
    finally:
        store.close()


@pytest.mark.parametrize("reason", ["", "   ", "two\nlines"])
def test_an_abandon_needs_a_one_line_reason(service: DuelService, pair: tuple[Player, Player], reason: str) -> None:
    with pytest.raises(DuelError) as refused:
        service.abandon(pair[0].duel_id, reason=reason)
    assert refused.value.code == "INVALID_ARGUMENT"


def test_duel_abandon_closes_and_points_at_the_report(
    service: DuelService, pair: tuple[Player, Player], debate_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    duel_id = pair[0].duel_id
    with pytest.raises(SystemExit) as done:
        main(["abandon", duel_id, "--reason", "nobody came back", "--debate-dir", str(debate_dir)])
    err = capsys.readouterr().err
    assert done.value.code in (0, None)
    assert f"duel: {duel_id} closed INVALIDATED: abandoned by " in err
    assert f"review: duel report {debate_dir / duel_id}.md --format html -o report.html" in err
    assert service.status(duel_id).duel.outcome == "INVALIDATED"
