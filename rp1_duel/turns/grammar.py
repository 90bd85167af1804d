"""Parse a submitted turn into its parts, whatever the text.

The turn format leans on Markdown's lazy continuation (section labels follow list
items without blank lines), so a whole-text Markdown parse would fold `**Agreements**`
into the last counterpoint. Labels are therefore found by scanning lines, and each
section body is parsed with mistune on its own. mistune's AST has no positions: line
numbers come from matching its list items and headings, in document order, against the
turn's lines.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, cast

import mistune

from ..vocabulary import (
    ACCEPTED_REVISION,
    AGREED,
    AGREEMENTS,
    AUDIENCE_ANSWERS,
    CHAIR_SECTIONS,
    COUNTERPOINTS,
    DEPARTURES,
    NOVEL_ARGUMENT,
    OPTIONAL_SECTIONS,
    POSITION,
    PROPOSED_EDITS,
    SECTIONS,
    SOURCE_CHALLENGES,
    SOURCE_CORRECTIONS,
    STANCE_REVISION_SUPPORT,
    STILL_OPEN,
    UNENGAGED_POINTS,
    UNRESOLVED_ITEMS,
)
from ._edits import NO_EDITS, EditSection, parse_edits
from .figures import FigureIndex
from .markdown import atx_heading, fenced_lines, front_matter_end, normalize_newlines, split_lines
from .matching import SearchableText, normalize_text
from .references import is_conjecture, urls_in_line

__all__ = [
    "Item",
    "ParsedTurn",
    "SupportItem",
    "lines_before_turn",
    "normalize_turn_text",
    "parse_turn",
    "section_label",
    "split_tag",
    "turn_heading",
]

_MARKDOWN = mistune.create_markdown(renderer=None)

_LABEL_NAME = re.compile(r"[A-Za-z][A-Za-z ]*")
# mistune matches emphasis in time quadratic in the delimiter runs of a paragraph. An
# honest section has a few dozen; past this many, a section is read with its `*` and `_`
# escaped (kept as text), so a hostile turn costs linear time.
MAX_EMPHASIS_RUNS = 500
_EMPHASIS_RUN = re.compile(r"[*_]+")
_EMPHASIS_CHAR = re.compile(r"([*_])")
_EMPHASIS = ("**", "__")
_SECTION_BY_KEY = {name.casefold(): name for name in (*SECTIONS, *OPTIONAL_SECTIONS)}
# A chair's turn is read with its own labels only, and a panelist's with the six: a panel
# turn's `**Question**` line stays text, as it always was.
_CHAIR_SECTION_BY_KEY = {name.casefold(): name for name in (*CHAIR_SECTIONS, PROPOSED_EDITS)}
# A chair's sections read item by item, and the field of ParsedTurn each goes to.
_CHAIR_LISTS = {UNENGAGED_POINTS: "points", AGREED: "agreed", STILL_OPEN: "still_open", DEPARTURES: "departures"}
# The sections read as plain items, and the field of ParsedTurn each fills.
_ITEM_LISTS = {
    **_CHAIR_LISTS,
    AUDIENCE_ANSWERS: "answers",
    SOURCE_CHALLENGES: "challenges",
    SOURCE_CORRECTIONS: "corrections",
}
_REVISION_ID = re.compile(r"`?(r-[0-9a-f]{12})`?")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$")
_EMPTY_BULLET = re.compile(r"^\s*(?:(?:[-*+]|\d{1,9}[.)])\s*)?$")
_SUPPORT_LABEL = re.compile(r"^ {0,3}(?:\*\*|__)?Support(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*(.*)$", re.IGNORECASE)
_FIELD = re.compile(r"^\s*(addresses|claim|support)\s*:\s*(.*)$", re.IGNORECASE)
_CLAIM_LABEL = re.compile(r"^\s*(?:\*\*|__)?claim(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*", re.IGNORECASE)
# Blocks that are layout, not content: they are neither items nor text of a section.
_NOT_ENTRIES = ("blank_line", "thematic_break", "heading")
# How many candidate lines past the cursor a node's start is looked for: real items are
# on the next few; the bound keeps hostile input from costing lines x nodes.
_SEARCH_WINDOW = 32
_TAG = re.compile(r"\((non-blocking|blocking)\)$")
_NOT_LETTER_OR_DIGIT = re.compile(r"[\W_]+")

# `## Turn 3 — Alice (codex / gpt-5) — CONVERGING`, any of — – - between the parts.
_TURN_NUMBER = re.compile(r"^Turn\s+#?(\d+)\b\s*(.*)$", re.IGNORECASE)
_LEADING_SEPARATOR = re.compile(r"^(?:[\u2014\u2013]|-{1,2})\s*")
_DASHES = "\u2014\u2013"


@dataclass(kw_only=True, frozen=True)
class Section:
    """A labelled section of a turn: its name, its body, and the lines it spans."""

    name: str
    body: str
    line: int  # the line of its label
    end_line: int  # the last line before the next label (or the end of the turn)

    @property
    def is_empty(self) -> bool:
        """Whether the body holds nothing: blank lines and empty list items (a lone `-`) only."""
        return all(_EMPTY_BULLET.match(line) for line in self.body.split("\n"))


@dataclass(frozen=True)
class Item:
    """A list item or paragraph of a section, as text, with the line it starts on."""

    text: str
    line: int | None


@dataclass(frozen=True)
class SupportItem:
    """A support item (a URL, a source locator, a turn reference, a principle), with its line and section."""

    text: str
    line: int | None
    section: str


@dataclass(kw_only=True, frozen=True)
class Counterpoint:
    """One counterpoint: what it addresses, its claim, its support items."""

    addresses: str | None
    claim: str | None
    support: tuple[SupportItem, ...]
    line: int | None


@dataclass(frozen=True)
class UnresolvedItem:
    """An unresolved item and whether its tag says blocking."""

    text: str
    blocking: bool | None  # None: untagged
    line: int | None


@dataclass(frozen=True)
class Heading:
    """A heading of level 1 or 2 inside a turn, besides the turn heading."""

    level: int
    text: str
    line: int | None


@dataclass(kw_only=True, frozen=True)
class ParsedTurn:
    """A turn read into its parts by :func:`parse_turn`: heading fields, sections and their items, what looked wrong."""

    text: str  # the normalised turn text, as the service stores it
    heading: str | None = None
    heading_line: int | None = None
    heading_level: int | None = None
    number: int | None = None
    name: str | None = None
    harness: str | None = None
    model: str | None = None
    stance: str | None = None
    text_before_heading_line: int | None = None
    text_before_heading: str = ""  # that line, stripped
    front_matter_line: int | None = None
    sections: Mapping[str, Section] = field(default_factory=dict)  # first of each, in order found
    duplicate_sections: tuple[Section, ...] = ()
    counterpoints: tuple[Counterpoint, ...] = ()
    agreements: tuple[Item, ...] = ()
    novel_claim: str = ""
    novel_claim_line: int | None = None
    novel_support: tuple[SupportItem, ...] = ()
    unresolved: tuple[UnresolvedItem, ...] = ()
    points: tuple[Item, ...] = ()  # a chair's Unengaged Points
    agreed: tuple[Item, ...] = ()  # a chair's synthesis: its Agreed items,
    still_open: tuple[Item, ...] = ()  # its Still Open items
    departures: tuple[Item, ...] = ()  # and its Departures items (SILENT_OVERRULE)
    answers: tuple[Item, ...] = ()  # its Audience Answers items, `Q3: …` (QUESTION_UNANSWERED)
    challenges: tuple[Item, ...] = ()  # its Source Challenges items, `Turn 3 <URL>: …` (CHALLENGE_*)
    corrections: tuple[Item, ...] = ()  # its Source Corrections items, `Replacing <URL> with <URL>: …`
    chair: bool = False  # read with the chair's grammar
    stance_revision_support: tuple[SupportItem, ...] = ()
    edits: EditSection = NO_EDITS  # the Proposed Edits section's, when the turn has one
    accepted_revision: str | None = None  # the revision id its Accepted Revision section names, if it reads as one
    extra_headings: tuple[Heading, ...] = ()  # headings of level 1 or 2 besides the turn heading
    parser_html: tuple[Item, ...] = ()  # raw HTML the Markdown parser read, at the line of its block
    markdown_failed: bool = False

    @property
    def position(self) -> str:
        """The Position section's body; empty without one."""
        section = self.sections.get(POSITION)
        return section.body if section else ""

    @property
    def has_blocking(self) -> bool:
        """Whether an unresolved item is tagged blocking."""
        return any(item.blocking for item in self.unresolved)

    @property
    def support_items(self) -> tuple[SupportItem, ...]:
        """Every support item, in order: the counterpoints', the Novel Argument's, the Stance Revision Support's."""
        cited = [s for c in self.counterpoints for s in c.support]
        return (*cited, *self.novel_support, *self.stance_revision_support)

    @property
    def claims(self) -> tuple[str, ...]:
        """The counterpoints' claims, then the Novel Argument's, those that are there."""
        found = [c.claim for c in self.counterpoints if c.claim]
        return (*found, self.novel_claim) if self.novel_claim else tuple(found)

    @cached_property
    def _conjectures(self) -> tuple[bool, SearchableText]:
        """Whether every claim is tagged (there being one), and the tagged claims as one searchable text:
        joined by NUL, which parsing leaves in no text, so no excerpt spans two. Built once, asked often."""
        claims = self.claims
        tagged = [claim for claim in claims if is_conjecture(claim)]
        return bool(claims) and len(tagged) == len(claims), SearchableText("\x00".join(tagged))

    def points_at_conjecture(self, excerpt: str | None) -> bool:
        """Whether `Turn N` (quoting ``excerpt``, if any) cites a conjecture of this turn: the excerpt lies
        inside a claim tagged `[CONJECTURE]`; without an excerpt, every claim of the turn is tagged."""
        all_tagged, tagged = self._conjectures
        return all_tagged if excerpt is None else tagged.contains(excerpt)

    @cached_property
    def _searchable(self) -> SearchableText:
        # Built on first use: only turns that later turns quote ever need it.
        return SearchableText(self.text)

    def contains_excerpt(self, excerpt: str) -> bool:
        """Whether ``excerpt`` is quoted from this turn, as the rules match quotes."""
        return self._searchable.contains(excerpt)

    @cached_property
    def figures(self) -> FigureIndex:
        """The numbers the turn states (CLOSING_NEW_MATERIAL, FIGURE_NOT_IN_SOURCE); indexed on first use."""
        return FigureIndex(self.text)

    @cached_property
    def urls(self) -> frozenset[str]:
        """Every URL the turn mentions outside code spans (CLOSING_NEW_MATERIAL)."""
        return frozenset(url for line in self.text.split("\n") for url in urls_in_line(line))

    def section_at(self, line: int | None) -> str | None:
        """The name of the section holding turn line ``line``, if any."""
        if line is None:
            return None
        for section in (*self.sections.values(), *self.duplicate_sections):
            if section.line <= line <= section.end_line:
                return section.name
        return None


def turn_heading(number: int, *, name: str, harness: str, model_id: str, last: str) -> str:
    """Turn ``number``'s heading line as the rules expect it; ``last`` is its stance, CHAIR for the
    chair's, or a placeholder a prompt asks to fill."""
    return f"## Turn {number} \u2014 {name} ({harness} / {model_id}) \u2014 {last}"


def normalize_turn_text(text: str) -> str:
    """The body the service stores and hashes: LF line ends, no leading `---`, one final newline."""
    lines = _normalized_lines(text)
    return "\n".join(lines[_turn_start(lines) :]).rstrip() + "\n"


def lines_before_turn(text: str) -> int:
    """How many lines of ``text`` :func:`normalize_turn_text` drops before the turn (blank lines
    and a leading `---`): line N of the stored turn is line N plus this of ``text``."""
    return _turn_start(_normalized_lines(text))


def _normalized_lines(text: str) -> list[str]:
    return normalize_newlines(text).removeprefix("\ufeff").split("\n")


def _turn_start(lines: list[str]) -> int:
    start = _first_content(lines, 0)
    if start < len(lines) and lines[start].strip() == "---":
        start = _first_content(lines, start + 1)
    return start


def parse_turn(text: str, *, chair: bool = False) -> ParsedTurn:
    """Parse a turn (``chair``: a chair's, with its sections); never raises. Line numbers count
    the text as given, from 1."""
    lines = split_lines(text.replace("\x00", "\ufffd"))
    if lines:
        lines[0] = lines[0].removeprefix("\ufeff")
    return _TurnParser(lines, chair=chair).parse(normalize_turn_text(text))


def section_label(line: str, *, chair: bool = False) -> str | None:
    """The section a line such as `**Agreements**` or `__Novel argument:__` labels, if any
    (``chair``: the chair's sections)."""
    head = line.lstrip(" ")
    if len(line) - len(head) > 3:
        return None
    text = head.rstrip().removesuffix(":").rstrip()
    if len(text) < 5 or text[:2] not in _EMPHASIS or text[-2:] not in _EMPHASIS:
        return None
    name = text[2:-2].strip().removesuffix(":").rstrip()
    if not _LABEL_NAME.fullmatch(name):
        return None
    return (_CHAIR_SECTION_BY_KEY if chair else _SECTION_BY_KEY).get(" ".join(name.split()).casefold())


def _trailing_stance(rest: str) -> tuple[str, str] | None:
    """Split `Name (Harness / Model) — STANCE` at the separator before the last word.

    The separator is an em or en dash, or one or two hyphens after a space; the earliest
    one after which a single word remains wins.
    """
    body = rest
    start = len(body)
    while start > 0 and not body[start - 1].isspace():
        start -= 1
    word, before = body[start:], body[:start].rstrip()
    if word and before.endswith(tuple(_DASHES)):
        return before[:-1].rstrip(), word
    hyphens = len(before) - len(before.rstrip("-"))
    if word and 1 <= hyphens <= 2 and (len(before) == hyphens or before[-hyphens - 1].isspace()):
        return before[:-hyphens].rstrip(), word
    if word.startswith("-") and (start == 0 or body[start - 1].isspace()):
        after = word[2:] if word.startswith("--") and len(word) > 2 else word[1:]
        if after:
            return before, after
    cut = next((i for i, char in enumerate(word) if char in _DASHES and i + 1 < len(word)), None)
    if cut is None:
        return None
    return body[: start + cut].rstrip(), word[cut + 1 :]


def _claimant(text: str) -> tuple[str, str] | None:
    """`Name (inside)` split into the name and what the last parentheses hold."""
    opening = text.rfind("(")
    if not text.endswith(")") or opening < 0 or ")" in text[opening + 1 : -1]:
        return None
    return text[:opening].rstrip(), text[opening + 1 : -1]


def _first_content(lines: list[str], index: int) -> int:
    while index < len(lines) and not lines[index].strip():
        index += 1
    return index


def _key(text: str) -> str:
    """Letters and digits only: how a flattened AST text is matched back to its line."""
    return _NOT_LETTER_OR_DIGIT.sub("", text.casefold())


def _inline_text(nodes: list[dict[str, Any]]) -> str:
    """The text of inline nodes, markup dropped, links kept as `[text](url)` or the bare URL."""
    parts: list[str] = []
    for node in nodes:
        kind = node.get("type")
        if kind in ("softbreak", "linebreak"):
            parts.append("\n")
        elif kind == "link":
            inner = _inline_text(node.get("children", []))
            url = node.get("attrs", {}).get("url", "")
            parts.append(url if inner in ("", url) else f"[{inner}]({url})")
        elif "children" in node:
            parts.append(_inline_text(node["children"]))
        else:
            parts.append(node.get("raw", ""))
    return "".join(parts)


@dataclass(kw_only=True)
class _Entry:
    """One top-level item of a section: a list item, or a paragraph outside any list."""

    lines: list[str]  # its own text lines; nested lists are in `children`
    line: int | None
    is_list_item: bool
    children: list[_Entry] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(part.strip() for part in self.lines if part.strip())


class _Segment:
    """A run of turn lines parsed on its own, with AST nodes matched back to line numbers."""

    def __init__(self, lines: list[str], fenced: list[bool], first_line: int):
        self.first_line = first_line
        self.failed = False
        self.headings: list[Heading] = []
        self.html: list[Item] = []
        self._cursor = 0
        self._node_lines: dict[int, int | None] = {}
        # Where nodes may start, with the key each line offers: list items on marker lines,
        # other blocks on any non-blank line outside code fences.
        self._markers: list[tuple[int, str]] = []
        self._texts: list[tuple[int, str]] = []
        for index, line in enumerate(lines):
            if fenced[index] or not line.strip():
                continue
            self._texts.append((index, _key(line)))
            marker = _LIST_MARKER.match(line)
            if marker:
                self._markers.append((index, _key(marker.group(1) or "")))
        self.ast: list[dict[str, Any]] = []
        try:
            if any(s.strip() for s in lines):
                text = "\n".join(lines)
                if len(_EMPHASIS_RUN.findall(text)) > MAX_EMPHASIS_RUNS:
                    text = _EMPHASIS_CHAR.sub(r"\\\1", text)
                self.ast = cast("list[dict[str, Any]]", _MARKDOWN(text))
        except Exception:  # noqa: BLE001  a third-party parser must not make the validator raise, whatever it throws
            self.ast, self.failed = [], True
        self._locate(self.ast, top=True)
        self._collect_html(self.ast, self.first_line + self._texts[0][0] if self._texts else None)

    def entries(self) -> list[_Entry]:
        found: list[_Entry] = []
        for node in self.ast:
            kind = node.get("type")
            if kind == "list":
                found.extend(self._list_entries(node))
            elif kind not in _NOT_ENTRIES:
                found.append(_Entry(lines=_block_text(node).split("\n"), line=self._line_of(node), is_list_item=False))
        return found

    def _list_entries(self, list_node: dict[str, Any]) -> Iterator[_Entry]:
        for item in list_node.get("children", []):
            own: list[str] = []
            children: list[_Entry] = []
            for block in item.get("children", []):
                if block.get("type") == "list":
                    children.extend(self._list_entries(block))
                else:
                    own.extend(_block_text(block).split("\n"))
            yield _Entry(lines=own, line=self._line_of(item), is_list_item=True, children=children)

    def _line_of(self, node: dict[str, Any]) -> int | None:
        index = self._node_lines.get(id(node))
        return None if index is None else self.first_line + index

    def _locate(self, nodes: list[dict[str, Any]], *, top: bool) -> None:
        """Walk the AST in document order, pairing nodes with lines through one cursor."""
        for node in nodes:
            kind = node.get("type")
            if kind == "list":
                for item in node.get("children", []):
                    self._node_lines[id(item)] = self._find(item, markers=True)
                    self._locate(item.get("children", []), top=False)
            elif kind == "heading":
                index = self._find(node, markers=False)
                level = node.get("attrs", {}).get("level", 0)
                if level <= 2:
                    text = _inline_text(node.get("children", [])).replace("\n", " ")
                    line = None if index is None else self.first_line + index
                    self.headings.append(Heading(level, text, line))
            elif top and kind not in _NOT_ENTRIES:
                self._node_lines[id(node)] = self._find(node, markers=False)
                if kind == "block_quote":
                    self._locate(node.get("children", []), top=False)
            elif kind == "block_quote":
                self._locate(node.get("children", []), top=False)

    def _collect_html(self, nodes: list[dict[str, Any]], line: int | None) -> None:
        """HTML nodes, each at the line of the nearest block found (inline nodes have no line of their own),
        else at the segment's first line."""
        for node in nodes:
            here = self._line_of(node) or line
            if node.get("type") in ("block_html", "inline_html"):
                self.html.append(Item(str(node.get("raw", "")), here))
            self._collect_html(node.get("children", []), here)

    def _find(self, node: dict[str, Any], *, markers: bool) -> int | None:
        """The line where `node` starts, looking a bounded way past the cursor (linear overall)."""
        wanted = _key(_first_line_text(node))[:40]
        candidates = self._markers if markers else self._texts
        start = bisect.bisect_left(candidates, (self._cursor, ""))
        window = candidates[start : start + _SEARCH_WINDOW]
        found = next((index for index, key in window if key.startswith(wanted)), None)
        if found is None and markers and window:
            found = window[0][0]  # markup the key cannot see: a list item is on the next marker line
        if found is not None:
            self._cursor = found + 1
        return found


def _block_text(node: dict[str, Any]) -> str:
    kind = node.get("type")
    if kind in ("block_code", "block_html"):
        return str(node.get("raw", "")).rstrip("\n")
    if kind in ("paragraph", "block_text", "heading"):
        return _inline_text(node.get("children", []))
    return "\n".join(text for child in node.get("children", []) if (text := _block_text(child)))


def _first_line_text(node: dict[str, Any]) -> str:
    return _block_text(node).split("\n", 1)[0]


class _TurnParser:
    def __init__(self, lines: list[str], *, chair: bool = False):
        self.lines = lines
        self.chair = chair
        self.fenced = fenced_lines(lines)
        self.extra_headings: list[Heading] = []
        self.parser_html: list[Item] = []
        self.markdown_failed = False

    def parse(self, normalized: str) -> ParsedTurn:
        labels = [
            (index, name)
            for index, line in enumerate(self.lines)
            if not self.fenced[index] and (name := section_label(line, chair=self.chair))
        ]
        first_label = labels[0][0] if labels else len(self.lines)
        heading_index = next(
            (i for i in range(first_label) if not self.fenced[i] and atx_heading(self.lines[i])),
            None,
        )
        top_end = first_label if heading_index is None else heading_index
        content_start, front_matter_line = self._skip_opening(top_end)
        fields: dict[str, Any] = {"text": normalized, "front_matter_line": front_matter_line, "chair": self.chair}

        before = [i for i in range(content_start, top_end) if self.lines[i].strip()]
        if before and heading_index is not None:
            fields["text_before_heading_line"] = before[0] + 1
            fields["text_before_heading"] = self.lines[before[0]].strip()
        self._segment(content_start, top_end)
        if heading_index is not None:
            fields.update(self._heading(heading_index))
            self._segment(heading_index + 1, first_label)

        sections: dict[str, Section] = {}
        duplicates: list[Section] = []
        bounds = [index for index, _ in labels] + [len(self.lines)]
        for (index, name), end in zip(labels, bounds[1:], strict=True):
            body = "\n".join(self.lines[index + 1 : end]).strip("\n").rstrip()
            section = Section(name=name, body=body, line=index + 1, end_line=max(index + 1, end))
            if name in sections:
                duplicates.append(section)
                self._segment(index + 1, end)  # still checked for unsafe headings
                continue
            sections[name] = section
            fields.update(self._section_fields(name, index + 1, end))

        return ParsedTurn(
            **fields,
            sections=sections,
            duplicate_sections=tuple(duplicates),
            extra_headings=tuple(self.extra_headings),
            parser_html=tuple(self.parser_html),
            markdown_failed=self.markdown_failed,
        )

    def _skip_opening(self, end: int) -> tuple[int, int | None]:
        """Skip the optional leading `---` line; spot front matter (a fenced block before the heading).

        Only `---` opens a turn: a lone `+++` (TOML front matter to some renderers) stays, as text before the heading.
        """
        start = _first_content(self.lines, 0)
        if start >= end or self.lines[start].strip() not in ("---", "+++"):
            return start, None
        after = front_matter_end(self.lines, start, end)
        if after is not None:
            return after, start + 1
        return (start + 1 if self.lines[start].strip() == "---" else start), None

    def _heading(self, index: int) -> dict[str, Any]:
        # Never None: the index was chosen by this very test.
        level, text = cast("tuple[int, str]", atx_heading(self.lines[index]))
        fields: dict[str, Any] = {"heading": text, "heading_line": index + 1, "heading_level": level}
        number = _TURN_NUMBER.match(text)
        if not number:
            return fields
        fields["number"] = int(number.group(1))
        rest = number.group(2)
        separator = _LEADING_SEPARATOR.match(rest)
        if not separator:
            return fields
        rest = rest[separator.end() :]
        stance = _trailing_stance(rest)
        if stance:
            rest, fields["stance"] = stance
        claimant = _claimant(rest.strip())
        if not claimant:
            fields["name"] = rest.strip() or None
            return fields
        fields["name"] = claimant[0].strip() or None
        inside = claimant[1]
        harness, slash, model = inside.partition(" / ") if " / " in inside else inside.partition("/")
        fields["harness"] = harness.strip() or None
        fields["model"] = (model.strip() or None) if slash else None
        return fields

    def _segment(self, start: int, end: int) -> _Segment:
        segment = _Segment(self.lines[start:end], self.fenced[start:end], start + 1)
        self.extra_headings.extend(segment.headings)
        self.parser_html.extend(segment.html)
        self.markdown_failed |= segment.failed
        return segment

    def _section_fields(self, name: str, start: int, end: int) -> dict[str, Any]:
        if name == PROPOSED_EDITS:  # fenced blocks of exact text: read line by line, not as Markdown
            return {"edits": parse_edits(self.lines[start:end], start + 1)}
        if name == NOVEL_ARGUMENT:
            return self._novel_argument(start, end)
        if name == COUNTERPOINTS:
            return {"counterpoints": _counterpoints(self._segment(start, end).entries())}
        entries = self._segment(start, end).entries()
        if name == AGREEMENTS:
            return {"agreements": tuple(Item(e.text, e.line) for e in entries)}
        if name == UNRESOLVED_ITEMS:
            return {"unresolved": tuple(_unresolved(e) for e in entries)}
        if name == STANCE_REVISION_SUPPORT:
            return {"stance_revision_support": tuple(SupportItem(e.text, e.line, name) for e in entries)}
        if name in _ITEM_LISTS:
            return {_ITEM_LISTS[name]: tuple(Item(e.text, e.line) for e in entries)}
        if name == ACCEPTED_REVISION:
            found = _REVISION_ID.fullmatch(" ".join(self.lines[start:end]).strip())
            return {"accepted_revision": found.group(1) if found else None}
        return {}

    def _novel_argument(self, start: int, end: int) -> dict[str, Any]:
        label = next(
            (i for i in range(start, end) if not self.fenced[i] and _SUPPORT_LABEL.match(self.lines[i])),
            None,
        )
        claim_end = end if label is None else label
        claim_lines = [self.lines[i] for i in range(start, claim_end)]
        self._segment(start, claim_end)
        claim = " ".join(" ".join(claim_lines).split())
        first = next((start + k + 1 for k, text in enumerate(claim_lines) if text.strip()), None)
        fields: dict[str, Any] = {
            "novel_claim": _CLAIM_LABEL.sub("", claim, count=1).strip(),
            "novel_claim_line": first,
        }
        if label is None:
            return fields
        support: list[SupportItem] = []
        inline = _SUPPORT_LABEL.match(self.lines[label])
        if inline and inline.group(1).strip():
            support.append(SupportItem(inline.group(1).strip(), label + 1, NOVEL_ARGUMENT))
        entries = self._segment(label + 1, end).entries()
        support.extend(SupportItem(e.text, e.line, NOVEL_ARGUMENT) for e in entries)
        fields["novel_support"] = tuple(support)
        return fields


def _counterpoints(entries: list[_Entry]) -> tuple[Counterpoint, ...]:
    # Prose around a list of counterpoints is commentary; prose alone must still parse as one.
    if any(entry.is_list_item for entry in entries):
        entries = [entry for entry in entries if entry.is_list_item]
    return tuple(_counterpoint(entry) for entry in entries)


def _counterpoint(entry: _Entry) -> Counterpoint:
    values: dict[str, list[str]] = {"addresses": [], "claim": []}
    support: list[SupportItem] = []
    current = None
    for offset, raw in enumerate(entry.lines):
        # Exact for a tight item; lines after a blank line inside the item may be off.
        line = None if entry.line is None else entry.line + offset
        labelled = _FIELD.match(raw)
        text = raw
        if labelled:
            current, text = labelled.group(1).casefold(), labelled.group(2)
        if not text.strip() or current is None:
            continue
        if current == "support":
            support.append(SupportItem(text.strip(), line, COUNTERPOINTS))
        else:
            values[current].append(text.strip())
    support.extend(SupportItem(child.text, child.line, COUNTERPOINTS) for child in entry.children)
    addresses = " ".join(values["addresses"]) or None
    claim = " ".join(values["claim"]) or None
    return Counterpoint(addresses=addresses, claim=claim, support=tuple(support), line=entry.line)


def split_tag(text: str) -> tuple[str, bool | None]:
    """An unresolved item's normalised words without its tag, and whether the tag says blocking (None: untagged)."""
    normalized = normalize_text(text)
    tag = _TAG.search(normalized)
    if tag is None:
        return normalized, None
    return normalized[: tag.start()].rstrip(), tag.group(1) == "blocking"


def _unresolved(entry: _Entry) -> UnresolvedItem:
    return UnresolvedItem(entry.text, split_tag(entry.text)[1], entry.line)
