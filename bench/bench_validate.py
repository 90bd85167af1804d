"""How long turn validation takes: a realistic debate, and long synthetic ones.

Run: python bench/bench_validate.py

Replaying a debate validates turn N against the source, turns 1..N-1 and a novelty
index of their positions and claims, exactly as the service and `duel validate` do.
The per-turn cost must not grow with the debate's length.
"""

from __future__ import annotations

import hashlib
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout, uninstalled

from rp1_duel.record import Claimant, FrontMatter, History, ParticipantEntry, artifact, validate_file
from rp1_duel.schedule import Schedule
from rp1_duel.turns import SourceDocument, normalize_turn_text

SEATS = {1: ("Alice", "claude-code", "claude-opus-4"), 2: ("Bob", "codex", "gpt-5")}
PANEL = {seat: (f"Panelist{seat}", "script", f"model-{seat}") for seat in range(1, 9)}  # 8 seats (issue 13)
TOPICS = ["lease", "fencing", "expiry", "refresh", "clock", "partition", "holder", "storage", "token", "grant"]
TARGET_SOURCE_BYTES = 50 * 1024


COMMON = [
    "the",
    "a",
    "of",
    "to",
    "and",
    "is",
    "in",
    "that",
    "it",
    "for",
    "on",
    "with",
    "as",
    "be",
    "by",
    "not",
    "this",
    "are",
    "or",
]


def schedule_of(seats: int, turns: int) -> Schedule:
    """``seats`` seats without a chair, and room for ``turns`` turns."""
    return Schedule(seats=seats, max_turns=max(turns, 2), chair=False)


def words(rng: random.Random, count: int, vocabulary: list[str]) -> str:
    # About one word in three is a common English word, as in prose.
    return " ".join(rng.choice(COMMON if rng.random() < 0.3 else vocabulary) for _ in range(count))


def make_vocabulary(rng: random.Random, size: int) -> list[str]:
    syllables = ["ka", "lo", "mi", "ren", "tu", "sha", "vor", "el", "qui", "dan", "po", "zet", "ari", "nu"]
    found: set[str] = set()
    while len(found) < size:
        found.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(found)


def make_source(rng: random.Random, vocabulary: list[str]) -> SourceDocument:
    """A design document of about 50 KB: numbered sections of wrapped prose."""
    lines = ["# Lease Service Design", ""]
    section = 0
    while sum(len(line) + 1 for line in lines) < TARGET_SOURCE_BYTES:
        section += 1
        lines += [f"## {rng.choice(TOPICS).title()} rule {section}", ""]
        for _ in range(rng.randint(2, 4)):
            lines += [words(rng, rng.randint(10, 14), vocabulary) + "." for _ in range(rng.randint(2, 5))] + [""]
    return SourceDocument.from_bytes("\n".join(lines).encode(), "docs/design.md")


def source_excerpt(rng: random.Random, source: SourceDocument) -> tuple[int, str]:
    while True:
        number = rng.randrange(1, len(source.lines) + 1)
        line_words = source.lines[number - 1].rstrip(".").split()
        if len(line_words) >= 8 and not source.lines[number - 1].startswith("#"):
            start = rng.randrange(0, len(line_words) - 6)
            return number, " ".join(line_words[start : start + 6])


def make_turn(
    number: int,
    rng: random.Random,
    source: SourceDocument,
    vocabulary: list[str],
    quoted: str,
    size: int,
    seats: dict[int, tuple[str, str, str]] = SEATS,
) -> str:
    """Turn `number`, citing the source three ways and quoting `quoted` from the previous turn.

    `size` scales the prose and the number of counterpoints (1: about 1.5 KB, 3: about 4 KB).
    Seats 1 and 2 open, then converge (with revision support); the others converge from the start.
    """
    name, harness, model = seats[schedule_of(len(seats), number).speaker(number)]
    stance = "OPEN_TO_DEBATE" if number <= 2 else "CONVERGING"
    revision = "- Principle: the other side's evidence moved me\n" if number - len(seats) in (1, 2) else ""
    heading = rng.choice(source.headings[1:])
    line, excerpt = source_excerpt(rng, source)
    addressed = f"Turn {number - 1}" if number > 1 else f"design.md#{heading}"
    earlier = f'  - Turn {number - 1} "{quoted}"\n' if number > 1 else f"  - design.md#{heading}\n"
    extra_points = "".join(
        f"- Addresses: design.md#{heading}\n"
        f"  Claim: {words(rng, 14 * size, vocabulary)}.\n"
        f"  Support:\n  - https://example.org/leases/{number}\n  - design.md#{heading}\n"
        for _ in range(size)
    )
    return (
        f"---\n## Turn {number} \u2014 {name} ({harness} / {model}) \u2014 {stance}\n"
        f"**Position**\n{words(rng, 24 * size, vocabulary)}.\n"
        f"**Counterpoints**\n"
        f"- Addresses: {addressed}\n"
        f"  Claim: {words(rng, 16, vocabulary)}.\n"
        f"  Support:\n{earlier}"
        f'  - design.md:{line} "{excerpt}"\n'
        f"{extra_points}"
        f"**Agreements**\n- {words(rng, 10 * size, vocabulary)}.\n"
        f"**Novel Argument**\n{words(rng, 18, vocabulary)}.\nSupport:\n"
        f"- design.md:{line}-{min(line + 2, len(source.lines))}\n- Principle: {words(rng, 8, vocabulary)}\n"
        f"**Unresolved Items**\n- {words(rng, 9, vocabulary)} (non-blocking)\n"
        f"**Stance Revision Support**\n{revision}"
    )


def make_debate(
    length: int,
    rng: random.Random,
    source: SourceDocument,
    vocabulary: list[str],
    size: int = 1,
    seats: dict[int, tuple[str, str, str]] = SEATS,
) -> list[str]:
    texts: list[str] = []
    for number in range(1, length + 1):
        # Each turn quotes the opening words of the previous turn's position.
        quoted = " ".join(texts[-1].split("**Position**\n", 1)[1].split()[:8]) if texts else ""
        texts.append(make_turn(number, rng, source, vocabulary, quoted, size, seats))
    return texts


def replay(texts: list[str], source: SourceDocument) -> float:
    """Validate every turn in its context through the library's History; return the seconds taken."""
    history = History(source=source, source_names=("design.md",), schedule=schedule_of(len(SEATS), len(texts)))
    blocks, prev = [], artifact.GENESIS
    for number, text in enumerate(texts, 1):
        blocks.append(artifact.turn_block(number, normalize_turn_text(text), prev))
        prev = blocks[-1].sha256
    claimants = {seat: Claimant(*who) for seat, who in SEATS.items()}
    started = time.perf_counter()
    for number, report in history.replay_checked(blocks, claimants):
        if not report.ok:
            raise SystemExit(f"turn {number} is invalid: {report.violations}")
    return time.perf_counter() - started


def best_of(runs: int, texts: list[str], source: SourceDocument) -> float:
    return min(replay(texts, source) for _ in range(runs))


def main() -> None:
    rng = random.Random(7)
    vocabulary = make_vocabulary(rng, 4000)
    started = time.perf_counter()
    source = make_source(rng, vocabulary)
    indexed = time.perf_counter() - started
    print(
        f"source: {len(source.text) / 1024:.1f} KiB, {len(source.lines)} lines, "
        f"{len(source.headings)} headings, indexed in {indexed * 1000:.1f} ms"
    )

    debate = make_debate(6, rng, source, vocabulary, size=3)
    replay(debate, source)  # warm-up: regex compilation, first imports
    total = best_of(20, debate, source)
    verdict = "ok" if total <= 0.020 else "OVER TARGET"
    average = sum(len(text.encode()) for text in debate) / len(debate) / 1024
    print(
        f"6-turn debate ({average:.1f} KiB turns): {total * 1000:.2f} ms total, {total / 6 * 1000:.2f} ms/turn "
        f"(target <= 20 ms total: {verdict})"
    )

    print("synthetic debates (1.5 KiB turns; turn N quotes turn N-1; novelty against every earlier claim):")
    per_turn = []
    for length in (125, 250, 500):
        texts = make_debate(length, rng, source, vocabulary)
        seconds = best_of(3, texts, source)
        per_turn.append(seconds / length)
        print(f"  {length:>4} turns: {seconds * 1000:8.1f} ms total, {seconds / length * 1000:.3f} ms/turn")
    growth = per_turn[-1] / per_turn[0]
    print(f"per-turn cost 500 vs 125 turns: x{growth:.2f} (linear overall when close to x1)")
    print(f"median per-turn cost: {statistics.median(per_turn) * 1000:.3f} ms")

    print("whole artifacts through `duel validate` (front matter, hash chain, every turn, outcome):")
    with tempfile.TemporaryDirectory() as folder:
        source_path = Path(folder) / "design.md"
        source_path.write_text(source.text)
        for length, size in ((6, 3), (125, 1), (250, 1), (500, 1)):
            texts = debate if length == 6 else make_debate(length, rng, source, vocabulary, size)
            path = Path(folder) / f"debate-{length}.md"
            text = artifact_text(texts, source_path, path)
            path.write_text(text, encoding="utf-8")
            report = validate_file(path)
            if not report.valid:
                raise SystemExit(f"{length}-turn artifact is invalid: {report.problems[:3]}")
            seconds = min(_timed(validate_file, path) for _ in range(3 if length > 6 else 20))
            print(
                f"  {length:>4} turns ({len(text) / 1024:7.1f} KiB): {seconds * 1000:8.1f} ms total, "
                f"{seconds / length * 1000:.3f} ms/turn" + ("  (target <= 20 ms)" if length == 6 else "")
            )

        print("a panel of 8 seats (issue 13): the per-turn cost must match two seats'")
        for length in (50, 400):
            texts = make_debate(length, rng, source, vocabulary, 1, PANEL)
            path = Path(folder) / f"panel-{length}.md"
            path.write_text(artifact_text(texts, source_path, path, PANEL), encoding="utf-8")
            report = validate_file(path)
            if not report.valid:
                raise SystemExit(f"{length}-turn panel artifact is invalid: {report.problems[:3]}")
            seconds = min(_timed(validate_file, path) for _ in range(3))
            print(
                f"  8 seats x {length:>3} turns: {seconds * 1000:8.1f} ms total, {seconds / length * 1000:.3f} ms/turn"
            )


def _timed(function, *args) -> float:
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


def artifact_text(
    texts: list[str], source_path: Path, path: Path, seats: dict[int, tuple[str, str, str]] = SEATS
) -> str:
    """An artifact as the service would write it for these turns (open, no outcome yet)."""
    front = FrontMatter(
        duel_id="bench",
        topic="Bench",
        topic_slug="bench",
        source_path=artifact.display_source_path(str(source_path), artifact_path=path),
        source_sha256=hashlib.sha256(source_path.read_bytes()).hexdigest(),
        schedule=schedule_of(len(seats), len(texts)),
        status="ACTIVE",
        outcome=None,
        created_at="2026-11-23T00:00:00.000Z",
        closed_at=None,
        participants=tuple(
            ParticipantEntry(
                id=f"p-{seat}",
                seat=seat,
                display_name=name,
                harness=harness,
                model_id=model,
                joined_at="2026-11-23T00:00:00.000Z",
            )
            for seat, (name, harness, model) in seats.items()
        ),
    )
    blocks, prev = [], artifact.GENESIS
    for number, text in enumerate(texts, 1):
        block = artifact.turn_block(number, normalize_turn_text(text), prev)
        blocks.append(block)
        prev = block.sha256
    return artifact.render(front=front, lease_seconds=600, turns=blocks)


if __name__ == "__main__":
    main()
