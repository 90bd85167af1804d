"""The turn inside a model's answer, found before the answer is validated.

Models wrap their answers: a ```` ```markdown ```` fence, a line such as "Here is my
turn:", a `<think>…</think>` block from a local reasoning model, a closing "Let me know
if …" or a note in italics under a rule. Validated raw, each wrapper costs a repair round-trip (the whole prompt again),
so ``duel join`` removes them here, locally and for free, and records what it removed.

Conservative by construction: an answer that opens with the turn (blank lines, an
optional ``---`` line, then the `## Turn N` heading) and ends without a closing remark is
returned unchanged, and nothing is ever added. Linear time: line scans, and regexes with
no two unbounded repeats side by side.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..turns import FENCE, atx_heading, fenced_lines, section_label
from ..vocabulary import WRAPPERS

__all__ = ["Extraction", "extract_turn", "wrapper_notes"]

REASONING_BLOCK, PREAMBLE, CODE_FENCE, TRAILING_REMARK = WRAPPERS

# Matched at one position only (the leading \s* cannot backtrack across positions).
_REASONING_OPEN = re.compile(r"\s*<(think|thinking|reasoning)>", re.IGNORECASE)
_REASONING_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", re.IGNORECASE)
_REASONING_CLOSERS = {name: re.compile(rf"</{name}>", re.IGNORECASE) for name in ("think", "thinking", "reasoning")}
_REASONING_TAG = re.compile(r"</?(?:think|thinking|reasoning)>", re.IGNORECASE)
_TURN_WORD = re.compile(r"Turn[ \t]+#?\d", re.IGNORECASE)
_RULE = ("---", "***", "___")
# How a closing remark opens: words addressed to the reader, never the start of an argument.
_CLOSING_REMARK = re.compile(
    r"(?:please[ \t]+)?(?:let[ \t]+me[ \t]+know|i[ \t]+hope[ \t]+this|hope[ \t]+this|feel[ \t]+free|"
    r"happy[ \t]+to|i[ \t]+look[ \t]+forward|looking[ \t]+forward|thank[ \t]+you|thanks[ \t]+for)\b",
    re.IGNORECASE,
)
# A paragraph in italics throughout (`*…*` or `_…_`, never bold): after a rule, a note to the reader.
_ITALIC_NOTE = re.compile(r"([*_])(?![*_\s]).*(?<![\s*_])\1")
# What a support item or a reference holds: a paragraph with any of these may be an item, so it stays.
_LOOKS_CITED = re.compile(r"Turn[ \t]+\d|principle[ \t]*:|://|\.md\b|\.markdown\b", re.IGNORECASE)


@dataclass(frozen=True)
class Extraction:
    """The turn found in a model's answer, and the wrappers removed around it."""

    text: str  # the turn to validate: the answer itself when nothing was stripped
    stripped: tuple[str, ...] = ()  # vocabulary.WRAPPERS, in the order they stood in the answer


def extract_turn(answer: str) -> Extraction:
    """The turn inside ``answer``, and which wrappers were removed around it."""
    stripped: list[str] = []
    reasoning_end = _reasoning_end(answer)
    text = answer[reasoning_end:]
    if reasoning_end:
        stripped.append(REASONING_BLOCK)
    lines = text.split("\n")
    heading = _turn_heading(lines, 0)
    if heading is None:  # no turn to find: validated as it is, and the rejection says why
        return Extraction(text, tuple(stripped))
    opening, before = heading, _content_before(lines, heading)
    if before is not None and lines[before].strip() == "---":
        opening, before = before, _content_before(lines, before)
    end, trailer_outside = len(lines), False
    if before is not None:
        wrappers, end, trailer_outside = _opening_wrappers(lines, heading, before)
        stripped += wrappers
    body = lines[opening:end]
    remark = _closing_remark(body)
    if remark is not None:
        body = body[:remark]
    if trailer_outside or remark is not None:
        stripped.append(TRAILING_REMARK)
    if not stripped:
        return Extraction(answer)
    return Extraction("\n".join(body).rstrip() + "\n", tuple(stripped))


def wrapper_notes(extraction: Extraction) -> tuple[str, ...]:
    """What to tell a model whose draft was rejected about the form of its answer."""
    notes: list[str] = []
    if extraction.stripped:
        removed = ", ".join(_DESCRIPTIONS[kind] for kind in extraction.stripped)
        notes.append(
            f"Your answer had {removed} around the turn; it was removed and the turn below is what was "
            f"checked. Answer with the turn alone."
        )
    lines = [line for line in extraction.text.split("\n") if line.strip()]
    if lines and (_fence_opener(lines[0]) is not None or _fence_opener(lines[-1]) is not None):
        notes.append(
            "Your answer is inside a code fence (```), so its heading and section labels are not read as "
            "Markdown: write the turn without a fence, starting with its heading line."
        )
    if _REASONING_TAG.search(extraction.text):
        notes.append("Your answer holds a reasoning block (<think>…</think>): leave your reasoning out of the answer.")
    return tuple(notes)


_DESCRIPTIONS = {
    REASONING_BLOCK: "a reasoning block (<think>…</think>)",
    PREAMBLE: "text before the heading line",
    CODE_FENCE: "a code fence (```)",
    TRAILING_REMARK: "a closing remark after the last section",
}


def _opening_wrappers(lines: list[str], heading: int, before: int) -> tuple[list[str], int, bool]:
    """The wrappers that the content at line ``before`` opens (a preamble, a code fence), the line
    the turn ends before (a closing fence, else the end), and whether anything follows that fence."""
    found: list[str] = []
    end, trailer_outside = len(lines), False
    fence = _fence_opener(lines[before])
    if fence is None or _content_before(lines, before) is not None:
        found.append(PREAMBLE)
    if fence is not None:
        found.append(CODE_FENCE)
        closer = _fence_closer(lines, heading, fence)
        if closer is not None:
            end = closer
            trailer_outside = any(line.strip() for line in lines[closer + 1 :])
    return found, end, trailer_outside


def _reasoning_end(answer: str) -> int:
    """Where the answer's leading reasoning blocks end (0: it has none).

    A block opens the answer (blank space aside) and ends at its closing tag. A closing tag
    with no opening one (some servers put the opening tag in the prompt) ends reasoning when a
    turn heading follows it. An unclosed block is left: the turn heading, if any, ends it as
    text before the heading."""
    end = 0
    while opening := _REASONING_OPEN.match(answer, end):
        closing = _REASONING_CLOSERS[opening.group(1).casefold()].search(answer, opening.end())
        if closing is None:
            break
        end = closing.end()
    orphan = _REASONING_CLOSE.search(answer) if end == 0 else None
    if orphan and _turn_heading(answer[orphan.end() :].split("\n"), 0) is not None:
        end = orphan.end()
    return end


def _turn_heading(lines: list[str], start: int) -> int | None:
    """The first `## Turn N …` line at or after ``start``: level 2, as a valid turn has it."""
    for index in range(start, len(lines)):
        heading = atx_heading(lines[index])
        if heading and heading[0] == 2 and _TURN_WORD.match(heading[1]):
            return index
    return None


def _content_before(lines: list[str], index: int) -> int | None:
    while index > 0:
        index -= 1
        if lines[index].strip():
            return index
    return None


def _fence_opener(line: str) -> str | None:
    """The fence a line opens (```` ``` ````, ```` ````markdown ````, ``~~~``…), if it opens one."""
    opener = FENCE.match(line)
    if opener is None or (opener.group(1)[0] == "`" and "`" in line[opener.end() :]):
        return None
    return opener.group(1)


def _fence_closer(lines: list[str], heading: int, fence: str) -> int | None:
    """The line that closes a fence wrapping the turn: its last bare fence line, unless that line
    closes a code block of the turn itself (the wrapper was then left open)."""
    for index in range(len(lines) - 1, heading, -1):
        line = lines[index]
        bare = FENCE.match(line)
        if (
            bare
            and bare.group(1)[0] == fence[0]
            and len(bare.group(1)) >= len(fence)
            and not line.strip().lstrip(fence[0])
        ):
            inside_block = fenced_lines([*lines[heading:index], "end"])[-1]
            return None if inside_block else index
    return None


def _closing_remark(body: list[str]) -> int | None:
    """Where a closing remark starts in the turn's lines, if the turn ends with one.

    A closing remark is the turn's last paragraph, after its last section label and a blank
    line, that cites nothing (no `Turn N`, `Principle:`, URL or file name), so it cannot be an
    item of Unresolved Items or Stance Revision Support, and that either opens with words
    addressed to the reader ("Let me know", "I hope this", "Feel free", "Thank you", …) or,
    under a rule line (`---`), is in italics throughout (a note about the turn). The rule and
    blank lines just before it go with it."""
    last = _content_before(body, len(body))
    if last is None:
        return None
    first = last
    while first > 0 and body[first - 1].strip():
        first -= 1
    label = next((i for i in range(first - 1, -1, -1) if section_label(body[i])), None)
    if label is None or first - 1 <= label or len(body[first]) - len(body[first].lstrip(" ")) > 3:
        return None
    paragraph = " ".join(line.strip() for line in body[first : last + 1])
    rule = _content_before(body, first)
    ruled = rule is not None and rule > label and body[rule].strip() in _RULE and not body[rule - 1].strip()
    remark = _CLOSING_REMARK.match(paragraph) or (ruled and _ITALIC_NOTE.fullmatch(paragraph))
    if not remark or _LOOKS_CITED.search(paragraph):
        return None
    return rule if ruled else first
