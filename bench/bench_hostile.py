"""Validation time per byte on hostile turns, and a large honest artifact (prints, never asserts).

Run: python bench/bench_hostile.py

(a) random turns built from long runs of the characters the turn grammar reacts to
    (spaces, `*`, `_`, dashes, `#`, parentheses, `<!--`, `<`, quotes, list markers), up to 64 KiB:
    the worst microseconds per byte found, against an honest turn's rate;
(b) `duel validate` on a 50-turn honest artifact of about 2 MiB (target: under 3.6 s,
    the figure before the parser was made linear).
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]

from bench_validate import artifact_text, make_debate, make_source, make_vocabulary  # noqa: E402

from rp1_duel.record import validate_file  # noqa: E402
from rp1_duel.turns import validate_turn  # noqa: E402

from helpers import DEBATE, context  # noqa: E402

PIECES = [
    " ",
    "*",
    "_",
    "-",
    "#",
    "\u2014",
    "(",
    ")",
    "<!--",
    "**a",
    "- ",
    "1. ",
    "`",
    ":",
    "\t",
    "x",
    "\n",
    "**Position**\n",
    "Support:",
    "## Turn 1 \u2014 ",
    "<",
    "<a ",
    "b='",
    "</",
    "<!",
    "@",
]
TRIALS = 300


def hostile(rng: random.Random) -> str:
    parts, size = [], 0
    limit = rng.choice([1_000, 8_000, 32_000, 64_000])
    while size < limit:
        piece = rng.choice(PIECES) * rng.randint(1, 2_000)
        parts.append(piece)
        size += len(piece)
    return "".join(parts)[:limit]


def per_byte(text: str, number: int = 2) -> float:
    started = time.perf_counter()
    validate_turn(text, context(number))
    return (time.perf_counter() - started) / max(1, len(text.encode())) * 1e6


def main() -> None:
    rng = random.Random(11)
    honest = min(per_byte(DEBATE[1]) for _ in range(20))
    worst, worst_size = 0.0, 0
    for _ in range(TRIALS):
        text = hostile(rng)
        cost = per_byte(text)
        if cost > worst:
            worst, worst_size = cost, len(text)
    print(
        f"(a) {TRIALS} hostile turns up to 64 KiB: worst {worst:.2f} µs/byte (a {worst_size}-character turn); "
        f"an honest turn: {honest:.2f} µs/byte"
    )

    vocabulary = make_vocabulary(rng, 4000)
    source = make_source(rng, vocabulary)
    texts = make_debate(50, rng, source, vocabulary, size=17)
    with tempfile.TemporaryDirectory() as folder:
        source_path = Path(folder) / "design.md"
        source_path.write_bytes(source.text.encode())
        path = Path(folder) / "big.md"
        path.write_text(artifact_text(texts, source_path, path), encoding="utf-8")
        started = time.perf_counter()
        report = validate_file(path)
        seconds = time.perf_counter() - started
        size = path.stat().st_size
    print(
        f"(b) duel validate, 50 honest turns, {size / 1024 / 1024:.1f} MiB: {seconds:.2f} s "
        f"({'valid' if report.valid else 'INVALID'}; target under 3.6 s)"
    )


if __name__ == "__main__":
    main()
