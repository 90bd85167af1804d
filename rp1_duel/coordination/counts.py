"""What a model's requests used: :class:`Usage`, the counts a ``usage`` event carries.

The one value of what a model used, from the provider through the participant's loop to
the report (:mod:`.events` re-exports it). A module of its own: ``duel tools status`` shows
each participant's usage, and must not pay for building every event type to do so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["Usage", "input_figure"]


@dataclass(kw_only=True, frozen=True)
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
    input_estimated: bool = False  # the API gave no input count: estimated from the request's text

    @property
    def all_input_tokens(self) -> int:
        """Every input token the model read: not cached, read from the cache and written to it (each is billed)."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    def __add__(self, other: Usage) -> Usage:
        summed: dict[str, Any] = {}
        for field in fields(self):
            mine, theirs = getattr(self, field.name), getattr(other, field.name)
            summed[field.name] = (mine or theirs) if isinstance(mine, bool) else mine + theirs
        return Usage(**summed)

    def to_json(self) -> dict[str, Any]:
        """The counts as JSON, seconds rounded to the millisecond."""
        return {**vars(self), "seconds": round(self.seconds, 3)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Usage:
        """The counts this version knows of a recorded usage; anything else, or a count that is not one, is left out."""
        values: dict[str, Any] = {}
        for field in fields(cls):
            value = data.get(field.name)
            if isinstance(value, bool) == (field.type == "bool") and isinstance(value, (int, float)):
                values[field.name] = value
        return cls(**values)


def input_figure(usage: Usage) -> str:
    """`3,138 tokens (41 read from the cache, 3,097 written to it)`: the one input figure every view shows,
    every input token, its cached parts in brackets."""
    parts = [
        f"{count:,} {what}"
        for count, what in (
            (usage.cache_read_tokens, "read from the cache"),
            (usage.cache_write_tokens, "written to the cache"),
        )
        if count
    ]
    return f"{usage.all_input_tokens:,} tokens" + (f" ({', '.join(parts)})" if parts else "")
