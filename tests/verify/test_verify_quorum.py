"""The quorum: three seats, votes read tolerantly and counted only with an excerpt on the page; voters
are the real Anthropic and OpenAI SDKs against the fake model servers (docs/protocol.md section 10)."""

from __future__ import annotations

import json

import pytest

from rp1_duel.errors import DuelError
from rp1_duel.participant.providers.anthropic import AnthropicProvider
from rp1_duel.participant.providers.openai import OpenAIProvider
from rp1_duel.participant.voters import ProviderVoter, configured_voters
from rp1_duel.record import Citation
from rp1_duel.turns import SearchableText
from rp1_duel.verify import Fetcher, FetchPolicy, Verifier
from rp1_duel.verify.quorum import BRIEFS, PAGE_TEXT_LIMIT, VoterError, cast_vote, panel, read_vote, vote_prompt
from rp1_duel.vocabulary import CitationKind, Confidence, ErrorCode, Verdict, Vote

from fake_models import FakeAnthropicServer, FakeOpenAIServer
from fake_web import CLAIM, STATED, contrary_vote, honest_vote, lying_vote, rambling_vote

PAGE = SearchableText(f"Lease operations. {STATED}")


@pytest.mark.parametrize(
    ("raw", "answer", "valid"),
    [
        ('{"answer": "supports", "excerpt": "renewed every five minutes", "basis": "states"}', Vote.SUPPORTS, True),
        (
            '```json\n{"answer": "Supports", "excerpt": "renewed every five minutes", "basis": "STATES"}\n```',
            Vote.SUPPORTS,
            True,
        ),
        (
            'Here is my verdict:\n{"answer": "refutes", "excerpt": "fifteen-minute leases", "basis": "reports"}\nDone.',
            Vote.REFUTES,
            True,
        ),
        ('{"answer": "insufficient", "excerpt": null, "basis": null}', Vote.INSUFFICIENT, True),
        ('{"answer": "supports", "excerpt": "renewed every hour", "basis": "states"}', Vote.SUPPORTS, False),
        ('{"answer": "supports", "excerpt": "", "basis": "states"}', Vote.SUPPORTS, False),
        ('{"answer": "refutes", "excerpt": "renewed every five minutes"}', Vote.REFUTES, False),
        ('{"answer": "maybe", "excerpt": "renewed every five minutes", "basis": "states"}', None, False),
        ("The page agrees.", None, False),
        ('["supports"]', None, False),
        ('{"answer": "supports", "excerpt": "x", ', None, False),
    ],
)
def test_a_vote_is_read_tolerantly_and_counts_only_when_checkable(raw, answer, valid):
    vote = read_vote(raw, voter="m", brief=Vote.BRIEF_SUPPORT, page=PAGE)
    assert (vote.answer, vote.valid) == (answer, valid), vote
    assert vote.valid or vote.reason


def test_an_excerpt_not_on_the_page_makes_the_vote_invalid_and_says_so():
    vote = read_vote(lying_vote({}), voter="m", brief=Vote.BRIEF_SUPPORT, page=PAGE)
    assert not vote.valid and vote.reason == "its excerpt is not on the page"


class Named:
    def __init__(self, name, answer=None, error=None):
        self.name, self.answer, self.error, self.asked = name, answer, error, []

    def ask(self, system, prompt):
        self.asked.append((system, prompt))
        if self.error:
            raise VoterError(self.error)
        return self.answer


@pytest.mark.parametrize(
    ("names", "seated"),
    [(["a"], ["a", "a", "a"]), (["a", "b"], ["a", "b", "a"]), (["a", "b", "c"], ["a", "b", "c"]), ([], [])],
)
def test_three_seats_are_filled_in_turn_and_the_third_is_adversarial(names, seated):
    seats = panel([Named(name) for name in names])
    assert [seat.voter.name for seat in seats] == seated
    assert [seat.brief for seat in seats] == [Vote.BRIEF_SUPPORT, Vote.BRIEF_SUPPORT, Vote.BRIEF_REFUTE][: len(seated)]


def citation(url="https://example.org/p"):
    return Citation(
        turn=1,
        turn_sha256="a" * 64,
        section="Counterpoints",
        line=7,
        item=url,
        kind=CitationKind.URL,
        url=url,
        excerpt=None,
        claim=CLAIM,
    )


def test_a_voter_that_fails_casts_an_invalid_vote_saying_why():
    seat = panel([Named("broken", error="PROVIDER_AUTH: refused")])[0]
    vote = cast_vote(seat, citation(), url="https://example.org/p", text=STATED, page=PAGE)
    assert (vote.answer, vote.valid, vote.reason) == (None, False, "the voter failed: PROVIDER_AUTH: refused")


def test_the_prompt_holds_the_claim_the_item_and_at_most_the_page_text_cap():
    prompt = vote_prompt(citation(), url="https://example.org/p", text="word " * PAGE_TEXT_LIMIT)
    assert CLAIM in prompt and "https://example.org/p" in prompt
    assert len(prompt) < PAGE_TEXT_LIMIT + 2000 and f"first {PAGE_TEXT_LIMIT:,} characters" in prompt


# -- voters through the real SDKs -----------------------------------------------------------------


@pytest.fixture
def claude():
    with FakeAnthropicServer(responder=honest_vote) as server:
        yield server


@pytest.fixture
def gpt():
    with FakeOpenAIServer(responder=honest_vote) as server:
        yield server


def voter(server, model="claude-x"):
    if isinstance(server, FakeAnthropicServer):
        return ProviderVoter(AnthropicProvider(model, api_key="k", base_url=server.base_url))
    return ProviderVoter(OpenAIProvider(model, api_key="k", base_url=server.base_url))


def test_a_provider_voter_sends_the_brief_and_the_prompt_and_returns_the_text(claude, gpt):
    for server in (claude, gpt):
        answer = voter(server).ask(BRIEFS[Vote.BRIEF_REFUTE], f"Claim: x\n<<<PAGE\n{STATED}\nPAGE>>>")
        assert json.loads(answer.strip("`").removeprefix("json"))["answer"] == "supports"
        sent = json.dumps(server.requests[-1]["body"])
        assert "adversarial" in sent and "Claim: x" in sent


def test_a_voter_the_provider_refuses_raises_a_voter_error(claude):
    claude.fail_status = 400
    with pytest.raises(VoterError, match="PROVIDER_REJECTED"):
        voter(claude).ask("brief", "prompt")


def test_a_rate_limited_vote_is_retried_by_the_participants_retries(claude):
    claude.script = [{"status": 429, "retry_after": 0}]
    assert "supports" in voter(claude).ask("brief", STATED)
    assert len(claude.requests) == 2


def test_default_voters_follow_the_keys_that_are_set():
    both = {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}
    assert [v.name for v in configured_voters(both)] == ["anthropic:claude-sonnet-5-5", "openai:gpt-6.1-sol"]
    assert [v.name for v in configured_voters({"OPENAI_API_KEY": "o"})] == ["openai:gpt-6.1-sol"]
    assert configured_voters({}) == []
    named = configured_voters({}, ["llama3.1"], "http://127.0.0.1:9/v1")
    assert [v.name for v in named] == ["openai:llama3.1"]


@pytest.mark.parametrize(
    ("models", "base_url"),
    [(["claude-a", "claude-b", "gpt-c", "gpt-d"], None), ([], "http://127.0.0.1:9/v1"), (["human"], None)],
)
def test_wrong_voter_options_are_invalid_arguments(models, base_url):
    with pytest.raises(DuelError) as refused:
        configured_voters({"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}, models, base_url)
    assert refused.value.code == ErrorCode.INVALID_ARGUMENT


def judge(web, tmp_path, voters, path):
    verifier = Verifier(Fetcher(FetchPolicy(allow_private_hosts=True)), voters)
    return verifier.verify([citation(web.url(path))]).entries[0]


def test_a_page_that_states_the_claim_is_verified_with_high_confidence(web, tmp_path, claude, gpt):
    entry = judge(web, tmp_path, [voter(claude), voter(gpt, "gpt-x")], "/states")
    assert (entry.verdict, entry.confidence) == (Verdict.VERIFIED, Confidence.HIGH)
    assert [(v.voter, v.brief, v.valid) for v in entry.votes] == [
        ("anthropic:claude-x", Vote.BRIEF_SUPPORT, True),
        ("openai:gpt-x", Vote.BRIEF_SUPPORT, True),
        ("anthropic:claude-x", Vote.BRIEF_REFUTE, True),
    ]


def test_a_page_that_reports_the_claim_is_verified_with_medium_confidence(web, tmp_path, claude):
    entry = judge(web, tmp_path, [voter(claude)], "/reports")
    assert (entry.verdict, entry.confidence) == (Verdict.VERIFIED, Confidence.MEDIUM)


def test_a_page_that_contradicts_the_claim_makes_it_unreliable(web, tmp_path, claude, gpt):
    entry = judge(web, tmp_path, [voter(claude), voter(gpt)], "/contradicts")
    assert entry.verdict == Verdict.UNRELIABLE and entry.reason.startswith("refuted")


def test_a_silent_page_leaves_the_claim_unsupported(web, tmp_path, claude):
    entry = judge(web, tmp_path, [voter(claude)], "/silent")
    assert entry.verdict == Verdict.UNRELIABLE and entry.reason.startswith("not supported")


def test_a_vote_quoting_what_the_page_does_not_say_does_not_count(web, tmp_path, claude):
    with FakeOpenAIServer(responder=lying_vote) as liar:
        entry = judge(web, tmp_path, [voter(claude), voter(liar, "gpt-liar")], "/silent")
    lie = entry.votes[1]
    assert (lie.voter, lie.answer, lie.valid, lie.reason) == (
        "openai:gpt-liar",
        Vote.SUPPORTS,
        False,
        "its excerpt is not on the page",
    )
    assert entry.verdict == Verdict.UNRELIABLE  # the two honest votes found no support


def test_a_split_quorum_is_inconclusive(web, tmp_path, claude):
    with FakeOpenAIServer(responder=contrary_vote) as contrary, FakeOpenAIServer(responder=rambling_vote) as rambler:
        entry = judge(web, tmp_path, [voter(claude), voter(contrary, "gpt-no"), voter(rambler, "gpt-um")], "/states")
    assert [(v.answer, v.valid) for v in entry.votes] == [(Vote.SUPPORTS, True), (Vote.REFUTES, True), (None, False)]
    assert entry.verdict == Verdict.INCONCLUSIVE and entry.confidence is None
