"""The verdict rules as tables: the mechanical verdict, the 2-of-3 quorum, confidence
(docs/protocol.md section 10, "Verdicts")."""

from __future__ import annotations

import pytest

from rp1_duel.record import Citation, CitationEntry, FetchRecord, VoteRecord
from rp1_duel.turns import FigureIndex, SearchableText
from rp1_duel.verify._verdicts import by_kind, corroborate, failed_fetch, mechanical, quorum, unjudged
from rp1_duel.vocabulary import CitationKind, Confidence, FetchFailure, Verdict, Vote

URL = "https://example.org/lease"
CLAIM = "Leases are renewed every five minutes."
PAGE = SearchableText("Our leases are renewed every five minutes by the holder.")


def citation(excerpt=None, claim=CLAIM, kind=CitationKind.URL, url=URL):
    return Citation(
        turn=1,
        turn_sha256="a" * 64,
        section="Counterpoints",
        line=5,
        item=url,
        kind=kind,
        url=url,
        excerpt=excerpt,
        claim=claim,
    )


def fetched(error=None, status=200, detail="read as html"):
    return FetchRecord(
        final_url=URL,
        status=status,
        content_type="text/html",
        content_sha256=None if error else "b" * 64,
        bytes=None if error else 10,
        fetched_at="2026-11-23T00:00:00.000Z",
        error=error,
        detail=detail,
    )


@pytest.mark.parametrize(
    ("kind", "verdict"),
    [
        (CitationKind.PRINCIPLE, Verdict.NOT_CHECKABLE),
        (CitationKind.SOURCE, Verdict.CHECKED_AT_APPEND),
        (CitationKind.TURN, Verdict.CHECKED_AT_APPEND),
    ],
)
def test_items_that_are_not_urls_are_judged_by_their_kind(kind, verdict):
    judged = by_kind(citation(kind=kind))
    assert judged is not None and judged.verdict == verdict
    assert by_kind(citation()) is None


@pytest.mark.parametrize(
    ("error", "status", "verdict"),
    [
        (FetchFailure.NAME_NOT_FOUND, None, Verdict.FABRICATED),
        (FetchFailure.CONNECTION_REFUSED, None, Verdict.FABRICATED),
        (FetchFailure.HTTP_STATUS, 404, Verdict.FABRICATED),
        (FetchFailure.HTTP_STATUS, 410, Verdict.FABRICATED),
        (FetchFailure.HTTP_STATUS, 401, Verdict.UNVERIFIABLE),
        (FetchFailure.HTTP_STATUS, 403, Verdict.UNVERIFIABLE),
        (FetchFailure.HTTP_STATUS, 429, Verdict.UNVERIFIABLE),
        (FetchFailure.HTTP_STATUS, 500, Verdict.UNVERIFIABLE),
        (FetchFailure.HTTP_STATUS, 451, Verdict.UNVERIFIABLE),
        (FetchFailure.DNS_FAILED, None, Verdict.UNVERIFIABLE),
        (FetchFailure.TIMEOUT, None, Verdict.UNVERIFIABLE),
        (FetchFailure.TOO_LARGE, 200, Verdict.UNVERIFIABLE),
        (FetchFailure.UNSUPPORTED_CONTENT, 200, Verdict.UNVERIFIABLE),
        (FetchFailure.REFUSED_ADDRESS, None, Verdict.UNVERIFIABLE),
        (FetchFailure.REFUSED_SCHEME, None, Verdict.UNVERIFIABLE),
        (FetchFailure.TOO_MANY_REDIRECTS, None, Verdict.UNVERIFIABLE),
        (FetchFailure.CONNECTION_FAILED, None, Verdict.UNVERIFIABLE),
        (FetchFailure.UNREADABLE, 200, Verdict.UNVERIFIABLE),
    ],
)
def test_a_dead_link_is_fabricated_and_an_unread_page_unverifiable(error, status, verdict):
    judged = mechanical(citation(), fetched(error, status, detail="what happened"), None)
    assert judged is not None
    assert judged.verdict == verdict and "what happened" in judged.reason
    assert judged.confidence == (Confidence.HIGH if verdict == Verdict.FABRICATED else None)


def test_a_quoted_excerpt_not_on_the_page_is_fabricated():
    judged = mechanical(citation(excerpt="renewed every ten minutes"), fetched(), PAGE)
    assert judged is not None
    assert (judged.verdict, judged.confidence) == (Verdict.FABRICATED, Confidence.HIGH)


def test_a_quoted_excerpt_on_the_page_still_needs_its_claim_judged():
    assert mechanical(citation(excerpt="renewed  EVERY five\nminutes"), fetched(), PAGE) is None
    assert failed_fetch(fetched()) is None


def figures_of_page(claim, *, section="Counterpoints", excerpt=None):
    cited = Citation(
        turn=1,
        turn_sha256="a" * 64,
        section=section,
        line=5,
        item=URL,
        kind=CitationKind.URL,
        url=URL,
        excerpt=excerpt,
        claim=claim,
    )
    page = "In 2023 we renewed 1200 leases, 40 percent of them every five minutes."
    return mechanical(cited, fetched(), SearchableText(page), FigureIndex(page))


def test_a_figure_of_the_claim_missing_from_the_page_is_unreliable_before_any_vote():
    judged = figures_of_page("We renewed 1,250 leases, 40% of them, and 30 more.")
    assert judged is not None
    assert (judged.verdict, judged.confidence) == (Verdict.UNRELIABLE, Confidence.HIGH)
    assert judged.reason == "the page does not state the claim's figures 1,250, 30"
    assert judged.missing_figures == ("1,250", "30")


@pytest.mark.parametrize(
    ("claim", "section"),
    [
        ("We renewed 1,200 leases, 40% of them every 5 minutes.", "Counterpoints"),  # all there
        ("[CONJECTURE] We renewed 1,250 leases.", "Novel Argument"),
        ("We renewed 1,250 leases.", "Stance Revision Support"),  # the Position: not checked
    ],
)
def test_a_claim_whose_figures_stand_or_are_not_checked_needs_judging(claim, section):
    assert figures_of_page(claim, section=section) is None


def test_an_excerpt_not_on_the_page_is_fabricated_before_its_figures_are_looked_at():
    judged = figures_of_page("We renewed 1,250 leases.", excerpt="we renewed 1,250 leases")
    assert judged is not None and judged.verdict == Verdict.FABRICATED


def test_a_url_outside_support_items_is_reachable_when_read():
    judged = mechanical(citation(claim=None), fetched(), PAGE)
    assert judged is not None and judged.verdict == Verdict.REACHABLE


def test_without_a_model_a_claim_is_unjudged_and_says_why():
    judged = unjudged(citation(excerpt="renewed"))
    assert (
        judged.verdict == Verdict.UNJUDGED and "quoted excerpt is on it" in judged.reason and "model" in judged.reason
    )


S, R, N = Vote.SUPPORTS, Vote.REFUTES, Vote.INSUFFICIENT  # N: not enough on the page


def votes(*answers, basis=Vote.STATES):
    """``S``, ``R``, ``N``: valid votes; lower case ``s``/``r``: the same answer, invalid (excerpt not on the page)."""
    made = []
    for answer in answers:
        valid = answer in (S, R, N)
        word = {"s": S, "r": R}.get(answer, answer)
        made.append(
            VoteRecord(
                voter="m",
                brief=Vote.BRIEF_SUPPORT,
                answer=word,
                excerpt="x",
                basis=basis,
                valid=valid,
                reason=None if valid else "not on the page",
            )
        )
    return made


@pytest.mark.parametrize(
    ("answers", "verdict"),
    [
        ((S, S, S), Verdict.VERIFIED),
        ((S, S, R), Verdict.VERIFIED),  # supported: two support, fewer than two refute
        ((S, S, N), Verdict.VERIFIED),
        ((R, R, S), Verdict.UNRELIABLE),  # refuted: two refute
        ((R, R, R), Verdict.UNRELIABLE),
        ((N, N, S), Verdict.UNRELIABLE),  # unsupported: two found no support
        ((R, N, S), Verdict.UNRELIABLE),
        ((S, R, "s"), Verdict.INCONCLUSIVE),  # an invalid vote does not count
        ((S, "s", "s"), Verdict.INCONCLUSIVE),
        ((R, "r", S), Verdict.INCONCLUSIVE),
        ((S, N, "r"), Verdict.INCONCLUSIVE),
        (("s", "r", "s"), Verdict.INCONCLUSIVE),
        ((), Verdict.INCONCLUSIVE),
    ],
)
def test_the_two_of_three_rules(answers, verdict):
    assert quorum(votes(*answers)).verdict == verdict


def test_refuted_and_unsupported_are_told_apart_in_the_reason():
    assert quorum(votes(R, R, S)).reason.startswith("refuted")
    assert quorum(votes(N, N, S)).reason.startswith("not supported")


def test_votes_by_basis_give_the_confidence():
    def confidence(*bases):
        return quorum(
            [
                VoteRecord(
                    voter="m", brief=Vote.BRIEF_SUPPORT, answer=S, excerpt="x", basis=basis, valid=True, reason=None
                )
                for basis in bases
            ]
        ).confidence

    assert confidence(Vote.STATES, Vote.STATES, Vote.REPORTS) == Confidence.HIGH  # the page itself states it
    assert confidence(Vote.STATES, Vote.REPORTS) == Confidence.MEDIUM  # two agree it reports it, at least
    assert confidence(Vote.REPORTS, Vote.CIRCUMSTANTIAL, Vote.STATES) == Confidence.MEDIUM
    assert confidence(Vote.CIRCUMSTANTIAL, Vote.STATES) == Confidence.LOW
    assert quorum(votes(R, R, basis=Vote.STATES)).confidence == Confidence.HIGH
    assert quorum(votes(N, N)).confidence == Confidence.LOW


def verified(url, claim=CLAIM, basis=Vote.REPORTS):
    supporting = tuple(
        VoteRecord(voter="m", brief=Vote.BRIEF_SUPPORT, answer=S, excerpt="x", basis=basis, valid=True, reason=None)
        for _ in range(3)
    )
    judged = quorum(supporting)
    return CitationEntry(
        citation=citation(url=url, claim=claim),
        verdict=judged.verdict,
        confidence=judged.confidence,
        reason=judged.reason,
        votes=supporting,
    )


def test_two_secondary_sources_on_different_hosts_are_medium_high():
    entries = [verified("https://a.example/1"), verified("https://www.b.example/2")]
    assert [e.confidence for e in corroborate(entries, {})] == [Confidence.MEDIUM_HIGH] * 2


@pytest.mark.parametrize(
    "entries",
    [
        [verified("https://a.example/1"), verified("https://a.example/2")],  # one host
        [verified("https://a.example/1"), verified("https://b.example/2", claim="Another claim.")],
        [verified("https://a.example/1")],
    ],
)
def test_one_secondary_source_stays_medium(entries):
    assert {e.confidence for e in corroborate(entries, {})} == {Confidence.MEDIUM}


def test_a_page_that_states_it_stays_high_beside_a_secondary_source():
    entries = corroborate([verified("https://a.example/1", basis=Vote.STATES), verified("https://b.example/2")], {})
    assert [e.confidence for e in entries] == [Confidence.HIGH, Confidence.MEDIUM]
