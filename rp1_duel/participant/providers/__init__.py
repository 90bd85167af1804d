"""Who composes a participant's turns: a model (Anthropic, OpenAI or compatible), a person, or a script.

Every provider answers two calls: ``preflight()``, which checks before the seat is taken
what can be checked without composing (the key, the model's name), and
``compose(request, progress) -> Composition``: the turn's text and what the request used. The SDK-backed
providers are imported only by ``select_provider``: importing ``anthropic`` costs about
1.3 s and ``openai`` about 0.6 s, which the one-shot ``duel tools`` commands must not pay.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from ...errors import DuelError
from ...vocabulary import ErrorCode, ReasoningLevel
from ..usage import Usage, estimate_tokens

# Current mid-tier models (November 2026). claude-sonnet-4-5 reaches end of life on
# 2026-11-30 and gpt-5 is shut down on 2026-12-11, so neither is a safe default.
DEFAULT_MODELS = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-6.1-sol"}

ANTHROPIC_MODEL_PREFIXES = ("claude-",)
OPENAI_MODEL_PREFIXES = ("gpt-", "chatgpt-", "o1", "o3", "o4")

# Sent as the API key to OpenAI-compatible servers that need none (Ollama, vLLM, llama.cpp):
# the SDK refuses to build a client without one.
PLACEHOLDER_API_KEY = "no-key-needed"

MESSAGE_LIMIT = 400

# A model lookup answers at once or the provider is not reachable: never wait a turn's time.
PREFLIGHT_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class TurnRequest:
    """What a provider needs to compose one turn, split so that model APIs can cache it.

    ``system`` is identical across a participant's turns and ``history`` only grows at its
    end, so the stable part of every request is a prefix of the next one.
    """

    system: str
    history: str
    instruction: str
    cache_key: str
    # Room for the turn and for the thinking that current models do first and count as
    # output (Claude 5.5 and GPT-6 reason by default); a ceiling, not a cost.
    max_tokens: int = 16000
    # How many turns this participant has written before this one: a script plays its
    # file of that index, so a resumed or repairing participant never skips a file.
    own_turns_before: int = 0


@dataclass(frozen=True)
class Progress:
    """How far a request has got, as a provider reports it while the answer streams."""

    output_tokens: int = 0
    estimated: bool = True  # counted from the text so far; the API's own count comes at the end
    thinking: bool = False  # the model reasons and writes nothing yet (pings, thinking deltas)


@dataclass(frozen=True)
class Composition:
    """A provider's answer: the turn's text and what its request used."""

    text: str
    usage: Usage = field(default_factory=Usage)


class Provider(Protocol):
    name: str
    model: str
    # A model behind an API: its requests are retried, timed, shown and their usage logged.
    # A person or a script is called once and left alone.
    remote: bool

    def preflight(self) -> str:
        """Check the credentials and the model before joining; return a line saying what was checked.

        Raises :class:`ProviderError` (``PROVIDER_AUTH``, ``PROVIDER_MODEL_NOT_FOUND``,
        ``PROVIDER_UNAVAILABLE``, …), so that a typo never costs the peer a turn.
        """
        ...

    def compose(self, request: TurnRequest, progress: Callable[[Progress], None]) -> Composition:
        """Return the turn's text and usage; report ``progress`` as the answer streams."""
        ...


class ProviderError(DuelError):
    """A provider failure with a stable code and a message that always fits on one line.

    ``retryable``: the same request may succeed later (overload, rate limit, a cut
    stream); ``retry_after``: the seconds the server asked to wait, if it said.
    """

    def __init__(self, code: str, message: str, retryable: bool = False, retry_after: float | None = None):
        one_line = " ".join(message.split())
        if len(one_line) > MESSAGE_LIMIT:
            one_line = one_line[: MESSAGE_LIMIT - 1] + "…"
        super().__init__(code, one_line)
        self.retryable = retryable
        self.retry_after = retry_after

    def given_up(self, attempts: int) -> ProviderError:
        """The error once retries stop at the turn deadline: said so, on one line."""
        return ProviderError(
            self.code,
            f"{self.message} (gave up after {attempts} attempts: the turn deadline leaves no time for another)",
        )


def status_error(
    provider: str, status: int, body: object, fallback: str, retry_after: float | None = None
) -> ProviderError:
    """Translate an error answer of a model API (HTTP status and decoded body) into a ProviderError."""
    detail = _error_detail(body) or fallback
    if status in (401, 403):
        return ProviderError(ErrorCode.PROVIDER_AUTH, f"{provider} refused the credentials (HTTP {status}): {detail}")
    if status == 429:
        return ProviderError(
            ErrorCode.PROVIDER_UNAVAILABLE,
            f"{provider} rate-limited the request (HTTP 429): {detail}",
            retryable=True,
            retry_after=retry_after,
        )
    if status >= 500 or status in (408, 409):
        return ProviderError(
            ErrorCode.PROVIDER_UNAVAILABLE,
            f"{provider} is unavailable (HTTP {status}): {detail}",
            retryable=True,
            retry_after=retry_after,
        )
    return ProviderError(ErrorCode.PROVIDER_REJECTED, f"{provider} rejected the request (HTTP {status}): {detail}")


def stream_error(provider: str, body: object, fallback: str) -> ProviderError:
    """An error event inside a stream that had started well (overload, server fault): retried."""
    kind = body.get("error", body) if isinstance(body, dict) else None
    kind = kind.get("type") if isinstance(kind, dict) else None
    named = f" ({kind})" if isinstance(kind, str) and kind else ""
    return ProviderError(
        ErrorCode.PROVIDER_UNAVAILABLE,
        f"{provider} sent an error in the middle of its answer{named}: {_error_detail(body) or fallback}",
        retryable=True,
    )


def connection_error(provider: str, base_url: str, error: BaseException, started: bool) -> ProviderError:
    """A connection refused, dropped or silent too long: one line, the cause once."""
    cause = str(error.__cause__ or error) or type(error).__name__
    if started:
        return ProviderError(
            ErrorCode.PROVIDER_UNAVAILABLE,
            f"the connection to {provider} dropped in the middle of its answer: {cause}",
            retryable=True,
        )
    where = base_url if provider == base_url else f"{provider} at {base_url}"
    return ProviderError(ErrorCode.PROVIDER_UNAVAILABLE, f"cannot reach {where}: {cause}", retryable=True)


def cut_stream(provider: str) -> ProviderError:
    # What came so far is not a turn: the whole request is sent again.
    return ProviderError(
        ErrorCode.PROVIDER_UNAVAILABLE, f"{provider} closed the stream before the answer was complete", retryable=True
    )


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The server's ``retry-after-ms`` or ``retry-after`` (seconds; an HTTP date is not used), if any."""
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if seconds >= 0:
            return seconds
    return None


def estimate(characters: int, thinking: bool = False) -> Progress:
    """Progress from the characters streamed so far, labelled as an estimate."""
    return Progress(output_tokens=estimate_tokens(characters), thinking=thinking)


def look_up_model(
    server: str,
    model: str,
    retrieve: Callable[[], object],
    list_served: Callable[[], list[str]],
    missing: type[Exception],
    refused: type[Exception],
) -> str:
    """The preflight's model lookup for either SDK: ``retrieve`` the model (GET /models/{id});
    a server without that route is asked for its list; one without either is not refused."""
    try:
        retrieve()
    except missing:
        try:
            served = list_served()
        except refused:
            return f"{model} not checked: {server} has no model lookup"
        if model not in served:
            raise model_not_found(server, model, served) from None
    return f"{model} is served by {server}"


def model_not_found(server: str, model: str, known: Iterable[str]) -> ProviderError:
    """The model is not served: say so, with the served names closest to it."""
    close = difflib.get_close_matches(model, list(known), n=3, cutoff=0.6)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    return ProviderError(ErrorCode.PROVIDER_MODEL_NOT_FOUND, f"{server} has no model {model!r}{hint}: check --model")


def _error_detail(body: object) -> str | None:
    # Anthropic and OpenAI send {"error": {"message": …}}; Ollama sends {"error": "…"};
    # an OpenAI in-stream error carries the inner object itself.
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            inner = inner.get("message")
        if isinstance(inner, str) and inner.strip():
            return inner
    if isinstance(body, str) and body.strip():
        return body
    return None


def select_provider(
    model: str | None,
    provider: str | None,
    base_url: str | None,
    env: Mapping[str, str],
    reasoning: ReasoningLevel | None = None,
) -> Provider:
    """Choose the provider from ``--model``, ``--provider``, ``--base-url`` and the environment."""
    if model == "human":
        from .human import HumanProvider

        return HumanProvider(editor=None, stdin=sys.stdin, stderr=sys.stderr)
    if model is not None and model.startswith("scripted:"):
        from .scripted import ScriptedProvider

        return ScriptedProvider(model.removeprefix("scripted:"))

    kind = provider or _provider_for(model, base_url, env)
    if kind == "anthropic":
        key = _api_key(env, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", model, base_url)
        url = base_url or env.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"
        from .anthropic import AnthropicProvider

        return AnthropicProvider(model or DEFAULT_MODELS["anthropic"], api_key=key, base_url=url, reasoning=reasoning)
    if kind == "openai":
        key = _api_key(env, "OPENAI_API_KEY", "OPENAI_BASE_URL", model, base_url)
        url = base_url or env.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        from .openai import OpenAIProvider

        return OpenAIProvider(model or DEFAULT_MODELS["openai"], api_key=key, base_url=url, reasoning=reasoning)
    raise ProviderError(
        ErrorCode.INVALID_ARGUMENT,
        f"unknown provider {kind!r}: use --provider anthropic or --provider openai "
        "(a person or a script is chosen with --model human or --model scripted:DIR)",
    )


def _provider_for(model: str | None, base_url: str | None, env: Mapping[str, str]) -> str:
    if model is not None:
        if model.startswith(ANTHROPIC_MODEL_PREFIXES):
            return "anthropic"
        if model.startswith(OPENAI_MODEL_PREFIXES):
            return "openai"
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


def _api_key(env: Mapping[str, str], key_name: str, base_url_name: str, model: str | None, base_url: str | None) -> str:
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
