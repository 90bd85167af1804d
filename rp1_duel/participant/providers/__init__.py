"""Who composes a participant's turns: a model (Anthropic, OpenAI or compatible), a person, or a script.

Every provider answers two calls: ``preflight()``, which checks before the seat is taken
what can be checked without composing (the key, the model's name), and
``compose(request, progress) -> Composition``: the turn's text and what the request used. The SDK-backed
providers are imported only by ``select_provider``: importing ``anthropic`` costs about
1.3 s and ``openai`` about 0.6 s, which the one-shot ``duel tools`` commands must not pay.
The types they share live in the leaf :mod:`.base` (re-exported here), so no provider
module imports this package back.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from ...vocabulary import ErrorCode, ReasoningLevel
from .base import TURN_MAX_TOKENS as TURN_MAX_TOKENS
from .base import CeilingSent as CeilingSent
from .base import Composition as Composition
from .base import Progress as Progress
from .base import Provider as Provider
from .base import ProviderError as ProviderError
from .base import TurnRequest as TurnRequest
from .base import named_provider
from .base import status_error as status_error

__all__ = [
    "TURN_MAX_TOKENS",
    "CeilingSent",
    "Composition",
    "Progress",
    "Provider",
    "ProviderError",
    "TurnRequest",
    "select_provider",
    "status_error",
]

# Current mid-tier models (November 2026). claude-sonnet-4-5 reaches end of life on
# 2026-11-30 and gpt-5 is shut down on 2026-12-11, so neither is a safe default.
DEFAULT_MODELS = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-6.1-sol"}

OPENAI_URL = "https://api.openai.com/v1"

# Sent as the API key to OpenAI-compatible servers that need none (Ollama, vLLM, llama.cpp):
# the SDK refuses to build a client without one.
PLACEHOLDER_API_KEY = "no-key-needed"


def select_provider(
    model: str | None,
    *,
    provider: str | None,
    base_url: str | None,
    env: Mapping[str, str],
    reasoning: ReasoningLevel | None = None,
    max_output_tokens: int | None = None,
) -> Provider:
    """Choose the provider from ``--model``, ``--provider``, ``--base-url`` and the environment.

    ``max_output_tokens`` (--max-output-tokens) is every request's output ceiling; without it, a
    request's own (16,000 for a turn), except on a server named by a base URL, which is sent none.
    """
    if model == "human":
        from .human import HumanProvider

        return HumanProvider(editor=None, stdin=sys.stdin, stderr=sys.stderr)
    if model is not None and model.startswith("scripted:"):
        from .scripted import ScriptedProvider

        return ScriptedProvider(model.removeprefix("scripted:"))

    kind = provider or _provider_for(model, base_url, env)
    if kind == "anthropic":
        key = _api_key(
            env=env, key_name="ANTHROPIC_API_KEY", base_url_name="ANTHROPIC_BASE_URL", model=model, base_url=base_url
        )
        url = base_url or env.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"
        from .anthropic import AnthropicProvider

        return AnthropicProvider(
            model or DEFAULT_MODELS["anthropic"],
            api_key=key,
            base_url=url,
            reasoning=reasoning,
            max_output_tokens=max_output_tokens,
        )
    if kind == "openai":
        key = _api_key(
            env=env, key_name="OPENAI_API_KEY", base_url_name="OPENAI_BASE_URL", model=model, base_url=base_url
        )
        url = base_url or env.get("OPENAI_BASE_URL") or OPENAI_URL
        from .openai import OpenAIProvider

        return OpenAIProvider(
            # --base-url without --model: the server's only model (preflight), not one of OpenAI's.
            model or (None if base_url else DEFAULT_MODELS["openai"]),
            api_key=key,
            base_url=url,
            reasoning=reasoning,
            max_output_tokens=max_output_tokens,
            own_server=url != OPENAI_URL,
        )
    raise ProviderError(
        ErrorCode.INVALID_ARGUMENT,
        f"unknown provider {kind!r}: use --provider anthropic or --provider openai "
        "(a person or a script is chosen with --model human or --model scripted:DIR)",
    )


def _provider_for(model: str | None, base_url: str | None, env: Mapping[str, str]) -> str:
    if model is not None:
        named = named_provider(model)
        if named is not None:
            return named
        # Any other name (llama3.1, qwen3…) is a model of an OpenAI-compatible server.
        if base_url or env.get("OPENAI_BASE_URL"):
            return "openai"
        raise ProviderError(
            "INVALID_ARGUMENT",
            f"cannot tell which provider serves model {model!r}: pass --provider anthropic|openai, "
            "or --base-url for an OpenAI-compatible server",
        )
    if base_url:
        return "openai"
    if env.get("ANTHROPIC_API_KEY"):
        return "anthropic"
    if env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL"):
        return "openai"
    raise _no_credentials("no model provider is configured")


def _api_key(
    env: Mapping[str, str], *, key_name: str, base_url_name: str, model: str | None, base_url: str | None
) -> str:
    """The API key from the environment, or a placeholder for a server the user named, which may need none."""
    if env.get(key_name):
        return env[key_name]
    if base_url or env.get(base_url_name):
        return PLACEHOLDER_API_KEY
    raise _no_credentials(f"{model or 'this provider'} needs {key_name}, which is not set")


def _no_credentials(reason: str) -> ProviderError:
    return ProviderError(
        ErrorCode.PROVIDER_NO_CREDENTIALS,
        f"{reason}: set ANTHROPIC_API_KEY or OPENAI_API_KEY, use --base-url for an OpenAI-compatible "
        "server, or let a person or a script write the turns with --model human or --model scripted:DIR",
    )
