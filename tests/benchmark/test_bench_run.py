"""`duel bench run` (docs/bench.md): a corpus debated by real `duel join` processes against the fake model
servers, into the run layout; resumed; held under its money cap and its wall clock; with the single-seat
baseline; and once on the real local model tier."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_participant import clean_env

from rp1_duel.benchmark import load_corpus
from rp1_duel.coordination import DuelService
from rp1_duel.turns import OUTCOMES

from fake_debater import BENCH_RIGHT, BENCH_WRONG, bench_fixer, prompt_text
from fake_models import FakeAnthropicServer, FakeOpenAIServer
from helpers import SOURCE
from llama_server import llama_server, needs_server

pytestmark = pytest.mark.slow

WRONG, RIGHT = (
    "Leases expire after fifteen minutes unless refreshed.",
    "Leases expire after ten minutes unless refreshed.",
)
SIDECAR = {
    "kind": "rfc",
    "defects": [
        {
            "id": "d1",
            "kind": "wrong-figure",
            "where": "## Lease semantics",
            "description": "fifteen minutes blocks a crashed holder's peer too long",
            "fixed_when": {"absent": "fifteen minutes"},
        }
    ],
}
PRICES = {
    "date": "2026-11-28",
    "models": {"claude-x": {"input": 1.0, "output": 2.0}, "gpt-x": {"input": 1.0, "output": 2.0}},
}


def write_corpus(folder: Path, names: tuple[str, ...] = ("alpha", "beta")) -> Path:
    """A corpus in the shipped layout: each document the tests' lease design, with one wrong figure."""
    for name in names:
        document = folder / name
        document.mkdir(parents=True)
        (document / "document.md").write_text(SOURCE.replace("# Lease design", f"# Lease design {name}"))
        (document / "fixed.md").write_text(SOURCE.replace(BENCH_WRONG, BENCH_RIGHT))
        (document / "defects.json").write_text(json.dumps(SIDECAR))
    return folder


@pytest.fixture
def models(anthropic_server: FakeAnthropicServer, openai_server: FakeOpenAIServer, tmp_path: Path) -> dict[str, str]:
    """Both fake servers playing a seat that fixes the seeded figure, and the environment that points the seats at them."""
    anthropic_server.responder = openai_server.responder = bench_fixer
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    # The fake OpenAI server is named by a base URL, which is sent no output ceiling unless one is configured: a
    # money cap needs one (protocol section 2, "A money cap"). 16000 is what a claude- seat sends by default.
    (tmp_path / "duel.toml").write_text("[model]\nmax_output_tokens = 16000\n")
    return clean_env(
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=anthropic_server.base_url,
        OPENAI_API_KEY="test-key",
        OPENAI_BASE_URL=openai_server.base_url,
        DUEL_PRICES=str(prices),
        NO_COLOR="1",
    )


def bench(cwd: Path, env: dict[str, str], *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """``duel bench run`` as a real process, in ``cwd``."""
    command = [sys.executable, "-m", "rp1_duel", "bench", "run", *args]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def result_of(run: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((run / "result.json").read_text())
    return found


def test_a_two_document_corpus_ends_in_the_run_layout_with_each_agreed_revision(
    tmp_path: Path, models: dict[str, str], anthropic_server: FakeAnthropicServer
) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    out = tmp_path / "out"
    done = bench(
        tmp_path, models, "--corpus", str(corpus), "--seats", "claude-x,gpt-x", "--budget-usd", "5", "--out", str(out),
        "--concurrency", "2",
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    plan = json.loads((out / "bench.json").read_text())
    assert plan == {"corpus": str(corpus), "seats": ["claude-x", "gpt-x"], "chair": None, "runs": 1, "baseline": None}
    documents = {document.name: document for document in load_corpus(corpus)}
    for name in ("alpha", "beta"):
        run = out / name / "duel-1"
        result = result_of(run)
        assert (result["document"], result["condition"], result["run"]) == (name, "duel", 1)
        assert (result["outcome"], result["stopped"], result["error"]) == ("ACCEPTED_CONSENSUS", None, None)
        assert result["record"].startswith("debates/") and (run / result["record"]).is_file()
        assert "sealed_openings: true" in (run / result["record"]).read_text()
        assert (run / "document.md").read_text() == documents[name].text
        assert result["revised"] == "revised.md"
        assert documents[name].fixed((run / "revised.md").read_text()) == {"d1"}
        assert [(seat["seat"], seat["model"], seat["served"]) for seat in result["seats"]] == [
            ("seat 1", "claude-x", "claude-x"),
            ("seat 2", "gpt-x", "gpt-x"),
        ]
        assert all(seat["tokens_in"] > 0 and seat["tokens_out"] > 0 and seat["usd"] > 0 for seat in result["seats"])
        assert result["seconds"] > 0
    # Each seat's tokens are its requests' as the fake server counted them: seat 1 wrote turns 1, 3 and 5 twice over.
    assert len(anthropic_server.requests) == 6
    assert "alpha/duel-1: ACCEPTED_CONSENSUS" in done.stderr and "beta/duel-1: ACCEPTED_CONSENSUS" in done.stderr
    assert "seat 1 (claude-x): $" in done.stderr and "total: $" in done.stderr


def test_a_resumed_bench_skips_the_runs_done_and_redoes_a_half_done_one_from_scratch(
    tmp_path: Path, models: dict[str, str], anthropic_server: FakeAnthropicServer
) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    out = tmp_path / "out"
    args = ("--corpus", str(corpus), "--seats", "claude-x,gpt-x", "--budget-usd", "5", "--out", str(out))
    assert bench(tmp_path, models, *args).returncode == 0
    beta = (out / "beta" / "duel-1" / "result.json").read_text()
    (out / "alpha" / "duel-1" / "result.json").unlink()  # as a bench killed mid-duel leaves it
    (out / "alpha" / "duel-1" / "left-over").write_text("from the run that died")
    anthropic_server.requests.clear()

    done = bench(tmp_path, models, *args)

    assert done.returncode == 0, done.stderr
    assert (out / "beta" / "duel-1" / "result.json").read_text() == beta  # skipped
    assert not (out / "alpha" / "duel-1" / "left-over").exists()  # redone from scratch
    assert result_of(out / "alpha" / "duel-1")["outcome"] == "ACCEPTED_CONSENSUS"
    assert len(anthropic_server.requests) == 3  # alpha's duel alone: seat 1's three turns
    assert "beta" not in done.stderr.split("total:")[0].replace(str(out), "")


def priced_from_the_log(server: FakeAnthropicServer | FakeOpenAIServer) -> float:
    """What the requests a fake server received cost, by its own counts (its usage: the request's JSON over four,
    a token a streamed chunk) at the tests' prices: the fake's request log, not the bench's accounts."""
    chunks = [len(re.findall(r"\s*\S+\s*|\s+", bench_fixer(request["body"]))) for request in server.requests]
    prompts = [len(json.dumps(request["body"])) // 4 for request in server.requests]
    return (sum(prompts) * 1.0 + sum(chunks) * 2.0) / 1_000_000


def test_the_money_cap_stops_a_seat_before_the_request_that_would_pass_its_share_and_names_who_spent_what(
    tmp_path: Path, models: dict[str, str], anthropic_server: FakeAnthropicServer, openai_server: FakeOpenAIServer
) -> None:
    # $0.082 gives each seat $0.041. A request's worst case is its prompt and 16,000 tokens out ($0.032 and about
    # $0.004 here): seat 1's turn 5, after $0.0074 spent, could pass its share, so it is never sent.
    corpus = write_corpus(tmp_path / "corpus", ("alpha",))
    out = tmp_path / "out"
    done = bench(
        tmp_path, models, "--corpus", str(corpus), "--seats", "claude-x,gpt-x", "--budget-usd", "0.082", "--out",
        str(out),
    )  # fmt: skip

    assert done.returncode == 4, done.stderr
    run = out / "alpha" / "duel-1"
    result = result_of(run)
    assert (result["stopped"], result["outcome"]) == ("budget", None)
    assert "BUDGET_EXCEEDED" in (run / "seats.log").read_text()
    assert (len(anthropic_server.requests), len(openai_server.requests)) == (2, 2)  # turns 1 and 3; 2 and 4
    spent = {seat["model"]: seat["usd"] for seat in result["seats"]}
    assert spent["claude-x"] == pytest.approx(priced_from_the_log(anthropic_server), abs=1e-6)
    assert spent["gpt-x"] == pytest.approx(priced_from_the_log(openai_server), abs=1e-6)
    assert all(usd <= 0.041 for usd in spent.values())
    assert "stopped by the budget cap: 0 of 1 runs done" in done.stderr
    assert f"seat 1 (claude-x): ${spent['claude-x']:.6f}" in done.stderr
    assert f"seat 2 (gpt-x): ${spent['gpt-x']:.6f}" in done.stderr


def test_a_bench_whose_money_cannot_pay_any_share_starts_nothing_and_exits_4(
    tmp_path: Path, models: dict[str, str], anthropic_server: FakeAnthropicServer
) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    out = tmp_path / "out"
    done = bench(
        tmp_path, models, "--corpus", str(corpus), "--seats", "claude-x,gpt-x", "--budget-usd", "0.001", "--out",
        str(out),
    )  # fmt: skip

    assert done.returncode == 4, done.stderr
    assert "stopped by the budget cap: 0 of 2 runs done" in done.stderr
    assert anthropic_server.requests == [] and not (out / "alpha").exists()


def test_the_wall_clock_stops_running_duels_cleanly_and_marks_them_stopped(
    tmp_path: Path, models: dict[str, str], anthropic_server: FakeAnthropicServer, openai_server: FakeOpenAIServer
) -> None:
    corpus = write_corpus(tmp_path / "corpus", ("alpha",))
    out = tmp_path / "out"
    anthropic_server.script = [{}, {"think_seconds": 60}]  # seat 1's turn 3 never comes: it holds the floor
    started = time.monotonic()
    done = bench(
        tmp_path, models, "--corpus", str(corpus), "--seats", "claude-x,gpt-x", "--budget-usd", "5", "--out", str(out),
        "--wall-clock", "12",
    )  # fmt: skip

    assert done.returncode == 5, done.stderr
    assert time.monotonic() - started < 40
    run = out / "alpha" / "duel-1"
    result = result_of(run)
    assert (result["stopped"], result["outcome"]) == ("wall-clock", None)
    status = DuelService(run / "debates").status(target=str(run / "document.md"))
    assert status.turn_count == 2 and status.lock.owner_participant_id is None  # the floor given back, as on Ctrl-C
    assert "stopped by the wall-clock cap: 0 of 1 runs done" in done.stderr


def test_the_single_baseline_asks_the_first_seat_once_and_writes_its_applied_edits(
    tmp_path: Path, models: dict[str, str], anthropic_server: FakeAnthropicServer
) -> None:
    corpus = write_corpus(tmp_path / "corpus", ("alpha",))
    out = tmp_path / "out"
    done = bench(
        tmp_path, models, "--corpus", str(corpus), "--seats", "claude-x,gpt-x", "--budget-usd", "5", "--out", str(out),
        "--baseline", "single",
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    single = out / "alpha" / "single-1"
    result = result_of(single)
    assert (result["condition"], result["outcome"], result["record"], result["stopped"]) == ("single", None, None, None)
    assert result["revised"] == "revised.md"
    assert load_corpus(corpus)[0].fixed((single / "revised.md").read_text()) == {"d1"}
    [seat] = result["seats"]
    assert (seat["seat"], seat["model"], seat["served"]) == ("single", "claude-x", "claude-x")
    only = [r for r in anthropic_server.requests if "This is the only turn" in prompt_text(r["body"])]
    assert len(only) == 1 and seat["tokens_out"] > 0
    assert json.loads((out / "bench.json").read_text())["baseline"] == "single"


def test_a_chaired_bench_runs_the_chair_as_a_third_seat_and_scores_its_spend(
    tmp_path: Path, models: dict[str, str], anthropic_server: FakeAnthropicServer
) -> None:
    """`--chair MODEL`: the chair is a third `duel join` process (the fake servers' bench_fixer plays it: brief,
    pre-closing, synthesis), its turns are in the record, its requests in the run's spend and the score's."""
    corpus = write_corpus(tmp_path / "corpus", ("alpha",))
    out = tmp_path / "out"
    done = bench(
        tmp_path, models, "--corpus", str(corpus), "--seats", "claude-x,gpt-x", "--chair", "claude-x",
        "--budget-usd", "5", "--out", str(out),
    )  # fmt: skip

    assert done.returncode == 0, done.stderr + (out / "alpha" / "duel-1" / "seats.log").read_text()
    assert json.loads((out / "bench.json").read_text())["chair"] == "claude-x"
    run = out / "alpha" / "duel-1"
    result = result_of(run)
    assert (result["outcome"], result["stopped"], result["error"]) == ("ACCEPTED_CONSENSUS", None, None)
    record = (run / result["record"]).read_text()
    assert "chair: true" in record and "| chair | Chair |" in record
    assert [n for n in range(9) if f"<!-- duel:turn n={n} " in record] == list(range(9))
    for n, section in ((0, "**Question**"), (5, "**Unengaged Points**"), (8, "**Synthesis**")):
        assert f"## Turn {n} — Chair (" in record and section in record.split(f"<!-- duel:turn n={n} ")[1]
    assert load_corpus(corpus)[0].fixed((run / "revised.md").read_text()) == {"d1"}
    chair = next(seat for seat in result["seats"] if seat["seat"] == "the chair")
    assert chair["model"] == "claude-x" and chair["tokens_in"] > 0 and chair["usd"] > 0
    # The anthropic server answered seat 1's turns 1, 3, 6 and the chair's 0, 5, 8: six requests.
    assert len(anthropic_server.requests) == 6
    assert "the chair (claude-x): $" in done.stderr
    scored = subprocess.run(
        [sys.executable, "-m", "rp1_duel", "bench", "score", str(out), "--format", "json"],
        cwd=tmp_path, env=models, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    [scored_run] = json.loads(scored.stdout)["documents"][0]["runs"]
    assert (scored_run["recall"], scored_run["rounds"]) == (1.0, 3)  # six panel turns over two seats
    assert scored_run["tokens_in"] == sum(seat["tokens_in"] for seat in result["seats"])
    assert scored_run["usd"] == pytest.approx(sum(seat["usd"] for seat in result["seats"]))


def test_a_duel_that_ends_invalidated_is_a_run_done_not_an_error(
    tmp_path: Path, models: dict[str, str], anthropic_server: FakeAnthropicServer
) -> None:
    """A seat that cannot write a valid turn ends the duel INVALIDATED, and its `duel join` exits 1: that is the
    duel's outcome, scored like any other, not a run that failed."""
    anthropic_server.responder = lambda body: "I would rather not write a turn."
    corpus = write_corpus(tmp_path / "corpus", ("alpha",))
    out = tmp_path / "out"
    done = bench(
        tmp_path, models, "--corpus", str(corpus), "--seats", "claude-x,gpt-x", "--budget-usd", "5", "--out", str(out)
    )
    result = result_of(out / "alpha" / "duel-1")
    assert (result["outcome"], result["stopped"], result["error"]) == ("INVALIDATED", None, None), done.stderr
    assert done.returncode == 0 and "alpha/duel-1: INVALIDATED" in done.stderr, done.stderr


@needs_server()
@pytest.mark.timeout(900)
def test_the_local_model_tier_runs_one_corpus_document_end_to_end(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus", ("alpha",))
    out = tmp_path / "out"
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"date": "2026-11-28", "models": {"smollm2": {"input": 0.0, "output": 0.0}}}))
    # The openings alone, each answer short: two seats share one small server on a CI machine's CPUs, and a turn
    # the model cannot finish in time ends the duel TIMEOUT, an outcome like any other.
    settings = "[duel]\nmax_turns = 2\nturn_timeout_seconds = 300\n\n[model]\nmax_output_tokens = 1024\n"
    (tmp_path / "duel.toml").write_text(settings)
    with llama_server(tmp_path, n_ctx=8192, alias="smollm2", queue_requests=True) as server:
        env = clean_env(OPENAI_BASE_URL=server.base_url, DUEL_PRICES=str(prices), NO_COLOR="1")
        done = bench(
            tmp_path, env, "--corpus", str(corpus), "--seats", "smollm2,smollm2", "--budget-usd", "1", "--out",
            str(out), timeout=840,
        )  # fmt: skip
        asked = server.chat_requests()
    run = out / "alpha" / "duel-1"
    result = result_of(run)
    assert done.returncode == 0, done.stderr  # the duel ended: however a small model does, that is its outcome
    assert result["outcome"] in OUTCOMES and result["stopped"] is None, result
    assert (run / result["record"]).is_file() and (run / "document.md").is_file()
    assert [seat["model"] for seat in result["seats"]] == ["smollm2", "smollm2"]
    assert asked >= 2  # both seats asked the real server for their openings
    assert "alpha/duel-1: " + result["outcome"] in done.stderr


def test_on_postgresql_a_run_the_wall_clock_cut_is_redone_as_a_new_duel_the_old_one_abandoned(
    tmp_path: Path, models: dict[str, str], anthropic_server: FakeAnthropicServer, postgres_url: str
) -> None:
    corpus = write_corpus(tmp_path / "corpus", ("alpha",))
    out = tmp_path / "out"
    args = ("--corpus", str(corpus), "--seats", "claude-x,gpt-x", "--budget-usd", "5", "--out", str(out))
    anthropic_server.script = [{}, {"think_seconds": 60}]  # the first session's turn 3 never comes
    assert bench(tmp_path, models, *args, "--store", postgres_url, "--wall-clock", "12").returncode == 5
    run = out / "alpha" / "duel-1"
    service = DuelService(run / "debates", store=postgres_url)
    first = service.status(target=str(run / "document.md"))

    done = bench(tmp_path, models, *args, "--store", postgres_url)

    assert done.returncode == 0, done.stderr
    assert result_of(run)["outcome"] == "ACCEPTED_CONSENSUS"
    again = service.status(first.duel.id)
    assert again.duel.status == "CLOSED" and again.duel.outcome == "INVALIDATED"
    assert "redoes this run from scratch" in (again.duel.reason or "")
    assert service.status(target=str(run / "document.md")).duel.id != first.duel.id


def test_a_resume_with_another_plan_into_the_same_out_is_refused_before_anything_runs(
    tmp_path: Path, models: dict[str, str], anthropic_server: FakeAnthropicServer
) -> None:
    corpus = write_corpus(tmp_path / "corpus", ("alpha",))
    out = tmp_path / "out"
    out.mkdir()
    (out / "bench.json").write_text(json.dumps({"corpus": str(corpus), "seats": ["gpt-x", "claude-x"]}))
    done = bench(
        tmp_path, models, "--corpus", str(corpus), "--seats", "claude-x,gpt-x", "--budget-usd", "5", "--out", str(out),
    )  # fmt: skip

    assert done.returncode == 2, done.stderr
    assert "holds another bench's runs (bench.json differs): use another --out" in done.stderr
    assert anthropic_server.requests == [] and not (out / "alpha").exists()
