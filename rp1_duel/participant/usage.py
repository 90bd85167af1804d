"""What a participant's model requests used, summed from its ``usage`` events, and its estimated cost.

The counts are a :class:`~rp1_duel.coordination.counts.Usage`, from the provider to the event
to the report; its JSON is written only where the log is and where ``--json`` prints it.

Prices live in one data file with its date (``providers/prices.json``, package data); a
user's own file of the same shape, named by ``$DUEL_PRICES``, replaces it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..coordination import Usage
from ..errors import invalid_argument

if TYPE_CHECKING:
    from ..coordination import Event

__all__ = [
    "TOKEN_KINDS",
    "PricedUsage",
    "cost_usd",
    "estimate_tokens",
    "prices_date",
    "recorded",
    "summary",
    "total",
]

PRICES_ENV = "DUEL_PRICES"
TOKEN_KINDS = ("input", "output", "cache_read", "cache_write")


class PricedUsage(NamedTuple):  # not a frozen dataclass: `duel tools status` would pay for building one
    """Usage as ``--json``, ``duel tools status`` and the report show it: the counts, an estimated
    cost (None for a model the price table does not know) and its prices' date."""

    usage: Usage
    cost_usd: float | None
    prices_date: str | None

    def to_json(self) -> dict[str, Any]:
        """The counts, the cost and the prices' date, as ``--json`` and the report write them."""
        return {**self.usage.to_json(), "cost_usd": self.cost_usd, "prices_date": self.prices_date}


def total(usages: Iterable[Usage]) -> Usage:
    """The sum of ``usages``, each count added up; an empty one for none."""
    summed = Usage()
    for usage in usages:
        summed += usage
    return summed


def summary(usage: Usage, model: str, env: Mapping[str, str] = os.environ) -> PricedUsage:
    """``usage`` priced as ``model``'s, by the table ``env`` names or the bundled one."""
    return PricedUsage(usage, cost_usd(model, usage, env), prices_date(env))


def recorded(events: Sequence[Event], participant_id: str) -> Usage:
    """The sum of a participant's ``usage`` events: every run of it, resumed ones included."""
    if not events:
        return Usage()  # `duel tools status` of a duel that logged no usage builds no event type
    from ..coordination import UsageRecorded  # loaded already: it built ``events``

    return total(
        event.data.usage
        for event in events
        if isinstance(event.data, UsageRecorded) and event.participant_id == participant_id
    )


def estimate_tokens(characters: int) -> int:
    """About four characters a token: labelled as an estimate wherever it is shown."""
    return (characters + 3) // 4


def cost_usd(model: str, usage: Usage, env: Mapping[str, str] = os.environ) -> float | None:
    """The estimated cost of ``usage`` on ``model``, or None for a model the price table does not know."""
    price = _price_for(model, load_prices(env.get(PRICES_ENV) or None))
    if price is None:
        return None
    per_million = sum(float(getattr(usage, f"{kind}_tokens")) * float(price.get(kind, 0.0)) for kind in TOKEN_KINDS)
    return round(per_million / 1_000_000, 6)


def prices_date(env: Mapping[str, str] = os.environ) -> str | None:
    """The date of the price table ``env`` names or the bundled one, if it has one."""
    date = load_prices(env.get(PRICES_ENV) or None).get("date")
    return date if isinstance(date, str) else None


@cache
def load_prices(path: str | None) -> dict[str, Any]:
    try:
        bundled = (
            Path(__file__).with_name("providers") / "prices.json"
        )  # package data; importlib.resources costs start-up
        text = Path(path).read_text(encoding="utf-8") if path else bundled.read_text(encoding="utf-8")
        table = json.loads(text)
    except (OSError, ValueError) as error:
        raise invalid_argument(f"${PRICES_ENV} {path} is not a readable JSON price table: {error}") from None
    if not isinstance(table, dict) or not isinstance(table.get("models"), dict):
        raise invalid_argument(f'${PRICES_ENV} {path} has no "models" object')
    return table


def _price_for(model: str, table: Mapping[str, Any]) -> Mapping[str, Any] | None:
    models: Mapping[str, Mapping[str, Any]] = table["models"]
    matches = [name for name in models if model.startswith(name)]  # the exact name is its own longest prefix
    return models[max(matches, key=len)] if matches else None
