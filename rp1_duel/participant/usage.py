"""What a participant's model requests used: tokens, requests, retries, repairs, time, and an estimated cost.

Prices live in one data file with its date (``providers/prices.json``, package data); a
user's own file of the same shape, named by ``$DUEL_PRICES``, replaces it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import invalid_argument

PRICES_ENV = "DUEL_PRICES"
TOKEN_KINDS = ("input", "output", "cache_read", "cache_write")


@dataclass(frozen=True)
class Usage:
    """Counts of one request, one turn, or a whole participant; they add up."""

    input_tokens: int = 0  # not read from the cache
    output_tokens: int = 0  # thinking included
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    requests: int = 0  # every request sent, failed ones included
    retries: int = 0
    repairs: int = 0
    seconds: float = 0.0  # wall time from the first request to the answer, waits included
    output_estimated: bool = False  # the API gave no output count: estimated from the text

    def __add__(self, other: Usage) -> Usage:
        summed: dict[str, Any] = {}
        for field in fields(self):
            mine, theirs = getattr(self, field.name), getattr(other, field.name)
            summed[field.name] = (mine or theirs) if isinstance(mine, bool) else mine + theirs
        return Usage(**summed)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["seconds"] = round(self.seconds, 3)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Usage:
        """The fields this version knows of a recorded usage; anything else is ignored."""
        values: dict[str, Any] = {}
        for field in fields(cls):
            value = data.get(field.name)
            if isinstance(value, bool) == (field.name == "output_estimated") and isinstance(value, (int, float)):
                values[field.name] = value
        return cls(**values)


def total(usages: Iterable[Usage]) -> Usage:
    summed = Usage()
    for usage in usages:
        summed += usage
    return summed


def summary(usage: Usage, model: str, env: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """Usage as ``--json`` and ``duel tools status`` show it: the counts, the estimated cost and its prices' date."""
    return {**usage.to_dict(), "cost_usd": cost_usd(model, usage, env), "prices_date": prices_date(env)}


def recorded(events: Iterable[Mapping[str, Any]], participant_id: str) -> Usage:
    """The sum of a participant's ``usage`` events: every run of it, resumed ones included."""
    return total(
        Usage.from_dict(event.get("data") or {})
        for event in events
        if event.get("type") == "usage" and event.get("participant_id") == participant_id
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
