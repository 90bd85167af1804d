"""The evidence family: what a turn cites exists, says what it is cited for, and grounds the turn.

Where the protocol is silent, this family decides:
- Counterpoints are the section's list items; prose next to them is commentary. Without
  a list, each paragraph counts as a counterpoint (so it needs Addresses, Claim, Support).
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
- A chair's turn has no support items: the turns it names in its pre-closing and synthesis are
  found as running text names them (`Turn M "…"`), and held to TURN_REF_NOT_FOUND.
- CONJECTURE_AS_BASIS: a claim is a counterpoint's Claim or the novel argument's claim; it
  or a support item is a conjecture when it begins with `[CONJECTURE]` (exact case). A
  counterpoint whose evidence is conjectures only (tagged items, `Turn M` pointing at a
  tagged claim) is refused; a principle is no evidence, a tagged claim of its own is allowed.
- Figures are read and matched by :mod:`rp1_duel.turns.figures`. FIGURE_NOT_IN_SOURCE reads a
  claim whose support cites the source and neither a URL (`duel verify` checks the page) nor a
  principle (a value the writer proposes); a figure of a `Turn M` it cites counts.
- TOO_MANY_SOURCES counts the URLs of each counterpoint's Support, of the novel argument's and of
  Stance Revision Support, and is reported at the sixth, listing every URL past the fifth.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...vocabulary import COUNTERPOINTS, MAX_SOURCES_PER_ITEM, NOVEL_ARGUMENT, Phase, RuleCode
from ..figures import stated_figures
from ..references import Reference, heading_candidates, parse_reference, turns_in_text
from ._checked import Checked, Rule, TurnViolation, any_turn, named_figures, only, panel_turn, shorten

__all__ = ["RULES"]


def _counterpoints_incomplete(checked: Checked) -> Iterator[TurnViolation]:
    for point in checked.turn.counterpoints:
        parts = (("Addresses", point.addresses), ("Claim", point.claim), ("Support", point.support))
        missing = [part for part, present in parts if not present]
        if missing:
            message = f"the counterpoint lacks {', '.join(missing)} (`Addresses:`, `Claim:`, `Support:` with items)"
            yield checked.violation(RuleCode.COUNTERPOINT_INCOMPLETE, message, point.line, COUNTERPOINTS)


def _addressed(checked: Checked) -> list[TurnViolation]:
    """What each counterpoint's Addresses targets break: ADDRESSES_UNKNOWN, and the excerpts they quote
    (TURN_REF_NOT_FOUND, SOURCE_REF_NOT_FOUND)."""
    found: list[TurnViolation] = []
    for point in checked.turn.counterpoints:
        for target in point.addresses.split("|") if point.addresses else ():
            found += _address(checked, target.strip(), point.line)
    return found


def _address(checked: Checked, target: str, line: int | None) -> Iterator[TurnViolation]:
    reference = parse_reference(target, checked.names)
    unknown = None
    if reference.kind == "turn":
        if reference.turn is None or checked.ctx.prior_turn(reference.turn) is None:
            unknown = f"Addresses names Turn {reference.turn}, which is not an earlier turn"
        else:
            yield from _turn_excerpt(checked, reference, line, COUNTERPOINTS)
    elif reference.kind == "source" and reference.heading is not None:
        if not _heading_exists(checked, reference.heading):
            unknown = f"Addresses names {reference.heading!r}, which is not a heading of the source"
        if reference.excerpt is not None:
            yield from _source_excerpt(checked, reference, line, COUNTERPOINTS)
    else:
        source = checked.ctx.source.name if checked.ctx.source else "the source"
        unknown = f"Addresses {target!r} must be `Turn M` or `{source}#Heading`"
    if unknown:
        yield checked.violation(RuleCode.ADDRESSES_UNKNOWN, unknown, line, COUNTERPOINTS)


def _supported(checked: Checked) -> list[TurnViolation]:
    """What the support items break: SUPPORT_KIND, SOURCE_REF_NOT_FOUND, TURN_REF_NOT_FOUND."""
    found: list[TurnViolation] = []
    for item, reference in checked.references:
        if reference.kind == "turn":
            found += _turn_reference(checked, reference, item.line, item.section)
        elif reference.kind == "source":
            found += _source_reference(checked, reference, item.line, item.section)
        elif reference.kind == "other-document":
            found.append(
                checked.violation(RuleCode.SUPPORT_KIND, _other_document(checked, reference), item.line, item.section)
            )
        elif reference.kind == "unknown":
            message = (
                f"{shorten(item.text)!r} is not a URL, a source reference (`name#heading`, `name:12-18`,"
                ' `name "excerpt"`), a turn reference (`Turn M`), `Principle: …` or `[CONJECTURE] …`'
            )
            found.append(checked.violation(RuleCode.SUPPORT_KIND, message, item.line, item.section))
    return found


def _other_document(checked: Checked, reference: Reference) -> str:
    source = checked.ctx.source.name if checked.ctx.source else "the source"
    cited = reference.document or ""
    if source != "the source" and cited.replace("\\", "/").rsplit("/", 1)[-1].casefold() == source.casefold():
        return (
            f"{cited!r} is not a name the record knows the source by; cite it as `{source}`"
            " (another path would not resolve on every clone)"
        )
    return f"{shorten(reference.text)!r} cites another document; cite the source as `{source}`"


def _turn_reference(checked: Checked, reference: Reference, line: int | None, section: str) -> Iterator[TurnViolation]:
    if reference.turn is None or checked.ctx.prior_turn(reference.turn) is None:
        yield checked.violation(
            RuleCode.TURN_REF_NOT_FOUND, f"Turn {reference.turn} is not an earlier turn", line, section
        )
    else:
        yield from _turn_excerpt(checked, reference, line, section)


def _turn_excerpt(checked: Checked, reference: Reference, line: int | None, section: str) -> Iterator[TurnViolation]:
    cited = checked.ctx.prior_turn(reference.turn or 0)
    if reference.excerpt is not None and cited is not None and not cited.contains_excerpt(reference.excerpt):
        message = f"Turn {reference.turn} does not contain {shorten(reference.excerpt)!r}"
        yield checked.violation(RuleCode.TURN_REF_NOT_FOUND, message, line, section)


def _source_reference(
    checked: Checked, reference: Reference, line: int | None, section: str
) -> Iterator[TurnViolation]:
    source = checked.ctx.source
    if not reference.has_locator:
        message = f"{reference.text!r} needs a locator: `#heading`, `:line`, `:start-end` or a quoted excerpt"
        yield checked.violation(RuleCode.SUPPORT_KIND, message, line, section)
        return
    if reference.heading is not None and not _heading_exists(checked, reference.heading):
        message = f"the source has no heading {reference.heading!r}"
        yield checked.violation(RuleCode.SOURCE_REF_NOT_FOUND, message, line, section)
    if reference.lines is not None and source is not None and not source.has_lines(*reference.lines):
        start, end = reference.lines
        cited = f"line {start} is" if start == end else f"lines {start}-{end} are"
        message = f"{cited} not within the source ({len(source.lines)} lines)"
        yield checked.violation(RuleCode.SOURCE_REF_NOT_FOUND, message, line, section)
    if reference.excerpt is not None:
        yield from _source_excerpt(checked, reference, line, section)


def _source_excerpt(checked: Checked, reference: Reference, line: int | None, section: str) -> Iterator[TurnViolation]:
    source = checked.ctx.source
    if source is not None and not source.contains_excerpt(reference.excerpt or ""):
        message = f"the source does not contain {shorten(reference.excerpt or '')!r}"
        yield checked.violation(RuleCode.SOURCE_REF_NOT_FOUND, message, line, section)


def _heading_exists(checked: Checked, written: str) -> bool:
    source = checked.ctx.source
    return source is None or any(source.has_heading(c) for c in heading_candidates(written))


def _named_by_chair(checked: Checked) -> list[TurnViolation]:
    """A chair's running text: each turn it names is an earlier one holding what it quotes."""
    if checked.ctx.chair is None or checked.ctx.chair.phase == Phase.OPENING_BRIEF:
        return []  # the brief comes first: the turns it may name are yet to come
    found: list[TurnViolation] = []
    for section in checked.turn.sections.values():
        for mention in turns_in_text(section.body):
            line = section.line + 1 + section.body.count("\n", 0, mention.start)
            reference = Reference(kind="turn", text="", turn=mention.turn, excerpt=mention.excerpt)
            found += _turn_reference(checked, reference, line, section.name)
    return found


def _turn_refs(checked: Checked) -> list[TurnViolation]:
    finders = (_named_by_chair,) if checked.ctx.by_chair else (_addressed, _supported)
    return only(RuleCode.TURN_REF_NOT_FOUND, *finders)(checked)


def _too_many_sources(checked: Checked) -> Iterator[TurnViolation]:
    references = dict(checked.references)
    turn = checked.turn
    for support in (*(point.support for point in turn.counterpoints), turn.novel_support, turn.stance_revision_support):
        urls = [(item, references[item].url) for item in support if references[item].kind == "url"]
        extra = urls[MAX_SOURCES_PER_ITEM:]
        if extra:
            first = extra[0][0]
            message = (
                f"{len(urls)} URLs support one item; cite at most {MAX_SOURCES_PER_ITEM}, the best: the others"
                f" are not verified ({', '.join(url or item.text for item, url in extra)})"
            )
            yield checked.violation(RuleCode.TOO_MANY_SOURCES, message, first.line, first.section)


def _figures_not_in_source(checked: Checked) -> Iterator[TurnViolation]:
    """A claim citing the source, and no URL or principle: each figure is the source's, or an earlier cited turn's."""
    source, turn = checked.ctx.source, checked.turn
    if source is None:
        return  # not checked without the source, as its locators are not
    claims = [(point.claim, point.support, point.line, COUNTERPOINTS) for point in turn.counterpoints if point.claim]
    if turn.novel_claim:
        claims.append((turn.novel_claim, turn.novel_support, turn.novel_claim_line, NOVEL_ARGUMENT))
    references = dict(checked.references)
    for claim, support, line, section in claims:
        cited = [references[item] for item in support]
        kinds = {reference.kind for reference in cited}
        if "source" not in kinds or kinds & {"url", "principle"}:
            continue  # a page's figures are checked on the page (`duel verify`); a principle argues its own
        missing = source.figures.missing(stated_figures(claim))
        for reference in cited:
            earlier = checked.ctx.prior_turn(reference.turn or 0) if reference.kind == "turn" else None
            missing = earlier.figures.missing(missing) if earlier is not None and missing else missing
        if missing:
            message = (
                f"the claim states {named_figures(missing)}, which the source does not (nor a turn it cites): give"
                " the source's own figure, cite where yours comes from, or argue a value you propose with a"
                " `Principle: …` item"
            )
            yield checked.violation(RuleCode.FIGURE_NOT_IN_SOURCE, message, line, section)


def _conjectures_as_basis(checked: Checked) -> Iterator[TurnViolation]:
    """A reference that does not resolve counts as evidence here: it has its own violation."""
    references = dict(checked.references)
    for point in checked.turn.counterpoints:
        kinds = {_evidence(checked, references[item]) for item in point.support}
        if "conjecture" in kinds and "citation" not in kinds:
            message = (
                "the counterpoint rests on a conjecture alone: add a URL, a source reference"
                " or a turn reference to text not tagged `[CONJECTURE]`"
            )
            yield checked.violation(RuleCode.CONJECTURE_AS_BASIS, message, point.line, COUNTERPOINTS)


def _evidence(checked: Checked, reference: Reference) -> str | None:
    """What a support item is to CONJECTURE_AS_BASIS: "citation", "conjecture", or None (a principle, an invalid item)."""
    if reference.kind == "conjecture":
        return "conjecture"
    if reference.kind == "turn":
        cited = checked.ctx.prior_turn(reference.turn or 0)
        return "conjecture" if cited is not None and cited.points_at_conjecture(reference.excerpt) else "citation"
    return "citation" if reference.kind in ("url", "source") else None


RULES = (
    Rule(
        code=RuleCode.COUNTERPOINT_INCOMPLETE,
        text="every counterpoint has Addresses, Claim and at least one Support item",
        applies=panel_turn,
        check=_counterpoints_incomplete,
    ),
    Rule(
        code=RuleCode.ADDRESSES_UNKNOWN,
        text="Addresses names an earlier turn that exists, or a heading of the source",
        applies=panel_turn,
        check=only(RuleCode.ADDRESSES_UNKNOWN, _addressed),
    ),
    Rule(
        code=RuleCode.SUPPORT_KIND,
        text="every support item is a URL (`https://…`), a source reference, a turn reference,"
        " `Principle: …`, or `[CONJECTURE] …`",
        applies=panel_turn,
        check=only(RuleCode.SUPPORT_KIND, _supported),
    ),
    Rule(
        code=RuleCode.SOURCE_REF_NOT_FOUND,
        text="every heading, line and quoted excerpt cited from the source exists in it",
        applies=panel_turn,
        check=only(RuleCode.SOURCE_REF_NOT_FOUND, _addressed, _supported),
    ),
    Rule(
        code=RuleCode.FIGURE_NOT_IN_SOURCE,
        text="a claim whose support cites the source and no URL or principle states only"
        " figures (counts, percentages, money, durations) the source states, or an earlier turn it cites; a figure"
        " you propose is argued with a `Principle: …` item, and a claim beginning with `[CONJECTURE]` is not checked",
        applies=panel_turn,
        check=_figures_not_in_source,
    ),
    Rule(
        code=RuleCode.TOO_MANY_SOURCES,
        text=f"one counterpoint, the novel argument or Stance Revision Support cites at most"
        f" {MAX_SOURCES_PER_ITEM} URLs (the others are not verified)",
        applies=panel_turn,
        check=_too_many_sources,
    ),
    Rule(
        code=RuleCode.TURN_REF_NOT_FOUND,
        text="every turn cited exists and comes before this one, and a quoted excerpt from it appears in it",
        applies=any_turn,
        check=_turn_refs,
    ),
    Rule(
        code=RuleCode.CONJECTURE_AS_BASIS,
        text="a claim (a counterpoint's Claim, the novel argument's claim) no citation"
        " supports may begin with `[CONJECTURE]`; a counterpoint resting on conjectures (`[CONJECTURE] …` support"
        ' items, `Turn M "…"` quoting a tagged claim, `Turn M` when all its claims are tagged) also cites a URL,'
        " the source or untagged text of a turn (a principle is not a citation)",
        applies=panel_turn,
        check=_conjectures_as_basis,
    ),
)
