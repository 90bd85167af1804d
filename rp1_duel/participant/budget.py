"""A seat's money cap, ``duel join --budget-usd`` (docs/protocol.md section 2, "A money cap"): checked
before every model request, so a seat stops before the request that could pass it, never after.

Pure: what the seat has spent comes in as recorded usage, prices from the price table
(:mod:`.usage`). The worst case of a request is its estimated prompt (about four characters a token,
every token at the dearer of the model's input and cache-write prices) and its whole output ceiling.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..coordination import Usage
from ..errors import invalid_argument
from ..vocabulary import ErrorCode
from .providers import ProviderError, TurnRequest
from .usage import cost_usd, estimate_tokens

__all__ = ["budget_stop", "check_priced", "request_ceiling_usd", "worst_case"]

CAP_FLAG = "--budget-usd"


def worst_case(request: TurnRequest) -> Usage:
    """The most ``request`` can use: its estimated prompt and its whole output ceiling."""
    sent = len(request.system) + len(request.history) + len(request.instruction)
    return Usage(input_tokens=estimate_tokens(sent), output_tokens=request.max_tokens, input_estimated=True)


def request_ceiling_usd(model: str, request: TurnRequest, env: Mapping[str, str] = os.environ) -> float | None:
    """What ``request`` can cost at most on ``model``: its prompt priced as fresh input or as a cache write,
    whichever is dearer (Anthropic charges more for a write); None for a model the price table does not know."""
    most = worst_case(request)
    as_written = Usage(cache_write_tokens=most.input_tokens, output_tokens=most.output_tokens)
    costs = [cost_usd(model, most, env), cost_usd(model, as_written, env)]
    return None if None in costs else max(cost for cost in costs if cost is not None)


def budget_stop(
    request: TurnRequest,
    *,
    cap_usd: float,
    spent: Usage,
    model: str,
    number: int,
    env: Mapping[str, str] = os.environ,
) -> ProviderError | None:
    """``BUDGET_EXCEEDED`` when what was ``spent`` and ``request``'s ceiling together could pass the cap (or
    cannot be priced: a cap that cannot be checked is not kept); None when the request may be sent."""
    spent_usd, ceiling_usd = cost_usd(model, spent, env), request_ceiling_usd(model, request, env)
    if spent_usd is None or ceiling_usd is None:
        return ProviderError(ErrorCode.BUDGET_EXCEEDED, f"no price is known for {model}: {CAP_FLAG} cannot be kept")
    if spent_usd + ceiling_usd <= cap_usd:
        return None
    return ProviderError(
        ErrorCode.BUDGET_EXCEEDED,
        f"spent ${spent_usd:.4f} of its ${cap_usd:.4f} cap ({CAP_FLAG}) on {model}; turn {number}'s next "
        f"request could cost up to ${ceiling_usd:.4f} more, so it was not sent",
    )


def check_priced(model: str, cap_usd: float | None, env: Mapping[str, str] = os.environ) -> None:
    """Refuse (``INVALID_ARGUMENT``) a cap on a model the price table does not know: it could not be checked."""
    if cap_usd is not None and cost_usd(model, Usage(), env) is None:
        raise invalid_argument(
            f"{CAP_FLAG} {cap_usd:g}: no price is known for {model}, so the cap cannot be checked; "
            "price it in a file named by $DUEL_PRICES (0 for a free local model)",
            flag=CAP_FLAG,
        )
