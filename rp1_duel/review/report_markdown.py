"""Where ``duel report --format md`` was written: the writer is :mod:`rp1_duel.review.report.markdown` now."""

from .report.markdown import cell, code, inline, link, render_markdown

__all__ = ["cell", "code", "inline", "link", "render_markdown"]
