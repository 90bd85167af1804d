"""How long `duel verify` takes on 200 cited URLs, served by the local fake web.

Run: python bench/bench_verify.py

A real duel's artifact (four turns through the service) cites 200 pages, each with a quoted
excerpt (190 pages that hold it, 10 dead links), so every citation is fetched, extracted and
searched. Cold: no sidecar, an empty page cache. Warm: the same run again, reusing the
sidecar's verdicts (nothing is fetched). Peak memory: the cold run again under tracemalloc.
Targets: cold <= 3 s, warm <= 0.3 s.
"""

from __future__ import annotations

import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from rp1_duel.coordination import DuelService  # noqa: E402
from rp1_duel.record.verification import dumps  # noqa: E402
from rp1_duel.verify import (  # noqa: E402
    Fetcher,
    FetchPolicy,
    PageCache,
)
from rp1_duel.verify.run import ArtifactVerification, Verifier, verify_artifact  # noqa: E402
from rp1_duel.vocabulary import Verdict  # noqa: E402

from fake_web import FakeWeb  # noqa: E402
from helpers import SOURCE, duel_citing  # noqa: E402

CITATIONS = 200
DEAD = 10
TURNS = 4
TARGETS = {"cold": 3.0, "warm": 0.3}


def build(folder: Path, web: FakeWeb) -> Path:
    source = folder / "design.md"
    source.write_text(SOURCE, encoding="utf-8")
    cited = [f'{web.url(f"/fact/{n}")} "Fact number {n} is true."' for n in range(CITATIONS - DEAD)]
    cited += [web.url(f"/missing/{n}") for n in range(DEAD)]
    per_turn = CITATIONS // TURNS
    turns = [{"citing": tuple(cited[k * per_turn : (k + 1) * per_turn])} for k in range(TURNS)]
    return duel_citing(DuelService(folder / "debates"), source, *turns)


def verify(artifact: Path, cache: Path) -> ArtifactVerification:
    verifier = Verifier(Fetcher(FetchPolicy(allow_private_hosts=True)), (), PageCache(cache))
    done = verify_artifact(artifact, verifier)
    if done.changed:
        done.sidecar_path.write_bytes(dumps(done.sidecar))
    return done


def timed(artifact: Path, cache: Path) -> tuple[float, ArtifactVerification]:
    started = time.perf_counter()
    done = verify(artifact, cache)
    return time.perf_counter() - started, done


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, FakeWeb() as web:
        root = Path(folder)
        artifact = build(root, web)
        verify(artifact, root / "warm-up")  # the libraries' imports are not the run's cost
        artifact.with_name(artifact.stem + ".verify.json").unlink()
        web.requests.clear()

        cold, done = timed(artifact, root / "cache")
        fetched = len(web.requests)
        warm, again = timed(artifact, root / "cache")
        urls = sum(entry.citation.kind == "url" for entry in done.sidecar.citations)
        assert urls == CITATIONS and done.sidecar.counts()[Verdict.FABRICATED] == DEAD, done.sidecar.counts()
        assert fetched == CITATIONS and len(web.requests) == CITATIONS and not again.changed

        artifact.with_name(artifact.stem + ".verify.json").unlink()
        tracemalloc.start()
        verify(artifact, root / "cache-traced")
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()

    print(f"duel verify, {CITATIONS} cited URLs ({DEAD} dead) in {TURNS} turns, local fake web:")
    for name, seconds in (("cold", cold), ("warm", warm)):
        verdict = "ok" if seconds <= TARGETS[name] else "OVER TARGET"
        print(f"  {name:<5} {seconds:6.3f} s   (target <= {TARGETS[name]} s: {verdict})")
    print(f"  peak memory of a cold run (tracemalloc): {peak / 2**20:.1f} MiB")
    if cold > TARGETS["cold"] or warm > TARGETS["warm"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
