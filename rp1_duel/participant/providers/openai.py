"""Turns composed through Chat Completions: OpenAI, or any OpenAI-compatible server (Ollama, vLLM, llama.cpp)."""

from __future__ import annotations

from collections.abc import Callable

import openai
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletionMessageParam

from ...coordination.counts import Usage
from ...vocabulary import ErrorCode, ReasoningLevel
from ..usage import estimate_tokens
from .base import (
    PREFLIGHT_TIMEOUT_SECONDS,
    Composition,
    Progress,
    ProviderError,
    TurnRequest,
    connection_error,
    cut_stream,
    estimate,
    look_up_model,
    retry_after_seconds,
    status_error,
    stream_error,
)

# Generous between bytes: a local server may load the model before its first token.
__all__ = ["OpenAIProvider"]

DEFAULT_TIMEOUT = openai.Timeout(600.0, connect=10.0)


class OpenAIProvider:
    """Composes turns through Chat Completions: OpenAI, or any OpenAI-compatible server."""

    name = "openai"
    remote = True

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str,
        timeout: float | openai.Timeout = DEFAULT_TIMEOUT,
        reasoning: ReasoningLevel | None = None,
    ):
        self.model = model
        self.base_url = base_url
        self.reasoning = reasoning
        # No SDK retries: the participant retries the whole streamed request (participant.retry).
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)

    def preflight(self) -> str:
        """Look the model up (GET /models/{model}; vLLM and llama.cpp only list theirs) before the
        seat is taken."""
        client = self._client.with_options(timeout=PREFLIGHT_TIMEOUT_SECONDS, max_retries=1)
        try:
            return look_up_model(
                self.base_url,
                model=self.model,
                retrieve=lambda: client.models.retrieve(self.model),
                list_served=lambda: [model.id for model in client.models.list().data],
                missing=openai.NotFoundError,
                refused=openai.APIStatusError,
            )
        except (openai.OpenAIError, ValueError) as error:
            raise _translated(error, self.base_url, started=False) from None

    def compose(self, request: TurnRequest, progress: Callable[[Progress], None]) -> Composition:
        """One turn from a streamed request; ``progress`` hears of the tokens as they arrive."""
        # Stable prefix first, then the growing debate, then what changes every time:
        # OpenAI caches the longest prefix it has seen, keyed and routed by prompt_cache_key.
        messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": request.system}]
        if request.history:
            messages.append({"role": "user", "content": request.history})
        messages.append({"role": "user", "content": request.instruction})
        parts: list[str] = []
        finish_reason = None
        usage: CompletionUsage | None = None
        started = False  # a chunk arrived: a failure from here on is a cut, not an unreachable server
        characters = 0
        try:
            stream = self._client.chat.completions.create(
                model=self.model,
                messages=messages,
                max_completion_tokens=request.max_tokens,
                stream=True,
                stream_options={"include_usage": True},
                prompt_cache_key=request.cache_key,
                reasoning_effort=self.reasoning if self.reasoning is not None else openai.omit,
            )
            with stream:
                for chunk in stream:
                    started = True
                    for choice in chunk.choices:
                        piece = choice.delta.content or ""
                        parts.append(piece)
                        characters += len(piece)
                        finish_reason = choice.finish_reason or finish_reason
                    if chunk.choices:
                        progress(estimate(characters))
                    if chunk.usage is not None:
                        usage = chunk.usage
                        progress(Progress(usage.completion_tokens, estimated=False))
        except (openai.OpenAIError, ValueError) as error:
            raise _translated(error, self.base_url, started=started) from None

        if finish_reason is None:
            raise cut_stream(self.base_url)
        if finish_reason == "length":
            raise ProviderError(
                ErrorCode.PROVIDER_BAD_RESPONSE,
                f"{self.model} reached max_completion_tokens ({request.max_tokens}) before finishing the turn",
            )
        text = "".join(parts)
        if not text.strip():
            raise ProviderError(
                ErrorCode.PROVIDER_BAD_RESPONSE, f"{self.model} returned no text (finish reason: {finish_reason})"
            )
        return Composition(text, _usage(usage, characters))


def _usage(reported: CompletionUsage | None, characters: int) -> Usage:
    """The API's counts (cached input apart); a server that reports none gets an estimate, so labelled."""
    if reported is None:
        return Usage(output_tokens=estimate_tokens(characters), requests=1, output_estimated=True)
    details = reported.prompt_tokens_details
    cached = (details.cached_tokens or 0) if details is not None else 0
    return Usage(
        input_tokens=reported.prompt_tokens - cached,
        output_tokens=reported.completion_tokens,
        cache_read_tokens=cached,
        requests=1,
    )


def _translated(error: Exception, base_url: str, *, started: bool) -> ProviderError:
    """An SDK error as the participant reports and retries it; the server is named by its URL,
    for it may be OpenAI's or any compatible one."""
    if isinstance(error, openai.APIStatusError):
        return status_error(
            base_url,
            status=error.status_code,
            body=error.body,
            fallback=str(error),
            retry_after=retry_after_seconds(error.response.headers),
        )
    if isinstance(error, openai.APIConnectionError):
        return connection_error(base_url, base_url=base_url, error=error, started=started)
    if isinstance(error, openai.APIError):  # an error chunk in a stream that began with HTTP 200
        return stream_error(base_url, body=error.body, fallback=error.message)
    return ProviderError(ErrorCode.PROVIDER_BAD_RESPONSE, f"{base_url} sent an unreadable answer: {error}")
