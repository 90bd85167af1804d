"""What `duel bench run` says as runs end (docs/bench.md): on a terminal a bar of the runs done, the money spent
of the cap and the time taken; through a pipe a line a run, saying how it ended and what it cost."""

from __future__ import annotations

from pathlib import Path

from rp1_duel.benchmark import RunResult, RunSpec, progress_bar, result_line
from rp1_duel.benchmark.spend import SeatSpend


def test_the_bar_fills_with_the_runs_done_and_shows_the_money_and_the_time() -> None:
    assert progress_bar(done=1, planned=4, spent_usd=0.25, cap_usd=2, seconds=125.7) == (
        "[#######.......................] 1/4 runs  $0.2500 of $2.00  2:05"
    )
    assert progress_bar(done=0, planned=0, spent_usd=0, cap_usd=1, seconds=0).startswith("[" + "#" * 30 + "]")


def test_a_finished_run_says_how_it_ended_what_it_cost_and_how_many_are_done(tmp_path: Path) -> None:
    seats = (
        SeatSpend(seat="seat 1", model="claude-x", served=None, tokens_in=1, tokens_out=1, usd=0.5),
        SeatSpend(seat="seat 2", model="gpt-x", served=None, tokens_in=1, tokens_out=1, usd=None),
    )
    duel = RunResult(
        spec=RunSpec(document="adr-1", condition="duel", number=2, directory=tmp_path),
        outcome="DISSENT",
        record=None,
        revised=None,
        seats=seats,
        seconds=61.4,
    )
    assert result_line(duel, done=3, planned=8) == "adr-1/duel-2: DISSENT, $0.500000, 61 s (3/8)"
    single = RunResult(
        spec=RunSpec(document="adr-1", condition="single", number=2, directory=tmp_path),
        outcome=None,
        record=None,
        revised="revised.md",
        seats=seats[:1],
        seconds=2.0,
    )
    assert result_line(single, done=4, planned=8) == "adr-1/single-2: revised, $0.500000, 2 s (4/8)"
    cut = RunResult(
        spec=RunSpec(document="adr-1", condition="duel", number=3, directory=tmp_path),
        outcome=None,
        record=None,
        revised=None,
        seats=(),
        seconds=9.0,
        stopped="error",
        error="E: x",
    )
    assert result_line(cut, done=4, planned=8) == "adr-1/duel-3: stopped: error (E: x), $0.000000, 9 s (4/8)"
