"""``duel report --format html``: one self-contained page, readable without script, printable, and on a
phone: tables scroll sideways in their own box, and the chart keeps a readable size.

It leads with the decision, then what the debate changed. Inline CSS and an inline SVG timeline;
no script, and nothing fetched (a Content-Security-Policy that allows none says so to the browser
as well). Every recorded text is escaped: turn text is untrusted, and a record edited by hand may
hold anything. Links to turns and source lines are relative paths (:mod:`rp1_duel.review.report_text`).
"""

from __future__ import annotations

import html
import re

from ...turns import trim_url
from .. import report_text as words
from .blocks import (
    HTML,
    Alert,
    Aside,
    Badge,
    Block,
    Box,
    Card,
    Cards,
    Cell,
    Chart,
    Code,
    Diff,
    Emphasis,
    Entry,
    Fold,
    Group,
    Inline,
    Items,
    Only,
    Paragraph,
    PathLink,
    Per,
    Position,
    Prose,
    SeatName,
    Section,
    Span,
    Strong,
    Subheading,
    Table,
    TurnLink,
    Untrusted,
)
from .chart_svg import svg
from .data import Report
from .page_style import BADGE_COLOURS, CSS
from .sections import sections_of

__all__ = ["CSP", "SEAT_COLOURS", "render_html"]

SEAT_COLOURS = words.SEAT_COLOURS
_URL = re.compile(r"https?://[^\s<>\[\]`\"]+", re.IGNORECASE)  # as references.urls_in_line finds them

# What the page may load and run: nothing but its own inline styles.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def render_html(report: Report) -> str:
    """The report as one self-contained HTML page: inline styles and an SVG chart, nothing loaded or run."""
    body = ["".join(map(section, run)) for run in sections_of(report)]  # a run's sections: nothing between
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(words.title(report))}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        + "\n".join(part for part in body if part)
        + "\n</body>\n</html>\n"
    )


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _text(text: str) -> str:
    """Recorded text, escaped, with its http(s) URLs as links (never fetched: a link is followed only when clicked)."""
    out, position = [], 0
    for found in _URL.finditer(text):
        url = trim_url(found.group())
        out += [
            _e(text[position : found.start()]),
            f'<a href="{_e(url)}" rel="noopener noreferrer nofollow">{_e(url)}</a>',
        ]
        position = found.start() + len(url)
    out.append(_e(text[position:]))
    return "".join(out)


_PARAGRAPH_CLASSES = {
    "": "",
    "note": ' class="muted"',
    "pending": ' class="unanswered"',
    "facts": ' class="facts"',
    "small": "",
}


def section(part: Section | None) -> str:
    """A section on the page: its title a second-level heading, its blocks after it; none, nothing."""
    if part is None:
        return ""
    blocks = [*filter(None, map(block, part.blocks))]
    if part.kind == "header":
        return "\n".join(["<header>", f"<h1>{spans(part.title)}</h1>", *blocks, "</header>"])
    if part.kind == "footer":
        return f"<footer>{''.join(blocks)}</footer>"
    css = _css_class("model-written" if part.model_written else part.page_class)
    body = "\n" + "\n".join(blocks) + "\n" if part.page_lines else "".join(blocks)
    return f"<section{css}><h2>{spans(part.title)}</h2>{body}</section>"


def block(part: Block) -> str:
    """One block on the page; a block only Markdown shows, nothing."""
    if isinstance(part, Paragraph):
        return f"<p{_PARAGRAPH_CLASSES[part.style]}>{spans(part.text)}</p>"
    if isinstance(part, Subheading):
        return f"<h3>{spans(part.text)}</h3>"
    if isinstance(part, Items):
        return f"<ul{_css_class(part.css)}>" + "".join(map(_item, part.items)) + "</ul>"
    if isinstance(part, Table):
        return _table(part)
    if isinstance(part, Position):
        lead = f'<p class="muted">{spans(part.lead)}</p>' if part.lead else ""
        return f'{lead}<div class="position">{_text(part.text) or f"<em>{_e(part.empty)}</em>"}</div>'
    if isinstance(part, Prose):
        return "".join(f"<p>{_text(p)}</p>" for p in part.text.split("\n\n") if p.strip())
    return _framed(part)


def _framed(part: Box | Chart | Fold | Diff | Alert | Cards | Group | Only) -> str:
    if isinstance(part, Box):
        return f"<div{_css_class(part.css)}>" + "".join(map(block, part.blocks)) + "</div>"
    if isinstance(part, Chart):
        return f'<div class="chart">{svg(part)}</div>'
    if isinstance(part, Fold):
        return "".join(map(block, part.blocks))
    if isinstance(part, Diff):
        return f"<h3>{spans(part.heading)}</h3><p>{spans(part.summary)}</p>{_diff(part.text)}"
    if isinstance(part, Alert):
        items = "".join(f"<li>{spans(item)}</li>" for item in part.items)
        return f'<div class="warning">{spans(part.lead)}<ul>{items}</ul></div>'
    if isinstance(part, Cards):
        return '<div class="seats">' + "".join(map(_card, part.cards)) + "</div>"
    if isinstance(part, Group):
        return "".join(map(block, part.blocks))
    return block(part.block) if part.format == HTML else ""


def _table(part: Table) -> str:
    """A table in a box of its own (one that scrolls sideways, unless it fits), each column's cells in its class."""
    head = "".join(f"<th>{html.escape(name, quote=False)}</th>" for name in part.head)
    rows = "".join("<tr>" + "".join(map(_cell, row, part.columns)) + "</tr>" for row in part.rows)
    if part.total is not None:
        label, last = part.total
        span, css = len(part.head) - 2, _css_class(part.columns[-1])
        rows += f'<tr><td></td><td colspan="{span}">{spans(label)}</td><td{css}>{spans(last)}</td></tr>'
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    return f'<div class="{part.box}">' + (table if part.grouped else f"<table><tr>{head}</tr>{rows}</table>") + "</div>"


def _item(item: Inline | Cell | Entry) -> str:
    if isinstance(item, Cell):
        return f"<li{_css_class(item.css if item.marked else '')}>{spans(item.text)}</li>"
    if isinstance(item, Entry):
        anchor = f' id="{item.anchor}"' if item.anchor else ""
        sub = "".join(f"<li{_css_class(item.sub_css)}>{spans(one)}</li>" for one in item.sub)
        return f"<li{anchor}>{spans(item.text)}" + (f"<ul>{sub}</ul>" if sub else "") + "</li>"
    return f"<li>{spans(item)}</li>"


def _diff(text: str) -> str:
    """A unified diff, each added, removed and hunk line coloured."""
    kinds = (("+++", ""), ("---", ""), ("+", "add"), ("-", "del"), ("@@", "hunk"))
    lines = []
    for line in text.splitlines():
        kind = next((css for start, css in kinds if line.startswith(start)), "")
        lines.append(f'<span class="{kind}">{_e(line)}</span>' if kind else f"<span>{_e(line)}</span>")
    return f'<pre class="diff">{"".join(lines)}</pre>'


def _cell(one: Inline | Cell, column: str) -> str:
    if isinstance(one, Cell):
        css = one.css if one.marked else ""
        return f"<td{_css_class(css)}>{spans(one.text)}</td>"
    return f"<td{_css_class(column)}>{spans(one)}</td>"


def _css_class(name: str) -> str:
    return f' class="{name}"' if name else ""


def _card(card: Card) -> str:
    heading_class = f' class="{card.heading_class}"' if card.heading_class else ""
    body = "".join(map(block, card.blocks))
    return f'<div class="seat"><h3{heading_class}>{spans(card.heading)}</h3>{body}</div>'


def spans(text: Inline) -> str:
    """Spans on the page: every text escaped (the program's own with ``quote=False``: it is never an
    attribute), recorded text's URLs made links where the section asks for them."""
    return "".join(map(_span, text))


def _span(one: Span) -> str:
    if isinstance(one, str):
        return html.escape(one, quote=False)
    if isinstance(one, Untrusted):
        return _text(one.text) if one.links else _e(one.text)
    if isinstance(one, Code):
        return f"<code>{_e(one.text)}</code>"
    if isinstance(one, Strong):
        return f"<strong>{spans(one.content)}</strong>"
    if isinstance(one, Emphasis):
        return f"<em>{spans(one.content)}</em>"
    if isinstance(one, TurnLink):
        return f'<a href="{_e(one.href)}">{one.number}</a>'
    if isinstance(one, SeatName):
        return f'<span style="color:{SEAT_COLOURS.get(one.seat, "#1f2328")}">{_e(one.name)}</span>'
    if isinstance(one, PathLink):
        return f'<a{_css_class(one.css)} href="{_e(one.href)}">{_e(one.text)}</a>'
    return _set_apart(one)


def _set_apart(one: Aside | Badge | Per) -> str:
    if isinstance(one, Aside):
        title = f' title="{_e(one.title)}"' if one.title else ""
        return f'<span class="{one.css}"{title}>{spans(one.content)}</span>'
    if isinstance(one, Badge):
        colour = BADGE_COLOURS.get(one.tone, "#6e7781")
        return f'<span class="outcome" style="background:{colour}">{spans(one.content)}</span>'
    return spans(one.html)
