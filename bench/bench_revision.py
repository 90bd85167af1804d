"""How long computing and checking the revision takes: 50 turns of 20 edits on a 2,000-line document.

Run: python bench/bench_revision.py

Every turn proposes 20 new edits (14 replaces, 4 deletes of a whole line, 2 inserts after a
heading), so 1,000 edits are in force after turn 50, each applied to the source as the duel
recorded it (docs/protocol.md section 7, "Proposed edits"). Prints, never asserts:
(a) replaying the 50 turns through the library's History (parse, amend, the revision and its id
    after each turn), as `duel report` and `duel apply` do: target well under a second; first in
    a fresh process (the source's index for quote-style matching built once), then at best;
(b) validating every turn in its context (History.replay_checked, as `duel validate` does);
(c) validate_turn of the 50th turn alone, the check live append makes (980 edits in force);
(d) the per-turn cost of (a) at 25 and at 50 turns: linear when about the same.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]  # run from a checkout, uninstalled

from bench_validate import SEATS, make_turn, make_vocabulary, schedule_of, words  # noqa: E402

from rp1_duel.record import GENESIS, Claimant, History, TurnBlock, turn_block  # noqa: E402  # noqa: E402
from rp1_duel.turns import (  # noqa: E402
    SourceDocument,
    normalize_turn_text,
    validate_turn,
)

TURNS = 50
EDITS = 20  # a turn's: 14 replaces, 4 deletes, 2 inserts
LINES = 2000
SECTION = 16  # lines of prose under each heading: about 105 headings, one insert each at most
RUNS = 5
TARGET_MS = 1000.0


def make_source(rng: random.Random, vocabulary: list[str]) -> tuple[SourceDocument, list[str], list[str]]:
    """A document of LINES lines: headings, each over SECTION lines of prose that end "(line K).";
    its prose lines and its headings, to edit."""
    lines = ["# Lease Service Design"]
    prose: list[str] = []
    headings: list[str] = []
    while len(lines) < LINES:
        headings.append(f"Rule {len(headings) + 1}")
        lines += ["", f"## {headings[-1]}", ""]
        for _ in range(SECTION):
            prose.append(f"{words(rng, rng.randint(10, 14), vocabulary)} (line {len(lines) + 1}).")
            lines.append(prose[-1])
    return SourceDocument.from_bytes("\n".join(lines[:LINES]).encode(), "docs/design.md"), prose, headings


def edits_section(number: int, rng: random.Random, prose: list[str], headings: list[str], vocabulary: list[str]) -> str:
    """Turn ``number``'s 20 edits, on text no other turn's edits touch."""
    mine = prose[(number - 1) * 18 : number * 18]
    blocks = []
    for index, line in enumerate(mine):
        name = f"t{number}-e{index}"
        if index < 14:
            find = " ".join(line.split()[-6:])  # its last words and its unique "(line K)."
            blocks.append(f"Edit {name}: replace\n```find\n{find}\n```\n```replace\n{words(rng, 8, vocabulary)}\n```")
        else:
            blocks.append(f"Edit {name}: delete\n```find\n{line}\n```")
    for index, heading in enumerate(headings[(number - 1) * 2 : number * 2]):
        blocks.append(
            f'Edit t{number}-i{index}: insert after heading "{heading}"\n```insert\n{words(rng, 12, vocabulary)}.\n```'
        )
    return "**Proposed Edits**\n" + "\n".join(blocks) + "\n"


def make_turns(rng: random.Random, source: SourceDocument, prose: list[str], headings: list[str]) -> list[str]:
    vocabulary = make_vocabulary(rng, 4000)
    texts: list[str] = []
    for number in range(1, TURNS + 1):
        quoted = " ".join(texts[-1].split("**Position**\n", 1)[1].split()[:8]) if texts else ""
        turn = make_turn(number, rng, source, vocabulary, quoted, 1)
        texts.append(turn + edits_section(number, rng, prose, headings, vocabulary))
    return texts


def blocks_of(texts: list[str]) -> list[TurnBlock]:
    blocks, prev = [], GENESIS
    for number, text in enumerate(texts, 1):
        blocks.append(turn_block(number, normalize_turn_text(text), prev))
        prev = blocks[-1].sha256
    return blocks


def new_history(source: SourceDocument) -> History:
    return History(source=source, source_names=("design.md",), schedule=schedule_of(len(SEATS), TURNS))


def timed_replay(source: SourceDocument, blocks: list[TurnBlock]) -> tuple[float, History]:
    history = new_history(source)
    started = time.perf_counter()
    history.replay(blocks)
    assert history.revision is not None
    history.revision.id  # noqa: B018 - the last revision is computed, as a reader of the record would
    return time.perf_counter() - started, history


def timed_checked(source: SourceDocument, blocks: list[TurnBlock]) -> float:
    claimants = {seat: Claimant(*who) for seat, who in SEATS.items()}
    started = time.perf_counter()
    for number, report in new_history(source).replay_checked(blocks, claimants):
        if not report.ok:
            raise SystemExit(f"turn {number} is invalid: {report.violations[:3]}")
    return time.perf_counter() - started


def main() -> None:
    rng = random.Random(22)
    source, prose, headings = make_source(rng, make_vocabulary(rng, 4000))
    texts = make_turns(rng, source, prose, headings)
    blocks = blocks_of(texts)
    size = sum(len(text.encode()) for text in texts) / len(texts) / 1024
    print(f"source: {len(source.lines)} lines, {len(source.raw) / 1024:.0f} KiB; {TURNS} turns of {size:.1f} KiB")

    cold, history = timed_replay(source, blocks)
    replay = min(timed_replay(source, blocks)[0] for _ in range(RUNS))
    assert history.revision is not None and not history.revision.problems
    added, removed = history.revision.counts()
    verdict = "ok" if cold * 1000 < TARGET_MS / 2 else "OVER TARGET"
    print(
        f"(a) replay of {TURNS} turns, {len(history.revision.edits)} edits in force at the end "
        f"(+{added} -{removed} lines): {cold * 1000:.1f} ms first, {replay * 1000:.1f} ms at best "
        f"(target well under {TARGET_MS:.0f} ms: {verdict})"
    )
    checked = min(timed_checked(source, blocks) for _ in range(RUNS))
    print(f"(b) every turn validated in its context: {checked * 1000:.1f} ms, {checked / TURNS * 1000:.2f} ms/turn")

    before = new_history(source)
    before.replay(blocks[:-1])
    context = before.context_for(Claimant(*SEATS[before.schedule.speaker(TURNS)]))
    validate_turn(texts[-1], context)
    started = time.perf_counter()
    for _ in range(RUNS):
        assert validate_turn(texts[-1], context).ok
    print(f"(c) validate_turn of turn {TURNS} ({EDITS} edits): {(time.perf_counter() - started) / RUNS * 1000:.1f} ms")

    half = min(timed_replay(source, blocks[: TURNS // 2])[0] for _ in range(RUNS))
    print(
        f"(d) replay per turn: {half / (TURNS // 2) * 1000:.2f} ms at {TURNS // 2} turns, "
        f"{replay / TURNS * 1000:.2f} ms at {TURNS} (linear when about the same)"
    )


if __name__ == "__main__":
    main()
