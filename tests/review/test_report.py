"""`duel report` (docs/protocol.md section 11), on fixture artifacts of real duels.

The fixtures in tests/data/reports/debates/ were written once by four duels through the
lock service with scripted turns (tests/data/reports/make_fixtures.py), with usage events
for one and verification sidecars, written through the verification module, for two.
Expected values here are read off the turns by hand, not computed by the code under test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import threading
import zlib
from dataclasses import astuple, replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rp1_duel.coordination import Usage
from rp1_duel.errors import DuelError
from rp1_duel.record import verification
from rp1_duel.review.assessment import ModelSection
from rp1_duel.review.report import build_report
from rp1_duel.review.report_files import read_report
from rp1_duel.review.report_html import render_html
from rp1_duel.review.report_markdown import inline, render_markdown
from rp1_duel.settings import DuelSettings

from helpers import claim, join, make_turn

DEBATES = Path(__file__).parents[1] / "data" / "reports" / "debates"
CONSENSUS = DEBATES / "2026-11-24-lease-duration.md"
DISSENT = DEBATES / "2026-11-24-clock-skew-bound.md"
MAX_TURNS = DEBATES / "2026-11-24-refresh-cadence.md"
INVALIDATED = DEBATES / "2026-11-24-partition-handling.md"
FIXTURES = (CONSENSUS, DISSENT, MAX_TURNS, INVALIDATED)
NO_PRICES_ENV: dict[str, str] = {}  # the bundled price table


def report_of(path: Path, read_from: Path | None = None):
    """The report of ``path``, its links as read from ``read_from`` (default: the artifact's folder)."""
    return read_report(path, env=NO_PRICES_ENV, read_from=read_from or path.parent)


def copy_duel(path: Path, folder: Path, *, with_state: bool = False) -> Path:
    """The artifact (and its sidecar, and with ``with_state`` its .duel state) copied into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for found in path.parent.glob(f"{path.stem}*"):
        shutil.copy(found, folder / found.name)
    if with_state:
        shutil.copytree(path.parent / ".duel" / "duels" / path.stem, folder / ".duel" / "duels" / path.stem)
    return folder / path.name


def test_fixture_artifacts_are_valid_records():
    from rp1_duel.record import validate_file

    for path in FIXTURES:
        problems = validate_file(path).problems
        if path.name == "2026-11-24-partition-handling.md":  # its summary was edited to hold raw HTML
            assert problems and {(p.code, "Terminal Conclusion" in p.message) for p in problems} == {("RAW_HTML", True)}
        else:
            assert not problems, path


# -- the outcome and why ---------------------------------------------------------------------------


def test_consensus_report_names_the_two_accepting_turns():
    report = report_of(CONSENSUS)
    facts = report.outcome
    assert (report.status, facts.outcome, facts.implied, facts.rule) == (
        "CLOSED",
        "ACCEPTED_CONSENSUS",
        "ACCEPTED_CONSENSUS",
        "both_accepting",
    )
    assert facts.deciding_turns == (4, 5)
    assert facts.stances == ("ACCEPTING_CONSENSUS", "ACCEPTING_CONSENSUS")
    assert facts.blocking == () and facts.reason is None and facts.summary is None
    assert facts.candidate_convergence is True
    assert facts.explanation == (
        "Both latest turns accept the consensus with no blocking item: turn 4 (GPT, "
        "ACCEPTING_CONSENSUS) and turn 5 (Claude, ACCEPTING_CONSENSUS)."
    )
    assert report.intact and report.problems == ()


def test_dissent_report_lists_the_blocking_items_left_at_the_last_turn():
    facts = report_of(DISSENT).outcome
    assert (facts.outcome, facts.rule, facts.deciding_turns, facts.stances) == (
        "DISSENT",
        "last_turn_blocked",
        (3, 4),
        ("DISSENTING", "CONVERGING"),
    )
    assert [(q.turn, q.text) for q in facts.blocking] == [
        (3, "Whether any host in production exceeds the two-second bound (blocking)"),
        (3, "Whether the skew alarm fires below two seconds (blocking)"),
        (4, "Whether leases must survive a restart of the lease service (blocking)"),
    ]
    assert facts.candidate_convergence is False
    assert "Turn 4 was the last allowed" in facts.explanation and facts.explanation.endswith("; 3 blocking items.")


def test_max_turns_report_says_nothing_blocked_the_last_turn():
    facts = report_of(MAX_TURNS).outcome
    assert (facts.outcome, facts.rule, facts.deciding_turns, facts.stances, facts.blocking) == (
        "MAX_TURNS",
        "last_turn",
        (3, 4),
        ("CONVERGING", "CONVERGING"),
        (),
    )
    assert facts.candidate_convergence is True
    assert facts.explanation.startswith("Turn 4 was the last allowed, with no blocking item and no DISSENTING")


def test_invalidated_report_gives_the_recorded_reason_and_summary():
    report = report_of(INVALIDATED)
    facts = report.outcome
    assert (facts.outcome, facts.implied, facts.rule) == ("INVALIDATED", None, None)
    assert facts.reason == "Claude could not write a valid turn 3 after 3 repairs (NOVELTY, UNGROUNDED)"
    assert facts.summary == (
        "Closed before turn 3. <script>alert('summary')</script>\n\n\"><img src=x onerror=alert(2)> and a | pipe"
    )
    assert facts.explanation == f"Closed INVALIDATED after 2 of 6 turns: {facts.reason}."
    assert report.turn_count == 2 and report.duration_seconds == 469.0


def test_open_duel_report_says_what_the_turns_imply(service, pair, source):
    alice, bob = pair
    for n, (player, stance) in enumerate(((alice, "DISSENTING"), (bob, "DISSENTING")), start=1):
        lease = claim(service, player)
        service.append(
            player.seat,
            lease,
            make_turn(n, player.name, *(("claude-code", "claude-x") if n == 1 else ("codex", "gpt-x")), stance),
        )
        if n == 1:
            service.release_lock(player.seat, lease)
    path = service.debate.root / f"{alice.duel_id}.md"
    report = build_report(path.read_text(), str(path))
    facts = report.outcome
    assert (report.status, facts.outcome, facts.implied, facts.rule) == ("ACTIVE", None, "DISSENT", "both_dissenting")
    assert facts.explanation == (
        "Still open after 2 of 6 turns; the turns reached DISSENT (turn 1 (Alice, "
        "DISSENTING) and turn 2 (Bob, DISSENTING)), not yet closed."
    )
    assert report.duration_seconds is None and report.usage is None


def test_a_duel_that_asked_no_model_shows_no_tokens_or_cost_in_its_headline():
    from rp1_duel.review.report_text import headline

    scripted = build_report(DISSENT.read_text(), str(DISSENT), events=[])  # recorded, and empty
    assert scripted.usage is not None and "tokens" not in headline(scripted) and "$" not in headline(scripted)
    assert "tokens" in headline(report_of(CONSENSUS))


# -- the stance timeline ----------------------------------------------------------------------------


def test_stance_timeline_places_each_turn_on_the_scale_and_marks_changes():
    timeline = report_of(CONSENSUS).timeline
    assert [(e.turn, e.seat, e.stance, e.level, e.marked, e.changed, e.previous_stance) for e in timeline] == [
        (1, 1, "OPEN_TO_DEBATE", 1, False, False, None),
        (2, 2, "DISSENTING", 0, True, False, None),
        (3, 1, "CONVERGING", 3, False, True, "OPEN_TO_DEBATE"),
        (4, 2, "ACCEPTING_CONSENSUS", 4, False, True, "DISSENTING"),
        (5, 1, "ACCEPTING_CONSENSUS", 4, False, True, "CONVERGING"),
    ]
    assert timeline[2].revision_support == (
        'Turn 2 "Fencing already makes late writes harmless"',
        "design.md#Partitions",
    )
    assert timeline[4].revision_support == ('Turn 4 "I accept a configurable lease duration"',)
    assert timeline[0].headline == (
        "Fifteen-minute leases are too long: a crashed holder blocks every other worker for a quarter of an hour."
    )
    assert [e.blocking for e in timeline] == [1, 1, 0, 0, 0]
    assert not any(e.signed for e in timeline)


def test_a_dissenting_turn_is_marked_below_the_scale():
    timeline = report_of(DISSENT).timeline
    assert [(e.stance, e.level, e.marked, e.changed) for e in timeline] == [
        ("OPEN_TO_DEBATE", 1, False, False),
        ("OPEN_TO_DEBATE", 1, False, False),
        ("DISSENTING", 0, True, True),
        ("CONVERGING", 3, False, True),
    ]


# -- agreements, unresolved items, novel arguments -------------------------------------------------


def test_agreements_are_merged_by_the_novelty_measure_a_credit_aside():
    agreements = report_of(CONSENSUS).agreements
    assert [(a.text, a.turns, a.seats) for a in agreements] == [
        ("Fencing tokens are the right defence against late writes.", (1, 2, 3, 4, 5), (1, 2)),
        ("Expiry speed is an availability question, not a safety one (Turn 2).", (3,), (1,)),
        ("A configurable duration keeps a safe default and lets fast deployments recover sooner (Turn 3).", (4,), (2,)),
        ("The floor stays well above the refresh interval (Turn 4).", (5,), (1,)),
    ]
    # "An expired lease must never be refreshed (Turn 1)." is the same agreement: a credit is not a word of it.
    first = report_of(MAX_TURNS).agreements[0]
    assert (first.turns, first.seats) == ((1, 2), (1, 2))


def test_unresolved_items_follow_their_author_and_say_when_answered():
    entries = report_of(CONSENSUS).unresolved
    assert [(u.seat, u.raised_in, u.listed_in, u.blocking, u.answered_in, u.dropped_in, u.open) for u in entries] == [
        (1, 1, (1, 3, 5), False, (2, 4), None, True),  # answered by counterpoints addressing turns 1 and 3
        (1, 1, (1,), True, (2,), 3, False),  # dropped by its author in turn 3
        (2, 2, (2, 4), False, (3, 5), None, True),
        (2, 2, (2,), True, (3,), 4, False),
    ]
    assert entries[1].text == "Whether the two-second skew bound holds under load (blocking)"


def test_an_item_raised_in_the_last_turn_is_open_and_unanswered():
    last = report_of(DISSENT).unresolved[-1]
    assert (last.text, last.raised_in, last.answered_in, last.dropped_in, last.open, last.blocking) == (
        "Whether leases must survive a restart of the lease service (blocking)",
        4,
        (),
        None,
        True,
        True,
    )


def test_novel_arguments_one_per_turn_with_their_support():
    arguments = report_of(CONSENSUS).novel_arguments
    assert [(a.turn, a.seat) for a in arguments] == [(1, 1), (2, 2), (3, 1), (4, 2), (5, 1)]
    assert arguments[3].claim == (
        "Publishing the chosen duration in the grant response lets clients size their "
        "refresh interval without guessing."
    )
    assert arguments[0].support == (
        "design.md:31-32",
        "Principle: a failure detector's timeout should be a small multiple of its heartbeat interval.",
    )


# -- citations and the verification sidecar -------------------------------------------------------


def test_citation_table_lists_every_support_item_with_its_kind_and_turn():
    citations = report_of(DISSENT).citations
    assert [(c.turn, c.kind) for c in citations] == [
        (1, "source"),
        (1, "source"),
        (1, "principle"),
        (1, "url"),
        (2, "turn"),
        (2, "source"),
        (2, "url"),
        (2, "source"),
        (3, "turn"),
        (3, "source"),
        (3, "source"),
        (3, "turn"),
        (3, "principle"),
        (4, "turn"),
        (4, "source"),
        (4, "principle"),
        (4, "turn"),
    ]
    assert citations[3].item == citations[3].url == "https://man7.org/linux/man-pages/man2/clock_gettime.2.html"
    assert {c.section for c in citations} == {"Counterpoints", "Novel Argument", "Stance Revision Support"}
    assert all(c.verdict is None for c in citations)
    assert report_of(DISSENT).verification is None


def test_a_current_sidecar_gives_every_citation_its_verdict():
    report = report_of(CONSENSUS)
    facts = report.verification
    assert (facts.status, facts.turns, facts.verified_at, facts.problems) == (
        "current",
        5,
        "2026-11-24T09:30:00.000Z",
        (),
    )
    assert facts.counts == {"verified": 1, "unreliable": 1, "not_checkable": 3, "checked_at_append": 19}
    urls = {c.url: (c.verdict, c.confidence) for c in report.citations if c.kind == "url"}
    assert urls == {
        "https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html": ("verified", "high"),
        "https://kubernetes.io/docs/concepts/architecture/leases/": ("unreliable", "medium"),
    }
    assert {c.verdict for c in report.citations if c.kind in ("source", "turn")} == {"checked_at_append"}
    assert {c.verdict for c in report.citations if c.kind == "principle"} == {"not_checkable"}


def test_a_stale_sidecar_gives_verdicts_to_the_turns_it_covers_only():
    report = report_of(MAX_TURNS)
    assert (report.verification.status, report.verification.turns) == ("stale", 3)
    assert {c.turn for c in report.citations if c.verdict is not None} == {1, 2, 3}
    assert all(c.verdict is None for c in report.citations if c.turn == 4)
    assert "covers turns 1–3 only" in render_markdown(report)


def test_a_sidecar_of_another_chain_shows_no_verdicts(tmp_path):
    path = copy_duel(CONSENSUS, tmp_path)
    side = verification.sidecar_path(path)
    foreign = replace(verification.load(side), chain_head="ab" * 32)
    side.write_bytes(verification.dumps(foreign))
    report = report_of(path)
    assert report.verification.status == "mismatch" and report.verification.counts == {}
    assert "is not the hash of that turn" in report.verification.problems[0]
    assert all(c.verdict is None for c in report.citations)
    assert "belongs to another record; its verdicts are not shown" in render_markdown(report)


def test_an_unreadable_sidecar_is_said_not_fatal(tmp_path):
    path = copy_duel(CONSENSUS, tmp_path)
    verification.sidecar_path(path).write_text("{not json")
    report = report_of(path)
    assert report.verification.status == "unreadable"
    assert report.verification.problems[0].startswith("not JSON")
    assert all(c.verdict is None for c in report.citations)


# -- participants, usage, duration ----------------------------------------------------------------------


def test_recorded_usage_is_summed_per_participant_and_priced():
    report = report_of(CONSENSUS)
    claude, gpt = report.participants
    assert (claude.name, claude.harness, claude.model, claude.turns) == (
        "Claude",
        "duel",
        "claude-sonnet-5-5",
        (1, 3, 5),
    )
    assert (gpt.name, gpt.model, gpt.turns) == ("GPT", "gpt-6.1-sol", (2, 4))

    def counts(used: Usage) -> tuple[int, ...]:
        return (*astuple(used)[:4], used.requests, used.retries)

    assert counts(claude.usage.usage) == (5557, 3065, 7370, 5680, 3, 0)
    assert counts(gpt.usage.usage) == (6224, 2191, 3840, 0, 3, 1)
    # List prices per million tokens: claude-sonnet-5-5 2 / 10 / 0.2 / 2.5; gpt-6.1-sol 2 / 10 / 0.1 / 2.5.
    assert claude.usage.cost_usd == pytest.approx((5557 * 2 + 3065 * 10 + 7370 * 0.2 + 5680 * 2.5) / 1e6)
    assert gpt.usage.cost_usd == pytest.approx((6224 * 2 + 2191 * 10 + 3840 * 0.1) / 1e6)
    assert report.usage.usage.output_tokens == 3065 + 2191
    assert report.usage.cost_usd == pytest.approx(claude.usage.cost_usd + gpt.usage.cost_usd)
    assert report.duration_seconds == 696.0  # 09:00:00 to 09:11:36


def test_a_committed_artifact_without_its_debate_state_has_no_usage(tmp_path):
    path = copy_duel(CONSENSUS, tmp_path)
    report = report_of(path)
    assert report.usage is None and all(p.usage is None for p in report.participants)
    assert "not recorded" in render_markdown(report)
    assert not (tmp_path / ".duel").exists()  # read-only: nothing is created next to the artifact


def test_usage_is_not_read_from_a_state_folder_others_can_write(tmp_path):
    path = copy_duel(CONSENSUS, tmp_path, with_state=True)
    assert report_of(path).usage is not None
    os.chmod(tmp_path / ".duel", 0o777)  # noqa: S103  the world-writable folder under test
    report = report_of(path)
    assert report.usage is None
    assert "writable by other users" in report.notes[0]


# -- a record that does not verify, and hostile text --------------------------------------------------


HOSTILE = '<script>alert(1)</script> "><img src=x onerror=alert(1)> @octocat #12'


def tampered(tmp_path: Path) -> Path:
    """The invalidated duel with hostile text put into a turn and a participant's name by hand."""
    path = copy_duel(INVALIDATED, tmp_path)
    text = path.read_text()
    text = text.replace("Partitioned holders need a way", f"{HOSTILE} Partitioned holders need a way", 1)
    text = text.replace('"display_name": "GPT"', '"display_name": "GPT\\"><img src=x onerror=alert(3)>"', 1)
    path.write_text(text)
    return path


def test_a_tampered_record_is_reported_with_its_problems(tmp_path):
    report = report_of(tampered(tmp_path))
    assert not report.intact
    assert report.problems == ("turn 1 was changed after it was written",)
    assert "This record does not verify" in render_markdown(report)
    assert "This record does not verify" in render_html(report)


def test_markdown_holds_no_raw_html_mention_or_issue_link_from_the_record(tmp_path):
    for report in (report_of(INVALIDATED), report_of(tampered(tmp_path))):
        text = render_markdown(report)
        outside_code = re.sub(r"(`+).*?\1", "", re.sub(r"```.*?```", "", text, flags=re.DOTALL))
        tags = set(re.findall(r"</?([A-Za-z][A-Za-z0-9-]*)", outside_code))
        assert tags <= {"details", "summary", "sub"}, tags
        assert "@octocat" not in text and not re.search(r"(?<!\w)#12", text)
    assert (
        inline("@octocat owner/repo#12 !7 GH-3 ~bug %v1 mail@example.com")
        == "@\u200boctocat owner/repo#\u200b12 !\u200b7 GH-\u200b3 ~\u200bbug %\u200bv1 mail@example.com"
    )
    assert inline("a `<b>` c <i>") == "a `<b>` c &lt;i>"  # a code span shows its text, as GitHub does
    assert inline("\\`<i>`") == "\\`&lt;i>\\`"  # an escaped backtick opens no code span; a lone one is escaped


class Structure(HTMLParser):
    """Elements as a real HTML parser reads them: nesting, scripts, and what they would load."""

    VOID = frozenset(
        {"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "embed", "source", "track", "wbr"}
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.tags: list[str] = []
        self.problems: list[str] = []
        self.loads: list[str] = []
        self.style = ""
        self.text = ""

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._attributes(tag, dict(attrs))
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)
        self._attributes(tag, dict(attrs))

    def handle_endtag(self, tag):
        if not self.open or self.open[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.open[-1:] or 'nothing'}")
        else:
            self.open.pop()

    def handle_data(self, data):
        if self.open and self.open[-1] == "style":
            self.style += data
        else:
            self.text += data

    def _attributes(self, tag, attrs):
        for name, value in attrs.items():
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}>")
            if name in ("src", "srcset", "data", "poster", "background") or (name == "href" and tag != "a"):
                self.loads.append(f"<{tag} {name}={value}>")
            # a link within the page, to the web, or a relative path (to the artifact, the source): no other scheme
            if name == "href" and tag == "a" and not re.match(r"#|https?://|[^:/?#]+(?:[/?#]|$)", value or ""):
                self.problems.append(f"<a href={value}>")


def parsed(html_text: str) -> Structure:
    found = Structure()
    found.feed(html_text)
    found.close()
    return found


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_html_is_well_formed_self_contained_and_scriptless(path):
    found = parsed(render_html(report_of(path)))
    assert found.problems == [] and found.open == []
    assert "script" not in found.tags and found.loads == []
    assert "url(" not in found.style and "@import" not in found.style
    assert found.tags.count("svg") == 1


def test_hostile_text_comes_out_of_the_html_as_text(tmp_path):
    report = report_of(tampered(tmp_path))
    html_text = render_html(report)
    found = parsed(html_text)
    assert found.problems == [] and found.open == []
    assert "script" not in found.tags and "img" not in found.tags and found.loads == []
    assert HOSTILE in found.text  # shown to the reader, as text
    assert "Closed before turn 3. <script>alert('summary')</script>" in found.text
    assert 'GPT"><img src=x onerror=alert(3)>' in found.text
    assert "default-src 'none'" in html_text


def test_the_stance_change_links_to_its_revision_support():
    html_text = render_html(report_of(CONSENSUS))
    for turn in (3, 4, 5):
        assert f'<a href="#revision-{turn}">' in html_text and f'<li id="revision-{turn}">' in html_text
    assert 'href="#revision-2"' not in html_text  # turn 2 changed nothing
    url = "https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html"
    assert f'<a href="{url}" rel="noopener noreferrer nofollow">{url}</a>' in html_text  # a link, never a load


def test_markdown_has_a_mermaid_chart_and_a_table_fallback():
    text = render_markdown(report_of(CONSENSUS))
    chart = text.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert "xychart-beta" in chart
    assert '  x-axis "round (turns)" ["1-2", "3-4", "5-6"]' in chart
    assert "  line [1, 3, 4]\n  line [0, 4]\n" in chart  # Claude: turns 1, 3, 5; GPT: turns 2, 4
    turn_4 = "2026-11-24-lease-duration.md#turn-4--gpt-duel--gpt-61-sol--accepting_consensus"
    assert f"| [4]({turn_4}) | GPT | **ACCEPTING_CONSENSUS** (changed) | 0 |" in text
    assert (
        '- turn 3, Claude: OPEN_TO_DEBATE → CONVERGING, because: Turn 2 "Fencing already makes late writes '
        'harmless"; design.md#Partitions'
    ) in text
    turn = "(2026-11-24-lease-duration.md#turn-{}--{}"
    assert (
        f"| Whether the two-second skew bound holds under load (blocking) | Claude | [1]{turn.format(1, 'claude-duel--claude-sonnet-5-5--open_to_debate)')} "
        f"| blocking | [2]{turn.format(2, 'gpt-duel--gpt-61-sol--dissenting)')} | conceded in turn 3 |" in text
    )


def test_markdown_fits_one_github_comment_by_leaving_out_the_citations_first():
    report = report_of(CONSENSUS)
    assert "left out" not in render_markdown(report)
    long = replace(report, citations=report.citations * 200)  # 4,800 citations
    text = render_markdown(long)
    assert len(text) <= 65_536
    assert "_4800 citations: 2400 source" in text and "left out to fit one comment" in text
    assert "Novel arguments (5)" in text and "Stances as a table" in text  # what fits stays
    longer = replace(long, novel_arguments=report.novel_arguments * 300, timeline=report.timeline * 60)
    text = render_markdown(longer)
    assert len(text) <= 65_536
    assert "_1500 novel arguments: left out" in text and "_The stances as a table: left out" in text


def test_model_written_sections_are_labelled_and_escaped():
    report = replace(
        report_of(CONSENSUS),
        model_written=(ModelSection(title="Assessment", model="claude-x", text="<b>Both</b> fine."),),
    )
    assert (
        "### Assessment by claude-x (model-written, not checked for truth; turn references checked)\n\n"
        "_No turn reference._\n\n"
        "> &lt;b>Both&lt;/b> fine."
    ) in render_markdown(report)
    html_text = render_html(report)
    assert '<section class="model-written"><h2>Assessment by <code>claude-x</code></h2>' in html_text
    assert "&lt;b&gt;Both" in html_text
    assert report.to_dict()["model_written"] == [
        {"title": "Assessment", "model": "claude-x", "text": "<b>Both</b> fine.", "references": [], "asked_at": None}
    ]


# -- json: the documented data -------------------------------------------------------------------------


def documented_names() -> set[str]:
    section = Path(__file__).resolve().parents[2].joinpath("docs", "protocol.md").read_text()
    section = section.split("## 11. Reports", 1)[1]
    return {name for pair in re.findall(r'`([a-z_0-9]+)`|"([a-z_0-9]+)"', section) for name in pair if name}


def keys_of(value, found: set[str]) -> set[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key != "counts":  # keyed by verdict words
                found.add(key)
                keys_of(inner, found)
    elif isinstance(value, list):
        for inner in value:
            keys_of(inner, found)
    return found


def test_every_json_field_is_documented():
    names = set()
    for path in FIXTURES:
        names |= keys_of(report_of(path).to_dict(), set())
    assert names - documented_names() == set()
    data = report_of(CONSENSUS).to_dict()
    assert list(data)[:13] == [
        "version",
        "path",
        "duel_id",
        "topic",
        "source_path",
        "source_sha256",
        "status",
        "created_at",
        "closed_at",
        "duration_seconds",
        "max_turns",
        "turn_count",
        "intact",
    ]
    assert data["version"] == 1 and data["model_written"] == [] and data["unresolved"][1]["open"] is False


def test_not_an_artifact_is_a_front_matter_error():
    with pytest.raises(DuelError) as raised:
        build_report("# Just a document\n", "notes.md")
    assert raised.value.code == "FRONT_MATTER"
    assert raised.value.message == "notes.md: no YAML front matter: not a duel artifact"


def test_a_report_of_a_duel_with_no_turns(service, source):
    player = join(service, source, "Alice", settings=DuelSettings())
    path = service.debate.root / f"{player.duel_id}.md"
    report = build_report(path.read_text(), str(path))
    assert report.turn_count == 0 and report.timeline == () and report.outcome.deciding_turns == ()
    assert "No turns yet." in render_markdown(report)
    assert parsed(render_html(report)).problems == []


# -- the command ----------------------------------------------------------------------------------------


def duel(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rp1_duel", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={**os.environ, "DUEL_PRICES": ""},
    )


@pytest.mark.slow
def test_report_command_prints_each_format(tmp_path):
    path = copy_duel(CONSENSUS, tmp_path / "debates")
    here = report_of(path, read_from=Path.cwd())  # standard output: links as read from the current folder
    md = duel("report", str(path))
    assert md.returncode == 0 and md.stderr == ""
    assert md.stdout == render_markdown(read_report(path, env=NO_PRICES_ENV, read_from=None))  # a comment: no link
    as_json = duel("report", str(path), "--format", "json")
    assert json.loads(as_json.stdout) == json.loads(json.dumps(here.to_dict()))
    assert duel("report", str(path), "--format", "html").stdout == render_html(here)


@pytest.mark.slow
def test_report_command_writes_a_file_whole_and_nothing_else(tmp_path):
    path = copy_duel(INVALIDATED, tmp_path / "debates")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").write_text("an older report")
    written = duel("report", str(path), "--format", "html", "-o", str(out / "report.html"))
    assert written.returncode == 0 and written.stdout == "" and written.stderr == ""
    assert (out / "report.html").read_text() == render_html(report_of(path, read_from=out))  # links from out/
    assert sorted(p.name for p in out.iterdir()) == ["report.html"]  # no temp file left
    assert (out / "report.html").stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # nothing written next to the artifact


@pytest.mark.slow
def test_report_command_errors_have_a_code_and_an_exit_status(tmp_path):
    bad_format = duel("report", str(CONSENSUS), "--format", "pdf")
    assert bad_format.returncode == 2 and "--format must be one of md, github, html, json" in bad_format.stderr
    missing = duel("report", str(tmp_path / "nothing.md"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n")
    not_artifact = duel("report", str(notes))
    assert (not_artifact.returncode, not_artifact.stderr) == (
        1,
        (
            f"duel: ARTIFACT_UNREADABLE: {notes}: not a duel artifact (no front matter, no turns): give the record "
            "from the debate dir, debates/<duel id>.md\n"
        ),
    )
    latin = tmp_path / "latin.md"
    latin.write_bytes(b"---\nduel_id: caf\xe9\n---\n")
    unreadable = duel("report", str(latin))
    assert unreadable.returncode == 1 and unreadable.stderr.startswith("duel: UNREADABLE: cannot read ")
    folder = duel("report", str(tmp_path))
    assert folder.returncode == 1 and folder.stderr.endswith(": not a regular file\n")
    os.mkfifo(tmp_path / "pipe.md")
    pipe = duel("report", str(tmp_path / "pipe.md"))  # never waits for a writer
    assert pipe.returncode == 1 and pipe.stderr.endswith(": not a regular file\n")
    unwritable = duel("report", str(CONSENSUS), "-o", str(tmp_path / "no" / "such" / "dir.md"))
    assert unwritable.returncode == 1 and unwritable.stderr.startswith("duel: STORAGE_FAILED: cannot write")
    assert all("Traceback" not in r.stderr for r in (bad_format, missing, not_artifact, unreadable, folder, pipe))


# -- rendered in headless Chromium -----------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def render_in_chromium(page: Path, folder: Path, size: str = "1200,1600") -> tuple[bytes, list[str]]:
    """A screenshot of ``page``, and the URLs of every network request the page itself started.

    Chromium's net log tags each request with the network isolation key of the frame that
    made it: a request of the page (a file:// page) carries ``file://``; Chromium's own
    background requests do not, and are left out."""
    net_log = folder / "net-log.json"
    shot = folder / "shot.png"
    subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={folder / 'profile'}",
            f"--log-net-log={net_log}",
            f"--screenshot={shot}",
            f"--window-size={size}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    log = json.loads(net_log.read_text())
    kinds = {number: name for name, number in log["constants"]["logEventTypes"].items()}
    starts = [event.get("params", {}) for event in log["events"] if kinds[event["type"]] == "URL_REQUEST_START_JOB"]
    requested = [params["url"] for params in starts if "file://" in params.get("network_isolation_key", "")]
    return shot.read_bytes(), requested


def png_pixels(data: bytes, rows: int) -> list[bytes]:
    """The first ``rows`` rows of an 8-bit RGB or RGBA PNG, unfiltered (PNG specification, section 9)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks, header = 8, [], b""
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        body = data[position + 8 : position + 8 + length]
        header = body if kind == b"IHDR" else header
        chunks += [body] if kind == b"IDAT" else []
        position += 12 + length
    width, _, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6)
    size = 3 if colour == 2 else 4
    raw = zlib.decompressobj().decompress(b"".join(chunks), (width * size + 1) * rows)
    stride = width * size
    previous = bytearray(stride)
    found = []
    for row in range(rows):
        kind, line = raw[row * (stride + 1)], bytearray(raw[row * (stride + 1) + 1 : (row + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - size] if i >= size else 0
            up, corner = previous[i], previous[i - size] if i >= size else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                guess = left + up - corner
                nearest = min((abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner))
                line[i] = (line[i] + nearest[2]) & 255
        found.append(b"".join(bytes(line[j : j + 3]) for j in range(0, stride, size)))  # RGB, alpha dropped
        previous = line
    return found


@pytest.fixture
def counting_server():
    """A local HTTP server that counts the requests it gets (for the control page)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    hits: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                connection.settimeout(5)
                hits.append(connection.recv(4096).split(b"\r\n", 1)[0])
                connection.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], hits
    server.close()
    thread.join(timeout=5)


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)")
def test_the_request_detector_sees_a_page_that_loads_a_remote_resource(tmp_path, counting_server):
    port, hits = counting_server
    page = tmp_path / "control.html"
    page.write_text(
        f'<!DOCTYPE html><p>control</p><img src="http://127.0.0.1:{port}/pixel.png">'
        '<link rel="stylesheet" href="https://fonts.example.invalid/font.css">'
    )
    _, requested = render_in_chromium(page, tmp_path)
    assert f"http://127.0.0.1:{port}/pixel.png" in requested and "https://fonts.example.invalid/font.css" in requested
    assert hits and hits[0].startswith(b"GET /pixel.png")


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)")
def test_chromium_renders_the_html_report_without_a_network_request(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render_html(report_of(CONSENSUS)))
    shot, requested = render_in_chromium(page, tmp_path, size="1000,700")
    assert requested == []
    rows = png_pixels(shot, 260)
    pixels = {row[i : i + 3] for row in rows for i in range(0, len(row), 3)}
    assert len(pixels) > 100  # text, a badge, the chart: not a blank page
    badge_green = bytes.fromhex("1a7f37")
    assert any(row[i : i + 3] == badge_green for row in rows for i in range(0, len(row), 3))


def test_a_recorded_outcome_the_turns_do_not_imply_is_reported_by_validates_rule(tmp_path):
    """One rule: the report states the mismatch in `duel validate`'s words, TIMEOUT after an outcome included."""
    forged = tmp_path / CONSENSUS.name
    forged.write_text(
        CONSENSUS.read_text(encoding="utf-8").replace('outcome: "ACCEPTED_CONSENSUS"', 'outcome: "TIMEOUT"', 1),
        encoding="utf-8",
    )
    from rp1_duel.record import validate_file

    expected = "recorded TIMEOUT, but the turns had reached ACCEPTED_CONSENSUS"
    assert expected in report_of(forged).problems
    assert expected in [problem.message for problem in validate_file(forged).problems]
