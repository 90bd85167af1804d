"""The money cap's arithmetic and the run plan of `duel bench run` (docs/bench.md, "The money cap"), as pure
functions: the shares held never sum past what is free, a share too small to pay for a turn is refused, the runs
go breadth first, and a run a cap cut short is redone while any other finished one is skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rp1_duel.benchmark import BenchPlan, BudgetLedger, Lineup, RunResult, RunSpec, planned_runs, seat_share
from rp1_duel.benchmark.layout import is_done, write_result
from rp1_duel.benchmark.run import spend_lines
from rp1_duel.benchmark.spend import SeatSpend
from rp1_duel.errors import DuelError


@pytest.mark.parametrize(("free", "seats"), [(1.0, 3), (0.7, 6), (5.0, 7), (0.0123457, 4)])
def test_the_shares_of_the_seats_starting_never_sum_past_what_is_free(free: float, seats: int) -> None:
    share = seat_share(free_usd=free, seats_starting=seats)
    assert 0 < share * seats <= free
    assert free - share * seats < seats / 1_000_000  # rounded down to the micro-dollar, no further


def test_nothing_free_is_no_share() -> None:
    assert seat_share(free_usd=-0.5, seats_starting=2) == seat_share(free_usd=1.0, seats_starting=0) == 0.0


def test_the_ledger_holds_running_shares_and_frees_what_a_finished_run_did_not_spend() -> None:
    ledger = BudgetLedger(cap_usd=1.0)
    ledger.hold("a/duel-1", 0.25, 2)
    ledger.hold("b/duel-1", 0.25, 2)
    assert ledger.free_usd == 0.0
    ledger.settle("a/duel-1", 0.1, costliest_draft_usd=0.03)
    assert ledger.free_usd == pytest.approx(0.4)
    assert not ledger.useful(0.02) and ledger.useful(0.03)  # a share must pay for the costliest turn so far
    assert not BudgetLedger(cap_usd=1.0).useful(0.0009)  # nor less than a tenth of a cent


def test_the_runs_go_breadth_first_each_duel_with_its_baseline(tmp_path: Path) -> None:
    plan = BenchPlan(
        corpus=tmp_path, lineup=Lineup(("a", "b")), runs=2, concurrency=1, budget_usd=1, out=tmp_path, baseline="single"
    )
    assert [spec.key for spec in planned_runs(["x", "y"], plan)] == [
        "x/duel-1",
        "x/single-1",
        "y/duel-1",
        "y/single-1",
        "x/duel-2",
        "x/single-2",
        "y/duel-2",
        "y/single-2",
    ]


@pytest.mark.parametrize(
    ("stopped", "skipped"), [(None, "done"), ("error", "done"), ("budget", ""), ("wall-clock", "")]
)
def test_a_run_a_cap_cut_short_is_redone_and_any_other_result_is_done(
    tmp_path: Path, stopped: str | None, skipped: str
) -> None:
    spec = RunSpec(document="x", condition="duel", number=1, directory=tmp_path)
    assert not is_done(tmp_path)
    write_result(RunResult(spec=spec, outcome=None, record=None, revised=None, seats=(), seconds=1.0, stopped=stopped))
    assert is_done(tmp_path) is bool(skipped)
    (tmp_path / "result.json").write_text("{half")
    assert not is_done(tmp_path)  # a result that cannot be read: redone


def test_who_spent_what_sums_each_seat_and_model_costliest_first(tmp_path: Path) -> None:
    def run(usd_1: float, usd_2: float) -> RunResult:
        seats = (
            SeatSpend(seat="seat 1", model="claude-x", served=None, tokens_in=10, tokens_out=1, usd=usd_1),
            SeatSpend(seat="seat 2", model="gpt-x", served=None, tokens_in=20, tokens_out=2, usd=usd_2),
        )
        return RunResult(
            spec=RunSpec(document="x", condition="duel", number=1, directory=tmp_path),
            outcome=None,
            record=None,
            revised=None,
            seats=seats,
            seconds=1.0,
        )

    assert spend_lines([run(0.1, 0.3), run(0.2, 0.4)]) == [
        "seat 2 (gpt-x): $0.700000, 40 tokens in, 4 out",
        "seat 1 (claude-x): $0.300000, 20 tokens in, 2 out",
        "total: $1.000000",
    ]


def test_a_plan_with_an_unpriced_model_is_refused_before_anything_runs(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"claude-x": {"input": 1.0}}}))
    plan = BenchPlan(
        corpus=tmp_path, lineup=Lineup(("claude-x", "mystery")), runs=1, concurrency=1, budget_usd=1, out=tmp_path
    )
    with pytest.raises(DuelError) as refused:
        plan.check({"DUEL_PRICES": str(prices)})
    assert refused.value.code == "INVALID_ARGUMENT" and "'mystery'" in refused.value.message
