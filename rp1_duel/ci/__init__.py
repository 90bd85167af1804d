"""Continuous integration: ``duel ci github``, the debate records of a pull request checked, reported in the job
summary and in one comment each, the agreed change offered as suggestions (docs/protocol.md section 11).

A pure part (:mod:`.event`, :mod:`.verdict`, :mod:`.suggestions`) and thin adapters: :mod:`.git` (git run so
that nothing the repository says runs a command) and :mod:`.github_api` (the REST API on urllib, the token to
``$GITHUB_API_URL`` only); :mod:`.run` joins them. May import :mod:`rp1_duel.review`, :mod:`rp1_duel.record` and
the top-level modules; only the CLI imports it.

This module is its face (:func:`rp1_duel.lazy_exports`): naming it loads nothing behind it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import lazy_exports

_EXPORTS = {
    "DEFAULT_GLOB": ".event",
    "PullRequest": ".event",
    "glob_pattern": ".event",
    "pull_request_of": ".event",
    "DEFAULT_API_URL": ".github_api",
    "GitHubApi": ".github_api",
    "CiOptions": ".run",
    "CiResult": ".run",
    "run_github": ".run",
    "Suggestion": ".suggestions",
    "diff_ranges": ".suggestions",
    "fits": ".suggestions",
    "suggested_changes": ".suggestions",
    "RecordCheck": ".verdict",
    "check_of": ".verdict",
    "comment_body": ".verdict",
    "exit_code": ".verdict",
    "marker": ".verdict",
    "summary_text": ".verdict",
}
__all__ = [
    "DEFAULT_API_URL",
    "DEFAULT_GLOB",
    "CiOptions",
    "CiResult",
    "GitHubApi",
    "PullRequest",
    "RecordCheck",
    "Suggestion",
    "check_of",
    "comment_body",
    "diff_ranges",
    "exit_code",
    "fits",
    "glob_pattern",
    "marker",
    "pull_request_of",
    "run_github",
    "suggested_changes",
    "summary_text",
]

if TYPE_CHECKING:
    from .event import DEFAULT_GLOB, PullRequest, glob_pattern, pull_request_of
    from .github_api import DEFAULT_API_URL, GitHubApi
    from .run import CiOptions, CiResult, run_github
    from .suggestions import Suggestion, diff_ranges, fits, suggested_changes
    from .verdict import RecordCheck, check_of, comment_body, exit_code, marker, summary_text
else:
    __getattr__ = lazy_exports(__name__, _EXPORTS)
