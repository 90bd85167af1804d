"""What the requests of one draft cost, failed ones included: counted as they are made, for the ``usage`` event."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from ..coordination import Usage
from .providers import Composition, Progress, ProviderError, TurnRequest
from .usage import estimate_tokens

__all__ = ["RequestMeter"]


class RequestMeter:
    """What the requests of one draft used, those that failed included: a failed request's tokens
    are estimated (its input from the request's text once its answer had begun, its output from
    what had streamed), for the API that was paid for them gave no count."""

    def __init__(self, request: TurnRequest, progress: Callable[[Progress], None]):
        self._request = request
        self._progress = progress
        self._started = time.monotonic()
        self._failed = Usage()  # the tokens of the requests that failed, estimated
        self._attempts = 0
        self._current: Progress | None = None  # the request under way: how far its answer got

    def attempt(self, compose: Callable[[TurnRequest, Callable[[Progress], None]], Composition]) -> Composition:
        """One request, its progress watched; a failure's tokens are kept before it is raised."""
        self._attempts += 1
        self._current = None
        try:
            return compose(self._request, self._seen)
        except ProviderError:
            self._failed += self._in_flight()
            self._current = None
            raise

    def answered(self, usage: Usage) -> Usage:
        """The draft's usage once a request answered: the API's counts of that request (and every
        request counted, by the retries), the failed ones' estimates added."""
        return replace(usage + self._failed, seconds=self._elapsed())

    def spent(self) -> Usage:
        """The draft's usage when no request answered: every request sent, the one abandoned included."""
        tokens = self._failed + self._in_flight()
        return replace(tokens, requests=self._attempts, retries=max(0, self._attempts - 1), seconds=self._elapsed())

    def _seen(self, progress: Progress) -> None:
        self._current = progress
        self._progress(progress)

    def _in_flight(self) -> Usage:
        progress = self._current
        if progress is None:  # refused or unreachable before any answer: nothing was generated
            return Usage()
        request = self._request
        sent = len(request.system) + len(request.history) + len(request.instruction)
        return Usage(input_tokens=estimate_tokens(sent), output_tokens=progress.output_tokens, output_estimated=True)

    def _elapsed(self) -> float:
        return time.monotonic() - self._started
