"""Turns composed by Claude through the Anthropic Messages API, streamed and prompt-cached."""

from __future__ import annotations

from collections.abc import Callable

import anthropic
import httpx2
from anthropic.types import CacheControlEphemeralParam, TextBlockParam

from ...vocabulary import ErrorCode
from . import PREFLIGHT_TIMEOUT_SECONDS, ProviderError, TurnRequest, model_not_found, status_error

EPHEMERAL: CacheControlEphemeralParam = {"type": "ephemeral"}

# A stream that stays silent this long is dead (the API pings while the model thinks);
# connecting is quick or not at all.
DEFAULT_TIMEOUT = anthropic.Timeout(300.0, connect=10.0)


class AnthropicProvider:
    name = "anthropic"

    def __init__(
        self,
        model: str,
        api_key: str,
        base_url: str,
        timeout: float | anthropic.Timeout = DEFAULT_TIMEOUT,
        max_retries: int = 2,
    ):
        self.model = model
        self.base_url = base_url
        self._client = anthropic.Anthropic(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )
        self._history_segments: list[str] = []

    def preflight(self) -> str:
        """GET /v1/models/{model}; a server without it (a proxy) is asked for its model list instead."""
        client = self._client.with_options(timeout=PREFLIGHT_TIMEOUT_SECONDS, max_retries=1)
        try:
            try:
                client.models.retrieve(self.model)
            except anthropic.NotFoundError:
                try:
                    served = [model.id for model in client.models.list(limit=1000).data]
                except anthropic.APIStatusError:
                    return f"{self.model} not checked: {self.base_url} has no model lookup"
                if self.model not in served:
                    raise model_not_found("anthropic", self.model, served) from None
        except anthropic.APIStatusError as error:
            raise status_error("anthropic", error.status_code, error.body, str(error)) from error
        except (anthropic.APIConnectionError, httpx2.TransportError) as error:
            raise ProviderError(
                ErrorCode.PROVIDER_UNAVAILABLE, f"cannot reach anthropic at {self.base_url}: {error}"
            ) from error
        except anthropic.AnthropicError as error:
            raise ProviderError(ErrorCode.PROVIDER_BAD_RESPONSE, f"anthropic sent an unreadable answer: {error}") from error
        return f"{self.model} is served by anthropic"

    def compose(self, request: TurnRequest, progress: Callable[[int], None]) -> str:
        # The stable prefix and the debate so far are both cache breakpoints; the
        # instruction, which changes every time, comes last and is never cached.
        content: list[TextBlockParam] = [{"type": "text", "text": s} for s in self._segment(request.history)]
        if content:
            content[-1]["cache_control"] = EPHEMERAL
        content.append({"type": "text", "text": request.instruction})
        try:
            with self._client.messages.stream(
                model=self.model,
                max_tokens=request.max_tokens,
                system=[{"type": "text", "text": request.system, "cache_control": EPHEMERAL}],
                messages=[{"role": "user", "content": content}],
            ) as stream:
                message = _read(stream, progress)
        except anthropic.APIStatusError as error:
            raise status_error("anthropic", error.status_code, error.body, str(error)) from error
        except (anthropic.APIConnectionError, httpx2.TransportError) as error:
            cause = f" ({error.__cause__})" if error.__cause__ else ""
            raise ProviderError(
                ErrorCode.PROVIDER_UNAVAILABLE, f"cannot reach anthropic at {self.base_url}: {error}{cause}"
            ) from error
        except (anthropic.AnthropicError, ValueError) as error:
            raise ProviderError(ErrorCode.PROVIDER_BAD_RESPONSE, f"anthropic sent an unreadable answer: {error}") from error

        if message.stop_reason == "max_tokens":
            raise ProviderError(
                ErrorCode.PROVIDER_BAD_RESPONSE,
                f"{self.model} reached max_tokens ({request.max_tokens}) before finishing the turn",
            )
        text = "".join(block.text for block in message.content if block.type == "text")
        if not text.strip():
            raise ProviderError(
                ErrorCode.PROVIDER_BAD_RESPONSE, f"{self.model} returned no text (stop reason: {message.stop_reason})"
            )
        return text

    def _segment(self, history: str) -> list[str]:
        """Split the history where this provider's previous request ended.

        Anthropic reads a cached prefix only at a content-block boundary that an earlier
        request marked. One growing history block would never match the last one; keeping
        the earlier history as its own blocks lets each turn read the debate from the cache.
        """
        known = "".join(self._history_segments)
        if known and history.startswith(known):
            segments = self._history_segments + ([history[len(known):]] if len(history) > len(known) else [])
        else:
            segments = [history] if history else []
        self._history_segments = segments
        return segments


def _read(stream: anthropic.MessageStream, progress: Callable[[int], None]) -> anthropic.types.Message:
    """Consume the stream, reporting output chunks, then the token count once usage arrives."""
    reported = 0
    complete = False
    for event in stream:
        if event.type == "content_block_delta":  # text, and thinking: both are the model at work
            reported += 1
            progress(reported)
        elif event.type == "message_delta" and event.usage.output_tokens > reported:
            reported = event.usage.output_tokens
            progress(reported)
        elif event.type == "message_stop":
            complete = True
    if not complete:
        # The connection closed mid-answer; what came so far is not a turn.
        raise ProviderError(ErrorCode.PROVIDER_UNAVAILABLE, "anthropic closed the stream before the answer was complete")
    return stream.get_final_message()
