"""A duel's settings, their defaults and ranges, and the debate dir default: one place.

Both command-line fronts (``duel tools`` on argparse, the rest on typer) build their
flags and help from :data:`SETTINGS`; the service checks ranges with the same table.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Final

from .errors import invalid_argument

DEBATE_DIR_ENV: Final = "DUEL_DIR"
DEFAULT_DEBATE_DIR: Final = "debates"


def debate_dir(value: str | None, env: Mapping[str, str] = os.environ) -> str:
    """``--debate-dir``, else ``$DUEL_DIR``, else ``./debates``."""
    return value or env.get(DEBATE_DIR_ENV) or DEFAULT_DEBATE_DIR


STORE_ENV: Final = "DUEL_STORE"


def store_url(value: str | None, env: Mapping[str, str] = os.environ) -> str | None:
    """``--store``, else ``$DUEL_STORE``, else None: the debate dir itself keeps the duels."""
    return value or env.get(STORE_ENV) or None


@dataclass(frozen=True)
class Setting:
    name: str
    default: int
    low: int
    high: int
    help: str

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def help_with_range(self) -> str:
        return f"{self.help} ({self.low}-{self.high})"


SETTINGS: Final = {
    setting.name: setting
    for setting in (
        Setting("max_turns", 6, 2, 50, "turns in the whole duel"),
        Setting("lease_seconds", 600, 5, 86400, "how long a lease lasts unless refreshed"),
        Setting("peer_wait_seconds", 900, 1, 604800, "how long to wait for a second participant"),
        Setting("turn_timeout_seconds", 1800, 1, 604800, "how long a turn may take before a timeout"),
    )
}


@dataclass(frozen=True)
class DuelSettings:
    """Fixed by the join that creates a duel (docs/protocol.md section 2)."""

    max_turns: int = SETTINGS["max_turns"].default
    lease_seconds: int = SETTINGS["lease_seconds"].default
    peer_wait_seconds: int = SETTINGS["peer_wait_seconds"].default
    turn_timeout_seconds: int = SETTINGS["turn_timeout_seconds"].default

    def check(self) -> None:
        for field in fields(self):
            setting = SETTINGS[field.name]
            value = getattr(self, field.name)
            if not setting.low <= value <= setting.high:
                raise invalid_argument(
                    f"{setting.flag} must be between {setting.low} and {setting.high}, got {value}",
                    flag=setting.flag,
                )
