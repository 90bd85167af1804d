"""`duel join --budget-usd`: a seat stops before a model request that could pass its cap (docs/protocol.md
section 2, "A money cap"). The rule is checked as a pure function; the stop with the real SDKs against the fake
model servers, whose reported usage drives what the seat has spent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_participant import claude_env, finish, gpt_env, start, wait_for_seat

from rp1_duel.coordination import Usage
from rp1_duel.errors import DuelError
from rp1_duel.participant.budget import budget_stop, check_capped, request_ceiling_usd, sent_ceiling, worst_case
from rp1_duel.participant.joining import JoinFlags
from rp1_duel.participant.providers import TurnRequest, select_provider
from rp1_duel.participant.providers.scripted import ScriptedProvider
from rp1_duel.review.report_files import read_report

from fake_debater import debater

# Per million tokens: a cache write costs a dollar, an output token ten; input and cache reads nothing.
PRICES = {
    "date": "2026-11-28",
    "models": {
        "claude-x": {"input": 0.0, "output": 10.0, "cache_read": 0.0, "cache_write": 1.0},
        "gpt-x": {"input": 2.0, "output": 10.0, "cache_read": 0.2, "cache_write": 2.5},
        "llama-free": {"input": 0.0, "output": 0.0},
    },
}


@pytest.fixture
def prices(tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(PRICES), encoding="utf-8")
    return {"DUEL_PRICES": str(path)}


def request(characters: int, max_tokens: int) -> TurnRequest:
    return TurnRequest(system="s" * characters, history="", instruction="", cache_key="k", max_tokens=max_tokens)


def test_a_requests_worst_case_is_its_estimated_prompt_and_the_whole_output_ceiling_sent():
    assert worst_case(request(4000, 16000), 2000) == Usage(input_tokens=1000, output_tokens=2000, input_estimated=True)


def test_the_ceiling_sent_is_the_providers_own_else_the_one_asked_for(tmp_path):
    def provider(model: str, base_url: str | None = None, max_output_tokens: int | None = None):
        env = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
        return select_provider(model, provider=None, base_url=base_url, env=env, max_output_tokens=max_output_tokens)

    assert sent_ceiling(provider("claude-x"), 16000) == 16000
    assert sent_ceiling(provider("claude-x", max_output_tokens=2000), 16000) == 2000
    assert sent_ceiling(provider("gpt-x", max_output_tokens=3000), 16000) == 3000
    assert sent_ceiling(provider("llama3", base_url="http://127.0.0.1:9/v1"), 16000) is None  # its window decides
    assert sent_ceiling(provider("llama3", base_url="http://127.0.0.1:9/v1", max_output_tokens=512), 16000) == 512
    (tmp_path / "1.md").write_text("a turn", encoding="utf-8")
    assert sent_ceiling(ScriptedProvider(tmp_path), 16000) == 16000  # no ceiling of its own: the one asked for


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-x", 1000 * 1.0 / 1e6 + 16000 * 10.0 / 1e6),  # the prompt as a cache write: dearer than input
        ("gpt-x", 1000 * 2.5 / 1e6 + 16000 * 10.0 / 1e6),
        ("llama-3", None),  # no price: no ceiling
    ],
)
def test_the_ceiling_prices_the_prompt_at_the_dearer_of_input_and_cache_write(prices, model, expected):
    assert request_ceiling_usd(model, request(4000, 16000), 16000, prices) == (
        None if expected is None else pytest.approx(expected)
    )


def test_a_request_sent_no_output_ceiling_has_no_bound_unless_its_output_is_free(prices):
    assert request_ceiling_usd("gpt-x", request(4000, 16000), None, prices) is None
    assert request_ceiling_usd("llama-free", request(4000, 16000), None, prices) == 0.0


@pytest.mark.parametrize(
    ("cap", "spent", "stops"),
    [
        (1.0, Usage(), False),  # $0.161 of a $1 cap
        (0.161, Usage(), False),  # exactly the cap: it cannot pass it
        (0.16, Usage(), True),  # the worst case alone passes it
        (1.0, Usage(cache_write_tokens=839_000), False),  # $0.839 spent + $0.161 = $1.000
        (1.0, Usage(cache_write_tokens=840_000), True),
    ],
)
def test_a_seat_stops_when_what_it_spent_and_the_next_requests_worst_case_pass_its_cap(prices, cap, spent, stops):
    stop = budget_stop(
        request(4000, 16000), cap_usd=cap, spent=spent, model="claude-x", ceiling=16000, number=3, env=prices
    )
    assert (stop is not None) is stops
    if stop is not None:
        assert stop.code == "BUDGET_EXCEEDED"
        assert stop.message.startswith(f"spent ${spent.cache_write_tokens / 1e6:.4f} of its ${cap:.4f} cap")
        assert "turn 3's next request could cost up to $0.1610 more, so it was not sent" in stop.message


@pytest.mark.parametrize(
    ("model", "ceiling", "why"),
    [
        ("llama-3", 16000, "no price is known for llama-3"),
        (
            "gpt-x",
            None,
            "gpt-x is sent no output ceiling (its server's window decides), so a request's cost has no bound",
        ),
    ],
)
def test_a_request_whose_cost_has_no_bound_is_not_sent(prices, model, ceiling, why):
    stop = budget_stop(
        request(4000, 16000), cap_usd=100.0, spent=Usage(), model=model, ceiling=ceiling, number=1, env=prices
    )
    assert stop is not None
    assert (stop.code, stop.message) == ("BUDGET_EXCEEDED", f"{why}: --budget-usd cannot be kept")


def test_a_cap_whose_requests_have_no_cost_bound_is_refused_as_it_could_not_be_checked(prices):
    check_capped("claude-x", 1.0, 16000, prices)
    check_capped("llama-3", None, None, prices)  # no cap: nothing to check
    check_capped("llama-free", 1.0, None, prices)  # no ceiling sent, but its output is free
    with pytest.raises(DuelError) as refused:
        check_capped("llama-3", 1.0, 16000, prices)
    assert (refused.value.code, refused.value.exit_code) == ("INVALID_ARGUMENT", 2)
    assert refused.value.message == (
        "--budget-usd 1: no price is known for llama-3, so the cap cannot be checked; price it in a file named "
        "by $DUEL_PRICES (0 for a free local model)"
    )
    with pytest.raises(DuelError) as unbounded:
        check_capped("gpt-x", 2.5, None, prices)
    assert unbounded.value.message == (
        "--budget-usd 2.5: gpt-x is sent no output ceiling (its server's window decides), so a request's cost has "
        "no bound; give --max-output-tokens"
    )


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (JoinFlags(target="d.md", budget_usd=0.0), "--budget-usd must be above 0, got 0"),
        (JoinFlags(target="d.md", budget_usd=-1.0), "--budget-usd must be above 0, got -1"),
        (
            JoinFlags(target="d.md", budget_usd=1.0, role="audience"),
            "--budget-usd caps a seat's requests; the audience takes no seat",
        ),
    ],
)
def test_a_cap_that_keeps_nothing_is_refused(flags, message):
    with pytest.raises(DuelError) as refused:
        flags.check()
    assert (refused.value.code, refused.value.message) == ("INVALID_ARGUMENT", message)


@pytest.mark.slow
def test_a_seat_stops_before_the_request_that_would_pass_its_cap_and_the_record_names_what_it_spent(
    source, debate_dir, anthropic_server, openai_server, prices
):
    anthropic_server.responder = openai_server.responder = debater
    anthropic_server.cache_write_tokens = 1_000_000  # every answer's usage: $1.00 of cache writes
    # Turn 1 may cost up to ~$0.16 (16,000 output tokens); once it has cost $1.00, turn 3's worst case passes $1.10.
    args = ("--model", "claude-x", "--max-turns", "4", "--budget-usd", "1.10", "--turn-timeout-seconds", "8")
    claude = start(source, debate_dir, *args, env={**claude_env(anthropic_server), **prices})
    wait_for_seat(debate_dir, source)
    gpt = start(source, debate_dir, "--model", "gpt-x", env=gpt_env(openai_server))
    (code_c, result_c, err_c), (_, result_g, _) = finish(claude), finish(gpt)
    assert code_c == 4, err_c
    assert result_c["error"]["code"] == "BUDGET_EXCEEDED"
    assert len(anthropic_server.requests) == 1  # turn 1's; turn 3's request was never sent
    assert "stopped at the money cap (BUDGET_EXCEEDED): spent $1.00" in err_c
    assert err_c.rstrip().endswith("your seat is kept: run the same command with a larger --budget-usd to resume")
    # The peer closes the turn TIMEOUT, the close's reason naming the seat's stop; the report names it too.
    assert result_g["outcome"] == "TIMEOUT"
    text = Path(result_g["debate_path"]).read_text(encoding="utf-8")
    assert "it reached its money cap (BUDGET_EXCEEDED): spent $1.00" in text
    alerts = [alert.text for alert in read_report(result_g["debate_path"], env={}).alerts]
    assert any(
        a.startswith("Seat 1 (Claude) stopped at turn 3: it reached its money cap (BUDGET_EXCEEDED): spent $1.00")
        and "of its $1.1000 cap (--budget-usd) on claude-x; turn 3's next request could cost up to $0.16" in a
        for a in alerts
    ), alerts


@pytest.mark.slow
def test_a_cap_on_a_model_with_no_price_is_refused_before_the_seat_is_taken(source, debate_dir, anthropic_server):
    claude = start(source, debate_dir, "--model", "claude-x", "--budget-usd", "2", env=claude_env(anthropic_server))
    code, result, err = finish(claude)
    assert (code, result["error"]["code"]) == (2, "INVALID_ARGUMENT")
    assert "--budget-usd 2: no price is known for claude-x, so the cap cannot be checked" in err
    assert anthropic_server.requests == [] and not debate_dir.exists()
