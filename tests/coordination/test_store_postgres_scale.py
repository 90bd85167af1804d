"""The PostgreSQL store at scale (issue 26; docs/protocol.md section 4, "Stores"): one connection a
process, a channel a duel, a server full of connections or restarting waited out, never a lost seat.

A server of this module's own, with room for six connections, is filled on purpose."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import psycopg
import pytest
from pg_server import PostgresServer, running_server
from test_participant import clean_env, finish
from wire_counter import WireCounter

from rp1_duel.coordination import DuelService, Usage
from rp1_duel.coordination import _postgres_link as postgres_link
from rp1_duel.coordination._postgres import PostgresStore
from rp1_duel.errors import DuelError
from rp1_duel.settings import DuelSettings
from rp1_duel.vocabulary import EventType

from helpers import SOURCE, claim, join, make_turn, run_tools

pytestmark = pytest.mark.slow  # real PostgreSQL servers and real processes

ROOM = 6  # the small server's max_connections
T = TypeVar("T")


@pytest.fixture(scope="module")
def small_server() -> Iterator[PostgresServer]:
    with running_server(f"max_connections={ROOM}") as server:
        yield server


def new_schema(server: PostgresServer) -> str:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    return server.url(schema)


@pytest.fixture
def small_url(small_server: PostgresServer) -> str:
    return new_schema(small_server)


@contextlib.contextmanager
def server_filled(server: PostgresServer) -> Iterator[None]:
    """Every connection the server has room for taken (whatever earlier tests still hold), until the block ends."""
    held: list[psycopg.Connection] = []
    try:
        with contextlib.suppress(psycopg.OperationalError):  # too many clients: full
            while len(held) < ROOM:
                held.append(psycopg.connect(server.url(), autocommit=True))
        yield
    finally:
        for conn in held:
            conn.close()


def duel_connections(url: str, name: str = "duel") -> int:
    """The connections duel processes hold (their application_name), this one's admin excluded."""
    with psycopg.connect(url, autocommit=True, application_name="admin") as admin:
        row = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)).fetchone()
    return int(row[0]) if row else 0


def named(url: str, name: str) -> str:
    """``url`` with connections named ``name`` in pg_stat_activity: this test's own, counted apart."""
    return f"{url}&application_name={name}"


def scripted_seat(source: Path, debate_dir: Path, folder: Path, name: str, turn: int, url: str, topic: str):
    """A `duel join` process playing one pre-written turn of a two-turn duel, on the store ``url``."""
    folder.mkdir(parents=True)
    (folder / "00.md").write_text(make_turn(turn, name, "duel", f"scripted:{folder.name}", "ACCEPTING_CONSENSUS"))
    argv = [sys.executable, "-m", "rp1_duel", "join", "--target", str(source), "--debate-dir", str(debate_dir)]
    argv += ["--json", "--model", f"scripted:{folder}", "--name", name, "--max-turns", "2", "--topic", topic]
    return subprocess.Popen(
        argv,
        env=clean_env(DUEL_STORE=url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def seated(url: str, source: Path, topic: str, debate_dir: Path) -> bool:
    with contextlib.suppress(DuelError):  # not created yet
        service = DuelService(debate_dir, store=url)
        return service.status(service.find_duel(str(source), topic=topic)).participant_count >= 1
    return False


def test_more_seats_than_the_server_has_connections_all_finish_their_duels(small_server, small_url, tmp_path):
    source = tmp_path / "design.md"
    source.write_text(SOURCE, encoding="utf-8")
    duels = range(5)  # ten seats on a server with room for six
    debates = tmp_path / "debates"
    with server_filled(small_server):  # the first seats find no room at all
        alices = [
            scripted_seat(source, debates, tmp_path / f"a{n}", "Alice", 1, small_url, f"Topic {n}") for n in duels
        ]
        time.sleep(6)  # long enough for every seat to start and meet the full server on a loaded machine
    deadline = time.monotonic() + 60
    while not all(seated(small_url, source, f"Topic {n}", tmp_path / "x") for n in duels):
        assert time.monotonic() < deadline, "the first seats never joined"
        time.sleep(0.2)
    bobs = [scripted_seat(source, debates, tmp_path / f"b{n}", "Bob", 2, small_url, f"Topic {n}") for n in duels]
    results = [finish(seat, timeout=150) for seat in alices + bobs]

    assert [(code, result.get("outcome")) for code, result, _ in results] == [(0, "ACCEPTED_CONSENSUS")] * 10
    errs = "".join(err for _, _, err in results)
    assert "the store is full of connections; retrying in" in errs  # the exhaustion happened, and was waited out
    assert "STORAGE_FAILED" not in errs
    assert duel_connections(small_url) == 0


def test_a_full_server_is_a_wait_with_its_reason_and_a_missing_database_stops_at_once(
    small_server, small_url, source, tmp_path
):
    alice = join(DuelService(tmp_path / "a", store=small_url), source, "Alice")

    # `duel tools` on a full server: told on standard error, answered once a connection is free.
    filler = server_filled(small_server)
    filler.__enter__()
    threading.Timer(1.5, filler.__exit__, (None, None, None)).start()
    started = time.monotonic()
    status = run_tools(
        "status", "--duel-id", alice.duel_id, debate_dir=tmp_path / "b", env={"DUEL_STORE": small_url}, timeout=60
    )
    assert status.code == 0, status.stderr
    assert status.data["participant_count"] == 1 and time.monotonic() - started >= 1.5
    assert "duel tools: the store is full of connections; retrying in 0." in status.stderr

    # A database that does not exist will not come: STORAGE_FAILED at once, no retry.
    missing = small_server.url().replace("/postgres", "/nosuchdb")
    started = time.monotonic()
    refused = run_tools("status", "--duel-id", alice.duel_id, debate_dir=tmp_path / "c", env={"DUEL_STORE": missing})
    assert refused.code == 1 and refused.error["code"] == "STORAGE_FAILED"
    assert 'database "nosuchdb" does not exist' in refused.error["message"]
    assert "retrying" not in refused.stderr and time.monotonic() - started < 5


def test_a_waiter_is_woken_only_by_writes_to_its_own_duel(postgres_url, source, tmp_path):
    writer = DuelService(tmp_path / "a", store=postgres_url)
    waiter = DuelService(tmp_path / "b", store=postgres_url)
    alice, bob = (
        join(writer, source, "Alice", topic="Mine", harness="h", model_id="m"),
        join(waiter, source, "Bob", topic="Mine"),
    )
    carol, _ = join(writer, source, "Carol", topic="Other"), join(writer, source, "Dan", topic="Other")
    store = waiter.store
    assert isinstance(store, PostgresStore)
    answer: list[bool] = []
    waiting = threading.Thread(target=lambda: answer.append(waiter.wait(bob.duel_id, bob.id, timeout=20).changed))
    waiting.start()
    time.sleep(0.3)  # the wait has begun and listens
    for _ in range(10):  # twenty writes to another duel on the same server
        writer.release_lock(carol.seat, claim(writer, carol))
    time.sleep(0.3)
    assert store.link.notifications == 0 and waiting.is_alive()

    writer.append(alice.seat, claim(writer, alice), make_turn(1, "Alice", "h", "m"), release=True)
    waiting.join(timeout=10)
    assert answer == [True]
    assert 1 <= store.link.notifications <= 2  # the claim, and the append if it came before the wait looked


def test_a_seat_holds_one_connection_and_a_one_shot_command_none_once_it_ends(postgres_url, source, tmp_path):
    before = duel_connections(postgres_url)
    alice = scripted_seat(source, tmp_path / "debates", tmp_path / "alice", "Alice", 1, postgres_url, "Lone")
    try:
        deadline = time.monotonic() + 30
        while duel_connections(postgres_url) == before and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)  # joined, and waiting for a peer that does not come: listening
        assert duel_connections(postgres_url) == before + 1
        duel_id = DuelService(tmp_path / "x", store=postgres_url).find_duel(str(source), topic="Lone")
        status = run_tools("status", "--duel-id", duel_id, debate_dir=tmp_path / "y", env={"DUEL_STORE": postgres_url})
        assert status.code == 0
        assert duel_connections(postgres_url) == before + 1  # the status came and went
    finally:
        alice.kill()
        alice.communicate(timeout=10)
    deadline = time.monotonic() + 10
    while duel_connections(postgres_url) != before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert duel_connections(postgres_url) == before


def test_a_wait_on_the_database_imports_no_event_type_and_no_source_module(postgres_url, source, tmp_path):
    """An agent runs `duel tools wait` again after every answer, a hundred of them at once in the scale
    bench: a wait that reads no event and no source must not pay for loading them (about 25 ms)."""
    service = DuelService(tmp_path / "a", store=postgres_url)
    alice = join(service, source, "Alice")
    wait = ["tools", "wait", "--duel-id", alice.duel_id, "--participant-id", alice.id, "--timeout", "0"]
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "rp1_duel", *wait, "--debate-dir", str(tmp_path / "b")],
        capture_output=True,
        text=True,
        env={**clean_env(), "DUEL_STORE": postgres_url, "DUEL_PARTICIPANT_TOKEN": alice.seat.token or ""},
        timeout=60,
    )
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert proc.returncode == 0, proc.stderr
    assert "rp1_duel.coordination._postgres" in imported  # what the process imported is listed
    assert not imported & {"rp1_duel.coordination.events", "rp1_duel.turns.source", "rp1_duel.turns.markdown"}


def test_a_waiting_process_outlives_a_server_restart_and_hears_the_next_turn(small_server, small_url, source, tmp_path):
    host = DuelService(tmp_path / "a", store=small_url)
    alice, bob = join(host, source, "Alice", harness="h", model_id="m"), join(host, source, "Bob")
    token_env = {"DUEL_STORE": small_url, "DUEL_PARTICIPANT_TOKEN": bob.token}
    argv = [sys.executable, "-m", "rp1_duel", "tools", "wait", "--duel-id", bob.duel_id, "--participant-id", bob.id]
    argv += ["--timeout", "40", "--debate-dir", str(tmp_path / "b")]
    waiting = subprocess.Popen(
        argv, env=clean_env(**token_env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    time.sleep(2.0)
    host.store.close()  # type: ignore[attr-defined]
    small_server.stop("fast")
    time.sleep(1.0)
    small_server.start()
    host.append(alice.seat, claim(host, alice), make_turn(1, "Alice", "h", "m"), release=True)
    out, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, err
    result = json.loads(out)["data"]
    assert result["changed"] is True and result["turn_count"] == 1
    assert "duel tools: the store is restarting or failing over; retrying in" in err or (
        "duel tools: the store cannot be reached; retrying in" in err
    )


def test_a_permanent_failure_is_not_marked_transient(small_server, debate_dir):
    missing = small_server.url().replace("/postgres", "/nosuchdb")
    with pytest.raises(DuelError) as info:
        DuelService(debate_dir, store=missing).duel_ids()
    assert info.value.code == "STORAGE_FAILED" and "transient" not in info.value.details


@pytest.fixture
def counted_url(postgres_server: PostgresServer, postgres_url: str) -> Iterator[tuple[str, WireCounter]]:
    """The test's schema reached through a relay that counts round trips on the wire."""
    counter = WireCounter("127.0.0.1", postgres_server.port)
    yield postgres_url.replace(f":{postgres_server.port}/", f":{counter.port}/"), counter
    counter.close()


def test_a_claim_a_refresh_an_append_and_a_release_are_one_round_trip_each(counted_url, source, tmp_path):
    url, wire = counted_url
    alice_host, bob_host = DuelService(tmp_path / "a", store=url), DuelService(tmp_path / "b", store=url)
    alice = join(alice_host, source, "Alice", harness="h", model_id="m")
    bob = join(bob_host, source, "Bob", harness="h", model_id="m")
    alice_host.status(alice.duel_id)  # each process has seen the duel once
    bob_host.status(bob.duel_id)
    trips: dict[str, int] = {}

    def count(name: str, op: Callable[[], T]) -> T:
        with wire.counting() as made:
            result = op()
        trips[name] = made[0]
        return result

    lease = count("claim", lambda: alice_host.claim_lock(alice.seat)).lease
    count("refresh", lambda: alice_host.refresh_lock(alice.seat, lease))
    count("append", lambda: alice_host.append(alice.seat, lease, make_turn(1, "Alice", "h", "m"), release=False))
    count("release", lambda: alice_host.release_lock(alice.seat, lease))
    bob_host.wait(bob.duel_id, bob.id, timeout=5)  # Bob's process learns of Alice's turn as a waiter does
    lease = count("peer's claim after its wait", lambda: bob_host.claim_lock(bob.seat)).lease
    turn = make_turn(2, "Bob", "h", "m", previous_stance="OPEN_TO_DEBATE")
    count("peer's append and release", lambda: bob_host.append(bob.seat, lease, turn, release=True))
    assert trips == dict.fromkeys(trips, 1)


def test_an_op_on_an_out_of_date_view_answers_as_the_store_stands(postgres_url, source, tmp_path):
    alice_host, bob_host = (
        DuelService(tmp_path / "a", store=postgres_url),
        DuelService(tmp_path / "b", store=postgres_url),
    )
    alice, bob = join(alice_host, source, "Alice"), join(bob_host, source, "Bob")
    bob_host.status(bob.duel_id)  # Bob's process sees the floor free...
    lease = claim(alice_host, alice)  # ...then Alice takes it, unknown to Bob's process
    refused = bob_host.claim_lock(bob.seat)
    assert not refused.acquired and refused.owner_participant_id == alice.id
    alice_host.release_lock(alice.seat, lease)
    assert alice_host.claim_lock(alice.seat).acquired  # Alice's own view was out of date too: a second grant
    assert bob_host.status(bob.duel_id).lock.fence == 2


def test_a_connection_left_idle_is_closed_and_the_next_op_opens_another(postgres_url, source, tmp_path, monkeypatch):
    monkeypatch.setattr(postgres_link, "IDLE_CLOSE_SECONDS", 0.4)
    service = DuelService(tmp_path / "a", store=named(postgres_url, "idle"))
    alice = join(service, source, "Alice")
    assert duel_connections(postgres_url, "idle") == 1
    time.sleep(1.0)  # a model thinking
    assert duel_connections(postgres_url, "idle") == 0
    assert service.status(alice.duel_id).participant_count == 1
    assert duel_connections(postgres_url, "idle") == 1


def test_on_a_full_server_each_op_gives_its_connection_back(small_server, small_url, source, tmp_path):
    service = DuelService(tmp_path / "a", store=named(small_url, "crowded"))
    alice = join(service, source, "Alice")
    store = service.store
    assert isinstance(store, PostgresStore)
    store.link.drop()
    told: list[str] = []
    service.on_store_wait = told.append
    filler = server_filled(small_server)
    filler.__enter__()
    threading.Timer(0.5, filler.__exit__, (None, None, None)).start()
    assert service.status(alice.duel_id).participant_count == 1  # refused for want of room, then let in
    assert told and all(line.startswith("the store is full of connections; retrying in") for line in told)
    assert duel_connections(small_url, "crowded") == 0  # given back when the op ended: the server was full just now


def test_ops_on_out_of_date_views_again_and_again_never_fail(postgres_url, source, tmp_path):
    """Each write of Bob's host runs on a view Alice's host has moved: the guess fails every time,
    inside a pipeline, past the count at which a driver would prepare its statements."""
    hosts = [DuelService(tmp_path / name, store=postgres_url) for name in ("a", "b")]
    alice, bob = join(hosts[0], source, "Alice"), join(hosts[1], source, "Bob")
    for _ in range(12):
        hosts[1].status(bob.duel_id)  # seen now...
        hosts[0].release_lock(alice.seat, claim(hosts[0], alice))  # ...and moved by the other host
        hosts[1].record_usage(bob.seat, 2, Usage(input_tokens=1, requests=1))
    assert len(hosts[1].events(bob.duel_id, [EventType.USAGE])) == 12


def test_a_long_wait_outlasts_writes_that_keep_its_view_out_of_date(postgres_url, source, tmp_path):
    """Writes that wake nobody (usage events) keep moving the duel under a waiting seat, whose marks of
    presence then run on an out-of-date view: each is run again, and the wait ends as waits end."""
    writer = DuelService(tmp_path / "a", store=postgres_url)
    waiter = DuelService(tmp_path / "b", store=postgres_url)
    settings = DuelSettings(lease_seconds=5)
    alice = writer.join(target=str(source), participant_name="Alice", harness="h", model_id="m", settings=settings)
    bob = waiter.join(target=str(source), participant_name="Bob", harness="h", model_id="m", settings=settings)
    answer: list[object] = []

    def wait() -> None:
        try:
            answer.append(waiter.wait(bob.duel_id, bob.seat.participant_id, 7, participant_token=bob.seat.token))
        except DuelError as exc:
            answer.append(exc)

    waiting = threading.Thread(target=wait)
    waiting.start()
    while waiting.is_alive():  # a mark of presence every 5/3 s: four of them meet a moved duel
        writer.record_usage(alice.seat, 1, Usage(input_tokens=1, requests=1))
        time.sleep(0.05)
    [result] = answer
    assert not isinstance(result, DuelError), result


@pytest.mark.parametrize("view", ["status", "observe"])
def test_a_clock_read_refused_by_a_full_server_is_waited_out(postgres_url, source, tmp_path, view):
    """The database's clock is a query too: whichever read of it a view makes is refused, the view is retried
    as any op is, never a traceback."""
    service = DuelService(tmp_path / "d", store=postgres_url)
    alice = join(service, source, "Alice")
    read_clock, reads = service.clock, [0]

    def counted():
        reads[0] += 1
        return read_clock()

    def look() -> int:
        return (service.status(alice.duel_id) if view == "status" else service.observe(alice.duel_id).status).turn_count

    service.clock = counted
    look()
    for refused in range(1, reads[0] + 1):
        calls = [0]

        def clock(refused: int = refused, calls: list[int] = calls):
            calls[0] += 1
            if calls[0] == refused:
                raise psycopg.OperationalError("connection failed: FATAL:  sorry, too many clients already")
            return read_clock()

        service.clock = clock
        pauses: list[str] = []
        service.on_store_wait = pauses.append
        assert look() == 0
        assert pauses and "full of connections" in pauses[0], refused
