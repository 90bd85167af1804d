"""What sealed openings cost the lock service (prints, never asserts). Run: python bench/bench_sealed.py

The opening round of a duel of 2 and of 3 seats, written through the library as `duel join` writes it
(each seat: claim-lock, append with release; sealed: commit-opening first), once plain and once sealed,
on the directory store and on a PostgreSQL store of its own. For each it prints the store transactions
(lock round trips) a seat made, and on PostgreSQL the round trips on the wire (a TCP relay counts them)
and the time the round took. Target: sealed openings add at most one lock round trip per seat.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # run from a checkout, uninstalled

from rp1_duel.coordination import (  # noqa: E402
    DuelService,
    Seat,
)
from rp1_duel.settings import DuelSettings  # noqa: E402

from helpers import SOURCE, make_turn, sealed_opening  # noqa: E402

NAMES = [("Alice", "claude-code", "claude-x"), ("Bob", "codex", "gpt-x"), ("Cleo", "gemini-cli", "gem-x")]


class Counted:
    """The store's transactions, counted: each is one lock round trip (a lock file, or one database round trip)."""

    def __init__(self, service: DuelService):
        self.count = 0
        original = service.store.transaction

        @contextmanager
        def counted(duel_id: str) -> Iterator[Any]:
            self.count += 1
            with original(duel_id) as tx:
                yield tx

        service.store.transaction = counted  # type: ignore[method-assign]


def opening_round(root: Path, store: str | None, seats: int, *, sealed: bool, wire: Any = None) -> dict[str, float]:
    """Seat the duel, then write its opening round; the lock round trips and wire round trips per seat, and ms."""
    root.mkdir(parents=True, exist_ok=True)
    source = root / "design.md"
    source.write_text(SOURCE, encoding="utf-8")
    service = DuelService(root / "debates", store=store)
    settings = DuelSettings(seats=seats, sealed_openings=sealed)
    topic = f"Bench {root.name}"
    handles: list[Seat] = []
    for name, harness, model in NAMES[:seats]:
        joined = service.join(
            target=str(source), participant_name=name, harness=harness, model_id=model, settings=settings, topic=topic
        )
        handles.append(joined.seat)
    texts = [(sealed_opening if sealed else make_turn)(n, *NAMES[n - 1]) for n in range(1, seats + 1)]
    counter = Counted(service)
    counting: AbstractContextManager[list[int]] = wire.counting() if wire else _nothing()
    started = time.perf_counter()
    with counting as trips:
        if sealed:
            for seat, text in zip(handles, texts, strict=True):
                service.commit_opening(seat, text)
        for seat, text in zip(handles, texts, strict=True):
            lease = service.claim_lock(seat).lease
            assert lease is not None
            service.append(seat, lease, text, release=True)
    elapsed = (time.perf_counter() - started) * 1000
    return {"lock": counter.count / seats, "wire": (trips[0] if trips else 0) / seats, "ms": elapsed}


@contextmanager
def _nothing() -> Iterator[list[int]]:
    yield []


def measure(name: str, root: Path, store: str | None, wire: Any = None) -> None:
    print(name)
    for seats in (2, 3):
        plain = opening_round(root / f"plain-{seats}", store, seats, sealed=False, wire=wire)
        sealed = opening_round(root / f"sealed-{seats}", store, seats, sealed=True, wire=wire)
        extra = sealed["lock"] - plain["lock"]
        wire_note = f", wire round trips {plain['wire']:.1f} -> {sealed['wire']:.1f}" if wire else ""
        print(
            f"  {seats} seats: lock round trips a seat {plain['lock']:.1f} -> {sealed['lock']:.1f} "
            f"(+{extra:.1f}){wire_note}; the round {plain['ms']:.1f} ms -> {sealed['ms']:.1f} ms"
        )


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="duel-sealed-"))
    measure("directory store", root / "dir", None)
    try:
        from pg_server import running_server
        from wire_counter import WireCounter
    except ImportError as exc:  # pragma: no cover - psycopg missing
        print(f"PostgreSQL store: skipped ({exc})")
        return
    with running_server() as server:
        relay = WireCounter("127.0.0.1", server.port)
        url = server.url().replace(f":{server.port}/", f":{relay.port}/")
        measure(f"PostgreSQL store (through a relay on :{relay.port})", root / "pg", url, wire=relay)


if __name__ == "__main__":
    main()
