"""Voters for ``duel verify``'s quorum, backed by the participant's model providers.

A voter is a :class:`~rp1_duel.participant.asking.ModelAsker` (one question to a model,
through the participant's retries) whose failure is an invalid vote. Which voters sit
(docs/protocol.md section 10, "The quorum"): ``--voter MODEL`` (up to three, ``--base-url``
for an OpenAI-compatible server); else one per provider whose key is set (Claude and GPT
with both keys); else none, and the verdicts are mechanical only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from ..verify import VoterError
from .asking import ModelAsker, configured_providers
from .providers import Provider, ProviderError
from .retry import RetryPolicy

__all__ = ["ProviderVoter", "configured_voters"]

MAX_VOTERS: Final = 3
VOTE_DEADLINE_SECONDS: Final = 300.0  # one vote, its retries included
VOTE_MAX_TOKENS: Final = 4000  # the JSON answer and the reasoning current models do first


class ProviderVoter:
    """A :class:`~rp1_duel.verify.quorum.Voter` over a model provider."""

    def __init__(self, provider: Provider, policy: RetryPolicy | None = None):
        self.asker = ModelAsker(
            provider,
            role="a voter",
            cache_key="duel-verify",
            max_tokens=VOTE_MAX_TOKENS,
            deadline_seconds=VOTE_DEADLINE_SECONDS,
            policy=policy,
        )

    @property
    def name(self) -> str:
        """The model's name as ``provider:model``."""
        return self.asker.name

    def preflight(self) -> str:
        """Check the key and the model before any page is fetched (raises ProviderError)."""
        return self.asker.preflight()

    def ask(self, system: str, prompt: str) -> str:
        """The model's raw answer; a provider that gives up raises :class:`VoterError`."""
        try:
            return self.asker.ask(system, prompt)
        except ProviderError as exc:
            raise VoterError(f"{exc.code}: {exc.message}") from None


def configured_voters(
    env: Mapping[str, str], models: Sequence[str] = (), base_url: str | None = None
) -> list[ProviderVoter]:
    """The voters ``--voter`` names, else one per provider with a key, else none."""
    return [
        ProviderVoter(provider)
        for provider in configured_providers(env, models, base_url, flag="--voter", limit=MAX_VOTERS)
    ]
