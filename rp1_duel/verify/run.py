"""``duel verify``'s engine: citations in, verdicts out, reusing whatever is already known.

:class:`Verifier` verifies a list of citations: items that are not URLs by their kind, URLs
by a guarded fetch (each URL once), the mechanical rules, then, where a claim needs judging
and voters are given, the quorum. It keeps what it fetched for its lifetime, so a
participant that checks draft after draft fetches each page once; given the previous
sidecar, it reuses its settled verdicts and its fetches (with the page texts of the
:class:`~rp1_duel.verify.pages.PageCache`). :func:`verify_artifact` does this for a
committed artifact and returns the new sidecar; writing it is the caller's (one atomic
write).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Final

from ..clock import iso
from ..errors import DuelError
from ..record import (
    GENESIS,
    NOT_AN_ARTIFACT,
    Citation,
    CitationEntry,
    FetchRecord,
    RecordFile,
    Sidecar,
    SidecarError,
    VoteRecord,
    artifact_citations,
    chain_problems,
    citable_names,
    collect,
    load,
    read_failure,
    sidecar_path,
    write,
)
from ..turns import FigureIndex, SearchableText
from ..vocabulary import ErrorCode, FetchFailure, Verdict
from ._extraction import ExtractionError, extract_text, page_kind
from ._verdicts import NO_MODEL, Judgement, by_kind, corroborate, failed_fetch, mechanical, quorum, unjudged
from .fetch import Fetched, Fetcher
from .pages import PageCache
from .quorum import Seat, Voter, cast_vote, panel

__all__ = ["ArtifactVerification", "Verification", "Verifier", "verify_artifact", "verify_paths"]

VOTE_WORKERS: Final = 6  # model requests in flight at once


@dataclass(frozen=True)
class Page:
    """A URL's fetch record and, when the page was read, its text."""

    record: FetchRecord
    text: str | None

    @cached_property
    def searchable(self) -> SearchableText | None:
        """The page's text, ready to be searched for excerpts; None when no text was read."""
        return None if self.text is None else SearchableText(self.text)

    @cached_property
    def figures(self) -> FigureIndex | None:
        """The page's numbers, ready to be asked for a claim's figures; None when no text was read."""
        return None if self.text is None else FigureIndex(self.text)


@dataclass(frozen=True)
class Verification:
    """What :meth:`Verifier.verify` concluded: an entry per citation, and the fetch of every URL cited."""

    entries: tuple[CitationEntry, ...]  # one per citation, in the order given
    fetches: dict[str, FetchRecord]  # every URL cited

    @property
    def fabricated(self) -> int:
        """How many citations were found fabricated."""
        return sum(entry.verdict == Verdict.FABRICATED for entry in self.entries)


class Verifier:
    """Verifies citations with one fetcher, the voters given, and a page cache. Not for use by
    two threads at once; it runs its own fetches and votes concurrently."""

    def __init__(
        self,
        fetcher: Fetcher,
        voters: Sequence[Voter] = (),
        pages: PageCache | None = None,
        clock: Callable[[], float] = time.time,
        progress: Callable[[str], None] = lambda _line: None,
    ):
        self.fetcher = fetcher
        self.seats: tuple[Seat, ...] = panel(voters)
        self.pages = pages
        self.clock = clock
        self.progress = progress  # a line as each page lands and each vote comes in: minutes with real models
        self._read: dict[str, Page] = {}  # every URL this verifier fetched

    def verify(
        self,
        citations: Sequence[Citation],
        *,
        previous: Sidecar | None = None,
        refresh: bool = False,
        unjudged_because: str | None = None,
    ) -> Verification:
        """A verdict for each citation. ``previous`` (not with ``refresh``) lends its settled
        verdicts for citations it lists unchanged, and its fetches. ``unjudged_because`` keeps
        the verdicts mechanical even with voters: a claim that needs judging is ``unjudged``,
        for that reason."""
        known = {} if previous is None or refresh else {entry.citation: entry for entry in previous.citations}
        known_fetches = {} if previous is None or refresh else dict(previous.fetches)
        entries: dict[int, CitationEntry] = {}
        urls: dict[int, str] = {}
        for index, citation in enumerate(citations):
            judged = by_kind(citation)
            if judged is not None:
                entries[index] = _entry(citation, judged)
            elif citation.url is not None:
                urls[index] = citation.url
        # A URL is looked at again as a whole: every citation of it, or none.
        stale = {
            url
            for index, url in urls.items()
            if not self._settled(known.get(citations[index])) or url not in known_fetches
        }
        for index, url in urls.items():
            if url not in stale:
                entries[index] = known[citations[index]]
        pages = self._pages([url for url in dict.fromkeys(urls.values()) if url in stale], known_fetches)
        judging: list[int] = []
        for index, url in urls.items():
            if url not in stale:
                continue
            judged = self._without_votes(citations[index], pages[url], unjudged_because)
            if judged is None:
                judging.append(index)
            else:
                entries[index] = _entry(citations[index], judged)
        for index, votes in zip(judging, self._votes([citations[i] for i in judging], pages), strict=True):
            entries[index] = _entry(citations[index], quorum(votes), votes)
        fetches = {
            url: _unchanged(pages[url].record, known_fetches.get(url)) if url in pages else known_fetches[url]
            for url in urls.values()
        }
        ordered = [entries[index] for index in range(len(citations))]
        return Verification(tuple(corroborate(ordered, fetches)), fetches)

    def _without_votes(self, citation: Citation, page: Page, unjudged_because: str | None) -> Judgement | None:
        """The verdict the mechanical rules give, else ``unjudged`` when no vote is to be asked;
        None when the quorum is to judge the claim."""
        judged = mechanical(citation, page.record, page.searchable, page.figures)
        if judged is None and (unjudged_because is not None or not self.seats):
            judged = unjudged(citation, unjudged_because or NO_MODEL)
        return judged

    def _settled(self, entry: CitationEntry | None) -> bool:
        """Whether a known verdict stands: not one a later run may change (a page that could not
        be read, a claim left unjudged for want of a model that is now there, a vote that failed)."""
        if entry is None or entry.verdict == Verdict.UNVERIFIABLE:
            return False
        if entry.verdict == Verdict.UNJUDGED:
            return not self.seats
        return all(vote.answer is not None for vote in entry.votes)

    def _pages(self, urls: list[str], known_fetches: dict[str, FetchRecord]) -> dict[str, Page]:
        found: dict[str, Page] = {}
        wanted: list[str] = []
        for url in urls:
            page = self._read.get(url) or self._known_page(known_fetches.get(url))
            if page is None:
                wanted.append(url)
            else:
                found[url] = page
        if wanted:
            self.progress(f"fetching {_count(len(wanted), 'page')}…")
        landed = itertools.count(1)

        def show(fetched: Fetched) -> None:
            outcome = f"HTTP {fetched.status}" if fetched.status is not None else fetched.error or "no answer"
            self.progress(f"page {next(landed)} of {len(wanted)}: {fetched.url} ({outcome})")

        for url, fetched in self.fetcher.fetch_all(wanted, show).items():
            found[url] = self._read[url] = self._extracted(fetched)
        return found

    def _known_page(self, record: FetchRecord | None) -> Page | None:
        """A page an earlier run fetched: a dead link stays dead (until ``--refresh``); a page
        that was read, when its text is in the cache."""
        if record is None:
            return None
        failed = failed_fetch(record)
        if failed is not None:
            return Page(record, None) if failed.verdict == Verdict.FABRICATED else None
        text = self.pages.get(record.content_sha256) if self.pages is not None else None
        return None if text is None else Page(record, text)

    def _extracted(self, fetched: Fetched) -> Page:
        now = iso(self.clock())
        if fetched.body is None:
            return Page(
                FetchRecord(
                    final_url=fetched.final_url,
                    status=fetched.status,
                    content_type=fetched.content_type,
                    content_sha256=None,
                    bytes=None,
                    fetched_at=now,
                    error=fetched.error,
                    detail=fetched.detail,
                ),
                None,
            )
        body = fetched.body
        sha256 = hashlib.sha256(body).hexdigest()
        kind = page_kind(fetched.content_type, body)
        text = None
        if kind is None:
            error, detail = FetchFailure.UNSUPPORTED_CONTENT, f"{fetched.content_type} is not HTML, text or PDF"
        else:
            try:
                text = extract_text(body, kind, charset=fetched.charset)
                error, detail = None, f"read as {kind}: {len(text):,} characters of text"
            except ExtractionError as exc:
                error, detail = FetchFailure.UNREADABLE, str(exc)
        if text is not None and self.pages is not None:
            self.pages.put(sha256, text=text)
        record = FetchRecord(
            final_url=fetched.final_url,
            status=fetched.status,
            content_type=fetched.content_type,
            content_sha256=sha256,
            bytes=len(body),
            fetched_at=now,
            error=error,
            detail=detail,
        )
        return Page(record, text)

    def _votes(self, citations: list[Citation], pages: dict[str, Page]) -> list[tuple[VoteRecord, ...]]:
        """Every seat's vote on every citation, asked concurrently."""
        if not citations:
            return []
        for citation in citations:
            _ = pages[citation.url or ""].searchable  # built once, before the threads share it

        jobs = [(citation, seat) for citation in citations for seat in self.seats]
        self.progress(f"asking {_count(len(jobs), 'vote')} on {_count(len(citations), 'citation')}…")
        counted = itertools.count(1)

        def ask(job: tuple[Citation, Seat]) -> VoteRecord:
            citation, seat = job
            page = pages[citation.url or ""]
            if page.text is None or page.searchable is None:  # only a page that was read reaches the quorum
                raise AssertionError(f"{citation.url} was sent to the quorum without a page text")
            vote = cast_vote(
                seat, citation, url=page.record.final_url or citation.url or "", text=page.text, page=page.searchable
            )
            said = vote.answer if vote.valid else f"not counted: {vote.reason}"
            where = f"turn {citation.turn}" + (f", line {citation.line}" if citation.line else "")
            self.progress(f"vote {next(counted)} of {len(jobs)}: {vote.voter} on {where}: {said}")
            return vote

        with ThreadPoolExecutor(max_workers=min(VOTE_WORKERS, len(jobs))) as pool:
            votes = list(pool.map(ask, jobs))
        size = len(self.seats)
        return [tuple(votes[start : start + size]) for start in range(0, len(votes), size)]


def _count(number: int, word: str) -> str:
    return f"{number} {word}{'' if number == 1 else 's'}"


def _unchanged(record: FetchRecord, known: FetchRecord | None) -> FetchRecord:
    """A fetch that gave what the known one gave keeps its time: a re-run that found nothing new
    writes nothing new."""
    return known if known is not None and replace(record, fetched_at=known.fetched_at) == known else record


def _entry(citation: Citation, judged: Judgement, votes: tuple[VoteRecord, ...] = ()) -> CitationEntry:
    return CitationEntry(
        citation=citation,
        verdict=judged.verdict,
        confidence=judged.confidence,
        reason=judged.reason,
        votes=votes,
        missing_figures=judged.missing_figures,
    )


@dataclass(kw_only=True, frozen=True)
class ArtifactVerification:
    """One artifact verified: its new sidecar, where it goes, and whether it changed."""

    path: Path
    sidecar_path: Path
    sidecar: Sidecar
    changed: bool  # whether the sidecar's content differs from the one on disk (write it then)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """As ``duel verify --json`` lists it (``written``: the sidecar changed, so it was written)."""
        return {
            "path": str(self.path),
            "sidecar": str(self.sidecar_path),
            "written": self.changed,
            "counts": self.sidecar.counts(),
            "notes": list(self.notes),
            "citations": self.sidecar.to_dict()["citations"],
        }

    def to_text(self) -> str:
        """As ``duel verify`` prints it: one line per citation, the notes, then where the sidecar is."""
        sidecar = self.sidecar
        counts = ", ".join(f"{count} {verdict}" for verdict, count in sidecar.counts().items())
        lines = [f"{self.path}: {len(sidecar.citations)} citations ({counts or 'none'})"]
        for entry in sidecar.citations:
            citation = entry.citation
            where = f"turn {citation.turn}" + (f", line {citation.line}" if citation.line else "")
            confidence = f" ({entry.confidence})" if entry.confidence else ""
            cited = citation.url or citation.item
            cited = cited if len(cited) <= 80 else cited[:79] + "…"
            lines.append(f"  {where}: {citation.kind} {entry.verdict}{confidence}: {entry.reason} [{cited}]")
        lines += [f"  note: {note}" for note in self.notes]
        lines.append(f"  sidecar: {self.sidecar_path} ({'written' if self.changed else 'unchanged'})")
        return "\n".join(lines)


def verify_paths(
    paths: Sequence[str], verifier: Verifier, *, refresh: bool = False, clock: Callable[[], float] = time.time
) -> Iterator[tuple[Path, ArtifactVerification | DuelError]]:
    """Verify every artifact ``paths`` name (folders searched as ``duel validate`` searches
    them), one at a time, writing each sidecar that changed beside its artifact before the
    next begins: an interruption leaves every sidecar whole. An artifact that cannot be
    verified (or its sidecar written) comes with its :class:`DuelError`, and the rest go on."""
    for path in collect(list(paths)):
        try:
            done = verify_artifact(path, verifier, refresh=refresh, clock=clock)
            if done.changed:
                write(done.sidecar_path, done.sidecar)
        except DuelError as exc:
            yield path, exc
            continue
        yield path, done


def verify_artifact(
    path: str | os.PathLike[str],
    verifier: Verifier,
    *,
    refresh: bool = False,
    clock: Callable[[], float] = time.time,
) -> ArtifactVerification:
    """Verify every citation of a committed artifact against its previous sidecar, if any.

    Raises DuelError: ``ARTIFACT_UNREADABLE`` for a file that is not a readable artifact (or whose name is not UTF-8),
    ``ARTIFACT_TAMPERED`` for one whose turns or hash chain are broken (a sidecar pins a chain).
    """
    where = Path(path)
    try:
        where.name.encode("utf-8")  # its sidecar names it, in UTF-8
    except UnicodeEncodeError:
        raise DuelError(
            ErrorCode.ARTIFACT_UNREADABLE, f"{where}: its name is not UTF-8, which a sidecar cannot name"
        ) from None
    try:
        record = RecordFile.read(where, find_source=False)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        reason = read_failure(exc)
        raise DuelError(ErrorCode.ARTIFACT_UNREADABLE, f"cannot read {where}: {reason}") from None
    if not record.is_artifact:
        raise DuelError(ErrorCode.ARTIFACT_UNREADABLE, f"{where}: {NOT_AN_ARTIFACT}")
    if record.front is None:
        raise DuelError(ErrorCode.ARTIFACT_UNREADABLE, f"{where} is not a duel artifact: {record.front_problem}")
    blocks = record.parsed.blocks
    first = record.front.schedule.first
    broken = record.parsed.problems[:1] + [problem.message for problem in chain_problems(blocks, first=first)][:1]
    if broken:
        raise DuelError(ErrorCode.ARTIFACT_TAMPERED, f"{where}: {broken[0]} (run duel validate)")
    citations = artifact_citations(blocks, record.history().turns, citable_names(record.front.source_path), first=first)
    side = sidecar_path(where)
    previous, notes = None, []
    if os.path.lexists(side):
        try:
            previous = load(side)
        except (OSError, SidecarError) as exc:
            notes.append(f"{side.name} could not be read ({exc}); it is written anew")
    verification = verifier.verify(citations, previous=previous, refresh=refresh)
    voters = dict.fromkeys(vote.voter for entry in verification.entries for vote in entry.votes)
    sidecar = Sidecar(
        duel_id=record.front.duel_id,
        artifact=where.name,
        chain_head=blocks[-1].sha256 if blocks else GENESIS,
        turns=len(blocks),
        verified_at=iso(clock()),
        voters=tuple(voters),
        fetches=verification.fetches,
        citations=verification.entries,
    )
    if previous is not None and sidecar.same_content(previous):
        return ArtifactVerification(
            path=where,
            sidecar_path=side,
            sidecar=replace(sidecar, verified_at=previous.verified_at),
            changed=False,
            notes=tuple(notes),
        )
    return ArtifactVerification(path=where, sidecar_path=side, sidecar=sidecar, changed=True, notes=tuple(notes))
