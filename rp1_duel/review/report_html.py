"""Where ``duel report --format html`` was written: the writer is :mod:`rp1_duel.review.report.html` now."""

from .report.html import CAUTION_COLOUR, OUTCOME_COLOURS, SEAT_COLOURS, SEAT_DASHES, render_html

__all__ = ["CAUTION_COLOUR", "OUTCOME_COLOURS", "SEAT_COLOURS", "SEAT_DASHES", "render_html"]
