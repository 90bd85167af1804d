"""A judged verdict (docs/protocol.md section 11, "The judged verdict"): `duel report --assess` ends with each
assessor's verdict, a named side wins, a draw or void, the turns it rests on checked; void forced over an
invalidated record or a fabricated source; labelled as a judgement, and never a change to the outcome.

The assessors are the fake Anthropic and OpenAI servers (tests/fake_models.py) behind the real SDKs; the
fabricated source is a dead link on the fake web server (tests/fake_web.py), judged by `duel verify`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from test_chair_synthesis import closing
from test_report_assess import ASSESSMENT, CONSENSUS, DEBATES, answering, assess, copy_artifact, env_for

from rp1_duel.record.verification import dumps, sidecar_path
from rp1_duel.review.assessment import check_references
from rp1_duel.review.report_files import read_report
from rp1_duel.review.report_html import render_html
from rp1_duel.review.report_markdown import render_markdown
from rp1_duel.verify import Fetcher, FetchPolicy
from rp1_duel.verify.run import Verifier, verify_artifact

from fake_models import FakeAnthropicServer, FakeOpenAIServer
from helpers import duel_citing

INVALIDATED = DEBATES / "2026-11-24-partition-handling.md"
CLAUDE, GPT = "anthropic:claude-sonnet-5-5", "openai:gpt-6.1-sol"
QUOTE = "A configurable duration with fifteen minutes as the default"  # turn 3 of CONSENSUS


def with_sidecar(path: Path, folder: Path) -> Path:
    """The fixture and its verification sidecar (no citation fabricated), copied."""
    shutil.copy(sidecar_path(path), folder / sidecar_path(path).name)
    return copy_artifact(path, folder)


def verdicts(path: Path) -> list[tuple[str, str, int | None, tuple[str, ...]]]:
    judged = read_report(path, env={}).judged_verdict
    assert judged is not None
    return [(v.model, v.verdict, v.seat, v.void_reasons) for v in judged.verdicts]


def test_a_win_names_the_seat_and_the_turns_it_rests_on_checked(tmp_path):
    path = with_sidecar(CONSENSUS, tmp_path)
    artifact = path.read_bytes()
    answer = f'{ASSESSMENT}\n\nVerdict: seat 1 wins. Rests on: Turn 3 "{QUOTE}", Turn 5.'
    with FakeAnthropicServer(responder=answering(answer)) as claude:
        assess(path, env_for(claude))
    assert "End with your verdict" in json.dumps(claude.requests[-1]["body"])
    report = read_report(path, env={})
    judged = report.judged_verdict
    assert judged is not None and judged.label == (
        "Judged verdict (a model's judgement; the outcome stays ACCEPTED_CONSENSUS)"
    )
    [verdict] = judged.verdicts
    assert (verdict.verdict, verdict.seat, verdict.given, verdict.problem, judged.agreement) == (
        "winner",
        1,
        "winner",
        None,
        None,
    )
    assert [(r.text, r.found) for r in verdict.rests_on] == [(f'Turn 3 "{QUOTE}"', True), ("Turn 5", True)]
    md = render_markdown(report)
    assert "### Judged verdict (a model's judgement; the outcome stays ACCEPTED_CONSENSUS)" in md
    assert f'- **{CLAUDE}**: Claude (seat 1) wins; rests on Turn 3 "{QUOTE}", Turn 5.' in md
    page = render_html(report)
    assert "<h2>Judged verdict (a model&#x27;s judgement; the outcome stays ACCEPTED_CONSENSUS)</h2>" in page
    assert f"<li><code>{CLAUDE}</code>: <strong>Claude (seat 1) wins</strong>; rests on Turn 3" in page
    data = report.to_dict()["judged_verdict"]
    assert (data["outcome"], data["agreement"], data["verdicts"][0]["verdict"], data["verdicts"][0]["seat"]) == (
        "ACCEPTED_CONSENSUS",
        None,
        "winner",
        1,
    )
    # A judgement: the outcome and the artifact stay as they were.
    assert report.outcome.outcome == "ACCEPTED_CONSENSUS" and path.read_bytes() == artifact


def test_a_draw_rests_on_the_turns_its_line_names(tmp_path):
    path = with_sidecar(CONSENSUS, tmp_path)
    with FakeOpenAIServer(responder=answering(f"{ASSESSMENT}\n\n**Verdict:** draw. Rests on: Turns 4 and 5.")) as gpt:
        assess(path, env_for(gpt=gpt))
    assert verdicts(path) == [(GPT, "draw", None, ())]
    [verdict] = read_report(path, env={}).judged_verdict.verdicts  # type: ignore[union-attr]
    assert [r.turn for r in verdict.rests_on] == [4, 5]
    assert f"- **{GPT}**: a draw; rests on Turns 4, 5." in render_markdown(read_report(path, env={}))


def test_two_assessors_that_disagree_are_both_shown(tmp_path):
    path = with_sidecar(CONSENSUS, tmp_path)
    with (
        FakeAnthropicServer(responder=answering(f"{ASSESSMENT}\n\nVerdict: seat 1 wins. Rests on: Turn 5.")) as claude,
        FakeOpenAIServer(responder=answering("GPT argued better.\n\nVerdict: seat 2 wins. Rests on: Turn 9.")) as gpt,
    ):
        assess(path, env_for(claude, gpt))
    assert verdicts(path) == [(CLAUDE, "winner", 1, ()), (GPT, "winner", 2, ())]
    report = read_report(path, env={})
    assert report.judged_verdict is not None and report.judged_verdict.agreement == "disagree"
    md = render_markdown(report)
    assert f"- **{CLAUDE}**: Claude (seat 1) wins; rests on Turn 5." in md
    assert f"- **{GPT}**: GPT (seat 2) wins; rests on Turn 9 [not found: the record has no turn 9]." in md
    assert (
        "_The 2 assessors disagree: each verdict is shown, labelled by its assessor; none changes the outcome._" in md
    )
    assert report.to_dict()["judged_verdict"]["agreement"] == "disagree"


def test_two_assessors_that_agree_say_so(tmp_path):
    path = with_sidecar(CONSENSUS, tmp_path)
    line = "\n\nVerdict: seat 2 wins. Rests on: Turn 4."
    with (
        FakeAnthropicServer(responder=answering(ASSESSMENT + line)) as claude,
        FakeOpenAIServer(responder=answering("GPT's view." + line)) as gpt,
    ):
        assess(path, env_for(claude, gpt))
    assert "_The 2 assessors agree: GPT (seat 2) wins._" in render_markdown(read_report(path, env={}))


def test_a_verdict_over_a_fabricated_source_is_void_whatever_the_model_said(service, source, web, tmp_path):
    """Turn 3 cites a dead link (`duel verify`: fabricated); turn 4 cites turn 3 as support. A win resting on
    turn 3, and a draw resting on turn 4, are both void."""
    dead = web.url("/missing")
    path = duel_citing(service, source, {}, {}, {"citing": (dead,), "stance": "CONVERGING"}, {"stance": "CONVERGING"})
    done = verify_artifact(path, Verifier(Fetcher(FetchPolicy(allow_private_hosts=True))))
    done.sidecar_path.write_bytes(dumps(done.sidecar))
    assert [(c.citation.turn, c.verdict) for c in done.sidecar.citations if c.citation.url == dead] == [
        (3, "fabricated")
    ]
    with (
        FakeAnthropicServer(responder=answering("Alice cited well.\n\nVerdict: seat 1 wins. Rests on: Turn 3.")) as a,
        FakeOpenAIServer(responder=answering("Even.\n\nVerdict: draw. Rests on: Turn 4.")) as b,
    ):
        assess(path, env_for(a, b))
    assert verdicts(path) == [
        (
            CLAUDE,
            "void",
            None,
            (
                f"the verdict rests on turn 3, which holds a fabricated citation: {dead}",
                f"the winner's final turn is turn 3, which holds a fabricated citation: {dead}",
            ),
        ),
        (GPT, "void", None, (f"the verdict rests on turn 4, which rests on turn 3's fabricated citation: {dead}",)),
    ]
    report = read_report(path, env={})
    md = render_markdown(report)
    assert (
        f"- **{CLAUDE}**: void, forced: the verdict rests on turn 3, which holds a fabricated citation: "
        f"{dead}; the winner's final turn is turn 3, which holds a fabricated citation: {dead} "
        "(the model said: Alice (seat 1) wins); rests on Turn 3." in md
    )
    assert "_The 2 assessors agree: void._" in md
    data = report.to_dict()["judged_verdict"]["verdicts"][0]
    assert (data["verdict"], data["given"], data["given_seat"], data["seat"]) == ("void", "winner", 1, None)
    assert report.outcome.outcome is None  # the duel is open: still no outcome, whatever the verdict


def test_an_invalidated_record_voids_every_verdict(tmp_path):
    path = copy_artifact(INVALIDATED, tmp_path)
    with FakeAnthropicServer(responder=answering("Claude led.\n\nVerdict: seat 1 wins. Rests on: Turn 1.")) as claude:
        assess(path, env_for(claude))
    # The fixture's close summary holds raw HTML too: `duel validate` fails it, a reason of its own.
    reasons = ("the duel closed INVALIDATED", "the record does not validate")
    assert verdicts(path) == [(CLAUDE, "void", None, reasons)]
    assert "(a model's judgement; the outcome stays INVALIDATED)" in render_markdown(read_report(path, env={}))


def test_a_record_changed_after_the_assessment_voids_its_verdict(tmp_path):
    path = with_sidecar(CONSENSUS, tmp_path)
    with FakeAnthropicServer(responder=answering("Claude led.\n\nVerdict: seat 1 wins. Rests on: Turn 5.")) as claude:
        assess(path, env_for(claude))
    text = path.read_text()
    path.write_text(text.replace(QUOTE, QUOTE.replace("fifteen", "fifty"), 1))  # the chain head stays as recorded
    assert verdicts(path) == [(CLAUDE, "void", None, ("the record does not validate",))]


def test_an_answer_without_a_readable_verdict_says_why(tmp_path):
    path = with_sidecar(CONSENSUS, tmp_path)
    with (
        FakeAnthropicServer(responder=answering(ASSESSMENT)) as claude,
        FakeOpenAIServer(responder=answering("Fine.\n\nVerdict: seat 7 wins. Rests on: Turn 1.")) as gpt,
    ):
        assess(path, env_for(claude, gpt))
    judged = read_report(path, env={}).judged_verdict
    assert judged is not None
    assert [(v.verdict, v.problem) for v in judged.verdicts] == [
        ("none", "the answer ends with no `Verdict:` line"),
        ("none", "the verdict names seat 7, which is not a panel seat that wrote a turn"),
    ]


def test_a_report_without_an_assessment_has_no_verdict(tmp_path):
    path = copy_artifact(CONSENSUS, tmp_path)
    report = read_report(path, env={})
    assert report.judged_verdict is None and "judged_verdict" not in report.to_dict()
    assert "Judged verdict" not in render_markdown(report)


def test_turn_references_in_a_chaired_duel_count_from_turn_0():
    turns = closing("ACCEPTING_CONSENSUS", "DISSENTING", "ACCEPTING_CONSENSUS").turns  # turns 0-7
    checked = check_references('Turn 0 "Are fifteen-minute leases", Turn 7, Turn 8', turns, first=0)
    assert [(r.turn, r.found) for r in checked] == [(0, True), (7, True), (8, False)]
