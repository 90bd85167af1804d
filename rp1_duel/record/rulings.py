"""Rulings: what the service found of a turn's cited source, written into the record (docs/protocol.md
section 10, "Rulings").

A ruling sits in the artifact's ``## Rulings`` part between markers, chained by hash as turns are::

    <!-- duel:ruling r=R sha256=HEX prev=HEX -->
    **Ruling R** on turn N, counterpoint 2 (seat S): `fabricated`, https://…
    - Evidence: the page answered HTTP 404
    - By: seat 2's verification
    - Redacted: the claim of turn N, counterpoint 2
    <!-- /duel:ruling -->

``sha256`` hashes the lines between the markers; ``prev`` is the previous ruling's hash (the genesis
hash for the first). A ``fabricated`` ruling redacts the claim its citation was meant to support: the
turn stays in the record byte for byte, and every view shows the claim as redacted, never its text
(:func:`redacted_body`). Pure: the service writes rulings, ``duel validate`` checks them, each against the
turn it names (:func:`ruling_mismatch`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..vocabulary import Verdict

if TYPE_CHECKING:  # the lock service loads rulings with every state: never the Markdown parser
    from ..turns import ParsedTurn
    from .citations import Citation

__all__ = [
    "AGAINST",
    "RULED",
    "Ruling",
    "chained",
    "claim_of",
    "parse_ruling",
    "redacted_body",
    "ruled_items",
    "ruling_mismatch",
    "ruling_sha256",
    "ruling_text",
    "where_of",
]

GENESIS = "0" * 64
RULED = (Verdict.VERIFIED, Verdict.UNRELIABLE, Verdict.FABRICATED)  # the verdicts a ruling records
AGAINST = (Verdict.UNRELIABLE, Verdict.FABRICATED)  # a source ruled so is cited no more; a correction replaces it
EVIDENCE_CHARS = 500
NOVEL = "novel argument"
# Patterns as text, compiled at first use (re caches them): the lock service loads this module with every state.
_COUNTERPOINT = r"counterpoint (\d{1,3})"
_CORRECTION = r"correction (\d{1,3})"
_HEAD = r"(?m)^\*\*Ruling \d+\*\* on turn (\d+), (.+?) \(seat (\d+)\), before turn (\d+): `([a-z_]+)`, <(\S+)>$"
_EVIDENCE = r"(?m)^- Evidence: (.*)$"
_BY = r"(?m)^- By: (.*)$"
_CLAIM_LABEL = r"(?i)^\s*(?:[-*+]\s+)?(?:\*\*)?claim(?:\*\*)?\s*:\s*(?:\*\*)?\s*"


@dataclass(kw_only=True, frozen=True)
class Ruling:
    """One ruling: on ``turn``'s citation ``url`` in the item ``where``, by whose check, with what evidence."""

    r: int
    turn: int
    seat: int  # the seat that wrote the turn
    where: str  # "counterpoint 2" or "novel argument": the claim the citation supports
    url: str
    verdict: str  # one of RULED
    evidence: str  # one line
    by: str  # "seat 2's verification", "seat 2's challenge in turn 5"
    before: int  # the number of the next turn when it was written: turns from this one on are held to it

    @property
    def shown_evidence(self) -> str:
        """The evidence as its page put it: the record writes its angle brackets as entities, and a view
        escapes the text for its own medium (an HTML report once, not twice)."""
        return self.evidence.replace("&lt;", "<").replace("&gt;", ">")

    @property
    def redacts(self) -> bool:
        """A fabricated source: the claim it was cited for is redacted from every view."""
        return self.verdict == Verdict.FABRICATED

    def to_json(self) -> dict[str, Any]:
        """As the state keeps it."""
        return dict(vars(self))

    @classmethod
    def from_json(cls, data: Any) -> Ruling:
        """Read back; ValueError for anything the service never writes."""
        fields = data if isinstance(data, dict) else {}
        numbers, texts = ("r", "turn", "seat", "before"), ("where", "url", "verdict", "evidence", "by")
        if not all(type(fields.get(n)) is int for n in numbers) or not all(
            isinstance(fields.get(t), str) for t in texts
        ):
            raise ValueError("a ruling's fields are not what the service writes")
        if fields["verdict"] not in RULED:
            raise ValueError(f"a ruling's verdict is one of {', '.join(RULED)}")
        return cls(**{name: fields[name] for name in (*numbers, *texts)})


def ruling_text(ruling: Ruling) -> str:
    """The lines between a ruling's markers, the text its hash covers."""
    lines = [
        (
            f"**Ruling {ruling.r}** on turn {ruling.turn}, {ruling.where} (seat {ruling.seat}), before turn "
            f"{ruling.before}: `{ruling.verdict}`, <{ruling.url}>"
        ),
        f"- Evidence: {ruling.evidence}",
        f"- By: {ruling.by}",
    ]
    if ruling.redacts:
        lines.append(f"- Redacted: the claim of turn {ruling.turn}, {ruling.where}, is withdrawn from every view")
    return "\n".join(lines) + "\n"


def parse_ruling(r: int, text: str) -> Ruling | None:
    """The ruling a block's text holds (what :func:`ruling_text` wrote); None for text the service never writes."""
    head = re.match(_HEAD, text)
    evidence, by = re.search(_EVIDENCE, text), re.search(_BY, text)
    if head is None or evidence is None or by is None or head.group(5) not in RULED:
        return None
    return Ruling(
        r=r,
        turn=int(head.group(1)),
        seat=int(head.group(3)),
        where=head.group(2),
        url=head.group(6),
        verdict=head.group(5),
        evidence=evidence.group(1),
        by=by.group(1),
        before=int(head.group(4)),
    )


def ruling_sha256(ruling: Ruling) -> str:
    """The hash of :func:`ruling_text`, as UTF-8."""
    import hashlib  # a state with no ruling never pays for it

    return hashlib.sha256(ruling_text(ruling).encode("utf-8")).hexdigest()


def chained(rulings: Iterable[Ruling]) -> list[tuple[Ruling, str, str]]:
    """Each ruling with its hash and the previous one's (the genesis hash first)."""
    found, prev = [], GENESIS
    for ruling in rulings:
        sha = ruling_sha256(ruling)
        found.append((ruling, sha, prev))
        prev = sha
    return found


def ruled_items(turn: ParsedTurn, citations: Iterable[Citation]) -> frozenset[tuple[str, str]]:
    """What a ruling on ``turn`` may name, as the service derives it: the item (:func:`where_of`) and the URL of
    each of ``citations`` (the turn's own, :func:`~rp1_duel.record.citations.turn_citations`) that supports a claim."""
    found = ((where_of(turn, citation.line), citation.url) for citation in citations)
    return frozenset((where, url) for where, url in found if where is not None and url is not None)


def ruling_mismatch(
    ruling: Ruling, text: str, *, seat: int, ruled: Collection[tuple[str, str]], last: int
) -> str | None:
    """Why ``ruling``, read from the block ``text``, is not one the service writes of its turn, which seat ``seat``
    wrote, whose :func:`ruled_items` are ``ruled``, in a record whose last turn is ``last``; None when it is.
    A ruling on a URL the turn does not cite in that item would redact a claim no ruled source supported."""
    named = f"ruling {ruling.r} on turn {ruling.turn}"
    if ruling_text(ruling) != text:
        return f"{named} holds text the service never writes"
    if ruling.seat != seat:
        return f"{named} names seat {ruling.seat} for turn {ruling.turn}, which seat {seat} wrote"
    if (ruling.where, ruling.url) not in ruled:
        if all(where != ruling.where for where, _ in ruled):
            return f"{named}: turn {ruling.turn} has no {ruling.where} citing a URL"
        return f"{named}: turn {ruling.turn} does not cite <{ruling.url}> in its {ruling.where}"
    if ruling.before <= ruling.turn:
        return f"{named} was written before turn {ruling.before}, not after the turn it rules on"
    if ruling.before > last + 1:
        return f"{named} was written before turn {ruling.before}, but the record ends at turn {last}"
    return None


def claim_of(turn: ParsedTurn, where: str) -> str | None:
    """The claim ``where`` names in ``turn``: a counterpoint's Claim, the novel argument's, or a correction's why."""
    if where == NOVEL:
        return turn.novel_claim or None
    corrected = re.fullmatch(_CORRECTION, where)
    if corrected is not None:
        index = int(corrected.group(1))
        return turn.corrections[index - 1].text if 1 <= index <= len(turn.corrections) else None
    found = re.fullmatch(_COUNTERPOINT, where)
    if found is None or not 1 <= int(found.group(1)) <= len(turn.counterpoints):
        return None
    return turn.counterpoints[int(found.group(1)) - 1].claim


def where_of(turn: ParsedTurn, line: int | None) -> str | None:
    """The item a citation on ``line`` of ``turn`` supports: the counterpoint it sits in, or the novel argument."""
    for index, counterpoint in enumerate(turn.counterpoints, start=1):
        if any(item.line == line for item in counterpoint.support):
            return f"counterpoint {index}"
    if any(item.line == line for item in turn.novel_support):
        return NOVEL
    return next((f"correction {k}" for k, item in enumerate(turn.corrections, start=1) if item.line == line), None)


def _claim_line(lines: Sequence[str], turn: ParsedTurn, where: str) -> int | None:
    """The index in ``lines`` of the line where ``where``'s claim begins."""
    if where == NOVEL:
        return turn.novel_claim_line - 1 if turn.novel_claim_line else None
    corrected = re.fullmatch(_CORRECTION, where)
    if corrected is not None:
        index = int(corrected.group(1))
        line = turn.corrections[index - 1].line if 1 <= index <= len(turn.corrections) else None
        return line - 1 if line else None
    found = re.fullmatch(_COUNTERPOINT, where)
    if found is None or not 1 <= int(found.group(1)) <= len(turn.counterpoints):
        return None
    start = (turn.counterpoints[int(found.group(1)) - 1].line or 1) - 1
    return next((i for i in range(start, len(lines)) if re.match(_CLAIM_LABEL, lines[i])), None)


def redacted_body(body: str, turn: ParsedTurn, rulings: Sequence[Ruling]) -> str:
    """``body`` (turn ``turn``'s text) with every claim a fabricated ruling redacted, its first line replaced:
    what a view shows. The record keeps the turn as written; the redacted line names its ruling."""
    lines = body.split("\n")
    for ruling in rulings:
        index = _claim_line(lines, turn, ruling.where) if ruling.redacts else None
        if index is None:
            continue
        labelled = re.match(_CLAIM_LABEL, lines[index])
        lead = labelled.group(0) if labelled else lines[index][: len(lines[index]) - len(lines[index].lstrip())]
        lines[index] = f"{lead}[redacted: ruling {ruling.r} found its source fabricated]"
    return "\n".join(lines)
