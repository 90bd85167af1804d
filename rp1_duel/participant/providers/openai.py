"""Turns composed through Chat Completions: OpenAI, or any OpenAI-compatible server (Ollama, vLLM, llama.cpp)."""

from __future__ import annotations

from collections.abc import Callable

import openai
from openai.types.chat import ChatCompletionMessageParam

from ...vocabulary import ErrorCode
from . import PREFLIGHT_TIMEOUT_SECONDS, ProviderError, TurnRequest, model_not_found, status_error

# Generous between bytes: a local server may load the model before its first token.
DEFAULT_TIMEOUT = openai.Timeout(600.0, connect=10.0)


class OpenAIProvider:
    name = "openai"

    def __init__(
        self,
        model: str,
        api_key: str,
        base_url: str,
        timeout: float | openai.Timeout = DEFAULT_TIMEOUT,
        max_retries: int = 2,
    ):
        self.model = model
        self.base_url = base_url
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries)

    def preflight(self) -> str:
        """GET /models/{model}. Servers without it (vLLM, llama.cpp) are asked for their model list
        instead; one without either cannot be checked, which is said, not refused."""
        client = self._client.with_options(timeout=PREFLIGHT_TIMEOUT_SECONDS, max_retries=1)
        try:
            try:
                client.models.retrieve(self.model)
            except openai.NotFoundError:
                try:
                    served = [model.id for model in client.models.list().data]
                except openai.APIStatusError:
                    return f"{self.model} not checked: {self.base_url} has no model lookup"
                if self.model not in served:
                    raise model_not_found(self.base_url, self.model, served) from None
        except openai.APIStatusError as error:
            raise status_error(self.base_url, error.status_code, error.body, str(error)) from error
        except openai.APIConnectionError as error:
            raise ProviderError(ErrorCode.PROVIDER_UNAVAILABLE, f"cannot reach {self.base_url}: {error}") from error
        except openai.OpenAIError as error:
            raise ProviderError(
                ErrorCode.PROVIDER_BAD_RESPONSE, f"{self.base_url} sent an unreadable answer: {error}"
            ) from error
        return f"{self.model} is served by {self.base_url}"

    def compose(self, request: TurnRequest, progress: Callable[[int], None]) -> str:
        # Stable prefix first, then the growing debate, then what changes every time:
        # OpenAI caches the longest prefix it has seen, keyed and routed by prompt_cache_key.
        messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": request.system}]
        if request.history:
            messages.append({"role": "user", "content": request.history})
        messages.append({"role": "user", "content": request.instruction})
        parts: list[str] = []
        finish_reason = None
        reported = 0
        try:
            stream = self._client.chat.completions.create(
                model=self.model,
                messages=messages,
                max_completion_tokens=request.max_tokens,
                stream=True,
                stream_options={"include_usage": True},
                prompt_cache_key=request.cache_key,
            )
            with stream:
                for chunk in stream:
                    for choice in chunk.choices:
                        parts.append(choice.delta.content or "")
                        finish_reason = choice.finish_reason or finish_reason
                    if chunk.choices:
                        reported += 1
                        progress(reported)
                    elif chunk.usage is not None and chunk.usage.completion_tokens > reported:
                        reported = chunk.usage.completion_tokens
                        progress(reported)
        except openai.APIStatusError as error:
            # Named by its URL: the server may be OpenAI's or any compatible one.
            raise status_error(self.base_url, error.status_code, error.body, str(error)) from error
        except openai.APIConnectionError as error:
            cause = f" ({error.__cause__})" if error.__cause__ else ""
            raise ProviderError(
                ErrorCode.PROVIDER_UNAVAILABLE, f"cannot reach {self.base_url}: {error}{cause}"
            ) from error
        except (openai.OpenAIError, ValueError) as error:
            raise ProviderError(
                ErrorCode.PROVIDER_BAD_RESPONSE, f"{self.base_url} sent an unreadable answer: {error}"
            ) from error

        if finish_reason is None:
            # The connection closed mid-answer; what came so far is not a turn.
            raise ProviderError(
                ErrorCode.PROVIDER_UNAVAILABLE, f"{self.base_url} closed the stream before the answer was complete"
            )
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
        return text
