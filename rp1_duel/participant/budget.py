"""A seat's money cap, ``duel join --budget-usd`` (docs/protocol.md section 2, "A money cap"): checked
before every model request, so a seat stops before the request that could pass it, never after.

Pure: what the seat has spent comes in as recorded usage, prices from the price table
(:mod:`.usage`). The worst case of a request is its estimated prompt (about four characters a token,
every token at the dearer of the model's input and cache-write prices) and the whole output ceiling its
provider sends.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..coordination import Usage
from ..errors import invalid_argument
from ..vocabulary import ErrorCode
from .providers import CeilingSent, Provider, ProviderError, TurnRequest
from .usage import cost_usd, estimate_tokens

__all__ = ["budget_stop", "check_capped", "request_ceiling_usd", "sent_ceiling", "worst_case"]

CAP_FLAG = "--budget-usd"
UNBOUNDED = "is sent no output ceiling (its server's window decides), so a request's cost has no bound"


def sent_ceiling(provider: Provider, asked: int) -> int | None:
    """The output ceiling ``provider`` sends with a request asking for ``asked`` tokens; None: none is sent."""
    return provider.output_ceiling(asked) if isinstance(provider, CeilingSent) else asked


def worst_case(request: TurnRequest, ceiling: int) -> Usage:
    """The most ``request`` can use: its estimated prompt, and an answer as long as the ``ceiling`` sent."""
    sent = len(request.system) + len(request.history) + len(request.instruction)
    return Usage(input_tokens=estimate_tokens(sent), output_tokens=ceiling, input_estimated=True)


def request_ceiling_usd(
    model: str, request: TurnRequest, ceiling: int | None, env: Mapping[str, str] = os.environ
) -> float | None:
    """What ``request`` can cost at most on ``model``: its prompt priced as fresh input or as a cache write,
    whichever is dearer (Anthropic charges more for a write), its output at the ``ceiling`` sent. None when it
    has no bound: the price table does not know the model, or no ceiling is sent and output is not free."""
    if ceiling is None and _output_priced(model, env):
        return None
    most = worst_case(request, ceiling or 0)
    as_written = Usage(cache_write_tokens=most.input_tokens, output_tokens=most.output_tokens)
    costs = [cost_usd(model, most, env), cost_usd(model, as_written, env)]
    return None if None in costs else max(cost for cost in costs if cost is not None)


def budget_stop(
    request: TurnRequest,
    *,
    cap_usd: float,
    spent: Usage,
    model: str,
    ceiling: int | None,
    number: int,
    env: Mapping[str, str] = os.environ,
) -> ProviderError | None:
    """``BUDGET_EXCEEDED`` when what was ``spent`` and ``request``'s worst case together could pass the cap (or
    have no bound: a cap that cannot be checked is not kept); None when the request may be sent."""
    spent_usd, ceiling_usd = cost_usd(model, spent, env), request_ceiling_usd(model, request, ceiling, env)
    if spent_usd is None or ceiling_usd is None:
        return ProviderError(ErrorCode.BUDGET_EXCEEDED, f"{_unbounded(model, env)}: {CAP_FLAG} cannot be kept")
    if spent_usd + ceiling_usd <= cap_usd:
        return None
    return ProviderError(
        ErrorCode.BUDGET_EXCEEDED,
        f"spent ${spent_usd:.4f} of its ${cap_usd:.4f} cap ({CAP_FLAG}) on {model}; turn {number}'s next "
        f"request could cost up to ${ceiling_usd:.4f} more, so it was not sent",
    )


def check_capped(model: str, cap_usd: float | None, ceiling: int | None, env: Mapping[str, str] = os.environ) -> None:
    """Refuse (``INVALID_ARGUMENT``) a cap whose requests have no cost bound, before the seat is taken: a model
    the price table does not know, or one sent no output ceiling whose output is priced."""
    if cap_usd is None:
        return
    if cost_usd(model, Usage(), env) is None:
        raise invalid_argument(
            f"{CAP_FLAG} {cap_usd:g}: no price is known for {model}, so the cap cannot be checked; "
            "price it in a file named by $DUEL_PRICES (0 for a free local model)",
            flag=CAP_FLAG,
        )
    if ceiling is None and _output_priced(model, env):
        raise invalid_argument(f"{CAP_FLAG} {cap_usd:g}: {model} {UNBOUNDED}; give --max-output-tokens", flag=CAP_FLAG)


def _output_priced(model: str, env: Mapping[str, str]) -> bool:
    return bool(cost_usd(model, Usage(output_tokens=1_000_000), env))


def _unbounded(model: str, env: Mapping[str, str]) -> str:
    """Why a request has no cost bound: an unknown price, else no output ceiling sent (request_ceiling_usd)."""
    return f"no price is known for {model}" if cost_usd(model, Usage(), env) is None else f"{model} {UNBOUNDED}"
