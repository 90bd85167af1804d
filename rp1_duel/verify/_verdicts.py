"""The rules that turn a fetch and the votes into a verdict and a confidence: pure, table-tested.

Mechanical first (:func:`mechanical`): a dead link or a quoted excerpt that is not on the
page is ``fabricated``; a page that could not be read is ``unverifiable``, with the reason;
a figure of the claim the page does not state makes it ``unreliable``, the figure named.
Then the quorum (:func:`quorum`): 2 of 3 valid votes decide. Confidence follows the
issue's table from the votes' ``basis``, and :func:`corroborate` raises two verified
secondary sources of one claim, on different hosts, to ``medium-high``
(docs/protocol.md section 10, "Verdicts").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final
from urllib.parse import urlsplit

from ..record import (
    QUORUM,
    Citation,
    CitationEntry,
    FetchRecord,
    VoteRecord,
    checked_figures,
    fetch_verdict,
    quorum_verdict,
)
from ..turns import FigureIndex, SearchableText
from ..vocabulary import BASES, CitationKind, Confidence, Verdict, Vote

# The strongest basis two valid votes agree on gives the confidence.
_CONFIDENCE_OF_BASIS: Final = {
    Vote.STATES: Confidence.HIGH,
    Vote.REPORTS: Confidence.MEDIUM,
    Vote.CIRCUMSTANTIAL: Confidence.LOW,
}


@dataclass(kw_only=True, frozen=True)
class Judgement:
    """A citation's verdict, its confidence (if any) and the reason, in a line."""

    verdict: str
    confidence: str | None
    reason: str
    missing_figures: tuple[str, ...] = ()  # the claim's figures the page does not state, as the claim writes them


def by_kind(citation: Citation) -> Judgement | None:
    """The verdict of an item that is not a URL: nothing to fetch."""
    if citation.kind == CitationKind.PRINCIPLE:
        return Judgement(verdict=Verdict.NOT_CHECKABLE, confidence=None, reason="a principle is argued, not cited")
    if citation.kind == CitationKind.SOURCE:
        return Judgement(
            verdict=Verdict.CHECKED_AT_APPEND,
            confidence=None,
            reason="checked against the source when the turn was appended",
        )
    if citation.kind == CitationKind.TURN:
        return Judgement(
            verdict=Verdict.CHECKED_AT_APPEND,
            confidence=None,
            reason="checked against the cited turn when the turn was appended",
        )
    return None


def failed_fetch(record: FetchRecord) -> Judgement | None:
    """What a fetch that read no page settles (the sidecar's own rule, :func:`fetch_verdict`), with its reason."""
    settled = fetch_verdict(record)
    if settled == Verdict.FABRICATED:
        return Judgement(verdict=Verdict.FABRICATED, confidence=Confidence.HIGH, reason=f"dead link: {record.detail}")
    if settled == Verdict.UNVERIFIABLE:
        return Judgement(
            verdict=Verdict.UNVERIFIABLE, confidence=None, reason=f"the page could not be read: {record.detail}"
        )
    return None


def mechanical(
    citation: Citation, record: FetchRecord, page: SearchableText | None, figures: FigureIndex | None = None
) -> Judgement | None:
    """The verdict a URL citation gets without a model, or None when its claim needs judging.
    ``figures`` indexes the page's numbers (the claim's figures are not checked without it)."""
    settled = failed_fetch(record)
    if settled is not None:
        return settled
    if citation.excerpt is not None and (page is None or not page.contains(citation.excerpt)):
        return Judgement(
            verdict=Verdict.FABRICATED, confidence=Confidence.HIGH, reason="the quoted excerpt is not on the page"
        )
    missing = figures.missing(checked_figures(citation)) if figures is not None else ()
    if missing:
        named = ", ".join(figure.text for figure in missing)
        reason = f"the page does not state the claim's {'figure' if len(missing) == 1 else 'figures'} {named}"
        return Judgement(
            verdict=Verdict.UNRELIABLE,
            confidence=Confidence.HIGH,
            reason=reason,
            missing_figures=tuple(figure.text for figure in missing),
        )
    if citation.claim is None:
        return Judgement(
            verdict=Verdict.REACHABLE,
            confidence=None,
            reason=f"the page is there (HTTP {record.status}); no claim to judge",
        )
    return None


NO_MODEL: Final = "judging the claim needs a model, and none is configured"


def unjudged(citation: Citation, why: str = NO_MODEL) -> Judgement:
    """The verdict of a citation whose page is there but whose claim no model judged, and why not."""
    quoted = ", and the quoted excerpt is on it" if citation.excerpt is not None else ""
    return Judgement(verdict=Verdict.UNJUDGED, confidence=None, reason=f"the page is there{quoted}; {why}")


def quorum(votes: Sequence[VoteRecord]) -> Judgement:
    """The 2-of-3 rule over the valid votes.

    Refuted (at least two valid refutes): ``unreliable``. Supported (at least two valid supports,
    fewer than two refutes): ``verified``. Unsupported (at least two valid votes that refute or
    find the page insufficient, fewer than two supports): ``unreliable``. Otherwise ``inconclusive``.
    """
    valid = [vote for vote in votes if vote.valid]
    supports = [vote for vote in valid if vote.answer == Vote.SUPPORTS]
    refutes = [vote for vote in valid if vote.answer == Vote.REFUTES]
    insufficient = [vote for vote in valid if vote.answer == Vote.INSUFFICIENT]
    tally = (
        f"{len(supports)} support, {len(refutes)} refute, {len(insufficient)} insufficient, "
        f"{len(votes) - len(valid)} invalid"
    )
    decided = quorum_verdict(votes)  # the sidecar's own rule, which duel validate checks again
    if decided == Verdict.UNRELIABLE and len(refutes) >= QUORUM:
        return Judgement(
            verdict=Verdict.UNRELIABLE, confidence=agreed_confidence(refutes), reason=f"refuted by the page ({tally})"
        )
    if decided == Verdict.VERIFIED:
        return Judgement(
            verdict=Verdict.VERIFIED, confidence=agreed_confidence(supports), reason=f"supported by the page ({tally})"
        )
    if decided == Verdict.UNRELIABLE:
        return Judgement(
            verdict=Verdict.UNRELIABLE, confidence=Confidence.LOW, reason=f"not supported by the page ({tally})"
        )
    return Judgement(verdict=Verdict.INCONCLUSIVE, confidence=None, reason=f"no 2-of-3 decision ({tally})")


def agreed_basis(votes: Sequence[VoteRecord]) -> str | None:
    """The strongest basis at least two of ``votes`` grant (a vote for `states` grants `reports` too)."""
    strengths = sorted(BASES.index(vote.basis) for vote in votes if vote.basis in BASES)
    return BASES[strengths[QUORUM - 1]] if len(strengths) >= QUORUM else None


def agreed_confidence(votes: Sequence[VoteRecord]) -> str | None:
    """The confidence that the basis ``votes`` agree on gives, or None when they agree on none."""
    basis = agreed_basis(votes)
    return None if basis is None else _CONFIDENCE_OF_BASIS[basis]


def corroborate(entries: Sequence[CitationEntry], fetches: dict[str, FetchRecord]) -> list[CitationEntry]:
    """Two verified secondary sources of one claim on different hosts: each is ``medium-high``."""
    hosts: dict[str, set[str]] = {}
    for entry in entries:
        if _secondary(entry) and entry.citation.claim is not None:
            hosts.setdefault(entry.citation.claim, set()).add(_host(entry, fetches))
    return [
        replace(entry, confidence=Confidence.MEDIUM_HIGH)
        if _secondary(entry) and len(hosts.get(entry.citation.claim or "", ())) >= QUORUM
        else entry
        for entry in entries
    ]


def _secondary(entry: CitationEntry) -> bool:
    supporting = [vote for vote in entry.votes if vote.valid and vote.answer == Vote.SUPPORTS]
    return entry.verdict == Verdict.VERIFIED and agreed_basis(supporting) == Vote.REPORTS


def _host(entry: CitationEntry, fetches: dict[str, FetchRecord]) -> str:
    record = fetches.get(entry.citation.url or "")
    url = (record.final_url if record else None) or entry.citation.url or ""
    return (urlsplit(url).hostname or "").removeprefix("www.")
