"""The verification sidecar: what ``duel verify`` found, next to the artifact, committed with it.

``<artifact stem>.verify.json`` holds the chain head it covers, every fetch (with the hash of
the bytes read) and every citation's verdict with its votes (docs/protocol.md section 10).
This module owns its format: the typed records, reading and writing them (sorted keys,
2-space indent, one final newline, so the same verification gives the same bytes), and
:func:`check`, the pure test ``duel validate`` applies: does the sidecar belong to the
artifact's chain, and does it list exactly what the turns it covers cite?

Loading trusts nothing: a sidecar comes with a pull request like the artifact does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..files import MAX_SIDECAR_BYTES, read_bounded, storage_errors, write_atomic
from ..turns import ParsedTurn
from ..vocabulary import (
    BASES,
    BRIEFS,
    CITATION_KINDS,
    CONFIDENCES,
    FETCH_FAILURES,
    VERDICTS,
    VOTE_ANSWERS,
    CitationKind,
    FetchFailure,
    Verdict,
    Vote,
)
from .artifact import GENESIS, FrontMatter, TurnBlock
from .citations import Citation, artifact_citations, checked_figures
from .history import citable_names

__all__ = [
    "CURRENT",
    "DEAD_STATUSES",
    "MISMATCH",
    "QUORUM",
    "STALE",
    "CitationEntry",
    "FetchRecord",
    "JsonReader",
    "Sidecar",
    "SidecarCheck",
    "SidecarError",
    "VoteRecord",
    "check",
    "dumps",
    "fetch_verdict",
    "load",
    "loads",
    "quorum_verdict",
    "read_json",
    "sidecar_path",
    "verdict_counts",
    "write",
]

FORMAT: Final = "duel-verify/1"
SUFFIX: Final = ".verify.json"

# The verdicts each kind of citation may carry.
URL_CLAIM_VERDICTS: Final = (
    Verdict.VERIFIED,
    Verdict.UNRELIABLE,
    Verdict.FABRICATED,
    Verdict.INCONCLUSIVE,
    Verdict.UNVERIFIABLE,
    Verdict.UNJUDGED,
)
URL_MENTION_VERDICTS: Final = (Verdict.FABRICATED, Verdict.UNVERIFIABLE, Verdict.REACHABLE)

# How a sidecar stands against its artifact (SidecarCheck.status).
CURRENT: Final = "current"  # covers every turn
STALE: Final = "stale"  # covers the turns up to an earlier one: valid, but later turns are unverified
MISMATCH: Final = "mismatch"  # belongs to another chain, or does not list what the turns cite


class SidecarError(ValueError):
    """A sidecar that is not JSON or not in this format; the message says where."""


@dataclass(kw_only=True, frozen=True)
class FetchRecord:
    """One URL's fetch: where it ended, what came back, or why nothing did."""

    final_url: str | None
    status: int | None  # the last HTTP status, None when no answer came
    content_type: str | None
    content_sha256: str | None  # of the bytes read, before text extraction
    bytes: int | None
    fetched_at: str
    error: str | None  # a FetchFailure code, None when the page was read
    detail: str | None  # a line for people: why it failed, or how the page was read

    @property
    def ok(self) -> bool:
        """Whether the page was read."""
        return self.error is None


@dataclass(kw_only=True, frozen=True)
class VoteRecord:
    """One voter's answer about one citation, and whether it counts."""

    voter: str
    brief: str  # Vote.BRIEF_SUPPORT, or Vote.BRIEF_REFUTE for the adversarial voter
    answer: str | None  # None when no answer could be read
    excerpt: str | None
    basis: str | None
    valid: bool
    reason: str | None  # why the vote does not count, when it does not


@dataclass(kw_only=True, frozen=True)
class CitationEntry:
    """A citation and what verification concluded about it."""

    citation: Citation
    verdict: str
    confidence: str | None
    reason: str
    votes: tuple[VoteRecord, ...] = ()
    # `unreliable` without a vote: the claim's figures its page does not state, as the claim writes them
    missing_figures: tuple[str, ...] = ()


@dataclass(kw_only=True, frozen=True)
class Sidecar:
    """A whole verification sidecar: the chain it covers, its voters, every fetch and every citation's verdict."""

    duel_id: str
    artifact: str  # the artifact's file name
    chain_head: str  # the sha256 of the last turn covered (64 zeros before turn 1)
    turns: int  # how many turns are covered
    verified_at: str  # when the content last changed
    voters: tuple[str, ...]
    fetches: Mapping[str, FetchRecord] = field(default_factory=dict)
    citations: tuple[CitationEntry, ...] = ()
    format: str = FORMAT

    def to_dict(self) -> dict[str, Any]:
        """The sidecar as JSON values, as :func:`dumps` writes it."""
        return {
            "format": self.format,
            "duel_id": self.duel_id,
            "artifact": self.artifact,
            "chain_head": self.chain_head,
            "turns": self.turns,
            "verified_at": self.verified_at,
            "voters": list(self.voters),
            "fetches": {url: vars(record) for url, record in self.fetches.items()},
            "citations": [_entry_dict(entry) for entry in self.citations],
        }

    def same_content(self, other: Sidecar) -> bool:
        """Equal but for ``verified_at``: a re-run that found nothing new."""
        mine, theirs = self.to_dict(), other.to_dict()
        mine.pop("verified_at")
        theirs.pop("verified_at")
        return mine == theirs

    def counts(self) -> dict[str, int]:
        """How many citations carry each verdict (verdicts with none left out)."""
        return verdict_counts(self.citations)


def verdict_counts(entries: Iterable[CitationEntry]) -> dict[str, int]:
    """How many of ``entries`` carry each verdict, in the vocabulary's order (verdicts with none left out)."""
    found = [entry.verdict for entry in entries]
    return {verdict: found.count(verdict) for verdict in VERDICTS if verdict in found}


def sidecar_path(artifact_path: str | os.PathLike[str]) -> Path:
    """Where an artifact's sidecar lies: beside it, named ``<artifact stem>.verify.json``."""
    path = Path(artifact_path)
    return path.with_name(path.stem + SUFFIX)


def dumps(sidecar: Sidecar) -> bytes:
    """The sidecar's bytes: sorted keys, 2-space indent, one final newline, so the same sidecar writes the same."""
    return (json.dumps(sidecar.to_dict(), sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write(path: str | os.PathLike[str], sidecar: Sidecar) -> None:
    """Write a sidecar whole or not at all, readable by all (it is committed beside its
    artifact). Raises ``STORAGE_FAILED``."""
    where = Path(path)
    with storage_errors(where.parent):
        write_atomic(where, dumps(sidecar), mode=0o644)


def load(path: str | os.PathLike[str]) -> Sidecar:
    """Read a sidecar (a regular file of at most 16 MiB). Raises OSError or :class:`SidecarError`."""
    try:
        data = read_bounded(path, MAX_SIDECAR_BYTES)
    except ValueError as exc:
        raise SidecarError(str(exc)) from None
    return loads(data)


def loads(data: bytes) -> Sidecar:
    """Read a sidecar from its bytes, trusting nothing; raises :class:`SidecarError`."""
    top = read_json(data, "the sidecar")
    if top.text("format") != FORMAT:
        raise SidecarError(f"format is not {FORMAT!r}")
    fetches = top.mapping("fetches")
    return Sidecar(
        duel_id=top.text("duel_id"),
        artifact=top.text("artifact"),
        chain_head=top.text("chain_head"),
        turns=top.count("turns"),
        verified_at=top.text("verified_at"),
        voters=tuple(JsonReader(name, "voters[]").value(str) for name in top.items("voters")),
        fetches={url: _fetch(JsonReader(fetches[url], f"fetches[{url!r}]")) for url in fetches},
        citations=tuple(
            _entry(JsonReader(item, f"citations[{index}]")) for index, item in enumerate(top.items("citations"))
        ),
    )


@dataclass(frozen=True)
class SidecarCheck:
    """How a sidecar stands against its artifact."""

    status: str  # CURRENT, STALE or MISMATCH
    problems: tuple[str, ...] = ()

    @property
    def belongs(self) -> bool:
        """Whether the sidecar is this artifact's (current or stale, not a mismatch)."""
        return self.status != MISMATCH


def check(
    sidecar: Sidecar,
    *,
    artifact_name: str,
    front: FrontMatter,
    blocks: Sequence[TurnBlock],
    turns: Sequence[ParsedTurn],
) -> SidecarCheck:
    """Whether ``sidecar`` belongs to this artifact's chain and lists exactly what its turns cite.

    ``turns[i]`` is ``blocks[i]`` parsed. Problems stop at the first difference in the
    citations: one is enough to say the sidecar is not this artifact's.
    """
    problems: list[str] = []
    if sidecar.duel_id != front.duel_id:
        problems.append(f"it is for duel {sidecar.duel_id!r}, not {front.duel_id!r}")
    if sidecar.artifact != artifact_name:
        problems.append(f"it is for artifact {sidecar.artifact!r}, not {artifact_name!r}")
    covered = sidecar.turns
    head = GENESIS if covered == 0 else blocks[covered - 1].sha256 if covered <= len(blocks) else None
    if head != sidecar.chain_head:
        problems.append(
            f"its chain head {sidecar.chain_head[:12]}… (after turn {covered}) is not the hash of that "
            "turn of the artifact"
        )
        return SidecarCheck(MISMATCH, tuple(problems))
    expected = artifact_citations(
        blocks[:covered], turns[:covered], citable_names(front.source_path), first=front.schedule.first
    )
    listed = [entry.citation for entry in sidecar.citations]
    difference = _first_difference(expected, listed)
    if difference:
        problems.append(difference)
    for entry in sidecar.citations:
        wrong = _wrong_verdict(entry, sidecar.fetches)
        if wrong:
            problems.append(wrong)
            break
    if problems:
        return SidecarCheck(MISMATCH, tuple(problems))
    return SidecarCheck(STALE if covered < len(blocks) else CURRENT)


def _first_difference(expected: list[Citation], listed: list[Citation]) -> str | None:
    for index, want in enumerate(expected):
        have = listed[index] if index < len(listed) else None
        if have == want:
            continue
        if have is not None and have not in expected:
            return f"it lists turn {have.turn}'s {_short(have.item)!r}, which the turns it covers do not cite"
        if want not in listed:
            return f"it leaves out turn {want.turn}'s {_short(want.item)!r}"
        return f"it lists turn {want.turn}'s citations in another order, or one of them twice"
    if len(listed) > len(expected):
        extra = listed[len(expected)]
        return f"it lists turn {extra.turn}'s {_short(extra.item)!r}, which the turns it covers do not cite"
    return None


def _wrong_verdict(entry: CitationEntry, fetches: Mapping[str, FetchRecord]) -> str | None:
    citation = entry.citation
    record = None
    if citation.kind == CitationKind.PRINCIPLE:
        allowed: tuple[str, ...] = (Verdict.NOT_CHECKABLE,)
    elif citation.kind in (CitationKind.SOURCE, CitationKind.TURN):
        allowed = (Verdict.CHECKED_AT_APPEND,)
    else:
        allowed = URL_CLAIM_VERDICTS if citation.claim is not None else URL_MENTION_VERDICTS
        record = fetches.get(citation.url or "")
        if record is None:
            return f"turn {citation.turn}'s {_short(citation.item)!r} has no fetch record"
    if entry.verdict not in allowed:
        return f"turn {citation.turn}'s {_short(citation.item)!r} cannot be {entry.verdict}"
    evidence = None if record is None else _evidence_against(entry, record)
    return f"turn {citation.turn}'s {_short(citation.item)!r}: {evidence}" if evidence else None


def _evidence_against(entry: CitationEntry, record: FetchRecord) -> str | None:
    """Why the sidecar's own evidence (the fetch, the votes, the missing figures) does not bear a URL citation's
    verdict out, if it does not."""
    settled = fetch_verdict(record)
    if entry.missing_figures:
        return _missing_figures_against(entry, page_read=settled is None)
    if settled is not None:
        return None if entry.verdict == settled else f"{entry.verdict}, but its fetch failed ({record.detail})"
    if entry.verdict == Verdict.UNVERIFIABLE:
        return f"{entry.verdict}, but its page was read"
    if entry.verdict == Verdict.FABRICATED and entry.citation.excerpt is None:
        return f"{entry.verdict}, but its page was read and it quotes nothing that could be missing from it"
    if entry.verdict in (Verdict.VERIFIED, Verdict.UNRELIABLE, Verdict.INCONCLUSIVE):
        decided = quorum_verdict(entry.votes)
        return None if decided == entry.verdict else f"{entry.verdict}, but its votes decide {decided}"
    return None


def _missing_figures_against(entry: CitationEntry, *, page_read: bool) -> str | None:
    """A citation found unreliable for a figure its page lacks: read, unvoted, and naming figures of its claim."""
    if not page_read or entry.verdict != Verdict.UNRELIABLE or entry.votes:
        return f"{entry.verdict}, but it names figures missing from its page"
    stated = {figure.text for figure in checked_figures(entry.citation)}
    strange = [figure for figure in entry.missing_figures if figure not in stated]
    return f"it names {strange[0]!r} missing from its page, which is no figure of its claim" if strange else None


DEAD_STATUSES: Final = frozenset({404, 410})
QUORUM: Final = 2


def fetch_verdict(record: FetchRecord) -> str | None:
    """What a fetch that read no page settles: ``fabricated`` for a dead link, else ``unverifiable``; None
    when the page was read."""
    if record.ok:
        return None
    dead = record.error in (FetchFailure.NAME_NOT_FOUND, FetchFailure.CONNECTION_REFUSED) or (
        record.error == FetchFailure.HTTP_STATUS and record.status in DEAD_STATUSES
    )
    return Verdict.FABRICATED if dead else Verdict.UNVERIFIABLE


def quorum_verdict(votes: Sequence[VoteRecord]) -> str:
    """The 2-of-3 rule over the valid votes (docs/protocol.md section 10, "The quorum")."""
    answers = [vote.answer for vote in votes if vote.valid]
    supports, refutes = answers.count(Vote.SUPPORTS), answers.count(Vote.REFUTES)
    if refutes >= QUORUM:
        return Verdict.UNRELIABLE
    if supports >= QUORUM:
        return Verdict.VERIFIED
    if refutes + answers.count(Vote.INSUFFICIENT) >= QUORUM:
        return Verdict.UNRELIABLE
    return Verdict.INCONCLUSIVE


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _entry_dict(entry: CitationEntry) -> dict[str, Any]:
    written = {
        **vars(entry.citation),
        "verdict": entry.verdict,
        "confidence": entry.confidence,
        "reason": entry.reason,
        "votes": [vars(vote) for vote in entry.votes],
    }
    if entry.missing_figures:  # only there: a sidecar without such a verdict reads as it always did
        written["missing_figures"] = list(entry.missing_figures)
    return written


def read_json(data: bytes, where: str) -> JsonReader:
    """A sidecar's bytes as JSON to read (this one's, or another sidecar's); raises :class:`SidecarError`."""
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SidecarError(f"not JSON: {first}") from None
    return JsonReader(raw, where)


class JsonReader:
    """Typed reads of untrusted JSON, each failure naming where it is."""

    def __init__(self, raw: Any, where: str):
        self.raw = raw
        self.where = where

    def value(self, kind: type[Any]) -> Any:
        """The value itself, which must be of ``kind`` (a bool is not an int here)."""
        if not isinstance(self.raw, kind) or (kind is int and isinstance(self.raw, bool)):
            raise SidecarError(f"{self.where} is not {_KIND_NAMES.get(kind, kind.__name__)}")
        return self.raw

    def field(self, key: str) -> JsonReader:
        """A reader of the object's field ``key``, which must be there."""
        mapping = self.value(dict)
        if key not in mapping:
            raise SidecarError(f"{self.where} lacks {key!r}")
        return JsonReader(mapping[key], f"{self.where}.{key}")

    def text(self, key: str) -> str:
        """The object's field ``key``, a string."""
        found: str = self.field(key).value(str)
        return found

    def optional_text(self, key: str) -> str | None:
        """The object's field ``key``, a string or null."""
        found = self.field(key)
        return None if found.raw is None else str(found.value(str))

    def optional_count(self, key: str) -> int | None:
        """The object's field ``key``, a whole number from 0, or null."""
        found = self.field(key)
        return None if found.raw is None else self.count(key)

    def count(self, key: str) -> int:
        """The object's field ``key``, a whole number from 0."""
        found: int = self.field(key).value(int)
        if found < 0:
            raise SidecarError(f"{self.where}.{key} is negative")
        return found

    def flag(self, key: str) -> bool:
        """The object's field ``key``, true or false."""
        found: bool = self.field(key).value(bool)
        return found

    def word(self, key: str, words: Sequence[str], *, optional: bool = False) -> str | None:
        """The object's field ``key``, one of ``words`` (or null, when ``optional``)."""
        found = self.optional_text(key) if optional else self.text(key)
        if found is not None and found not in words:
            raise SidecarError(f"{self.where}.{key} is {found!r}, not one of {', '.join(words)}")
        return found

    def items(self, key: str) -> list[Any]:
        """The object's field ``key``, a list."""
        found: list[Any] = self.field(key).value(list)
        return found

    def mapping(self, key: str) -> dict[str, Any]:
        """The object's field ``key``, an object."""
        found: dict[str, Any] = self.field(key).value(dict)
        return found


_KIND_NAMES = {str: "a string", int: "a whole number", bool: "true or false", list: "a list", dict: "an object"}


def _fetch(read: JsonReader) -> FetchRecord:
    return FetchRecord(
        final_url=read.optional_text("final_url"),
        status=read.optional_count("status"),
        content_type=read.optional_text("content_type"),
        content_sha256=read.optional_text("content_sha256"),
        bytes=read.optional_count("bytes"),
        fetched_at=read.text("fetched_at"),
        error=read.word("error", FETCH_FAILURES, optional=True),
        detail=read.optional_text("detail"),
    )


def _entry(read: JsonReader) -> CitationEntry:
    line = read.optional_count("line")
    citation = Citation(
        turn=read.count("turn"),
        turn_sha256=read.text("turn_sha256"),
        section=read.optional_text("section"),
        line=line,
        item=read.text("item"),
        kind=str(read.word("kind", CITATION_KINDS)),
        url=read.optional_text("url"),
        excerpt=read.optional_text("excerpt"),
        claim=read.optional_text("claim"),
    )
    votes = tuple(
        _vote(JsonReader(vote, f"{read.where}.votes[{index}]")) for index, vote in enumerate(read.items("votes"))
    )
    missing = read.field("missing_figures") if "missing_figures" in read.value(dict) else None
    return CitationEntry(
        citation=citation,
        verdict=str(read.word("verdict", VERDICTS)),
        confidence=read.word("confidence", CONFIDENCES, optional=True),
        reason=read.text("reason"),
        votes=votes,
        missing_figures=()
        if missing is None
        else tuple(JsonReader(text, f"{missing.where}[]").value(str) for text in missing.value(list)),
    )


def _vote(read: JsonReader) -> VoteRecord:
    return VoteRecord(
        voter=read.text("voter"),
        brief=str(read.word("brief", BRIEFS)),
        answer=read.word("answer", VOTE_ANSWERS, optional=True),
        excerpt=read.optional_text("excerpt"),
        basis=read.word("basis", BASES, optional=True),
        valid=read.flag("valid"),
        reason=read.optional_text("reason"),
    )
