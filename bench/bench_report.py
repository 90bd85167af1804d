"""How long `duel report` takes on a 50-turn artifact (the longest duel): target <= 200 ms.

Run: python bench/bench_report.py

Reads the artifact from disk, runs `duel validate`'s checks on it (about half the time: the
turn rules replayed with the source), builds the report (parse, replay, outcome, decision,
timeline, agreements, unresolved items, citations) and renders it as Markdown, HTML and JSON,
as `duel report` does once per format; prints the median of 20 runs, and each step's.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout, uninstalled

from bench_validate import artifact_text, make_debate, make_source, make_vocabulary

from rp1_duel.review.report_files import read_report
from rp1_duel.review.report_html import render_html
from rp1_duel.review.report_markdown import render_markdown

TURNS = 50
RUNS = 20
TARGET_MS = 200.0


def main() -> None:
    rng = random.Random(11)
    vocabulary = make_vocabulary(rng, 4000)
    source = make_source(rng, vocabulary)
    texts = make_debate(TURNS, rng, source, vocabulary, size=2)
    with tempfile.TemporaryDirectory() as folder:
        source_path = Path(folder) / "design.md"
        source_path.write_text(source.text)
        path = Path(folder) / "debates" / "bench.md"
        path.parent.mkdir()
        path.write_text(artifact_text(texts, source_path, path), encoding="utf-8")
        steps: dict[str, list[float]] = {"read and build": [], "md": [], "html": [], "json": [], "total": []}
        for _ in range(RUNS + 1):  # the first run pays for imports and compiled patterns: not counted
            started = time.perf_counter()
            report = read_report(path, env={})
            built = time.perf_counter()
            render_markdown(report)
            md = time.perf_counter()
            render_html(report)
            html = time.perf_counter()
            json.dumps(report.to_dict(), ensure_ascii=False, indent=2)
            done = time.perf_counter()
            for name, seconds in (
                ("read and build", built - started),
                ("md", md - built),
                ("html", html - md),
                ("json", done - html),
                ("total", done - started),
            ):
                steps[name].append(seconds * 1000)
        size = path.stat().st_size / 1024
    print(
        f"{TURNS}-turn artifact ({size:.0f} KiB, {len(report.citations)} citations, "
        f"{len(report.unresolved)} unresolved items), median of {RUNS} runs:"
    )
    for name, times in steps.items():
        print(f"  {name:>14}: {statistics.median(times[1:]):7.1f} ms")
    total = statistics.median(steps["total"][1:])
    verdict = "ok" if total <= TARGET_MS else "OVER TARGET"
    print(f"build and render md, html and json: {total:.1f} ms (target <= {TARGET_MS:.0f} ms: {verdict})")


if __name__ == "__main__":
    main()
