"""Shared test helpers: sample documents and turns, seats in a duel, the tools CLI as a process.

Test modules import from here, never from conftest or from each other. The fake model
servers are a pytest plugin (``tests/fake_models.py``, listed in conftest's
``pytest_plugins``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rp1_duel.clock import ManualClock, boot_id
from rp1_duel.coordination import DuelService, LeaseToken, Seat
from rp1_duel.record import Claimant, History, RecordFile
from rp1_duel.record.artifact import GENESIS, render, turn_block
from rp1_duel.schedule import Schedule
from rp1_duel.settings import DuelSettings
from rp1_duel.turns import Revision, TurnContext, normalize_turn_text, parse_turn, read_source


def panel(seats: int, max_turns: int | None = None) -> Schedule:
    """A schedule without a chair: ``seats`` seats, three rounds unless told otherwise."""
    return Schedule(seats=seats, max_turns=3 * seats if max_turns is None else max_turns, chair=False)


DUEL = panel(2)  # two seats, six turns: the sample debate's

# -- a small source for duels through the service ----------------------------------------

SOURCE = """# Lease design

## Lease semantics
Leases expire after fifteen minutes unless refreshed.
A holder refreshes its lease while it works.

## Turn order
Seat 1 writes odd turns and seat 2 writes even turns.

## Failure handling
A crashed holder loses the floor when its lease expires.
"""


@dataclass(frozen=True)
class Player:
    """A seated participant as tests use it: the library's seat handle, plus its name."""

    seat: Seat
    name: str

    @property
    def duel_id(self) -> str:
        return self.seat.duel_id

    @property
    def id(self) -> str:
        return self.seat.participant_id

    @property
    def token(self) -> str:
        return self.seat.token


def join(service: DuelService, source: Path, name: str, **kwargs: Any) -> Player:
    settings = kwargs.pop("settings", DuelSettings())
    joined = service.join(target=str(source), participant_name=name, settings=settings, **kwargs)
    return Player(joined.seat, name)


def claim(service: DuelService, player: Player) -> LeaseToken:
    """Claim the lease, which must be granted."""
    result = service.claim_lock(player.seat)
    assert result.lease is not None, result
    return result.lease


# -- valid turns for duels through the service ----------------------------------------------
# Each call writes a fresh turn that passes every rule against SOURCE (distinct wording
# per turn so NOVELTY holds).

TOPICS = [
    ("fifteen-minute leases", "short leases bound how long a crashed holder blocks its peer"),
    ("refreshing while working", "background refresh lets a slow model keep the floor honestly"),
    ("strict alternation", "fixed seat order removes any race for who writes next"),
    ("crash recovery", "expiry alone returns the floor after a kill without operator help"),
    ("fencing tokens", "monotonic fences let storage reject a stale writer outright"),
    ("timeouts as outcomes", "recording a timeout keeps an abandoned duel reviewable in git"),
    ("reclaiming idle seats", "handing over an idle seat rescues a participant that lost its token"),
    ("atomic records", "rename after fsync means readers never see half a turn"),
]


def make_turn(
    n: int,
    name: str,
    harness: str,
    model: str,
    stance: str = "OPEN_TO_DEBATE",
    *,
    blocking: bool = False,
    previous_stance: str | None = None,
    counterclaim: str | None = None,
    citing: tuple[str, ...] = (),
    position_extra: str = "",
) -> str:
    """``counterclaim`` replaces the counterpoint's claim, ``citing`` adds support items under it
    (URLs, say), ``position_extra`` ends the Position (``duel verify``'s tests)."""
    subject, claim = TOPICS[(n - 1) % len(TOPICS)]
    cited = "".join(f"  - {item}\n" for item in citing)
    addresses = "design.md#Lease semantics" if n == 1 else f"Turn {n - 1}"
    tag = "blocking" if blocking else "non-blocking"
    revision = f"- Turn {n - 1}\n" if n > 1 else "- Principle: a first stance needs no revision support\n"
    return (
        f"## Turn {n} — {name} ({harness} / {model}) — {stance}\n"
        f"**Position**\n"
        f"On {subject} (turn {n}): {claim}.{position_extra}\n"
        f"**Counterpoints**\n"
        f"- Addresses: {addresses}\n"
        f"  Claim: {counterclaim or f'turn {n} doubts point {n} about {subject} in particular'}\n"
        f"  Support:\n"
        f"  - design.md#Failure handling\n"
        f"{cited}"
        f"**Agreements**\n"
        f"- The design keeps seat order fixed.\n"
        f"**Novel Argument**\n"
        f"Argument {n}: {subject} matters because reviewers read turn {n} later.\n"
        f"Support:\n"
        f'- design.md "Leases expire after fifteen minutes unless refreshed."\n'
        f"**Unresolved Items**\n"
        f"- Whether item {n} on {subject} needs a benchmark ({tag})\n"
        f"**Stance Revision Support**\n"
        f"{revision}"
    )


def sealed_opening(n: int, name: str, harness: str, model: str, stance: str = "OPEN_TO_DEBATE") -> str:
    """Turn ``n`` as a sealed opening: like :func:`make_turn`, but citing the source only (no other opening
    exists for its writer)."""
    text = make_turn(n, name, harness, model, stance)
    if n == 1:
        return text
    return text.replace(f"Addresses: Turn {n - 1}", "Addresses: design.md#Lease semantics").replace(
        f"**Stance Revision Support**\n- Turn {n - 1}\n",
        "**Stance Revision Support**\n- Principle: a first stance needs no revision support\n",
    )


def replace_edit(name: str, find: str, text: str, *, target: str = "") -> str:
    """An edit block of a **Proposed Edits** section: replace ``find`` (in ``target``, if named) with ``text``."""
    where = f" in {target}" if target else ""
    return f"Edit {name}: replace{where}\n```find\n{find}\n```\n```replace\n{text}\n```\n"


def with_edits(turn: str, *edits: str, accepts: str | None = None) -> str:
    """``turn`` with a **Proposed Edits** section holding ``edits`` (edit blocks, ``Withdraw NAME``
    lines), when there are any, and an **Accepted Revision** section naming ``accepts``, when given."""
    if edits:
        turn += "**Proposed Edits**\n" + "".join(edits)
    if accepts is not None:
        turn += f"**Accepted Revision**\n{accepts}\n"
    return turn


# -- a realistic three-turn debate about tests/data/design.md ---------------------------------

DESIGN = Path(__file__).parent / "data" / "design.md"
DESIGN_SOURCE = read_source(DESIGN)
SEATS = {1: ("Alice", "claude-code", "claude-opus-4"), 2: ("Bob", "codex", "gpt-5")}

TURN_1 = """\
---
## Turn 1 — Alice (claude-code / claude-opus-4) — OPEN_TO_DEBATE
**Position**
Fifteen-minute leases are too long: a crashed holder blocks every other worker for a quarter of an hour.
**Counterpoints**
- Addresses: design.md#Lease semantics
  Claim: A fixed fifteen-minute duration leaves the directory blocked for up to fifteen minutes after a crash.
  Support:
  - design.md "Leases expire after fifteen minutes unless the holder refreshes them"
  - design.md#Goals
**Agreements**
- Fencing tokens are the right defence against late writes.
**Novel Argument**
Shorter leases with frequent refreshes bound the blocking time without weakening safety.
Support:
- design.md:31-32
- Principle: a failure detector's timeout should be a small multiple of its heartbeat interval.
**Unresolved Items**
- How short a lease can be before refresh traffic matters (non-blocking)
- Whether the two-second skew bound holds under load (blocking)
**Stance Revision Support**
"""

TURN_2 = """\
## Turn 2 – Bob (codex / gpt-5) – DISSENTING

**Position**
The fifteen-minute lease is a deliberate trade: shorter leases multiply refresh traffic and false expiries.

**Counterpoints**
- Addresses: Turn 1
  Claim: Shorter leases raise the risk that a healthy but slow holder loses its lease in the middle of a write.
  Support:
  - Turn 1 “Shorter leases with frequent refreshes bound the blocking time”
  - design.md#Clock assumptions
  - design.md "a skew of at most two seconds between any two hosts – larger skews are treated as outages"
- Addresses: design.md#Failure handling
  Claim: Fencing already makes late writes harmless, so expiry speed affects availability, never safety.
  Support:
  - design.md:36-37
  - https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html

**Agreements**
- Fencing tokens are the right defence against late writes (Turn 1).

**Novel Argument**
Lease duration should be derived from measured refresh latency instead of being fixed in the design.
Support:
- design.md#Open questions
- Principle: timeouts tuned to observed latency avoid both false expiries and long stalls.

**Unresolved Items**
- Which percentile of refresh latency sets the duration (non-blocking)
- Whether a fifteen-minute stall is acceptable after a crash (blocking)

**Stance Revision Support**
"""

TURN_3 = """\
---
## Turn 3 - Alice (claude-code / claude-opus-4) - ACCEPTING_CONSENSUS
**Position**
I accept fifteen minutes as the default, provided the duration becomes configurable per deployment.
**Counterpoints**
- Addresses: Turn 2 | design.md#Lease semantics
  Claim: A configurable duration keeps the safe default while letting low-latency deployments recover sooner.
  Support:
  - Turn 2 "Lease duration should be derived from measured refresh latency"
**Agreements**
- Fencing, not expiry speed, is what guarantees safety (Turn 2).
**Novel Argument**
A per-deployment ceiling on refresh latency turns the open question into an operational setting.
Support:
- design.md "Should the lease duration adapt to the observed write latency?"
**Unresolved Items**
- Which metric the ceiling is tuned on (non-blocking)
**Stance Revision Support**
- Turn 2 "Fencing already makes late writes harmless"
- design.md#Partitions
"""

DEBATE = (TURN_1, TURN_2, TURN_3)


def history_of(texts: tuple[str, ...], source_names: tuple[str, ...] = ()) -> History:
    """The history of accepted turns ``texts`` about design.md, through the library's History."""
    history = History(source=DESIGN_SOURCE, source_names=source_names, schedule=DUEL)
    for number, text in enumerate(texts, start=1):
        history.accept(turn_block(number, normalize_turn_text(text), history.head), parse_turn(text))
    return history


def context(number: int, prior: tuple[str, ...] | None = None, **changes: Any) -> TurnContext:
    """The context of turn `number` of the sample debate, its earlier turns accepted as given."""
    texts = DEBATE[: number - 1] if prior is None else prior
    ctx = history_of(texts).context_for(Claimant(*SEATS[DUEL.speaker(number)]), number)
    return replace(ctx, **changes) if changes else ctx


def with_extra_turn(artifact: Path, text: str) -> Path:
    """A copy of ``artifact``, in the same folder, with ``text`` chained on as the next turn.

    The service never writes a turn it refuses; this writes one the way it would have, so
    ``duel validate`` can be asked about exactly the turn live append judged.
    """
    record = RecordFile.read(artifact)
    assert record.front is not None
    assert not record.parsed.problems
    blocks = record.parsed.blocks
    head = blocks[-1].sha256 if blocks else GENESIS
    extra = turn_block(len(blocks) + 1, normalize_turn_text(text), head)
    forged = artifact.with_name("with-extra-turn.md")
    forged.write_text(render(front=record.front, lease_seconds=900, turns=[*blocks, extra]), encoding="utf-8")
    return forged


# -- `duel tools` as a real process --------------------------------------------------------


@dataclass
class ToolResult:
    code: int
    envelope: dict[str, Any]
    stderr: str

    @property
    def data(self) -> dict[str, Any]:
        assert self.envelope["success"], self.envelope
        return self.envelope["data"]

    @property
    def error(self) -> dict[str, Any]:
        assert not self.envelope["success"], self.envelope
        return self.envelope["error"]


# A process whose wall clock reads SHIFT seconds off, as after the clock was set (the
# monotonic clock is untouched): `python -c WALL_SHIFTED SHIFT tools …`.
WALL_SHIFTED = """
import sys, time
real_time, shift = time.time, float(sys.argv.pop(1))
time.time = lambda: real_time() + shift
from rp1_duel.cli import main
main()
"""


def run_tools(
    *args: str | bytes,
    debate_dir: Path | None = None,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    prefix: tuple[str, ...] = (),
    preexec_fn: Callable[[], None] | None = None,
    wall_shift: float = 0.0,
) -> ToolResult:
    """Run `duel tools …` as a real process; stdout must be exactly one JSON object.

    ``prefix`` runs it through a wrapper (``setpriv …``); ``preexec_fn`` sets limits;
    ``wall_shift``: the process's wall clock reads that many seconds off the real one."""
    start = ["-c", WALL_SHIFTED, str(wall_shift)] if wall_shift else ["-m", "rp1_duel"]
    argv: list[str | bytes] = [*prefix, sys.executable, *start, "tools", *args]
    if debate_dir is not None:
        argv += ["--debate-dir", str(debate_dir)]
    secrets = ("DUEL_PARTICIPANT_TOKEN", "DUEL_LEASE_TOKEN", "DUEL_DIR", "DUEL_STORE")
    full_env = {k: v for k, v in os.environ.items() if k not in secrets}
    full_env.update(env or {})
    proc = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout, env=full_env, preexec_fn=preexec_fn)
    out = proc.stdout.decode()
    assert out.count("\n") == 1, f"stdout must be one JSON line, got: {out!r} / {proc.stderr!r}"
    assert "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    return ToolResult(proc.returncode, json.loads(out), proc.stderr.decode())


# -- what watching and listing must leave alone --------------------------------------------


def stop(proc: subprocess.Popen[Any]) -> int:
    """Kill ``proc`` if it still runs, reap it and close its pipes (warnings are errors: none may leak)."""
    if proc.poll() is None:
        proc.kill()
    code = proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    return code


def tree_snapshot(root: Path) -> dict[str, tuple[int, int, int, int, str]]:
    """Every file and folder under ``root``: mode, inode, size, mtime and content hash, so
    any write, replacement or new file shows (access times aside)."""
    snapshot = {}
    for path in sorted([root, *root.rglob("*")]):
        info = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        snapshot[str(path.relative_to(root))] = (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns, digest)
    return snapshot


def clock_in_the_past(seconds_ago: float) -> ManualClock:
    """A manual clock on this boot, ``seconds_ago`` behind the real clocks: what it writes
    reads, to a real process, as done that long ago (on the monotonic clock too)."""
    clock = ManualClock(time.time() - seconds_ago)
    clock.mono = time.monotonic() - seconds_ago
    clock.boot = boot_id()
    return clock


# -- a duel whose turns cite URLs (duel verify) -----------------------------------------------

DUELISTS = {1: ("Alice", "claude-code", "claude-x"), 2: ("Bob", "codex", "gpt-x")}


def duel_citing(service: DuelService, source: Path, *turns: dict[str, Any]) -> Path:
    """A duel through the service: turn N is ``make_turn(N, …, **turns[N-1])``; the artifact's path."""
    players = {
        seat: join(service, source, name, harness=harness, model_id=model)
        for seat, (name, harness, model) in DUELISTS.items()
    }
    path = ""
    for number, extra in enumerate(turns, start=1):
        seat = DUEL.speaker(number)
        player = players[seat]
        name, harness, model = DUELISTS[seat]
        appended = service.append(
            player.seat, claim(service, player), make_turn(number, name, harness, model, **extra), release=True
        )
        path = appended.debate_path
    return Path(path)


LETTERS = str.maketrans("0123456789", "ghijklmnop")  # a hash as letters: no figure the source does not hold


def fifty_turns(service: DuelService, source: Path, words: int = 250) -> Path:
    """A duel of 50 turns that never agree, each turn's Position long (``words`` words: 250 make some 2,500
    characters)."""
    settings = DuelSettings(max_turns=50)
    players = tuple(
        join(service, source, name, harness=harness, model_id=model, settings=settings)
        for name, harness, model in DUELISTS.values()
    )
    path = ""
    for n in range(1, 51):
        player = players[(n - 1) % 2]
        said = [hashlib.sha256(f"{n}.{k}".encode()).hexdigest()[:9].translate(LETTERS) for k in range(words)]
        long = " Because " + " ".join(said) + "."  # words of its own in each turn, so NOVELTY holds
        text = make_turn(
            n,
            *DUELISTS[2 - n % 2],
            position_extra=long,
            counterclaim=" ".join(said[:8]),
            citing=(f"https://example.org/{n}",),
        ).replace(f"Argument {n}: ", f"Argument {n} ({' '.join(said[8:16])}): ")
        path = service.append(player.seat, claim(service, player), text, release=True).debate_path
    return Path(path)


def duel_command(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``duel …`` as a real process that must end within 30 s (a hang fails the test)."""
    return subprocess.run(
        [sys.executable, "-m", "rp1_duel", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
        check=False,
    )


CONFIGURABLE_EXPIRY = "Leases expire after `lease_seconds` unless refreshed."


def agreed_on_an_edit(service: DuelService, alice: Player, bob: Player) -> tuple[Path, str]:
    """A duel closed ACCEPTED_CONSENSUS on Alice's edit making the lease's length configurable: the
    artifact's path and the agreed revision's id (the revised document's SHA-256, computed apart)."""
    revised = SOURCE.replace("Leases expire after fifteen minutes unless refreshed.", CONFIGURABLE_EXPIRY)
    revision = "r-" + hashlib.sha256(revised.encode()).hexdigest()[:12]
    expiry = replace_edit("expiry", "Leases expire after fifteen minutes unless refreshed.", CONFIGURABLE_EXPIRY)
    turns = (
        (alice, with_edits(make_turn(1, *DUELISTS[1]), expiry)),
        (bob, with_edits(make_turn(2, *DUELISTS[2], "ACCEPTING_CONSENSUS"), accepts=revision)),
        (alice, with_edits(make_turn(3, *DUELISTS[1], "ACCEPTING_CONSENSUS"), accepts=revision)),
    )
    path = ""
    for player, text in turns:
        path = service.append(player.seat, claim(service, player), text, release=True).debate_path
    service.release_lock(alice.seat, claim(service, alice), close=True, outcome="ACCEPTED_CONSENSUS")
    return Path(path), revision


# -- what a revision's patch adds ---------------------------------------------------------------

WRITTEN, INSERTED = "\x01", "\x02"  # mark the text an edit writes (an insert's apart: its blank lines are its own)


def lines_no_edit_wrote(revision: Revision, patch: str) -> list[str]:
    """The lines ``patch`` (the revision's diff) adds that no edit in force wrote or changed, by their place in the
    revised document. A line that is no line of the source was changed; one that is must be one an edit wrote:
    the same edits, every line of their new text marked, show which (and the blank lines that set an insert off,
    section 7 of docs/protocol.md, are the insert's). Each added line must read as that place."""
    marked = Revision(
        revision.source,
        {
            name: replace(edit, text=mark + edit.text.replace("\n", mark + "\n") + mark)
            for name, edit in revision.edits.items()
            for mark in [INSERTED if edit.kind == "insert" else WRITTEN]
        },
    )
    revised, touched = PATCH_LINES.findall(revision.text), PATCH_LINES.findall(marked.text)
    if len(touched) == len(revised) + 1 and not touched[-1].strip(WRITTEN + INSERTED):
        touched.pop()  # the mark after new text ending the document with a line end
    assert len(touched) == len(revised)
    source_lines = PATCH_LINES.findall(revision.source)
    unended = source_lines[-1] if source_lines and not source_lines[-1].endswith("\n") else None

    def an_edits(j: int) -> bool:
        if revised[j] not in source_lines or WRITTEN in touched[j] or INSERTED in touched[j]:
            return True
        if unended is not None and revised[j].rstrip("\r\n") == unended.rstrip("\r\n"):
            return True  # the source's last line, given a line end: a patch can only remove it and add it again
        beside = [touched[k] for k in (j - 1, j + 1) if 0 <= k < len(touched)]
        if not revised[j].strip() and any(INSERTED in line for line in beside):
            return True  # a blank line setting an insert off
        # The heading line an insert follows, given the line end before the insert.
        after = touched[j + 1 : j + 3]
        return bool(after) and (INSERTED in after[0] or (not revised[j + 1].strip() and INSERTED in after[-1]))

    strays = []
    for j, line in added_lines(patch):
        assert revised[j].removesuffix("\n") == line, (j, line)
        if not an_edits(j):
            strays.append(line)
    return strays


PATCH_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")  # lines as a patch counts them: a lone CR ends none
_HUNK = re.compile(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@")


def added_lines(patch: str) -> list[tuple[int, str]]:
    """The lines a unified diff adds: (index in the revised document from 0, text without its line end)."""
    added: list[tuple[int, str]] = []
    at: int | None = None  # the revised document's line the next hunk line is; None before the first hunk
    for line in patch.split("\n"):
        hunk = _HUNK.match(line)
        if hunk:
            start, count = int(hunk.group(1)), hunk.group(2)
            at = start if count == "0" else start - 1
        elif at is not None and line.startswith((" ", "+")):
            if line.startswith("+"):
                added.append((at, line[1:]))
            at += 1
    return added
