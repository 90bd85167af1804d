"""One question to a model: a provider asked once, through the participant's retries.

``duel verify``'s voters and ``duel report --assess``'s assessors are both a
:class:`ModelAsker`: a provider (:func:`~rp1_duel.participant.providers.select_provider`,
the SDK clients ``duel join`` uses) asked one system brief and one prompt, its failures
retried as a turn's are (:mod:`~rp1_duel.participant.retry`: 429, overload and cut streams
after the server's ``retry-after``) within a deadline of its own. Which models are asked:
:func:`configured_providers`, the models a flag names, else one per provider whose key is set.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Final

from ..errors import invalid_argument
from ..vocabulary import ErrorCode
from .providers import Provider, ProviderError, TurnRequest, select_provider
from .retry import RetryPolicy, compose_with_retries

# The providers asked by default, in order, when their key is set: Claude and GPT with both keys.
__all__ = ["ModelAsker", "configured_providers"]

KEYS: Final = (("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY"))


class ModelAsker:
    """A model behind a provider, asked one question at a time (from any thread)."""

    def __init__(
        self,
        provider: Provider,
        *,
        role: str,
        cache_key: str,
        max_tokens: int,
        deadline_seconds: float,
        policy: RetryPolicy | None = None,
    ):
        if not provider.remote:
            raise invalid_argument(f"{role} is a model, not {provider.model!r}")
        self.provider = provider
        self.cache_key = cache_key
        self.max_tokens = max_tokens
        self.deadline_seconds = deadline_seconds
        # A question has minutes, not a turn's half hour: leave a retried request 10 s.
        self.policy = policy or RetryPolicy(request_margin_seconds=10.0)

    @property
    def name(self) -> str:
        """The model's name as ``provider:model``."""
        return f"{self.provider.name}:{self.provider.model}"

    def preflight(self) -> str:
        """Check the key and the model before anything is asked (raises ProviderError)."""
        return self.provider.preflight()

    def ask(self, system: str, prompt: str) -> str:
        """The model's raw answer; raises :class:`ProviderError` once retries give up."""
        request = TurnRequest(
            system=system, history="", instruction=prompt, cache_key=self.cache_key, max_tokens=self.max_tokens
        )
        composed = compose_with_retries(
            lambda: self.provider.compose(request, lambda _progress: None),
            self.policy,
            time.time() + self.deadline_seconds,
        )
        if composed is None:  # the default sleep never stops a retry
            raise ProviderError(ErrorCode.INTERRUPTED, "stopped")
        return composed.text


def configured_providers(
    env: Mapping[str, str], models: Sequence[str], base_url: str | None, *, flag: str, limit: int
) -> list[Provider]:
    """The models ``flag`` names (at most ``limit``), else one per provider whose key is set, else none."""
    if len(models) > limit:
        raise invalid_argument(f"{flag} may be given at most {limit} times")
    if models:
        return [select_provider(model, provider=None, base_url=base_url, env=env) for model in models]
    if base_url:
        raise invalid_argument(f"--base-url needs {flag} MODEL: the model that server serves")
    return [select_provider(None, provider=kind, base_url=None, env=env) for kind, key in KEYS if env.get(key)]
