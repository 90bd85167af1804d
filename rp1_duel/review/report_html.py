"""Where ``duel report --format html`` was written: the writer is :mod:`rp1_duel.review.report.html` now."""

from .report.chart_svg import SEAT_DASHES
from .report.html import SEAT_COLOURS, render_html
from .report.page_style import CAUTION_COLOUR, OUTCOME_COLOURS

__all__ = ["CAUTION_COLOUR", "OUTCOME_COLOURS", "SEAT_COLOURS", "SEAT_DASHES", "render_html"]
