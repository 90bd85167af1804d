"""Turns composed by Claude through the Anthropic Messages API, streamed and prompt-cached."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anthropic
import httpx2
from anthropic.types import CacheControlEphemeralParam, TextBlockParam

from ...coordination import Usage
from ...vocabulary import ErrorCode, ReasoningLevel
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
    served_model,
    status_error,
    stream_error,
)

__all__ = ["AnthropicProvider"]

EPHEMERAL: CacheControlEphemeralParam = {"type": "ephemeral"}

# A stream that stays silent this long is dead (the API pings while the model thinks);
# connecting is quick or not at all.
DEFAULT_TIMEOUT = anthropic.Timeout(300.0, connect=10.0)


class AnthropicProvider:
    """Composes turns with Claude through the Anthropic Messages API, streamed and prompt-cached."""

    name = "anthropic"
    remote = True

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str,
        timeout: float | anthropic.Timeout = DEFAULT_TIMEOUT,
        reasoning: ReasoningLevel | None = None,
        max_output_tokens: int | None = None,
    ):
        self.model = model
        self.base_url = base_url
        self.reasoning = reasoning
        self.max_output_tokens = max_output_tokens  # --max-output-tokens, else the request's own ceiling
        # No SDK retries: the participant retries the whole streamed request (participant.retry).
        self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)
        self._history_segments: list[str] = []

    def preflight(self) -> str:
        """Look the model up (GET /v1/models/{model}) before the seat is taken."""
        client = self._client.with_options(timeout=PREFLIGHT_TIMEOUT_SECONDS, max_retries=1)
        try:
            return look_up_model(
                "anthropic",
                kind="anthropic",
                model=self.model,
                retrieve=lambda: client.models.retrieve(self.model),
                list_served=lambda: [model.id for model in client.models.list(limit=1000).data],
                missing=anthropic.NotFoundError,
                refused=anthropic.APIStatusError,
            )
        except (anthropic.AnthropicError, httpx2.TransportError, ValueError) as error:
            raise _translated(error, self.base_url, started=False) from None

    def output_ceiling(self, asked: int) -> int:
        """--max-output-tokens, else what the request asks for: Anthropic requires a ceiling."""
        return self.max_output_tokens or asked

    def compose(self, request: TurnRequest, progress: Callable[[Progress], None]) -> Composition:
        """One turn from a streamed request; ``progress`` hears of the tokens as they arrive."""
        # The stable prefix and the debate so far are both cache breakpoints; the
        # instruction, which changes every time, comes last and is never cached.
        content: list[TextBlockParam] = [{"type": "text", "text": s} for s in self._segment(request.history)]
        if content:
            content[-1]["cache_control"] = EPHEMERAL
        content.append({"type": "text", "text": request.instruction})
        # --reasoning: adaptive thinking at that effort; without it, the model's default.
        thinking: dict[str, Any] = {}
        if self.reasoning is not None:
            thinking = {"thinking": {"type": "adaptive"}, "output_config": {"effort": self.reasoning}}
        reader = _Reader(progress)
        ceiling = self.output_ceiling(request.max_tokens)
        try:
            with self._client.messages.stream(
                model=self.model,
                max_tokens=ceiling,
                system=[{"type": "text", "text": request.system, "cache_control": EPHEMERAL}],
                messages=[{"role": "user", "content": content}],
                **thinking,
            ) as stream:
                message = reader.read(stream)
        except (anthropic.AnthropicError, httpx2.TransportError, ValueError) as error:
            raise _translated(error, self.base_url, started=reader.started) from None

        if message.stop_reason == "max_tokens":
            raise ProviderError(
                ErrorCode.PROVIDER_BAD_RESPONSE,
                f"{self.model} reached max_tokens ({ceiling}) before finishing the turn",
            )
        text = "".join(block.text for block in message.content if block.type == "text")
        if not text.strip():
            raise ProviderError(
                ErrorCode.PROVIDER_BAD_RESPONSE, f"{self.model} returned no text (stop reason: {message.stop_reason})"
            )
        used = message.usage
        usage = Usage(
            input_tokens=used.input_tokens,
            output_tokens=used.output_tokens,
            cache_read_tokens=used.cache_read_input_tokens or 0,
            cache_write_tokens=used.cache_creation_input_tokens or 0,
            requests=1,
        )
        return Composition(text=text, usage=usage, served_model=served_model(message.model))

    def _segment(self, history: str) -> list[str]:
        """Split the history where this provider's previous request ended.

        Anthropic reads a cached prefix only at a content-block boundary that an earlier
        request marked. One growing history block would never match the last one; keeping
        the earlier history as its own blocks lets each turn read the debate from the cache.
        """
        known = "".join(self._history_segments)
        if known and history.startswith(known):
            segments = self._history_segments + ([history[len(known) :]] if len(history) > len(known) else [])
        else:
            segments = [history] if history else []
        self._history_segments = segments
        return segments


def _translated(error: Exception, base_url: str, *, started: bool) -> ProviderError:
    """An SDK or transport error as the participant reports and retries it."""
    if isinstance(error, anthropic.APIStatusError):
        if error.status_code < 400:  # an `error` event in a stream that began with HTTP 200
            return stream_error("anthropic", body=error.body, fallback=str(error))
        return status_error(
            "anthropic",
            status=error.status_code,
            body=error.body,
            fallback=str(error),
            retry_after=retry_after_seconds(error.response.headers),
        )
    if isinstance(error, (anthropic.APIConnectionError, httpx2.TransportError)):
        return connection_error("anthropic", base_url=base_url, error=error, started=started)
    return ProviderError(ErrorCode.PROVIDER_BAD_RESPONSE, f"anthropic sent an unreadable answer: {error}")


class _Reader:
    """Consumes a stream, reporting an estimate as text and thinking arrive, then the API's count."""

    def __init__(self, progress: Callable[[Progress], None]):
        self.progress = progress
        self.started = False  # an event arrived: a failure from here on is a cut, not an unreachable server
        self.characters = 0

    def read(self, stream: anthropic.MessageStream) -> anthropic.types.Message:
        complete = False
        for event in stream:
            self.started = True
            if event.type == "content_block_delta":
                delta = event.delta
                if delta.type == "text_delta":
                    self.characters += len(delta.text)
                    self.progress(estimate(self.characters))
                elif delta.type == "thinking_delta":
                    self.progress(estimate(self.characters, thinking=True))
            elif event.type == "message_delta":
                self.progress(Progress(event.usage.output_tokens, estimated=False))
            elif event.type == "message_stop":
                complete = True
        if not complete:
            raise cut_stream("anthropic")
        return stream.get_final_message()
