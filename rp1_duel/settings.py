"""A duel's settings, their defaults and ranges, and the debate dir default: one place.

Both command-line fronts (``duel tools`` on argparse, the rest on typer) build their
flags and help from :data:`SETTINGS`; the service checks ranges with the same table.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from .errors import invalid_argument
from .schedule import Schedule

__all__ = [
    "CHAIR_HELP",
    "DEBATE_DIR_ENV",
    "DEFAULT_DEBATE_DIR",
    "DEFAULT_ROUNDS",
    "ON_FABRICATION",
    "ON_FABRICATION_HELP",
    "ROLE_HELP",
    "SEALED_OPENINGS_HELP",
    "SETTINGS",
    "SIGNER_HELP",
    "STORE_ENV",
    "DuelSettings",
    "Setting",
    "default_of",
    "redact",
]

# The debate dir and the store: --debate-dir/--store, else these variables, else the configuration's
# debate_dir/store, else the debate dir below (rp1_duel.configuration merges them).
DEBATE_DIR_ENV: Final = "DUEL_DIR"
DEFAULT_DEBATE_DIR: Final = "debates"
STORE_ENV: Final = "DUEL_STORE"


def redact(url: str) -> str:
    """A store URL without its password, to be shown: ``postgresql://duel:***@host/db``, ``?password=***``.

    The user part runs to the last ``@``: a password typed with a raw ``?``, ``#``, ``/`` or ``@`` in it (libpq
    takes them) is hidden whole. An ``@`` later in the query hides more than the password, never less.
    """
    scheme_end = url.find("://") + 3 if "://" in url else 0
    at = url.rfind("@")
    if at > scheme_end and ":" in url[scheme_end:at]:
        user = url[scheme_end:at].split(":", 1)[0]
        url = f"{url[:scheme_end]}{user}:***{url[at:]}"
    return re.sub(r"(?i)(password=)[^&\s]*", r"\1***", url)


class Setting(NamedTuple):  # NamedTuples, not frozen dataclasses: every `duel tools` command builds these
    """One setting of a duel: its name, its default, the range it must fall in, and its help."""

    name: str
    default: int | None  # None: worked out from the other settings (DuelSettings)
    low: int
    high: int
    help: str

    @property
    def flag(self) -> str:
        """The command-line flag that sets it: ``--lease-seconds`` for ``lease_seconds``."""
        return "--" + self.name.replace("_", "-")

    @property
    def help_with_range(self) -> str:
        """Its help followed by its range, as the command line shows it."""
        return f"{self.help} ({self.low}-{self.high})"


SETTINGS: Final = {
    setting.name: setting
    for setting in (
        Setting(
            name="max_turns",
            default=None,
            low=2,
            high=50,
            help="turns in the whole duel, at least one per seat [default: 3 rounds, 6 for two seats]",
        ),
        Setting(name="lease_seconds", default=600, low=5, high=86400, help="how long a lease lasts unless refreshed"),
        Setting(
            name="peer_wait_seconds",
            default=900,
            low=1,
            high=604800,
            help="how long to wait for every seat to be taken",
        ),
        Setting(
            name="turn_timeout_seconds",
            default=1800,
            low=1,
            high=604800,
            help="how long a turn may take before a timeout",
        ),
        Setting(name="seats", default=2, low=2, high=8, help="participants in the duel, speaking in turn"),
    )
}
CHAIR_HELP: Final = (
    "add a chair seat (0): it writes the opening brief, the unengaged points before the closing "
    "round and the synthesis; max_turns then counts the panel's turns [default: no chair]"
)
ROLE_HELP: Final = "panelist, or chair: take the chair's seat (implies --chair on the join that creates the duel)"
SIGNER_HELP: Final = (
    "the principal (of an allowed signers file) your signatures name, like alice@example.com: fixed at your "
    "seat's join, checked by `duel validate --allowed-signers`"
)
ON_FABRICATION_HELP: Final = (
    "what a source ruled fabricated does: redact (its claim is hidden from every view, the duel goes on) or "
    "invalidate (the duel also ends INVALIDATED, as a disqualification) [default: redact]"
)
SEALED_OPENINGS_HELP: Final = (
    "every seat writes its opening without seeing the others': each commits its opening's SHA-256 first, and the "
    "openings are revealed once all are committed [default: off]"
)
DEFAULT_ROUNDS: Final = 3  # max_turns when not given: every seat speaks three times


def default_of(name: str) -> int:
    """The default of a setting that has a fixed one."""
    value = SETTINGS[name].default
    if value is None:
        raise ValueError(f"the setting {name} has no fixed default")
    return value


_FLAGS = ("chair", "sealed_openings", "on_fabrication")  # the settings that are not numbers in a range
ON_FABRICATION: Final = ("redact", "invalidate")


class DuelSettings(NamedTuple):
    """Fixed by the join that creates a duel (docs/protocol.md section 2)."""

    max_turns: int | None = None  # None: DEFAULT_ROUNDS rounds (see schedule)
    lease_seconds: int = default_of("lease_seconds")
    peer_wait_seconds: int = default_of("peer_wait_seconds")
    turn_timeout_seconds: int = default_of("turn_timeout_seconds")
    seats: int = default_of("seats")
    chair: bool = False  # a chair seat besides the seats (docs/protocol.md section 4, "A chair")
    sealed_openings: bool = False  # the opening round written blind (section 4, "Sealed openings")
    on_fabrication: str = "redact"  # ON_FABRICATION: what a source ruled fabricated does (section 10, "Rulings")

    @property
    def schedule(self) -> Schedule:
        """The shape of the duel these settings create, the one the state then carries:
        ``max_turns``, else three rounds (6 for two seats, as before there were more)."""
        max_turns = self.max_turns if self.max_turns is not None else DEFAULT_ROUNDS * self.seats
        return Schedule(
            seats=self.seats,
            max_turns=max_turns,
            chair=self.chair,
            sealed_openings=self.sealed_openings,
            on_fabrication=self.on_fabrication,
        )

    @property
    def fewest_turns(self) -> int:
        """The lowest max_turns: a round, or with a chair two (a round before the closing one)."""
        return 2 * self.seats if self.chair else self.seats

    def check(self) -> None:
        """Every value in its range; seats first, since max_turns must give each seat a turn."""
        for name in ("seats", *(name for name in self._fields if name not in ("seats", *_FLAGS))):
            setting = SETTINGS[name]
            value = getattr(self, name)
            low = max(setting.low, self.fewest_turns) if name == "max_turns" else setting.low
            if value is not None and not low <= value <= setting.high:
                raise invalid_argument(
                    f"{setting.flag} must be between {low} and {setting.high}, got {value}", flag=setting.flag
                )
