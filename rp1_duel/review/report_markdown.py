"""``duel report --format md``: a report to paste as a pull-request comment on GitHub or GitLab.

The stance timeline is a Mermaid ``xychart-beta`` (both forges render it from a fenced
block), with the same data as a table under ``<details>``. Recorded text is untrusted:
each piece is written on one line, with raw HTML made text (``<`` as ``&lt;`` outside code
spans) and mentions and issue references broken, so pasting a report runs no markup,
pings nobody and links no issue (docs/protocol.md section 11).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..schedule import CHAIR_SEAT
from . import report_text as words
from .assessment import LABEL
from .report import MARKED_STANCES, STANCE_LEVELS, Report, TimelineEntry

__all__ = ["cell", "code", "inline", "render_markdown"]

_BACKTICKS = re.compile(r"`+")
# What GitHub and GitLab turn into a notification or a cross-reference: @name, ~label, %milestone,
# $12 (snippet), &12 (epic) and GH-12 starting a word; #12 and !12 (merge request) anywhere, as in owner/repo#12.
_REFERENCE = re.compile(r"(?<![\w@#!$&~%-])([@~%](?=\w)|[$&](?=\d)|GH-(?=\d))|([#!])(?=\d)")
_MERMAID_UNSAFE = re.compile(r"[^A-Za-z0-9 ._-]")
_ZERO_WIDTH_SPACE = "\u200b"
COMMENT_LIMIT = 65_536  # characters in one GitHub comment (GitLab takes 1,000,000)


def render_markdown(report: Report) -> str:
    """The report as one comment: past GitHub's limit, the citations, then the novel arguments, then the
    stance table give way to a line pointing to ``--format html`` (docs/protocol.md section 11)."""
    parts = {
        "header": _header(report),
        "participants": _participants(report),
        "timeline": _timeline(report),
        "unresolved": _unresolved(report),
        "agreements": _agreements(report),
        "novel": _novel_arguments(report),
        "citations": _citations(report),
        "model_written": _model_written(report),
        "footer": _footer(report),
    }
    shorter: dict[str, Callable[[], str]] = {
        "citations": lambda: _left_out(words.citation_kinds(report)),
        "novel": lambda: _left_out(f"{len(report.novel_arguments)} novel arguments"),
        "timeline": lambda: _timeline(report, table=False),
    }
    text = _joined(parts)
    for name, short in shorter.items():
        if len(text) <= COMMENT_LIMIT:
            break
        parts[name] = short()
        text = _joined(parts)
    return text


def _joined(parts: dict[str, str]) -> str:
    return "\n\n".join(part for part in parts.values() if part) + "\n"


def _left_out(what: str) -> str:
    return f"_{what}: left out to fit one comment; `duel report --format html` shows them._"


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
        if closing is None:  # a lone backtick run is text
            out.append(opening.group())
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
    return _REFERENCE.sub(lambda found: found.group() + _ZERO_WIDTH_SPACE, text.replace("<", "&lt;"))


def code(text: str) -> str:
    """Recorded text as a code span outside tables: its fence longer than any backtick run inside."""
    text = " ".join(text.split())
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text  # CommonMark strips one space
    return f"{fence}{padded}{fence}"


def cell(text: str) -> str:
    """Recorded text for a table cell: ``|`` escaped everywhere, code spans included (GFM splits cells first)."""
    return inline(text).replace("|", "\\|")


def _header(report: Report) -> str:
    facts = report.outcome
    lines = [
        f"## {inline(words.title(report))}",
        "",
        f"**{inline(words.headline(report))}**  ",
        inline(facts.explanation),
    ]
    if facts.blocking:
        lines += ["", "Blocking items left:"]
        lines += [
            f"- turn {quote.turn} ({inline(report.name_of(report.schedule.speaker(quote.turn)))}): {inline(quote.text)}"
            for quote in facts.blocking
        ]
    if facts.summary:
        lines += ["", "Close summary:", ""]
        lines.append("\n>\n".join(f"> {inline(p)}" for p in facts.summary.split("\n\n") if p.strip()))
    if report.verification is not None:
        lines += ["", inline(words.verification(report.verification)) + "."]
    if not report.intact:
        lines += [
            "",
            "> **This record does not verify:** "
            + inline("; ".join(report.problems))
            + ". Run `duel validate` before trusting it.",
        ]
    return "\n".join(lines)


def _participants(report: Report) -> str:
    rows = ["| Seat | Participant | Harness | Model | Turns | Tokens | Cost |", "|---|---|---|---|---|---|---|"]
    rows.extend(
        f"| {p.seat} | {cell(p.name)} | {cell(p.harness)} | {cell(p.model)} | {words.turn_list(p.turns)} "
        f"| {words.token_counts(p.usage)} | {words.cost(p.usage)} |"
        for p in report.participants
    )
    return "\n".join(rows)


def _timeline(report: Report, *, table: bool = True) -> str:
    if not report.timeline:
        return "### Stances\n\nNo turns yet."
    changes = [entry for entry in report.timeline if entry.changed]
    lines = ["### Stances", "", _mermaid(report)]
    if changes:
        lines += ["", "Stance changes:"]
        lines += [
            f"- turn {entry.turn}, {inline(report.name_of(entry.seat))}: {inline(entry.previous_stance or 'no stance')}"
            f" → {inline(entry.stance or 'no stance')}, because: "
            + ("; ".join(inline(item) for item in entry.revision_support) or "no revision support given")
            for entry in changes
        ]
    if not table:
        return "\n".join([*lines, "", _left_out("The stances as a table")])
    rows = ["| Turn | Participant | Stance | Blocking | Position |", "|---|---|---|---|---|"]
    rows += [
        f"| {entry.turn} | {cell(report.name_of(entry.seat))} | {_stance(entry)} | {entry.blocking} "
        f"| {cell(entry.headline)} |"
        for entry in report.timeline
    ]
    lines += ["", "<details><summary>Stances as a table</summary>", "", *rows, "", "</details>"]
    return "\n".join(lines)


def _stance(entry: TimelineEntry) -> str:
    stance = cell(entry.stance or "no stance")
    return f"**{stance}** (changed)" if entry.changed else stance


def _mermaid(report: Report) -> str:
    """One line per seat over the rounds (turns 1–2, 3–4, … for two seats; 1–3, 4–6, … for three; a chair's
    turns left out); a round a seat did not write ends its line."""
    seats = range(1, report.schedule.seats + 1)
    panel_turns = sum(1 for entry in report.timeline if entry.seat != CHAIR_SEAT)
    rounds = -(-panel_turns // report.schedule.seats)
    turn = report.schedule.turn_of  # a chair's turns are not the panel's: its closing round comes one later
    names = {seat: _MERMAID_UNSAFE.sub("", report.name_of(seat))[:40] or f"seat {seat}" for seat in seats}
    title = " · ".join(f"{names[seat]} ({words.SEAT_COLOUR_NAMES[seat]})" for seat in seats)
    scale = ", ".join(f"{level} {stance}" for stance, level in STANCE_LEVELS.items())
    palette = ", ".join(words.SEAT_COLOURS[seat] for seat in seats)
    lines = [
        "```mermaid",
        f'%%{{init: {{"themeVariables": {{"xyChart": {{"plotColorPalette": "{palette}"}}}}}}}}%%',
        "xychart-beta",
        f'  title "Stance by round: {title}"',
        '  x-axis "round (turns)" ['
        + ", ".join(
            f'"{turn(report.schedule.seats * r + 1)}-{turn(report.schedule.seats * (r + 1))}"' for r in range(rounds)
        )
        + "]",
        f'  y-axis "{scale}" 0 --> {max(STANCE_LEVELS.values())}',
    ]
    for seat in seats:
        levels = [entry.level for entry in report.timeline if entry.seat == seat]
        # A stance a record's heading does not name has no level: the line stops before it.
        known = levels[: levels.index(None)] if None in levels else levels
        if known:
            lines.append("  line [" + ", ".join(str(level) for level in known) + "]")
    lines.append("```")
    marked = " and ".join(MARKED_STANCES)
    return "\n".join(lines) + f"\n\n_Scale: {scale}; {marked} are off the path to consensus._"


def _unresolved(report: Report) -> str:
    if not report.unresolved:
        return ""
    still = [item for item in report.unresolved if item.open]
    blocking = sum(1 for item in still if item.blocking)
    rows = [
        f"### Unresolved items ({len(still)} open, {blocking} of them blocking)",
        "",
        "| Item | By | Raised in | Tag | Answered in | Status |",
        "|---|---|---|---|---|---|",
    ]
    rows += [
        f"| {cell(item.text)} | {cell(report.name_of(item.seat))} | {item.raised_in} | {words.tag(item)} "
        f"| {words.turn_list(item.answered_in)} | {words.unresolved_status(item)} |"
        for item in report.unresolved
    ]
    return "\n".join(rows)


def _agreements(report: Report) -> str:
    if not report.agreements:
        return ""
    lines = [f"### Agreements ({len(report.agreements)})", ""]
    for agreement in report.agreements:
        who = words.everyone(report, agreement.seats) or ", ".join(report.name_of(s) for s in agreement.seats)
        turns = "turn" if len(agreement.turns) == 1 else "turns"
        lines.append(f"- {inline(agreement.text)} ({turns} {words.turn_list(agreement.turns)}; {inline(who)})")
    return "\n".join(lines)


def _novel_arguments(report: Report) -> str:
    if not report.novel_arguments:
        return ""
    lines = [f"<details><summary>Novel arguments ({len(report.novel_arguments)})</summary>", ""]
    for argument in report.novel_arguments:
        support = "; ".join(inline(item) for item in argument.support) or "no support"
        lines.append(
            f"- turn {argument.turn}, {inline(report.name_of(argument.seat))}: "
            f"{inline(argument.claim) or 'no claim'} (support: {support})"
        )
    return "\n".join([*lines, "", "</details>"])


def _citations(report: Report) -> str:
    if not report.citations:
        return ""
    verified = report.verification is not None and report.verification.shown
    unchecked = (
        []
        if report.verification
        else ["No verification sidecar: URLs were not checked (`duel verify` checks them).", ""]
    )
    rows = [
        f"<details><summary>{words.citation_kinds(report)}</summary>",
        "",
        *unchecked,
        "| Turn | Section | Kind | Item |" + (" Verdict |" if verified else ""),
        "|---|---|---|---|" + ("---|" if verified else ""),
    ]
    for citation in report.citations:
        row = f"| {citation.turn} | {citation.section or '—'} | {citation.kind} | {cell(citation.item)} |"
        if verified:
            row += f" {cell(_verdict(citation.verdict, citation.confidence))} |"
        rows.append(row)
    return "\n".join([*rows, "", "</details>"])


def _verdict(verdict: str | None, confidence: str | None) -> str:
    if verdict is None:
        return "—"
    return f"{verdict} ({confidence})" if confidence else verdict


def _model_written(report: Report) -> str:
    sections = [
        f"### {inline(section.title)} by {inline(section.model)} ({LABEL})\n\n"
        f"_{inline(words.model_checks(section))}_\n\n"
        + "\n>\n".join(f"> {inline(p)}" for p in words.model_text(section).split("\n\n") if p.strip())
        for section in report.model_written
    ]
    return "\n\n".join(sections)


def _footer(report: Report) -> str:
    notes = "".join(f" Note: {inline(note)}." for note in report.notes)
    return (
        f"<sub>Duel {code(report.duel_id)} · source {code(report.source_path)} "
        f"(sha256 {code(report.source_sha256[:12])}) · chain head {code(report.head_sha256[:12])} · "
        f"computed by `duel report` from the record: structure and hash chain checked, turn rules not "
        f"(`duel validate` checks them).{notes}</sub>"
    )
