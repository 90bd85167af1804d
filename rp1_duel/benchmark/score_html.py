"""``duel bench score --format html``: one self-contained page, the report's conventions (its
Content-Security-Policy and style sheet, :mod:`rp1_duel.review`): no script, nothing fetched, every
recorded text escaped. Two plots drawn here as inline SVG: recall by condition, and cost against recall
(tokens when a run's cost is not known), one point a run.
"""

from __future__ import annotations

import html

from ..review import CSP, CSS
from .score import CONDITIONS, DUEL, OPENINGS, SINGLE
from .score_json import RunJson, ScoreJson
from .score_markdown import (
    ARROWS,
    DOCUMENT_COLUMNS,
    RUN_COLUMNS,
    condition_cost,
    document_cells,
    percent,
    run_cells,
    totals_sentence,
    usd,
)

__all__ = ["score_html"]

COLOURS = {DUEL: "#0969da", OPENINGS: "#8250df", SINGLE: "#bc4c00"}
_WIDTH, _HEIGHT, _LEFT, _BOTTOM, _TOP = 720, 300, 70, 50, 40
_STYLE = "figure { margin: 12px 0 20px; } .chart svg { max-width: 900px; display: block; }"


def score_html(data: ScoreJson) -> str:
    """The score as one HTML page: the totals and both plots first, then each document, the ledger, the wrong consensus."""
    total = data["total"]
    body = [
        "<h1>duel bench score</h1>",
        (
            f'<p class="facts">{total["runs"]} runs scored from <code>{_e(data["out"])}</code> against '
            f"<code>{_e(data['corpus'])}</code>"
            + (f"; {len(total['pending'])} not finished" if total["pending"] else "")
            + ". What each number means, and what it does not show: docs/bench.md.</p>"
        ),
        _figure(recall_svg(total["recall"]), "Defect recall by condition, over every run."),
        _figure(*cost_svg([run for d in data["documents"] for run in d["runs"]])),
        "<h2>Totals</h2>",
        _table(
            ("condition", "defect recall", "cost"),
            [(c, percent(total["recall"][c]), condition_cost(data, c)) for c in CONDITIONS],
        ),
        f"<p>{_e(totals_sentence(data))}</p>",
        "<h2>Per document</h2>",
        _table(DOCUMENT_COLUMNS, [document_cells(d) for d in data["documents"]]),
        "<h2>Per run</h2>",
        _table(RUN_COLUMNS, [run_cells(d["document"], run) for d in data["documents"] for run in d["runs"]]),
        "<h2>Flip ledger</h2>",
        _table(
            ("document", "run", "seat", "turn", "defect", "moved", "reason cited"),
            [
                (
                    d["document"],
                    str(run["run"]),
                    f"{flip['name']} (seat {flip['seat']})",
                    str(flip["turn"]),
                    flip["defect"],
                    ARROWS[flip["direction"]],
                    flip["reason"] or "(nothing cited)",
                )
                for d in data["documents"]
                for run in d["runs"]
                for flip in run["flips"]
            ],
            empty="No seat's position on a defect moved.",
        ),
        "<h2>Wrong consensus</h2>",
        _table(
            ("document", "run", "defects not fixed in the agreed revision"),
            [
                (d["document"], str(run["run"]), ", ".join(run["failing"]))
                for d in data["documents"]
                for run in d["runs"]
                if run["wrong_consensus"]
            ],
            empty="No consensus kept or added a labelled defect.",
        ),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>duel bench score</title>\n<style>{CSS}{_STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def recall_svg(recall: dict[str, float | None]) -> str:
    """Bars of recall (0 to 100 %) by condition; a condition not measured is named, with no bar."""
    inner_h = _HEIGHT - _BOTTOM - _TOP
    slot = (_WIDTH - _LEFT - 20) / len(CONDITIONS)
    parts = _axes("defect recall", "")
    for index, condition in enumerate(CONDITIONS):
        value = recall.get(condition)
        x = _LEFT + slot * index + slot * 0.2
        label_x = x + slot * 0.3
        if value is not None:
            height = inner_h * value
            parts.append(
                f'<rect x="{x:.1f}" y="{_TOP + inner_h - height:.1f}" width="{slot * 0.6:.1f}" height="{height:.1f}" '
                f'fill="{COLOURS[condition]}"><title>{condition}: {percent(value)}</title></rect>'
                f'<text x="{label_x:.1f}" y="{_TOP + inner_h - height - 6:.1f}" text-anchor="middle">'
                f"{percent(value)}</text>"
            )
        shown = condition if value is not None else f"{condition} (not run)"
        parts.append(f'<text x="{label_x:.1f}" y="{_HEIGHT - _BOTTOM + 22}" text-anchor="middle">{shown}</text>')
    return _svg("Defect recall by condition", parts)


def cost_svg(runs: list[RunJson]) -> tuple[str, str]:
    """One point a run: its cost (x) against its recall (y), coloured by condition, and its caption. Tokens stand
    in for cost when a run's cost is not known (an unpriced model), and the axis and caption say so."""
    plotted = [run for run in runs if run["recall"] is not None]
    by_cost = all(run["usd"] is not None for run in plotted)

    def spent(run: RunJson) -> float:
        return (run["usd"] or 0.0) if by_cost else float(run["tokens_in"] + run["tokens_out"])

    most = max((spent(run) for run in plotted), default=0.0) or 1.0
    inner_w, inner_h = _WIDTH - _LEFT - 20, _HEIGHT - _BOTTOM - _TOP
    axis = "cost (USD)" if by_cost else "tokens (cost not known for every run)"
    parts = _axes("defect recall", axis)
    ticks = (
        (_LEFT, "start", usd(0.0) if by_cost else "0"),
        (_LEFT + inner_w * 0.95, "middle", usd(most) if by_cost else f"{most:.0f}"),
    )
    parts += [
        f'<text x="{x}" y="{_HEIGHT - _BOTTOM + 22}" text-anchor="{anchor}">{label}</text>'
        for x, anchor, label in ticks
    ]
    points: dict[tuple[str, float, float], list[RunJson]] = {}  # runs at one spot share a point, labelled ×N
    for run in plotted:
        spot = (
            run["condition"],
            _LEFT + inner_w * 0.95 * spent(run) / most,
            _TOP + inner_h * (1 - (run["recall"] or 0.0)),
        )
        points.setdefault(spot, []).append(run)
    for (condition, x, y), here in points.items():
        tip = "; ".join(f"{condition} run {r['run']}: recall {percent(r['recall'])}, {usd(r['usd'])}" for r in here)
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" fill="{COLOURS[condition]}" fill-opacity="0.7">'
            f"<title>{_e(tip)}</title></circle>"
            + (f'<text x="{x + 9:.1f}" y="{y - 8:.1f}">×{len(here)}</text>' if len(here) > 1 else "")
        )
    for index, condition in enumerate((DUEL, SINGLE)):
        x = _LEFT + 10 + index * 120
        parts.append(
            f'<circle cx="{x}" cy="{_TOP - 22}" r="5" fill="{COLOURS[condition]}"></circle>'
            f'<text x="{x + 10}" y="{_TOP - 17}">{condition}</text>'
        )
    caption = "Cost against recall, one point a run." if by_cost else "Tokens against recall, one point a run."
    return _svg(caption, parts), caption


def _figure(svg: str, caption: str) -> str:
    """A plot in its own sideways-scrolling box (the report's ``chart``: 720 px at least), its caption below the box."""
    return f'<figure><div class="chart">{svg}</div><figcaption>{_e(caption)}</figcaption></figure>'


def _axes(y_label: str, x_label: str) -> list[str]:
    inner_h = _HEIGHT - _BOTTOM - _TOP
    parts = [
        f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{_TOP + inner_h}" stroke="#57606a"></line>',
        f'<line x1="{_LEFT}" y1="{_TOP + inner_h}" x2="{_WIDTH - 20}" y2="{_TOP + inner_h}" stroke="#57606a"></line>',
        (
            f'<text x="16" y="{_TOP + inner_h / 2}" transform="rotate(-90 16 {_TOP + inner_h / 2})" '
            f'text-anchor="middle">{y_label}</text>'
        ),
        f'<text x="{(_LEFT + _WIDTH) / 2}" y="{_HEIGHT - 6}" text-anchor="middle">{x_label}</text>',
    ]
    for tick in (0.0, 0.5, 1.0):
        y = _TOP + inner_h * (1 - tick)
        parts.append(f'<text x="{_LEFT - 8}" y="{y + 5:.1f}" text-anchor="end">{percent(tick)}</text>')
        parts.append(f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{_WIDTH - 20}" y2="{y:.1f}" stroke="#eaeef2"></line>')
    return parts


def _svg(title: str, parts: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" '
        f'aria-label="{_e(title)}"><title>{_e(title)}</title>' + "".join(parts) + "</svg>"
    )


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]], *, empty: str = "") -> str:
    if not rows and empty:
        return f"<p>{_e(empty)}</p>"
    head = "".join(f"<th>{_e(name)}</th>" for name in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(value)}</td>" for value in row) + "</tr>" for row in rows)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)
