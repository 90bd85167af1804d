"""``duel report --format md``: a report to paste as a pull-request comment on GitHub or GitLab.

It leads with the decision, then what the debate changed. The stance timeline is a Mermaid
``xychart-beta`` (both forges render it from a fenced block), with the same data as a table
under ``<details>``. Recorded text is untrusted: each piece is written on one line, with raw
HTML made text (``<`` as ``&lt;`` outside code spans) and mentions and issue references
broken, so pasting a report runs no markup, pings nobody and links no issue; a link's text
has every punctuation mark escaped, and its target is built from paths, never from turn text
(docs/protocol.md section 11).
"""

from __future__ import annotations

import html
import re
from dataclasses import replace

from .. import report_text as words
from .blocks import (
    MARKDOWN,
    Alert,
    Aside,
    Badge,
    Block,
    Box,
    Cards,
    Cell,
    Chart,
    Code,
    Diff,
    Emphasis,
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
from .data import MARKED_STANCES, STANCE_LEVELS, Report
from .sections import sections_of

__all__ = ["COMMENT_LIMIT", "cell", "code", "inline", "link", "render_markdown", "section", "summary"]

_BACKTICKS = re.compile(r"`+")
_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")  # ASCII punctuation: CommonMark lets a backslash escape each
# What GitHub and GitLab turn into a notification or a cross-reference: @name, ~label, %milestone,
# $12 (snippet), &12 (epic) and GH-12 starting a word; #12 and !12 (merge request) anywhere, as in owner/repo#12.
_REFERENCE = re.compile(r"(?<![\w@#!$&~%-])([@~%](?=\w)|[$&](?=\d)|GH-(?=\d))|([#!])(?=\d)")
_MERMAID_UNSAFE = re.compile(r"[^A-Za-z0-9 ._-]")
_ZERO_WIDTH_SPACE = "\u200b"
_TILDE_FENCE = re.compile(r"~{3,}")  # what opens a fenced code block at a line's start
COMMENT_LIMIT = 65_536  # characters in one GitHub comment (GitLab takes 1,000,000)
_LEFT_OUT = ": left out to fit one comment; `duel report --format html` shows them."


def render_markdown(report: Report) -> str:
    """The report as one comment: past GitHub's limit, the folds that give way (the citations, then the novel
    arguments, then the stance table) give way to a line pointing to ``--format html`` (docs/protocol.md
    section 11)."""
    parts = [part for run in sections_of(report) for part in run]
    text = _joined(parts)
    for order in sorted({fold.gives_way for fold in _folds(parts) if fold.gives_way}):
        if len(text) <= COMMENT_LIMIT:
            break
        parts = [_left_out(part, order) for part in parts]
        text = _joined(parts)
    return text


def _joined(parts: list[Section | None]) -> str:
    return "\n\n".join(filter(None, map(section, parts))) + "\n"


def _folds(parts: list[Section | None]) -> list[Fold]:
    return [one for part in parts if part is not None for one in part.blocks if isinstance(one, Fold)]


def _left_out(part: Section | None, order: int) -> Section | None:
    """The section with its folds that give way ``order``-th left out, a line saying where to find them."""
    if part is None:
        return None
    blocks = tuple(
        Paragraph((*one.left_out, _LEFT_OUT), style="note") if isinstance(one, Fold) and one.gives_way == order else one
        for one in part.blocks
    )
    return replace(part, blocks=blocks)


def inline(text: str) -> str:
    """Recorded text as one line of Markdown that holds no raw HTML, mention or issue reference."""
    text = " ".join(text.split())
    out: list[str] = []
    position = 0
    while position < len(text):
        opening = _BACKTICKS.search(text, position)
        if opening is None:
            out.append(_neutral(text[position:]))
            break
        out.append(_neutral(text[position : opening.start()]))
        escaped = opening.start() > 0 and text[opening.start() - 1] == "\\"
        closing = None if escaped else _closing(text, opening)
        if closing is None:  # a lone backtick run is text: escaped, so it opens no fence and no later code span
            out.append(("`" if escaped else "\\`") + "\\`" * (len(opening.group()) - 1))
            position = opening.end()
        else:  # a code span shows its text as it is: no HTML, no mention inside
            out.append(text[opening.start() : closing])
            position = closing
    return "".join(out)


def _closing(text: str, opening: re.Match[str]) -> int | None:
    for run in _BACKTICKS.finditer(text, opening.end()):
        if len(run.group()) == len(opening.group()):
            return run.end()
    return None


def _neutral(text: str) -> str:
    broken = _REFERENCE.sub(lambda found: found.group() + _ZERO_WIDTH_SPACE, text.replace("<", "&lt;"))
    return _TILDE_FENCE.sub(lambda found: "\\~" * len(found.group()), broken)


def summary(text: Inline) -> str:
    """Spans as the text of a ``<summary>``, where GitHub reads HTML and no Markdown: their words only, HTML-escaped
    (a code span too), on one line, mentions and references broken as :func:`inline` breaks them."""
    words_only = " ".join(_plain(text).split())
    return _REFERENCE.sub(lambda found: found.group() + _ZERO_WIDTH_SPACE, html.escape(words_only, quote=False))


def _plain(text: Inline) -> str:
    """The words of spans, in Markdown's wording, with no markup."""
    out: list[str] = []
    for one in text:
        if isinstance(one, str):
            out.append(one)
        elif isinstance(one, Untrusted | Code | PathLink):
            out.append(one.text)
        elif isinstance(one, SeatName):
            out.append(one.name)
        elif isinstance(one, TurnLink):
            out.append(str(one.number))
        elif isinstance(one, Per):
            out.append(_plain(one.markdown))
        else:
            out.append(_plain(one.content))
    return "".join(out)


def code(text: str) -> str:
    """Recorded text as a code span outside tables: its fence longer than any backtick run inside."""
    text = " ".join(text.split())
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text  # CommonMark strips one space
    return f"{fence}{padded}{fence}"


def cell(text: str) -> str:
    """Recorded text for a table cell: ``|`` escaped everywhere, code spans included (GFM splits cells first)."""
    return inline(text).replace("|", "\\|")


def link(text: str, href: str) -> str:
    """Recorded text as a link to ``href`` (a URL-encoded relative path): one line, mentions and references broken
    as :func:`inline` breaks them, every ASCII punctuation mark backslash-escaped, so no markup, code span,
    bracket or ``|`` inside ends the link or a table cell."""
    broken = _REFERENCE.sub(lambda found: found.group() + _ZERO_WIDTH_SPACE, " ".join(text.split()))
    return "[" + _PUNCTUATION.sub(lambda found: "\\" + found.group(), broken) + f"]({href})"


def section(part: Section | None) -> str:
    """A section as Markdown: its title as a third-level heading, its blocks a blank line apart; none, nothing."""
    if part is None:
        return ""
    blocks = [*filter(None, map(block, part.blocks))]
    if part.kind == "footer":
        return "\n\n".join(blocks)
    title = spans(part.title)
    heading = [f"{'##' if part.kind == 'header' else '###'} {title}"] if title else []
    return "\n\n".join([*heading, *blocks])


def block(part: Block) -> str:
    """One block as Markdown; a block only the page shows, nothing."""
    if isinstance(part, Paragraph):
        if part.style == "small":
            return f"<sub>{spans(part.text)}</sub>"
        return f"_{spans(part.text)}_" if part.style else spans(part.text)
    if isinstance(part, Subheading):
        return f"**{spans(part.text)}**:"
    if isinstance(part, Items):
        return "\n".join(f"- {spans(item if isinstance(item, tuple) else item.text)}" for item in part.items)
    if isinstance(part, Table):
        rows = ["| " + " | ".join(part.head) + " |", "|" + "---|" * len(part.head)]
        rows += [
            "| " + " | ".join(spans(one.text if isinstance(one, Cell) else one, in_cell=True) for one in row) + " |"
            for row in part.rows
        ]
        return "\n".join(rows)
    if isinstance(part, Position):
        lead = f"{spans(part.lead)}\n\n" if part.lead else ""
        return lead + (_quoted(part.text) or f"> _{part.empty}_")
    if isinstance(part, Prose):
        return _quoted(part.text) or (f"_{part.empty}_" if part.empty else "")
    return _framed(part)


def _framed(part: Box | Chart | Fold | Diff | Alert | Cards | Group | Only) -> str:
    if isinstance(part, Box):
        return "\n\n".join(filter(None, map(block, part.blocks)))
    if isinstance(part, Chart):
        return _mermaid(part)
    if isinstance(part, Fold):
        folded = "\n\n".join(filter(None, map(block, part.blocks)))
        return f"<details><summary>{summary(part.summary)}</summary>\n\n{folded}\n\n</details>"
    if isinstance(part, Diff):
        return f"**{spans(part.heading)}**: {spans(part.summary)}\n\n" + _fenced("diff", part.text)
    if isinstance(part, Alert):
        return f"> {spans(part.lead)}" + "".join(f"\n> - {spans(item)}" for item in part.items)
    if isinstance(part, Cards):
        return ""
    if isinstance(part, Group):
        return "\n".join(filter(None, map(block, part.blocks)))
    return block(part.block) if part.format == MARKDOWN else ""


def _quoted(text: str) -> str:
    """Recorded prose as a quote, a quoted blank line between its paragraphs; an empty text, nothing."""
    return "\n>\n".join(f"> {inline(p)}" for p in text.split("\n\n") if p.strip())


def spans(text: Inline, *, in_cell: bool = False) -> str:
    """Spans as Markdown: recorded text made one line of text (:func:`cell` in a table cell, else :func:`inline`)."""
    return "".join(_span(one, in_cell=in_cell) for one in text)


def _span(one: Span, *, in_cell: bool) -> str:
    if isinstance(one, str):
        return one
    if isinstance(one, Untrusted | SeatName):
        text = one.text if isinstance(one, Untrusted) else one.name
        return cell(text) if in_cell else inline(text)
    if isinstance(one, Code):
        return code(one.text)
    if isinstance(one, Strong):
        return f"**{spans(one.content, in_cell=in_cell)}**"
    if isinstance(one, Emphasis):
        return f"_{spans(one.content, in_cell=in_cell)}_"
    if isinstance(one, TurnLink):
        return f"[{one.number}]({one.href})"
    if isinstance(one, PathLink):
        return link(one.text, one.href)
    if isinstance(one, Aside | Badge):
        return spans(one.content, in_cell=in_cell)
    return spans(one.markdown, in_cell=in_cell)


def _fenced(language: str, text: str) -> str:
    """``text`` as a fenced code block: its fence longer than any backtick run inside, so nothing in it is markup."""
    fence = "`" * max(3, max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    body = text.rstrip("\n")
    return f"{fence}{language}\n{body}\n{fence}"


def _mermaid(chart: Chart) -> str:
    """One line per seat over the chart's rounds; a round a seat did not write ends its line."""
    seats = range(1, len(chart.names) + 1)
    names = {seat: _MERMAID_UNSAFE.sub("", chart.names[seat - 1])[:40] or f"seat {seat}" for seat in seats}
    title = " · ".join(f"{names[seat]} ({words.SEAT_COLOUR_NAMES[seat]})" for seat in seats)
    scale = ", ".join(f"{level} {stance}" for stance, level in STANCE_LEVELS.items())
    palette = ", ".join(words.SEAT_COLOURS[seat] for seat in seats)
    lines = [
        "```mermaid",
        f'%%{{init: {{"themeVariables": {{"xyChart": {{"plotColorPalette": "{palette}"}}}}}}}}%%',
        "xychart-beta",
        f'  title "Stance by round: {title}"',
        '  x-axis "round (turns)" [' + ", ".join(f'"{label}"' for label in chart.rounds) + "]",
        f'  y-axis "{scale}" 0 --> {max(STANCE_LEVELS.values())}',
    ]
    for seat in seats:
        levels = [entry.level for entry in chart.timeline if entry.seat == seat]
        # A stance a record's heading does not name has no level: the line stops before it.
        known = levels[: levels.index(None)] if None in levels else levels
        if known:
            lines.append("  line [" + ", ".join(str(level) for level in known) + "]")
    lines.append("```")
    marked = " and ".join(MARKED_STANCES)
    return "\n".join(lines) + f"\n\n_Scale: {scale}; {marked} are off the path to consensus._"
