"""Verifying a real duel's artifact: every verdict class, the sidecar, and what a re-run reuses
(docs/protocol.md section 10)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rp1_duel.errors import DuelError
from rp1_duel.participant.providers.anthropic import AnthropicProvider
from rp1_duel.participant.voters import ProviderVoter
from rp1_duel.record.verification import dumps, load
from rp1_duel.verify import Fetcher, FetchPolicy, PageCache, default_cache_dir
from rp1_duel.verify.run import ArtifactVerification, Verifier, verify_artifact, verify_paths
from rp1_duel.vocabulary import CitationKind, ErrorCode, Verdict

from fake_models import FakeAnthropicServer
from fake_web import CLAIM, PDF_QUOTE, SIDEBAR_QUOTE, honest_vote
from helpers import claim, duel_citing, make_turn


@pytest.fixture
def cache(tmp_path):
    return PageCache(tmp_path / "cache" / "duel" / "pages")


def verifier(cache, voters=()):
    return Verifier(Fetcher(FetchPolicy(allow_private_hosts=True)), voters, cache)


def run(artifact, cache, voters=(), *, refresh=False):
    """Verify and write the sidecar, as `duel verify` does."""
    done = verify_artifact(artifact, verifier(cache, voters), refresh=refresh)
    if done.changed:
        done.sidecar_path.write_bytes(dumps(done.sidecar))
    return done


def verdicts(done):
    return [
        (entry.citation.kind, entry.citation.url and entry.citation.url.rsplit("/", 1)[-1], entry.verdict)
        for entry in done.sidecar.citations
    ]


def test_each_citation_gets_the_verdict_of_its_class(service, source, web, cache):
    artifact = duel_citing(
        service,
        source,
        {
            "counterclaim": CLAIM,
            "citing": (
                web.url("/states"),
                f'{web.url("/silent")} "renewed every five minutes"',
                web.url("/missing"),
                web.url("/forbidden"),
                f'{web.url("/study.pdf")} "{PDF_QUOTE}"',
            ),
        },
        {
            "citing": (f"<{web.url('/sidebar')}> “{SIDEBAR_QUOTE}”", f"[the logo]({web.url('/image.png')})"),
            "position_extra": f" See {web.url('/plain.txt')} and {web.url('/gone')}.",
        },
    )
    done = run(artifact, cache)
    assert verdicts(done) == [
        (CitationKind.SOURCE, None, Verdict.CHECKED_AT_APPEND),
        (CitationKind.URL, "states", Verdict.UNJUDGED),
        (CitationKind.URL, "silent", Verdict.FABRICATED),  # the quote is not on the page
        (CitationKind.URL, "missing", Verdict.FABRICATED),  # dead link
        (CitationKind.URL, "forbidden", Verdict.UNVERIFIABLE),
        (CitationKind.URL, "study.pdf", Verdict.UNJUDGED),  # the quote is in the PDF's text
        (CitationKind.SOURCE, None, Verdict.CHECKED_AT_APPEND),  # the Novel Argument's
        (CitationKind.PRINCIPLE, None, Verdict.NOT_CHECKABLE),  # Stance Revision Support
        (CitationKind.SOURCE, None, Verdict.CHECKED_AT_APPEND),  # turn 2
        (CitationKind.URL, "sidebar", Verdict.UNJUDGED),  # the quote is in a sidebar's table
        (CitationKind.URL, "image.png", Verdict.UNVERIFIABLE),
        (CitationKind.SOURCE, None, Verdict.CHECKED_AT_APPEND),
        (CitationKind.TURN, None, Verdict.CHECKED_AT_APPEND),
        (CitationKind.URL, "plain.txt", Verdict.REACHABLE),  # in the Position: no claim
        (CitationKind.URL, "gone", Verdict.FABRICATED),
    ]
    sidecar = load(done.sidecar_path)
    assert sidecar == done.sidecar and sidecar.turns == 2 and sidecar.voters == ()
    assert sidecar.fetches[web.url("/missing")].status == 404
    assert sidecar.fetches[web.url("/study.pdf")].content_type == "application/pdf"
    states = sidecar.citations[1].citation
    assert (states.turn, states.section, states.claim) == (1, "Counterpoints", CLAIM)


def test_each_page_fetched_and_each_vote_is_told_as_it_comes(service, source, web, cache):
    artifact = duel_citing(
        service, source, {"counterclaim": CLAIM, "citing": (web.url("/states"), web.url("/missing"))}
    )
    told: list[str] = []
    with FakeAnthropicServer(responder=honest_vote) as claude:
        voter = ProviderVoter(AnthropicProvider("claude-x", api_key="k", base_url=claude.base_url))
        checking = Verifier(Fetcher(FetchPolicy(allow_private_hosts=True)), [voter], cache, progress=told.append)
        verify_artifact(artifact, checking)
    assert told[0] == "fetching 2 pages…"
    assert sorted(line.split(": ", 1)[0] for line in told[1:3]) == ["page 1 of 2", "page 2 of 2"]
    assert {line.split(": ", 1)[1] for line in told[1:3]} == {
        f"{web.url('/states')} (HTTP 200)",
        f"{web.url('/missing')} (HTTP 404)",
    }
    assert told[3] == "asking 3 votes on 1 citation…"  # the dead link needs no vote
    assert sorted(line.split(":", 1)[0] for line in told[4:]) == ["vote 1 of 3", "vote 2 of 3", "vote 3 of 3"]
    assert all(" anthropic:claude-x on turn 1, line " in line for line in told[4:]), told


def test_a_url_cited_twice_is_fetched_once(service, source, web, cache):
    artifact = duel_citing(
        service,
        source,
        {"citing": (web.url("/states"),)},
        {"citing": (web.url("/states"),), "position_extra": f" {web.url('/states')}"},
    )
    run(artifact, cache)
    assert web.count("/states") == 1


def test_a_second_run_fetches_nothing_and_changes_no_byte(service, source, web, cache):
    artifact = duel_citing(service, source, {"citing": (web.url("/states"), web.url("/missing"))})
    first = run(artifact, cache)
    written = first.sidecar_path.read_bytes()
    asked = list(web.requests)
    again = run(artifact, cache)
    assert not again.changed and web.requests == asked
    assert first.sidecar_path.read_bytes() == written and dumps(again.sidecar) == written


def test_an_unverifiable_page_is_asked_again_and_nothing_changes_when_it_answers_the_same(service, source, web, cache):
    artifact = duel_citing(service, source, {"citing": (web.url("/forbidden"), web.url("/states"))})
    written = run(artifact, cache).sidecar_path.read_bytes()
    again = run(artifact, cache)
    assert web.count("/forbidden") == 2 and web.count("/states") == 1
    assert not again.changed and again.sidecar_path.read_bytes() == written


def test_refresh_fetches_everything_again(service, source, web, cache):
    artifact = duel_citing(service, source, {"citing": (web.url("/states"), web.url("/missing"))})
    run(artifact, cache)
    run(artifact, cache, refresh=True)
    assert web.count("/states") == 2 and web.count("/missing") == 2


def test_a_claim_left_unjudged_is_judged_when_a_model_comes_from_the_cached_page(service, source, web, cache):
    artifact = duel_citing(service, source, {"counterclaim": CLAIM, "citing": (web.url("/states"),)})
    assert Verdict.UNJUDGED in run(artifact, cache).sidecar.counts()
    with FakeAnthropicServer(responder=honest_vote) as claude:
        voter = ProviderVoter(AnthropicProvider("claude-x", api_key="k", base_url=claude.base_url))
        judged = run(artifact, cache, voters=[voter])
    entry = next(e for e in judged.sidecar.citations if e.citation.url == web.url("/states"))
    assert entry.verdict == Verdict.VERIFIED and len(entry.votes) == 3
    assert judged.sidecar.voters == ("anthropic:claude-x",)
    assert web.count("/states") == 1, "judged from the cached text, not fetched again"


def test_a_page_whose_cached_text_is_gone_is_fetched_again(service, source, web, cache):
    artifact = duel_citing(service, source, {"counterclaim": CLAIM, "citing": (web.url("/states"),)})
    run(artifact, cache)
    for cached in cache.root.iterdir():
        cached.unlink()
    with FakeAnthropicServer(responder=honest_vote) as claude:
        run(
            artifact,
            cache,
            voters=[ProviderVoter(AnthropicProvider("claude-x", api_key="k", base_url=claude.base_url))],
        )
    assert web.count("/states") == 2


def test_a_new_turn_is_verified_and_the_earlier_verdicts_kept(service, source, web, cache, pair):
    alice, bob = pair
    turn = make_turn(1, "Alice", "claude-code", "claude-x", citing=(web.url("/states"),))
    artifact = Path(service.append(alice.seat, claim(service, alice), turn, release=True).debate_path)
    first = run(artifact, cache)
    turn = make_turn(2, "Bob", "codex", "gpt-x", citing=(web.url("/silent"),))
    second_head = service.append(bob.seat, claim(service, bob), turn, release=True).turn_sha256
    second = run(artifact, cache)
    assert (first.sidecar.turns, second.sidecar.turns, second.sidecar.chain_head) == (1, 2, second_head)
    assert web.requests == ["/states", "/silent"]
    assert second.sidecar.citations[: len(first.sidecar.citations)] == first.sidecar.citations


def test_an_artifact_whose_turn_was_edited_is_refused(service, source, web, cache):
    artifact = duel_citing(service, source, {"citing": (web.url("/states"),)})
    artifact.write_text(artifact.read_text().replace("Argument 1", "Argument one"))
    with pytest.raises(DuelError) as refused:
        verify_artifact(artifact, verifier(cache))
    assert refused.value.code == ErrorCode.ARTIFACT_TAMPERED and "changed after it was written" in refused.value.message


def test_a_file_that_is_not_an_artifact_is_refused(tmp_path, cache):
    (tmp_path / "notes.md").write_text("# Notes\n")
    with pytest.raises(DuelError) as refused:
        verify_artifact(tmp_path / "notes.md", verifier(cache))
    assert refused.value.code == ErrorCode.ARTIFACT_UNREADABLE


def test_verify_paths_writes_each_changed_sidecar_and_goes_on_past_an_artifact_that_fails(
    service, source, web, cache, tmp_path
):
    artifact = duel_citing(service, source, {"citing": (web.url("/states"),)})
    broken = artifact.with_name("broken.md")
    broken.write_text(artifact.read_text().replace("Argument 1", "Argument one"))

    first = dict(verify_paths([str(artifact.parent)], verifier(cache)))
    again = dict(verify_paths([str(artifact)], verifier(cache)))

    done, failed = first[artifact], first[broken]
    assert isinstance(done, ArtifactVerification) and done.changed
    assert load(done.sidecar_path) == done.sidecar  # written beside the artifact
    assert stat.S_IMODE(os.stat(done.sidecar_path).st_mode) == 0o644  # committed: readable by all
    assert isinstance(failed, DuelError) and failed.code == ErrorCode.ARTIFACT_TAMPERED
    assert not broken.with_name("broken.verify.json").exists()
    redone = again[artifact]
    assert isinstance(redone, ArtifactVerification) and not redone.changed


def test_a_verification_as_text_and_as_json_names_each_citation_and_its_sidecar(service, source, web, cache):
    artifact = duel_citing(service, source, {"citing": (web.url("/states"), web.url("/missing"))})
    [(_, done)] = verify_paths([str(artifact)], verifier(cache))
    assert isinstance(done, ArtifactVerification)

    text = done.to_text().splitlines()
    data = done.to_dict()

    assert text[0].startswith(f"{artifact}: {len(done.sidecar.citations)} citations (")
    assert any(line.startswith("  turn 1, line ") and line.endswith(f"[{web.url('/missing')}]") for line in text)
    assert text[-1] == f"  sidecar: {done.sidecar_path} (written)"
    assert data["written"] is True and data["sidecar"] == str(done.sidecar_path)
    assert data["counts"][Verdict.FABRICATED] == 1 and len(data["citations"]) == len(done.sidecar.citations)


def test_an_unreadable_sidecar_is_written_anew_with_a_note(service, source, web, cache):
    artifact = duel_citing(service, source, {"citing": (web.url("/states"),)})
    artifact.with_name(artifact.stem + ".verify.json").write_text("{not json")
    done = run(artifact, cache)
    assert done.changed and "could not be read" in done.notes[0]
    assert load(done.sidecar_path).turns == 1


def test_the_page_cache_is_owner_only_and_takes_only_sha256_names(tmp_path):
    cache = PageCache(tmp_path / "pages")
    cache.put("a" * 64, text="text")
    assert cache.get("a" * 64) == "text"
    assert stat.S_IMODE(os.stat(cache.root).st_mode) == 0o700
    (tmp_path / "secret.txt").write_text("secret")
    assert cache.get("../secret") is None and cache.get("A" * 64) is None and cache.get(None) is None


def test_the_page_cache_lives_in_the_user_cache_dir():
    assert default_cache_dir({"XDG_CACHE_HOME": "/c"}).as_posix() == "/c/duel/pages"
    assert default_cache_dir({}).parts[-3:] == (".cache", "duel", "pages")
