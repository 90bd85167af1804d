"""What every provider shares: the request, its progress and answer, the :class:`Provider`
protocol, :class:`ProviderError` and the helpers that turn an API's failures into one.

A leaf of :mod:`rp1_duel.participant.providers`: the provider modules import it, and the
package imports them back only in ``select_provider``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ...coordination import Usage
from ...errors import DuelError
from ...printable import printable
from ...vocabulary import ErrorCode, ReasoningLevel
from ..usage import estimate_tokens

__all__ = [
    "PREFLIGHT_TIMEOUT_SECONDS",
    "TURN_MAX_TOKENS",
    "CeilingSent",
    "Composition",
    "Progress",
    "Provider",
    "ProviderError",
    "TurnRequest",
    "connection_error",
    "context_exceeded",
    "cut_stream",
    "estimate",
    "look_up_model",
    "named_provider",
    "only_model",
    "path_warning",
    "retry_after_seconds",
    "served_model",
    "status_error",
    "stream_error",
]

MESSAGE_LIMIT = 400
MODEL_ID_LIMIT = 200  # a served model's id as logged: longer is no model's name, and is cut

# Room for a turn and for the thinking that current models do first and count as output (Claude 5.5 and
# GPT-6 reason by default); a ceiling, not a cost.
TURN_MAX_TOKENS = 16000

# A model lookup answers at once or the provider is not reachable: never wait a turn's time.
PREFLIGHT_TIMEOUT_SECONDS = 10.0


@dataclass(kw_only=True, frozen=True)
class TurnRequest:
    """What a provider needs to compose one turn, split so that model APIs can cache it.

    ``system`` is identical across a participant's turns and ``history`` only grows at its
    end, so the stable part of every request is a prefix of the next one.
    """

    system: str
    history: str
    instruction: str
    cache_key: str
    max_tokens: int = TURN_MAX_TOKENS
    # How many turns this participant has written before this one: a script plays its
    # file of that index, so a resumed or repairing participant never skips a file.
    own_turns_before: int = 0
    # The heading line the turn must begin with (a STANCE to fill in); None for a request that is no turn.
    heading: str | None = None
    # For a person only (a model has it all in ``history``): the turns to answer, the edits in force as a
    # diff, the console's warnings and the deadline, shown as notes above the draft the editor opens.
    briefing: str = ""
    # An owner-only file where a person's draft of this turn is kept while written and after an abort or
    # a stop, so the same command run again reopens it; None: nothing outlives the request.
    draft_path: str | None = None


@dataclass(frozen=True)
class Progress:
    """How far a request has got, as a provider reports it while the answer streams."""

    output_tokens: int = 0
    estimated: bool = True  # counted from the text so far; the API's own count comes at the end
    thinking: bool = False  # the model reasons and writes nothing yet (pings, thinking deltas)


@dataclass(kw_only=True, frozen=True)
class Composition:
    """A provider's answer: the turn's text, what its request used, and the model the API says answered."""

    text: str
    usage: Usage = field(default_factory=Usage)
    served_model: str | None = None  # None: the API did not say (or no API: a person, a script)
    origin: str | None = None  # where the text came from when it is a file (a script's): named when it breaks a rule


class Provider(Protocol):
    """Who composes a participant's turns: a model behind an API, a person or a script."""

    name: str
    model: str
    reasoning: ReasoningLevel | None  # --reasoning; None: the model's default (or no model)
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


@runtime_checkable
class CeilingSent(Protocol):
    """A provider whose requests' output ceiling is its own (the model APIs': --max-output-tokens, or none on a
    server whose window decides), as ``duel join --budget-usd`` prices a request; any other sends what is asked."""

    def output_ceiling(self, asked: int) -> int | None:
        """The output ceiling a request asking for ``asked`` tokens is sent with; None: none is sent."""
        ...


class ProviderError(DuelError):
    """A provider failure with a stable code and a message that always fits on one line.

    ``retryable``: the same request may succeed later (overload, rate limit, a cut
    stream); ``retry_after``: the seconds the server asked to wait, if it said.
    """

    def __init__(self, code: str, message: str, *, retryable: bool = False, retry_after: float | None = None):
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
    provider: str, *, status: int, body: object, fallback: str, retry_after: float | None = None
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
    if status in (400, 413) and _names_the_context(body, detail):
        return context_exceeded(provider, f"HTTP {status}: {detail}")
    return ProviderError(ErrorCode.PROVIDER_REJECTED, f"{provider} rejected the request (HTTP {status}): {detail}")


# How servers name a prompt too long for the context window: OpenAI's and llama-cpp-python's code,
# llama.cpp's type, and the words of their messages (vLLM, Ollama say it in words only).
_CONTEXT_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
_CONTEXT_WORDS = re.compile(r"context (length|size|window)|exceeds? (the )?(available )?context", re.IGNORECASE)


def _names_the_context(body: object, detail: str) -> bool:
    inner = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(inner, dict) and (inner.get("code") in _CONTEXT_CODES or inner.get("type") in _CONTEXT_CODES):
        return True
    return bool(_CONTEXT_WORDS.search(detail))


def context_exceeded(provider: str, detail: str) -> ProviderError:
    """The prompt and the answer do not fit the model's context window: no retry helps, a larger context does."""
    return ProviderError(
        ErrorCode.PROVIDER_CONTEXT_EXCEEDED,
        f"{provider} cannot fit the request in the model's context window ({detail}): give the server a larger "
        "context (llama-cpp-python --n_ctx, llama.cpp -c, Ollama num_ctx) or use a model with a longer one",
    )


def stream_error(provider: str, *, body: object, fallback: str) -> ProviderError:
    """An error event inside a stream that had started well (overload, server fault): retried."""
    kind = body.get("error", body) if isinstance(body, dict) else None
    kind = kind.get("type") if isinstance(kind, dict) else None
    named = f" ({kind})" if isinstance(kind, str) and kind else ""
    return ProviderError(
        ErrorCode.PROVIDER_UNAVAILABLE,
        f"{provider} sent an error in the middle of its answer{named}: {_error_detail(body) or fallback}",
        retryable=True,
    )


def connection_error(provider: str, *, base_url: str, error: BaseException, started: bool) -> ProviderError:
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
    """A stream that ended before the answer was complete: retried."""
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


def served_model(reported: object) -> str | None:
    """The model id an API's answer names, as it is logged: one printable line, cut at 200 characters;
    None when it names none (an empty id, as some local servers send)."""
    if not isinstance(reported, str) or not reported.strip():
        return None
    line = printable(" ".join(reported.split()))
    return line if len(line) <= MODEL_ID_LIMIT else line[: MODEL_ID_LIMIT - 1] + "…"


def estimate(characters: int, *, thinking: bool = False) -> Progress:
    """Progress from the characters streamed so far, labelled as an estimate."""
    return Progress(output_tokens=estimate_tokens(characters), thinking=thinking)


ANTHROPIC_MODEL_PREFIXES = ("claude-",)
OPENAI_MODEL_PREFIXES = ("gpt-", "chatgpt-", "o1", "o3", "o4")
_PROVIDER_NAMES = {"anthropic": "Anthropic", "openai": "OpenAI"}


def named_provider(model: str) -> str | None:
    """The provider a model's name points to by its prefix (``claude-``: anthropic); None for any other name."""
    if model.startswith(ANTHROPIC_MODEL_PREFIXES):
        return "anthropic"
    if model.startswith(OPENAI_MODEL_PREFIXES):
        return "openai"
    return None


def look_up_model(
    server: str,
    *,
    kind: str,
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
            raise model_not_found(server, model, served, kind=kind) from None
    return f"{model} is served by {server}"


def only_model(server: str, served: list[str]) -> str:
    """The model of a server asked for none: its only one, else an error listing what it serves."""
    if len(served) == 1:
        return served[0]
    listed = ", ".join(served[:10]) + (f" and {len(served) - 10} more" if len(served) > 10 else "")
    which = f"serves {len(served)} models ({listed})" if served else "lists no model"
    raise ProviderError(ErrorCode.PROVIDER_MODEL_NOT_FOUND, f"{server} {which}: choose one with --model")


# A model id that names a file: llama-cpp-python serves a GGUF under its path unless given an alias.
_FILE_PATH = re.compile(r"^(~|\.{1,2})?[/\\]|^[A-Za-z]:[/\\]|\.gguf$", re.IGNORECASE)


def path_warning(model: str) -> str:
    """A note for a model id that is a local file path, which the artifact records as it is; else nothing."""
    if not _FILE_PATH.search(model):
        return ""
    return (
        "; note: this model id is a local file path and is recorded as it is in the duel's artifact, "
        "which may be committed: serve the model under a name (llama-cpp-python --model_alias NAME, "
        "llama.cpp --alias NAME) and pass --model NAME"
    )


def model_not_found(server: str, model: str, known: Iterable[str], *, kind: str) -> ProviderError:
    """The model is not served: say so, with the served names closest to it, or, for a name of the
    other provider's (``--provider`` or ``--base-url`` sent it here), where it belongs."""
    close = difflib.get_close_matches(model, list(known), n=3, cutoff=0.6)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    fix = "check --model"
    belongs = named_provider(model)
    if belongs is not None and belongs != kind:
        fix = f"it is named like an {_PROVIDER_NAMES[belongs]} model: pass --provider {belongs}, or check --model"
    return ProviderError(ErrorCode.PROVIDER_MODEL_NOT_FOUND, f"{server} has no model {model!r}{hint}: {fix}")


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
