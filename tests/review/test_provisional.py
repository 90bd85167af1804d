"""A duel whose seats were all of one model family, by the models the API said served them, is provisional:
the report says so near its headline and `duel stats` counts it (docs/protocol.md section 11, "Provisional").

The family rule is a pure function, checked on a table; duels are played through the lock service with their
usage events' provenance recorded by hand, and once through the real SDKs against the fake servers, one of which
answers as a model of the other's family (``serve_as``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_participant import claude_env, finish, gpt_env, start, wait_for_seat

from rp1_duel.coordination import DuelService, Provenance, Usage
from rp1_duel.record import Provisional, model_family, provisional, seat_models, validate_file
from rp1_duel.review.report.github import render_github
from rp1_duel.review.report_files import read_report
from rp1_duel.review.report_html import render_html
from rp1_duel.review.report_markdown import render_markdown
from rp1_duel.review.stats import read_stats

from fake_debater import debater
from helpers import DUELISTS, claim, join, make_turn

LINE = "and debaters of one model family tend to agree with each other: read the outcome as one model's view."


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-opus-5", "claude"),
        ("claude-sonnet-4-5-20250929", "claude"),
        ("anthropic/claude-3.5-sonnet", "claude"),  # a router's vendor prefix
        ("us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude"),  # a cloud's
        ("gpt-6.1-sol", "gpt"),
        ("GPT-4o", "gpt"),
        ("chatgpt-4o-latest", "gpt"),
        ("o1", "gpt"),
        ("o3-mini", "gpt"),
        ("o4-mini-2025-04-16", "gpt"),
        ("openai/gpt-oss-120b", "gpt"),
        ("gemini-2.5-pro", "gemini"),
        ("models/gemini-1.5-flash", "gemini"),
        ("gemma-3-27b-it", "gemma"),
        ("llama3.1:8b", "llama"),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama"),
        ("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", "llama"),
        ("mistral-large-latest", "mistral"),
        ("mixtral-8x7b", "mistral"),
        ("codestral-2501", "mistral"),
        ("qwen2.5-coder:32b", "qwen"),
        ("Qwen/QwQ-32B", "qwen"),
        ("deepseek-r1", "deepseek"),
        ("phi-4", "phi"),
        ("phi3:mini", "phi"),
        ("grok-4", "grok"),
        ("command-r-plus", "command"),
        ("olmo-2-13b", "olmo-2-13b"),  # no known family: its own id
        ("carol-1", "carol-1"),
        ("proto1", "proto1"),  # a family's name counts only at the start or after - / . : _
        ("metaphor-3", "metaphor-3"),
    ],
)
def test_a_models_family_is_read_off_its_id_and_an_unknown_id_is_its_own(model, family):
    assert model_family(model) == family


@pytest.mark.parametrize(
    ("models", "expected"),
    [
        (
            {1: ("claude-opus-5",), 2: ("claude-sonnet-5-5",)},
            Provisional("claude", ("claude-opus-5", "claude-sonnet-5-5")),
        ),
        ({1: ("claude-opus-5",), 2: ("gpt-6.1-sol",)}, None),
        ({1: ("gpt-6-sol", "claude-opus-5"), 2: ("claude-opus-5",)}, None),  # a seat served by two families
        ({1: ("olmo-2",), 2: ("olmo-2",)}, Provisional("olmo-2", ("olmo-2",))),  # one unknown id twice: one family
        ({1: ("olmo-2",), 2: ("carol-1",)}, None),  # two unknown ids: two families
        ({1: ("llama3.1:8b",), 2: ("llama3.1:8b",), 0: ("qwen2.5",)}, None),  # a chair is a seat too
        ({1: ("human",), 2: ("human",)}, None),  # people are no model family
        ({1: ("scripted:ada",), 2: ("scripted:ada",)}, None),
        ({1: ("claude-opus-5",)}, None),  # one seat: no debate to label
        ({1: ("claude-opus-5",), 2: ()}, None),
    ],
)
def test_a_duel_is_provisional_when_every_seat_is_a_model_of_one_family(models, expected):
    assert provisional(models) == expected


def test_a_seats_models_are_those_served_else_the_one_the_record_names():
    served = [(1, "claude-sonnet-5-5-20261001"), (2, None), (1, "claude-sonnet-5-5-20261001"), (1, "claude-x")]
    assert seat_models({1: "claude-sonnet-5-5", 2: "gpt-x"}, served) == {
        1: ("claude-sonnet-5-5-20261001", "claude-x"),
        2: ("gpt-x",),
    }


def two_turns(service: DuelService, source: Path, served: dict[int, str | None]) -> Path:
    """Alice (claude-x) and Bob (gpt-x) write a turn each, its usage event saying the API answered as
    ``served[seat]``; the artifact."""
    players = {seat: join(service, source, name, harness=h, model_id=m) for seat, (name, h, m) in DUELISTS.items()}
    path = ""
    for number, seat in ((1, 1), (2, 2)):
        model = DUELISTS[seat][2]
        asked = Provenance(provider="openai", requested_model=model, served_model=served[seat], reasoning=None)
        service.record_usage(players[seat].seat, number, Usage(input_tokens=10, requests=1), provenance=asked)
        lease = claim(service, players[seat])
        path = service.append(players[seat].seat, lease, make_turn(number, *DUELISTS[seat]), release=True).debate_path
    return Path(path)


def test_the_report_labels_a_duel_served_by_one_family_near_its_headline_in_every_format(service, source):
    path = two_turns(service, source, {1: "claude-x", 2: "claude-y"})  # Bob asked for gpt-x; a claude answered
    report = read_report(path, env={})
    assert report.provisional == Provisional("claude", ("claude-x", "claude-y"))
    top = render_markdown(report).split("### Decision", 1)[0]
    assert f"**Provisional:** every seat is a claude model (claude-x, claude-y), {LINE}" in top
    comment = render_github(report, str(path)).split("<details>", 1)[0]  # the open part of a PR comment
    assert f"**Provisional:** every seat is a claude model (claude-x, claude-y), {LINE}" in comment
    page = render_html(report).split("<h2>Decision</h2>", 1)[0]
    assert "<strong>Provisional:</strong> every seat is a claude model (claude-x, claude-y)" in page
    data = json.loads(json.dumps(report.to_dict()))
    assert data["provisional"] == {"family": "claude", "models": ["claude-x", "claude-y"]}
    assert list(data).index("provisional") == list(data).index("intact") + 1


def test_a_duel_of_two_families_is_not_labelled_and_its_json_reads_as_before(service, source):
    report = read_report(two_turns(service, source, {1: "claude-x", 2: None}), env={})  # Bob's API did not say
    assert report.provisional is None
    assert "Provisional" not in render_markdown(report) and "provisional" not in report.to_dict()


def test_duel_stats_counts_the_provisional_duels_of_each_outcome(service, source, debate_dir):
    two_turns(service, source, {1: "claude-x", 2: "claude-y"})
    stats = read_stats(debate_dir, env={})
    assert [(row.outcome, row.duels, row.provisional) for row in stats.outcomes] == [("open", 1, 1)]
    assert stats.to_dict()["duels"][0]["provisional"] is True


ROW = "| Provisional | every seat a claude model (claude-x, claude-y) |"
DUELISTS_CLAUDE = (("Alice", "claude-opus-5"), ("Bob", "claude-sonnet-5-5"))


def closed(service: DuelService, source: Path, served: dict[int, str | None]) -> Path:
    """:func:`two_turns`, then abandoned (closed ``INVALIDATED``) by the debate dir's owner; the artifact."""
    path = two_turns(service, source, served)
    service.abandon(path.stem, reason="the test ends it here")
    return path


def test_the_close_writes_the_label_into_the_terminal_conclusion_and_the_report_reads_it_there(service, source):
    path = closed(service, source, {1: "claude-x", 2: "claude-y"})
    text = path.read_text()
    rows = [line.split(" | ")[0] for line in text.split("## Terminal Conclusion", 1)[1].splitlines() if line]
    assert rows == [
        "| Field",
        "|---|---|",
        "| Outcome",
        "| Closed at",
        "| Candidate convergence",
        "| Reason",
        "| Provisional",
    ]
    assert ROW in text.splitlines()
    assert validate_file(path).valid
    # The report shows the recorded label, not one derived again: an edit the rule allows is what it reads.
    path.write_text(text.replace(ROW, ROW.replace("claude-y", "claude-z")))
    assert read_report(path, env={}).provisional == Provisional("claude", ("claude-x", "claude-z"))


def test_a_duel_of_two_families_closes_without_the_label(service, source):
    path = closed(service, source, {1: "claude-x", 2: None})  # Bob asked for gpt-x; his API did not say
    assert "Provisional" not in path.read_text()
    assert read_report(path, env={}).provisional is None


def test_a_record_closed_before_the_label_still_gets_it_derived_in_the_report(service, source):
    path = closed(service, source, {1: "claude-x", 2: "claude-y"})
    path.write_text(path.read_text().replace(ROW + "\n", ""))  # as a close before the label wrote it
    assert "Provisional" not in path.read_text()
    assert validate_file(path).valid
    assert read_report(path, env={}).provisional == Provisional("claude", ("claude-x", "claude-y"))


def test_a_close_whose_event_log_cannot_be_read_still_closes_labelled_by_the_models_it_names(
    service, source, debate_dir
):
    players = [join(service, source, name, harness="duel", model_id=model) for name, model in DUELISTS_CLAUDE]
    log = next(debate_dir.glob(".duel/duels/*/events.jsonl"))
    log.write_bytes(b"{not json\n" + log.read_bytes()[10:])  # the state still counts its bytes
    service.abandon(players[0].duel_id, reason="the test ends it here")
    text = next(debate_dir.glob("*.md")).read_text()
    assert "| Outcome | INVALIDATED |" in text
    assert "| Provisional | every seat a claude model (claude-opus-5, claude-sonnet-5-5) |" in text


@pytest.mark.parametrize(
    ("row", "why"),
    [
        ("every seat a gpt model (claude-x, claude-y)", "its models are not gpt models, sorted once each"),
        ("every seat a claude model (claude-y, claude-x)", "its models are not claude models, sorted once each"),
        ("all claude", "it does not read as `every seat a FAMILY model (MODELS)`"),
    ],
)
def test_validate_holds_a_recorded_label_to_the_rule(service, source, row, why):
    path = closed(service, source, {1: "claude-x", 2: "claude-y"})
    path.write_text(path.read_text().replace(ROW, f"| Provisional | {row} |"))
    report = validate_file(path)
    assert [(p.code, p.message) for p in report.problems] == [
        ("PROVISIONAL_MISMATCH", f"the Terminal Conclusion's Provisional row is wrong: {why}")
    ]


def test_validate_refuses_a_label_on_a_duel_with_a_person_in_a_seat(service, source):
    path = closed(service, source, {1: "claude-x", 2: "claude-y"})
    path.write_text(path.read_text().replace('model_id: "gpt-x"', 'model_id: "human"'))
    problems = [(p.code, p.message) for p in validate_file(path).problems]
    assert (
        "PROVISIONAL_MISMATCH",
        "the Terminal Conclusion's Provisional row is wrong: the duel does not have two seats or more, each a model",
    ) in problems


@pytest.mark.slow
def test_a_duel_whose_apis_answered_as_one_family_is_provisional_in_the_report_and_stats(
    source, debate_dir, anthropic_server, openai_server, tmp_path
):
    anthropic_server.responder = openai_server.responder = debater
    openai_server.serve_as = "claude-sonnet-5-5"  # GPT's seat is answered by a claude behind an OpenAI-style API
    claude = start(source, debate_dir, "--model", "claude-x", "--max-turns", "4", env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    gpt = start(source, debate_dir, "--model", "gpt-x", env=gpt_env(openai_server))
    (code_c, result_c, err_c), (code_g, _, _) = finish(claude), finish(gpt)
    assert (code_c, code_g) == (0, 0), err_c
    report = read_report(result_c["debate_path"], env={})
    assert report.provisional == Provisional("claude", ("claude-sonnet-5-5", "claude-x"))
    row = "| Provisional | every seat a claude model (claude-sonnet-5-5, claude-x) |"
    assert row in Path(result_c["debate_path"]).read_text().splitlines()  # the close wrote it
    stats = subprocess.run(
        [sys.executable, "-m", "rp1_duel", "stats", str(debate_dir)], capture_output=True, text=True, cwd=tmp_path
    )
    lines = stats.stdout.splitlines()
    assert stats.returncode == 0, stats.stderr
    assert lines[2].split()[:3] == ["OUTCOME", "DUELS", "PROVISIONAL"]
    assert lines[3].split()[:3] == ["ACCEPTED_CONSENSUS", "1", "1"]


@pytest.mark.slow
def test_a_duel_whose_apis_answered_as_two_families_closes_without_the_label(
    source, debate_dir, anthropic_server, openai_server
):
    anthropic_server.responder = openai_server.responder = debater
    claude = start(source, debate_dir, "--model", "claude-x", "--max-turns", "4", env=claude_env(anthropic_server))
    wait_for_seat(debate_dir, source)
    gpt = start(source, debate_dir, "--model", "gpt-x", env=gpt_env(openai_server))
    (code_c, result_c, err_c), (code_g, _, _) = finish(claude), finish(gpt)
    assert (code_c, code_g) == (0, 0), err_c
    text = Path(result_c["debate_path"]).read_text()
    assert "| Outcome | ACCEPTED_CONSENSUS |" in text and "Provisional" not in text
    assert read_report(result_c["debate_path"], env={}).provisional is None
