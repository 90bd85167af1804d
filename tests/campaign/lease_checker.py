"""The lease campaign's checker: a history of ops, the final store and artifacts in, violations out.

Pure: it reads no file and no clock. A history is a list of ops as the campaign records them
(``client``, ``op``, ``args``, ``start``, ``end``, ``result``), times in the service's seconds
(the clock leases are judged on). An op whose answer never came (its client was killed) has
``end`` and ``result`` None: it may or may not have taken effect. The nemesis's faults are ops
of client ``nemesis``; the checker reads its ``kill`` entries (``args["target"]``, the client).

A lease is named by its fence. What each rule assumes of the service is the protocol's
(docs/protocol.md section 4): a lease lasts ``lease_seconds`` from its grant or last refresh
unless released, a new grant takes a larger fence, and every write is checked against the lease
at the moment it is made.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from rp1_duel.record.artifact import parse

Op = dict[str, Any]

OVERLAPPING_WRITES = "overlapping_writes"
FENCE_NOT_GROWING = "fence_not_growing"
TURN_LOST = "turn_lost"
TURN_TWICE = "turn_written_twice"
STATE_ARTIFACT_DISAGREE = "state_and_artifact_disagree"
LAPSED_WRITE_ACCEPTED = "lapsed_write_accepted"
LAPSE_NOT_TOLD = "lapse_not_told"
FLOOR_HELD_AFTER_DEATH = "floor_held_after_death"
NO_ANSWER = "no_answer"  # a `duel tools` process printed no JSON answer (a traceback, say)
NO_JSON_ANSWER = "NO_JSON_ANSWER"  # the error the history records for such an answer

KINDS = (
    OVERLAPPING_WRITES,
    FENCE_NOT_GROWING,
    TURN_LOST,
    TURN_TWICE,
    STATE_ARTIFACT_DISAGREE,
    LAPSED_WRITE_ACCEPTED,
    LAPSE_NOT_TOLD,
    FLOOR_HELD_AFTER_DEATH,
    NO_ANSWER,
)


class Violation(NamedTuple):
    """One broken rule: its kind (one of :data:`KINDS`) and what broke it."""

    kind: str
    detail: str


class DuelEnd(NamedTuple):
    """A duel as the store keeps it after the campaign: its fence, its turns (number, SHA-256), its artifact."""

    fence: int
    turns: tuple[tuple[int, str], ...]
    artifact: str


def check(history: Sequence[Op], finals: Mapping[str, DuelEnd], lease_seconds: float) -> list[Violation]:
    """Every violation of the lease's rules that ``history`` and the final ``finals`` show."""
    ops = [op for op in history if op["client"] != "nemesis"]
    deaths = _deaths(history)
    by_duel: dict[str, list[Op]] = defaultdict(list)
    for op in ops:
        by_duel[op["args"]["duel"]].append(op)
    found: list[Violation] = []
    for duel, duel_ops in sorted(by_duel.items()):
        grants = _grants(duel_ops)
        found += _fences(duel, grants, finals.get(duel))
        found += _stale_writes(duel, duel_ops, grants)
        found += _lapses(duel, duel_ops, grants, deaths, lease_seconds)
        found += _floors(duel, duel_ops, grants, deaths, lease_seconds)
    for duel, end in sorted(finals.items()):
        found += _turns(duel, by_duel.get(duel, []), end)
    found += [
        Violation(NO_ANSWER, f"{op['args']['duel']}: {op['client']}'s {op['op']} answered no JSON object")
        for op in ops
        if answered(op).get("error") == NO_JSON_ANSWER
    ]
    return found


# -- what the history says ------------------------------------------------------------------


def _deaths(history: Iterable[Op]) -> dict[str, float]:
    """Each killed client and when it was killed."""
    return {op["args"]["target"]: op["start"] for op in history if op["client"] == "nemesis" and op["op"] == "kill"}


def answered(op: Op) -> dict[str, Any]:
    """The op's answer, empty when none came."""
    return op["result"] or {}


def _grants(ops: Iterable[Op]) -> list[Op]:
    """The claims that were granted a new lease (a claim answered with the caller's own lease is none)."""
    return [
        op
        for op in ops
        if op["op"] == "claim" and answered(op).get("acquired") and answered(op).get("reason") != "already_held"
    ]


def _accepted_write(op: Op) -> bool:
    """An op under a lease that the service accepted: a turn appended, a refresh, a release or a close."""
    result = answered(op)
    return (
        (op["op"] == "append" and "turn" in result)
        or (op["op"] == "refresh" and result.get("refreshed") is True)
        or (op["op"] == "release" and result.get("released") is True)
    )


class _Granted:
    """The grants of one duel by the time their answer came: the largest fence answered before a moment."""

    def __init__(self, grants: Iterable[Op]):
        ordered = sorted(grants, key=lambda op: op["end"])
        self.ends = [op["end"] for op in ordered]
        self.highest: list[int] = []
        for op in ordered:
            fence = int(answered(op)["fence"])
            self.highest.append(max(fence, self.highest[-1] if self.highest else 0))

    def before(self, moment: float) -> int:
        """The largest fence whose grant was answered before ``moment`` (0: none)."""
        index = bisect.bisect_left(self.ends, moment)
        return self.highest[index - 1] if index else 0


# -- the rules --------------------------------------------------------------------------------


def _fences(duel: str, grants: list[Op], end: DuelEnd | None) -> list[Violation]:
    """Fences are unique, grow with the order of the grants, and the store keeps the largest."""
    found = []
    fences = Counter(int(answered(op)["fence"]) for op in grants)
    for fence, times in sorted(fences.items()):
        if times > 1:
            found.append(Violation(FENCE_NOT_GROWING, f"{duel}: fence {fence} granted {times} times"))
    granted = _Granted(grants)
    for op in grants:
        earlier = granted.before(op["start"])
        if earlier >= int(answered(op)["fence"]):
            found.append(
                Violation(
                    FENCE_NOT_GROWING,
                    f"{duel}: {op['client']} was granted fence {answered(op)['fence']} after fence {earlier}",
                )
            )
    if end is not None and fences and end.fence < max(fences):
        found.append(Violation(FENCE_NOT_GROWING, f"{duel}: the store's fence {end.fence} < granted {max(fences)}"))
    return found


def _stale_writes(duel: str, ops: list[Op], grants: list[Op]) -> list[Violation]:
    """No write under a lease is accepted once a newer lease was granted: two holders never both write."""
    granted = _Granted(grants)
    found = []
    for op in ops:
        if not _accepted_write(op):
            continue
        newer = granted.before(op["start"])
        if newer > op["args"]["fence"]:
            found.append(
                Violation(
                    OVERLAPPING_WRITES,
                    f"{duel}: {op['client']}'s {op['op']} under fence {op['args']['fence']} was accepted "
                    f"after fence {newer} was granted",
                )
            )
    return found


def _lapse_bounds(
    ops: list[Op], grants: list[Op], deaths: Mapping[str, float], lease_seconds: float
) -> dict[int, float]:
    """Each fence's latest possible expiry: a lease after its grant's or last refresh's answer. A refresh
    with no answer may have taken effect up to its client's death (forever, if it never died); one that
    began after the lease lapsed extends nothing (accepted, it is a violation of its own)."""
    bounds: dict[int, float] = {}
    for op in grants:
        bounds[int(answered(op)["fence"])] = _took(op, deaths) + lease_seconds
    refreshes = [op for op in ops if op["op"] == "refresh" and answered(op).get("refreshed") is not False]
    for op in sorted(refreshes, key=lambda op: op["start"]):
        fence = op["args"]["fence"]
        if "error" not in answered(op) and op["start"] <= bounds.get(fence, math.inf):
            bounds[fence] = max(bounds.get(fence, -math.inf), _took(op, deaths) + lease_seconds)
    return bounds


def _took(op: Op, deaths: Mapping[str, float]) -> float:
    """When the op took effect at the latest: its answer, else its client's death (else never known)."""
    return float(op["end"]) if op["end"] is not None else deaths.get(op["client"], math.inf)


def _lapses(
    duel: str, ops: list[Op], grants: list[Op], deaths: Mapping[str, float], lease_seconds: float
) -> list[Violation]:
    """A lease past its expiry writes nothing, and its holder is told at its next op."""
    bounds = _lapse_bounds(ops, grants, deaths, lease_seconds)
    found = []
    for op in ops:
        if not _accepted_write(op):
            continue
        fence = op["args"]["fence"]
        bound = bounds.get(fence, math.inf)  # a fence never seen granted: its claim's answer was lost
        if op["start"] <= bound:
            continue
        writes = op["op"] == "append" or op["args"].get("close")
        kind, what = (LAPSED_WRITE_ACCEPTED, "accepted") if writes else (LAPSE_NOT_TOLD, "answered as held")
        found.append(
            Violation(
                kind,
                f"{duel}: {op['client']}'s {op['op']} under fence {fence} was {what} "
                f"{op['start'] - bound:.3f} s after the lease lapsed",
            )
        )
    return found


def _floors(
    duel: str, ops: list[Op], grants: list[Op], deaths: Mapping[str, float], lease_seconds: float
) -> list[Violation]:
    """A dead holder's floor is free a lease after its death (or after the last refresh of another client of
    its seat, handed the same lease): a claim then is not refused for that lease, nor handed it back."""
    bounds = _lapse_bounds(ops, grants, deaths, lease_seconds)
    found = []
    for holder in grants:
        died = deaths.get(holder["client"])
        if died is None or holder["start"] > died:
            continue
        fence = int(answered(holder)["fence"])
        free_from = max(died + lease_seconds, bounds[fence])
        newer = [op for op in grants if int(answered(op)["fence"]) > fence]
        for op in ops:
            result = answered(op)
            if op["op"] != "claim" or op["client"] == holder["client"] or op["start"] <= free_from:
                continue
            still_held = result.get("reason") == "already_held" and result.get("fence") == fence
            refused = result.get("reason") == "lease_held_by_peer" and not any(g["start"] < op["end"] for g in newer)
            if still_held or refused:
                found.append(
                    Violation(
                        FLOOR_HELD_AFTER_DEATH,
                        f"{duel}: fence {fence} of {holder['client']} (killed) still held "
                        f"{op['start'] - died:.3f} s after its death, against {op['client']}",
                    )
                )
    return found


def _turns(duel: str, ops: list[Op], end: DuelEnd) -> list[Violation]:
    """Every acknowledged turn is in the state and the artifact once; the two agree; the artifact holds
    past the state's turns only what an append whose answer was not an acknowledgment may have left."""
    found = []
    blocks = [(block.n, block.sha256) for block in parse(end.artifact).blocks]
    for name, turns in (("state", list(end.turns)), ("artifact", blocks)):
        numbers, hashes = Counter(n for n, _ in turns), Counter(sha for _, sha in turns)
        twice = sorted(n for n, times in numbers.items() if times > 1)
        twice += sorted(n for n, sha in set(turns) if hashes[sha] > 1)
        found += [Violation(TURN_TWICE, f"{duel}: the {name} holds turn {n} twice") for n in sorted(set(twice))]
    for op in ops:
        result = answered(op)
        if op["op"] != "append" or "turn" not in result:
            continue
        turn = (result["turn"], result["sha256"])
        for name, turns in (("state", list(end.turns)), ("artifact", blocks)):
            if turn not in turns:
                found.append(Violation(TURN_LOST, f"{duel}: acknowledged turn {turn[0]} is not in the {name}"))
    if blocks[: len(end.turns)] != list(end.turns):
        found.append(Violation(STATE_ARTIFACT_DISAGREE, f"{duel}: the artifact's turns are not the state's"))
    attempted = {op["args"].get("turn") for op in ops if op["op"] == "append" and "turn" not in answered(op)}
    found += [
        Violation(STATE_ARTIFACT_DISAGREE, f"{duel}: the artifact holds turn {n}, which no failed append wrote")
        for n, _ in blocks[len(end.turns) :]
        if n not in attempted
    ]
    return found
