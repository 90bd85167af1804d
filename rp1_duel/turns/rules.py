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
- The source may be cited by its file name or by any name in `TurnContext.source_names`
  (the path the artifact records), case-insensitively, with an optional leading `./`.
  Any other path to it (an absolute path, say) is SUPPORT_KIND: it would not resolve on
  every clone.
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
- CONJECTURE_AS_BASIS: a claim is a counterpoint's Claim or the novel argument's claim; it
  or a support item is a conjecture when it begins with `[CONJECTURE]` (exact case). A
  counterpoint whose evidence is conjectures only (tagged items, `Turn M` pointing at a
  tagged claim) is refused; a principle is no evidence, a tagged claim of its own is allowed.
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
- RAW_HTML: what counts is decided in :mod:`rp1_duel.turns.raw_html`; when that line scanner
  finds nothing, HTML the Markdown parser read still counts, at the line of its block. One
  violation a line. A `<!-- duel:` marker is UNSAFE_STRUCTURE, not also RAW_HTML.
- Only `---` may open a turn: a lone `+++` line is text before the heading (HEADING).
- Violations come sorted by line (those without one last), then by rule order.
- Figures (FIGURE_NOT_IN_SOURCE, CLOSING_NEW_MATERIAL) are read and matched by :mod:`rp1_duel.turns.figures`.
  FIGURE_NOT_IN_SOURCE reads a claim whose support cites the source and neither a URL (`duel verify`
  checks the page) nor a principle (a value the writer proposes); a figure of a `Turn M` it cites counts.
- TOO_MANY_SOURCES counts the URLs of each counterpoint's Support, of the novel argument's and of
  Stance Revision Support, and is reported at the sixth, listing every URL past the fifth.
- CLOSING_NEW_MATERIAL reads each line outside fenced code of every section but Proposed Edits and
  Accepted Revision: one violation per new URL (compared exactly with every earlier turn's), one per
  line for its new figures (in no earlier turn, not in the source).
- A chair's turn (``TurnContext.phase`` one of the chair's) is read with the chair's labels and
  checked by HEADING, CHAIR_FORMAT, TURN_REF_NOT_FOUND, SILENT_OVERRULE, UNSAFE_STRUCTURE and RAW_HTML
  only; turns it names in its pre-closing and synthesis are found as running text names them (`Turn M "…"`).
  A closing-round turn's excerpt addresses a point when the point's own text holds it.
- SILENT_OVERRULE reads the synthesis's Agreed and Departures items only: its Synthesis prose is the
  chair's judgement. A seat holds out when its final turn is not ACCEPTING_CONSENSUS; an Agreed item
  has a holding-out seat's agreement only by quoting that final turn's Agreements; a Departures item
  is about the first `Seat N` it names and must name that seat's final stance (any letter case).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

from ..audience import Question, answer_problem, labelled_answer
from ..errors import DuelError
from ..printable import CONTROL_CHARACTERS
from ..vocabulary import (
    ACCEPTED_REVISION,
    ACCEPTING_CONSENSUS,
    AGREED,
    AUDIENCE_ANSWERS,
    CHAIR_MARK,
    CHAIR_PHASE_SECTIONS,
    CHAIR_PHASES,
    COUNTERPOINTS,
    DEPARTURES,
    MAX_SOURCES_PER_ITEM,
    MAX_UNENGAGED_POINTS,
    NON_EMPTY_SECTIONS,
    NOVEL_ARGUMENT,
    OPTIONAL_SECTIONS,
    PROPOSED_EDITS,
    SECTIONS,
    SOURCE_CHALLENGES,
    SOURCE_CORRECTIONS,
    STANCE_REVISION_SUPPORT,
    STANCES,
    UNENGAGED_POINTS,
    UNRESOLVED_ITEMS,
    ErrorCode,
    Phase,
    RuleCode,
)
from .challenges import MIN_CLAIM_WORDS, read_challenge, read_correction
from .figures import Figure, FigureIndex, figures_in, stated_figures
from .grammar import Item, ParsedTurn, parse_turn, turn_heading
from .markdown import fenced_lines, normalize_newlines, split_lines
from .matching import SearchableText
from .novelty import NoveltyIndex
from .raw_html import find_raw_html, html_snippet
from .references import Reference, heading_candidates, parse_reference, turns_in_text, urls_in_line
from .revision import Revision
from .source import SourceDocument

__all__ = ["RULES", "TurnContext", "TurnReport", "TurnViolation", "turn_invalid", "validate_turn"]

MAX_TURN_BYTES = 64 * 1024

RULES = MappingProxyType(
    {
        RuleCode.HEADING: "the heading has the next turn number and the claimant's own name, harness and model"
        " (em dash, en dash or hyphen accepted as separators); only an optional `---` line comes before it",
        RuleCode.STANCE: "the stance is one of `OPEN_TO_DEBATE`, `CONVERGING`, `ACCEPTING_CONSENSUS`,"
        " `DISSENTING`, `REVISING`",
        RuleCode.SECTION_MISSING: "all six sections are present, each label on a line of its own (`**Position**`)",
        RuleCode.SECTION_ORDER: "the sections come in this order, each once: Position, Counterpoints, Agreements,"
        " Novel Argument, Unresolved Items, Stance Revision Support, then the optional Source Corrections,"
        " Source Challenges, Audience Answers, Proposed Edits and Accepted Revision",
        RuleCode.SECTION_EMPTY: "Position, Counterpoints, Agreements, Novel Argument and Unresolved Items are non-empty",
        RuleCode.COUNTERPOINT_INCOMPLETE: "every counterpoint has Addresses, Claim and at least one Support item",
        RuleCode.ADDRESSES_UNKNOWN: "Addresses names an earlier turn that exists, or a heading of the source",
        RuleCode.SUPPORT_KIND: "every support item is a URL (`https://…`), a source reference, a turn reference,"
        " `Principle: …`, or `[CONJECTURE] …`",
        RuleCode.SOURCE_REF_NOT_FOUND: "every heading, line and quoted excerpt cited from the source exists in it",
        RuleCode.FIGURE_NOT_IN_SOURCE: "a claim whose support cites the source and no URL or principle states only"
        " figures (counts, percentages, money, durations) the source states, or an earlier turn it cites; a figure"
        " you propose is argued with a `Principle: …` item, and a claim beginning with `[CONJECTURE]` is not checked",
        RuleCode.TOO_MANY_SOURCES: f"one counterpoint, the novel argument or Stance Revision Support cites at most"
        f" {MAX_SOURCES_PER_ITEM} URLs (the others are not verified)",
        RuleCode.TURN_REF_NOT_FOUND: "every turn cited exists and comes before this one,"
        " and a quoted excerpt from it appears in it",
        RuleCode.CONJECTURE_AS_BASIS: "a claim (a counterpoint's Claim, the novel argument's claim) no citation"
        " supports may begin with `[CONJECTURE]`; a counterpoint resting on conjectures (`[CONJECTURE] …` support"
        ' items, `Turn M "…"` quoting a tagged claim, `Turn M` when all its claims are tagged) also cites a URL,'
        " the source or untagged text of a turn (a principle is not a citation)",
        RuleCode.NOVELTY: "the novel argument has support, and its claim repeats no earlier position or claim"
        " (same words after normalisation, or a token-set Jaccard similarity of 0.8 or more)",
        RuleCode.UNRESOLVED_TAG: "every unresolved item ends with `(blocking)` or `(non-blocking)`",
        RuleCode.STANCE_REVISION: "a stance different from this participant's previous one comes with"
        " non-empty Stance Revision Support",
        RuleCode.CONSENSUS_BLOCKED: "`ACCEPTING_CONSENSUS` has no blocking item, at least one support item,"
        " and at least one non-blocking item or scoped critique",
        RuleCode.UNGROUNDED: "the turn cites the source at least once, or (after turn 1) the source or an earlier turn",
        RuleCode.UNSAFE_STRUCTURE: "no heading of level 1 or 2 besides the turn heading, no `<!-- duel:` marker,"
        " no front matter, valid UTF-8 without NUL, at most 64 KiB",
        RuleCode.CONTROL_CHARACTER: "no control character but tab and line ends (no ESC, BEL or C1 character):"
        " a terminal showing the record would obey it",
        RuleCode.RAW_HTML: "no raw HTML outside code: a tag (`<details>`), comment (`<!-- … -->`) or the like goes"
        " in a code span or a fenced code block; autolinks (`<https://…>`) and entities (`&lt;`) are text",
        RuleCode.CHAIR_FORMAT: "a chair's turn ends its heading with `CHAIR` and has its phase's sections, in order,"
        " each once and non-empty: the opening brief Question, Lineup, What A Good Answer Looks Like; the"
        " pre-closing Unengaged Points, 1 to 3 items each naming the earlier panel turn that raised it (`Turn M`);"
        " the synthesis Synthesis, then optionally Agreed, Still Open and Departures",
        RuleCode.UNENGAGED_POINTS: "in the closing round, every point of the chair's Unengaged Points has a"
        " counterpoint whose Addresses names the chair's pre-closing turn with an excerpt of that point"
        ' (`Addresses: Turn M "words of the point"`)',
        RuleCode.SILENT_OVERRULE: "the synthesis overrules no seat silently: while a seat's final turn is not"
        ' `ACCEPTING_CONSENSUS`, each Agreed item quotes that turn\'s Agreements (`Turn M "its words"`), or a'
        " **Departures** item (after Still Open) names the seat (`Seat 2`), its final stance, and what the"
        " synthesis concludes instead and why",
        RuleCode.CLOSING_NEW_MATERIAL: "a closing-round turn brings nothing new: every URL it mentions and every"
        " figure it states (outside Proposed Edits) is already in an earlier turn or the source",
        RuleCode.EDIT_FORMAT: "Proposed Edits holds only `Edit NAME: replace` (a fenced `find` block, then a"
        ' `replace` block), `Edit NAME: delete` (a `find` block), `Edit NAME: insert after heading "HEADING"` (an'
        " `insert` block) and `Withdraw NAME` of an edit in force; NAME is lower-case letters, digits and hyphens",
        RuleCode.EDIT_TARGET: "an edit that names its file (`replace in FILE`) names the source, never the record",
        RuleCode.EDIT_NOT_FOUND: "each edit's find text, or an insert's heading, occurs in the source (compared as"
        " quotes are, emphasis and code markers included)",
        RuleCode.EDIT_AMBIGUOUS: "each edit's find text, or an insert's heading, occurs in the source only once:"
        " quote more of it",
        RuleCode.EDIT_OVERLAP: "no two edits in force change the same text or insert at one place: amend or withdraw"
        " one (edits always apply to the original source)",
        RuleCode.EDIT_TOO_LARGE: "the revised document is at most 1 MiB larger than the source",
        RuleCode.REVISION_MISSING: "while edits are in force, an `ACCEPTING_CONSENSUS` turn ends with"
        " `**Accepted Revision**` and the id of the revision in force after it",
        RuleCode.REVISION_MISMATCH: "an Accepted Revision names the revision in force after this turn (`r-` and 12"
        " hex digits), and only an `ACCEPTING_CONSENSUS` turn has one",
        RuleCode.QUESTION_UNANSWERED: "every audience question due at this turn has an item `Q<id>: …` under"
        " **Audience Answers** that says something in at least 8 words and does not merely restate the question;"
        " no item answers a question not due at this turn",
        RuleCode.REDACTED_REPEATED: "no claim repeats one redacted for a fabricated source (same words after"
        " normalisation, or a token-set Jaccard similarity of 0.8 or more)",
        RuleCode.RULING_UNACKNOWLEDGED: "in a chaired duel, the chair's turn names each ruling written since its"
        " last turn (`Ruling R`), saying what it found",
        RuleCode.CORRECTION_INVALID: "a Source Corrections item reads `Replacing OLD with NEW: why`: OLD a source of"
        " this participant's a ruling found unreliable or fabricated, NEW another URL no ruling went against, why in a"
        " few words",
        RuleCode.RULED_SOURCE_CITED: "no support item cites a source a ruling found unreliable or fabricated: a Source"
        " Corrections item replaces it",
        RuleCode.CHALLENGE_UNKNOWN: "every Source Challenges item names an earlier turn of another participant"
        " and a URL that turn cites: `Turn 3 https://…: the claim it fails to support`",
        RuleCode.CHALLENGE_NO_CLAIM: "every Source Challenges item names the claim the source fails to support,"
        " in at least 3 words after the URL",
        RuleCode.SEALED_OPENING_EDITS: "a sealed opening proposes no edits: it is written without seeing the"
        " edits the other openings propose (propose them from the next round on)",
    }
)
_RULE_ORDER = {code: index for index, code in enumerate(RULES)}


@dataclass(frozen=True)
class TurnViolation:
    """One broken rule: its code, what is wrong, and the line and section where, when known."""

    code: str
    message: str
    line: int | None = None
    section: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """As the tools write it in JSON: the fields that are set."""
        found = {"code": self.code, "message": self.message, "line": self.line, "section": self.section}
        return {key: value for key, value in found.items() if value is not None}


def turn_invalid(number: int, violations: Sequence[TurnViolation]) -> DuelError:
    """``TURN_INVALID`` for turn ``number``: every violation, with its code and line, in the details."""
    codes = sorted({v.code for v in violations})
    return DuelError(
        ErrorCode.TURN_INVALID,
        f"turn {number} breaks {len(violations)} rule(s): " + ", ".join(codes),
        {"turn_number": number, "violations": [v.to_dict() for v in violations]},
    )


@dataclass(frozen=True)
class TurnReport:
    """What :func:`validate_turn` found: the turn as parsed, and every violation, sorted."""

    turn: ParsedTurn
    violations: list[TurnViolation]

    @property
    def ok(self) -> bool:
        """Whether the turn breaks no rule."""
        return not self.violations


# --- context -------------------------------------------------------------------------


@dataclass(frozen=True)
class TurnContext:
    """What a turn is checked against: its number, its claimant, the source and the turns before it."""

    turn_number: int
    participant_name: str
    harness: str
    model_id: str
    source: SourceDocument | None = None
    # The names the source may be cited by, besides its file name: the path the artifact
    # records (see rp1_duel.record.history.citable_names), so every clone reads the same.
    source_names: Sequence[str] = ()
    prior_turns: Sequence[ParsedTurn] = ()  # the turns before this one, in order
    previous_stance: str | None = None  # this participant's previous stance
    novelty: NoveltyIndex | None = None  # positions and claims of the prior turns
    # A chaired duel (docs/protocol.md section 4, "A chair"): each turn has a phase, and the closing
    # round answers the points of the chair's pre-closing turn.
    phase: str | None = None  # a rp1_duel.vocabulary.Phase; None without a chair
    pre_closing: int | None = None
    revision: Revision | None = None  # the edits in force before this turn; None when the source is unknown
    sealed: bool = False  # a sealed opening (docs/protocol.md section 4): checked as written before the round
    questions: tuple[Question, ...] = ()  # the audience's questions due at this turn (QUESTION_UNANSWERED)
    # Claims redacted for a fabricated source: none may be made again (REDACTED_REPEATED).
    redacted: tuple[str, ...] = ()
    rulings_due: tuple[int, ...] = ()  # a chair's turn: the rulings since its last, each to acknowledge
    # Sources ruled unreliable or fabricated before this turn (RULED_SOURCE_CITED), and those of this
    # participant's own turns, which a correction may replace (CORRECTION_INVALID).
    ruled: frozenset[str] = frozenset()
    own_ruled: frozenset[str] = frozenset()
    # The synthesis (SILENT_OVERRULE): each panel seat's latest turn, seat -> turn number; empty for other turns.
    final_turns: Mapping[int, int] = field(default_factory=dict)

    @property
    def by_chair(self) -> bool:
        """Whether the turn is the chair's (its phase is one of the chair's)."""
        return self.phase in CHAIR_PHASES

    @property
    def citable_names(self) -> tuple[str, ...]:
        """Every name the source may be cited by, without a leading ``./``, longest first."""
        names = list(self.source_names)
        if self.source is not None:
            names.append(self.source.name)
        unique = {name.removeprefix("./") for name in names if name}
        return tuple(sorted(unique, key=len, reverse=True))  # longest first: paths before names

    def prior_turn(self, number: int) -> ParsedTurn | None:
        """Earlier turn ``number``, if it is one of the turns before this one (found by its heading's number)."""
        return self._prior_by_number.get(number) if number < self.turn_number else None

    @cached_property
    def _prior_by_number(self) -> Mapping[int, ParsedTurn]:
        found: dict[int, ParsedTurn] = {}
        for turn in self.prior_turns:
            if turn.number is not None:
                found.setdefault(turn.number, turn)  # a record that repeats a number: the first one counts
        return found


# --- validation ----------------------------------------------------------------------

_MARKER_NAME = re.compile(r"duel\s*:", re.IGNORECASE)
_TAG = re.compile(r"<(/?[A-Za-z][A-Za-z0-9-]*)")
_SEAT = re.compile(r"\bseat\s+#?(\d+)\b", re.IGNORECASE)


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


def validate_turn(text: str | bytes, ctx: TurnContext) -> TurnReport:
    """Check a submitted turn against every rule; report all violations, never raise."""
    decoded, found, oversize = _check_encoding(text)
    if oversize:
        return TurnReport(parse_turn(""), found)  # bounds the cost of hostile input
    turn = parse_turn(decoded, chair=ctx.by_chair)
    checker = _Checker(turn, ctx, found)
    checker.check_structure(decoded)
    checker.check_raw_html(decoded)
    checker.check_heading()
    if ctx.by_chair:
        checker.check_chair_sections()
        checker.check_chair_turn_mentions()
        checker.check_rulings_acknowledged()
        checker.check_overrule()
        checker.check_edits()
        return TurnReport(turn, checker.sorted_violations())
    checker.check_sections()
    checker.check_counterpoints()
    checker.check_support()
    checker.check_source_count()
    checker.check_source_figures()
    checker.check_conjectures()
    checker.check_novelty()
    checker.check_unresolved()
    checker.check_stance_revision()
    checker.check_consensus()
    checker.check_grounding()
    checker.check_unengaged_points()
    checker.check_closing_material()
    checker.check_audience_answers()
    checker.check_redacted()
    checker.check_challenges()
    checker.check_corrections()
    checker.check_edits()
    checker.check_accepted_revision()
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
            found.append(TurnViolation(RuleCode.UNSAFE_STRUCTURE, "the turn is not valid UTF-8", line))
            decoded = raw.decode("utf-8", errors="replace")
    else:
        try:
            raw = text.encode("utf-8")
            decoded = text
        except UnicodeEncodeError as error:
            line = text.count("\n", 0, error.start) + 1
            found.append(TurnViolation(RuleCode.UNSAFE_STRUCTURE, "the turn is not valid UTF-8 (lone surrogate)", line))
            raw = text.encode("utf-8", errors="surrogatepass")
            decoded = raw.decode("utf-8", errors="replace")
    oversize = len(raw) > MAX_TURN_BYTES
    if oversize:
        message = f"the turn is {len(raw)} bytes; the limit is {MAX_TURN_BYTES} bytes (64 KiB)"
        found.append(TurnViolation(RuleCode.UNSAFE_STRUCTURE, message))
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
                self.add(RuleCode.UNSAFE_STRUCTURE, "the turn contains a NUL character", number)
            control = CONTROL_CHARACTERS.search(line.replace("\x00", ""))
            if control:
                found = f"U+{ord(control.group()):04X}"
                self.add(RuleCode.CONTROL_CHARACTER, f"the line holds control character {found}: remove it", number)
        text = normalize_newlines(text)
        for marker in _markers(text):  # on the whole text: a marker may span lines
            number = text.count("\n", 0, marker) + 1
            self.add(RuleCode.UNSAFE_STRUCTURE, "`<!-- duel:` markers belong to the service, not to turns", number)
        if self.turn.front_matter_line is not None:
            self.add(RuleCode.UNSAFE_STRUCTURE, "a turn has no front matter", self.turn.front_matter_line)
        for heading in self.turn.extra_headings:
            message = (
                f"level-{heading.level} heading {heading.text!r} is not allowed in a turn;"
                " use a `**label**` or a level-3 heading"
            )
            self.add(RuleCode.UNSAFE_STRUCTURE, message, heading.line)
        if self.turn.markdown_failed:
            self.add(RuleCode.UNSAFE_STRUCTURE, "the turn could not be parsed as Markdown")

    # RAW_HTML
    def check_raw_html(self, text: str) -> None:
        """The line scanner first; the Markdown parser's reading is a second opinion on what lines
        alone cannot tell (a link or list around a backtick), consulted when the scanner finds nothing."""
        text = normalize_newlines(text).removeprefix("\ufeff")
        markers = set(_markers(text))  # a forged marker is UNSAFE_STRUCTURE already
        found: list[tuple[str, int | None]] = [
            (html.snippet, html.line) for html in find_raw_html(text) if html.offset not in markers
        ]
        if not found:
            found = [
                (html_snippet(item.text), item.line)
                for item in self.turn.parser_html
                if next(_markers(item.text), None) is None
            ]
        reported: set[int | None] = set()
        for snippet, line in found:
            if line not in reported:  # one a line: the first says what to fix
                reported.add(line)
                self.add(RuleCode.RAW_HTML, _raw_html_message(snippet), line)

    # HEADING, STANCE
    def check_heading(self) -> None:
        turn, ctx = self.turn, self.ctx
        slot = CHAIR_MARK if ctx.by_chair else "STANCE"
        expected = turn_heading(
            ctx.turn_number, name=ctx.participant_name, harness=ctx.harness, model_id=ctx.model_id, last=slot
        )
        if turn.heading is None:
            self.add(RuleCode.HEADING, f"the turn must begin with its heading: `{expected}`")
            return
        line = turn.heading_line
        self._check_text_before_heading()
        if turn.heading_level != 2:
            self.add(RuleCode.HEADING, "the turn heading is a level-2 heading (`## `)", line)
        if turn.number is None:
            self.add(RuleCode.HEADING, f"the heading must read `{expected}`", line)
            return
        if turn.number != ctx.turn_number:
            self.add(RuleCode.HEADING, f"the heading says Turn {turn.number}; this is Turn {ctx.turn_number}", line)
        self._check_claimant(expected, line)
        self._check_stance(line)

    def _check_text_before_heading(self) -> None:
        """Only an optional `---` line may come before the heading (a `+++` one is told apart)."""
        turn = self.turn
        if turn.text_before_heading == "+++":
            self.add(
                RuleCode.HEADING, "a turn opens with `---` (or its heading), not `+++`", turn.text_before_heading_line
            )
        elif turn.text_before_heading_line is not None:
            self.add(
                RuleCode.HEADING,
                "nothing but an optional `---` line may come before the heading",
                turn.text_before_heading_line,
            )

    def _check_claimant(self, expected: str, line: int | None) -> None:
        """The heading's name, harness and model are the claimant's own, runs of whitespace aside."""
        turn, ctx = self.turn, self.ctx
        claimed = (
            ("name", turn.name, ctx.participant_name),
            ("harness", turn.harness, ctx.harness),
            ("model", turn.model, ctx.model_id),
        )
        for what, written, own in claimed:
            if written is None:
                self.add(RuleCode.HEADING, f"the heading must give the claimant's {what}: `{expected}`", line)
            elif written.split() != own.split():
                self.add(
                    RuleCode.HEADING, f"the heading gives {what} {written!r}; the claimant's {what} is {own!r}", line
                )

    def _check_stance(self, line: int | None) -> None:
        """The heading ends with a stance, or with `CHAIR` in a chair's turn."""
        turn, ctx = self.turn, self.ctx
        if ctx.by_chair or (ctx.phase is not None and turn.stance == CHAIR_MARK):  # without a chair, a STANCE
            self._check_chair_mark(line)
        elif turn.stance is None:
            self.add(RuleCode.STANCE, f"the heading must end with a stance, one of {', '.join(STANCES)}", line)
        elif turn.stance not in STANCES:
            self.add(RuleCode.STANCE, f"{turn.stance!r} is not a stance; use one of {', '.join(STANCES)}", line)

    def _check_chair_mark(self, line: int | None) -> None:
        """The chair takes no stance: `CHAIR` stands in its place, and only in the chair's turns."""
        number, stance = self.ctx.turn_number, self.turn.stance
        if not self.ctx.by_chair:
            self.add(
                RuleCode.HEADING,
                f"turn {number} is a panelist's: only the chair's turns end with "
                f"{CHAIR_MARK}; end the heading with a stance",
                line,
            )
        elif stance != CHAIR_MARK:
            self.add(
                RuleCode.HEADING,
                f"turn {number} is the chair's, which takes no stance: end the heading "
                f"with {CHAIR_MARK}" + (f", not {stance}" if stance else ""),
                line,
            )

    # CHAIR_FORMAT: a chair's turn, by its phase
    def check_chair_sections(self) -> None:
        phase = self.ctx.phase or ""
        required, optional = CHAIR_PHASE_SECTIONS[phase]
        allowed = (*required, *optional)
        name_of_phase = phase.replace("_", " ")
        latest = -1
        for name, section in self.turn.sections.items():
            if name not in allowed:
                self.add(
                    RuleCode.CHAIR_FORMAT,
                    f"**{name}** does not belong in the {name_of_phase}; its sections are {', '.join(allowed)}",
                    section.line,
                    name,
                )
                continue
            if allowed.index(name) < latest:
                self.add(
                    RuleCode.CHAIR_FORMAT, f"**{name}** must come before **{allowed[latest]}**", section.line, name
                )
            latest = max(latest, allowed.index(name))
            if section.is_empty:
                self.add(RuleCode.CHAIR_FORMAT, f"the **{name}** section is empty", section.line, name)
        for section in self.turn.duplicate_sections:
            self.add(RuleCode.CHAIR_FORMAT, f"**{section.name}** appears more than once", section.line, section.name)
        for name in required:
            if name not in self.turn.sections:
                self.add(
                    RuleCode.CHAIR_FORMAT,
                    f"the {name_of_phase} needs a **{name}** section (a line `**{name}**`)",
                    None,
                    name,
                )
        if phase == Phase.PRE_CLOSING:
            self._check_points()

    def _check_points(self) -> None:
        section = self.turn.sections.get(UNENGAGED_POINTS)
        points = self.turn.points
        if section is None or section.is_empty:
            return
        if not 1 <= len(points) <= MAX_UNENGAGED_POINTS:
            self.add(
                RuleCode.CHAIR_FORMAT,
                f"list 1 to {MAX_UNENGAGED_POINTS} unengaged points, not {len(points)}",
                section.line,
                UNENGAGED_POINTS,
            )
        for point in points:
            mentions = turns_in_text(point.text)
            if not mentions:
                self.add(
                    RuleCode.CHAIR_FORMAT,
                    f"{_shorten(point.text)!r} must name the earlier panel turn that raised it (`Turn M`)",
                    point.line,
                    UNENGAGED_POINTS,
                )
            for mention in mentions:
                cited = self.ctx.prior_turn(mention.turn)
                if cited is not None and cited.chair:
                    self.add(
                        RuleCode.CHAIR_FORMAT,
                        f"Turn {mention.turn} is the chair's: name the panel turn that raised the point",
                        point.line,
                        UNENGAGED_POINTS,
                    )

    # TURN_REF_NOT_FOUND, in a chair's running text: each turn it names is an earlier one holding what it quotes
    def check_chair_turn_mentions(self) -> None:
        if self.ctx.phase == Phase.OPENING_BRIEF:
            return  # the brief comes first: the turns it may name are yet to come
        for section in self.turn.sections.values():
            for mention in turns_in_text(section.body):
                line = section.line + 1 + section.body.count("\n", 0, mention.start)
                self._check_turn_reference(
                    Reference(kind="turn", text="", turn=mention.turn, excerpt=mention.excerpt), line, section.name
                )

    # RULING_UNACKNOWLEDGED
    def check_rulings_acknowledged(self) -> None:
        text = self.turn.text
        for number in self.ctx.rulings_due:
            if re.search(rf"\bRuling {number}\b", text, re.IGNORECASE) is None:
                message = f"ruling {number} came since the chair's last turn: acknowledge it (`Ruling {number}`: what it found)"
                self.add(RuleCode.RULING_UNACKNOWLEDGED, message, None, None)

    # SILENT_OVERRULE: the synthesis records as agreed only what each holding-out seat agreed to, or says it departs
    def check_overrule(self) -> None:
        """A seat holds out when its final turn is not ACCEPTING_CONSENSUS. An Agreed item has its agreement when
        the item quotes that final turn's Agreements (`Turn M "…"`); every holding-out seat an Agreed item lacks
        is overruled, and needs a Departures item: one whose first `Seat N` is that seat, naming its final stance."""
        ctx = self.ctx
        if ctx.phase != Phase.SYNTHESIS or not ctx.final_turns:
            return
        finals = {seat: (number, turn) for seat, number in ctx.final_turns.items() if (turn := ctx.prior_turn(number))}
        holding_out = {seat: found for seat, found in finals.items() if found[1].stance != ACCEPTING_CONSENSUS}
        overruled: dict[int, Item] = {}  # seat -> the first Agreed item it did not agree to
        for item in self.turn.agreed:
            quoted = [(m.turn, m.excerpt) for m in turns_in_text(item.text) if m.excerpt is not None]
            for seat, (number, final) in holding_out.items():
                agreed = any(n == number and _agreed_in(final, excerpt) for n, excerpt in quoted)
                if not agreed and seat not in overruled:
                    overruled[seat] = item
        departed = self._check_departures(finals)
        for seat, item in sorted(overruled.items()):
            if seat not in departed:
                number, final = holding_out[seat]
                message = (
                    f"{_shorten(item.text)!r} records as agreed what Seat {seat} ({final.stance} in Turn {number})"
                    f' did not agree to: quote its agreement (`Turn {number} "…"`, words of its Agreements), or add'
                    f" a **Departures** item naming Seat {seat}, its final stance {final.stance}, and what the"
                    " synthesis concludes instead and why"
                )
                self.add(RuleCode.SILENT_OVERRULE, message, item.line, AGREED)

    def _check_departures(self, finals: Mapping[int, tuple[int, ParsedTurn]]) -> set[int]:
        """The seats the Departures name rightly: each item is about the first seat it names, and names its
        final stance."""
        departed = set()
        for item in self.turn.departures:
            named = _SEAT.search(item.text)
            seat = int(named.group(1)) if named else None
            if seat is None or seat not in finals:
                which = f"names Seat {seat}, which is not a panel seat" if named else "names no seat"
                message = f"{_shorten(item.text)!r} {which}: begin each departure with the seat it overrules (`Seat 2`)"
                self.add(RuleCode.SILENT_OVERRULE, message, item.line, DEPARTURES)
                continue
            number, final = finals[seat]
            stance = final.stance or ""
            if not re.search(rf"\b{re.escape(stance)}\b", item.text, re.IGNORECASE):
                message = f"the departure from Seat {seat} must name its final stance, {stance} (Turn {number})"
                self.add(RuleCode.SILENT_OVERRULE, message, item.line, DEPARTURES)
                continue
            departed.add(seat)
        return departed

    # UNENGAGED_POINTS
    def check_unengaged_points(self) -> None:
        """Each closing-round turn answers every point of the pre-closing: a counterpoint addresses
        point k when it names the pre-closing turn with an excerpt of point k itself."""
        ctx = self.ctx
        pre_closing = ctx.prior_turn(ctx.pre_closing) if ctx.phase == Phase.CLOSING and ctx.pre_closing else None
        if pre_closing is None:
            return
        quoted = [
            reference.excerpt
            for point in self.turn.counterpoints
            for target in (point.addresses or "").split("|")
            if (reference := parse_reference(target.strip(), self.names)).kind == "turn"
            and reference.turn == ctx.pre_closing
            and reference.excerpt is not None
        ]
        section = self.turn.sections.get(COUNTERPOINTS)
        for number, point in enumerate(pre_closing.points, 1):
            text = SearchableText(point.text)
            if not any(text.contains(excerpt) for excerpt in quoted):
                message = (
                    f"unengaged point {number} of Turn {ctx.pre_closing} is not addressed: add a counterpoint "
                    f'with `Addresses: Turn {ctx.pre_closing} "…"` quoting it: {_shorten(point.text)!r}'
                )
                self.add(
                    RuleCode.UNENGAGED_POINTS,
                    message,
                    section.line if section else self.turn.heading_line,
                    COUNTERPOINTS,
                )

    # CLOSING_NEW_MATERIAL
    def check_closing_material(self) -> None:
        """A closing-round turn: each URL it mentions outside code, and each figure it states, outside Proposed
        Edits and Accepted Revision, is in an earlier turn (any of them, the chair's too) or the source."""
        ctx = self.ctx
        if ctx.phase != Phase.CLOSING:
            return
        known_urls = frozenset().union(*(turn.urls for turn in ctx.prior_turns))
        indexes = [turn.figures for turn in ctx.prior_turns] + ([ctx.source.figures] if ctx.source else [])
        for section in self.turn.sections.values():
            if section.name in (PROPOSED_EDITS, ACCEPTED_REVISION):
                continue  # an edit rewrites the document; it is a proposal, not a claim
            lines = section.body.split("\n")
            for offset, (text, fenced) in enumerate(zip(lines, fenced_lines(lines), strict=True)):
                if not fenced:
                    self._check_closing_line(text, section.line + 1 + offset, section.name, known_urls, indexes)

    def _check_closing_line(
        self, text: str, line: int, section: str, known_urls: frozenset[str], indexes: Sequence[FigureIndex]
    ) -> None:
        for url in urls_in_line(text):
            if url not in known_urls:
                message = f"the closing round brings no new source: {url} is cited by no earlier turn"
                self.add(RuleCode.CLOSING_NEW_MATERIAL, message, line, section)
        new = figures_in(text)
        for index in indexes:
            new = index.missing(new) if new else new
        if new:
            message = (
                f"the closing round brings no new figure: {_figures(new)} {'is' if len(new) == 1 else 'are'} in no"
                " earlier turn and not in the source; argue from what the record holds"
            )
            self.add(RuleCode.CLOSING_NEW_MATERIAL, message, line, section)

    # SECTION_MISSING, SECTION_ORDER, SECTION_EMPTY
    def check_sections(self) -> None:
        latest, order = -1, (*SECTIONS, *OPTIONAL_SECTIONS)
        for name, section in self.turn.sections.items():
            position = order.index(name)
            if position < latest:
                self.add(RuleCode.SECTION_ORDER, f"**{name}** must come before **{order[latest]}**", section.line, name)
            latest = max(latest, position)
        for section in self.turn.duplicate_sections:
            self.add(RuleCode.SECTION_ORDER, f"**{section.name}** appears more than once", section.line, section.name)
        for name in SECTIONS:
            found = self.turn.sections.get(name)
            if found is None:
                self.add(
                    RuleCode.SECTION_MISSING, f"the **{name}** section is missing (a line `**{name}**`)", None, name
                )
            elif name in NON_EMPTY_SECTIONS and found.is_empty:
                self.add(RuleCode.SECTION_EMPTY, f"the **{name}** section is empty", found.line, name)

    # CORRECTION_INVALID, RULED_SOURCE_CITED
    def check_corrections(self) -> None:
        for item in self.turn.corrections:
            correction = read_correction(item.text, item.line)
            if correction is None:
                problem = "a correction reads `Replacing https://old… with https://new…: why`"
            elif correction.old not in self.ctx.own_ruled:
                problem = f"{correction.old} is no source of this participant's that a ruling found unreliable"
            elif correction.new == correction.old or correction.new in self.ctx.ruled:
                problem = f"{correction.new} is no new source: it is the one replaced, or one ruled against"
            elif len(correction.why.split()) < MIN_CLAIM_WORDS:
                problem = f"the correction of {correction.old} says why in a few words"
            else:
                continue
            self.add(RuleCode.CORRECTION_INVALID, problem, item.line, SOURCE_CORRECTIONS)
        if not self.ctx.ruled:
            return
        for entry, reference in self.references:
            if reference.url is not None and reference.url in self.ctx.ruled:
                message = (
                    f"cites {reference.url}, which a ruling found unreliable or fabricated: a correction replaces it"
                )
                self.add(RuleCode.RULED_SOURCE_CITED, message, entry.line, entry.section)

    # CHALLENGE_UNKNOWN, CHALLENGE_NO_CLAIM
    def check_challenges(self) -> None:
        for item in self.turn.challenges:
            challenge = read_challenge(item.text, item.line)
            cited = self.ctx.prior_turn(challenge.turn) if challenge else None
            if challenge is None or challenge.url is None or cited is None:
                message = (
                    "a challenge names an earlier turn and its URL: `Turn 3 https://…: the claim it fails to support`"
                )
                self.add(RuleCode.CHALLENGE_UNKNOWN, message, item.line, SOURCE_CHALLENGES)
                continue
            if cited.name == self.ctx.participant_name:
                message = f"challenges turn {challenge.turn}, this participant's own: challenge another's source"
                self.add(RuleCode.CHALLENGE_UNKNOWN, message, item.line, SOURCE_CHALLENGES)
            elif all(challenge.url not in urls_in_line(line) for line in cited.text.split("\n")):
                message = f"turn {challenge.turn} does not cite {challenge.url}"
                self.add(RuleCode.CHALLENGE_UNKNOWN, message, item.line, SOURCE_CHALLENGES)
            if len(challenge.claim.split()) < MIN_CLAIM_WORDS:
                message = f"the challenge of {challenge.url} names no claim it fails to support"
                self.add(RuleCode.CHALLENGE_NO_CLAIM, message, item.line, SOURCE_CHALLENGES)

    # REDACTED_REPEATED
    def check_redacted(self) -> None:
        if not self.ctx.redacted:
            return
        redacted = NoveltyIndex(self.ctx.redacted)
        made = [(c.claim, c.line, COUNTERPOINTS) for c in self.turn.counterpoints if c.claim]
        made += [(self.turn.novel_claim, self.turn.novel_claim_line, NOVEL_ARGUMENT)] if self.turn.novel_claim else []
        for claim, line, section in made:
            if redacted.repeats(claim):
                message = "repeats a claim redacted for a fabricated source: a redacted point may not be made again"
                self.add(RuleCode.REDACTED_REPEATED, message, line, section)

    # QUESTION_UNANSWERED
    def check_audience_answers(self) -> None:
        section = self.turn.sections.get(AUDIENCE_ANSWERS)
        where = section.line if section else None
        answers: dict[int, tuple[str, int | None]] = {}
        for item in self.turn.answers:
            labelled = labelled_answer(item.text)
            if labelled is None:
                message = "an Audience Answers item begins with the question it answers: `Q3: …`"
                self.add(RuleCode.QUESTION_UNANSWERED, message, item.line, AUDIENCE_ANSWERS)
                continue
            number, answer = labelled
            answers.setdefault(number, (answer, item.line))
        due = {question.id for question in self.ctx.questions}
        for number, (_, line) in answers.items():
            if number not in due:
                message = f"answers Q{number}, which is no audience question due at this turn"
                self.add(RuleCode.QUESTION_UNANSWERED, message, line, AUDIENCE_ANSWERS)
        for question in self.ctx.questions:
            text, line = answers.get(question.id, (None, where))
            problem = answer_problem(question, text)
            if problem:
                self.add(RuleCode.QUESTION_UNANSWERED, problem, line, AUDIENCE_ANSWERS)

    # EDIT_FORMAT, EDIT_TARGET, EDIT_NOT_FOUND, EDIT_AMBIGUOUS, EDIT_OVERLAP, EDIT_TOO_LARGE
    def check_edits(self) -> None:
        edits, revision = self.turn.edits, self.ctx.revision
        for line, message in edits.problems:
            self.add(RuleCode.EDIT_FORMAT, message, line, PROPOSED_EDITS)
        if self.ctx.sealed and (edits.edits or edits.withdrawn):
            section = self.turn.sections.get(PROPOSED_EDITS)
            message = "a sealed opening proposes no edits: propose them from the next round on"
            self.add(RuleCode.SEALED_OPENING_EDITS, message, section.line if section else None, PROPOSED_EDITS)
        names = {name.casefold() for name in self.names}  # a citable name, in any letter case
        for edit in edits.edits:
            if edit.target is not None and edit.target.removeprefix("./").casefold() not in names:
                source = self.names[-1] if self.names else "the document debated"
                message = f"edit {edit.name} names {edit.target}: edits change the source, {source}"
                self.add(RuleCode.EDIT_TARGET, message, edit.line, PROPOSED_EDITS)
        for name, line in edits.withdrawn:
            if revision is not None and name not in revision.edits:
                self.add(
                    RuleCode.EDIT_FORMAT, f"withdraws {name}, which no earlier turn proposed", line, PROPOSED_EDITS
                )
        if revision is None or not (edits.edits or edits.withdrawn):
            return
        lines = {edit.name: edit.line for edit in edits.edits}
        for problem in revision.amended(edits).problems:
            earlier = "" if problem.name in lines else " (an edit an earlier turn proposed: amend or withdraw it)"
            self.add(problem.code, problem.message + earlier, lines.get(problem.name), PROPOSED_EDITS)

    # REVISION_MISSING, REVISION_MISMATCH
    def check_accepted_revision(self) -> None:
        turn, revision = self.turn, self.ctx.revision
        section = turn.sections.get(ACCEPTED_REVISION)
        if section is not None and turn.accepted_revision is None:
            message = "the **Accepted Revision** section holds one revision id, like r-0123456789ab"
            self.add(RuleCode.REVISION_MISMATCH, message, section.line, ACCEPTED_REVISION)
        if turn.stance != ACCEPTING_CONSENSUS:
            if section is not None:
                message = "only an ACCEPTING_CONSENSUS turn names the revision it accepts"
                self.add(RuleCode.REVISION_MISMATCH, message, section.line, ACCEPTED_REVISION)
            return
        after = revision.amended(turn.edits) if revision is not None else None
        if after is None or after.problems:
            return  # an edit that does not apply is its own violation; the source unknown, nothing to compare
        named, line = turn.accepted_revision, section.line if section else None
        if named is not None and named != after.id:
            message = f"accepts {named}, but the revision in force after this turn is {after.id}"
            self.add(RuleCode.REVISION_MISMATCH, message, line, ACCEPTED_REVISION)
        elif named is None and after.edits:
            message = (
                f"edits are in force: name the revision you accept, a line `**Accepted Revision**` then {after.id}"
            )
            self.add(RuleCode.REVISION_MISSING, message, line, ACCEPTED_REVISION)

    # COUNTERPOINT_INCOMPLETE, ADDRESSES_UNKNOWN
    def check_counterpoints(self) -> None:
        for point in self.turn.counterpoints:
            missing = [
                part
                for part, present in (
                    ("Addresses", point.addresses),
                    ("Claim", point.claim),
                    ("Support", point.support),
                )
                if not present
            ]
            if missing:
                message = f"the counterpoint lacks {', '.join(missing)} (`Addresses:`, `Claim:`, `Support:` with items)"
                self.add(RuleCode.COUNTERPOINT_INCOMPLETE, message, point.line, COUNTERPOINTS)
            if point.addresses:
                for target in point.addresses.split("|"):
                    self._check_addresses(target.strip(), point.line)

    def _check_addresses(self, target: str, line: int | None) -> None:
        reference = parse_reference(target, self.names)
        unknown = None
        if reference.kind == "turn":
            if reference.turn is None or self.ctx.prior_turn(reference.turn) is None:
                unknown = f"Addresses names Turn {reference.turn}, which is not an earlier turn"
            else:
                self._check_turn_excerpt(reference, line, COUNTERPOINTS)
        elif reference.kind == "source" and reference.heading is not None:
            if not self._heading_exists(reference.heading):
                unknown = f"Addresses names {reference.heading!r}, which is not a heading of the source"
            if reference.excerpt is not None:
                self._check_source_excerpt(reference, line, COUNTERPOINTS)
        else:
            source = self.ctx.source.name if self.ctx.source else "the source"
            unknown = f"Addresses {target!r} must be `Turn M` or `{source}#Heading`"
        if unknown:
            self.add(RuleCode.ADDRESSES_UNKNOWN, unknown, line, COUNTERPOINTS)

    # SUPPORT_KIND, SOURCE_REF_NOT_FOUND, TURN_REF_NOT_FOUND
    def check_support(self) -> None:
        for item, reference in self.references:
            if reference.kind == "turn":
                self._check_turn_reference(reference, item.line, item.section)
            elif reference.kind == "source":
                self._check_source_reference(reference, item.line, item.section)
            elif reference.kind == "other-document":
                self.add(RuleCode.SUPPORT_KIND, self._other_document(reference), item.line, item.section)
            elif reference.kind == "unknown":
                message = (
                    f"{_shorten(item.text)!r} is not a URL, a source reference (`name#heading`, `name:12-18`,"
                    ' `name "excerpt"`), a turn reference (`Turn M`), `Principle: …` or `[CONJECTURE] …`'
                )
                self.add(RuleCode.SUPPORT_KIND, message, item.line, item.section)

    def _other_document(self, reference: Reference) -> str:
        source = self.ctx.source.name if self.ctx.source else "the source"
        cited = reference.document or ""
        if source != "the source" and cited.replace("\\", "/").rsplit("/", 1)[-1].casefold() == source.casefold():
            return (
                f"{cited!r} is not a name the record knows the source by; cite it as `{source}`"
                " (another path would not resolve on every clone)"
            )
        return f"{_shorten(reference.text)!r} cites another document; cite the source as `{source}`"

    def _check_turn_reference(self, reference: Reference, line: int | None, section: str) -> None:
        if reference.turn is None or self.ctx.prior_turn(reference.turn) is None:
            self.add(RuleCode.TURN_REF_NOT_FOUND, f"Turn {reference.turn} is not an earlier turn", line, section)
        else:
            self._check_turn_excerpt(reference, line, section)

    def _check_turn_excerpt(self, reference: Reference, line: int | None, section: str) -> None:
        cited = self.ctx.prior_turn(reference.turn or 0)
        if reference.excerpt is not None and cited is not None and not cited.contains_excerpt(reference.excerpt):
            message = f"Turn {reference.turn} does not contain {_shorten(reference.excerpt)!r}"
            self.add(RuleCode.TURN_REF_NOT_FOUND, message, line, section)

    def _check_source_reference(self, reference: Reference, line: int | None, section: str) -> None:
        source = self.ctx.source
        if not reference.has_locator:
            message = f"{reference.text!r} needs a locator: `#heading`, `:line`, `:start-end` or a quoted excerpt"
            self.add(RuleCode.SUPPORT_KIND, message, line, section)
            return
        if reference.heading is not None and not self._heading_exists(reference.heading):
            self.add(RuleCode.SOURCE_REF_NOT_FOUND, f"the source has no heading {reference.heading!r}", line, section)
        if reference.lines is not None and source is not None and not source.has_lines(*reference.lines):
            start, end = reference.lines
            cited = f"line {start} is" if start == end else f"lines {start}-{end} are"
            message = f"{cited} not within the source ({len(source.lines)} lines)"
            self.add(RuleCode.SOURCE_REF_NOT_FOUND, message, line, section)
        if reference.excerpt is not None:
            self._check_source_excerpt(reference, line, section)

    def _check_source_excerpt(self, reference: Reference, line: int | None, section: str) -> None:
        source = self.ctx.source
        if source is not None and not source.contains_excerpt(reference.excerpt or ""):
            message = f"the source does not contain {_shorten(reference.excerpt or '')!r}"
            self.add(RuleCode.SOURCE_REF_NOT_FOUND, message, line, section)

    def _heading_exists(self, written: str) -> bool:
        source = self.ctx.source
        return source is None or any(source.has_heading(c) for c in heading_candidates(written))

    # TOO_MANY_SOURCES
    def check_source_count(self) -> None:
        references = dict(self.references)
        turn = self.turn
        for support in (
            *(point.support for point in turn.counterpoints),
            turn.novel_support,
            turn.stance_revision_support,
        ):
            urls = [(item, references[item].url) for item in support if references[item].kind == "url"]
            extra = urls[MAX_SOURCES_PER_ITEM:]
            if extra:
                first = extra[0][0]
                message = (
                    f"{len(urls)} URLs support one item; cite at most {MAX_SOURCES_PER_ITEM}, the best: the others"
                    f" are not verified ({', '.join(url or item.text for item, url in extra)})"
                )
                self.add(RuleCode.TOO_MANY_SOURCES, message, first.line, first.section)

    # FIGURE_NOT_IN_SOURCE
    def check_source_figures(self) -> None:
        """A claim citing the source, and no URL or principle: each figure is the source's, or an earlier cited turn's."""
        source, turn = self.ctx.source, self.turn
        if source is None:
            return  # not checked without the source, as its locators are not
        claims = [
            (point.claim, point.support, point.line, COUNTERPOINTS) for point in turn.counterpoints if point.claim
        ]
        if turn.novel_claim:
            claims.append((turn.novel_claim, turn.novel_support, turn.novel_claim_line, NOVEL_ARGUMENT))
        references = dict(self.references)
        for claim, support, line, section in claims:
            cited = [references[item] for item in support]
            kinds = {reference.kind for reference in cited}
            if "source" not in kinds or kinds & {"url", "principle"}:
                continue  # a page's figures are checked on the page (`duel verify`); a principle argues its own
            missing = source.figures.missing(stated_figures(claim))
            for reference in cited:
                earlier = self.ctx.prior_turn(reference.turn or 0) if reference.kind == "turn" else None
                missing = earlier.figures.missing(missing) if earlier is not None and missing else missing
            if missing:
                message = (
                    f"the claim states {_figures(missing)}, which the source does not (nor a turn it cites): give"
                    " the source's own figure, cite where yours comes from, or argue a value you propose with a"
                    " `Principle: …` item"
                )
                self.add(RuleCode.FIGURE_NOT_IN_SOURCE, message, line, section)

    # CONJECTURE_AS_BASIS
    def check_conjectures(self) -> None:
        """A reference that does not resolve counts as evidence here: it has its own violation."""
        references = dict(self.references)
        for point in self.turn.counterpoints:
            kinds = {self._evidence(references[item]) for item in point.support}
            if "conjecture" in kinds and "citation" not in kinds:
                message = (
                    "the counterpoint rests on a conjecture alone: add a URL, a source reference"
                    " or a turn reference to text not tagged `[CONJECTURE]`"
                )
                self.add(RuleCode.CONJECTURE_AS_BASIS, message, point.line, COUNTERPOINTS)

    def _evidence(self, reference: Reference) -> str | None:
        """What a support item is to this rule: "citation", "conjecture", or None (a principle, an invalid item)."""
        if reference.kind == "conjecture":
            return "conjecture"
        if reference.kind == "turn":
            cited = self.ctx.prior_turn(reference.turn or 0)
            return "conjecture" if cited is not None and cited.points_at_conjecture(reference.excerpt) else "citation"
        return "citation" if reference.kind in ("url", "source") else None

    # NOVELTY
    def check_novelty(self) -> None:
        turn = self.turn
        section = turn.sections.get(NOVEL_ARGUMENT)
        if section is None or section.is_empty:
            return
        if not turn.novel_support:
            message = "the novel argument needs a `Support:` line followed by at least one support item"
            self.add(RuleCode.NOVELTY, message, section.line, NOVEL_ARGUMENT)
        if not turn.novel_claim:
            self.add(
                RuleCode.NOVELTY, "the novel argument needs a claim before `Support:`", section.line, NOVEL_ARGUMENT
            )
        elif self.ctx.novelty is not None and self.ctx.novelty.repeats(turn.novel_claim):
            message = "the novel argument's claim repeats an earlier position or claim"
            self.add(RuleCode.NOVELTY, message, turn.novel_claim_line, NOVEL_ARGUMENT)

    # UNRESOLVED_TAG
    def check_unresolved(self) -> None:
        for item in self.turn.unresolved:
            if item.blocking is None:
                message = f"{_shorten(item.text)!r} must end with `(blocking)` or `(non-blocking)`"
                self.add(RuleCode.UNRESOLVED_TAG, message, item.line, UNRESOLVED_ITEMS)

    # STANCE_REVISION
    def check_stance_revision(self) -> None:
        turn, previous = self.turn, self.ctx.previous_stance
        if previous is None or turn.stance not in STANCES or turn.stance == previous or turn.stance_revision_support:
            return
        section = turn.sections.get(STANCE_REVISION_SUPPORT)
        message = f"the stance changed from {previous} to {turn.stance}: give Stance Revision Support"
        self.add(
            RuleCode.STANCE_REVISION, message, section.line if section else turn.heading_line, STANCE_REVISION_SUPPORT
        )

    # CONSENSUS_BLOCKED
    def check_consensus(self) -> None:
        turn = self.turn
        if turn.stance != ACCEPTING_CONSENSUS:
            return
        for item in turn.unresolved:
            if item.blocking:
                message = "ACCEPTING_CONSENSUS cannot keep a blocking item"
                self.add(RuleCode.CONSENSUS_BLOCKED, message, item.line, UNRESOLVED_ITEMS)
        if not turn.support_items:
            self.add(
                RuleCode.CONSENSUS_BLOCKED, "ACCEPTING_CONSENSUS needs at least one support item", turn.heading_line
            )
        scoped = any(point.addresses and point.claim for point in turn.counterpoints)
        if not scoped and not any(item.blocking is False for item in turn.unresolved):
            message = "ACCEPTING_CONSENSUS needs a non-blocking unresolved item or a scoped critique (a counterpoint)"
            self.add(RuleCode.CONSENSUS_BLOCKED, message, turn.heading_line)

    # UNGROUNDED
    def check_grounding(self) -> None:
        kinds = {reference.kind for _, reference in self.references}
        if "source" in kinds or (self.ctx.turn_number > 1 and "turn" in kinds):
            return
        if self.ctx.turn_number > 1:
            message = "the turn cites neither the source nor an earlier turn"
        else:
            message = "the first turn must cite the source at least once"
        self.add(RuleCode.UNGROUNDED, message)


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


def _agreed_in(turn: ParsedTurn, excerpt: str) -> bool:
    """Whether ``excerpt`` is quoted from one of the turn's Agreements items."""
    return any(SearchableText(item.text).contains(excerpt) for item in turn.agreements)


def _figures(figures: Sequence[Figure]) -> str:
    """Figures named in a message: `1,250`, `40%` and `$3 million`."""
    named = [f"`{figure.text}`" for figure in figures]
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
