"""Transient store failures retried with backoff and told as a wait; permanent ones at once
(docs/protocol.md section 4, "Stores"). The rules, without a server: the server tier is
tests/test_store_postgres_scale.py."""

from __future__ import annotations

import psycopg
import pytest

from rp1_duel.coordination._postgres_link import channel_of, transient_reason
from rp1_duel.coordination._retrying import is_transient, pauses, retried, transient_failure
from rp1_duel.errors import DuelError


def full() -> DuelError:
    return transient_failure("cannot use the store: too many clients", "the store is full of connections", {})


def test_pauses_double_up_to_eight_seconds_within_the_budget():
    assert list(pauses(30)) == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 8, 8]
    assert sum(pauses()) <= 300


def test_a_transient_failure_is_retried_and_each_pause_told():
    failures = [full(), full()]
    told: list[str] = []
    slept: list[float] = []

    def op() -> str:
        if failures:
            raise failures.pop()
        return "done"

    assert retried(op, told.append, sleep=slept.append, spread=lambda: 1.0) == "done"
    assert told == [
        "the store is full of connections; retrying in 0.1 s",
        "the store is full of connections; retrying in 0.2 s",
    ]
    assert slept == [0.1, 0.2]


def test_pauses_are_spread_so_processes_turned_away_together_come_back_apart():
    slept: list[float] = []
    failures = [full(), full()]

    def op() -> None:
        if failures:
            raise failures.pop()

    retried(op, sleep=slept.append, spread=iter([0.0, 0.5]).__next__)
    assert slept == pytest.approx([0.05, 0.15])  # half of 0.1, then three quarters of 0.2


def test_a_permanent_failure_is_raised_at_once():
    calls: list[int] = []

    def op() -> None:
        calls.append(1)
        raise DuelError("STORAGE_FAILED", 'cannot use the store: database "x" does not exist')

    slept: list[float] = []
    with pytest.raises(DuelError) as info:
        retried(op, sleep=slept.append)
    assert calls == [1] and slept == [] and not is_transient(info.value)


def test_a_failure_that_outlasts_the_budget_is_raised_after_it():
    slept: list[float] = []

    def op() -> None:
        raise full()

    with pytest.raises(DuelError) as info:
        retried(op, budget=4, sleep=slept.append, spread=lambda: 1.0)
    assert slept == [0.1, 0.2, 0.4, 0.8, 1.6] and is_transient(info.value)


@pytest.mark.parametrize(
    ("error", "reached", "reason"),
    [
        (psycopg.OperationalError("connection failed: FATAL:  sorry, too many clients already"), False, "full"),
        (psycopg.errors.AdminShutdown("terminating connection due to administrator command"), True, "restarting"),
        (psycopg.errors.CannotConnectNow("the database system is starting up"), False, "restarting"),
        (psycopg.OperationalError("connection failed: Connection refused"), True, "cannot be reached"),
        (psycopg.OperationalError("consuming input failed: server closed the connection unexpectedly"), True, "lost"),
        (psycopg.errors.SerializationFailure("could not serialize access"), True, "met another"),
    ],
)
def test_failures_expected_to_pass_are_transient(error, reached, reason):
    found = transient_reason(error, reached=reached)
    assert found is not None and reason in found


@pytest.mark.parametrize(
    ("error", "reached"),
    [
        (psycopg.OperationalError('connection failed: FATAL:  database "nosuchdb" does not exist'), True),
        (psycopg.OperationalError('connection failed: FATAL:  password authentication failed for user "x"'), True),
        (psycopg.OperationalError("connection failed: Connection refused"), False),  # never reached: a wrong port
        (psycopg.errors.UndefinedTable("relation duels does not exist"), True),
        (psycopg.errors.RaiseException("duel d changed under this write"), True),
    ],
)
def test_failures_that_will_not_pass_are_permanent(error, reached):
    assert transient_reason(error, reached=reached) is None


def test_each_duel_has_its_own_channel_a_plain_identifier():
    channel = channel_of("2026-11-25-lease-design")
    assert channel != channel_of("2026-11-25-lease-design-2")
    assert channel.isidentifier() and channel == channel.lower() and len(channel) <= 63


def test_a_full_server_is_asked_again_within_half_a_second_as_a_slot_frees_in_moments():
    slept: list[float] = []
    soon = transient_failure("too many clients", "the store is full of connections", {}, soon=True)

    def op() -> None:
        raise soon

    with pytest.raises(DuelError):
        retried(op, budget=5, sleep=slept.append, spread=lambda: 1.0)
    assert slept[:4] == pytest.approx([0.1, 0.2, 0.4, 0.5]) and max(slept) == 0.5
    assert sum(slept) <= 5
