"""`duel report` leads with the decision (docs/protocol.md section 11, "The decision, first").

Duels are written through the lock service with scripted turns (tests/helpers.py), or taken from
the report fixtures (tests/data/reports/debates/); verification sidecars are written through the
verification module. Expected values are read off the turns by hand.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote

import pytest

from rp1_duel.coordination import DuelService
from rp1_duel.record import FrontMatter, RecordFile, artifact_citations, parse, verification
from rp1_duel.review.decision import RevisionView
from rp1_duel.review.report_files import read_report
from rp1_duel.review.report_html import CAUTION_COLOUR, OUTCOME_COLOURS, render_html
from rp1_duel.review.report_markdown import link, render_markdown
from rp1_duel.vocabulary import CitationKind, FetchFailure, Verdict

from helpers import (
    CONFIGURABLE_EXPIRY,
    DUEL,
    DUELISTS,
    agreed_on_an_edit,
    claim,
    join,
    make_turn,
    replace_edit,
    with_edits,
)

DEBATES = Path(__file__).parents[1] / "data" / "reports" / "debates"
CONSENSUS = DEBATES / "2026-11-24-lease-duration.md"
DISSENT = DEBATES / "2026-11-24-clock-skew-bound.md"
GREEN = OUTCOME_COLOURS["ACCEPTED_CONSENSUS"]
# Longer than the 160 characters a timeline headline keeps, and in two paragraphs: shown whole.
LONG_POSITION = (
    " It also follows that the floor must stay above three refresh intervals, that the grant response"
    " publishes the duration it chose, and that storage logs it beside each fencing token for post-mortems."
    "\n\nSecond paragraph: nothing here is cut."
)


def report_of(path: Path, **kwargs):
    return read_report(path, env={}, read_from=path.parent, **kwargs)


def scripted_duel(service: DuelService, source: Path, stances: list[str], edits=None) -> Path:
    """A duel through the service, closed when its turns reach an outcome: turn N is ``make_turn(N, …,
    stances[N-1])``, then ``edits[N]`` (text replaced)."""
    players = {
        seat: join(service, source, name, harness=harness, model_id=model)
        for seat, (name, harness, model) in DUELISTS.items()
    }
    path = ""
    for number, stance in enumerate(stances, start=1):
        seat = DUEL.speaker(number)
        name, harness, model = DUELISTS[seat]
        extra = LONG_POSITION if number >= len(stances) - 1 else ""
        text = make_turn(number, name, harness, model, stance, position_extra=extra)
        for old, new in (edits or {}).get(number, ()):
            assert old in text
            text = text.replace(old, new)
        player = players[seat]
        lease = claim(service, player)
        appended = service.append(player.seat, lease, text)
        service.release_lock(
            player.seat, lease, close=bool(appended.terminal_outcome), outcome=appended.terminal_outcome
        )
        path = appended.debate_path
    return Path(path)


def write_sidecar(artifact: Path, fabricated: set[str]) -> None:
    """A current sidecar, written through the verification module: each URL in ``fabricated`` a dead link."""
    record = RecordFile.read(artifact)
    assert record.front is not None
    history = record.history()
    blocks = record.parsed.blocks
    entries, fetches = [], {}
    for citation in artifact_citations(blocks, history.turns, history.source_names, first=history.schedule.first):
        if citation.kind == CitationKind.PRINCIPLE:
            entry = verification.CitationEntry(
                citation=citation, verdict=Verdict.NOT_CHECKABLE, confidence=None, reason="a principle"
            )
        elif citation.kind in (CitationKind.SOURCE, CitationKind.TURN):
            entry = verification.CitationEntry(
                citation=citation, verdict=Verdict.CHECKED_AT_APPEND, confidence=None, reason="checked at append"
            )
        else:
            assert citation.url in fabricated
            fetches[citation.url] = verification.FetchRecord(
                final_url=citation.url,
                status=404,
                content_type=None,
                content_sha256=None,
                bytes=None,
                fetched_at="2026-11-25T00:00:00Z",
                error=FetchFailure.HTTP_STATUS,
                detail="HTTP 404",
            )
            entry = verification.CitationEntry(
                citation=citation, verdict=Verdict.FABRICATED, confidence="high", reason="HTTP 404: no such page"
            )
        entries.append(entry)
    sidecar = verification.Sidecar(
        duel_id=record.front.duel_id,
        artifact=artifact.name,
        chain_head=blocks[-1].sha256,
        turns=len(blocks),
        verified_at="2026-11-25T00:00:00Z",
        voters=("v",),
        fetches=fetches,
    )
    verification.sidecar_path(artifact).write_bytes(verification.dumps(replace(sidecar, citations=tuple(entries))))


def badge_colour(html_text: str) -> str:
    found = re.search(r'<span class="outcome" style="background:(#[0-9a-f]{6})">', html_text)
    assert found
    return found.group(1)


# -- the decision ------------------------------------------------------------------------------------------


def test_a_consensus_leads_with_what_each_seat_accepted_in_full(service, source):
    stances = ["OPEN_TO_DEBATE"] * 2 + ["CONVERGING"] * 2 + ["ACCEPTING_CONSENSUS"] * 2
    path = scripted_duel(service, source, stances)
    report = report_of(path)
    decision = report.decision
    assert decision.agreed and (decision.valid, decision.validation_problems, decision.flagged) == (True, (), ())
    assert [(p.seat, p.turn, p.stance) for p in decision.positions] == [
        (1, 5, "ACCEPTING_CONSENSUS"),
        (2, 6, "ACCEPTING_CONSENSUS"),
    ]
    whole = "On fencing tokens (turn 5): monotonic fences let storage reject a stale writer outright." + LONG_POSITION
    assert decision.positions[0].text == whole and len(whole) > 160
    md = render_markdown(report)
    assert md.index("### Decision") < md.index("| Seat | Participant |")  # it leads
    assert "**Agreed.** Every seat's latest turn accepts the consensus." in md
    assert "> Second paragraph: nothing here is cut." in md and "`duel validate` passes." in md
    html_text = render_html(report)
    assert f'<div class="position">{whole}</div>' in html_text  # line breaks kept (white-space: pre-wrap)
    assert "<code>duel validate</code> passes." in html_text and badge_colour(html_text) == GREEN
    assert report.to_dict()["decision"]["positions"][0]["text"] == whole


def test_a_dissent_has_no_agreed_decision_and_shows_each_seats_last_position():
    report = report_of(DISSENT)
    assert not report.decision.agreed
    assert [(p.seat, p.turn, p.stance) for p in report.decision.positions] == [
        (1, 3, "DISSENTING"),
        (2, 4, "CONVERGING"),
    ]
    md = render_markdown(report)
    assert "**No agreed decision:** the duel ended DISSENT. Each seat's latest position, in full:" in md
    for position in report.decision.positions:
        assert f"> {position.text}" in md
    assert "_The URLs cited were not checked: no duel verify sidecar._" in md  # so nothing is flagged
    assert "No agreed decision:</strong> the duel ended DISSENT." in render_html(report)
    assert report.to_dict()["decision"]["agreed"] is False


def test_a_failing_validate_is_said_with_its_problems(tmp_path):
    invalidated = DEBATES / "2026-11-24-partition-handling.md"  # its summary was edited to hold raw HTML
    report = report_of(invalidated)
    assert report.decision.valid is False and {p.code for p in report.decision.validation_problems} == {"RAW_HTML"}
    md = render_markdown(report)
    assert "**`duel validate` fails (3 problems):**\n- `RAW_HTML` the Terminal Conclusion holds raw HTML" in md
    assert "⚠ the record does not validate" in md
    data = report.to_dict()["decision"]
    assert data["valid"] is False and data["validation_problems"][0]["code"] == "RAW_HTML"


# -- citations not to rely on ------------------------------------------------------------------------------


def test_a_fabricated_citation_is_listed_with_the_deciding_turns_resting_on_it(tmp_path):
    for found in DEBATES.glob(f"{CONSENSUS.stem}*"):
        shutil.copy(found, tmp_path / found.name)
    path = tmp_path / CONSENSUS.name
    side = verification.sidecar_path(path)
    url = "https://kubernetes.io/docs/concepts/architecture/leases/"
    sidecar = verification.load(side)
    dead = verification.FetchRecord(
        final_url=url,
        status=404,
        content_type=None,
        content_sha256=None,
        bytes=None,
        fetched_at="2026-11-24T09:30:00.000Z",
        error="http_status",
        detail="HTTP 404",
    )
    entries = tuple(
        replace(e, verdict="fabricated", confidence="high", reason="HTTP 404", votes=()) if e.citation.url == url else e
        for e in sidecar.citations
    )
    side.write_bytes(verification.dumps(replace(sidecar, fetches={**sidecar.fetches, url: dead}, citations=entries)))
    report = report_of(path)
    assert report.verification.status == "current"
    [flagged] = report.decision.flagged
    # Turn 3 holds it; turn 4 cites turn 3 as support, and turn 5 cites turn 4: both deciding turns rest on it.
    assert (flagged.turn, flagged.seat, flagged.url, flagged.verdict, flagged.deciding_turns) == (
        3,
        1,
        url,
        "fabricated",
        (4, 5),
    )
    html_text = render_html(report)
    assert badge_colour(html_text) == CAUTION_COLOUR != GREEN
    assert "⚠ 1 fabricated citation</span>" in html_text
    assert '<div class="warning"><strong>⚠ Citations not to rely on</strong>' in html_text
    md = render_markdown(report)
    assert "· ⚠ 1 fabricated citation**" in md.splitlines()[2]  # the headline
    assert "> **⚠ Citations not to rely on** (`duel verify`: 1 fabricated):" in md
    assert re.search(
        r"\*\*fabricated\*\*: https://kubernetes\.io/\S+ \(HTTP 404\); deciding turns \[4\]\(.*\) and \[5\]", md
    )
    assert report.to_dict()["decision"]["flagged"][0]["deciding_turns"] == [4, 5]


def test_a_citation_no_deciding_turn_rests_on_is_flagged_as_such(service, source):
    early, late = "https://example.org/early", "https://example.org/late"
    no_support = ("**Stance Revision Support**\n- Turn {}\n", "**Stance Revision Support**\n")
    path = scripted_duel(
        service,
        source,
        ["OPEN_TO_DEBATE"] * 4,
        edits={
            1: [("  - design.md#Failure handling\n", f"  - design.md#Failure handling\n  - {early}\n")],
            2: [(no_support[0].format(1), no_support[1])],  # nothing cites turn 1 as support
            3: [("  - design.md#Failure handling\n", f"  - design.md#Failure handling\n  - {late}\n")],
            # turn 4 keeps its "Turn 3" revision support: it rests on turn 3
        },
    )
    write_sidecar(path, {early, late})
    report = report_of(path)
    assert report.outcome.deciding_turns == (3, 4)
    assert [(c.turn, c.url, c.deciding_turns) for c in report.decision.flagged] == [(1, early, ()), (3, late, (3, 4))]
    md = render_markdown(report)
    assert "no deciding turn rests on it." in md


# -- what the debate changed ---------------------------------------------------------------------------------


def test_unresolved_items_get_a_status_in_one_table_that_counts_the_open_ones(service, source):
    # make_turn raises one new item a turn, so each author drops its previous item at its next turn.
    path = scripted_duel(
        service,
        source,
        ["OPEN_TO_DEBATE"] * 4 + ["ACCEPTING_CONSENSUS"] * 2,
        edits={3: [("- Addresses: Turn 2", "- Addresses: design.md#Lease semantics")]},  # turn 2 left unanswered
    )
    report = report_of(path)
    assert [(u.raised_in, u.answered_in, u.dropped_in, u.status) for u in report.unresolved] == [
        (1, (2,), 3, "resolved"),  # answered by turn 2; its author let it go with its stance unchanged
        (2, (), 4, "dropped"),  # nobody answered it; let go with the stance unchanged
        (3, (4,), 5, "conceded"),  # let go as its author moved up to ACCEPTING_CONSENSUS
        (4, (5,), 6, "conceded"),
        (5, (6,), None, "open"),
        (6, (), None, "open"),
    ]
    md = render_markdown(report)
    lead = "Every unresolved item, and what became of it (2 open, 0 of them blocking)"
    assert md.count("| Item | By | Raised in |") == 1 and "### Unresolved" not in md  # shown once
    unresolved = md.split(f"**{lead}**:", 1)[1].split("###", 1)[0]
    assert "item 5" in unresolved and "item 6" in unresolved and "item 1" in unresolved
    assert "| resolved in turn 3 |" in md and "| dropped in turn 4 |" in md and "| conceded in turn 5 |" in md
    html_text = render_html(report)
    assert f"<h3>{lead}</h3>" in html_text and html_text.count("<th>Raised in</th>") == 1
    assert [item["status"] for item in report.to_dict()["unresolved"]] == ["resolved", "dropped"] + ["conceded"] * 2 + [
        "open"
    ] * 2


def test_each_seat_shows_where_it_started_and_ended_what_it_conceded_and_held():
    claude, gpt = report_of(CONSENSUS).changes
    assert (claude.opening.turn, claude.final.turn, gpt.opening.turn, gpt.final.turn) == (1, 5, 2, 4)
    assert [(r.turn, r.previous, r.stance) for r in gpt.revisions] == [(4, "DISSENTING", "ACCEPTING_CONSENSUS")]
    assert gpt.revisions[0].support == ('Turn 3 "A per-deployment ceiling on refresh latency"', "design.md:36-37")
    # Agreements taken up: first stated by the other seat, or crediting the other's turn.
    assert [(q.turn, q.text) for q in gpt.adopted] == [
        (2, "Fencing tokens are the right defence against late writes."),
        (4, "A configurable duration keeps a safe default and lets fast deployments recover sooner (Turn 3)."),
    ]
    assert [q.turn for q in claude.adopted] == [3, 5]
    assert [(q.turn, q.text) for q in claude.held] == [
        (1, "How short a lease can be before refresh traffic matters (non-blocking)")
    ]
    md = render_markdown(report_of(CONSENSUS))
    assert md.index("### Decision") < md.index("### What the debate changed") < md.index("### Stances")


# -- links, cost, revision ---------------------------------------------------------------------------------------


def test_turn_numbers_and_source_citations_are_links():
    report = report_of(CONSENSUS)
    turn_4 = "2026-11-24-lease-duration.md#turn-4--gpt-duel--gpt-61-sol--accepting_consensus"
    assert report.anchor_of(4) == turn_4.split("#")[1]
    md = render_markdown(report)
    assert f"| [4]({turn_4}) | GPT |" in md
    # The source is ../../design.md from the artifact; a link's text has its punctuation escaped.
    assert "[design\\.md\\:31\\-32](../../design.md#L31-L32)" in md
    assert "[design\\.md\\#Goals](../../design.md#goals)" in md
    html_text = render_html(report)
    assert '<a href="../../design.md#L31-L32">design.md:31-32</a>' in html_text
    assert f'<a href="{turn_4}">4</a>' in html_text
    # From another folder, the links lead to the same files.
    elsewhere = read_report(CONSENSUS, env={}, read_from=CONSENSUS.parent.parent)
    assert '<a href="../design.md#L31-L32">' in render_html(elsewhere)
    assert f'<a href="debates/{turn_4}">4</a>' in render_html(elsewhere)


def test_a_link_text_holds_no_markup_and_a_link_no_scheme(tmp_path):
    assert link("a](javascript:x) [b `c` @octocat #12 |", "x.md") == (
        "[a\\]\\(javascript\\:x\\) \\[b \\`c\\` \\@\u200boctocat \\#\u200b12 \\|](x.md)"
    )
    forged = tmp_path / CONSENSUS.name
    text = CONSENSUS.read_text(encoding="utf-8")
    forged.write_text(text.replace('source_path: "../../design.md"', 'source_path: "javascript:alert(1)/design.md"', 1))
    html_text = render_html(report_of(forged))
    assert 'href="javascript%3Aalert%281%29/design.md#L31-L32"' in html_text and 'href="javascript:' not in html_text


def test_a_total_with_an_unpriced_seat_says_at_least(tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(
        '{"date": "2026-11-23", "models": {"claude-sonnet-5-5": '
        '{"input": 2.0, "output": 10.0, "cache_read": 0.2, "cache_write": 2.5}}}'
    )
    report = read_report(CONSENSUS, env={"DUEL_PRICES": str(prices)}, read_from=CONSENSUS.parent)
    assert report.usage is not None and report.usage.cost_usd is None  # the json's total stays null
    assert "· at least $\u200b0.0574 (1 seat unpriced)**" in render_markdown(report)  # `$0` is no GitLab snippet
    assert "at least $0.0574 (1 seat unpriced)" in render_html(report)


def test_an_agreed_revision_is_shown_as_a_diff(tmp_path):
    diff = "--- a/design.md\n+++ b/design.md\n@@ -1,2 +1,2 @@\n keep\n-old <b>line</b>\n+new ```line```\n"
    report = report_of(CONSENSUS)
    revision = RevisionView(
        id="3f9a2c1d", diff=diff, files=("design.md",), added=1, removed=1, accepted_by=("Claude", "GPT")
    )
    report = replace(report, decision=replace(report.decision, revision=revision))
    md = render_markdown(report)
    assert "**Revision `3f9a2c1d`**: design.md: +1 −1; accepted by Claude and GPT." in md
    assert f"````diff\n{diff}````" in md  # the fence outruns the backticks inside
    html_text = render_html(report)
    assert '<span class="del">-old &lt;b&gt;line&lt;/b&gt;</span><span class="add">+new ```line```</span>' in html_text
    assert '<span class="hunk">@@ -1,2 +1,2 @@</span>' in html_text and '<span class="">' not in html_text
    assert report.to_dict()["decision"]["revision"]["accepted_by"] == ["Claude", "GPT"]
    assert report_of(CONSENSUS).to_dict()["decision"]["revision"] is None


def test_an_agreed_revision_leads_the_report_with_its_diff_and_the_duel_apply_command(service, pair):
    path, revision = agreed_on_an_edit(service, *pair)
    report = report_of(path)
    command = f"duel apply {path}"  # not in a git work tree: the path as given
    md = render_markdown(report)
    assert f"**Revision `{revision}`**: design.md: +1 −1; accepted by Alice and Bob." in md
    assert f"Apply it: `{command}`" in md and f"+{CONFIGURABLE_EXPIRY}" in md
    assert md.index(f"+{CONFIGURABLE_EXPIRY}") < md.index("### Decision")  # right after the outcome
    html_text = render_html(report)
    assert f"Apply it: <code>{command}</code>" in html_text
    assert html_text.index('<pre class="diff">') < html_text.index('<section class="decision agreed">')
    assert html_text.count('<pre class="diff">') == md.count("```diff") == 1  # shown once
    shown = report.to_dict()["decision"]["revision"]
    assert (shown["id"], shown["apply"]) == (revision, command)
    assert "alternatives" not in report.to_dict()["decision"]  # as before, for a record without them


def test_a_dissent_report_shows_each_alternative_credited_to_the_seat_that_proposed_it(service, source):
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    expiry = replace_edit("expiry", "Leases expire after fifteen minutes unless refreshed.", CONFIGURABLE_EXPIRY)
    texts = [with_edits(make_turn(1, *DUELISTS[1]), expiry), make_turn(2, *DUELISTS[2], "DISSENTING")]
    texts.append(make_turn(3, *DUELISTS[1], "DISSENTING"))
    path = ""
    for number, text in enumerate(texts, start=1):
        player = (alice, bob)[(number - 1) % 2]
        path = service.append(player.seat, claim(service, player), text, release=True).debate_path
    service.release_lock(alice.seat, claim(service, alice), close=True, outcome="DISSENT")
    report = report_of(Path(path))
    alternatives = report.to_dict()["decision"]["alternatives"]
    assert [(a["seat"], a["name"]) for a in alternatives] == [(1, "Alice")]  # Bob proposed no edit
    md = render_markdown(report)
    assert f"**Alice's alternative `{alternatives[0]['id']}`**: design.md: +1 −1; not agreed." in md
    assert f"+{CONFIGURABLE_EXPIRY}" in md and "Bob's alternative" not in md and "duel apply" not in md
    assert f"Alice's alternative <code>{alternatives[0]['id']}</code>" in render_html(report)


# -- where the report is read: a pull-request comment, or a file ------------------------------------------------

# Every link target in a Markdown text: `[text](target)`, a link's text escaped so no `](` opens inside it.
_LINK_TARGET = re.compile(r"(?<!\\)\]\(([^)\s]*)\)")


def duel_report(*args: str, cwd: Path) -> str:
    """``duel report ARGS``'s standard output, run as a user runs it from ``cwd``."""
    done = subprocess.run(
        [sys.executable, "-m", "rp1_duel", "report", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={**os.environ, "DUEL_PRICES": ""},
        check=False,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def relative_targets(markdown: str) -> list[str]:
    """The link targets that resolve against where the text is shown: neither a URL nor an in-page anchor."""
    return [t for t in _LINK_TARGET.findall(markdown) if not re.match(r"(https?:|#)", t)]


@pytest.mark.slow
def test_a_markdown_report_on_standard_output_has_no_relative_link(service, pair, tmp_path):
    path, _revision = agreed_on_an_edit(service, *pair)
    here = tmp_path / "elsewhere"
    here.mkdir()
    comment = duel_report(str(path), cwd=here)
    assert relative_targets(comment) == []  # a PR comment resolves them against the PR's page
    assert re.search(r"\| 3 \| Alice \|", comment)  # a turn number, unlinked
    assert "| source | design.md#Failure handling |" in comment  # a citation, named as recorded
    assert f"Apply it: `duel apply {path}`" in comment  # outside a git work tree: the path as given
    # A file has a place: its links stay.
    written = duel_report(str(path), "-o", str(here / "report.md"), cwd=here)
    assert written == "" and relative_targets((here / "report.md").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_a_report_written_to_a_file_in_a_subfolder_links_from_that_files_folder(service, pair, tmp_path):
    path, _revision = agreed_on_an_edit(service, *pair)
    output = tmp_path / "reports" / "2027" / "report.md"
    output.parent.mkdir(parents=True)
    duel_report(str(path), "-o", str(output), cwd=path.parent)
    targets = relative_targets(output.read_text(encoding="utf-8"))
    assert targets and any("design.md" in t for t in targets) and any(path.name in t for t in targets)
    for target in targets:
        assert (output.parent / unquote(target.split("#")[0])).resolve().is_file(), target


@pytest.mark.slow
def test_inside_a_git_work_tree_a_comment_names_paths_from_its_root(service, pair, tmp_path):
    path, _revision = agreed_on_an_edit(service, *pair)
    write_sidecar(path, fabricated=set())
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    here = tmp_path / "elsewhere"
    here.mkdir()
    comment = duel_report(os.path.relpath(path, here), cwd=here)
    assert f"Apply it: `duel apply debates/{path.name}`" in comment  # where a reader of the PR runs it
    assert "· source `design.md`" in comment  # not `../design.md`, as recorded beside the artifact
    assert f"Verification sidecar debates/{path.stem}.verify.json (" in comment
    assert relative_targets(comment) == []


# -- a phone's screen -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [CONSENSUS, DISSENT], ids=lambda p: p.stem)
def test_on_a_390_pixel_screen_tables_scroll_in_their_own_box_and_the_chart_keeps_its_size(path):
    html_text = render_html(report_of(path))
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html_text
    assert (
        ".scroll { overflow-x: auto;" in html_text and ".scroll > table { margin: 0; min-width: 600px; }" in html_text
    )
    tables = html_text.count("<table>")
    assert tables >= 4 and html_text.count('<div class="scroll"><table>') == tables  # every one in its own box
    assert html_text.count("</table></div>") == tables
    assert '<div class="chart"><svg ' in html_text and ".chart svg { min-width: 720px; }" in html_text
    assert "grid-template-columns: repeat(auto-fit, minmax(min(260px, 100%), 1fr))" in html_text  # positions stack
    assert "pre.diff span { white-space: pre-wrap; overflow-wrap: anywhere; }" in html_text  # a diff wraps, unclipped


def test_the_persona_a_seat_played_is_recorded_and_shown(service, source):
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x", persona="skeptic")
    join(service, source, "Bob", harness="codex", model_id="gpt-x")
    path = service.append(
        alice.seat, claim(service, alice), make_turn(1, "Alice", "claude-code", "claude-x")
    ).debate_path
    front = FrontMatter.parse(parse(Path(path).read_text()).front_matter)
    assert [(p.display_name, p.persona) for p in front.participants] == [("Alice", "skeptic"), ("Bob", None)]
    report = read_report(path)
    assert [(p.name, p.persona) for p in report.participants] == [("Alice", "skeptic"), ("Bob", None)]
    assert "| Alice (plays skeptic) |" in render_markdown(report)
    assert "plays skeptic</span>" in render_html(report)
