"""Usage sums and the estimated cost from the price table (bundled, or the user's $DUEL_PRICES)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from rp1_duel.coordination import Event, Usage
from rp1_duel.errors import DuelError
from rp1_duel.participant.metering import RequestMeter
from rp1_duel.participant.providers import Composition, Progress, ProviderError, TurnRequest
from rp1_duel.participant.usage import cost_usd, prices_date, recorded, summary, total

TURN = Usage(
    input_tokens=1000,
    output_tokens=500,
    cache_read_tokens=9000,
    cache_write_tokens=2000,
    requests=2,
    retries=1,
    seconds=5.5,
)
REPAIR = Usage(
    input_tokens=200,
    output_tokens=300,
    cache_read_tokens=11000,
    requests=1,
    repairs=1,
    seconds=2.25,
    output_estimated=True,
)


def test_usages_add_up_field_by_field():
    assert total([TURN, REPAIR]) == Usage(
        input_tokens=1200,
        output_tokens=800,
        cache_read_tokens=20000,
        cache_write_tokens=2000,
        requests=3,
        retries=1,
        repairs=1,
        seconds=7.75,
        output_estimated=True,
    )
    assert total([]) == Usage()


def test_a_recorded_usage_reads_back_and_ignores_what_it_does_not_know():
    assert Usage.from_json(TURN.to_json()) == TURN
    assert Usage.from_json({"output_tokens": 7, "turn_number": 3, "requests": "2", "output_estimated": 1}) == Usage(
        output_tokens=7
    )


def logged(kind: str, participant_id: str, data: dict) -> Event:
    return Event.from_json(
        {"seq": 0, "ts": "", "type": kind, "duel_id": "d", "participant_id": participant_id, "data": data}
    )


def test_a_participants_usage_is_summed_from_its_events_across_runs():
    events = [
        logged("usage", "p1", {"turn_number": 1, **TURN.to_json()}),
        logged("usage", "p2", {"turn_number": 2, **TURN.to_json()}),
        logged("turn_appended", "p1", {"turn_number": 1, "stance": "CONVERGING", "sha256": "0" * 64}),
        logged("usage", "p1", {"turn_number": 3, **REPAIR.to_json()}),
        logged("usage", "p1", {"turn_number": "3", **REPAIR.to_json()}),  # not a usage event: not counted
    ]
    assert recorded(events, "p1") == TURN + REPAIR
    assert recorded(events, "nobody") == Usage()


def test_cost_uses_the_longest_matching_model_in_the_dated_table():
    # claude-sonnet-5-5 list prices: 2 / 10 / 0.20 / 2.50 USD per million tokens.
    expected = (1000 * 2 + 500 * 10 + 9000 * 0.2 + 2000 * 2.5) / 1e6
    # A dated or longer name falls back to the longest listed prefix.
    assert cost_usd("claude-sonnet-5-5-20261001", TURN, env={}) == pytest.approx(expected)
    assert cost_usd("claude-sonnet-5-5", TURN, env={}) == pytest.approx(expected)
    assert cost_usd("llama3.1", TURN, env={}) is None
    assert prices_date(env={}) is not None
    shown = summary(TURN, "claude-sonnet-5-5", env={})
    assert shown.cost_usd == pytest.approx(expected)
    assert shown.usage == TURN and shown.prices_date == prices_date(env={})
    assert shown.to_json() == {**TURN.to_json(), "cost_usd": shown.cost_usd, "prices_date": shown.prices_date}


def test_the_user_can_replace_the_price_table(tmp_path):
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"date": "2027-01-01", "models": {"llama": {"input": 1, "output": 2}}}))
    env = {"DUEL_PRICES": str(table)}

    assert cost_usd("llama3.1", TURN, env) == pytest.approx((1000 * 1 + 500 * 2) / 1e6)
    assert cost_usd("claude-sonnet-5-5", TURN, env) is None
    assert prices_date(env) == "2027-01-01"


def test_an_unreadable_price_table_is_an_invalid_argument(tmp_path):
    table = tmp_path / "prices.json"
    table.write_text("{not json")

    with pytest.raises(DuelError) as raised:
        cost_usd("claude-x", TURN, {"DUEL_PRICES": str(table)})
    assert raised.value.code == "INVALID_ARGUMENT"


# -- every request a draft sent, failed ones included (issue 28 item 3) ----------------------------

REQUEST = TurnRequest(system="s" * 400, history="h" * 3600, instruction="i" * 4000, cache_key="k")  # ~2000 tokens


def failing(after: Progress | None) -> Callable[[TurnRequest, Callable[[Progress], None]], Composition]:
    """A request that streams ``after`` (None: nothing) and then fails."""

    def compose(request: TurnRequest, progress: Callable[[Progress], None]) -> Composition:
        if after is not None:
            progress(after)
        raise ProviderError("PROVIDER_UNAVAILABLE", "cut", retryable=True)

    return compose


def test_a_request_that_failed_mid_answer_counts_its_estimated_tokens_and_one_refused_counts_none():
    shown: list[Progress] = []
    meter = RequestMeter(REQUEST, shown.append)
    for after in (Progress(output_tokens=700), None):
        with pytest.raises(ProviderError):
            meter.attempt(failing(after))
    spent = meter.spent()
    assert shown == [Progress(output_tokens=700)]  # the person still sees the progress
    assert (spent.input_tokens, spent.output_tokens, spent.output_estimated) == (2000, 700, True)
    assert (spent.requests, spent.retries) == (2, 1)


def test_an_answer_after_failures_adds_their_estimate_to_the_apis_counts():
    meter = RequestMeter(REQUEST, lambda _progress: None)
    with pytest.raises(ProviderError):
        meter.attempt(failing(Progress(output_tokens=50)))
    answer = Composition(
        text="turn", usage=Usage(input_tokens=1500, output_tokens=400, cache_read_tokens=500, requests=2, retries=1)
    )
    used = meter.answered(meter.attempt(lambda _request, _progress: answer).usage)
    assert (used.input_tokens, used.cache_read_tokens, used.output_tokens) == (3500, 500, 450)
    assert (used.requests, used.retries, used.output_estimated) == (2, 1, True)


def test_a_request_abandoned_at_the_deadline_counts_what_it_had_streamed():
    meter = RequestMeter(REQUEST, lambda _progress: None)
    seen_at_the_deadline: list[Usage] = []

    def still_streaming(_request: TurnRequest, progress: Callable[[Progress], None]) -> Composition:
        progress(Progress(output_tokens=90))
        seen_at_the_deadline.append(meter.spent())  # what the loop records when it gives the request up
        return Composition(text="")

    meter.attempt(still_streaming)
    [spent] = seen_at_the_deadline
    assert (spent.requests, spent.input_tokens, spent.output_tokens) == (1, 2000, 90)
