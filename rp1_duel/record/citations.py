"""What a debate cites: every support item and every URL of every turn, with the claim each supports.

Pure. ``duel verify`` checks these citations; ``duel validate`` checks that a verification
sidecar lists exactly these, so a sidecar with a verdict taken out is told from one that is
complete (docs/protocol.md section 10).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..turns import (
    Figure,
    ParsedTurn,
    SupportItem,
    fenced_lines,
    parse_reference,
    read_correction,
    split_lines,
    stated_figures,
    urls_in_line,
)
from ..vocabulary import (
    CITATION_KINDS,
    COUNTERPOINTS,
    MAX_SOURCES_PER_ITEM,
    NOVEL_ARGUMENT,
    SOURCE_CORRECTIONS,
    CitationKind,
)
from .artifact import TurnBlock

__all__ = ["Citation", "artifact_citations", "checked_figures", "turn_citations"]


@dataclass(kw_only=True, frozen=True)
class Citation:
    """One thing a turn cites. Two citations are the same when every field is: the turn's hash
    pins its text, so an unchanged turn gives the same citations again."""

    turn: int
    turn_sha256: str
    section: str | None
    line: int | None  # in the turn, its heading being line 1
    item: str  # the support item as the turn's parser reads it; a URL outside support items: the URL
    kind: str  # a CitationKind
    url: str | None = None
    excerpt: str | None = None  # the quoted excerpt after a URL, a source name or a turn reference
    claim: str | None = None  # what the item supports; None for a URL outside support items


def checked_figures(citation: Citation) -> tuple[Figure, ...]:
    """The figures a URL citation's page must state (docs/protocol.md section 10, "Figures on the page"):
    those of the claim it supports when that is a counterpoint's Claim or the Novel Argument's claim (not
    the Position that Stance Revision Support backs), and not a `[CONJECTURE]`."""
    if citation.claim is None or citation.section not in (COUNTERPOINTS, NOVEL_ARGUMENT):
        return ()
    return stated_figures(citation.claim)


def turn_citations(number: int, block: TurnBlock, turn: ParsedTurn, source_names: Sequence[str]) -> list[Citation]:
    """The citations of one turn, in the order they stand.

    Support items first, each with its claim: a counterpoint's Claim, the Novel Argument's claim,
    or, for Stance Revision Support, the turn's Position; of each one's URLs the first five only
    (more is TOO_MANY_SOURCES: the others are neither listed nor opened). Then every other URL of
    the turn (Position, Agreements, a description), once each, outside code; a URL a support item
    of the same turn cites, or leaves unverified past the fifth, is not listed again.
    """
    found: list[Citation] = []
    beyond: set[str] = set()  # URLs past the fifth of an item
    for support, claim in _support_groups(turn):
        urls = 0
        for item in support:
            reference = parse_reference(item.text, source_names)
            if reference.kind not in CITATION_KINDS:
                continue  # a conjecture cites nothing; other kinds a valid turn lacks: `duel validate` reports them
            if reference.kind == CitationKind.URL:
                urls += 1
                if urls > MAX_SOURCES_PER_ITEM:
                    beyond.add(reference.url or "")
                    continue
            found.append(
                Citation(
                    turn=number,
                    turn_sha256=block.sha256,
                    section=item.section,
                    line=item.line,
                    item=item.text,
                    kind=reference.kind,
                    url=reference.url,
                    excerpt=reference.excerpt,
                    claim=claim,
                )
            )
    found += _correction_citations(number, block.sha256, turn)
    cited = {citation.url for citation in found if citation.url} | beyond | _corrected(turn)
    lines = split_lines(block.body)
    for index, (line, fenced) in enumerate(zip(lines, fenced_lines(lines), strict=True)):
        for url in [] if fenced else urls_in_line(line):
            if url not in cited:
                cited.add(url)
                found.append(
                    Citation(
                        turn=number,
                        turn_sha256=block.sha256,
                        section=turn.section_at(index + 1),
                        line=index + 1,
                        item=url,
                        kind=CitationKind.URL,
                        url=url,
                    )
                )
    return found


def _correction_citations(number: int, sha256: str, turn: ParsedTurn) -> list[Citation]:
    """A correction's new source is checked as any citation is, against the why it gives."""
    found = []
    for entry in turn.corrections:
        correction = read_correction(entry.text, entry.line)
        if correction is not None:
            found.append(
                Citation(
                    turn=number,
                    turn_sha256=sha256,
                    section=SOURCE_CORRECTIONS,
                    line=entry.line,
                    item=entry.text,
                    kind=CitationKind.URL,
                    url=correction.new,
                    excerpt=None,
                    claim=correction.why,
                )
            )
    return found


def _corrected(turn: ParsedTurn) -> set[str]:
    """The sources a turn's corrections replace: named there, never cited."""
    found = (read_correction(item.text, item.line) for item in turn.corrections)
    return {correction.old for correction in found if correction is not None}


def artifact_citations(
    blocks: Sequence[TurnBlock], turns: Sequence[ParsedTurn], source_names: Sequence[str], *, first: int
) -> list[Citation]:
    """The citations of every turn given (``turns[i]`` parsed from ``blocks[i]``; the first is turn ``first``,
    0 in a chaired duel)."""
    return [
        citation
        for number, (block, turn) in enumerate(zip(blocks, turns, strict=False), start=first)
        for citation in turn_citations(number, block, turn, source_names)
    ]


def _support_groups(turn: ParsedTurn) -> list[tuple[tuple[SupportItem, ...], str | None]]:
    """Each list of support items with the claim it supports."""
    position = " ".join(turn.position.split()) or None
    groups = [(point.support, point.claim) for point in turn.counterpoints]
    return [*groups, (turn.novel_support, turn.novel_claim or None), (turn.stance_revision_support, position)]
