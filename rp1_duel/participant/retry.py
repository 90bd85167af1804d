"""Retrying a model request through what production APIs do: overload, rate limits, cut streams.

The participant owns its retries (the SDKs' own are off): every attempt is the whole
streamed request, and retries go on for as long as the turn deadline allows, not a fixed
small count. :class:`RetryPolicy` is the pure schedule; :func:`compose_with_retries` runs
it with an injected clock, sleep and random source.

No retry library: tenacity and stamina schedule by attempt count or total time, but this
schedule also follows the server's ``retry-after`` and stops at a deadline read from the
duel, which is simpler to say in twenty lines than to configure.
"""

from __future__ import annotations

import random as random_module
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from .providers import Composition, ProviderError

__all__ = ["RetryNotice", "RetryPolicy", "compose_with_retries"]


@dataclass(kw_only=True, frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter, or the server's ``retry-after``, until a deadline."""

    base_seconds: float = 1.0
    factor: float = 2.0
    cap_seconds: float = 60.0
    jitter: float = 0.25  # a backoff is drawn within ±25% so that many clients spread out
    # The retried request itself needs time before the deadline; a wait that leaves less is not taken.
    request_margin_seconds: float = 30.0

    def wait_before(self, attempt: int, *, retry_after: float | None, draw: float) -> float:
        """Seconds to wait before attempt ``attempt`` (2 for the first retry); ``draw`` is uniform in [0, 1).

        The server's ``retry-after`` is followed as sent, plus up to 10% (at most 1 s) so that
        clients told the same time do not return at once.
        """
        if retry_after is not None and retry_after >= 0:
            return retry_after + draw * min(1.0, 0.1 * retry_after)
        backoff = min(self.cap_seconds, self.base_seconds * self.factor ** (attempt - 2))
        return backoff * (1 - self.jitter + 2 * self.jitter * draw)

    def worth_waiting(self, wait: float, *, seconds_left: float) -> bool:
        """Whether a retry after ``wait`` seconds still leaves the request time before the deadline."""
        return wait + self.request_margin_seconds <= seconds_left


@dataclass(frozen=True)
class RetryNotice:
    """What a person is told before a retry wait."""

    error: ProviderError
    attempt: int  # the attempt about to be made
    wait_seconds: float


def compose_with_retries(
    attempt: Callable[[], Composition],
    policy: RetryPolicy,
    deadline: float,
    *,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], bool] | None = None,
    draw: Callable[[], float] = random_module.random,
    on_retry: Callable[[RetryNotice], None] = lambda _notice: None,
) -> Composition | None:
    """Run ``attempt`` until it succeeds, fails permanently, or the deadline (on ``clock``) is too near.

    ``sleep`` (default: :func:`time.sleep`) returns False to stop waiting (the lease was lost):
    the result is then None. The composition returned counts every request made and every retry.
    """
    failed = 0
    while True:
        try:
            composition = attempt()
        except ProviderError as error:
            failed += 1
            if not error.retryable:
                raise
            wait = policy.wait_before(failed + 1, retry_after=error.retry_after, draw=draw())
            if not policy.worth_waiting(wait, seconds_left=deadline - clock()):
                raise error.given_up(failed) from None
            on_retry(RetryNotice(error, failed + 1, wait))
            if not (sleep or _sleep)(wait):
                return None
            continue
        usage = composition.usage
        return replace(composition, usage=replace(usage, requests=usage.requests + failed, retries=failed))


def _sleep(seconds: float) -> bool:
    time.sleep(seconds)
    return True
