"""The structure family: the turn is safe to store and show, its heading is its own, its sections in order.

Where the protocol is silent, this family decides:
- Line numbers count the submitted text as given (a leading `---` line is line 1);
  CRLF and a lone CR each end one line.
- The turn heading is the first ATX heading before the first section label, at any level
  (a wrong level is a HEADING violation, not an UNSAFE_STRUCTURE one). Text before it,
  other than the optional `---` line, is a HEADING violation.
- Only `---` may open a turn: a lone `+++` line is text before the heading (HEADING).
- Heading fields are compared exactly, runs of whitespace aside; stances are upper case.
- A section label is a line holding only `**Name**` (a trailing colon allowed), name
  case-insensitive. A repeated section is a SECTION_ORDER violation; its content is ignored.
- A section holding only empty bullets (`-`) is empty.
- UNSAFE_STRUCTURE: headings inside code blocks do not count; `<!-- /duel:` counts as a
  marker too; front matter is a `---` (or `+++`) block closed before the turn heading.
  A turn over 64 KiB (UTF-8 bytes) is not parsed further; a str with lone surrogates or
  bytes that are not UTF-8 are invalid UTF-8 (the rest is checked on a lossy decode).
- RAW_HTML: what counts is decided in :mod:`rp1_duel.turns.raw_html`; when that line scanner
  finds nothing, HTML the Markdown parser read still counts, at the line of its block. One
  violation a line. A `<!-- duel:` marker is UNSAFE_STRUCTURE, not also RAW_HTML.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...printable import CONTROL_CHARACTERS
from ...vocabulary import CHAIR_MARK, NON_EMPTY_SECTIONS, OPTIONAL_SECTIONS, SECTIONS, STANCES, RuleCode
from ..grammar import turn_heading
from ..markdown import normalize_newlines, split_lines
from ..raw_html import find_raw_html, html_snippet
from ._checked import Checked, Rule, TurnViolation, any_turn, panel_turn

__all__ = ["MAX_TURN_BYTES", "RULES", "decode"]

MAX_TURN_BYTES = 64 * 1024

_MARKER_NAME = re.compile(r"duel\s*:", re.IGNORECASE)
_TAG = re.compile(r"<(/?[A-Za-z][A-Za-z0-9-]*)")


def decode(text: str | bytes) -> tuple[str, list[TurnViolation], bool]:
    """The text to parse, encoding and size violations (UNSAFE_STRUCTURE), and whether the turn is oversize."""
    found: list[TurnViolation] = []
    if isinstance(text, bytes):
        raw = text
        try:
            decoded = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            line = raw.count(b"\n", 0, error.start) + 1
            found.append(
                TurnViolation(code=RuleCode.UNSAFE_STRUCTURE, message="the turn is not valid UTF-8", line=line)
            )
            decoded = raw.decode("utf-8", errors="replace")
    else:
        try:
            raw = text.encode("utf-8")
            decoded = text
        except UnicodeEncodeError as error:
            line = text.count("\n", 0, error.start) + 1
            found.append(
                TurnViolation(
                    code=RuleCode.UNSAFE_STRUCTURE, message="the turn is not valid UTF-8 (lone surrogate)", line=line
                )
            )
            raw = text.encode("utf-8", errors="surrogatepass")
            decoded = raw.decode("utf-8", errors="replace")
    oversize = len(raw) > MAX_TURN_BYTES
    if oversize:
        message = f"the turn is {len(raw)} bytes; the limit is {MAX_TURN_BYTES} bytes (64 KiB)"
        found.append(TurnViolation(code=RuleCode.UNSAFE_STRUCTURE, message=message))
    return decoded, found, oversize


def _markers(text: str) -> Iterator[int]:
    """Where `<!-- duel:` (or `<!-- /duel:`, any spacing and case) starts; linear time."""
    start = text.find("<!--")
    while start >= 0:
        at = start + 4
        at = len(text) - len(text[at:].lstrip()) if at < len(text) and text[at].isspace() else at
        if text.startswith("/", at):
            at += 1
            at = len(text) - len(text[at:].lstrip()) if at < len(text) and text[at].isspace() else at
        if _MARKER_NAME.match(text, at):
            yield start
        start = text.find("<!--", start + 4)


def _unsafe_structure(checked: Checked) -> Iterator[TurnViolation]:
    turn, code = checked.turn, RuleCode.UNSAFE_STRUCTURE
    yield from checked.encoding
    for number, line in enumerate(split_lines(checked.text), 1):
        if "\x00" in line:
            yield checked.violation(code, "the turn contains a NUL character", number)
    text = normalize_newlines(checked.text)
    for marker in _markers(text):  # on the whole text: a marker may span lines
        number = text.count("\n", 0, marker) + 1
        yield checked.violation(code, "`<!-- duel:` markers belong to the service, not to turns", number)
    if turn.front_matter_line is not None:
        yield checked.violation(code, "a turn has no front matter", turn.front_matter_line)
    for heading in turn.extra_headings:
        message = (
            f"level-{heading.level} heading {heading.text!r} is not allowed in a turn;"
            " use a `**label**` or a level-3 heading"
        )
        yield checked.violation(code, message, heading.line)
    if turn.markdown_failed:
        yield checked.violation(code, "the turn could not be parsed as Markdown")


def _control_characters(checked: Checked) -> Iterator[TurnViolation]:
    for number, line in enumerate(split_lines(checked.text), 1):
        control = CONTROL_CHARACTERS.search(line.replace("\x00", ""))
        if control:
            message = f"the line holds control character U+{ord(control.group()):04X}: remove it"
            yield checked.violation(RuleCode.CONTROL_CHARACTER, message, number)


def _raw_html(checked: Checked) -> Iterator[TurnViolation]:
    """The line scanner first; the Markdown parser's reading is a second opinion on what lines
    alone cannot tell (a link or list around a backtick), consulted when the scanner finds nothing."""
    text = normalize_newlines(checked.text).removeprefix("\ufeff")
    markers = set(_markers(text))  # a forged marker is UNSAFE_STRUCTURE already
    found: list[tuple[str, int | None]] = [
        (html.snippet, html.line) for html in find_raw_html(text) if html.offset not in markers
    ]
    if not found:
        found = [
            (html_snippet(item.text), item.line)
            for item in checked.turn.parser_html
            if next(_markers(item.text), None) is None
        ]
    reported: set[int | None] = set()
    for snippet, line in found:
        if line not in reported:  # one a line: the first says what to fix
            reported.add(line)
            yield checked.violation(RuleCode.RAW_HTML, _raw_html_message(snippet), line)


def _raw_html_message(snippet: str) -> str:
    if snippet.startswith("<!--"):
        return f"the HTML comment {snippet!r} would be invisible when rendered; write the note as plain text"
    tag = _TAG.match(snippet)
    example = f"<{tag.group(1)}>" if tag else snippet
    code = f"`` {example} ``" if "`" in example else f"`{example}`"
    return (
        f"raw HTML {snippet!r} would be read as markup when rendered, hiding or swallowing text;"
        f" write it in a code span: {code}"
    )


def _heading(checked: Checked) -> Iterator[TurnViolation]:
    turn, ctx, code = checked.turn, checked.ctx, RuleCode.HEADING
    slot = CHAIR_MARK if ctx.by_chair else "STANCE"
    expected = turn_heading(
        ctx.turn_number, name=ctx.participant_name, harness=ctx.harness, model_id=ctx.model_id, last=slot
    )
    if turn.heading is None:
        yield checked.violation(code, f"the turn must begin with its heading: `{expected}`")
        return
    line = turn.heading_line
    yield from _text_before_heading(checked)
    if turn.heading_level != 2:
        yield checked.violation(code, "the turn heading is a level-2 heading (`## `)", line)
    if turn.number is None:
        yield checked.violation(code, f"the heading must read `{expected}`", line)
        return
    if turn.number != ctx.turn_number:
        yield checked.violation(code, f"the heading says Turn {turn.number}; this is Turn {ctx.turn_number}", line)
    yield from _claimant(checked, expected, line)
    if _ends_with_chair_mark(checked):
        yield from _chair_mark(checked, line)


def _text_before_heading(checked: Checked) -> Iterator[TurnViolation]:
    """Only an optional `---` line may come before the heading (a `+++` one is told apart)."""
    turn = checked.turn
    if turn.text_before_heading == "+++":
        message = "a turn opens with `---` (or its heading), not `+++`"
        yield checked.violation(RuleCode.HEADING, message, turn.text_before_heading_line)
    elif turn.text_before_heading_line is not None:
        message = "nothing but an optional `---` line may come before the heading"
        yield checked.violation(RuleCode.HEADING, message, turn.text_before_heading_line)


def _claimant(checked: Checked, expected: str, line: int | None) -> Iterator[TurnViolation]:
    """The heading's name, harness and model are the claimant's own, runs of whitespace aside."""
    turn, ctx = checked.turn, checked.ctx
    claimed = (
        ("name", turn.name, ctx.participant_name),
        ("harness", turn.harness, ctx.harness),
        ("model", turn.model, ctx.model_id),
    )
    for what, written, own in claimed:
        if written is None:
            yield checked.violation(
                RuleCode.HEADING, f"the heading must give the claimant's {what}: `{expected}`", line
            )
        elif written.split() != own.split():
            message = f"the heading gives {what} {written!r}; the claimant's {what} is {own!r}"
            yield checked.violation(RuleCode.HEADING, message, line)


def _ends_with_chair_mark(checked: Checked) -> bool:
    """Whether the heading's last field is judged as the chair's mark: in a chair's turn, or `CHAIR` in a chaired
    duel (without a chair, `CHAIR` is a bad STANCE)."""
    return checked.ctx.by_chair or (checked.ctx.chair is not None and checked.turn.stance == CHAIR_MARK)


def _chair_mark(checked: Checked, line: int | None) -> Iterator[TurnViolation]:
    """The chair takes no stance: `CHAIR` stands in its place, and only in the chair's turns."""
    number, stance = checked.ctx.turn_number, checked.turn.stance
    if not checked.ctx.by_chair:
        message = f"turn {number} is a panelist's: only the chair's turns end with {CHAIR_MARK}; end the heading with a stance"
        yield checked.violation(RuleCode.HEADING, message, line)
    elif stance != CHAIR_MARK:
        message = f"turn {number} is the chair's, which takes no stance: end the heading with {CHAIR_MARK}" + (
            f", not {stance}" if stance else ""
        )
        yield checked.violation(RuleCode.HEADING, message, line)


def _stance(checked: Checked) -> Iterator[TurnViolation]:
    """The heading ends with a stance (a chair's mark is HEADING's)."""
    turn = checked.turn
    if turn.heading is None or turn.number is None or _ends_with_chair_mark(checked):
        return
    if turn.stance is None:
        message = f"the heading must end with a stance, one of {', '.join(STANCES)}"
        yield checked.violation(RuleCode.STANCE, message, turn.heading_line)
    elif turn.stance not in STANCES:
        message = f"{turn.stance!r} is not a stance; use one of {', '.join(STANCES)}"
        yield checked.violation(RuleCode.STANCE, message, turn.heading_line)


def _section_missing(checked: Checked) -> Iterator[TurnViolation]:
    for name in SECTIONS:
        if name not in checked.turn.sections:
            message = f"the **{name}** section is missing (a line `**{name}**`)"
            yield checked.violation(RuleCode.SECTION_MISSING, message, None, name)


def _section_order(checked: Checked) -> Iterator[TurnViolation]:
    latest, order = -1, (*SECTIONS, *OPTIONAL_SECTIONS)
    for name, section in checked.turn.sections.items():
        position = order.index(name)
        if position < latest:
            message = f"**{name}** must come before **{order[latest]}**"
            yield checked.violation(RuleCode.SECTION_ORDER, message, section.line, name)
        latest = max(latest, position)
    for section in checked.turn.duplicate_sections:
        message = f"**{section.name}** appears more than once"
        yield checked.violation(RuleCode.SECTION_ORDER, message, section.line, section.name)


def _section_empty(checked: Checked) -> Iterator[TurnViolation]:
    for name in SECTIONS:
        found = checked.turn.sections.get(name)
        if found is not None and name in NON_EMPTY_SECTIONS and found.is_empty:
            yield checked.violation(RuleCode.SECTION_EMPTY, f"the **{name}** section is empty", found.line, name)


RULES = (
    Rule(
        code=RuleCode.HEADING,
        text="the heading has the next turn number and the claimant's own name, harness and model"
        " (em dash, en dash or hyphen accepted as separators); only an optional `---` line comes before it",
        applies=any_turn,
        check=_heading,
    ),
    Rule(
        code=RuleCode.STANCE,
        text="the stance is one of `OPEN_TO_DEBATE`, `CONVERGING`, `ACCEPTING_CONSENSUS`, `DISSENTING`, `REVISING`",
        applies=panel_turn,
        check=_stance,
    ),
    Rule(
        code=RuleCode.SECTION_MISSING,
        text="all six sections are present, each label on a line of its own (`**Position**`)",
        applies=panel_turn,
        check=_section_missing,
    ),
    Rule(
        code=RuleCode.SECTION_ORDER,
        text="the sections come in this order, each once: Position, Counterpoints, Agreements,"
        " Novel Argument, Unresolved Items, Stance Revision Support, then the optional Source Corrections,"
        " Source Challenges, Audience Answers, Proposed Edits and Accepted Revision",
        applies=panel_turn,
        check=_section_order,
    ),
    Rule(
        code=RuleCode.SECTION_EMPTY,
        text="Position, Counterpoints, Agreements, Novel Argument and Unresolved Items are non-empty",
        applies=panel_turn,
        check=_section_empty,
    ),
    Rule(
        code=RuleCode.UNSAFE_STRUCTURE,
        text="no heading of level 1 or 2 besides the turn heading, no `<!-- duel:` marker,"
        " no front matter, valid UTF-8 without NUL, at most 64 KiB",
        applies=any_turn,
        check=_unsafe_structure,
    ),
    Rule(
        code=RuleCode.CONTROL_CHARACTER,
        text="no control character but tab and line ends (no ESC, BEL or C1 character):"
        " a terminal showing the record would obey it",
        applies=any_turn,
        check=_control_characters,
    ),
    Rule(
        code=RuleCode.RAW_HTML,
        text="no raw HTML outside code: a tag (`<details>`), comment (`<!-- … -->`) or the like goes"
        " in a code span or a fenced code block; autolinks (`<https://…>`) and entities (`&lt;`) are text",
        applies=any_turn,
        check=_raw_html,
    ),
)
