"""The page's stance chart: an inline SVG, one line per seat over the turns, each stance a dot (a diamond off
the path to consensus), a changed stance ringed and linked to its support; nothing loaded or run."""

from __future__ import annotations

import html
import math

from .. import report_text as words
from .blocks import Chart
from .data import STANCE_LEVELS, TimelineEntry

__all__ = ["SEAT_DASHES", "svg"]

SEAT_COLOURS = words.SEAT_COLOURS
# The seats stay apart in grey print and for colour-blind readers: solid, dashed, dotted, then mixed patterns.
SEAT_DASHES = {1: "", 2: "6 4", 3: "2 3", 4: "10 3 2 3", 5: "14 4", 6: "2 3 2 3 8 3", 7: "1 6", 8: "8 3 1 3 1 3"}


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


# The chart's geometry, in SVG units (the viewBox scales it to the page, so its width is fixed).
_WIDTH, _LEFT, _RIGHT, _TOP, _ROW, _AXIS = 1000, 190, 24, 40, 36, 34
_LEGEND_ROW = 20  # a panel's legend wraps onto rows this far apart; the chart moves down with them


def svg(chart: Chart) -> str:
    """The stance of each turn, by participant, as one SVG element."""
    count = chart.turn_count
    width = _WIDTH
    column = (width - _LEFT - _RIGHT) / count
    levels = sorted(STANCE_LEVELS.items(), key=lambda item: -item[1])
    legend, legend_rows = _legend(chart)
    top = _TOP + _LEGEND_ROW * (legend_rows - 1)
    height = top + _ROW * len(levels) + _AXIS

    place = {entry.turn: index for index, entry in enumerate(chart.timeline)}  # a turn's column

    def x(turn: int) -> float:
        return round(_LEFT + (place[turn] + 0.5) * column, 1)

    def y(level: int) -> float:
        return round(top + (max(STANCE_LEVELS.values()) - level + 0.5) * _ROW, 1)

    parts = [
        (
            f'<svg viewBox="0 0 {width} {height}" role="img" aria-labelledby="timeline-title" '
            f'xmlns="http://www.w3.org/2000/svg"><title id="timeline-title">Stance of each turn, by participant'
            "</title>"
        )
    ]
    for stance, level in levels:
        marked = stance not in ("OPEN_TO_DEBATE", "CONVERGING", "ACCEPTING_CONSENSUS")
        if marked:
            parts.append(
                f'<rect x="{_LEFT}" y="{y(level) - _ROW / 2}" width="{column * count:.1f}" height="{_ROW}" '
                'fill="#f6f8fa"/>'
            )
        parts.append(f'<line x1="{_LEFT}" x2="{width - _RIGHT}" y1="{y(level)}" y2="{y(level)}" stroke="#d0d7de"/>')
        style = ' font-style="italic"' if marked else ""
        parts.append(f'<text x="{_LEFT - 10}" y="{y(level) + 4}" text-anchor="end"{style}>{stance}</text>')
    step = math.ceil(count / 25)  # at most about 25 turn numbers on the axis
    for turn, index in place.items():
        if index % step == 0:
            parts.append(f'<text x="{x(turn)}" y="{height - 12}" text-anchor="middle">{turn}</text>')
    parts.append(f'<text x="{_LEFT - 10}" y="{height - 12}" text-anchor="end">turn</text>')
    for seat in range(1, len(chart.names) + 1):
        points = " ".join(f"{x(e.turn)},{y(e.level)}" for e in chart.timeline if e.seat == seat and e.level is not None)
        if points:
            dash = f' stroke-dasharray="{SEAT_DASHES[seat]}"' if SEAT_DASHES[seat] else ""
            parts.append(
                f'<polyline points="{points}" fill="none" stroke="{SEAT_COLOURS[seat]}" stroke-width="2.5"{dash}/>'
            )
    parts += [
        _marker(chart, entry, x(entry.turn), y(entry.level)) for entry in chart.timeline if entry.level is not None
    ]
    parts += legend
    parts.append("</svg>")
    return "".join(parts)


def _legend(chart: Chart) -> tuple[list[str], int]:
    """Each seat's line and name, then what a ring means; and how many rows they take. A panel's legend wraps
    before an entry that would pass the chart's right edge; a two-seat legend stays on one row, as before panels."""
    parts, x, row = [], _LEFT, 0
    note = "ringed: stance changed (links to its support)"
    entries = [(seat, f"{chart.names[seat - 1]} (seat {seat})") for seat in range(1, len(chart.names) + 1)]
    for seat, label in [*entries, (None, note)]:
        width = (0 if seat is None else 34) + 8 * len(label)  # about 8 units a character at 14px
        if len(chart.names) > 2 and x > _LEFT and x + width > _WIDTH - _RIGHT:
            x, row = _LEFT, row + 1
        y = _LEGEND_ROW * row
        if seat is None:
            parts.append(f'<text x="{x}" y="{18 + y}">{note}</text>')
            break
        dash = f' stroke-dasharray="{SEAT_DASHES[seat]}"' if SEAT_DASHES[seat] else ""
        parts.append(
            f'<line x1="{x}" x2="{x + 28}" y1="{14 + y}" y2="{14 + y}" stroke="{SEAT_COLOURS[seat]}" '
            f'stroke-width="2.5"{dash}/><text x="{x + 34}" y="{18 + y}">{_e(label)}</text>'
        )
        x += width + 24
    return parts, row + 1


def _marker(chart: Chart, entry: TimelineEntry, cx: float, cy: float) -> str:
    colour = SEAT_COLOURS[entry.seat]
    if entry.marked:  # DISSENTING and REVISING: a diamond, not a dot
        shape = (
            f'<path d="M{cx} {cy - 8} L{cx + 8} {cy} L{cx} {cy + 8} L{cx - 8} {cy} Z" fill="#fff" '
            f'stroke="{colour}" stroke-width="2.5"/>'
        )
    else:
        shape = f'<circle cx="{cx}" cy="{cy}" r="6" fill="{colour}"/>'
    change = f", changed from {entry.previous_stance}" if entry.changed else ""
    title = (
        f"<title>Turn {entry.turn}: {_e(chart.names[entry.seat - 1])}, {_e(entry.stance or 'no stance')}"
        f"{_e(change)}</title>"
    )
    if not entry.changed:
        return f"<g>{title}{shape}</g>"
    ring = f'<circle cx="{cx}" cy="{cy}" r="12" fill="none" stroke="{colour}" stroke-width="1.5"/>'
    return f'<a href="#revision-{entry.turn}">{title}{ring}{shape}</a>'
