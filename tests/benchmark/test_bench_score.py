"""``duel bench score``: the scoring functions on hand-made records, then whole duels run by programmed seats on
the fake model servers (``fake_bench_seats``), scored by the ``duel bench score`` command."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rp1_duel.benchmark import CorpusDocument, load_corpus, render_score, score_bench
from rp1_duel.benchmark.score import (
    RIGHT_TO_WRONG,
    WRONG_TO_RIGHT,
    RunRecord,
    SeatTurn,
    openings_text,
    score_run,
    seat_flips,
    silent_agreements,
)
from rp1_duel.coordination import DuelService, Provenance, Usage
from rp1_duel.turns import parse_turn

import helpers
from fake_bench_seats import DEFECTS, FIXED, WRONG, bench_seat, turn
from fake_models import FakeAnthropicServer, FakeOpenAIServer
from helpers import SOURCE, claim, make_turn

TESTS = Path(__file__).parents[1]
ORIGINAL = SOURCE.replace("design.md", "document.md")


def write_corpus(folder: Path, names: tuple[str, ...]) -> Path:
    """A corpus of ``names``, each the helpers' design document with one wrong figure (``DEFECTS``)."""
    for name in names:
        (folder / name).mkdir(parents=True)
        (folder / name / "document.md").write_text(ORIGINAL, encoding="utf-8")
        (folder / name / "fixed.md").write_text(ORIGINAL.replace(WRONG, FIXED), encoding="utf-8")
        (folder / name / "defects.json").write_text(json.dumps(DEFECTS), encoding="utf-8")
    return folder


@pytest.fixture
def document(tmp_path: Path) -> CorpusDocument:
    return load_corpus(write_corpus(tmp_path / "corpus", ("lease-rfc",)))[0]


def seat_turn(n: int, model: str, stance: str, *, support: str = "", tail: str = "") -> SeatTurn:
    """Turn ``n`` as ``model`` writes it in seat 1 (odd turns) or 2 (even), built as the programmed seats build it."""
    body = {"system": f"## Turn {n} — {model} (duel / {model}) — STANCE\nWrite turn {n} of at most 4"}
    return SeatTurn(seat=2 - n % 2, name=model, turn=parse_turn(turn(n, body, stance, support=support, tail=tail)))


EDIT = f"**Proposed Edits**\nEdit lease-figure: replace\n```find\n{WRONG}\n```\n```replace\n{FIXED}\n```\n"
# Seat 1 fixes the figure, then withdraws the fix, giving way to seat 2's turn.
ABANDONED_FIX = (
    seat_turn(1, "claude-abandoner", "CONVERGING", tail=EDIT),
    seat_turn(2, "gpt-conformist", "OPEN_TO_DEBATE"),
    seat_turn(
        3,
        "claude-abandoner",
        "ACCEPTING_CONSENSUS",
        support="- Turn 2\n",
        tail="**Proposed Edits**\nWithdraw lease-figure\n",
    ),
)
# The Accepted Revision section naming the revision the edit makes: r- and 12 hex digits of its SHA-256.
ACCEPT_FIXED = f"**Accepted Revision**\nr-{hashlib.sha256(ORIGINAL.replace(WRONG, FIXED).encode()).hexdigest()[:12]}\n"


# -- the scoring functions, on hand-made turns ---------------------------------------------------------------------


def test_a_seat_that_withdraws_its_fix_flips_right_to_wrong_citing_the_turn_it_gave_way_to(
    document: CorpusDocument,
) -> None:
    turns = ABANDONED_FIX
    flips = seat_flips(ORIGINAL, turns, document, {3: "Turn 2"})
    assert [(f.seat, f.turn, f.defect, f.direction, f.reason) for f in flips] == [
        (1, 3, "d1", RIGHT_TO_WRONG, "Turn 2")
    ]


def test_a_seat_that_accepts_its_peers_fix_flips_wrong_to_right_and_its_opening_is_no_flip(
    document: CorpusDocument,
) -> None:
    turns = (
        seat_turn(1, "claude-finder", "CONVERGING", tail=EDIT),
        seat_turn(2, "gpt-conformist", "OPEN_TO_DEBATE"),
        seat_turn(3, "claude-finder", "ACCEPTING_CONSENSUS", support="- Turn 2\n", tail=ACCEPT_FIXED),
        seat_turn(4, "gpt-conformist", "ACCEPTING_CONSENSUS", support="- Turn 3\n", tail=ACCEPT_FIXED),
    )
    flips = seat_flips(ORIGINAL, turns, document, {3: "Turn 2", 4: "Turn 3"})
    assert [(f.seat, f.turn, f.direction, f.reason) for f in flips] == [(2, 4, WRONG_TO_RIGHT, "Turn 3")]


def test_an_accepting_turn_is_silent_only_when_it_accepts_a_new_revision_citing_nothing() -> None:
    turns = (
        seat_turn(1, "claude-finder", "CONVERGING", tail=EDIT),
        seat_turn(2, "gpt-silent", "ACCEPTING_CONSENSUS", tail=ACCEPT_FIXED),  # silent
        seat_turn(3, "claude-finder", "ACCEPTING_CONSENSUS", support="- Turn 2\n", tail=ACCEPT_FIXED),
        seat_turn(4, "gpt-silent", "ACCEPTING_CONSENSUS", tail=ACCEPT_FIXED),  # the same revision again
    )
    assert silent_agreements(ORIGINAL, turns) == (2,)


def test_the_openings_union_applies_each_seats_opening_edits_and_counts_those_that_no_longer_apply() -> None:
    clash = EDIT.replace("lease-figure", "other-figure").replace(FIXED, "Leases never expire.")
    turns = (
        seat_turn(1, "claude-finder", "CONVERGING", tail=EDIT),
        seat_turn(2, "gpt-conformist", "OPEN_TO_DEBATE", tail=clash),  # the same sentence: it overlaps seat 1's
        seat_turn(3, "claude-finder", "CONVERGING", tail=EDIT.replace(FIXED, "Leases last a minute.")),
    )
    text, skipped = openings_text(ORIGINAL, turns)
    assert (FIXED in text, skipped) == (True, 1)
    # Sealed openings carry no edits: a seat's opening edits are then its second turn's.
    assert openings_text(ORIGINAL, turns, sealed=True) == (ORIGINAL.replace(WRONG, "Leases last a minute."), 0)


def test_consensus_on_a_revision_where_a_predicate_fails_is_wrong_and_names_the_defect(
    document: CorpusDocument,
) -> None:
    run = RunRecord(
        document="lease-rfc", condition="duel", run=1, outcome="ACCEPTED_CONSENSUS", original=ORIGINAL, revised=None
    )
    score = score_run(run, document)
    assert (score.wrong_consensus, score.failing, score.recall("duel"), score.recall("single")) == (
        True,
        ("d1",),
        0.0,
        None,
    )
    right = score_run(RunRecord(**{**run.__dict__, "revised": ORIGINAL.replace(WRONG, FIXED)}), document)
    assert (right.wrong_consensus, right.failing, right.recall("duel")) == (False, (), 1.0)
    dissent = score_run(RunRecord(**{**run.__dict__, "outcome": "DISSENT"}), document)
    assert (dissent.wrong_consensus, dissent.failing) == (False, ())


# -- whole duels by programmed seats, scored by the command ---------------------------------------------------------

# Each document's duel: the model in seat 1, the model in seat 2 (fake_bench_seats says what each is programmed to do).
LINEUPS = {
    "finder-conformist": ("claude-finder", "gpt-conformist"),
    "abandoner-conformist": ("claude-abandoner", "gpt-conformist"),
    "finder-silent": ("claude-finder", "gpt-silent"),
}


def env_for(kind: str, server: FakeAnthropicServer | FakeOpenAIServer) -> dict[str, str]:
    """A `duel join` process's environment: only the fake server of its kind, no user's keys or duel settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "DUEL_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")])
    return {**env, f"{kind}_API_KEY": "test-key", f"{kind}_BASE_URL": server.base_url}


def join(folder: Path, model: str, env: dict[str, str]) -> subprocess.Popen[str]:
    argv = [
        sys.executable,
        "-m",
        "rp1_duel",
        "join",
        "--target",
        str(folder / "document.md"),
        "--debate-dir",
        str(folder / "debates"),
        "--json",
        "--model",
        model,
        "--max-turns",
        "4",
    ]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def write_result(folder: Path, document: str, finished: list[tuple[str, str]], models: tuple[str, str]) -> None:
    """The run's result.json as `duel bench run` writes it, from the seats' `duel join --json` answers and
    `duel apply --to` for the agreed revision."""
    answers = [json.loads(out.strip().splitlines()[-1]) for out, _ in finished]
    record = Path(answers[0]["debate_path"])
    revised = None
    if answers[0]["revision"] is not None:
        subprocess.run(
            [sys.executable, "-m", "rp1_duel", "apply", str(record), "--to", str(folder / "revised.md")],
            check=True,
            capture_output=True,
        )
        revised = "revised.md"
    seats = [
        {"seat": f"seat {i}", "model": m, "served": m, "tokens_in": 1000 * i, "tokens_out": 100 * i, "usd": 0.01 * i}
        for i, m in enumerate(models, 1)
    ]
    result = {
        "document": document,
        "condition": "duel",
        "run": 1,
        "outcome": answers[0]["outcome"],
        "record": str(record.relative_to(folder)),
        "revised": revised,
        "seats": seats,
        "seconds": 3.0,
        "stopped": None,
        "error": None,
    }
    (folder / "result.json").write_text(json.dumps(result), encoding="utf-8")


@pytest.fixture
def bench_out(tmp_path: Path, anthropic_server: FakeAnthropicServer, openai_server: FakeOpenAIServer) -> Path:
    """A bench run's output: one duel a lineup (all at once), and a single-seat baseline that fixed the defect."""
    anthropic_server.responder = openai_server.responder = bench_seat
    corpus = write_corpus(tmp_path / "corpus", tuple(LINEUPS))
    out = tmp_path / "out"
    out.mkdir()
    plan: dict[str, object] = {"corpus": str(corpus), "seats": [], "chair": None, "runs": 1, "baseline": "single"}
    (out / "bench.json").write_text(json.dumps(plan), encoding="utf-8")
    folders = {name: out / name / "duel-1" for name in LINEUPS}
    for name, folder in folders.items():
        folder.mkdir(parents=True)
        shutil.copy(corpus / name / "document.md", folder / "document.md")
    firsts = {name: join(folders[name], LINEUPS[name][0], env_for("ANTHROPIC", anthropic_server)) for name in LINEUPS}
    for name in LINEUPS:  # the first seat is taken before the second joins
        while not list((folders[name] / "debates").glob("*.md")) and firsts[name].poll() is None:
            subprocess.run(["sleep", "0.05"], check=True)
    seconds = {name: join(folders[name], LINEUPS[name][1], env_for("OPENAI", openai_server)) for name in LINEUPS}
    for name, models in LINEUPS.items():
        finished = [p.communicate(timeout=90) for p in (firsts[name], seconds[name])]
        assert (firsts[name].returncode, seconds[name].returncode) == (0, 0), finished[0][1] + finished[1][1]
        write_result(folders[name], name, finished, models)
    single = out / "finder-conformist" / "single-1"
    single.mkdir()
    (single / "revised.md").write_text(ORIGINAL.replace(WRONG, FIXED), encoding="utf-8")
    seat = {
        "seat": "seat 1",
        "model": "claude-finder",
        "served": "claude-finder",
        "tokens_in": 500,
        "tokens_out": 50,
        "usd": 0.005,
    }
    result = {
        "document": "finder-conformist",
        "condition": "single",
        "run": 1,
        "outcome": None,
        "record": None,
        "revised": "revised.md",
        "seats": [seat],
        "seconds": 1.0,
        "stopped": None,
        "error": None,
    }
    (single / "result.json").write_text(json.dumps(result), encoding="utf-8")
    (out / "finder-silent" / "duel-2").mkdir()  # begun, not finished: not scored, counted as pending
    return out


def score(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rp1_duel", "bench", "score", str(out), *args],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.slow
def test_the_score_shows_exactly_what_each_programmed_seat_did(bench_out: Path, tmp_path: Path) -> None:
    done = score(bench_out, "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    runs = {(d["document"], r["condition"]): r for d in data["documents"] for r in d["runs"]}
    finder = runs["finder-conformist", "duel"]
    assert (finder["outcome"], finder["recall"], finder["openings_recall"], finder["wrong_consensus"]) == (
        "ACCEPTED_CONSENSUS",
        1.0,
        1.0,
        False,
    )
    assert [(f["seat"], f["turn"], f["direction"], f["reason"]) for f in finder["flips"]] == [
        (2, 4, "wrong_to_right", "Turn 3")  # the conformist came round to its peer's fix
    ]
    assert finder["silent_agreements"] == [] and finder["rounds"] == 2
    abandoner = runs["abandoner-conformist", "duel"]
    assert (abandoner["outcome"], abandoner["recall"], abandoner["openings_recall"]) == ("ACCEPTED_CONSENSUS", 0.0, 1.0)
    assert (abandoner["wrong_consensus"], abandoner["failing"]) == (True, ["d1"])
    assert [(f["seat"], f["turn"], f["direction"], f["reason"]) for f in abandoner["flips"]] == [
        (1, 3, "right_to_wrong", "Turn 2")  # it gave up its correct fix, citing its peer's turn
    ]
    silent = runs["finder-silent", "duel"]
    assert (silent["recall"], silent["silent_agreements"], silent["flips"], silent["wrong_consensus"]) == (
        1.0,
        [2],
        [],
        False,
    )
    assert runs["finder-conformist", "single"]["recall"] == 1.0
    total = data["total"]
    assert total["recall"] == {"duel": 2 / 3, "openings": 1.0, "single": 1.0}
    assert (total["consensus"], total["wrong_consensus"], total["silent_agreements"]) == (3, 1, 1)
    assert total["flips"] == {"right_to_wrong": 1, "wrong_to_right": 1}
    assert total["pending"] == ["finder-silent/duel-2"] and total["runs"] == 4
    assert total["provisional"] == 0 and all(run["provisional"] is None for run in runs.values())  # Claude vs GPT
    assert total["usd"]["duel"] == pytest.approx(0.09) and total["usd"]["single"] == pytest.approx(0.005)
    markdown = score(bench_out)
    assert markdown.returncode == 0, markdown.stderr
    assert "| abandoner-conformist | 1 | Claude (seat 1) | 3 | d1 | right → wrong | Turn 2 |" in markdown.stdout
    page = tmp_path / "score.html"
    assert score(bench_out, "--format", "html", "-o", str(page)).returncode == 0
    assert page.read_text().count("<svg") == 2 and "<script" not in page.read_text()


# -- output that is not a bench run's, and text from records --------------------------------------------------------


def single_run_out(tmp_path: Path, revised: str = "revised.md") -> Path:
    """A bench output holding one single-seat run of one document, its result.json naming ``revised``."""
    corpus = write_corpus(tmp_path / "corpus", ("lease-rfc",))
    run = tmp_path / "out" / "lease-rfc" / "single-1"
    run.mkdir(parents=True)
    (tmp_path / "out" / "bench.json").write_text(json.dumps({"corpus": str(corpus)}), encoding="utf-8")
    (run / "revised.md").write_text(ORIGINAL, encoding="utf-8")
    result = {
        "document": "lease-rfc",
        "condition": "single",
        "run": 1,
        "outcome": None,
        "record": None,
        "revised": revised,
        "seats": [],
        "seconds": 1.0,
        "stopped": None,
        "error": None,
    }
    (run / "result.json").write_text(json.dumps(result), encoding="utf-8")
    return tmp_path / "out"


def test_output_not_in_the_layout_is_one_line_naming_the_file_and_nothing_is_written(tmp_path: Path) -> None:
    out = single_run_out(tmp_path, revised="../../../corpus/lease-rfc/fixed.md")  # a path leading out of its run
    page = tmp_path / "score.md"
    escaped = score(out, "-o", str(page))
    assert escaped.returncode == 1 and not page.exists()
    assert (
        escaped.stderr.startswith("duel: BENCH_OUTPUT_INVALID: ") and "leads out of its run directory" in escaped.stderr
    )
    (out / "a-stray").mkdir()  # read before lease-rfc
    stray = score(out)
    assert stray.returncode == 1 and "no document 'a-stray' in the corpus" in stray.stderr
    (out / "bench.json").unlink()
    missing = score(out)
    assert missing.returncode == 1 and "bench.json: is missing" in missing.stderr
    assert score(out, "--format", "pdf").returncode == 2
    assert all(len(r.stderr.splitlines()) == 1 for r in (escaped, stray, missing))


def test_a_single_seat_run_scores_its_document_and_nothing_for_the_duel(tmp_path: Path) -> None:
    done = score(single_run_out(tmp_path), "--format", "json")
    assert done.returncode == 0, done.stderr
    total = json.loads(done.stdout)["total"]
    assert total["recall"] == {"duel": None, "openings": None, "single": 0.0}
    assert (total["runs"], total["consensus"], total["rounds_mean"]) == (1, 0, None)


def test_the_html_page_escapes_what_records_say_and_loads_nothing(document: CorpusDocument) -> None:
    turns = ABANDONED_FIX
    run = RunRecord(
        document="lease-rfc",
        condition="duel",
        run=1,
        outcome="ACCEPTED_CONSENSUS",
        original=ORIGINAL,
        revised=None,
        turns=turns,
        reasons={3: '<script>alert("x")</script>'},
    )
    scored = score_bench([run], {"lease-rfc": document})
    page = render_score(scored, "html", out="out", corpus="corpus")
    assert "<script" not in page and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert (
        "Content-Security-Policy" in page and "default-src 'none'" in page and not re.search(r"src=|href=|url\(", page)
    )
    markdown = render_score(scored, "md", out="out", corpus="corpus")
    assert "&lt;script>alert" in markdown and "<script" not in markdown


# -- the provisional label, per run --------------------------------------------------------------------------------


def closed_duel(run: Path, served: dict[str, str]) -> str:
    """A duel of two turns in ``run``'s debate dir, through the service: each seat's model, and the model its API
    said answered (``served``), then abandoned, as a run cut short leaves it; the record's path within ``run``."""
    source = run / "design.md"
    source.write_text(SOURCE, encoding="utf-8")
    service = DuelService(run / "debates")
    players = [
        helpers.join(service, source, f"Seat {n}", harness="duel", model_id=model) for n, model in enumerate(served, 1)
    ]
    path = ""
    for n, (player, (model, answered)) in enumerate(zip(players, served.items(), strict=True), 1):
        asked = Provenance(provider="openai", requested_model=model, served_model=answered, reasoning=None)
        service.record_usage(player.seat, n, Usage(requests=1), provenance=asked)
        lease = claim(service, player)
        path = service.append(player.seat, lease, make_turn(n, f"Seat {n}", "duel", model), release=True).debate_path
    service.abandon(Path(path).stem, reason="the bench stopped it")
    return str(Path(path).relative_to(run))


def provisional_out(tmp_path: Path) -> Path:
    """Three runs of one document: two claude seats, a claude and a gpt, and a record closed before the label
    whose gpt seat a claude answered for (its ``result.json`` says so)."""
    corpus = write_corpus(tmp_path / "corpus", ("lease-rfc",))
    out = tmp_path / "out"
    out.mkdir()
    (out / "bench.json").write_text(json.dumps({"corpus": str(corpus)}), encoding="utf-8")
    lineups = {
        1: {"claude-x": "claude-x", "claude-y": "claude-y"},
        2: {"claude-x": "claude-x", "gpt-x": "gpt-x"},
        3: {"claude-x": "claude-x", "gpt-x": "claude-y"},
    }
    for k, served in lineups.items():
        run = out / "lease-rfc" / f"duel-{k}"
        run.mkdir(parents=True)
        record = closed_duel(run, served)
        if k == 3:  # as a close before the label wrote it: no Provisional row
            text = (run / record).read_text(encoding="utf-8")
            (run / record).write_text(re.sub(r"\| Provisional \|.*\n", "", text), encoding="utf-8")
        seats = [
            {"seat": f"seat {i}", "model": m, "served": s, "tokens_in": 100, "tokens_out": 10, "usd": 0.01}
            for i, (m, s) in enumerate(served.items(), 1)
        ]
        result = {
            "document": "lease-rfc", "condition": "duel", "run": k, "outcome": "INVALIDATED", "record": record,
            "revised": None, "seats": seats, "seconds": 1.0, "stopped": None, "error": None,
        }  # fmt: skip
        (run / "result.json").write_text(json.dumps(result), encoding="utf-8")
    return out


def test_a_run_whose_seats_were_all_of_one_family_is_marked_provisional_in_every_format(tmp_path: Path) -> None:
    out = provisional_out(tmp_path)
    assert "| Provisional | every seat a claude model (claude-x, claude-y) |" in next(
        (out / "lease-rfc" / "duel-1" / "debates").glob("*.md")
    ).read_text(encoding="utf-8")
    done = score(out, "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    labels = {run["run"]: run["provisional"] for run in data["documents"][0]["runs"]}
    assert labels == {
        1: {"family": "claude", "models": ["claude-x", "claude-y"]},  # as the close recorded it
        2: None,  # Claude against GPT
        3: {"family": "claude", "models": ["claude-x", "claude-y"]},  # derived: a claude answered the gpt seat
    }
    assert data["total"]["provisional"] == 2
    markdown = score(out).stdout
    # (a dollar sign in a cell is followed by a zero-width space, as the report writes it: no maths in GitHub)
    assert (
        "| lease-rfc | duel-1 | INVALIDATED | 0% | 0% | 1 | $\u200b0.0200 | ⚠ claude (claude-x, claude-y) |" in markdown
    )
    assert "| lease-rfc | duel-2 | INVALIDATED | 0% | 0% | 1 | $\u200b0.0200 | no |" in markdown
    assert "2 of 3 duels provisional (every seat of one model family)" in markdown
    page = tmp_path / "score.html"
    assert score(out, "--format", "html", "-o", str(page)).returncode == 0
    assert "<th>provisional</th>" in page.read_text() and "<td>⚠ claude (claude-x, claude-y)</td>" in page.read_text()


def test_a_single_seat_run_is_never_provisional(tmp_path: Path) -> None:
    data = json.loads(score(single_run_out(tmp_path), "--format", "json").stdout)
    assert data["documents"][0]["runs"][0]["provisional"] is None and data["total"]["provisional"] == 0
    assert (
        "| lease-rfc | single-1 | — | 0% | n/a | 1 | $\u200b0.0000 | n/a |"
        in score(single_run_out(tmp_path / "again")).stdout
    )
