"""Voters for ``duel verify``'s quorum, backed by the participant's model providers.

A voter is a provider (:func:`~rp1_duel.participant.providers.select_provider`, the SDK
clients ``duel join`` uses) asked one question through the participant's retries
(:mod:`~rp1_duel.participant.retry`: 429, overload and cut streams are retried after the
server's ``retry-after``). Which voters sit (docs/protocol.md section 10, "The quorum"):
``--voter MODEL`` (up to three, ``--base-url`` for an OpenAI-compatible server); else one
per provider whose key is set (Claude and GPT with both keys); else none, and the
verdicts are mechanical only.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Final

from ..errors import invalid_argument
from ..verify.quorum import VoterError
from .providers import Provider, ProviderError, TurnRequest, select_provider
from .retry import RetryPolicy, compose_with_retries

MAX_VOTERS: Final = 3
VOTE_DEADLINE_SECONDS: Final = 300.0  # one vote, its retries included
VOTE_MAX_TOKENS: Final = 4000  # the JSON answer and the reasoning current models do first
KEYS: Final = (("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY"))


class ProviderVoter:
    """A :class:`~rp1_duel.verify.quorum.Voter` over a model provider."""

    def __init__(self, provider: Provider, policy: RetryPolicy | None = None):
        if not provider.remote:
            raise invalid_argument(f"a voter is a model, not {provider.model!r}")
        self.provider = provider
        # A vote has minutes, not a turn's half hour: leave a retried request 10 s.
        self.policy = policy or RetryPolicy(request_margin_seconds=10.0)

    @property
    def name(self) -> str:
        return f"{self.provider.name}:{self.provider.model}"

    def preflight(self) -> str:
        """Check the key and the model before any page is fetched (raises ProviderError)."""
        return self.provider.preflight()

    def ask(self, system: str, prompt: str) -> str:
        request = TurnRequest(system=system, history="", instruction=prompt, cache_key="duel-verify",
                              max_tokens=VOTE_MAX_TOKENS)
        try:
            composed = compose_with_retries(lambda: self.provider.compose(request, lambda progress: None),
                                            self.policy, time.time() + VOTE_DEADLINE_SECONDS)
        except ProviderError as exc:
            raise VoterError(f"{exc.code}: {exc.message}") from None
        if composed is None:  # the default sleep never stops a retry
            raise VoterError("stopped")
        return composed.text


def configured_voters(env: Mapping[str, str], models: Sequence[str] = (),
                      base_url: str | None = None) -> list[ProviderVoter]:
    """The voters ``--voter`` names, else one per provider with a key, else none."""
    if len(models) > MAX_VOTERS:
        raise invalid_argument(f"--voter may be given at most {MAX_VOTERS} times")
    if models:
        return [ProviderVoter(select_provider(model, None, base_url, env)) for model in models]
    if base_url:
        raise invalid_argument("--base-url needs --voter MODEL: the model that server serves")
    return [ProviderVoter(select_provider(None, kind, None, env)) for kind, key in KEYS if env.get(key)]
