"""A long run of the lease campaign (tests/campaign/lease_campaign.py), printing its figures.

    python bench/campaign.py --store dir|postgres --seed N --ops N [--broken] [--folder PATH]

Same seed, same plan of faults and the same choices of every client: a failing run prints the
command that replays it. ``--store postgres`` starts a PostgreSQL server of its own (Debian's
binaries, as tests/pg_server.py does). ``--broken`` runs the store without fencing, which the
checker must catch. Exits 1 when the checker finds a violation.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest  # tests/pg_server.py skips through it where PostgreSQL is missing

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path[:0] = [str(TESTS / "campaign"), str(TESTS)]

from lease_campaign import run_campaign  # noqa: E402  the tests' folders are put on the path first


@contextlib.contextmanager
def server_for(store: str) -> Iterator[Any]:
    """A PostgreSQL server of the run's own for ``postgres``; none for ``dir``."""
    if store != "postgres":
        yield None
        return
    from pg_server import running_server

    with running_server() as server:
        yield server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=["dir", "postgres"], required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--ops", type=int, required=True)
    parser.add_argument("--broken", action="store_true", help="fencing switched off: the checker must catch it")
    parser.add_argument("--folder", type=Path, help="where the run's files stay (default: a new temp dir)")
    parser.add_argument("--hours", type=float, default=6.0, help="stop after this long even short of --ops")
    args = parser.parse_args()
    folder = args.folder or Path(tempfile.mkdtemp(prefix=f"duel-campaign-{args.store}-{args.seed}-"))
    try:
        with server_for(args.store) as server:
            result = run_campaign(
                folder,
                store=args.store,
                seed=args.seed,
                ops=args.ops,
                broken=args.broken,
                server=server,
                time_limit=args.hours * 3600,
            )
    except pytest.skip.Exception as skipped:  # no PostgreSQL server binaries, as tests/pg_server.py says
        print(f"campaign: {skipped}", file=sys.stderr)
        return 2
    print(result.report())
    print(f"ops/s: {result.ops / result.seconds:.1f}")
    return 1 if result.violations else 0


if __name__ == "__main__":
    sys.exit(main())
