"""``duel report --format html``: one self-contained page, readable without script, printable, and on a
phone: tables scroll sideways in their own box, and the chart keeps a readable size.

It leads with the decision, then what the debate changed. Inline CSS and an inline SVG timeline;
no script, and nothing fetched (a Content-Security-Policy that allows none says so to the browser
as well). Every recorded text is escaped: turn text is untrusted, and a record edited by hand may
hold anything. Links to turns and source lines are relative paths (:mod:`rp1_duel.review.report_text`).
"""

from __future__ import annotations

import html
import math
import re

from ...turns import trim_url
from ...vocabulary import ACCEPTED_CONSENSUS
from .. import report_text as words
from ..assessment import LABEL
from ..decision import FlaggedCitation, RevisionView, SeatChange, SeatPosition
from .blocks import (
    HTML,
    Aside,
    Block,
    Card,
    Cards,
    Cell,
    Code,
    Emphasis,
    Inline,
    Items,
    Paragraph,
    PathLink,
    Position,
    SeatName,
    Section,
    Span,
    Strong,
    Subheading,
    Table,
    TurnLink,
    Untrusted,
)
from .data import STANCE_LEVELS, Report, TimelineEntry
from .sections import agreements, audience, items_table, judged_verdict, rulings, unresolved

__all__ = ["CAUTION_COLOUR", "SEAT_COLOURS", "SEAT_DASHES", "render_html"]

SEAT_COLOURS = words.SEAT_COLOURS
# The seats stay apart in grey print and for colour-blind readers: solid, dashed, dotted, then mixed patterns.
SEAT_DASHES = {1: "", 2: "6 4", 3: "2 3", 4: "10 3 2 3", 5: "14 4", 6: "2 3 2 3 8 3", 7: "1 6", 8: "8 3 1 3 1 3"}
OUTCOME_COLOURS = {
    "ACCEPTED_CONSENSUS": "#1a7f37",
    "DISSENT": "#cf222e",
    "MAX_TURNS": "#9a6700",
    "TIMEOUT": "#6e7781",
    "INVALIDATED": "#6e7781",
}
CAUTION_COLOUR = "#bc4c00"  # a consensus badge under a caution (a fabricated citation, a record that fails validate)
WARNING_COLOUR = "#cf222e"
_URL = re.compile(r"https?://[^\s<>\[\]`\"]+", re.IGNORECASE)  # as references.urls_in_line finds them

CSS = """
:root { color-scheme: light; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: #1f2328; max-width: 1100px; margin: 24px auto; padding: 0 20px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #d0d7de; }
.outcome { display: inline-block; color: #fff; font-weight: 600; padding: 2px 10px; border-radius: 12px; }
.facts { color: #57606a; margin: 6px 0 10px; }
.warning { border: 2px solid #cf222e; background: #fff1f0; padding: 8px 12px; border-radius: 6px; margin: 10px 0; }
.summary { border-left: 4px solid #d0d7de; padding: 2px 12px; color: #3b434b; }
.position { white-space: pre-wrap; overflow-wrap: anywhere; border-left: 4px solid #d0d7de; background: #f6f8fa;
            padding: 6px 12px; margin: 4px 0 12px; }
.agreed .position { border-left-color: #1a7f37; }
.seats { display: grid; gap: 12px; }
.seat { border: 1px solid #d0d7de; border-radius: 6px; padding: 4px 12px; }
.seat h3 { margin: 6px 0; } .seat .position { margin: 2px 0 8px; }
/* A seat's opening and final positions side by side, one above the other on a narrow screen. */
.pair { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(260px, 100%), 1fr)); gap: 0 16px; }
pre.diff { overflow-x: auto; background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 0; }
pre.diff span { display: block; padding: 0 12px; white-space: pre; }
.diff .add { background: #dafbe1; color: #116329; } .diff .del { background: #ffebe9; color: #82071e; }
.diff .hunk { color: #8250df; }
/* On a narrow screen a table scrolls in its own box, at a width its columns stay readable in. */
.scroll { overflow-x: auto; margin: 6px 0; } .scroll > table { margin: 0; min-width: 600px; }
td.text { min-width: 16em; } td code { overflow-wrap: normal; white-space: nowrap; }
.chart { overflow-x: auto; } .chart svg { min-width: 720px; }
.fit { overflow-x: auto; }  /* a small table beside text: it scrolls in its own column, at its own width */
li a, td.text a, .position a { overflow-wrap: anywhere; }  /* a long URL breaks, not the page */
table { border-collapse: collapse; width: 100%; margin: 6px 0; font-size: 14px; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } td.n { text-align: right; white-space: nowrap; }
.alerts { border-left: 4px solid #bc4c00; background: #fff8f0; padding: 6px 12px 6px 30px; margin: 10px 0; }
.tag-blocking, .other-model { color: #cf222e; font-weight: 600; } .open { font-weight: 600; }
.changed { font-weight: 600; } .muted { color: #57606a; }
.question { overflow-wrap: anywhere; } .unanswered { color: #9a6700; font-style: italic; }
.verdict { padding: 0 6px; border-radius: 8px; background: #eaeef2; white-space: nowrap; }
.verdict-verified { background: #dafbe1; } .verdict-fabricated, .verdict-unreliable { background: #ffebe9; }
svg { width: 100%; height: auto; } svg text { font: 14px system-ui, sans-serif; fill: #57606a; }
.model-written { border: 2px dashed #9a6700; padding: 4px 12px; margin: 12px 0; }
footer { margin-top: 28px; color: #57606a; font-size: 13px; }
code, pre { font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
code { overflow-wrap: anywhere; }
@media (max-width: 600px) {
  body { margin: 12px auto; padding: 0 12px; } h1 { font-size: 20px; } ul { padding-left: 22px; }
}
@media print {
  body { margin: 0; max-width: none; font-size: 11pt; }
  .scroll, .chart, pre.diff { overflow: visible; } .scroll > table, .chart svg, td.text { min-width: 0; }
  a { color: inherit; text-decoration: none; }
  h2 { break-after: avoid; } tr, li, svg { break-inside: avoid; }
  .outcome, .verdict, .warning { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
@page { margin: 15mm; }
"""

# What the page may load and run: nothing but its own inline styles.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def render_html(report: Report) -> str:
    """The report as one self-contained HTML page: inline styles and an SVG chart, nothing loaded or run."""
    body = [
        _header(report),
        _decision(report),
        section(rulings(report)),
        _openings(report),
        _synthesis(report),
        _changes(report),
        _outcome_details(report),
        _participants(report),
        _provenance(report),
        _timeline(report),
        _turns(report),
        section(unresolved(report)),
        section(agreements(report)),
        _novel_arguments(report),
        section(audience(report)),
        _citations(report),
        _model_written(report),
        section(judged_verdict(report)),
        _footer(report),
    ]
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


_PARAGRAPH_CLASSES = {"": "", "note": ' class="muted"', "pending": ' class="unanswered"'}


def section(part: Section | None) -> str:
    """A section on the page: its title a second-level heading, its blocks after it; none, nothing."""
    if part is None:
        return ""
    css = ' class="model-written"' if part.model_written else ""
    return f"<section{css}><h2>{spans(part.title)}</h2>{''.join(map(block, part.blocks))}</section>"


def block(part: Block) -> str:
    """One block on the page; a block only Markdown shows, nothing."""
    if isinstance(part, Paragraph):
        return f"<p{_PARAGRAPH_CLASSES[part.style]}>{spans(part.text)}</p>"
    if isinstance(part, Subheading):
        return f"<h3>{spans(part.text)}</h3>"
    if isinstance(part, Items):
        return "<ul>" + "".join(f"<li>{spans(item)}</li>" for item in part.items) + "</ul>"
    if isinstance(part, Table):
        head = "".join(f"<th>{html.escape(name, quote=False)}</th>" for name in part.head)
        rows = "".join("<tr>" + "".join(map(_cell, row, part.columns)) + "</tr>" for row in part.rows)
        return _scrolling(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
    if isinstance(part, Position):
        return f'<div class="position">{_text(part.text) or f"<em>{_e(part.empty)}</em>"}</div>'
    if isinstance(part, Cards):
        return '<div class="seats">' + "".join(map(_card, part.cards)) + "</div>"
    return block(part.block) if part.format == HTML else ""


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
        return f'<a href="{_e(one.href)}">{_e(one.text)}</a>'
    if isinstance(one, Aside):
        return f'<span class="muted">{spans(one.content)}</span>'
    return spans(one.html)


def _name(report: Report, seat: int) -> str:
    return f'<span style="color:{SEAT_COLOURS.get(seat, "#1f2328")}">{_e(report.name_of(seat))}</span>'


def _turn(report: Report, number: int) -> str:
    """Turn ``number``, linked to its heading in the artifact."""
    return f'<a href="{_e(words.turn_href(report, number))}">{number}</a>'


def _turn_links(report: Report, numbers: tuple[int, ...]) -> str:
    return ", ".join(_turn(report, n) for n in numbers) or "—"


def _scrolling(table: str) -> str:
    """A table in a box of its own that scrolls sideways on a narrow screen, not the page."""
    return f'<div class="scroll">{table}</div>'


def _header(report: Report) -> str:
    facts = report.outcome
    outcome = facts.outcome or "OPEN"
    cautions = words.cautions(report)
    colour = OUTCOME_COLOURS.get(outcome, "#6e7781")
    if cautions and outcome == ACCEPTED_CONSENSUS:
        colour = CAUTION_COLOUR  # never green over a fabricated citation or a record that does not validate
    badges = "".join(
        f' <span class="outcome" style="background:{WARNING_COLOUR}">⚠ {_e(caution)}</span>' for caution in cautions
    )
    parts = [
        "<header>",
        f"<h1>{_e(words.title(report))}</h1>",
        (
            f'<p><span class="outcome" style="background:{colour}">{_e(outcome)}</span>{badges} '
            f"{_e(' · '.join(words.facts(report)))}</p>"
        ),
        f"<p>{_e(facts.explanation)}</p>",
    ]
    if report.alerts:
        items = "".join(f"<li>⚠ {_e(alert.text)}.</li>" for alert in report.alerts)
        parts.append(f'<ul class="alerts">{items}</ul>')
    if not report.intact:
        problems = "".join(f"<li>{_e(problem)}</li>" for problem in report.problems)
        parts.append(
            f'<div class="warning"><strong>This record does not verify.</strong> Run '
            f"<code>duel validate</code> before trusting it.<ul>{problems}</ul></div>"
        )
    created = f"created {_e(words.moment(report.created_at))}"
    closed = f", closed {_e(words.moment(report.closed_at))}" if report.closed_at else ""
    parts.append(
        f'<p class="facts">Duel <code>{_e(report.duel_id)}</code> · {created}{closed} · '
        f"source <code>{_e(report.source_path)}</code></p>"
    )
    parts.append("</header>")
    return "\n".join(parts)


def _decision(report: Report) -> str:
    decision = report.decision
    if decision.agreed:
        lead = "<p><strong>Agreed.</strong> Every seat's latest turn accepts the consensus. What each accepted, in full:</p>"
    else:
        lead = (
            f"<p><strong>No agreed decision:</strong> {_e(words.no_decision(report))}. "
            "Each seat's latest position, in full:</p>"
        )
    parts = [f'<section class="decision{" agreed" if decision.agreed else ""}"><h2>Decision</h2>', lead]
    parts += [_position(report, position, label=_name(report, position.seat)) for position in decision.positions]
    problems = "".join(f"<li><code>{_e(p.code)}</code> {_e(p.message)}</li>" for p in decision.validation_problems)
    problems += "".join(f'<li class="muted">Note: {_e(note)}.</li>' for note in decision.validation_notes)
    parts.append(
        f"<p><code>duel validate</code> {_e(words.validation(report))}.</p>"
        + (f"<ul>{problems}</ul>" if problems else "")
    )
    if decision.flagged:
        parts.append(_flagged(report, decision.flagged))
    if (unchecked := words.unchecked(report)) is not None:
        parts.append(f'<p class="muted">{_e(unchecked)}.</p>')
    if decision.revision is not None:
        parts.append(_revision(decision.revision))
    parts.append("</section>")
    return "\n".join(parts)


def _openings(report: Report) -> str:
    """What a vote of the openings alone would have decided, and whether the debate changed it."""
    openings = report.openings
    if not any(vote.turn is not None for vote in openings.votes):
        return ""
    said = _e(openings.explanation)
    rows = "".join(
        f'<tr><td>{_name(report, vote.seat)}</td><td class="n">{_turn(report, vote.turn)}</td>'
        f"<td><code>{_e(vote.stance or 'no stance')}</code></td><td>{_e(vote.vote)}</td>"
        f'<td class="text">{_text(vote.first_line)}</td></tr>'
        if vote.turn is not None
        else f'<tr><td>{_name(report, vote.seat)}</td><td class="n">—</td><td>—</td><td>no turn</td><td>—</td></tr>'
        for vote in openings.votes
    )
    table = (
        "<table><tr><th>Participant</th><th>Opening turn</th><th>Stance</th><th>Vote</th>"
        f"<th>Position, first line</th></tr>{rows}</table>"
    )
    return (
        f'<section class="openings"><h2>Against the openings\' vote</h2>'
        f"<p>{f'<strong>{said}</strong>' if openings.changed else said}</p>{_scrolling(table)}</section>"
    )


def _synthesis(report: Report) -> str:
    """The chair's synthesis, whole, beside each seat's final stance; then where the chair departs from one."""
    view = report.synthesis
    if view is None:
        return ""
    paragraphs = "".join(f"<p>{_text(p)}</p>" for p in view.text.split("\n\n") if p.strip())
    rows = "".join(
        f'<tr><td class="n">{s.seat}</td><td>{_name(report, s.seat)}</td>'
        f"<td>{words.final_stance(s.stance, lambda text: f'<strong>{_e(text)}</strong>', _e)}</td>"
        f'<td class="n">{_turn(report, s.turn)}</td></tr>'
        for s in view.final_stances
    )
    table = (
        "<table><thead><tr><th>Seat</th><th>Participant</th><th>Final stance</th><th>Turn</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )

    def listed(title: str, items: tuple[str, ...]) -> str:
        return f"<h3>{title}</h3><ul>{''.join(f'<li>{_text(item)}</li>' for item in items)}</ul>" if items else ""

    none = f'<h3>Departures</h3><p class="muted">none ({_e(words.DEPARTURES_NOTE)})</p>'
    return (
        '<section><h2>The chair\'s synthesis</h2><div class="pair">'
        f'<div><p class="muted">Turn {_turn(report, view.turn)}:</p><div class="summary">{paragraphs}</div></div>'
        f'<div><p class="muted">Each seat\'s final stance:</p><div class="fit">{table}</div></div></div>'
        + listed("Agreed", view.agreed)
        + listed("Still open", view.still_open)
        + (listed("Departures", view.departures) or none)
        + "</section>"
    )


def _position(report: Report, position: SeatPosition, *, label: str) -> str:
    """A Position in full, its line breaks kept (``white-space: pre-wrap``), after ``label`` (HTML) and its turn."""
    return (
        f'<p class="muted">{label}, turn {_turn(report, position.turn)}, {_e(position.stance or "no stance")}:</p>'
        f'<div class="position">{_text(position.text) or "<em>no Position</em>"}</div>'
    )


def _flagged(report: Report, flagged: tuple[FlaggedCitation, ...]) -> str:
    items = "".join(
        f"<li>Turn {_turn(report, c.turn)} ({_name(report, c.seat)}), "
        f"<strong>{_e(c.verdict)}</strong>: {_text(c.url or c.item)}"
        + (f' <span class="muted">({_e(c.reason)})</span>' if c.reason else "")
        + f"; {words.resting(c, lambda n: _turn(report, n))}.</li>"
        for c in flagged
    )
    return (
        f'<div class="warning"><strong>⚠ Citations not to rely on</strong> (<code>duel verify</code>: '
        f"{_e(words.flagged_counts(flagged))}):<ul>{items}</ul></div>"
    )


def _revision(revision: RevisionView) -> str:
    """The agreed revision's diff, each added, removed and hunk line coloured."""
    kinds = (("+++", ""), ("---", ""), ("+", "add"), ("-", "del"), ("@@", "hunk"))
    lines = []
    for line in revision.diff.splitlines():
        kind = next((css for start, css in kinds if line.startswith(start)), "")
        lines.append(f'<span class="{kind}">{_e(line)}</span>' if kind else f"<span>{_e(line)}</span>")
    return (
        f"<h3>Revision <code>{_e(revision.id)}</code></h3><p>{_e(words.revision_summary(revision))}.</p>"
        f'<pre class="diff">{"".join(lines)}</pre>'
    )


def _changes(report: Report) -> str:
    if not report.changes:
        return ""
    cards = "".join(_seat_change(report, change) for change in report.changes)
    items = ""
    if report.unresolved:
        items = f"<h3>Every unresolved item, and what became of it</h3>{block(items_table(report, report.unresolved))}"
    return f'<section><h2>What the debate changed</h2><div class="seats">{cards}</div>{items}</section>'


def _seat_change(report: Report, change: SeatChange) -> str:
    moved = "".join(
        f"<li>{_e(r.previous or 'no stance')} → {_e(r.stance or 'no stance')} in turn {_turn(report, r.turn)}"
        + (f': <span class="muted">{"; ".join(_text(s) for s in r.support)}</span>' if r.support else "")
        + "</li>"
        for r in change.revisions
    )
    adopted = "".join(f"<li>{_text(q.text)} (turn {_turn(report, q.turn)})</li>" for q in change.adopted)
    held = "".join(f"<li>{_text(q.text)} (raised in turn {_turn(report, q.turn)})</li>" for q in change.held)

    def listed(title: str, items: str) -> str:
        return f"<p><strong>{title}</strong>" + (
            f"</p><ul>{items}</ul>" if items else ' <span class="muted">none</span></p>'
        )

    return (
        f'<div class="seat"><h3>{_name(report, change.seat)}</h3><div class="pair">'
        f"<div>{_position(report, change.opening, label='Opening')}</div>"
        f"<div>{_position(report, change.final, label='Final')}</div></div>"
        + listed("Moved toward consensus:", moved)
        + listed("Took up from others:", adopted)
        + listed("Held open:", held)
        + "</div>"
    )


def _outcome_details(report: Report) -> str:
    """How it ended: the blocking items left, the close's summary, the verification sidecar's standing."""
    facts = report.outcome
    parts = []
    if facts.blocking:
        items = "".join(
            f"<li>turn {_turn(report, q.turn)} ({_name(report, report.schedule.speaker(q.turn))}): {_text(q.text)}</li>"
            for q in facts.blocking
        )
        parts.append(f"<p>Blocking items left:</p><ul>{items}</ul>")
    if facts.summary:
        paragraphs = "".join(f"<p>{_text(p)}</p>" for p in facts.summary.split("\n\n") if p.strip())
        parts.append(f'<div class="summary"><p class="muted">Close summary:</p>{paragraphs}</div>')
    if report.verification is not None:
        parts.append(f"<p>{_e(words.verification(report.verification))}.</p>")
    return f"<section><h2>How it ended</h2>{''.join(parts)}</section>" if parts else ""


def _plays(persona: str | None) -> str:
    return f' <span class="persona">plays {_e(persona)}</span>' if persona else ""


def _participants(report: Report) -> str:
    rows = "".join(
        f'<tr><td class="n">{p.seat}</td><td>{_name(report, p.seat)}{_plays(p.persona)}</td><td>{_e(p.harness)}</td>'
        f"<td><code>{_e(p.model)}</code></td><td>{_e(words.signed_by(p.signed_by))}</td>"
        f"<td>{_turn_links(report, p.turns)}</td>"
        f'<td class="n">{_e(words.token_counts(p.usage))}</td><td class="n">{_e(words.cost(p.usage))}</td></tr>'
        for p in report.participants
    )
    total = (
        ""
        if report.usage is None
        else f'<tr><td></td><td colspan="6"><strong>Total</strong></td><td class="n">{_e(words.total_cost(report))}</td></tr>'
    )
    return (
        "<section><h2>Participants</h2>"
        + _scrolling(
            "<table><thead><tr><th>Seat</th><th>Participant</th><th>Harness</th><th>Model</th><th>Signed by</th>"
            "<th>Turns</th>"
            f"<th>Tokens</th><th>Cost</th></tr></thead><tbody>{rows}{total}</tbody></table>"
        )
        + "</section>"
    )


def _provenance(report: Report) -> str:
    """Each turn's provider, models, reasoning, tokens, cost, retries, repairs and seconds; another model than the
    one asked for in red."""
    if not report.provenance:
        return ""
    heads = ("Turn", "Participant", *words.PROVENANCE_COLUMNS)
    rows = []
    for turn in report.provenance:
        number = _turn(report, turn.turn) if turn.written else f"{turn.turn} (not written)"
        cells = [f"<td>{_e(text)}</td>" for text in words.provenance_cells(turn)]
        if turn.model_mismatch:
            cells[2] = f'<td class="other-model">{_e(words.answered_as(turn))}</td>'
        rows.append(f'<tr><td class="n">{number}</td><td>{_name(report, turn.seat)}</td>{"".join(cells)}</tr>')
    head = "".join(f"<th>{name}</th>" for name in heads)
    return (
        "<section><h2>Provenance</h2>"
        + _scrolling(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
        + "</section>"
    )


def _timeline(report: Report) -> str:
    if not report.timeline:
        return "<section><h2>Stances</h2><p>No turns yet.</p></section>"
    changes = [entry for entry in report.timeline if entry.changed]
    items = "".join(
        f'<li id="revision-{entry.turn}"><span class="changed">Turn {_turn(report, entry.turn)}</span>, '
        f"{_name(report, entry.seat)}: "
        f"{_e(entry.previous_stance or 'no stance')} → {_e(entry.stance or 'no stance')}, because:"
        + (
            "<ul>" + "".join(f"<li>{_text(item)}</li>" for item in entry.revision_support) + "</ul>"
            if entry.revision_support
            else " <em>no revision support given</em>"
        )
        + "</li>"
        for entry in changes
    )
    listed = f"<h3>Stance changes</h3><ul>{items}</ul>" if changes else ""
    return f'<section><h2>Stances</h2><div class="chart">{_svg(report)}</div>{listed}</section>'


# The chart's geometry, in SVG units (the viewBox scales it to the page, so its width is fixed).
_WIDTH, _LEFT, _RIGHT, _TOP, _ROW, _AXIS = 1000, 190, 24, 40, 36, 34
_LEGEND_ROW = 20  # a panel's legend wraps onto rows this far apart; the chart moves down with them


def _svg(report: Report) -> str:
    count = report.turn_count
    width = _WIDTH
    column = (width - _LEFT - _RIGHT) / count
    levels = sorted(STANCE_LEVELS.items(), key=lambda item: -item[1])
    legend, legend_rows = _legend(report)
    top = _TOP + _LEGEND_ROW * (legend_rows - 1)
    height = top + _ROW * len(levels) + _AXIS

    place = {entry.turn: index for index, entry in enumerate(report.timeline)}  # a turn's column

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
    for seat in range(1, report.schedule.seats + 1):
        points = " ".join(
            f"{x(e.turn)},{y(e.level)}" for e in report.timeline if e.seat == seat and e.level is not None
        )
        if points:
            dash = f' stroke-dasharray="{SEAT_DASHES[seat]}"' if SEAT_DASHES[seat] else ""
            parts.append(
                f'<polyline points="{points}" fill="none" stroke="{SEAT_COLOURS[seat]}" stroke-width="2.5"{dash}/>'
            )
    parts += [
        _marker(report, entry, x(entry.turn), y(entry.level)) for entry in report.timeline if entry.level is not None
    ]
    parts += legend
    parts.append("</svg>")
    return "".join(parts)


def _legend(report: Report) -> tuple[list[str], int]:
    """Each seat's line and name, then what a ring means; and how many rows they take. A panel's legend wraps
    before an entry that would pass the chart's right edge; a two-seat legend stays on one row, as before panels."""
    parts, x, row = [], _LEFT, 0
    note = "ringed: stance changed (links to its support)"
    entries = [(seat, f"{report.name_of(seat)} (seat {seat})") for seat in range(1, report.schedule.seats + 1)]
    for seat, label in [*entries, (None, note)]:
        width = (0 if seat is None else 34) + 8 * len(label)  # about 8 units a character at 14px
        if report.schedule.seats > 2 and x > _LEFT and x + width > _WIDTH - _RIGHT:
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


def _marker(report: Report, entry: TimelineEntry, cx: float, cy: float) -> str:
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
        f"<title>Turn {entry.turn}: {_e(report.name_of(entry.seat))}, {_e(entry.stance or 'no stance')}"
        f"{_e(change)}</title>"
    )
    if not entry.changed:
        return f"<g>{title}{shape}</g>"
    ring = f'<circle cx="{cx}" cy="{cy}" r="12" fill="none" stroke="{colour}" stroke-width="1.5"/>'
    return f'<a href="#revision-{entry.turn}">{title}{ring}{shape}</a>'


def _turns(report: Report) -> str:
    if not report.timeline:
        return ""
    rows = "".join(
        f'<tr><td class="n">{_turn(report, e.turn)}</td><td>{_name(report, e.seat)}</td><td>'
        + (
            f'<a class="changed" href="#revision-{e.turn}">{_e(e.stance or "no stance")}</a>'
            if e.changed
            else _e(e.stance or "no stance")
        )
        + f'</td><td class="n">{e.blocking}</td><td class="text">{_text(e.headline)}</td></tr>'
        for e in report.timeline
    )
    return (
        "<section><h2>Turns</h2>"
        + _scrolling(
            "<table><thead><tr><th>Turn</th><th>Participant</th><th>Stance</th><th>Blocking</th><th>Position</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>"
        )
        + "</section>"
    )


def _novel_arguments(report: Report) -> str:
    if not report.novel_arguments:
        return ""
    items = "".join(
        f"<li>Turn {_turn(report, a.turn)}, {_name(report, a.seat)}: {_text(a.claim) or '<em>no claim</em>'}"
        + ("<ul>" + "".join(f'<li class="muted">{_text(s)}</li>' for s in a.support) + "</ul>" if a.support else "")
        + "</li>"
        for a in report.novel_arguments
    )
    return f"<section><h2>Novel arguments ({len(report.novel_arguments)})</h2><ul>{items}</ul></section>"


def _citations(report: Report) -> str:
    if not report.citations:
        return ""
    facts = report.verification
    verified = facts is not None and facts.shown
    rows = []
    for c in report.citations:
        href = words.citation_href(report, c)
        item = _text(c.item) if href is None else f'<a href="{_e(href)}">{_e(c.item)}</a>'
        row = (
            f'<tr><td class="n">{_turn(report, c.turn)}</td><td>{_e(c.section or "—")}</td><td>{_e(c.kind)}</td>'
            f'<td class="text">{item}</td>'
        )
        if verified:
            row += f"<td>{_verdict(c.verdict, c.confidence, c.reason)}</td>"
        rows.append(row + "</tr>")
    verdict_head = "<th>Verdict</th>" if verified else ""
    status = (
        "No verification sidecar: URLs were not checked (<code>duel verify</code> checks them)."
        if facts is None
        else ""
    )
    return (
        f'<section><h2>Citations</h2><p class="muted">{_e(words.citation_kinds(report))}. {status}</p>'
        + _scrolling(
            f"<table><thead><tr><th>Turn</th><th>Section</th><th>Kind</th><th>Item</th>{verdict_head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
        + "</section>"
    )


def _verdict(verdict: str | None, confidence: str | None, reason: str | None) -> str:
    if verdict is None:
        return '<span class="muted">—</span>'
    label = f"{verdict} ({confidence})" if confidence else verdict
    title = f' title="{_e(reason)}"' if reason else ""
    css = re.sub(r"[^a-z_]", "", verdict.casefold())
    return f'<span class="verdict verdict-{css}"{title}>{_e(label)}</span>'


def _model_written(report: Report) -> str:
    return "".join(
        f'<section class="model-written"><h2>{_e(s.title)} by <code>{_e(s.model)}</code></h2>'
        f'<p class="muted"><strong>{LABEL.capitalize()}</strong>: {_e(words.model_checks(s))}</p>'
        + "".join(f"<p>{_text(p)}</p>" for p in words.model_text(s).split("\n\n") if p.strip())
        + "</section>"
        for s in report.model_written
    )


def _footer(report: Report) -> str:
    notes = "".join(f"<li>{_e(note)}</li>" for note in report.notes)
    return (
        f"<footer><p>Source sha256 <code>{_e(report.source_sha256)}</code> · chain head "
        f"<code>{_e(report.head_sha256)}</code>. Computed by <code>duel report</code> from the record: its "
        "structure and hash chain are checked here, the turn rules by <code>duel validate</code>.</p>"
        + (f"<ul>{notes}</ul>" if notes else "")
        + "</footer>"
    )
