"""Source discipline (issue 24, items 5 and 6): figures on the cited page and in the source, at most five
URLs an item, and nothing new in a chaired duel's closing round (docs/protocol.md sections 7 and 10)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_chair import ANSWERS, PANEL, SCHEDULE, addressing, brief, claimant_of, pre_closing

from rp1_duel.errors import DuelError
from rp1_duel.record import GENESIS, History, turn_block, turn_citations, validate_file
from rp1_duel.record.verification import dumps, load, sidecar_path
from rp1_duel.turns import SourceDocument, TurnContext, normalize_turn_text, parse_turn, validate_turn
from rp1_duel.verify import Fetcher, FetchPolicy, PageCache
from rp1_duel.verify.run import Verifier, verify_artifact
from rp1_duel.vocabulary import ErrorCode, RecordCode, RuleCode, Verdict

from helpers import SOURCE, claim, duel_citing, join, make_turn

ALICE = ("Alice", "claude-code", "claude-x")
MISQUOTED = "The service renewed 1,250 leases in 2023, for $1.2 million."  # the page says 1200
QUOTED = "The service renewed 1,200 leases, 40% of them within 15 minutes, for $1,200,000."
GUESSED = "[CONJECTURE] The service renewed 1,250 leases."


def turn_one(**extra) -> str:
    return make_turn(1, *ALICE, **extra)


def alice_context(**context) -> TurnContext:
    """Alice's first turn's context, checked against SOURCE."""
    name, harness, model = ALICE
    source = SourceDocument(path="design.md", text=SOURCE)
    return TurnContext(turn_number=1, participant_name=name, harness=harness, model_id=model, source=source, **context)


def codes(text: str, **context) -> list[str]:
    ctx = alice_context(**context)
    return [violation.code for violation in validate_turn(text, ctx).violations]


def verify(artifact, tmp_path):
    done = verify_artifact(artifact, Verifier(Fetcher(FetchPolicy(allow_private_hosts=True)), (), PageCache(tmp_path)))
    if done.changed:
        done.sidecar_path.write_bytes(dumps(done.sidecar))
    return done


def url_entry(done, turn: int = 1):
    return next(entry for entry in done.sidecar.citations if entry.citation.url and entry.citation.turn == turn)


# -- figures on the page (duel verify) ----------------------------------------------------------------------


@pytest.mark.slow
def test_a_figure_misquoted_by_one_digit_makes_the_citation_unreliable_naming_it(service, source, web, tmp_path):
    artifact = duel_citing(service, source, {"counterclaim": MISQUOTED, "citing": (web.url("/figures"),)})
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    verified = subprocess.run(
        [sys.executable, "-m", "rp1_duel", "verify", "--allow-private-hosts", "--json", str(artifact)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert verified.returncode == 0, verified.stderr  # unreliable is not fabricated
    cited = next(c for c in json.loads(verified.stdout)["artifacts"][0]["citations"] if c["kind"] == "url")
    assert (cited["verdict"], cited["confidence"]) == (Verdict.UNRELIABLE, "high")
    assert cited["reason"] == "the page does not state the claim's figure 1,250"
    assert cited["missing_figures"] == ["1,250"] and cited["votes"] == []
    checked = subprocess.run(
        [sys.executable, "-m", "rp1_duel", "validate", str(artifact)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0 and "verification: current" in checked.stdout, checked.stdout


def test_figures_in_other_spellings_are_on_the_page(service, source, web, tmp_path):
    artifact = duel_citing(service, source, {"counterclaim": QUOTED, "citing": (web.url("/figures"),)})
    # `1,200` for 1200, `40%` for 40 percent, `$1,200,000` for $1.2 million
    entry = url_entry(verify(artifact, tmp_path))
    assert (entry.verdict, entry.missing_figures) == (Verdict.UNJUDGED, ())


def test_a_conjecture_is_not_checked_for_figures(service, source, web, tmp_path):
    artifact = duel_citing(service, source, {"counterclaim": GUESSED, "citing": (web.url("/figures"),)})
    assert url_entry(verify(artifact, tmp_path)).verdict == Verdict.UNJUDGED


def test_the_position_that_stance_revision_support_backs_is_not_checked_for_figures(service, source, web, tmp_path):
    text = turn_one(position_extra=" We renewed 9,999 leases.").replace(
        "- Principle: a first stance needs no revision support\n", f"- {web.url('/figures')}\n"
    )
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    join(service, source, "Bob", harness="codex", model_id="gpt-x")
    artifact = Path(service.append(alice.seat, claim(service, alice), text, release=True).debate_path)
    entry = url_entry(verify(artifact, tmp_path))
    assert (entry.citation.section, entry.verdict) == ("Stance Revision Support", Verdict.UNJUDGED)


def test_a_sidecar_naming_a_figure_the_claim_does_not_state_does_not_match(service, source, web, tmp_path):
    artifact = duel_citing(service, source, {"counterclaim": MISQUOTED, "citing": (web.url("/figures"),)})
    verify(artifact, tmp_path)
    assert validate_file(artifact, require_verified=True).valid
    path = sidecar_path(artifact)
    data = json.loads(path.read_text())
    entry = next(c for c in data["citations"] if c.get("missing_figures"))
    entry["missing_figures"] = ["7"]
    path.write_text(json.dumps(data))
    assert [p.code for p in validate_file(artifact).problems] == [RecordCode.VERIFICATION_MISMATCH]
    entry.pop("missing_figures")  # `unreliable` with no vote and no missing figure: nothing bears it out
    path.write_text(json.dumps(data))
    assert [p.code for p in validate_file(artifact).problems] == [RecordCode.VERIFICATION_MISMATCH]
    assert load(path).citations[1].missing_figures == ()


# -- figures in the source (live at append) ------------------------------------------------------------------


def test_a_figure_the_source_does_not_state_is_refused_at_append(service, source):
    with pytest.raises(DuelError) as refused:
        duel_citing(service, source, {"counterclaim": "Leases expire after 20 minutes unless refreshed."})
    assert refused.value.code == ErrorCode.TURN_INVALID
    violation = refused.value.details["violations"][0]
    assert violation["code"] == RuleCode.FIGURE_NOT_IN_SOURCE and "`20 minutes`" in violation["message"]
    assert (violation["line"], violation["section"]) == (5, "Counterpoints")


def test_the_sources_figure_in_digits_is_accepted():
    assert codes(turn_one(counterclaim="Leases expire after 15 minutes unless refreshed.")) == []  # `fifteen minutes`
    assert codes(turn_one(counterclaim="Leases expire after 20 minutes unless refreshed.")) == ["FIGURE_NOT_IN_SOURCE"]
    assert codes(turn_one(counterclaim="[CONJECTURE] Leases could expire after 20 minutes.")) == []


def test_a_figure_argued_from_a_principle_is_a_proposal_not_checked_against_the_source():
    proposed = turn_one(
        counterclaim="Leases should expire after 20 minutes.",
        citing=("Principle: a lease outlasts the slowest healthy refresh.",),
    )
    assert codes(proposed) == []


def test_a_claim_citing_a_page_too_has_its_figures_checked_on_the_page_not_the_source():
    cited = turn_one(counterclaim="Leases elsewhere expire after 20 minutes.", citing=("https://example.org/leases",))
    assert codes(cited) == []


def test_a_figure_from_an_earlier_turn_the_claim_cites_is_accepted():
    first = parse_turn(turn_one(counterclaim="[CONJECTURE] Leases could expire after 20 minutes."))
    said = "The 20 minutes Turn 1 proposes are too long."
    second = make_turn(2, "Bob", "codex", "gpt-x", counterclaim=said, citing=("Turn 1",))
    ctx = TurnContext(
        turn_number=2,
        participant_name="Bob",
        harness="codex",
        model_id="gpt-x",
        source=SourceDocument(path="design.md", text=SOURCE),
        prior_turns=[first],
    )
    assert validate_turn(second, ctx).ok  # its Support: `design.md#Failure handling` and `Turn 1`
    uncited = make_turn(2, "Bob", "codex", "gpt-x", counterclaim=said)
    assert [v.code for v in validate_turn(uncited, ctx).violations] == [RuleCode.FIGURE_NOT_IN_SOURCE]


# -- at most five URLs an item ----------------------------------------------------------------------------


def test_a_sixth_url_in_an_item_is_too_many_sources_and_is_not_verified(web, tmp_path):
    urls = tuple(web.url(f"/fact/{n}") for n in range(6))
    text = turn_one(citing=urls)
    ctx = alice_context()
    (violation,) = validate_turn(text, ctx).violations
    assert violation.code == RuleCode.TOO_MANY_SOURCES and violation.line == 14  # the sixth
    assert violation.message.endswith(f"the others are not verified ({urls[5]})")
    assert validate_turn(turn_one(citing=urls[:5]), ctx).ok

    block = turn_block(1, normalize_turn_text(text), GENESIS)
    citations = turn_citations(1, block, parse_turn(block.body), ("design.md",))
    assert [citation.url for citation in citations if citation.url] == list(urls[:5])
    Verifier(Fetcher(FetchPolicy(allow_private_hosts=True)), (), PageCache(tmp_path)).verify(citations)
    assert sorted(web.requests) == sorted(f"/fact/{n}" for n in range(5))


# -- nothing new in the closing round -------------------------------------------------------------------------


def closing_codes(closing_extra: str, opening_extra: str = "") -> list[tuple[str, int | None]]:
    """The violations of closing turn 5 of a chaired panel whose turn 1's Position ends with ``opening_extra``."""
    history = History(
        source=SourceDocument(path="design.md", text=SOURCE), source_names=("design.md",), schedule=SCHEDULE
    )
    for n in range(5):
        who = PANEL.get(SCHEDULE.speaker(n))
        text = (
            brief()
            if n == 0
            else pre_closing(n)
            if n == SCHEDULE.pre_closing
            else make_turn(n, *who, position_extra=opening_extra if n == 1 else "")  # type: ignore[misc]
        )
        report = validate_turn(text, history.context_for(claimant_of(n)))
        assert report.ok, (n, report.violations)
        history.accept(None, report.turn)  # type: ignore[arg-type]
    closing = make_turn(5, *PANEL[SCHEDULE.speaker(5)], position_extra=closing_extra)
    closing = closing.replace("**Agreements**\n", addressing(4, *ANSWERS) + "**Agreements**\n")
    report = validate_turn(closing, history.context_for(claimant_of(5)))
    return [(v.code, v.line) for v in report.violations]


def test_a_new_url_in_a_closing_turn_is_closing_new_material():
    assert closing_codes(" See https://example.org/new.") == [(RuleCode.CLOSING_NEW_MATERIAL, 3)]


def test_a_url_an_earlier_turn_cited_may_be_cited_again_in_the_closing():
    assert closing_codes(" See https://example.org/old.", opening_extra=" See https://example.org/old.") == []


def test_a_new_figure_in_a_closing_turn_is_closing_new_material():
    assert closing_codes(" Leases should last 16 minutes.") == [(RuleCode.CLOSING_NEW_MATERIAL, 3)]


def test_a_figure_of_the_source_or_an_earlier_turn_may_be_stated_in_the_closing():
    assert closing_codes(" Leases last 15 minutes.") == []  # the source: `fifteen minutes`
    assert closing_codes(" Renewals took 1,250 ms.", opening_extra=" Renewals took 1250 ms.") == []
