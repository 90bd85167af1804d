"""Review: what a person reads and watches — ``duel report``, ``duel watch``, ``duel list``, ``duel stats``.

Computes reports from the record alone (plus its verification sidecar and recorded usage),
and follows live duels through the lock service's read-only calls. May import every
layer below it: :mod:`rp1_duel.participant` (for model-written assessments),
:mod:`rp1_duel.coordination`, :mod:`rp1_duel.verify`, :mod:`rp1_duel.record`,
:mod:`rp1_duel.turns` and the top-level modules; never the CLI.

This module is its face (:func:`rp1_duel.lazy_exports`: naming it loads nothing behind it); the
other packages import from here only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import lazy_exports

_EXPORTS = {
    "COMMENT_LIMIT": ".report.markdown",
    "Flip": ".flips",
    "flip_ledger": ".flips",
    "UnreadableDuel": ".listing",
    "list_duels": ".listing",
    "duels_table": ".listing",
    "build_report": ".report",
    "CSP": ".report.html",
    "cell": ".report.markdown",
    "plural": ".report_text",
    "CSS": ".report.page_style",
    "render_html": ".report.html",
    "code": ".report.markdown",
    "inline": ".report.markdown",
    "render_github": ".report.github",
    "render_markdown": ".report.markdown",
    "Report": ".report.data",
    "REPORT_FORMATS": ".report_files",
    "assess_artifact": ".report_files",
    "configured_assessors": ".report_files",
    "read_report": ".report_files",
    "render_report": ".report_files",
    "report_folder": ".report_files",
    "read_stats": ".stats",
    "stats_table": ".stats",
    "display_for": ".watch",
    "follow": ".watch",
    "pick_duel": ".watch",
    "AskKey": ".watch_keys",
}
__all__ = [
    "COMMENT_LIMIT",
    "CSP",
    "CSS",
    "REPORT_FORMATS",
    "AskKey",
    "Flip",
    "Report",
    "UnreadableDuel",
    "assess_artifact",
    "build_report",
    "cell",
    "code",
    "configured_assessors",
    "display_for",
    "duels_table",
    "flip_ledger",
    "follow",
    "inline",
    "list_duels",
    "pick_duel",
    "plural",
    "read_report",
    "read_stats",
    "render_github",
    "render_html",
    "render_markdown",
    "render_report",
    "report_folder",
    "stats_table",
]

if TYPE_CHECKING:
    from .flips import Flip, flip_ledger
    from .listing import UnreadableDuel, duels_table, list_duels
    from .report import build_report
    from .report.data import Report
    from .report.github import render_github
    from .report.html import CSP, render_html
    from .report.markdown import COMMENT_LIMIT, cell, code, inline, render_markdown
    from .report.page_style import CSS
    from .report_files import (
        REPORT_FORMATS,
        assess_artifact,
        configured_assessors,
        read_report,
        render_report,
        report_folder,
    )
    from .report_text import plural
    from .stats import read_stats, stats_table
    from .watch import display_for, follow, pick_duel
    from .watch_keys import AskKey
else:
    __getattr__ = lazy_exports(__name__, _EXPORTS)
