"""Turns composed through Chat Completions: OpenAI, or any OpenAI-compatible server (Ollama, vLLM, llama.cpp)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import openai
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletionMessageParam

from ...coordination import Usage
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
    only_model,
    path_warning,
    retry_after_seconds,
    served_model,
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
        model: str | None,
        *,
        api_key: str,
        base_url: str,
        timeout: float | openai.Timeout = DEFAULT_TIMEOUT,
        reasoning: ReasoningLevel | None = None,
        max_output_tokens: int | None = None,
        own_server: bool = False,
    ):
        # None: the only model the server serves, found by the preflight.
        self.model = model or ""
        self.base_url = base_url
        self.reasoning = reasoning
        self.max_output_tokens = max_output_tokens  # --max-output-tokens, else the request's own ceiling
        # A server the user named (--base-url, $OPENAI_BASE_URL): llama.cpp, llama-cpp-python and Ollama
        # read max_tokens, not max_completion_tokens, and know their own window better than a default.
        self.own_server = own_server
        # No SDK retries: the participant retries the whole streamed request (participant.retry).
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)

    def preflight(self) -> str:
        """Look the model up (GET /models/{model}; vLLM and llama.cpp only list theirs) before the
        seat is taken; without a model, take the server's only one."""
        client = self._client.with_options(timeout=PREFLIGHT_TIMEOUT_SECONDS, max_retries=1)

        def list_served() -> list[str]:
            return [model.id for model in client.models.list().data]

        try:
            if not self.model:
                self.model = only_model(self.base_url, list_served())
                checked = f"{self.model} is the only model {self.base_url} serves"
            else:
                checked = look_up_model(
                    self.base_url,
                    kind="openai",
                    model=self.model,
                    retrieve=lambda: client.models.retrieve(self.model),
                    list_served=list_served,
                    missing=openai.NotFoundError,
                    refused=openai.APIStatusError,
                )
        except (openai.OpenAIError, ValueError) as error:
            raise _translated(error, self.base_url, started=False) from None
        return checked + path_warning(self.model)

    def compose(self, request: TurnRequest, progress: Callable[[Progress], None]) -> Composition:
        """One turn from a streamed request; ``progress`` hears of the tokens as they arrive."""
        # Stable prefix first, then the growing debate, then what changes every time:
        # OpenAI caches the longest prefix it has seen, keyed and routed by prompt_cache_key.
        messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": request.system}]
        if request.history:
            messages.append({"role": "user", "content": request.history})
        messages.append({"role": "user", "content": request.instruction})
        prompt_characters = sum(len(part) for part in (request.system, request.history, request.instruction))
        ceiling = self.output_ceiling(request.max_tokens)
        parts: list[str] = []
        finish_reason = None
        usage: CompletionUsage | None = None
        served: str | None = None  # the model every chunk names; the last one named counts
        started = False  # a chunk arrived: a failure from here on is a cut, not an unreachable server
        characters = 0
        try:
            stream = self._client.chat.completions.create(
                model=self.model,
                messages=messages,
                stream=True,
                stream_options={"include_usage": True},
                prompt_cache_key=request.cache_key,
                reasoning_effort=self.reasoning if self.reasoning is not None else openai.omit,
                max_tokens=ceiling if ceiling is not None and self.own_server else openai.omit,
                max_completion_tokens=ceiling if ceiling is not None and not self.own_server else openai.omit,
            )
            with stream:
                for chunk in stream:
                    started = True
                    served = served_model(chunk.model) or served
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

        if not started:
            # HTTP 200 and not one chunk: llama-cpp-python's answer to a prompt longer than its context.
            # The same request unstreamed gets the server's real error, or the answer itself.
            return self._probe(messages, request, ceiling, prompt_characters)
        if finish_reason is None:
            raise cut_stream(self.base_url)
        used = _usage(usage, prompt_characters, characters)
        return self._composition(
            text="".join(parts), finish_reason=finish_reason, ceiling=ceiling, usage=used, served=served
        )

    def _probe(
        self, messages: list[ChatCompletionMessageParam], request: TurnRequest, ceiling: int | None, prompt: int
    ) -> Composition:
        """The request sent again, not streamed, once: its error says why the stream was empty."""
        # llama-cpp-python breaks the connection its empty stream came on, and the SDK's pool hands it
        # out again: one SDK retry sends the probe on a new connection.
        client = self._client.with_options(max_retries=1)
        try:
            completion = client.chat.completions.create(
                model=self.model,
                messages=messages,
                prompt_cache_key=request.cache_key,
                reasoning_effort=self.reasoning if self.reasoning is not None else openai.omit,
                max_tokens=ceiling if ceiling is not None and self.own_server else openai.omit,
                max_completion_tokens=ceiling if ceiling is not None and not self.own_server else openai.omit,
            )
        except (openai.OpenAIError, ValueError) as error:
            raised = _translated(error, self.base_url, started=False)
            if raised.retryable:  # no reason given: the empty stream was a cut one
                raise cut_stream(self.base_url) from None
            raise raised from None
        if not completion.choices:
            raise cut_stream(self.base_url)
        choice = completion.choices[0]
        text = choice.message.content or ""
        usage = _usage(completion.usage, prompt, len(text))
        return self._composition(
            text=text,
            finish_reason=choice.finish_reason,
            ceiling=ceiling,
            usage=replace(usage, requests=2),
            served=served_model(completion.model),
        )

    def _composition(
        self, text: str, *, finish_reason: str, ceiling: int | None, usage: Usage, served: str | None
    ) -> Composition:
        if finish_reason == "length":
            raise ProviderError(ErrorCode.PROVIDER_BAD_RESPONSE, self._length_reason(ceiling))
        if not text.strip():
            raise ProviderError(
                ErrorCode.PROVIDER_BAD_RESPONSE, f"{self.model} returned no text (finish reason: {finish_reason})"
            )
        return Composition(text=text, usage=usage, served_model=served)

    def output_ceiling(self, asked: int) -> int | None:
        """The output ceiling sent: --max-output-tokens, else on a named server none (its window
        decides), else ``asked``, the request's. A named server gets it as max_tokens, which llama.cpp,
        llama-cpp-python and Ollama read (they ignore max_completion_tokens); OpenAI as max_completion_tokens."""
        if self.max_output_tokens is not None:
            return self.max_output_tokens
        return None if self.own_server else asked

    def _length_reason(self, ceiling: int | None) -> str:
        """What a finish for length means: the ceiling sent, or the context window filled up."""
        window = "give the server a larger context (llama-cpp-python --n_ctx, llama.cpp -c, Ollama num_ctx)"
        if ceiling is None:
            return f"{self.model} stopped before finishing the turn: its context window filled up; {window}"
        if not self.own_server:
            return f"{self.model} reached max_completion_tokens ({ceiling}) before finishing the turn"
        return (
            f"{self.model} stopped before finishing the turn: it reached max_tokens ({ceiling}) or its context "
            f"window filled up; raise --max-output-tokens or {window}"
        )


def _usage(reported: CompletionUsage | None, prompt_characters: int, characters: int) -> Usage:
    """The API's counts (cached input apart); a server that reports none gets estimates, so labelled."""
    if reported is None:
        return Usage(
            input_tokens=estimate_tokens(prompt_characters),
            output_tokens=estimate_tokens(characters),
            requests=1,
            input_estimated=True,
            output_estimated=True,
        )
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
