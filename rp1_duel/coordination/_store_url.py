"""The store a ``--store`` URL names, opened: only PostgreSQL for now, its driver loaded only then."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import DuelError, invalid_argument
from ..vocabulary import ErrorCode

if TYPE_CHECKING:
    from ._store import DuelStore
    from .storage import DebateDir


def check_store_url(url: str) -> None:
    """``INVALID_ARGUMENT`` unless ``url`` names a store there is: only ``postgresql://`` (or ``postgres://``) for now.
    Said without opening it (``duel mcp`` opens its store at the first call)."""
    if not url.startswith(("postgresql://", "postgres://")):
        raise invalid_argument(
            "--store must be a postgresql:// URL (or leave it out: the debate dir keeps the duels)", flag="--store"
        )


def open_store(url: str, debate: DebateDir) -> DuelStore:
    """The store a ``--store`` URL names (:func:`check_store_url`)."""
    check_store_url(url)
    try:
        from ._postgres import PostgresStore  # psycopg is loaded only when a database is used
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] != "psycopg":
            raise
        raise DuelError(
            ErrorCode.DEPENDENCY_MISSING,
            "the PostgreSQL store needs the postgresql extra: pip install 'rp1-duel[postgresql]'",
            {"extra": "postgresql", "install": "pip install 'rp1-duel[postgresql]'"},
        ) from None
    return PostgresStore(url, debate)
