"""The turn rules of PROTOCOL.md section 7, and the validator that applies them.

`RULES` is the single source of truth for the rule texts agents are given.

Where the protocol is silent, this module decides:
- Line numbers count the submitted text as given (a leading `---` line is line 1);
  CRLF and a lone CR each end one line.
- The turn heading is the first ATX heading before the first section label, at any level
  (a wrong level is a HEADING violation, not an UNSAFE_STRUCTURE one). Text before it,
  other than the optional `---` line, is a HEADING violation.
- Heading fields are compared exactly, runs of whitespace aside; stances are upper case.
- A section label is a line holding only `**Name**` (a trailing colon allowed), name
  case-insensitive. A repeated section is a SECTION_ORDER violation; its content is ignored.
- A section holding only empty bullets (`-`) is empty.
- Counterpoints are the section's list items; prose next to them is commentary. Without
  a list, each paragraph counts as a counterpoint (so it needs Addresses, Claim, Support).
- In Agreements, Unresolved Items and Stance Revision Support, each top-level list item
  and each paragraph outside a list is one item.
- `Addresses:` may name several targets separated by `|`. A target is `Turn M` or the
  source's `name#heading`; a source line or excerpt alone is ADDRESSES_UNKNOWN.
- Support items are those under a counterpoint's `Support:`, under the Novel Argument's
  `Support:`, and every entry of Stance Revision Support (leave it empty rather than
  writing "none"). Text after a reference (`design.md:12-18 (renewal)`) is a description.
- URLs may be `http://` or `https://`, bare, `<…>` or `[text](…)`.
- The source may be cited by file name, by the path given, or by any name in
  `TurnContext.source_names`, case-insensitively, with an optional leading `./`.
  A heading matches after normalisation, or as its GitHub anchor (`#lease-semantics`);
  text after the heading and a separator (` — `, ` - `, ` (`, `: `) is a description.
  A source name with no locator, or another `.md` file, is SUPPORT_KIND.
- Excerpts match word for word, whitespace, case, typographic quotes and dashes aside,
  and inline `*`, `_`, `` ` `` markers aside. An excerpt is checked against the whole
  source, not only the heading or lines cited with it. An empty excerpt is never found.
- Without a source document, source references are recognised by name but their
  locators are not checked.
- Grounding counts source and turn references among support items, resolved or not (one
  that does not resolve has its own violation). Addresses names what is countered; it is
  not evidence, so it does not ground a turn.
- NOVELTY compares the novel argument's claim (without a leading `Claim:`) with the
  positions and claims of earlier turns only; the caller adds each accepted turn to the
  index (`NoveltyIndex.add_turn`); without an index, repeats are not checked. Words are
  runs of letters and digits after `normalize_text`.
- A "scoped critique" (CONSENSUS_BLOCKED) is a counterpoint with Addresses and a Claim.
- Unresolved item tags are case-insensitive and may use any dash (`non–blocking`).
- UNSAFE_STRUCTURE: headings inside code blocks do not count; `<!-- /duel:` counts as a
  marker too; front matter is a `---` (or `+++`) block closed before the turn heading.
  A turn over 64 KiB (UTF-8 bytes) is not parsed further; a str with lone surrogates or
  bytes that are not UTF-8 are invalid UTF-8 (the rest is checked on a lossy decode).
- Violations come sorted by line (those without one last), then by rule order.
"""

from __future__ import annotations

import math
import re
import zlib
from collections import defaultdict
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from .source import SourceDocument, normalize_text, split_lines

if TYPE_CHECKING:
    from .turn import ParsedTurn

OPEN_TO_DEBATE = "OPEN_TO_DEBATE"
CONVERGING = "CONVERGING"
ACCEPTING_CONSENSUS = "ACCEPTING_CONSENSUS"
DISSENTING = "DISSENTING"
REVISING = "REVISING"
STANCES = (OPEN_TO_DEBATE, CONVERGING, ACCEPTING_CONSENSUS, DISSENTING, REVISING)

SECTIONS = (
    "Position",
    "Counterpoints",
    "Agreements",
    "Novel Argument",
    "Unresolved Items",
    "Stance Revision Support",
)
NON_EMPTY_SECTIONS = SECTIONS[:5]
MAX_TURN_BYTES = 64 * 1024
NOVELTY_THRESHOLD = 0.8

RULES = MappingProxyType(
    {
        "HEADING": "the heading has the next turn number and the claimant's own name, harness and model"
        " (em dash, en dash or hyphen accepted as separators)",
        "STANCE": "the stance is one of `OPEN_TO_DEBATE`, `CONVERGING`, `ACCEPTING_CONSENSUS`,"
        " `DISSENTING`, `REVISING`",
        "SECTION_MISSING": "all six sections are present, each label on a line of its own (`**Position**`)",
        "SECTION_ORDER": "the sections come in this order, each once: Position, Counterpoints, Agreements,"
        " Novel Argument, Unresolved Items, Stance Revision Support",
        "SECTION_EMPTY": "Position, Counterpoints, Agreements, Novel Argument and Unresolved Items are non-empty",
        "COUNTERPOINT_INCOMPLETE": "every counterpoint has Addresses, Claim and at least one Support item",
        "ADDRESSES_UNKNOWN": "Addresses names an earlier turn that exists, or a heading of the source",
        "SUPPORT_KIND": "every support item is a URL (`https://…`), a source reference, a turn reference,"
        " or `Principle: …`",
        "SOURCE_REF_NOT_FOUND": "every heading, line and quoted excerpt cited from the source exists in it",
        "TURN_REF_NOT_FOUND": "every turn cited exists and comes before this one,"
        " and a quoted excerpt from it appears in it",
        "NOVELTY": "the novel argument has support, and its claim repeats no earlier position or claim"
        " (same words after normalisation, or a token-set Jaccard similarity of 0.8 or more)",
        "UNRESOLVED_TAG": "every unresolved item ends with `(blocking)` or `(non-blocking)`",
        "STANCE_REVISION": "a stance different from this participant's previous one comes with"
        " non-empty Stance Revision Support",
        "CONSENSUS_BLOCKED": "`ACCEPTING_CONSENSUS` has no blocking item, at least one support item,"
        " and at least one non-blocking item or scoped critique",
        "UNGROUNDED": "the turn cites the source at least once, or (after turn 1) the source or an earlier turn",
        "UNSAFE_STRUCTURE": "no heading of level 1 or 2 besides the turn heading, no `<!-- duel:` marker,"
        " no front matter, valid UTF-8 without NUL, at most 64 KiB",
    }
)
_RULE_ORDER = {code: index for index, code in enumerate(RULES)}


@dataclass(frozen=True)
class TurnViolation:
    code: str
    message: str
    line: int | None = None
    section: str | None = None

    def to_dict(self) -> dict[str, Any]:
        found = {"code": self.code, "message": self.message, "line": self.line, "section": self.section}
        return {key: value for key, value in found.items() if value is not None}


@dataclass(frozen=True)
class TurnReport:
    turn: ParsedTurn
    violations: list[TurnViolation]

    @property
    def ok(self) -> bool:
        return not self.violations


# --- novelty -------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+")
# Frequent words go last in the token order, so they rarely land in a prefix and the
# posting lists that are probed stay short.
_COMMON_WORDS = frozenset(
    "a an and are as at be but by can do for from has have if in is it its not of on or"
    " so that the their then there these this to was we were what when which will with"
    " would you i our they should must may more than no all any".split()
)


def _words(text: str) -> list[str]:
    return _WORD.findall(normalize_text(text))


def _rank(token: str) -> tuple[bool, int, str]:
    return (token in _COMMON_WORDS, zlib.crc32(token.encode("utf-8")), token)


def _prefix_length(size: int) -> int:
    # Two sets with Jaccard >= t share a token within each one's first |s| - ceil(t|s|) + 1.
    return size - math.ceil(NOVELTY_THRESHOLD * size - 1e-9) + 1


class NoveltyIndex:
    """Earlier positions and claims, answering "does this repeat one?" in sublinear time.

    Exact repeats hit a set of word sequences; near repeats go through prefix filtering
    (the set-similarity-join trick) and a length filter, and only the surviving candidates
    are compared exactly.
    """

    def __init__(self, texts: Iterable[str] = ()):
        self._sequences: set[str] = set()
        self._sets: list[frozenset[str]] = []
        self._postings: defaultdict[str, list[int]] = defaultdict(list)
        for text in texts:
            self.add(text)

    def __len__(self) -> int:
        return len(self._sets)

    def add(self, text: str) -> None:
        words = _words(text)
        if not words:
            return
        self._sequences.add(" ".join(words))
        tokens = frozenset(words)
        record = len(self._sets)
        self._sets.append(tokens)
        for token in sorted(tokens, key=_rank)[: _prefix_length(len(tokens))]:
            self._postings[token].append(record)

    def add_turn(self, turn: ParsedTurn) -> None:
        self.add(turn.position)
        for claim in turn.claims:
            self.add(claim)

    def repeats(self, text: str) -> bool:
        words = _words(text)
        if not words:
            return False
        if " ".join(words) in self._sequences:
            return True
        tokens = frozenset(words)
        size = len(tokens)
        smallest, largest = NOVELTY_THRESHOLD * size, size / NOVELTY_THRESHOLD
        seen: set[int] = set()
        for token in sorted(tokens, key=_rank)[: _prefix_length(size)]:
            for record in self._postings.get(token, ()):
                if record in seen:
                    continue
                seen.add(record)
                other = self._sets[record]
                if smallest - 1e-9 <= len(other) <= largest + 1e-9 and _jaccard(tokens, other) >= NOVELTY_THRESHOLD:
                    return True
        return False


def _jaccard(first: frozenset[str], second: frozenset[str]) -> float:
    common = len(first & second)
    return common / (len(first) + len(second) - common)


# --- context -------------------------------------------------------------------------


@dataclass(frozen=True)
class TurnContext:
    turn_number: int
    participant_name: str
    harness: str
    model_id: str
    source: SourceDocument | None = None
    source_names: Sequence[str] = ()  # further names the source may be cited by
    prior_turns: Sequence[ParsedTurn] = ()  # turns 1..turn_number-1, in order
    previous_stance: str | None = None  # this participant's previous stance
    novelty: NoveltyIndex | None = None  # positions and claims of the prior turns

    @property
    def citable_names(self) -> tuple[str, ...]:
        names = list(self.source_names)
        if self.source is not None:
            names += [self.source.name, self.source.path]
        unique = {name.removeprefix("./") for name in names if name}
        return tuple(sorted(unique, key=len, reverse=True))  # longest first: paths before names

    def prior_turn(self, number: int) -> ParsedTurn | None:
        if not 1 <= number < self.turn_number:
            return None
        if number <= len(self.prior_turns) and self.prior_turns[number - 1].number == number:
            return self.prior_turns[number - 1]
        return next((turn for turn in self.prior_turns if turn.number == number), None)


# --- references ----------------------------------------------------------------------

_URL = re.compile(r"^(?:<https?://[^\s>]+>|https?://\S+|\[[^\]]*\]\(https?://[^)\s]+\))", re.I)
_PRINCIPLE = re.compile(r"^principle\s*:\s*(.*)$", re.I | re.S)
_TURN = re.compile(r"^turn\s+#?(\d+)\b", re.I)
_LINES = re.compile(r"^:(\d+)(?:\s*[-\u2013\u2014]\s*(\d+))?(?!\d)")
_OTHER_DOCUMENT = re.compile(r"^(\S+?\.(?:md|markdown))(?=$|[#:\s\"\u201c])", re.I)
_OPEN_QUOTES = '"\u201c\u201e'
_CLOSE_QUOTES = '"\u201d\u201c'
_BEFORE_EXCERPT = " \t:,\u2014\u2013-"
_HEADING_DESCRIPTION = re.compile(r"\s[\u2014\u2013-]\s|\s\(|:\s")
_LONGEST_HEADING = 300


@dataclass(frozen=True)
class Reference:
    """What a support item or an Addresses target cites."""

    kind: str  # "url", "principle", "turn", "source"; "other-document" or "unknown" when invalid
    text: str
    turn: int | None = None
    heading: str | None = None  # as written, a description possibly after it
    lines: tuple[int, int] | None = None
    excerpt: str | None = None

    @property
    def has_locator(self) -> bool:
        return self.heading is not None or self.lines is not None or self.excerpt is not None


def parse_reference(text: str, source_names: Sequence[str]) -> Reference:
    text = text.strip()
    if _URL.match(text):
        return Reference("url", text)
    principle = _PRINCIPLE.match(text)
    if principle:
        return Reference("principle" if principle.group(1).strip() else "unknown", text)
    turn = _TURN.match(text)
    if turn:
        return Reference("turn", text, turn=int(turn.group(1)), excerpt=_excerpt(text[turn.end() :]))
    cited = text.removeprefix("./")
    for name in source_names:
        rest = cited[len(name) :]
        if name and cited[: len(name)].casefold() == name.casefold() and (not rest or rest[0] in "#: \t" + _OPEN_QUOTES):
            return _source_reference(text, rest)
    if _OTHER_DOCUMENT.match(cited):
        return Reference("other-document", text)
    return Reference("unknown", text)


def _source_reference(text: str, rest: str) -> Reference:
    heading = lines = None
    if rest.startswith("#"):
        quote = next((i for i, char in enumerate(rest) if char in _OPEN_QUOTES), len(rest))
        heading, rest = rest[1:quote].strip(), rest[quote:]
    elif found := _LINES.match(rest):
        start = int(found.group(1))
        lines, rest = (start, int(found.group(2) or start)), rest[found.end() :]
    return Reference("source", text, heading=heading, lines=lines, excerpt=_excerpt(rest))


def _excerpt(rest: str) -> str | None:
    """A quoted excerpt at the start of `rest` (separators aside); up to the last closing quote."""
    rest = rest.lstrip(_BEFORE_EXCERPT)
    if not rest or rest[0] not in _OPEN_QUOTES:
        return None
    body = rest[1:]
    close = max(body.rfind(quote) for quote in _CLOSE_QUOTES)
    return body if close < 0 else body[:close]


def _heading_candidates(written: str) -> list[str]:
    """The heading as written, then shorter prefixes cut where a description may begin."""
    # Headings are short: cuts past the first few hundred characters would only cost time.
    cuts = [match.start() for match in _HEADING_DESCRIPTION.finditer(written[:_LONGEST_HEADING])]
    return [written] + [written[:cut] for cut in reversed(cuts)]


# --- validation ----------------------------------------------------------------------

_MARKER = re.compile(r"<!--\s*/?\s*duel\s*:", re.I)


def validate_turn(text: str | bytes, ctx: TurnContext) -> TurnReport:
    """Check a submitted turn against every rule; report all violations, never raise."""
    from .turn import parse_turn  # deferred: importing the rules must stay cheap

    decoded, found, oversize = _check_encoding(text)
    if oversize:
        return TurnReport(parse_turn(""), found)  # bounds the cost of hostile input
    turn = parse_turn(decoded)
    checker = _Checker(turn, ctx, found)
    checker.check_structure(decoded)
    checker.check_heading()
    checker.check_sections()
    checker.check_counterpoints()
    checker.check_support()
    checker.check_novelty()
    checker.check_unresolved()
    checker.check_stance_revision()
    checker.check_consensus()
    checker.check_grounding()
    return TurnReport(turn, checker.sorted_violations())


def _check_encoding(text: str | bytes) -> tuple[str, list[TurnViolation], bool]:
    """The text to parse, encoding and size violations, and whether the turn is oversize."""
    found: list[TurnViolation] = []
    if isinstance(text, bytes):
        raw = text
        try:
            decoded = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            line = raw.count(b"\n", 0, error.start) + 1
            found.append(TurnViolation("UNSAFE_STRUCTURE", "the turn is not valid UTF-8", line))
            decoded = raw.decode("utf-8", errors="replace")
    else:
        try:
            raw = text.encode("utf-8")
            decoded = text
        except UnicodeEncodeError as error:
            line = text.count("\n", 0, error.start) + 1
            found.append(TurnViolation("UNSAFE_STRUCTURE", "the turn is not valid UTF-8 (lone surrogate)", line))
            raw = text.encode("utf-8", errors="surrogatepass")
            decoded = raw.decode("utf-8", errors="replace")
    oversize = len(raw) > MAX_TURN_BYTES
    if oversize:
        message = f"the turn is {len(raw)} bytes; the limit is {MAX_TURN_BYTES} bytes (64 KiB)"
        found.append(TurnViolation("UNSAFE_STRUCTURE", message))
    return decoded, found, oversize


class _Checker:
    def __init__(self, turn: ParsedTurn, ctx: TurnContext, found: list[TurnViolation]):
        self.turn = turn
        self.ctx = ctx
        self.violations = list(found)
        self.names = ctx.citable_names
        self.references = [(item, parse_reference(item.text, self.names)) for item in turn.support_items]

    def add(self, code: str, message: str, line: int | None = None, section: str | None = None) -> None:
        if section is None:
            section = self.turn.section_at(line)
        self.violations.append(TurnViolation(code, message, line, section))

    def sorted_violations(self) -> list[TurnViolation]:
        unique = dict.fromkeys(self.violations)  # one report per identical finding, order kept
        return sorted(unique, key=lambda v: (v.line is None, v.line or 0, _RULE_ORDER[v.code]))

    # UNSAFE_STRUCTURE
    def check_structure(self, text: str) -> None:
        for number, line in enumerate(split_lines(text), 1):
            if "\x00" in line:
                self.add("UNSAFE_STRUCTURE", "the turn contains a NUL character", number)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        for marker in _MARKER.finditer(text):  # on the whole text: a marker may span lines
            number = text.count("\n", 0, marker.start()) + 1
            self.add("UNSAFE_STRUCTURE", "`<!-- duel:` markers belong to the service, not to turns", number)
        if self.turn.front_matter_line is not None:
            self.add("UNSAFE_STRUCTURE", "a turn has no front matter", self.turn.front_matter_line)
        for heading in self.turn.extra_headings:
            message = (
                f"level-{heading.level} heading {heading.text!r} is not allowed in a turn;"
                " use a `**label**` or a level-3 heading"
            )
            self.add("UNSAFE_STRUCTURE", message, heading.line)
        if self.turn.markdown_failed:
            self.add("UNSAFE_STRUCTURE", "the turn could not be parsed as Markdown")

    # HEADING, STANCE
    def check_heading(self) -> None:
        turn, ctx = self.turn, self.ctx
        expected = f"## Turn {ctx.turn_number} \u2014 {ctx.participant_name} ({ctx.harness} / {ctx.model_id}) \u2014 STANCE"
        if turn.heading is None:
            self.add("HEADING", f"the turn must begin with its heading: `{expected}`")
            return
        line = turn.heading_line
        if turn.text_before_heading_line is not None:
            self.add("HEADING", "nothing but an optional `---` line may come before the heading",
                     turn.text_before_heading_line)
        if turn.heading_level != 2:
            self.add("HEADING", "the turn heading is a level-2 heading (`## `)", line)
        if turn.number is None:
            self.add("HEADING", f"the heading must read `{expected}`", line)
            return
        if turn.number != ctx.turn_number:
            self.add("HEADING", f"the heading says Turn {turn.number}; this is Turn {ctx.turn_number}", line)
        claimed = (
            ("name", turn.name, ctx.participant_name),
            ("harness", turn.harness, ctx.harness),
            ("model", turn.model, ctx.model_id),
        )
        for what, written, own in claimed:
            if written is None:
                self.add("HEADING", f"the heading must give the claimant's {what}: `{expected}`", line)
            elif written.split() != own.split():
                self.add("HEADING", f"the heading gives {what} {written!r}; the claimant's {what} is {own!r}", line)
        if turn.stance is None:
            self.add("STANCE", f"the heading must end with a stance, one of {', '.join(STANCES)}", line)
        elif turn.stance not in STANCES:
            self.add("STANCE", f"{turn.stance!r} is not a stance; use one of {', '.join(STANCES)}", line)

    # SECTION_MISSING, SECTION_ORDER, SECTION_EMPTY
    def check_sections(self) -> None:
        latest = -1
        for name, section in self.turn.sections.items():
            position = SECTIONS.index(name)
            if position < latest:
                self.add("SECTION_ORDER", f"**{name}** must come before **{SECTIONS[latest]}**", section.line, name)
            latest = max(latest, position)
        for section in self.turn.duplicate_sections:
            self.add("SECTION_ORDER", f"**{section.name}** appears more than once", section.line, section.name)
        for name in SECTIONS:
            section = self.turn.sections.get(name)
            if section is None:
                self.add("SECTION_MISSING", f"the **{name}** section is missing (a line `**{name}**`)", None, name)
            elif name in NON_EMPTY_SECTIONS and section.is_empty:
                self.add("SECTION_EMPTY", f"the **{name}** section is empty", section.line, name)

    # COUNTERPOINT_INCOMPLETE, ADDRESSES_UNKNOWN
    def check_counterpoints(self) -> None:
        for point in self.turn.counterpoints:
            missing = [
                part
                for part, present in (("Addresses", point.addresses), ("Claim", point.claim), ("Support", point.support))
                if not present
            ]
            if missing:
                message = f"the counterpoint lacks {', '.join(missing)} (`Addresses:`, `Claim:`, `Support:` with items)"
                self.add("COUNTERPOINT_INCOMPLETE", message, point.line, "Counterpoints")
            if point.addresses:
                for target in point.addresses.split("|"):
                    self._check_addresses(target.strip(), point.line)

    def _check_addresses(self, target: str, line: int | None) -> None:
        reference = parse_reference(target, self.names)
        unknown = None
        if reference.kind == "turn":
            assert reference.turn is not None
            if self.ctx.prior_turn(reference.turn) is None:
                unknown = f"Addresses names Turn {reference.turn}, which is not an earlier turn"
            else:
                self._check_turn_excerpt(reference, line, "Counterpoints")
        elif reference.kind == "source" and reference.heading is not None:
            if not self._heading_exists(reference.heading):
                unknown = f"Addresses names {reference.heading!r}, which is not a heading of the source"
            if reference.excerpt is not None:
                self._check_source_excerpt(reference, line, "Counterpoints")
        else:
            source = self.ctx.source.name if self.ctx.source else "the source"
            unknown = f"Addresses {target!r} must be `Turn M` or `{source}#Heading`"
        if unknown:
            self.add("ADDRESSES_UNKNOWN", unknown, line, "Counterpoints")

    # SUPPORT_KIND, SOURCE_REF_NOT_FOUND, TURN_REF_NOT_FOUND
    def check_support(self) -> None:
        for item, reference in self.references:
            if reference.kind == "turn":
                self._check_turn_reference(reference, item.line, item.section)
            elif reference.kind == "source":
                self._check_source_reference(reference, item.line, item.section)
            elif reference.kind == "other-document":
                source = self.ctx.source.name if self.ctx.source else "the source"
                message = f"{item.text!r} cites another document; cite the source as `{source}`"
                self.add("SUPPORT_KIND", message, item.line, item.section)
            elif reference.kind == "unknown":
                message = (
                    f"{_shorten(item.text)!r} is not a URL, a source reference (`name#heading`, `name:12-18`,"
                    ' `name "excerpt"`), a turn reference (`Turn M`) or `Principle: …`'
                )
                self.add("SUPPORT_KIND", message, item.line, item.section)

    def _check_turn_reference(self, reference: Reference, line: int | None, section: str) -> None:
        assert reference.turn is not None
        if self.ctx.prior_turn(reference.turn) is None:
            self.add("TURN_REF_NOT_FOUND", f"Turn {reference.turn} is not an earlier turn", line, section)
        else:
            self._check_turn_excerpt(reference, line, section)

    def _check_turn_excerpt(self, reference: Reference, line: int | None, section: str) -> None:
        cited = self.ctx.prior_turn(reference.turn or 0)
        if reference.excerpt is not None and cited is not None and not cited.contains_excerpt(reference.excerpt):
            message = f"Turn {reference.turn} does not contain {_shorten(reference.excerpt)!r}"
            self.add("TURN_REF_NOT_FOUND", message, line, section)

    def _check_source_reference(self, reference: Reference, line: int | None, section: str) -> None:
        source = self.ctx.source
        if not reference.has_locator:
            message = f"{reference.text!r} needs a locator: `#heading`, `:line`, `:start-end` or a quoted excerpt"
            self.add("SUPPORT_KIND", message, line, section)
            return
        if reference.heading is not None and not self._heading_exists(reference.heading):
            self.add("SOURCE_REF_NOT_FOUND", f"the source has no heading {reference.heading!r}", line, section)
        if reference.lines is not None and source is not None and not source.has_lines(*reference.lines):
            start, end = reference.lines
            cited = f"line {start} is" if start == end else f"lines {start}-{end} are"
            message = f"{cited} not within the source ({len(source.lines)} lines)"
            self.add("SOURCE_REF_NOT_FOUND", message, line, section)
        if reference.excerpt is not None:
            self._check_source_excerpt(reference, line, section)

    def _check_source_excerpt(self, reference: Reference, line: int | None, section: str) -> None:
        source = self.ctx.source
        if source is not None and not source.contains_excerpt(reference.excerpt or ""):
            message = f"the source does not contain {_shorten(reference.excerpt or '')!r}"
            self.add("SOURCE_REF_NOT_FOUND", message, line, section)

    def _heading_exists(self, written: str) -> bool:
        source = self.ctx.source
        return source is None or any(source.has_heading(c) for c in _heading_candidates(written))

    # NOVELTY
    def check_novelty(self) -> None:
        turn = self.turn
        section = turn.sections.get("Novel Argument")
        if section is None or section.is_empty:
            return
        if not turn.novel_support:
            message = "the novel argument needs a `Support:` line followed by at least one support item"
            self.add("NOVELTY", message, section.line, "Novel Argument")
        if not turn.novel_claim:
            self.add("NOVELTY", "the novel argument needs a claim before `Support:`", section.line, "Novel Argument")
        elif self.ctx.novelty is not None and self.ctx.novelty.repeats(turn.novel_claim):
            message = "the novel argument's claim repeats an earlier position or claim"
            self.add("NOVELTY", message, turn.novel_claim_line, "Novel Argument")

    # UNRESOLVED_TAG
    def check_unresolved(self) -> None:
        for item in self.turn.unresolved:
            if item.blocking is None:
                message = f"{_shorten(item.text)!r} must end with `(blocking)` or `(non-blocking)`"
                self.add("UNRESOLVED_TAG", message, item.line, "Unresolved Items")

    # STANCE_REVISION
    def check_stance_revision(self) -> None:
        turn, previous = self.turn, self.ctx.previous_stance
        if previous is None or turn.stance not in STANCES or turn.stance == previous or turn.stance_revision_support:
            return
        section = turn.sections.get("Stance Revision Support")
        message = f"the stance changed from {previous} to {turn.stance}: give Stance Revision Support"
        self.add("STANCE_REVISION", message, section.line if section else turn.heading_line, "Stance Revision Support")

    # CONSENSUS_BLOCKED
    def check_consensus(self) -> None:
        turn = self.turn
        if turn.stance != ACCEPTING_CONSENSUS:
            return
        for item in turn.unresolved:
            if item.blocking:
                message = "ACCEPTING_CONSENSUS cannot keep a blocking item"
                self.add("CONSENSUS_BLOCKED", message, item.line, "Unresolved Items")
        if not turn.support_items:
            self.add("CONSENSUS_BLOCKED", "ACCEPTING_CONSENSUS needs at least one support item", turn.heading_line)
        scoped = any(point.addresses and point.claim for point in turn.counterpoints)
        if not scoped and not any(item.blocking is False for item in turn.unresolved):
            message = "ACCEPTING_CONSENSUS needs a non-blocking unresolved item or a scoped critique (a counterpoint)"
            self.add("CONSENSUS_BLOCKED", message, turn.heading_line)

    # UNGROUNDED
    def check_grounding(self) -> None:
        kinds = {reference.kind for _, reference in self.references}
        if "source" in kinds or (self.ctx.turn_number > 1 and "turn" in kinds):
            return
        if self.ctx.turn_number > 1:
            message = "the turn cites neither the source nor an earlier turn"
        else:
            message = "the first turn must cite the source at least once"
        self.add("UNGROUNDED", message)


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
