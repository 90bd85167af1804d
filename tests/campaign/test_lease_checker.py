"""The lease campaign's checker on hand-made histories: each kind of violation is found, a clean
history passes; and the campaign's plan of faults is a function of its seed alone."""

from __future__ import annotations

from typing import Any

import pytest

from lease_campaign import FAULTS, plan_faults
from lease_checker import (
    FENCE_NOT_GROWING,
    FLOOR_HELD_AFTER_DEATH,
    LAPSE_NOT_TOLD,
    LAPSED_WRITE_ACCEPTED,
    NO_ANSWER,
    OVERLAPPING_WRITES,
    STATE_ARTIFACT_DISAGREE,
    TURN_LOST,
    TURN_TWICE,
    DuelEnd,
    Op,
    check,
)

LEASE = 5.0
SHA = {n: f"{n:x}" * 64 for n in range(1, 10)}


def op(
    client: str, kind: str, start: float, result: dict[str, Any] | None, end: float | None = None, **args: Any
) -> Op:
    """One op of duel ``d``, answered 0.01 s after its start unless ``end`` says otherwise (None: never)."""
    answered = start + 0.01 if result is not None and end is None else end
    return {
        "client": client,
        "op": kind,
        "args": {"duel": "d", **args},
        "start": start,
        "end": answered,
        "result": result,
    }


def grant(client: str, start: float, fence: int) -> Op:
    return op(client, "claim", start, {"acquired": True, "reason": "your_turn", "fence": fence})


def appended(client: str, start: float, fence: int, n: int) -> Op:
    return op(client, "append", start, {"turn": n, "sha256": SHA[n]}, fence=fence, turn=n)


def released(client: str, start: float, fence: int) -> Op:
    return op(client, "release", start, {"released": True, "closed": False}, fence=fence)


def kill(client: str, moment: float) -> Op:
    return {"client": "nemesis", "op": "kill", "args": {"target": client}, "start": moment, "end": moment, "result": {}}


def artifact(*turns: int) -> str:
    """An artifact holding turns ``turns`` (their markers and a body each)."""
    blocks = (
        f"<!-- duel:turn n={n} sha256={SHA[n]} prev={'0' * 64} -->\n---\nturn {n}\n<!-- /duel:turn -->\n" for n in turns
    )
    return "---\nduel_id: d\n---\n\n" + "".join(blocks)


def end(fence: int, *turns: int, shown: tuple[int, ...] | None = None) -> dict[str, DuelEnd]:
    """The store after the run: ``fence``, the state's ``turns``, an artifact showing ``shown`` (the same turns)."""
    return {"d": DuelEnd(fence, tuple((n, SHA[n]) for n in turns), artifact(*(turns if shown is None else shown)))}


CLEAN = [
    grant("a", 0.0, 1),
    appended("a", 0.1, 1, 1),
    op("a", "refresh", 0.2, {"refreshed": True, "reason": "refreshed"}, fence=1),
    released("a", 0.3, 1),
    grant("b", 0.5, 2),
    op("b", "claim", 0.55, {"acquired": False, "reason": "lease_held_by_peer", "fence": None}),
    appended("b", 0.6, 2, 2),
    # a lease that lapsed: its holder's refresh and append are refused, as they must be
    op("b", "refresh", 9.0, {"refreshed": False, "reason": "lease_expired"}, fence=2),
    op("b", "append", 9.1, {"error": "LEASE_EXPIRED"}, fence=2, turn=3),
]


def kinds(history: list[Op], finals: dict[str, DuelEnd]) -> set[str]:
    return {violation.kind for violation in check(history, finals, LEASE)}


def test_a_clean_history_passes() -> None:
    assert check(CLEAN, end(2, 1, 2), LEASE) == []


def test_two_holders_writing_at_once_is_found() -> None:
    stale = appended("a", 1.0, 1, 3)  # fence 2 was granted at 0.5: fence 1 writes no more
    assert OVERLAPPING_WRITES in kinds([*CLEAN, stale], end(2, 1, 2, 3))


@pytest.mark.parametrize(
    "history",
    [
        [grant("a", 0.0, 1), grant("b", 1.0, 1)],  # granted twice
        [grant("a", 0.0, 2), grant("b", 1.0, 1)],  # a later grant, a smaller fence
    ],
)
def test_a_fence_that_does_not_grow_is_found(history: list[Op]) -> None:
    assert FENCE_NOT_GROWING in kinds(history, end(2))


def test_a_store_keeping_a_smaller_fence_than_it_granted_is_found() -> None:
    assert FENCE_NOT_GROWING in kinds(CLEAN, end(1, 1, 2))


def test_an_acknowledged_turn_lost_is_found() -> None:
    assert TURN_LOST in kinds(CLEAN, end(2, 1))


def test_a_turn_written_twice_is_found() -> None:
    assert TURN_TWICE in kinds(CLEAN, end(2, 1, 2, shown=(1, 2, 2)))


def test_state_and_artifact_disagreeing_is_found() -> None:
    assert STATE_ARTIFACT_DISAGREE in kinds(CLEAN, end(2, 1, 2, shown=(2, 1)))


def test_a_failed_appends_leftover_past_the_state_is_allowed_and_any_other_is_found() -> None:
    failed = op("b", "append", 0.7, {"error": "STORAGE_FAILED"}, fence=2, turn=3)
    assert check([*CLEAN[:7], failed], end(2, 1, 2, shown=(1, 2, 3)), LEASE) == []
    assert STATE_ARTIFACT_DISAGREE in kinds(CLEAN[:7], end(2, 1, 2, shown=(1, 2, 3)))


def test_a_lapsed_holders_accepted_write_is_found() -> None:
    late = appended("b", 9.0, 2, 3)  # fence 2 granted at 0.51, never refreshed: lapsed at 5.51
    assert LAPSED_WRITE_ACCEPTED in kinds([*CLEAN[:7], late], end(2, 1, 2, 3))


def test_a_holder_not_told_its_lease_lapsed_is_found() -> None:
    told_nothing = op("b", "refresh", 9.0, {"refreshed": True, "reason": "refreshed"}, fence=2)
    assert LAPSE_NOT_TOLD in kinds([*CLEAN[:7], told_nothing], end(2, 1, 2))


def test_a_refresh_whose_answer_was_lost_may_have_kept_the_lease_until_its_client_died() -> None:
    lost = op("b", "refresh", 4.0, None, fence=2)
    history = [*CLEAN[:7], lost, kill("b", 4.5), appended("b", 9.0, 2, 3)]
    assert check(history, end(2, 1, 2, 3), LEASE) == []  # 9.0 < 4.5 + 5
    assert LAPSED_WRITE_ACCEPTED in kinds([*history[:-1], appended("b", 9.6, 2, 3)], end(2, 1, 2, 3))


def test_a_floor_held_longer_than_a_lease_after_its_holder_died_is_found() -> None:
    history = [grant("a", 0.0, 1), kill("a", 1.0)]
    refused = op("b", "claim", 7.0, {"acquired": False, "reason": "lease_held_by_peer", "fence": None})
    handed_back = op("a2", "claim", 7.0, {"acquired": True, "reason": "already_held", "fence": 1})
    early = op("b", "claim", 5.0, {"acquired": False, "reason": "lease_held_by_peer", "fence": None})
    assert check([*history, early], end(1), LEASE) == []
    assert FLOOR_HELD_AFTER_DEATH in kinds([*history, refused], end(1))
    assert FLOOR_HELD_AFTER_DEATH in kinds([*history, handed_back], end(1))
    assert check([*history, grant("c", 6.5, 2), refused], end(2), LEASE) == []  # the floor moved on


def test_a_duel_tools_process_that_answered_no_json_object_is_found() -> None:
    assert NO_ANSWER in kinds([*CLEAN, op("t", "status", 9.5, {"error": "NO_JSON_ANSWER"})], end(2, 1, 2))


@pytest.mark.parametrize("store", sorted(FAULTS))
def test_the_plan_of_faults_is_the_seeds_and_holds_every_kind(store: str) -> None:
    plan = plan_faults(7, 2000, store)
    assert plan == plan_faults(7, 2000, store)
    assert plan != plan_faults(8, 2000, store)
    assert {fault.kind for fault in plan} == set(FAULTS[store])
    assert all(100 <= fault.at < 2000 for fault in plan)
