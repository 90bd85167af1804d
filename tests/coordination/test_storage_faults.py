"""What the disk and the operating system can do to a duel: a full disk, a read-only or
foreign debate dir, a vanished source, undecodable arguments, a crash while a duel is
created, a network filesystem, a lock held elsewhere. Every one is an answer with a code
(one JSON object, exit 1 or 2), and none leaves a half-written artifact, a temp file or a
stuck lease."""

from __future__ import annotations

import errno
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from rp1_duel import files
from rp1_duel.coordination import DuelLock, DuelService, Seat, storage
from rp1_duel.errors import DuelError

from helpers import claim, join, make_turn, run_tools


def limit_file_size(size: int):
    """A child whose writes stop at ``size`` bytes per file: a full disk, as the writer sees it."""

    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return preexec


def without_privileges() -> tuple[str, ...]:
    """A prefix that makes file modes bind the child even when the tests run as root."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: file modes cannot be made to bind")
    return ("setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--")


def temp_files(root: Path) -> list[Path]:
    return list(root.rglob("*.tmp"))


@pytest.fixture
def service(debate_dir: Path) -> DuelService:
    """On the system clock: `duel tools` processes share these duels, and to them a lease
    granted on a manual clock's boot is over (docs/protocol.md section 4, "Clocks")."""
    return DuelService(debate_dir)


def seated(service: DuelService, source: Path):
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    return alice, bob


def append_args(player, lease, turn_file: Path, debate_dir: Path) -> list[str]:
    return [
        "append",
        "--duel-id",
        player.duel_id,
        "--participant-id",
        player.id,
        "--participant-token",
        player.token,
        "--lease-token",
        lease.value,
        "--turn-file",
        str(turn_file),
    ]


@pytest.mark.slow
def test_a_full_disk_during_append_answers_storage_failed_and_loses_nothing(service, source, debate_dir, tmp_path):
    alice, _ = seated(service, source)
    lease = claim(service, alice)
    artifact = debate_dir / f"{alice.duel_id}.md"
    before = artifact.read_bytes()
    turn_file = tmp_path / "turn.md"
    turn_file.write_text(make_turn(1, "Alice", "claude-code", "claude-x"))

    result = run_tools(
        *append_args(alice, lease, turn_file, debate_dir),
        debate_dir=debate_dir,
        preexec_fn=limit_file_size(len(before) + 64),
    )

    assert result.code == 1
    assert result.error["code"] == "STORAGE_FAILED"
    assert result.error["details"]["errno"] == "EFBIG"
    assert artifact.read_bytes() == before
    assert temp_files(tmp_path) == []
    assert service.status(alice.duel_id).to_dict()["turn_count"] == 0
    # The lease was not lost with the write: the same holder appends once the disk has room.
    assert service.append(alice.seat, lease, turn_file.read_text()).turn_number == 1


@pytest.mark.slow
def test_a_full_disk_while_a_duel_is_created_leaves_no_artifact_and_no_duel(source, debate_dir, tmp_path):
    join_args = ["join", "--target", str(source), "--participant-name", "Alice"]

    failed = run_tools(*join_args, debate_dir=debate_dir, preexec_fn=limit_file_size(200))

    assert failed.code == 1 and failed.error["code"] == "STORAGE_FAILED"
    assert list(debate_dir.glob("*.md")) == [] and temp_files(tmp_path) == []
    assert list((debate_dir / ".duel" / "duels").iterdir()) == []
    joined = run_tools(*join_args, debate_dir=debate_dir).data
    assert [p.name for p in debate_dir.glob("*.md")] == [f"{joined['duel_id']}.md"]


CRASH_DURING_CREATION = """
import os, signal, sys
from rp1_duel.coordination import _artifact_writer as artifact_writer
from rp1_duel.coordination.service import DuelService

real = artifact_writer.write_artifact
def die_before_the_artifact(tx, turns, conclusion=None, *, create=False):
    if create:
        os.kill(os.getpid(), signal.SIGKILL)
    real(tx, turns, conclusion, create=create)
artifact_writer.write_artifact = die_before_the_artifact
DuelService(sys.argv[1]).join(target=sys.argv[2], participant_name="Alice")
"""


@pytest.mark.slow
def test_a_crash_while_a_duel_is_created_leaves_no_orphan_artifact(service, source, debate_dir, tmp_path):
    script = tmp_path / "crash.py"
    script.write_text(CRASH_DURING_CREATION)

    proc = subprocess.run([sys.executable, str(script), str(debate_dir), str(source)], capture_output=True)

    assert proc.returncode == -signal.SIGKILL
    assert list(debate_dir.glob("*.md")) == []
    # The duel the dead process indexed gets its artifact from the next join, and is the one used.
    alice, bob = seated(service, source)
    assert alice.duel_id == bob.duel_id
    assert [p.name for p in debate_dir.glob("*.md")] == [f"{alice.duel_id}.md"]
    assert service.status(alice.duel_id).to_dict()["participants"][1]["display_name"] == "Bob"


@pytest.mark.slow
def test_a_read_only_duel_folder_answers_storage_failed(service, source, debate_dir, tmp_path):
    prefix = without_privileges()
    alice, _ = seated(service, source)
    lease = claim(service, alice)
    turn_file = tmp_path / "turn.md"
    turn_file.write_text(make_turn(1, "Alice", "claude-code", "claude-x"))
    folder = debate_dir / ".duel" / "duels" / alice.duel_id
    folder.chmod(0o500)
    try:
        result = run_tools(*append_args(alice, lease, turn_file, debate_dir), debate_dir=debate_dir, prefix=prefix)
    finally:
        folder.chmod(0o700)

    assert result.code == 1
    assert result.error["code"] == "STORAGE_FAILED"
    assert result.error["details"]["errno"] == "EACCES"
    assert service.append(alice.seat, lease, turn_file.read_text()).turn_number == 1


@pytest.mark.slow
def test_a_join_lock_the_caller_may_not_open_answers_storage_failed(service, source, debate_dir):
    prefix = without_privileges()
    seated(service, source)
    lock = debate_dir / ".duel" / "join.lock"
    lock.chmod(0o000)  # as another user's 0600 file looks to this one

    result = run_tools(
        "join",
        "--target",
        str(source),
        "--participant-name",
        "Carol",
        "--topic",
        "Other",
        debate_dir=debate_dir,
        prefix=prefix,
        timeout=60,
    )

    assert result.code == 1
    assert result.error["code"] == "STORAGE_FAILED"
    assert result.error["details"]["path"] == str(lock)


@pytest.mark.slow
def test_a_source_replaced_by_a_folder_answers_target_unreadable(service, source, debate_dir, tmp_path):
    alice, _ = seated(service, source)
    lease = claim(service, alice)
    turn_file = tmp_path / "turn.md"
    turn_file.write_text(make_turn(1, "Alice", "claude-code", "claude-x"))
    source.unlink()
    source.mkdir()

    result = run_tools(*append_args(alice, lease, turn_file, debate_dir), debate_dir=debate_dir)

    assert result.code == 1
    assert result.error["code"] == "TARGET_UNREADABLE"
    assert result.error["details"]["next_step"] == "close"


@pytest.mark.slow
def test_an_unreadable_source_at_join_answers_target_unreadable(source, debate_dir):
    prefix = without_privileges()
    source.chmod(0o000)

    result = run_tools(
        "join", "--target", str(source), "--participant-name", "Alice", debate_dir=debate_dir, prefix=prefix
    )

    assert result.code == 1
    assert result.error["code"] == "TARGET_UNREADABLE"
    assert not debate_dir.exists() or list(debate_dir.glob("*.md")) == []


@pytest.mark.slow
def test_arguments_that_are_not_utf8_are_refused_and_leave_nothing(source, debate_dir):
    result = run_tools(
        b"join",
        b"--target",
        os.fsencode(source),
        b"--participant-name",
        b"Alice",
        b"--topic",
        b"caf\xe9",
        debate_dir=debate_dir,
    )

    assert result.code == 2
    assert result.error["code"] == "INVALID_ARGUMENT"
    assert "not valid UTF-8" in result.error["message"]
    assert not debate_dir.exists()
    # The people's front answers with one line too.
    proc = subprocess.run([sys.executable, "-m", "rp1_duel", "join", b"--target", b"/tmp/\xff.md"], capture_output=True)
    assert proc.returncode == 2
    assert proc.stderr.decode().startswith("duel: INVALID_ARGUMENT: ") and proc.stderr.count(b"\n") == 1


@pytest.mark.slow
def test_tools_without_an_op_answers_with_a_json_error():
    result = run_tools()

    assert result.code == 2
    assert result.envelope["command"] is None
    assert result.error["code"] == "INVALID_ARGUMENT"
    assert "join" in result.error["message"]


@pytest.mark.slow
@pytest.mark.parametrize("flag", ["--turn-file", "--summary-file"])
def test_an_endless_input_file_is_refused_after_a_bounded_read(service, source, debate_dir, flag):
    alice, _ = seated(service, source)
    lease = claim(service, alice)
    op = ["append"] if flag == "--turn-file" else ["release-lock", "--close", "--outcome", "DISSENT"]
    args = [
        *op,
        "--duel-id",
        alice.duel_id,
        "--participant-id",
        alice.id,
        "--participant-token",
        alice.token,
        "--lease-token",
        lease.value,
        flag,
        "/dev/zero",
    ]

    result = run_tools(*args, debate_dir=debate_dir, timeout=30)

    assert result.code == 2
    assert result.error["code"] == "INVALID_ARGUMENT"
    assert "larger than 1024 KiB" in result.error["message"]


@pytest.mark.slow
def test_the_lease_token_may_come_from_the_environment(service, source, debate_dir):
    alice, _ = seated(service, source)
    lease = claim(service, alice)
    args = ["refresh-lock", "--duel-id", alice.duel_id, "--participant-id", alice.id]

    result = run_tools(
        *args, debate_dir=debate_dir, env={"DUEL_PARTICIPANT_TOKEN": alice.token, "DUEL_LEASE_TOKEN": lease.value}
    )

    assert result.data["refreshed"] is True


def test_a_failed_folder_fsync_after_the_write_still_reports_the_recorded_turn(
    service, source, debate_dir, monkeypatch
):
    alice, _ = seated(service, source)
    lease = claim(service, alice)

    def failing_fsync(folder: Path) -> None:
        raise OSError(errno.EIO, "Input/output error", str(folder))

    monkeypatch.setattr(files, "fsync_dir", failing_fsync)
    result = service.append(alice.seat, lease, make_turn(1, "Alice", "claude-code", "claude-x"))

    assert result.turn_number == 1
    assert "<!-- duel:turn n=1 " in (debate_dir / f"{alice.duel_id}.md").read_text()


def test_only_a_write_of_the_lease_alone_skips_the_folder_fsync(service, source, debate_dir, monkeypatch):
    """A turn reaches the disk before it is answered; a grant, a refresh and a release (which a power
    failure ends anyway) skip the state folder's fsync after the rename (docs/protocol.md section 4)."""
    alice, _ = seated(service, source)
    synced: list[str] = []
    real_fsync_dir = files.fsync_dir

    def recording_fsync_dir(folder: Path) -> None:
        synced.append(folder.name)
        real_fsync_dir(folder)

    monkeypatch.setattr(files, "fsync_dir", recording_fsync_dir)
    state_folder = alice.duel_id  # the state folder is named after the duel

    def folder_syncs(op: Callable[[], object]) -> int:
        synced.clear()
        op()
        return synced.count(state_folder)

    lease = claim(service, alice)
    assert synced.count(state_folder) == 0
    assert folder_syncs(lambda: service.refresh_lock(alice.seat, lease)) == 0
    assert (
        folder_syncs(lambda: service.append(alice.seat, lease, make_turn(1, "Alice", "claude-code", "claude-x"))) == 1
    )
    assert folder_syncs(lambda: service.release_lock(alice.seat, lease)) == 0


def test_a_dead_writers_temp_files_are_removed_by_the_next_op(service, source, debate_dir):
    alice, _ = seated(service, source)
    folder = debate_dir / ".duel" / "duels" / alice.duel_id
    leftovers = [folder / ".state.json.0badc0de.tmp", folder / f".{alice.duel_id}.md.0badc0de.tmp"]
    for leftover in leftovers:
        leftover.write_text("half")

    claim(service, alice)

    assert not any(p.exists() for p in leftovers)


def test_no_temp_file_ever_lands_beside_the_artifacts(service, source, debate_dir, monkeypatch):
    created: list[Path] = []
    real_open = os.open

    def recording_open(path, flags, mode=0o777, **kwargs):
        if str(path).endswith(".tmp"):
            created.append(Path(path))
        return real_open(path, flags, mode, **kwargs)

    monkeypatch.setattr("rp1_duel.coordination.storage.os.open", recording_open)
    alice, _ = seated(service, source)
    service.append(alice.seat, claim(service, alice), make_turn(1, "Alice", "claude-code", "claude-x"))

    assert created, "the writes went through write_atomic"
    assert all(debate_dir / ".duel" in p.parents for p in created)


def test_a_debate_dir_on_a_network_filesystem_is_refused(source, debate_dir, monkeypatch):
    monkeypatch.setattr(storage, "filesystem_type", lambda path: "nfs4")

    with pytest.raises(DuelError) as refused:
        join(DuelService(debate_dir), source, "Alice")

    assert refused.value.code == "FILESYSTEM_UNSUPPORTED"
    assert refused.value.details == {"filesystem": "NFS"}
    assert "local disk" in refused.value.message
    assert not (debate_dir / ".duel").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("findmnt") is None, reason="Linux findmnt")
def test_filesystem_type_is_what_findmnt_reports(tmp_path):
    reported = subprocess.run(
        ["findmnt", "--noheadings", "--output", "FSTYPE", "--target", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()

    assert storage.filesystem_type(tmp_path) == reported


MOUNTINFO = (
    b"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
    b"36 27 0:53 / /mnt/shared\\040dir rw,relatime shared:7 master:2 - nfs4 server:/export rw,vers=4.2\n"
    b"37 27 0:54 / /mnt/odd rw - fuse.sshfs me@host:/home rw\n"
)


@pytest.mark.parametrize(("device", "kind"), [((0, 53), "nfs4"), ((254, 0), "ext4"), ((0, 54), "fuse.sshfs")])
def test_mount_type_reads_the_type_of_a_device_past_optional_tags(device, kind):
    major, minor = device

    assert storage.mount_type(MOUNTINFO, major=major, minor=minor) == kind


def test_mount_type_of_a_device_not_mounted_is_none():
    assert storage.mount_type(MOUNTINFO, major=8, minor=1) is None
    assert storage.mount_type(b"garbage\n\n1 2 0:53\n", major=0, minor=53) is None


def test_a_filesystem_without_a_mount_table_is_taken_as_local(tmp_path, monkeypatch):
    monkeypatch.setattr(storage, "MOUNTINFO", str(tmp_path / "absent"))

    assert storage.filesystem_type(tmp_path) is None


# -- the debate dir's file locks (docs/protocol.md section 4, "Locks and filesystems") ------------


def lock_code(path: Path, timeout: float = 0.05) -> str | None:
    """The error code of taking ``path``'s DuelLock (and giving it back), or None when it was taken."""
    try:
        with DuelLock(path, timeout=timeout):
            return None
    except DuelError as exc:
        return exc.code


def in_a_thread(path: Path) -> str | None:
    """:func:`lock_code` from another thread of this process."""
    found: list[str | None] = []
    thread = threading.Thread(target=lambda: found.append(lock_code(path)))
    thread.start()
    thread.join()
    return found[0]


def test_a_thread_may_take_its_lock_again_and_other_threads_wait_until_the_outermost_hold_ends(tmp_path):
    path = tmp_path / "lock"
    with DuelLock(path):
        with DuelLock(path, timeout=0.01):  # re-entered: granted at once
            assert in_a_thread(path) == "LOCK_TIMEOUT"
        assert in_a_thread(path) == "LOCK_TIMEOUT"  # the inner hold's end leaves the file locked
    assert in_a_thread(path) is None
    assert path.exists()  # never removed: a waiter must not lock a name that is gone
    assert path.stat().st_mode & 0o777 == 0o600


FILELOCK_HOLDER = """
import sys
from filelock import FileLock
with FileLock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()
"""
FILELOCK_PROBE = """
import sys
from filelock import FileLock, Timeout
try:
    FileLock(sys.argv[1]).acquire(timeout=0.05)
except Timeout:
    print("held")
"""


@pytest.mark.slow
def test_duel_lock_and_filelock_exclude_each_other_across_processes(tmp_path):
    """An older `duel` took the same flock through filelock: both kinds of process share a debate dir."""
    path = tmp_path / "lock"
    argv = [sys.executable, "-c", FILELOCK_HOLDER, str(path)]
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as holder:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline() == "held\n"
        assert lock_code(path) == "LOCK_TIMEOUT"
        holder.stdin.close()
        assert holder.wait(timeout=30) == 0
    assert lock_code(path) is None

    def probe() -> str:
        found = subprocess.run(
            [sys.executable, "-c", FILELOCK_PROBE, str(path)], capture_output=True, text=True, timeout=30
        )
        assert found.returncode == 0, found.stderr
        return found.stdout

    with DuelLock(path):
        assert probe() == "held\n"
    assert probe() == ""


def test_an_op_on_a_duel_that_does_not_exist_creates_no_folder_for_its_lock(service, source, debate_dir):
    alice, _ = seated(service, source)
    with pytest.raises(DuelError) as missing:
        service.claim_lock(Seat("2026-01-01-no-such-duel", alice.id, alice.token))
    assert missing.value.code == "DUEL_NOT_FOUND"
    assert sorted(path.name for path in (debate_dir / ".duel" / "duels").iterdir()) == [alice.duel_id]
