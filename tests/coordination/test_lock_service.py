"""docs/protocol.md sections 3, 4, 5 and 9 through the library, with a manual clock."""

from __future__ import annotations

import base64
import json
import re
import stat
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rp1_duel.coordination import DuelService, Event, LeaseToken, Seat, SeatTakenOver, slugify
from rp1_duel.coordination.identity import new_token, printable, single_line_problem, urlsafe_base64
from rp1_duel.errors import DuelError
from rp1_duel.record import validate_file
from rp1_duel.settings import DuelSettings
from rp1_duel.vocabulary import EventType

from helpers import Player, claim, join, make_turn

ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def code_of(call) -> str:
    with pytest.raises(DuelError) as info:
        call()
    return info.value.code


@pytest.fixture
def service(service_on_each_store: DuelService) -> DuelService:
    """The contract holds over every store."""
    return service_on_each_store


def events(service: DuelService, duel_id: str) -> list[Event]:
    """The duel's whole event log, as its store keeps it."""
    return service.store.events(service.store.read_state(duel_id)).read()


# -- section 3: identity and secrets ------------------------------------------------------


def test_topic_defaults_to_first_heading(service, source):
    data = service.join(target=str(source), participant_name="Alice")
    assert data.topic == "Lease design"
    assert data.topic_slug == "lease-design"


def test_topic_falls_back_to_file_stem(service, tmp_path):
    plain = tmp_path / "notes-on-locks.md"
    plain.write_text("no heading here\n")
    assert service.join(target=str(plain), participant_name="A").topic == "notes-on-locks"


def test_explicit_topic_wins_over_the_heading(service, source):
    assert service.join(target=str(source), participant_name="A", topic="Fencing").topic_slug == "fencing"


@pytest.mark.parametrize(
    ("topic", "slug"),
    [
        ("Café au lait!", "cafe-au-lait"),
        ("  --Hello,   World--  ", "hello-world"),
        ("日本語", "debate"),
        ("x" * 80, "x" * 60),
        ("a" * 59 + " b", "a" * 59),
    ],
)
def test_slug_is_nfkd_ascii_lowercase_dashed_trimmed_60(topic, slug):
    assert slugify(topic) == slug


@settings(deadline=None)
@given(st.integers(min_value=0, max_value=16).flatmap(lambda n: st.binary(min_size=3 * n, max_size=3 * n)))
def test_a_token_is_the_url_safe_base64_of_its_random_bytes(data):
    assert urlsafe_base64(data) == base64.urlsafe_b64encode(data).decode()


@settings(deadline=None)
@given(st.text(st.characters(codec=None)) | st.text(st.characters(max_codepoint=0x7F)))
def test_a_line_is_refused_exactly_when_one_of_its_characters_is_not_printable(text):
    refused = single_line_problem(text, max_len=10_000) is not None

    assert refused == (not all(printable(ch) for ch in text))


def test_a_new_token_is_pt_and_32_url_safe_characters_each_time_new():
    tokens = {new_token() for _ in range(50)}

    assert len(tokens) == 50
    assert all(re.fullmatch(r"pt_[A-Za-z0-9_-]{32}", token) for token in tokens)


@pytest.mark.directory_only
def test_join_returns_public_id_and_secret_token_kept_out_of_files_and_views(service, source, debate_dir):
    data = service.join(target=str(source), participant_name="Alice")
    token = data.seat.token
    assert data.participant_id.startswith("p-")
    assert len(token) >= 24
    assert data.to_dict()["participant_token"] == token
    state_dir = debate_dir / ".duel" / "duels" / data.duel_id
    for path in state_dir.iterdir():
        assert token not in path.read_text(errors="replace")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert token not in json.dumps(service.status(data.duel_id).to_dict())
    assert token not in Path(data.debate_path).read_text()
    assert (debate_dir / ".duel" / ".gitignore").read_text() == "*\n"


def test_wrong_token_is_auth_failed_whatever_the_participant_id(service, pair):
    alice, bob = pair
    assert code_of(lambda: service.claim_lock(Seat(alice.duel_id, alice.id, bob.token))) == "PARTICIPANT_AUTH_FAILED"
    assert (
        code_of(lambda: service.claim_lock(Seat(alice.duel_id, "p-nobody", alice.token))) == "PARTICIPANT_AUTH_FAILED"
    )
    assert code_of(lambda: service.claim_lock(Seat(alice.duel_id, alice.id, ""))) == "PARTICIPANT_AUTH_FAILED"


def test_rejoin_with_token_resumes_the_same_seat(service, source, pair):
    alice, _ = pair
    again = service.join(
        target=str(source),
        participant_name="Alice",
        harness="claude-code",
        model_id="claude-x",
        participant_token=alice.token,
    )
    assert (again.participant_id, again.seat.number, again.seat.token) == (alice.id, 1, alice.token)


def test_rejoin_of_a_busy_seat_without_token_is_seat_taken(service, source, pair):
    assert code_of(lambda: join(service, source, "Alice", harness="claude-code", model_id="claude-x")) == "SEAT_TAKEN"


def test_idle_seat_is_reclaimed_with_new_token(service, source, pair, clock, debate_dir):
    alice, _ = pair
    clock.advance(600)
    again = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    assert again.id == alice.id
    assert again.token != alice.token
    assert code_of(lambda: service.claim_lock(alice.seat)) == "PARTICIPANT_AUTH_FAILED"
    assert service.claim_lock(again.seat).acquired
    assert "seat_reclaimed" in [e.type for e in events(service, alice.duel_id)]


def test_seat_holding_live_lease_is_not_reclaimed(service, source, pair, clock):
    alice, _ = pair
    service.claim_lock(alice.seat)
    clock.advance(599)
    assert code_of(lambda: join(service, source, "Alice", harness="claude-code", model_id="claude-x")) == "SEAT_TAKEN"


@pytest.mark.parametrize("op", ["wait", "status"])
def test_a_participant_waiting_with_its_token_keeps_its_seat_through_a_long_peer_turn(service, source, pair, clock, op):
    alice, bob = pair
    lease = claim(service, alice)
    for _ in range(4):  # Alice writes for 1000 s (lease_seconds is 600), refreshing; Bob waits or looks
        clock.advance(250)
        assert service.refresh_lock(alice.seat, lease).refreshed
        if op == "wait":
            service.wait(bob.duel_id, bob.id, timeout=0, participant_token=bob.token)
        else:
            service.status(bob.duel_id, participant_id=bob.id, participant_token=bob.token)
    assert code_of(lambda: join(service, source, "Bob", harness="codex", model_id="gpt-x")) == "SEAT_TAKEN"
    assert service.claim_lock(bob.seat).reason == "lease_held_by_peer"  # his token still works


def test_status_and_wait_without_a_token_do_not_keep_a_seat(service, source, pair, clock):
    _, bob = pair
    clock.advance(300)
    service.status(bob.duel_id, participant_id=bob.id)
    service.wait(bob.duel_id, bob.id, timeout=0)
    clock.advance(300)
    again = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    assert again.token != bob.token
    assert (
        code_of(lambda: service.wait(bob.duel_id, bob.id, timeout=0, participant_token=bob.token))
        == "PARTICIPANT_AUTH_FAILED"
    )


def test_status_and_wait_with_a_wrong_token_are_auth_failed(service, pair):
    alice, bob = pair
    for call in (
        lambda: service.status(alice.duel_id, participant_id=alice.id, participant_token=bob.token),
        lambda: service.wait(alice.duel_id, alice.id, timeout=0, participant_token=bob.token),
        lambda: service.wait(alice.duel_id, "p-nobody", timeout=0, participant_token=alice.token),
    ):
        assert code_of(call) == "PARTICIPANT_AUTH_FAILED"
    assert code_of(lambda: service.status(alice.duel_id, participant_token=alice.token)) == "INVALID_ARGUMENT"


@pytest.mark.directory_only
def test_a_status_with_a_token_on_a_closed_duel_changes_nothing(service, pair, debate_dir):
    alice, _ = pair
    service.release_lock(alice.seat, claim(service, alice), close=True, outcome="INVALIDATED", reason="done")
    state_file = debate_dir / ".duel" / "duels" / alice.duel_id / "state.json"
    before = state_file.read_bytes(), state_file.stat().st_mtime_ns
    assert service.status(alice.duel_id, participant_id=alice.id, participant_token=alice.token).next_step == "closed"
    assert (state_file.read_bytes(), state_file.stat().st_mtime_ns) == before


@pytest.mark.directory_only
def test_a_status_with_a_token_takes_the_duels_lock_only_to_mark_the_caller_seen(service, pair, clock):
    """Polled more than once a second, a seat's status would write nothing: it reads without the lock."""
    alice, _ = pair
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with service.debate.duel_lock(alice.duel_id):  # another thread's: an op of this one waits for it
            held.set()
            done.wait(60)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(60)
        clock.advance(0.5)  # Alice was seen at her join
        status = service.status(alice.duel_id, participant_id=alice.id, participant_token=alice.token)
        assert status.next_step == "claim_lock"
    finally:
        done.set()
        holder.join()
    clock.advance(1)
    service.status(alice.duel_id, participant_id=alice.id, participant_token=alice.token)  # a write, locked
    seen = service.debate.read_state(alice.duel_id).participant(alice.id)
    assert seen is not None
    assert seen.last_seen_mono == clock.mono


@pytest.mark.slow
def test_a_long_wait_with_a_token_marks_the_waiter_seen_every_third_of_a_lease(debate_dir, source):
    service = DuelService(debate_dir)  # real clocks: this wait lasts 2 s
    settings = DuelSettings(lease_seconds=5)
    alice, bob = join(service, source, "Alice", settings=settings), join(service, source, "Bob", settings=settings)
    claim(service, alice)
    started = time.monotonic()
    result = service.wait(bob.duel_id, bob.id, timeout=2.0, participant_token=bob.token)
    assert (result.changed, result.next_step) == (False, "wait_turn")  # its own marks wake nobody
    seen = service.debate.read_state(bob.duel_id).participant(bob.id)
    assert seen is not None
    assert started + 5 / 3 <= seen.last_seen_mono < started + 2.0


def test_third_identity_is_duel_full(service, source, pair):
    assert code_of(lambda: join(service, source, "Carol")) == "DUEL_FULL"


# -- taking a seat over with a corrected model (issue 9, finding 3) -----------------------------


def test_a_corrected_model_takes_its_seat_over_with_the_token_before_its_first_turn(service, source, pair, debate_dir):
    alice, bob = pair
    again = service.join(
        target=str(source), participant_name="Bob", harness="codex", model_id="gpt-y", participant_token=bob.token
    )
    assert (again.participant_id, again.seat.number, again.seat.token) == (bob.id, 2, bob.token)
    seated = service.status(alice.duel_id).participants
    assert [(p.display_name, p.model_id) for p in seated] == [("Alice", "claude-x"), ("Bob", "gpt-y")]
    taken = [e for e in events(service, alice.duel_id) if e.type == EventType.SEAT_TAKEN_OVER]
    assert [(e.participant_id, e.data) for e in taken] == [(bob.id, SeatTakenOver(2, "gpt-y", "gpt-x"))]
    header = Path(again.debate_path).read_text().split("\n---\n")[0]
    assert 'model_id: "gpt-y"' in header
    assert "gpt-x" not in header


def test_a_takeover_without_the_token_waits_until_the_seat_could_be_reclaimed(service, source, pair, clock):
    _, bob = pair
    refused = code_of(lambda: join(service, source, "Bob", harness="codex", model_id="gpt-y"))
    assert refused == "SEAT_TAKEN"  # a stranger with Bob's name cannot take a live seat
    assert (
        code_of(
            lambda: service.join(
                target=str(source),
                participant_name="Bob",
                harness="codex",
                model_id="gpt-y",
                participant_token="pt_wrong",
            )
        )
        == "PARTICIPANT_AUTH_FAILED"
    )
    clock.advance(600)
    again = join(service, source, "Bob", harness="codex", model_id="gpt-y")
    assert (again.id, again.seat.number) == (bob.id, 2)
    assert again.token != bob.token
    assert code_of(lambda: service.claim_lock(bob.seat)) == "PARTICIPANT_AUTH_FAILED"


def test_the_model_is_fixed_by_the_participants_first_turn(service, source, pair):
    alice, bob = pair
    lease = claim(service, alice)
    service.append(alice.seat, lease, make_turn(1, "Alice", "claude-code", "claude-x"), release=True)
    assert (
        code_of(
            lambda: service.join(
                target=str(source),
                participant_name="Alice",
                harness="claude-code",
                model_id="claude-y",
                participant_token=alice.token,
            )
        )
        == "DUEL_FULL"
    )
    # Bob has written nothing yet: his seat is taken over, and Alice's turn stays in the record.
    again = service.join(
        target=str(source), participant_name="Bob", harness="codex", model_id="gpt-y", participant_token=bob.token
    )
    lease = claim(service, bob)
    service.append(bob.seat, lease, make_turn(2, "Bob", "codex", "gpt-y"), release=True)
    assert validate_file(again.debate_path).valid


def test_settings_fixed_by_the_creating_join(service, source):
    first = service.join(target=str(source), participant_name="A", settings=DuelSettings(max_turns=4, lease_seconds=30))
    second = service.join(
        target=str(source), participant_name="B", settings=DuelSettings(max_turns=10, lease_seconds=90)
    )
    assert (second.schedule.max_turns, second.lease_seconds) == (4, 30)
    assert second.duel_id == first.duel_id


def test_active_duel_is_found_by_source_and_topic(service, source):
    a = join(service, source, "A")
    b = join(service, source, "B", topic="Another question")
    assert a.duel_id != b.duel_id
    assert b.seat.number == 1
    assert service.status(target=str(source)).duel_id == a.duel_id
    assert service.status(target=str(source), topic="Another question").duel_id == b.duel_id


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"participant_name": "a/b"}, "INVALID_ARGUMENT"),
        ({"participant_name": "two\nlines"}, "INVALID_ARGUMENT"),
        ({"participant_name": "x" * 10_000}, "INVALID_ARGUMENT"),
        ({"participant_name": ""}, "INVALID_ARGUMENT"),
        ({"participant_name": "A", "harness": "a|b"}, "INVALID_ARGUMENT"),
        ({"participant_name": "A", "topic": "t\r\nx"}, "INVALID_ARGUMENT"),
        ({"participant_name": "A", "settings": DuelSettings(max_turns=1)}, "INVALID_ARGUMENT"),
        ({"participant_name": "A", "settings": DuelSettings(max_turns=51)}, "INVALID_ARGUMENT"),
        ({"participant_name": "A", "settings": DuelSettings(lease_seconds=4)}, "INVALID_ARGUMENT"),
        ({"participant_name": "A", "settings": DuelSettings(lease_seconds=86401)}, "INVALID_ARGUMENT"),
    ],
)
def test_bad_join_arguments_are_refused_and_create_nothing(service, source, debate_dir, kwargs, code):
    assert code_of(lambda: service.join(target=str(source), **kwargs)) == code
    assert not debate_dir.exists()


def test_model_ids_may_contain_slashes(service, source):
    assert join(service, source, "A", model_id="meta-llama/Llama-3-8B").seat.number == 1


# -- artifact path reservation (section 1 and 6) -------------------------------------------


def test_join_reserves_dated_artifact_with_header(service, source, debate_dir, clock):
    data = service.join(target=str(source), participant_name="Alice")
    path = Path(data.debate_path)
    assert path.parent == debate_dir
    assert path.name == "2027-01-15-lease-design.md"
    text = path.read_text()
    assert text.startswith("---\nduel_id: ")
    assert "# Socratic Duel: Lease design" in text
    assert 'source_path: "../design.md"' in text
    assert "## Terminal Conclusion" in text


def test_closed_duel_then_join_starts_new_duel_with_suffix(service, source, pair, debate_dir):
    alice, _ = pair
    lease = claim(service, alice)
    service.release_lock(alice.seat, lease, close=True, outcome="INVALIDATED", reason="done")
    fresh = join(service, source, "Carol")
    assert fresh.duel_id == alice.duel_id + "-2"
    assert fresh.seat.number == 1
    assert (debate_dir / f"{fresh.duel_id}.md").exists()
    assert (debate_dir / f"{alice.duel_id}.md").exists()


def test_a_duel_spanning_midnight_keeps_its_file(service, source, clock, debate_dir):
    clock.wall = 1_800_000_000 - 1_800_000_000 % 86400 + 86400 - 1  # one second before midnight UTC
    first = join(service, source, "A")
    clock.advance(2)
    second = join(service, source, "B")
    assert second.duel_id == first.duel_id
    assert len(list(debate_dir.glob("*.md"))) == 1


def test_an_existing_file_is_never_reused(service, source, debate_dir):
    debate_dir.mkdir()
    (debate_dir / "2027-01-15-lease-design.md").write_text("someone else's notes")
    data = join(service, source, "A")
    assert data.duel_id == "2027-01-15-lease-design-2"
    assert (debate_dir / "2027-01-15-lease-design.md").read_text() == "someone else's notes"


def test_concurrent_joins_of_new_topics_never_share_a_file(debate_dir, source):
    results, errors = [], []

    def worker(i: int) -> None:
        try:
            svc = DuelService(debate_dir)
            results.append(svc.join(target=str(source), participant_name=f"P{i}", topic=f"Topic {i % 3}"))
        except DuelError as exc:  # pragma: no cover - would fail the test below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    by_duel: dict[str, set[int]] = {}
    for data in results:
        by_duel.setdefault(data.debate_path, set()).add(data.seat.number)
    assert len(by_duel) == 3
    assert all(seats == {1, 2} for seats in by_duel.values())


# -- section 4: leases and turn order --------------------------------------------------------


def test_claim_refused_until_both_seats_taken(service, source):
    alice = join(service, source, "Alice")
    data = service.claim_lock(alice.seat)
    assert not data.acquired
    assert data.next_step == "wait_peer"
    assert data.reason == "waiting_for_peer"
    assert ISO_Z.match(data.to_dict()["wait_until"])


def test_claim_granted_on_own_turn(service, pair, clock):
    alice, _ = pair
    data = service.claim_lock(alice.seat)
    assert data.acquired
    assert data.next_step == "compose_turn"
    assert data.owner_participant_id == alice.id
    assert data.lease is not None
    assert data.lease.value.startswith("1-")


def test_claim_refused_out_of_turn(service, pair):
    _, bob = pair
    data = service.claim_lock(bob.seat)
    assert not data.acquired
    assert data.reason == "not_your_turn"
    assert data.next_step == "wait_turn"
    assert data.lease is None
    assert data.to_dict()["lease_token"] is None


def test_claim_refused_while_peer_holds_live_lease(service, pair, clock):
    alice, bob = pair
    granted = service.claim_lock(alice.seat)
    data = service.claim_lock(bob.seat, for_timeout=True)
    assert not data.acquired
    assert data.owner_participant_id == alice.id
    assert data.wait_until == granted.lease_expires_at
    assert data.retry_after_seconds is not None
    assert 0 < data.retry_after_seconds <= 5


def test_holder_claiming_again_gets_the_same_lease(service, pair):
    alice, _ = pair
    first = service.claim_lock(alice.seat)
    again = service.claim_lock(alice.seat)
    assert again.acquired
    assert again.lease == first.lease


def test_fence_grows_by_one_per_grant_and_is_never_reused(service, pair):
    alice, _ = pair
    fences = []
    for _ in range(4):
        lease = claim(service, alice)
        fence, random_part = lease.value.split("-", 1)
        assert len(random_part) >= 16
        assert lease.fence == int(fence)
        fences.append(int(fence))
        service.release_lock(alice.seat, lease)
    assert fences == [1, 2, 3, 4]


def test_expired_lease_cannot_write(service, pair, clock):
    alice, _ = pair
    lease = claim(service, alice)
    clock.advance(600)
    assert code_of(lambda: service.release_lock(alice.seat, lease)) == "LEASE_EXPIRED"
    assert code_of(lambda: service.append(alice.seat, lease, "x")) == "LEASE_EXPIRED"


def test_release_with_someone_elses_lease_token_is_refused(service, pair):
    alice, bob = pair
    lease = claim(service, alice)
    assert code_of(lambda: service.release_lock(bob.seat, lease)) == "LEASE_NOT_HELD"
    assert code_of(lambda: service.release_lock(alice.seat, LeaseToken("1-forged"))) == "LEASE_NOT_HELD"


def test_refresh_moves_expiry_to_now_plus_lease_seconds(service, pair, clock):
    alice, _ = pair
    lease = claim(service, alice)
    clock.advance(500)
    data = service.refresh_lock(alice.seat, lease)
    assert data.refreshed
    assert data.lease == lease
    clock.advance(500)  # 1000 s after the grant, alive thanks to the refresh
    assert service.status(alice.duel_id).lock.owner_participant_id == alice.id


def test_expired_lease_cannot_be_refreshed(service, pair, clock):
    alice, _ = pair
    lease = claim(service, alice)
    clock.advance(600.001)
    data = service.refresh_lock(alice.seat, lease)
    assert data.refreshed is False
    assert data.reason == "lease_expired"


def test_expired_lease_frees_the_floor(service, pair, clock):
    alice, _ = pair
    first = service.claim_lock(alice.seat)
    clock.advance(600)
    again = service.claim_lock(alice.seat)
    assert again.acquired
    assert again.lease is not None
    assert again.lease != first.lease


def test_for_timeout_granted_when_peer_never_joins(service, source, clock):
    alice = join(service, source, "Alice", settings=DuelSettings(peer_wait_seconds=900))
    early = service.claim_lock(alice.seat, for_timeout=True)
    assert not early.acquired
    assert early.reason == "timeout_not_due"
    clock.advance(900)
    assert service.status(alice.duel_id, participant_id=alice.id).next_step == "claim_timeout"
    data = service.claim_lock(alice.seat, for_timeout=True)
    assert data.acquired
    assert data.next_step == "close_timeout"
    closed = service.release_lock(alice.seat, data.lease, close=True, outcome="TIMEOUT")
    assert closed.closed
    assert closed.outcome == "TIMEOUT"
    assert closed.next_step == "closed"


def test_for_timeout_granted_when_peers_turn_times_out(service, pair, clock):
    alice, bob = pair
    lease = claim(service, alice)
    service.release_lock(alice.seat, lease)
    # Turn 1 is Alice's: Bob may time her out once turn_timeout_seconds have passed.
    assert not service.claim_lock(bob.seat, for_timeout=True).acquired
    clock.advance(1800)
    data = service.claim_lock(bob.seat, for_timeout=True)
    assert data.acquired
    assert data.next_step == "close_timeout"
    assert not service.claim_lock(alice.seat).acquired


def test_for_timeout_granted_once_the_holders_lease_expired_past_the_turn_deadline(service, pair, clock):
    alice, bob = pair
    service.claim_lock(alice.seat)
    clock.advance(1801)  # the turn deadline passed, and Alice's unrefreshed lease expired long ago
    assert service.claim_lock(bob.seat, for_timeout=True).acquired


def test_slow_peer_with_refreshed_lease_cannot_be_timed_out_before_the_turn_deadline(service, pair, clock):
    alice, bob = pair
    lease = claim(service, alice)
    for _ in range(3):
        clock.advance(500)
        assert service.refresh_lock(alice.seat, lease).refreshed
    data = service.claim_lock(bob.seat, for_timeout=True)
    assert not data.acquired
    assert data.owner_participant_id == alice.id


def test_a_writer_refreshing_without_end_cannot_hold_the_duel_past_the_turn_deadline(service, pair, clock, debate_dir):
    """Issue 9, finding 5: a model that streams pings forever kept the lease fresh forever."""
    alice, bob = pair
    lease = claim(service, alice)
    for _ in range(3):
        clock.advance(500)
        refreshed = service.refresh_lock(alice.seat, lease)
    deadline = service.status(alice.duel_id).turn_deadline
    assert refreshed.refreshed
    assert refreshed.lease_expires_at == deadline  # capped: 300 s left of the turn, not a 600 s lease
    clock.advance(300)
    late = service.refresh_lock(alice.seat, lease)
    assert (late.refreshed, late.reason) == (False, "turn_deadline_passed")
    with pytest.raises(DuelError) as refused:
        service.append(alice.seat, lease, make_turn(1, "Alice", "claude-code", "claude-x"))
    assert (refused.value.code, refused.value.details["next_step"]) == ("TURN_DEADLINE_PASSED", "claim_timeout")
    assert service.status(alice.duel_id, participant_id=alice.id).next_step == "claim_timeout"
    assert service.claim_lock(alice.seat).reason == "turn_deadline_passed"
    timeout = service.claim_lock(bob.seat, for_timeout=True)
    assert timeout.acquired
    service.status(alice.duel_id, participant_id=alice.id, participant_token=alice.token)  # the late writer is back
    closed = service.release_lock(bob.seat, timeout.lease, close=True, outcome="TIMEOUT")
    assert closed.outcome == "TIMEOUT"  # its turn is lost all the same
    assert "turn_appended" not in [e.type for e in events(service, alice.duel_id)]


def test_the_writer_may_itself_close_the_duel_timeout_past_its_turn_deadline(service, pair, clock):
    alice, _ = pair
    claim(service, alice)
    clock.advance(1800)
    timeout = service.claim_lock(alice.seat, for_timeout=True)
    assert (timeout.acquired, timeout.reason) == (True, "timeout_due")
    assert service.release_lock(alice.seat, timeout.lease, close=True, outcome="TIMEOUT").outcome == "TIMEOUT"


def test_timeout_lease_only_allows_close_timeout(service, source, clock):
    alice = join(service, source, "Alice")
    clock.advance(900)
    lease = service.claim_lock(alice.seat, for_timeout=True).lease
    assert lease is not None
    assert code_of(lambda: service.append(alice.seat, lease, "x")) == "LEASE_NOT_HELD"
    assert (
        code_of(lambda: service.release_lock(alice.seat, lease, close=True, outcome="INVALIDATED", reason="bored"))
        == "OUTCOME_MISMATCH"
    )


def test_close_timeout_rejected_when_peer_joined_and_lease_stays(service, source, clock):
    alice = join(service, source, "Alice")
    clock.advance(900)
    lease = service.claim_lock(alice.seat, for_timeout=True).lease
    assert lease is not None
    join(service, source, "Bob")
    with pytest.raises(DuelError) as info:
        service.release_lock(alice.seat, lease, close=True, outcome="TIMEOUT")
    assert info.value.code == "TIMEOUT_REJECTED"
    assert info.value.details["next_step"] == "compose_turn"
    status = service.status(alice.duel_id, participant_id=alice.id)
    assert status.lock.owner_participant_id == alice.id
    assert status.next_step == "compose_turn"
    assert service.claim_lock(alice.seat).lease == lease


def test_close_without_timeout_lease_is_timeout_rejected(service, pair):
    alice, _ = pair
    lease = claim(service, alice)
    assert code_of(lambda: service.release_lock(alice.seat, lease, close=True, outcome="TIMEOUT")) == "TIMEOUT_REJECTED"


def test_close_invalidated_needs_a_reason_and_writes_the_conclusion(service, pair):
    alice, _ = pair
    lease = claim(service, alice)
    assert (
        code_of(lambda: service.release_lock(alice.seat, lease, close=True, outcome="INVALIDATED"))
        == "INVALID_ARGUMENT"
    )
    data = service.release_lock(
        alice.seat,
        lease,
        close=True,
        outcome="INVALIDATED",
        reason="the source is obsolete",
        summary="We stopped early.",
    )
    assert data.closed
    assert data.status == "CLOSED"
    text = Path(service.status(alice.duel_id).duel.debate_path).read_text()
    assert "| Outcome | INVALIDATED |" in text
    assert "the source is obsolete" in text
    assert "We stopped early." in text
    assert 'status: "CLOSED"' in text
    assert 'outcome: "INVALIDATED"' in text
    assert code_of(lambda: service.claim_lock(alice.seat)) == "DUEL_CLOSED"


@pytest.mark.parametrize("field", ["reason", "summary"])
def test_close_refuses_raw_html_in_its_reason_or_summary_and_keeps_the_lease(service, pair, field):
    alice, _ = pair
    lease = claim(service, alice)
    before = Path(service.status(alice.duel_id).duel.debate_path).read_text()
    text = {"reason": "stopped", "summary": "We stopped.", field: "see <img src=x onerror=alert(1)>"}
    with pytest.raises(DuelError) as raised:
        service.release_lock(alice.seat, lease, close=True, outcome="INVALIDATED", **text)
    error = raised.value
    assert error.code == "INVALID_ARGUMENT" and "raw HTML" in error.message and "backticks" in error.message
    assert Path(service.status(alice.duel_id).duel.debate_path).read_text() == before
    assert service.refresh_lock(alice.seat, lease).refreshed  # the lease is still the caller's
    text[field] = "see `<img src=x onerror=alert(1)>`"
    assert service.release_lock(alice.seat, lease, close=True, outcome="INVALIDATED", **text).closed


def test_computed_outcome_cannot_be_claimed_before_it_is_reached(service, pair):
    alice, _ = pair
    lease = claim(service, alice)
    assert (
        code_of(lambda: service.release_lock(alice.seat, lease, close=True, outcome="ACCEPTED_CONSENSUS"))
        == "OUTCOME_MISMATCH"
    )


@pytest.mark.directory_only
def test_status_and_wait_change_nothing_and_show_no_secrets(service, pair, debate_dir):
    alice, bob = pair
    lease = claim(service, alice)
    state_file = debate_dir / ".duel" / "duels" / alice.duel_id / "state.json"
    before = state_file.read_bytes(), state_file.stat().st_mtime_ns
    views = [service.status(alice.duel_id, participant_id=bob.id), service.wait(alice.duel_id, bob.id, timeout=0.05)]
    assert (state_file.read_bytes(), state_file.stat().st_mtime_ns) == before
    for view in views:
        wire = json.dumps(view.to_dict())
        assert lease.value not in wire
        assert alice.token not in wire


def test_next_step_walks_through_a_turn(service, source, clock):
    alice = join(service, source, "Alice")
    assert service.status(alice.duel_id, participant_id=alice.id).next_step == "wait_peer"
    bob = join(service, source, "Bob")
    step = lambda who: service.status(alice.duel_id, participant_id=who.id).next_step  # noqa: E731
    assert (step(alice), step(bob)) == ("claim_lock", "wait_turn")
    service.claim_lock(alice.seat)
    assert (step(alice), step(bob)) == ("compose_turn", "wait_turn")
    clock.advance(1800)
    assert step(bob) == "claim_timeout"  # Alice's lease and her turn's deadline both passed


def test_wait_returns_early_when_the_peer_releases(debate_dir, source):
    service = DuelService(debate_dir)
    alice, bob = join(service, source, "Alice"), join(service, source, "Bob")
    lease = claim(service, alice)
    timer = threading.Timer(0.2, lambda: DuelService(debate_dir).release_lock(alice.seat, lease))
    timer.start()
    started = time.monotonic()
    data = service.wait(bob.duel_id, bob.id, timeout=10)
    timer.join()
    assert data.changed
    assert time.monotonic() - started < 2
    assert data.lock.owner_participant_id is None
    assert data.waited_seconds >= 0.15


def test_wait_times_out_unchanged(service, pair):
    _, bob = pair
    data = service.wait(bob.duel_id, bob.id, timeout=0.1)
    assert data.changed is False
    assert data.next_step == "wait_turn"
    assert data.waited_seconds >= 0.1


def test_wait_for_unknown_participant_is_not_found(service, pair):
    alice, _ = pair
    assert code_of(lambda: service.wait(alice.duel_id, "p-nobody", timeout=0)) == "PARTICIPANT_NOT_FOUND"


# -- section 5: fields ------------------------------------------------------------------------

COMMON = {"duel_id", "participant_count", "status", "next_step"}


def test_every_op_carries_its_wire_fields_with_iso_times(service, source):
    joined = service.join(target=str(source), participant_name="Alice")
    assert COMMON | {
        "participant_id",
        "participant_token",
        "seat",
        "source_path",
        "source_sha256",
        "target_key",
        "topic",
        "topic_slug",
        "debate_path",
        "max_turns",
        "lease_seconds",
        "peer_wait_until",
    } <= set(joined.to_dict())
    bob = join(service, source, "Bob")
    alice = Player(joined.seat, "Alice")
    status = service.status(alice.duel_id, participant_id=alice.id).to_dict()
    assert COMMON | {
        "participant_id",
        "duel",
        "participants",
        "lock",
        "turn_count",
        "next_turn_seat",
        "turn_deadline",
        "candidate_convergence",
    } <= set(status)
    assert {
        "id",
        "source_path",
        "topic",
        "topic_slug",
        "debate_path",
        "status",
        "outcome",
        "created_at",
        "closed_at",
        "max_turns",
        "lease_seconds",
    } <= set(status["duel"])
    assert {"id", "seat", "display_name", "harness", "model_id", "joined_at", "last_seen_at"} <= set(
        status["participants"][0]
    )
    assert {"owner_participant_id", "lease_expires_at", "fence"} <= set(status["lock"])
    granted = service.claim_lock(alice.seat)
    claim = granted.to_dict()
    assert COMMON | {
        "acquired",
        "lease_token",
        "lease_expires_at",
        "owner_participant_id",
        "retry_after_seconds",
        "wait_until",
        "reason",
    } <= set(claim)
    refused = service.claim_lock(bob.seat).to_dict()
    assert {"acquired", "retry_after_seconds", "wait_until", "reason", "owner_participant_id"} <= set(refused)
    refresh = service.refresh_lock(alice.seat, granted.lease).to_dict()
    assert COMMON | {"refreshed", "lease_token", "lease_expires_at", "reason"} <= set(refresh)
    release = service.release_lock(alice.seat, granted.lease).to_dict()
    assert COMMON | {"released", "closed", "outcome", "reason"} <= set(release)
    waited = service.wait(alice.duel_id, alice.id, timeout=0).to_dict()
    assert set(status) | {"waited_seconds", "changed"} <= set(waited)
    for value in (status["duel"]["created_at"], claim["lease_expires_at"], status["participants"][0]["joined_at"]):
        assert ISO_Z.match(value)


# -- section 9: events ------------------------------------------------------------------------


def test_events_are_gapless_typed_and_carry_no_secrets(service, pair, clock, debate_dir):
    alice, bob = pair
    first = claim(service, alice)
    service.refresh_lock(alice.seat, first)
    service.release_lock(alice.seat, first)
    lease = claim(service, alice)
    service.release_lock(alice.seat, lease, close=True, outcome="INVALIDATED", reason="r")
    log = events(service, alice.duel_id)
    assert [e.seq for e in log] == list(range(len(log)))
    assert {
        "participant_registered",
        "participant_waiting",
        "lock_acquired",
        "lock_refreshed",
        "lock_released",
        "duel_closed",
    } <= {e.type for e in log}
    for event in log:
        assert set(event.to_json()) == {"seq", "ts", "type", "duel_id", "participant_id", "data"}
        assert ISO_Z.match(event.ts)
        assert event.duel_id == alice.duel_id
    raw = json.dumps([event.to_json() for event in log])
    for secret in (alice.token, bob.token, first.value, lease.value):
        assert secret not in raw


@pytest.mark.directory_only
def test_a_dead_writers_event_tail_is_cut_back(service, pair, debate_dir):
    alice, _ = pair
    path = debate_dir / ".duel" / "duels" / alice.duel_id / "events.jsonl"
    with open(path, "a") as handle:
        handle.write('{"seq": 99, "half written')
    service.claim_lock(alice.seat)
    log = events(service, alice.duel_id)
    assert [e.seq for e in log] == list(range(len(log)))


@pytest.mark.parametrize("with_token", [False, True])
def test_a_change_landing_between_the_waits_first_read_and_its_stamp_still_wakes_it(
    service, pair, monkeypatch, with_token
):
    """The stamp is read before the state: a grant landing between the two is seen, never slept through."""
    alice, bob = pair
    first_read = "_mark_seen" if with_token else "_read"
    read = getattr(service, first_read)
    granted: list[LeaseToken] = []

    def read_then_the_peer_claims(*args):
        state = read(*args)
        if not granted:
            granted.append(claim(service, alice))  # after the wait's read of the state, before it waits
        return state

    monkeypatch.setattr(service, first_read, read_then_the_peer_claims)
    token = bob.seat.token if with_token else None
    data = service.wait(bob.duel_id, bob.id, timeout=3, participant_token=token)
    assert granted and data.changed
    assert data.lock.owner_participant_id == alice.id
    assert data.waited_seconds < 2


def test_wait_given_a_stale_next_step_returns_at_once(service, source):
    alice = join(service, source, "Alice")
    seen = service.status(alice.duel_id, participant_id=alice.id).next_step
    join(service, source, "Bob")  # the peer arrives between Alice's status and her wait
    data = service.wait(alice.duel_id, alice.id, timeout=5, next_step=seen)
    assert seen == "wait_peer"
    assert data.changed
    assert data.next_step == "claim_lock"
    assert data.waited_seconds < 1
