"""Verification: does each cited URL exist and say what the turn claims it says?

Owns ``duel verify`` and docs/protocol.md section 10. Reads the record, fetches cited
pages through a guarded fetcher, decides verdicts by pure rules, and asks a quorum of
model voters (handed in as :class:`Voter` objects, so this package never imports a model
SDK or the participant). May import :mod:`rp1_duel.record`, :mod:`rp1_duel.turns` and the
top-level modules; never coordination, the participant or the CLI.

This module is its face: it names what the other packages use, each loaded on first use
(:func:`rp1_duel.lazy_exports`, so naming the face loads no fetcher), and they import it from here;
the modules nothing outside uses are private (``_addresses``, ``_extraction``, ``_verdicts``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import lazy_exports

_EXPORTS = {
    "FetchPolicy": ".fetch",
    "Fetcher": ".fetch",
    "PageCache": ".pages",
    "default_cache_dir": ".pages",
    "VoterError": ".quorum",
    "Verifier": ".run",
    "verify_paths": ".run",
}
__all__ = ["FetchPolicy", "Fetcher", "PageCache", "Verifier", "VoterError", "default_cache_dir", "verify_paths"]

if TYPE_CHECKING:
    from .fetch import Fetcher, FetchPolicy
    from .pages import PageCache, default_cache_dir
    from .quorum import VoterError
    from .run import Verifier, verify_paths
else:
    __getattr__ = lazy_exports(__name__, _EXPORTS)
