"""The participant's retry schedule and its runner, on an injected clock (no waiting)."""

from __future__ import annotations

import pytest

from rp1_duel.coordination import Usage
from rp1_duel.participant.providers import Composition, ProviderError
from rp1_duel.participant.retry import RetryNotice, RetryPolicy, compose_with_retries

POLICY = RetryPolicy(base_seconds=1, factor=2, cap_seconds=60, jitter=0.25, request_margin_seconds=30)


@pytest.mark.parametrize(
    ("attempt", "retry_after", "draw", "wait"),
    [
        (2, None, 0.5, 1.0),  # first retry: the base
        (3, None, 0.5, 2.0),
        (5, None, 0.5, 8.0),
        (20, None, 0.5, 60.0),  # capped
        (2, None, 0.0, 0.75),  # jitter: -25%
        (2, None, 1.0, 1.25),  # jitter: +25%
        (2, 3.0, 0.0, 3.0),  # retry-after is followed as sent…
        (2, 3.0, 1.0, 3.3),  # …plus at most 10%
        (9, 30.0, 1.0, 31.0),  # …and at most 1 s
        (2, 0.0, 0.5, 0.0),
    ],
)
def test_the_wait_is_exponential_with_jitter_or_the_servers_retry_after(attempt, retry_after, draw, wait):
    assert POLICY.wait_before(attempt, retry_after=retry_after, draw=draw) == pytest.approx(wait)


def test_a_wait_is_taken_only_if_the_request_still_fits_before_the_deadline():
    assert POLICY.worth_waiting(10, seconds_left=40)
    assert not POLICY.worth_waiting(10, seconds_left=39.9)


class Script:
    """A provider call that fails as scripted, then answers; the clock advances with each sleep."""

    def __init__(self, failures: list[ProviderError]):
        self.failures = list(failures)
        self.now = 1000.0
        self.slept: list[float] = []
        self.calls = 0

    def attempt(self) -> Composition:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return Composition(text="turn", usage=Usage(output_tokens=10, requests=1))

    def sleep(self, seconds: float) -> bool:
        self.slept.append(seconds)
        self.now += seconds
        return True


def overloaded(retry_after: float | None = None) -> ProviderError:
    return ProviderError(
        "PROVIDER_UNAVAILABLE",
        "anthropic is unavailable (HTTP 529): overloaded",
        retryable=True,
        retry_after=retry_after,
    )


def run(script: Script, deadline: float, notices: list[RetryNotice] | None = None, **kw) -> Composition | None:
    return compose_with_retries(
        script.attempt,
        POLICY,
        deadline,
        clock=lambda: script.now,
        sleep=script.sleep,
        draw=lambda: 0.5,
        on_retry=(notices if notices is not None else []).append,
        **kw,
    )


def test_retries_go_on_past_the_sdks_two_until_the_answer_comes():
    script = Script([overloaded() for _ in range(6)])
    notices: list[RetryNotice] = []

    composition = run(script, deadline=script.now + 1800, notices=notices)

    assert composition is not None and composition.text == "turn"
    assert script.slept == [1, 2, 4, 8, 16, 32]
    assert [n.attempt for n in notices] == [2, 3, 4, 5, 6, 7]
    assert (composition.usage.requests, composition.usage.retries) == (7, 6)


def test_retry_after_is_honoured():
    script = Script([overloaded(retry_after=3)])

    run(script, deadline=script.now + 1800)

    assert script.slept == [pytest.approx(3.15)]


def test_retries_stop_when_the_turn_deadline_is_too_near_and_say_so():
    script = Script([overloaded() for _ in range(100)])

    with pytest.raises(ProviderError) as raised:
        run(script, deadline=script.now + 60)

    assert script.slept == [1, 2, 4, 8]  # a 16 s wait would leave less than the 30 s margin
    assert raised.value.code == "PROVIDER_UNAVAILABLE"
    assert "gave up after 5 attempts" in raised.value.message


def test_permanent_errors_are_raised_at_once():
    script = Script([ProviderError("PROVIDER_AUTH", "anthropic refused the credentials (HTTP 401): bad key")])

    with pytest.raises(ProviderError) as raised:
        run(script, deadline=script.now + 1800)

    assert raised.value.code == "PROVIDER_AUTH"
    assert (script.calls, script.slept) == (1, [])


def test_a_lost_lease_stops_the_wait_without_another_request():
    script = Script([overloaded()])

    result = compose_with_retries(
        script.attempt, POLICY, script.now + 1800, clock=lambda: script.now, sleep=lambda seconds: False
    )

    assert result is None
    assert script.calls == 1
