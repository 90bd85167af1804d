"""A real PostgreSQL server for the tests, started by the suite itself (a pytest plugin).

Debian's server binaries (``apt-get install postgresql``, done by ``.ci/run``): ``initdb``
into a temp dir, ``pg_ctl start`` on a free port of 127.0.0.1 with its socket in that dir,
stopped at the end of the session. initdb refuses to run as root, so as root the server
runs as the ``postgres`` user through ``runuser``. Each test gets its own schema
(``search_path`` in the URL), so duels of one test never meet another's.
Without the binaries the tests that need the server are skipped, except in CI.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


class PostgresServer:
    def __init__(self, bindir: Path, folder: Path, port: int, as_user: list[str], settings: tuple[str, ...] = ()):
        self.bindir, self.folder, self.port, self.as_user = bindir, folder, port, as_user
        self.data = folder / "data"
        self.settings = settings  # `name=value` server settings, e.g. max_connections=8

    def run(self, tool: str, *args: str) -> None:
        subprocess.run([*self.as_user, str(self.bindir / tool), *args], check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        self.run(
            "pg_ctl",
            "start",
            "-w",
            "-D",
            str(self.data),
            "-l",
            str(self.folder / "log"),
            "-o",
            " ".join([f"-h 127.0.0.1 -p {self.port} -k {self.folder} -F", *(f"-c {kv}" for kv in self.settings)]),
        )

    def stop(self, mode: str = "fast") -> None:
        self.run("pg_ctl", "stop", "-w", "-m", mode, "-D", str(self.data))

    def url(self, schema: str | None = None) -> str:
        options = f"?options=-csearch_path%3D{schema}" if schema else ""
        return f"postgresql://duel@127.0.0.1:{self.port}/postgres{options}"


def _bindir() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(candidates[-1]).parent if candidates else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def running_server(*settings: str) -> Iterator[PostgresServer]:
    """A server of its own in a temp dir, stopped and removed when the block ends."""
    bindir = _bindir()
    if bindir is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL's server binaries are missing: .ci/run installs Debian's postgresql")
        pytest.skip("no PostgreSQL server binaries (apt-get install postgresql)")
    folder = Path(tempfile.mkdtemp(prefix="duel-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root: run the server as postgres
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(folder, "postgres")
    server = PostgresServer(bindir, folder, _free_port(), as_user, settings)
    try:
        server.run("initdb", "-D", str(server.data), "-U", "duel", "--auth=trust", "-E", "UTF8", "--no-sync")
        server.start()
        yield server
    finally:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            server.stop("immediate")
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    with running_server() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A URL to a schema of its own on the session's server."""
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    return postgres_server.url(schema)
