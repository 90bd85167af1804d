"""Writes the report fixtures: four real duels through the lock service, with scripted turns.

Run once, from the repository root, and commit what it writes (the tests never run it, so
the artifacts stay hidden from the code that reports them):

    python tests/data/reports/make_fixtures.py

Each duel runs in a fresh debate dir on a manual clock, about ``tests/data/design.md``; its
artifact is copied to ``tests/data/reports/debates/``, where the recorded source path
(``../../design.md``) still names that document. The consensus duel records usage events
as ``duel join`` does, and keeps its state and events under ``debates/.duel/``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))  # run from a checkout

from rp1_duel.clock import ManualClock  # noqa: E402
from rp1_duel.coordination import (  # noqa: E402
    DuelService,
    Usage,
)
from rp1_duel.record import (  # noqa: E402
    RecordFile,
    artifact_citations,
    verification,
)
from rp1_duel.settings import DuelSettings  # noqa: E402
from rp1_duel.vocabulary import CitationKind, Confidence, Verdict, Vote  # noqa: E402

START = datetime(2026, 11, 24, 9, 0, tzinfo=timezone.utc).timestamp()
CLAUDE = ("Claude", "duel", "claude-sonnet-5-5")
GPT = ("GPT", "duel", "gpt-6.1-sol")


def heading(n: int, stance: str) -> str:
    name, harness, model = CLAUDE if n % 2 else GPT
    return f"## Turn {n} — {name} ({harness} / {model}) — {stance}\n"


CONSENSUS = [
    heading(1, "OPEN_TO_DEBATE")
    + """\
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
""",
    heading(2, "DISSENTING")
    + """\
**Position**
The fifteen-minute lease is a deliberate trade: shorter leases multiply refresh traffic and false expiries.
**Counterpoints**
- Addresses: Turn 1
  Claim: Shorter leases raise the risk that a healthy but slow holder loses its lease in the middle of a write.
  Support:
  - Turn 1 "Shorter leases with frequent refreshes bound the blocking time"
  - design.md#Clock assumptions
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
""",
    heading(3, "CONVERGING")
    + """\
**Position**
A configurable duration with fifteen minutes as the default answers both the stall and the false-expiry worries.
**Counterpoints**
- Addresses: Turn 2 | design.md#Lease semantics
  Claim: A configurable duration keeps the safe default while letting low-latency deployments recover sooner.
  Support:
  - Turn 2 "Lease duration should be derived from measured refresh latency"
  - https://kubernetes.io/docs/concepts/architecture/leases/
**Agreements**
- Fencing tokens are the right defence against late writes.
- Expiry speed is an availability question, not a safety one (Turn 2).
**Novel Argument**
A per-deployment ceiling on refresh latency turns the open question into an operational setting.
Support:
- design.md "Should the lease duration adapt to the observed write latency?"
**Unresolved Items**
- How short a lease can be before refresh traffic matters (non-blocking)
**Stance Revision Support**
- Turn 2 "Fencing already makes late writes harmless"
- design.md#Partitions
""",
    heading(4, "ACCEPTING_CONSENSUS")
    + """\
**Position**
I accept a configurable lease duration with fifteen minutes as the default and a documented floor.
**Counterpoints**
- Addresses: Turn 3
  Claim: The floor must stay well above the refresh interval, or the configurable duration brings false expiries back.
  Support:
  - Turn 3 "keeps the safe default"
  - Principle: a lease should outlive several refresh intervals.
**Agreements**
- A configurable duration keeps a safe default and lets fast deployments recover sooner (Turn 3).
- Fencing tokens are the right defence against late writes.
**Novel Argument**
Publishing the chosen duration in the grant response lets clients size their refresh interval without guessing.
Support:
- design.md#Lease semantics
**Unresolved Items**
- Which percentile of refresh latency sets the duration (non-blocking)
**Stance Revision Support**
- Turn 3 "A per-deployment ceiling on refresh latency"
- design.md:36-37
""",
    heading(5, "ACCEPTING_CONSENSUS")
    + """\
**Position**
I accept: a configurable duration, a fifteen-minute default, a floor of several refresh intervals, and the duration published in each grant.
**Counterpoints**
- Addresses: Turn 4
  Claim: Publishing the duration in each grant also lets storage log which lease length allowed a write.
  Support:
  - Turn 4 "Publishing the chosen duration in the grant response"
  - design.md#Goals
**Agreements**
- The floor stays well above the refresh interval (Turn 4).
- Fencing tokens are the right defence against late writes.
**Novel Argument**
Recording the duration next to each fencing token lets a post-mortem tell a slow holder from a dead one.
Support:
- design.md "Every write can be traced to the lease that allowed it."
**Unresolved Items**
- How short a lease can be before refresh traffic matters (non-blocking)
**Stance Revision Support**
- Turn 4 "I accept a configurable lease duration"
""",
]

DISSENT = [
    heading(1, "OPEN_TO_DEBATE")
    + """\
**Position**
The two-second skew bound is an assumption the design never enforces, so expiry decisions can be wrong without anyone noticing.
**Counterpoints**
- Addresses: design.md#Clock assumptions
  Claim: Nothing in the design measures skew, so a host beyond two seconds silently stretches or shrinks every lease it judges.
  Support:
  - design.md "We assume a skew of at most two seconds between any two hosts"
  - design.md:24-25
**Agreements**
- The fencing token protects storage whatever the clocks say.
**Novel Argument**
Each host should judge expiry on its own monotonic clock, so skew between hosts stops mattering for leases.
Support:
- Principle: durations measured on one clock need no agreement between clocks.
- https://man7.org/linux/man-pages/man2/clock_gettime.2.html
**Unresolved Items**
- Whether any host in production exceeds the two-second bound (blocking)
**Stance Revision Support**
""",
    heading(2, "OPEN_TO_DEBATE")
    + """\
**Position**
Treating large skews as outages is the enforcement: operators already alarm on clock drift.
**Counterpoints**
- Addresses: Turn 1
  Claim: Monotonic clocks do not survive a reboot, so a rebooted host cannot judge a lease granted before it went down.
  Support:
  - Turn 1 "Each host should judge expiry on its own monotonic clock"
  - design.md#Crashed holders
**Agreements**
- The fencing token protects storage whatever the clocks say (Turn 1).
**Novel Argument**
The lease service itself should refuse grants while its own clock is known to be unsynchronised.
Support:
- https://www.rfc-editor.org/rfc/rfc5905
- design.md "larger skews are treated as outages"
**Unresolved Items**
- Who is paged when the skew alarm fires (non-blocking)
**Stance Revision Support**
""",
    heading(3, "DISSENTING")
    + """\
**Position**
An alarm is not enforcement: between the drift and the page, wrong expiries have already happened.
**Counterpoints**
- Addresses: Turn 2
  Claim: A reboot ends every lease anyway, so the monotonic clock's reset costs nothing the crash did not already cost.
  Support:
  - Turn 2 "Monotonic clocks do not survive a reboot"
  - design.md "A holder that crashes simply stops refreshing"
**Agreements**
- A service that knows its clock is wrong should stop granting (Turn 2).
**Novel Argument**
Skew should be measured at every grant and written into the lease, so a reviewer can see which grants were judged on a drifting clock.
Support:
- design.md#Goals
**Unresolved Items**
- Whether any host in production exceeds the two-second bound (blocking)
- Whether the skew alarm fires below two seconds (blocking)
**Stance Revision Support**
- Turn 2 "operators already alarm on clock drift"
- Principle: a guarantee that rests on an unmonitored assumption is not a guarantee.
""",
    heading(4, "CONVERGING")
    + """\
**Position**
Measuring skew at each grant is worth adding, but leases that must outlive a restart of the service keep wall-clock expiry.
**Counterpoints**
- Addresses: Turn 3
  Claim: Recording skew per grant is cheap and answers the reviewer's question without changing how expiry is judged.
  Support:
  - Turn 3 "Skew should be measured at every grant"
  - design.md#Lease semantics
**Agreements**
- Measuring skew at every grant helps reviewers (Turn 3).
**Novel Argument**
A restart of the lease service, unlike a host reboot, must not end the leases it granted, which is why wall-clock expiry stays.
Support:
- Principle: a restart of the coordinator should not be an outage for its clients.
**Unresolved Items**
- Whether leases must survive a restart of the lease service (blocking)
**Stance Revision Support**
- Turn 3 "between the drift and the page, wrong expiries have already happened"
""",
]

MAX_TURNS = [
    heading(1, "OPEN_TO_DEBATE")
    + """\
**Position**
Holders should refresh at a third of the lease duration, not at a fixed interval.
**Counterpoints**
- Addresses: design.md#Lease semantics
  Claim: A refresh schedule tied to the duration keeps the safety margin when the duration changes.
  Support:
  - design.md "A refresh moves the expiry to now plus the lease duration"
  - design.md:14-16
**Agreements**
- An expired lease must never be refreshed.
**Novel Argument**
Jitter on the refresh time spreads the load of many holders renewing together.
Support:
- https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/
**Unresolved Items**
- How much jitter is enough (non-blocking)
**Stance Revision Support**
""",
    heading(2, "OPEN_TO_DEBATE")
    + """\
**Position**
A third of the duration is right for long leases but wasteful for short ones, where a fixed floor matters more.
**Counterpoints**
- Addresses: Turn 1
  Claim: With a thirty-second lease, refreshing every ten seconds multiplies writes for no gain in safety.
  Support:
  - Turn 1 "refresh at a third of the lease duration"
  - design.md#Goals
**Agreements**
- An expired lease must never be refreshed (Turn 1).
**Novel Argument**
The refresh interval should have a floor of a few seconds whatever the duration.
Support:
- Principle: a schedule should never ask for more work than the guarantee it buys.
**Unresolved Items**
- What the floor should be (non-blocking)
**Stance Revision Support**
""",
    heading(3, "CONVERGING")
    + """\
**Position**
A third of the duration with a floor of a few seconds covers both cases.
**Counterpoints**
- Addresses: Turn 2
  Claim: The floor only binds for leases under ten seconds, which the design does not use.
  Support:
  - Turn 2 "a fixed floor matters more"
  - design.md "Leases expire after fifteen minutes"
**Agreements**
- A floor on the refresh interval avoids needless writes (Turn 2).
**Novel Argument**
The refresh schedule should be part of the grant response, so that no client ever computes it differently.
Support:
- design.md#Lease semantics
**Unresolved Items**
- How much jitter is enough (non-blocking)
**Stance Revision Support**
- Turn 2 "wasteful for short ones"
""",
    heading(4, "CONVERGING")
    + """\
**Position**
Agreed on a third with a floor; the amount of jitter can be settled by measurement.
**Counterpoints**
- Addresses: Turn 3
  Claim: Putting the schedule in the grant response makes a later change of policy a server-side deploy only.
  Support:
  - Turn 3 "part of the grant response"
  - design.md#Open questions
**Agreements**
- The refresh interval is a third of the duration, with a floor (Turn 3).
**Novel Argument**
A load test with a thousand holders would settle the jitter question in an afternoon.
Support:
- Principle: measure before tuning.
**Unresolved Items**
- What the floor should be (non-blocking)
**Stance Revision Support**
- Turn 3 "covers both cases"
""",
]

# Hostile text a turn may hold (in code spans, or as entities) and an edited close summary may hold raw:
# the report must show it as text, never as markup.
INVALIDATED = [
    heading(1, "OPEN_TO_DEBATE")
    + """\
**Position**
Partitioned holders need a way to learn of their expiry sooner than their next refresh.
**Counterpoints**
- Addresses: design.md#Partitions
  Claim: Until its next refresh a partitioned holder keeps writing, and only fencing stops it.
  Support:
  - design.md "A partitioned holder may keep writing until it notices the expiry."
  - design.md:36-37
**Agreements**
- Storage must reject a stale token even in a payload such as `"><img src=x onerror=alert(1)>`.
**Novel Argument**
Holders should check their lease before each write, not only at refresh, as in `<script>alert(1)</script>` &lt;b&gt;.
Support:
- Principle: check freshness where the risk is.
**Unresolved Items**
- How often a holder can afford to check (non-blocking)
**Stance Revision Support**
""",
    heading(2, "OPEN_TO_DEBATE")
    + """\
**Position**
Checking before each write costs a round trip per write, which fencing already makes unnecessary.
**Counterpoints**
- Addresses: Turn 1
  Claim: A check before each write narrows the window but cannot close it, since the lease can expire right after the check.
  Support:
  - Turn 1 "only fencing stops it"
  - design.md#Failure handling
**Agreements**
- Fencing is the last line of defence (Turn 1).
**Novel Argument**
Storage could return the newest token it has seen with every rejection, so a partitioned holder learns at once that it lost.
Support:
- design.md "Storage rejects any write whose token is older than the"
**Unresolved Items**
- Whether storage can afford to return the token (non-blocking)
**Stance Revision Support**
""",
]
INVALIDATED_REASON = "Claude could not write a valid turn 3 after 3 repairs (NOVELTY, UNGROUNDED)"
INVALIDATED_SUMMARY = (
    "Closed before turn 3. <script>alert('summary')</script>\n\n\"><img src=x onerror=alert(2)> and a | pipe"
)

# What a model's requests used for each turn of the consensus duel, as `duel join` records it.
USAGE = {
    1: {
        "input_tokens": 3120,
        "output_tokens": 910,
        "cache_read_tokens": 0,
        "cache_write_tokens": 2980,
        "requests": 1,
        "retries": 0,
        "repairs": 0,
        "seconds": 41.2,
        "output_estimated": False,
    },
    2: {
        "input_tokens": 3894,
        "output_tokens": 1204,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "requests": 2,
        "retries": 1,
        "repairs": 0,
        "seconds": 63.9,
        "output_estimated": False,
    },
    3: {
        "input_tokens": 1260,
        "output_tokens": 1033,
        "cache_read_tokens": 2980,
        "cache_write_tokens": 1410,
        "requests": 1,
        "retries": 0,
        "repairs": 0,
        "seconds": 37.5,
        "output_estimated": False,
    },
    4: {
        "input_tokens": 2330,
        "output_tokens": 987,
        "cache_read_tokens": 3840,
        "cache_write_tokens": 0,
        "requests": 1,
        "retries": 0,
        "repairs": 0,
        "seconds": 29.0,
        "output_estimated": False,
    },
    5: {
        "input_tokens": 1177,
        "output_tokens": 1122,
        "cache_read_tokens": 4390,
        "cache_write_tokens": 1290,
        "requests": 1,
        "retries": 0,
        "repairs": 0,
        "seconds": 44.8,
        "output_estimated": False,
    },
}


def run_duel(
    folder: Path,
    topic: str,
    turns: list[str],
    max_turns: int,
    *,
    usage: bool = False,
    close: tuple[str, str, str] | None = None,
) -> tuple[Path, str]:
    """A duel through the service; returns its debate dir and duel id. ``close``: (outcome, reason, summary)
    for a close before an outcome is reached."""
    clock = ManualClock(START)
    debates = folder / "reports" / "debates"
    service = DuelService(debates, clock=clock)
    source = folder / "design.md"
    settings = DuelSettings(max_turns=max_turns)
    seats = []
    for name, harness, model in (CLAUDE, GPT):
        joined = service.join(
            target=str(source), topic=topic, participant_name=name, harness=harness, model_id=model, settings=settings
        )
        seats.append(joined.seat)
        clock.advance(17)
    lease = None
    for n, text in enumerate(turns, start=1):
        seat = seats[(n - 1) % 2]
        lease = service.claim_lock(seat).lease
        clock.advance(60 + 23 * n)
        appended = service.append(seat, lease, text, release=True)
        if usage:
            service.record_usage(seat, n, Usage.from_json(USAGE[n]))
        clock.advance(3)
        if appended.terminal_outcome:
            clock.advance(2)
            service.release_lock(seat, lease, close=True, outcome=appended.terminal_outcome)
    if close:
        outcome, reason, summary = close
        seat = seats[len(turns) % 2]
        lease = service.claim_lock(seat).lease
        clock.advance(240)
        # The service refuses raw HTML in a summary; the summary is not hashed, so an edited
        # record can still hold it: write a stand-in, then edit the file as such a record would be.
        service.release_lock(seat, lease, close=True, outcome=outcome, reason=reason, summary="SUMMARY")
        artifact = debates / f"{seats[0].duel_id}.md"
        artifact.write_text(
            artifact.read_text(encoding="utf-8").replace("\nSUMMARY", "\n" + summary, 1), encoding="utf-8"
        )
    return debates, seats[0].duel_id


# What `duel verify` would have found for the URLs of two duels: (verdict, confidence, reason, votes).
URL_VERDICTS = {
    "https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html": (
        Verdict.VERIFIED,
        Confidence.HIGH,
        "3 of 3 valid votes support: the page states that fencing tokens make late writes harmless",
        (Vote.SUPPORTS, Vote.SUPPORTS, Vote.SUPPORTS),
    ),
    "https://kubernetes.io/docs/concepts/architecture/leases/": (
        Verdict.UNRELIABLE,
        Confidence.MEDIUM,
        "2 of 3 valid votes refute: the page describes node heartbeats, not a configurable lease duration",
        (Vote.REFUTES, Vote.REFUTES, Vote.INSUFFICIENT),
    ),
    "https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/": (
        Verdict.VERIFIED,
        Confidence.HIGH,
        "3 of 3 valid votes support: the page measures jitter spreading contending clients",
        (Vote.SUPPORTS, Vote.SUPPORTS, Vote.SUPPORTS),
    ),
}
VOTERS = ("claude-sonnet-5-5", "gpt-6.1-sol", "claude-sonnet-5-5 (refute)")


def write_sidecar(artifact: Path, covered: int, verified_at: str) -> None:
    """A sidecar for the first ``covered`` turns, written through the verification module."""
    record = RecordFile.read(artifact)
    assert record.front is not None
    history = record.history()
    blocks, turns = record.parsed.blocks[:covered], history.turns[:covered]
    entries, fetches = [], {}
    for citation in artifact_citations(blocks, turns, history.source_names, first=history.schedule.first):
        votes: tuple[verification.VoteRecord, ...] = ()
        if citation.kind == CitationKind.PRINCIPLE:
            verdict, confidence, reason = Verdict.NOT_CHECKABLE, None, "a principle is argued, not cited"
        elif citation.kind in (CitationKind.SOURCE, CitationKind.TURN):
            verdict, confidence, reason = Verdict.CHECKED_AT_APPEND, None, "checked when the turn was appended"
        else:
            assert citation.url is not None
            verdict, confidence, reason, answers = URL_VERDICTS[citation.url]
            fetches[citation.url] = verification.FetchRecord(
                final_url=citation.url,
                status=200,
                content_type="text/html",
                content_sha256="0" * 63 + "1",
                bytes=48_213,
                fetched_at=verified_at,
                error=None,
                detail="read as HTML",
            )
            votes = tuple(
                verification.VoteRecord(
                    voter=voter,
                    brief=Vote.BRIEF_REFUTE if "refute" in voter else Vote.BRIEF_SUPPORT,
                    answer=answer,
                    excerpt=None,
                    basis=Vote.STATES,
                    valid=True,
                    reason=None,
                )
                for voter, answer in zip(VOTERS, answers, strict=True)
            )
        entries.append(
            verification.CitationEntry(
                citation=citation, verdict=verdict, confidence=confidence, reason=reason, votes=votes
            )
        )
    sidecar = verification.Sidecar(
        duel_id=record.front.duel_id,
        artifact=artifact.name,
        chain_head=blocks[-1].sha256,
        turns=covered,
        verified_at=verified_at,
        voters=VOTERS,
        fetches=fetches,
        citations=tuple(entries),
    )
    verification.sidecar_path(artifact).write_bytes(verification.dumps(sidecar))


def main() -> None:
    out = HERE / "debates"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copyfile(HERE.parent / "design.md", folder / "design.md")
        cases = [
            run_duel(folder, "Lease duration", CONSENSUS, 6, usage=True),
            run_duel(folder, "Clock skew bound", DISSENT, 4),
            run_duel(folder, "Refresh cadence", MAX_TURNS, 4),
            run_duel(
                folder,
                "Partition handling",
                INVALIDATED,
                6,
                close=("INVALIDATED", INVALIDATED_REASON, INVALIDATED_SUMMARY),
            ),
        ]
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        for index, (debates, duel_id) in enumerate(cases):
            shutil.copyfile(debates / f"{duel_id}.md", out / f"{duel_id}.md")
            if index == 0:  # the recorded usage: the state and events `duel tools status` reads
                state = out / ".duel" / "duels" / duel_id
                state.mkdir(parents=True)
                for name in ("state.json", "events.jsonl"):
                    shutil.copyfile(debates / ".duel" / "duels" / duel_id / name, state / name)
            print(out / f"{duel_id}.md")  # noqa: T201  the script names each fixture it writes
    # With a sidecar: the consensus duel (every turn verified), the max-turns duel (a stale one, turns 1-3).
    write_sidecar(out / f"{cases[0][1]}.md", 5, "2026-11-24T09:30:00.000Z")
    write_sidecar(out / f"{cases[2][1]}.md", 3, "2026-11-24T09:20:00.000Z")


if __name__ == "__main__":
    main()
