"""How long finding a claim's figures on a page takes, for pages of 1, 2 and 4 MB.

Run: python bench/bench_figures.py

A synthetic page of prose sentences, one figure-bearing sentence in three (counts with
thousands separators, percentages, money, durations, years, number words): about one number
every 60 characters, denser than most real pages. A claim with six figures, some of them
missing (so the number-word pass runs too), is looked up in a fresh :class:`FigureIndex`
each time: the whole cost of a first check of a page. The best of five runs is shown.
Target: 2 MB under 50 ms, and the time linear in the page size (4 MB about twice 2 MB).
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from rp1_duel.turns import FigureIndex, stated_figures  # noqa: E402

SIZES_MB = (1, 2, 4)
TARGET_MS = 50.0  # for 2 MB
RUNS = 5
CLAIM = "Across 1,250 holders, 40% renewed every 15 minutes, saving $1.2 million; 3x fewer at 17.5 percent."
WORDS = [
    "the",
    "lease",
    "holder",
    "renews",
    "every",
    "cycle",
    "and",
    "service",
    "keeps",
    "its",
    "record",
    "while",
    "peers",
    "wait",
    "for",
    "each",
    "turn",
]
FIGURED = (
    "{n:,} requests were served by {m} holders",
    "renewals rose {p}% in {y}",
    "the budget was ${k}.{d} million",
    "a lease lasts {m} minutes and a refresh {s} seconds",
    "about {w} peers joined in {y}",
    "costs fell to EUR {n:,} or {p} per cent",
)
NUMBER_WORDS = ("three", "twelve", "forty-two", "two hundred", "fifteen")


def page(size: int, seed: int = 7) -> str:
    """About ``size`` characters of prose with figures."""
    chance = random.Random(seed)
    parts: list[str] = []
    length = 0
    while length < size:
        sentence = " ".join(chance.choice(WORDS) for _ in range(10))
        if chance.random() < 1 / 3:
            for template in chance.sample(FIGURED, 2):
                figures = template.format(
                    n=chance.randint(1, 999_999),
                    m=chance.randint(2, 90),
                    p=chance.randint(1, 99),
                    y=chance.randint(1990, 2030),
                    k=chance.randint(1, 9),
                    d=chance.randint(0, 9),
                    s=chance.randint(1, 59),
                    w=chance.choice(NUMBER_WORDS),
                )
                sentence += f", {figures}"
        parts.append(sentence[0].upper() + sentence[1:] + ". ")
        length += len(parts[-1])
    return "".join(parts)


def best_ms(text: str) -> tuple[float, int]:
    figures = stated_figures(CLAIM)
    times, missing = [], 0
    for _ in range(RUNS):
        started = time.perf_counter()
        missing = len(FigureIndex(text).missing(figures))
        times.append((time.perf_counter() - started) * 1000)
    return min(times), missing


def main() -> int:
    results = {}
    for megabytes in SIZES_MB:
        text = page(megabytes * 1_000_000)
        took, missing = best_ms(text)
        results[megabytes] = took
        print(f"{megabytes} MB page: {took:6.1f} ms ({missing} of the claim's figures missing)")
    ratio = results[4] / results[2]
    print(f"4 MB / 2 MB: {ratio:.2f} (linear: about 2)")
    ok = results[2] < TARGET_MS
    print(f"target: 2 MB under {TARGET_MS:.0f} ms: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
