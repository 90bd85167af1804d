"""How fast `duel mcp` answers a harness (prints, never asserts).

Run: python bench/bench_mcp.py [--runs 11] [--store dir|postgresql|both]

A harness spawns `duel mcp` and gives it little time: Codex offers no tool of a server that is not
`required` and has not answered within about a second (issue 37). Over RUNS fresh servers, the
medians of:

- spawn -> the `initialize` answer, and spawn -> the `tools/list` answer (sent right after it);
- the peer's append -> a pending `duel_wait` returning: the seat waits on the peer's turn, the peer
  (this process, through the library) appends it, and the clock runs from the append's return to
  the wait's answer on the server's standard output.

On the directory store, and on PostgreSQL when `initdb` is found (a server of its own, as the tests
start one: tests/pg_server.py); else that store is skipped, saying why. For scale, the median of
`python -c 'import mcp.server.mcpserver'`: the SDK's own import, which `duel mcp` cannot avoid.
Start-up is measured warm (bytecode compiled, page cache warm), as an installed package runs.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # run from a checkout, uninstalled

from rp1_duel.coordination import DuelService  # noqa: E402

from helpers import SOURCE, make_turn  # noqa: E402

ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
PEER = ("Bob", "bench", "m2")  # the peer's name, harness and model, as its turn's heading gives them
PENDING_SECONDS = 0.5  # the wait is under way on the server before the peer appends


def duel_command() -> list[str]:
    script = shutil.which("duel", path=os.path.dirname(sys.executable))
    return [script] if script else [sys.executable, "-m", "rp1_duel"]


class Server:
    """One `duel mcp` process, spoken to in JSON-RPC lines over its standard input and output."""

    def __init__(self, root: Path, store: str | None):
        self.topic = f"Bench {root.name}"  # a duel of its own, in a shared database too
        where = ["--store", store] if store else ["--debate-dir", str(root / "debates")]
        argv = [*duel_command(), "mcp", "--target", str(root / "design.md"), "--name", "Alice", "--harness", "bench"]
        self.stderr = (root / "stderr.txt").open("wb")
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [*argv, "--model-id", "m1", "--topic", self.topic, *where],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=ENV,
            cwd=root,
        )
        self.ids = 0

    def pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        return stdin, stdout

    def send(self, method: str, params: dict[str, Any] | None = None, *, notify: bool = False) -> int:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        if not notify:
            self.ids += 1
            message["id"] = self.ids
        stdin, _ = self.pipes()
        stdin.write(json.dumps(message).encode() + b"\n")
        stdin.flush()
        return self.ids

    def answer(self, request: int) -> dict[str, Any]:
        """The answer to ``request`` (notifications meanwhile are skipped)."""
        _, stdout = self.pipes()
        while True:
            line = stdout.readline()
            if not line:
                raise SystemExit(f"duel mcp ended: {self.stderr.name}")
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == request:
                if "error" in message:
                    raise SystemExit(f"duel mcp refused: {message['error']}")
                return message

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        answer = self.answer(self.send("tools/call", {"name": tool, "arguments": arguments}))
        result: dict[str, Any] = answer["result"]
        if result.get("isError"):
            raise SystemExit(f"{tool} refused: {result['content']}")
        return result

    def close(self) -> None:
        stdin, _ = self.pipes()
        stdin.close()
        self.process.wait(timeout=30)
        self.stderr.close()


def one_run(root: Path, store: str | None) -> tuple[float, float, float]:
    """Seconds from spawn to `initialize`, from spawn to `tools/list`, and from the peer's append to the wait."""
    root.mkdir(parents=True)
    (root / "design.md").write_text(SOURCE, encoding="utf-8")
    server = Server(root, store)
    try:
        server.answer(server.send("initialize", HELLO))
        initialized = time.perf_counter() - server.started
        server.send("notifications/initialized", notify=True)
        server.answer(server.send("tools/list"))
        listed = time.perf_counter() - server.started
        return initialized, listed, handoff(server, root, store)
    finally:
        server.close()


def handoff(server: Server, root: Path, store: str | None) -> float:
    """The peer takes seat 1 and the floor; Alice (the server) joins and waits; the peer appends."""
    service = DuelService(root / "debates", store=store)
    peer = service.join(
        target=str(root / "design.md"), participant_name=PEER[0], harness=PEER[1], model_id=PEER[2], topic=server.topic
    )
    server.call("duel_join")
    claimed = service.claim_lock(peer.seat)
    assert claimed.lease is not None, claimed.reason
    waiting = server.send("tools/call", {"name": "duel_wait", "arguments": {"timeout_seconds": 30}})
    time.sleep(PENDING_SECONDS)
    service.append(peer.seat, claimed.lease, make_turn(1, *PEER).encode("utf-8"), release=True)
    appended = time.perf_counter()
    result = server.answer(waiting)["result"]
    returned = time.perf_counter()
    assert result["structuredContent"]["next_step"] == "claim_lock", result
    return returned - appended


def import_sdk() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import mcp.server.mcpserver"], check=True, env=ENV)
    return time.perf_counter() - started


def measure(label: str, root: Path, store: str | None, runs: int) -> None:
    one_run(root / "warm-up", store)  # compiles nothing more, warms the page cache
    samples = [one_run(root / f"run-{n}", store) for n in range(runs)]
    initialize, tools_list, wait = (statistics.median(column) * 1000 for column in zip(*samples, strict=True))
    print(f"{label}, median of {runs} runs ({' '.join(duel_command())} mcp):")
    print(f"    spawn -> initialize answer        {initialize:7.1f} ms")
    print(f"    spawn -> tools/list answer        {tools_list:7.1f} ms")
    print(f"    peer's append -> duel_wait answer {wait:7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--store", choices=["dir", "postgresql", "both"], default="both")
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "rp1_duel", quiet=1)
    import_sdk()
    sdk = statistics.median(import_sdk() for _ in range(args.runs)) * 1000
    print(f"python -c 'import mcp.server.mcpserver', median of {args.runs}: {sdk:7.1f} ms (the SDK alone)")
    root = Path(tempfile.mkdtemp(prefix="duel-bench-mcp-"))
    try:
        if args.store in ("dir", "both"):
            measure("directory store", root / "dir", None, args.runs)
        if args.store in ("postgresql", "both"):
            postgresql(root / "pg", args.runs)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def postgresql(root: Path, runs: int) -> None:
    """The figures on a PostgreSQL server of its own, or the reason they are skipped."""
    from pg_server import _bindir, running_server

    if _bindir() is None:
        print("PostgreSQL store: skipped, no initdb found (apt-get install postgresql)")
        return
    with running_server() as server:
        measure("PostgreSQL store", root, server.url(), runs)


if __name__ == "__main__":
    main()
