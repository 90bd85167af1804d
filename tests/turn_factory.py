"""Valid turns for tests: each call writes a fresh turn that passes every rule
against conftest.SOURCE (distinct wording per turn so NOVELTY holds)."""

from __future__ import annotations

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


def make_turn(n: int, name: str, harness: str, model: str, stance: str = "OPEN_TO_DEBATE",
              blocking: bool = False, previous_stance: str | None = None) -> str:
    subject, claim = TOPICS[(n - 1) % len(TOPICS)]
    addresses = "design.md#Lease semantics" if n == 1 else f"Turn {n - 1}"
    tag = "blocking" if blocking else "non-blocking"
    revision = f"- Turn {n - 1}\n" if n > 1 else "- Principle: a first stance needs no revision support\n"
    return (
        f"## Turn {n} — {name} ({harness} / {model}) — {stance}\n"
        f"**Position**\n"
        f"On {subject} (turn {n}): {claim}.\n"
        f"**Counterpoints**\n"
        f"- Addresses: {addresses}\n"
        f"  Claim: turn {n} doubts point {n} about {subject} in particular\n"
        f"  Support:\n"
        f"  - design.md#Failure handling\n"
        f"**Agreements**\n"
        f"- The design keeps seat order fixed.\n"
        f"**Novel Argument**\n"
        f"Argument {n}: {subject} matters because reviewers read turn {n} later.\n"
        f"Support:\n"
        f"- design.md \"Leases expire after fifteen minutes unless refreshed.\"\n"
        f"**Unresolved Items**\n"
        f"- Whether item {n} on {subject} needs a benchmark ({tag})\n"
        f"**Stance Revision Support**\n"
        f"{revision}"
    )
