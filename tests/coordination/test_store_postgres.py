"""The PostgreSQL store (docs/protocol.md section 4, "Stores") against a real server the suite starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import psycopg
import pytest

from rp1_duel.clock import ManualClock
from rp1_duel.coordination import DebateDir, DuelService, LeaseToken, Seat, Usage
from rp1_duel.coordination._postgres import GUESSES_BEFORE_LOCKING, SCHEMA_VERSION, PostgresStore
from rp1_duel.errors import DuelError
from rp1_duel.participant.lease_keeper import LeaseKeeper
from rp1_duel.record import validate_file
from rp1_duel.settings import DuelSettings, redact
from rp1_duel.vocabulary import EventType

from helpers import claim, join, make_turn, run_tools, stop

pytestmark = pytest.mark.slow  # every test here needs the PostgreSQL server the suite starts


def schema_versions(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        return [row[0] for row in conn.execute("SELECT version FROM schema_version ORDER BY version")]


def test_the_schema_is_created_on_first_join_and_init_is_idempotent(postgres_url, source, debate_dir):
    service = DuelService(debate_dir, store=postgres_url)
    join(service, source, "Alice")
    assert schema_versions(postgres_url) == list(range(1, SCHEMA_VERSION + 1))
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-m", "rp1_duel", "store", "init", "--store", postgres_url],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
    assert schema_versions(postgres_url) == list(range(1, SCHEMA_VERSION + 1))


def test_a_store_with_no_schema_has_no_duel(postgres_url, debate_dir):
    service = DuelService(debate_dir, store=postgres_url)
    assert service.duel_ids() == []
    with pytest.raises(DuelError) as info:
        service.status("2027-01-15-lease-design")
    assert info.value.code == "DUEL_NOT_FOUND"


def test_leases_are_judged_on_the_databases_clock_not_the_clients(postgres_url, source, tmp_path):
    """Two hosts, one clock a day ahead: the lease a slow host was granted is still live for the fast one."""
    settings = DuelSettings(lease_seconds=60)
    slow, fast = ManualClock(), ManualClock()
    fast.advance(86_400)
    alice_host = DuelService(tmp_path / "a", clock=slow, store=postgres_url)
    bob_host = DuelService(tmp_path / "b", clock=fast, store=postgres_url)
    alice = join(alice_host, source, "Alice", settings=settings)
    bob = join(bob_host, source, "Bob", settings=settings)
    assert bob.duel_id == alice.duel_id
    lease = claim(alice_host, alice)
    refused = bob_host.claim_lock(bob.seat)
    assert (refused.acquired, refused.reason) == (False, "lease_held_by_peer")
    assert alice_host.status(alice.duel_id).lock.fence == lease.fence == 1


def test_a_process_deciding_slowly_holds_no_row_lock_and_its_op_runs_again_on_the_change(
    postgres_url, source, tmp_path, monkeypatch
):
    """The first op of a process on a duel (a `duel tools wait`, niced, on a loaded host: slow to decide)
    keeps no lock on the duel's row while it decides, so the peer's op does not queue behind it."""
    from rp1_duel.coordination import policy

    peer_host, slow_host = (
        DuelService(tmp_path / "a", store=postgres_url),
        DuelService(tmp_path / "b", store=postgres_url),
    )
    alice, bob = join(peer_host, source, "Alice"), join(peer_host, source, "Bob")
    deciding, decide = threading.Event(), threading.Event()
    decide_claim = policy.decide_claim

    def slow_to_decide(*args, **kwargs):
        if threading.current_thread().name == "slow":
            deciding.set()
            decide.wait(30)
        return decide_claim(*args, **kwargs)

    monkeypatch.setattr(policy, "decide_claim", slow_to_decide)
    granted: list[bool] = []
    slow = threading.Thread(target=lambda: granted.append(slow_host.claim_lock(alice.seat).acquired), name="slow")
    slow.start()
    assert deciding.wait(10)
    peer = threading.Thread(target=lambda: peer_host.record_usage(bob.seat, 1, Usage(input_tokens=1, requests=1)))
    peer.start()
    peer.join(5)
    finished = not peer.is_alive()
    decide.set()
    slow.join(30)
    peer.join(30)
    assert finished  # the peer's write landed while the slow process was deciding
    assert granted == [True]  # decided again on the duel as the peer left it
    assert len(peer_host.events(alice.duel_id, [EventType.USAGE])) == 1


def test_the_append_is_a_compare_and_set_on_the_chain_head(postgres_url, source, debate_dir):
    """A writer whose chain head moved under it writes nothing, even past the row lock."""
    service = DuelService(debate_dir, store=postgres_url)
    alice, _bob = join(service, source, "Alice", harness="h", model_id="m"), join(service, source, "Bob")
    lease = claim(service, alice)
    store = service.store
    assert isinstance(store, PostgresStore)
    saves = store.stamp(alice.duel_id)
    store.seen.pop(alice.duel_id)  # the op reads the row with the lock (as after a failed guess),
    store._stale[alice.duel_id] = GUESSES_BEFORE_LOCKING  # then is made to think it read another head

    def write_over_another_head() -> None:
        with store.errors(), store.transaction(alice.duel_id) as tx:
            op = store._ops.op
            op.read = op.read._replace(head="0" * 64)  # what a second writer would have read before the first appended
            store.save(tx.state, [])

    with pytest.raises(DuelError) as info:
        write_over_another_head()
    assert info.value.code == "STORAGE_FAILED" and "changed under this write" in info.value.message
    assert store.stamp(alice.duel_id) == saves  # nothing was written
    result = service.append(alice.seat, lease, make_turn(1, "Alice", "h", "m"))
    assert result.turn_number == 1


def test_duel_tools_over_the_store_and_duel_list(postgres_url, source, tmp_path):
    env = {"DUEL_STORE": postgres_url}
    one = run_tools("join", "--target", str(source), "--participant-name", "Alice", env=env, debate_dir=tmp_path / "a")
    two = run_tools("join", "--target", str(source), "--participant-name", "Bob", env=env, debate_dir=tmp_path / "b")
    assert one.code == two.code == 0
    duel_id = one.data["duel_id"]
    assert two.data["duel_id"] == duel_id
    claimed = run_tools(
        "claim-lock",
        "--duel-id",
        duel_id,
        "--participant-id",
        one.data["participant_id"],
        env={**env, "DUEL_PARTICIPANT_TOKEN": one.data["participant_token"]},
        debate_dir=tmp_path / "a",
    )
    assert claimed.data["acquired"] is True
    status = run_tools("status", "--duel-id", duel_id, "--store", postgres_url, debate_dir=tmp_path / "b")
    assert status.data["lock"]["fence"] == 1
    listed = subprocess.run(
        [
            sys.executable,
            "-m",
            "rp1_duel",
            "list",
            "--json",
            "--store",
            postgres_url,
            "--debate-dir",
            str(tmp_path / "c"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert [row["duel_id"] for row in json.loads(listed.stdout)] == [duel_id]


def test_a_connection_string_is_never_shown_with_its_password(source, debate_dir):
    url = "postgresql://duel:hunter2secret@127.0.0.1:1/duel"
    assert redact(url) == "postgresql://duel:***@127.0.0.1:1/duel"
    assert (
        redact("postgresql://h/db?sslmode=require&password=hunter2") == "postgresql://h/db?sslmode=require&password=***"
    )
    result = run_tools("status", "--duel-id", "2027-01-15-x", "--store", url, debate_dir=debate_dir)
    assert result.code == 1
    assert result.envelope["error"]["code"] == "STORAGE_FAILED"
    assert "hunter2secret" not in json.dumps(result.envelope) + result.stderr


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql://duel:pa?ss#w/rd@db:5432/duel?sslmode=require",
            "postgresql://duel:***@db:5432/duel?sslmode=require",
        ),
        ("postgresql://duel:p@ss@db/duel", "postgresql://duel:***@db/duel"),
        ("postgresql://duel@db/duel", "postgresql://duel@db/duel"),
    ],
)
def test_a_password_with_reserved_characters_is_hidden_whole(url, shown):
    assert redact(url) == shown


def test_a_password_with_reserved_characters_is_never_printed(debate_dir, tmp_path):
    url = "postgresql://duel:hunter?2#secret@127.0.0.1:1/duel"
    failed = run_tools("status", "--duel-id", "2027-01-15-x", "--store", url, debate_dir=debate_dir)
    assert failed.envelope["error"]["code"] == "STORAGE_FAILED"
    config = subprocess.run(
        [sys.executable, "-m", "rp1_duel", "config", "show"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "DUEL_STORE": url},
        timeout=60,
        check=False,
    )
    assert 'store = "postgresql://duel:***@127.0.0.1:1/duel"' in config.stdout
    for shown in (json.dumps(failed.envelope), failed.stderr, config.stdout, config.stderr):
        assert "hunter" not in shown and "secret" not in shown


def test_a_store_that_is_not_a_postgresql_url_is_refused(debate_dir):
    result = run_tools("status", "--duel-id", "x", "--store", "mysql://h/db", debate_dir=debate_dir)
    assert (result.code, result.envelope["error"]["code"]) == (2, "INVALID_ARGUMENT")


def test_the_artifact_is_kept_in_the_database_and_written_into_the_debate_dir(postgres_url, source, debate_dir):
    service = DuelService(debate_dir, store=postgres_url)
    alice = join(service, source, "Alice", harness="h", model_id="m")
    join(service, source, "Bob")
    service.append(alice.seat, claim(service, alice), make_turn(1, "Alice", "h", "m"))
    store = service.store
    assert isinstance(store, PostgresStore)
    state = store.read_state(alice.duel_id)
    local = Path(service.status(alice.duel_id).duel.debate_path).read_bytes()
    assert store.read_artifact(state, 1 << 20) == local
    assert DebateDir(debate_dir).duel_ids() == []  # no state in the debate dir: the database keeps it


def test_two_hosts_with_skewed_clocks_duel_to_consensus_with_byte_identical_artifacts(postgres_url, source, tmp_path):
    """Two debate dirs, client clocks minutes apart, one database: the same record on both and for a reviewer."""
    ahead = ManualClock()
    ahead.advance(7 * 60)
    hosts = {
        1: DuelService(tmp_path / "laptop", clock=ManualClock(), store=postgres_url),
        2: DuelService(tmp_path / "ci", clock=ahead, store=postgres_url),
    }
    settings = DuelSettings(max_turns=4)
    players = {
        1: join(hosts[1], source, "Alice", harness="h", model_id="m", settings=settings),
        2: join(hosts[2], source, "Bob", harness="h", model_id="m", settings=settings),
    }
    for n in range(1, 5):
        seat = 2 - n % 2
        service, player = hosts[seat], players[seat]
        stance = "ACCEPTING_CONSENSUS" if n >= 3 else "OPEN_TO_DEBATE"
        result = service.append(
            player.seat, claim(service, player), make_turn(n, player.name, "h", "m", stance), release=n < 4
        )
    assert result.terminal_outcome == "ACCEPTED_CONSENSUS"
    hosts[2].release_lock(
        players[2].seat, hosts[2].claim_lock(players[2].seat).lease, close=True, outcome="ACCEPTED_CONSENSUS"
    )
    hosts[1].status(players[1].duel_id, participant_id=players[1].id, participant_token=players[1].token)
    reviewer = DuelService(tmp_path / "reviewer", store=postgres_url).pull(players[1].duel_id)
    copies = {
        path: path.read_bytes()
        for path in (
            tmp_path / "laptop" / f"{players[1].duel_id}.md",
            tmp_path / "ci" / f"{players[1].duel_id}.md",
            Path(reviewer),
        )
    }
    assert len(set(copies.values())) == 1
    report = validate_file(reviewer)
    assert report.valid, report
    assert 'outcome: "ACCEPTED_CONSENSUS"' in next(iter(copies.values())).decode()


def test_duel_pull_writes_the_artifact_for_a_reviewer(postgres_url, source, tmp_path):
    service = DuelService(tmp_path / "a", store=postgres_url)
    alice = join(service, source, "Alice")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rp1_duel",
            "pull",
            "--duel-id",
            alice.duel_id,
            "--store",
            postgres_url,
            "--debate-dir",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    pulled = Path(proc.stdout.strip())
    assert pulled == tmp_path / "r" / f"{alice.duel_id}.md"
    assert pulled.read_bytes() == (tmp_path / "a" / f"{alice.duel_id}.md").read_bytes()


def _wait_for_release(postgres_url, source, tmp_path, *, break_connection: bool) -> tuple[float, bool]:
    holder_host = DuelService(tmp_path / "a", store=postgres_url)
    waiter_host = DuelService(tmp_path / "b", store=postgres_url)
    alice, bob = join(holder_host, source, "Alice"), join(waiter_host, source, "Bob")
    lease = claim(holder_host, alice)
    store = waiter_host.store
    assert isinstance(store, PostgresStore)
    (pid,) = cast("tuple[int]", store._query("SELECT pg_backend_pid()").fetchone())
    if break_connection:  # the one connection, listening, is lost mid-wait: it is opened again and listens anew
        threading.Timer(0.05, terminate_backend, (postgres_url, pid)).start()
    timer = threading.Timer(0.2, lambda: holder_host.release_lock(alice.seat, lease))
    timer.start()
    started = time.monotonic()
    result = waiter_host.wait(bob.duel_id, bob.id, timeout=10)
    timer.join()
    return time.monotonic() - started - 0.2, result.changed


def terminate_backend(url: str, pid: int) -> None:
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


def test_wait_hears_a_release_through_notify(postgres_url, source, tmp_path):
    late, changed = _wait_for_release(postgres_url, source, tmp_path, break_connection=False)
    assert changed and late < 0.2  # a notification, not the half-second look


def test_a_wait_whose_connection_drops_reconnects_and_still_hears_the_release(postgres_url, source, tmp_path):
    late, changed = _wait_for_release(postgres_url, source, tmp_path, break_connection=True)
    assert changed and late < 2.0


def test_a_copy_of_the_source_that_differs_is_refused_at_join(postgres_url, source, tmp_path):
    """Each host has its own copy; turns are validated against the duel's, so a different copy cannot join."""
    first = DuelService(tmp_path / "a", store=postgres_url)
    alice = join(first, source, "Alice")
    elsewhere = tmp_path / "other-host" / "design.md"
    elsewhere.parent.mkdir()
    elsewhere.write_text(source.read_text() + "\nOne more line.\n", encoding="utf-8")
    second = DuelService(tmp_path / "b", store=postgres_url)
    with pytest.raises(DuelError) as info:
        join(second, elsewhere, "Bob")
    assert info.value.code == "SOURCE_MISMATCH"
    assert second.status(alice.duel_id).participant_count == 1
    elsewhere.write_bytes(source.read_bytes())  # brought to the same version, at another path
    bob = join(second, elsewhere, "Bob", harness="h", model_id="m")
    assert bob.duel_id == alice.duel_id


def test_turns_are_validated_against_the_source_the_database_keeps(postgres_url, source, tmp_path):
    host = DuelService(tmp_path / "a", store=postgres_url)
    alice, _ = join(host, source, "Alice", harness="h", model_id="m"), join(host, source, "Bob")
    source.unlink()  # this host's copy is gone; the duel's is not
    result = host.append(alice.seat, claim(host, alice), make_turn(1, "Alice", "h", "m"))
    assert result.turn_number == 1


def test_a_schema_of_an_earlier_version_is_migrated(postgres_url, debate_dir):
    from rp1_duel.coordination._postgres import MIGRATIONS

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE schema_version (version integer PRIMARY KEY)")
        conn.execute(MIGRATIONS[1])
        conn.execute("INSERT INTO schema_version VALUES (1)")
    DuelService(debate_dir, store=postgres_url).store.ensure()
    assert schema_versions(postgres_url) == list(range(1, SCHEMA_VERSION + 1))


def test_the_database_restarted_mid_duel_loses_nothing_and_the_duel_goes_on(
    postgres_url, postgres_server, source, tmp_path
):
    """Connections lost between ops (and during a wait) are opened again; committed turns and the lease stay."""
    alice_host = DuelService(tmp_path / "a", store=postgres_url)
    bob_host = DuelService(tmp_path / "b", store=postgres_url)
    alice = join(alice_host, source, "Alice", harness="h", model_id="m")
    bob = join(bob_host, source, "Bob", harness="h", model_id="m")
    alice_host.append(alice.seat, claim(alice_host, alice), make_turn(1, "Alice", "h", "m"), release=True)
    lease = claim(bob_host, bob)
    waited: list[bool] = []
    waiter = threading.Thread(
        target=lambda: waited.append(alice_host.wait(alice.duel_id, alice.id, timeout=30).changed)
    )
    waiter.start()
    time.sleep(0.3)
    postgres_server.stop("fast")
    postgres_server.start()
    result = bob_host.append(bob.seat, lease, make_turn(2, "Bob", "h", "m"), release=True)
    waiter.join(timeout=40)
    assert (result.turn_number, waited) == (2, [True])
    status = alice_host.status(alice.duel_id, participant_id=alice.id)
    assert (status.turn_count, status.lock.fence, status.next_step) == (2, 2, "claim_lock")


KILLED_IN_A_TRANSACTION = """
import sys, time
from rp1_duel.coordination.events import LockReleased
from rp1_duel.coordination.service import DuelService
service = DuelService(sys.argv[1], store=sys.argv[2])
with service.transaction(sys.argv[3]) as tx:
    tx.emit(LockReleased(99), by=None)
    tx.commit()  # written, not committed: the database transaction is still open
    print("inside", flush=True)
    time.sleep(60)
"""


def test_a_holder_killed_inside_its_transaction_leaves_nothing_and_frees_the_duel(postgres_url, source, tmp_path):
    service = DuelService(tmp_path / "a", store=postgres_url)
    alice, _ = join(service, source, "Alice"), join(service, source, "Bob")
    before = service.events(alice.duel_id, (EventType.LOCK_RELEASED, EventType.PARTICIPANT_REGISTERED))
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_IN_A_TRANSACTION, str(tmp_path / "k"), postgres_url, alice.duel_id],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "inside"
        proc.kill()  # SIGKILL while it holds the duel's row lock
        proc.wait(timeout=10)
        started = time.monotonic()
        granted = service.claim_lock(alice.seat)
    finally:
        stop(proc)
    assert granted.acquired and time.monotonic() - started < 5
    assert service.events(alice.duel_id, (EventType.LOCK_RELEASED, EventType.PARTICIPANT_REGISTERED)) == before
    assert granted.lease is not None and granted.lease.fence == 1


class FlakyStore:
    """A service whose refreshes fail as a lost database connection does, a given number of times."""

    def __init__(self, failures: int):
        self.failures, self.calls = failures, 0

    def refresh_lock(self, seat, lease):  # noqa: ARG002  DuelService.refresh_lock's signature
        self.calls += 1
        if self.calls <= self.failures:
            raise DuelError("STORAGE_FAILED", "cannot use the store: connection lost")
        return SimpleNamespace(refreshed=True)


@pytest.mark.parametrize(("lease_seconds", "failures", "lost"), [(3, 1, False), (2, 99, True)])
def test_a_lost_connection_during_a_turn_is_retried_within_the_lease(lease_seconds, failures, lost):
    """The keeper retries a refresh the store failed while the lease lasts; past it the floor is lost."""
    service = FlakyStore(failures)
    with LeaseKeeper(
        service=cast("DuelService", service),  # a stand-in: the keeper calls refresh_lock alone
        seat=Seat("d", "p-00000000", "t"),
        lease=LeaseToken("1-x"),
        lease_seconds=lease_seconds,
        deadline=time.monotonic() + 60,
    ) as keeper:
        keeper.lost.wait(3.0)
    assert keeper.lost.is_set() == lost
    assert service.calls >= 2


def test_two_duel_join_processes_on_two_hosts_reach_consensus_through_the_database(postgres_url, source, tmp_path):
    """Real `duel join` participants, each with its own copy of the source and its own debate dir."""
    procs = []
    for name, turns in (("Alice", (1, 3)), ("Bob", (2, 4))):
        host = tmp_path / name.lower()
        script = host / name.lower()  # its folder's name is the scripted model's
        script.mkdir(parents=True)
        (host / "design.md").write_bytes(source.read_bytes())
        for index, n in enumerate(turns):
            stance = "ACCEPTING_CONSENSUS" if n >= 3 else "OPEN_TO_DEBATE"
            turn = make_turn(n, name, "duel", f"scripted:{name.lower()}", stance)
            (script / f"{index}.md").write_text(turn)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "DUEL_"))}
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "rp1_duel",
                    "join",
                    "--target",
                    str(host / "design.md"),
                    "--debate-dir",
                    str(host / "debates"),
                    "--json",
                    "--model",
                    f"scripted:{script}",
                    "--name",
                    name,
                    "--max-turns",
                    "4",
                    "--store",
                    postgres_url,
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
        )
        if name == "Alice":
            time.sleep(1.5)  # seat 1 first
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert [r["outcome"] for r in results] == ["ACCEPTED_CONSENSUS"] * 2
    copies = [Path(r["debate_path"]).read_bytes() for r in results]
    assert copies[0] == copies[1]
    assert all(validate_file(r["debate_path"]).valid for r in results)
    assert 'source_path: "../design.md"' in copies[0].decode()  # as the creating host saw it, on both


# -- the postgresql extra missing (issue 38, item 2) ------------------------------------------------

WITHOUT_PSYCOPG = (
    "import sys; sys.modules['psycopg'] = None; "  # as if the postgresql extra were not installed
    "from rp1_duel.cli import main; main(sys.argv[1:])"
)
NO_SERVER = "postgresql://duel@127.0.0.1:9/duel"


@pytest.mark.slow  # processes
@pytest.mark.parametrize(
    "command",
    [
        ("list",),
        ("store", "init"),
        ("pull", "--duel-id", "d"),
        ("abandon", "d", "--reason", "r"),
        ("join", "--target", "design.md", "--model", "human"),
        ("watch", "--duel-id", "d"),
        ("ask", "--duel-id", "d", "--to", "1", "Why?"),
    ],
)
def test_a_store_without_the_postgresql_extra_is_one_line_with_the_install_command(command, source, tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_PSYCOPG, *command, "--store", NO_SERVER],
        cwd=source.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr == (
        "duel: DEPENDENCY_MISSING: the PostgreSQL store needs the postgresql extra: "
        "pip install 'rp1-duel[postgresql]'\n"
    )


@pytest.mark.slow  # a process
def test_duel_tools_without_the_postgresql_extra_answers_json(source):
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_PSYCOPG, "tools", "status", "--duel-id", "d", "--store", NO_SERVER],
        cwd=source.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    answer = json.loads(done.stdout)
    assert (done.returncode, answer["success"], answer["error"]["code"]) == (1, False, "DEPENDENCY_MISSING")
    assert answer["error"]["details"]["install"] == "pip install 'rp1-duel[postgresql]'"
