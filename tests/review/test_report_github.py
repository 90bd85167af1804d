"""`duel report --format github` (docs/protocol.md section 11, "`github`"): one GitHub comment's body, the decision
and the diff first, the rest folded, whole sections cut to fit 65,536 characters; hostile text stays text."""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import mistune
import pytest

from rp1_duel.coordination import DuelService
from rp1_duel.review.assessment import ModelSection
from rp1_duel.review.report.data import Agreement
from rp1_duel.review.report.github import render_github
from rp1_duel.review.report.markdown import inline
from rp1_duel.review.report_files import read_report
from rp1_duel.settings import DuelSettings

from helpers import DUELISTS, Player, agreed_on_an_edit, claim, duel_command, fifty_turns, join, make_turn

LIMIT = 65_536
HOSTILE = "</details> ```\n~~~ <script>alert(1)</script> <!-- hidden --> `` </summary> `</details><script>x</script>` @octocat"


class _Parsed(HTMLParser):
    """The HTML a comment renders to: its tags' nesting, what it would run, and its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.problems: list[str] = []
        self.tags: set[str] = set()
        self.comments: list[str] = []
        self.text: list[str] = []
        self.folds = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:  # noqa: ARG002  HTMLParser's signature
        self.tags.add(tag)
        if tag in ("details", "summary"):
            self.open.append(tag)
            self.folds += tag == "details"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("details", "summary") and (not self.open or self.open.pop() != tag):
            self.problems.append(f"</{tag}> closes nothing open")

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def rendered(comment: str) -> _Parsed:
    """The comment as GitHub's Markdown reader makes it HTML (mistune, raw HTML passed through), parsed."""
    markdown = mistune.create_markdown(escape=False, plugins=["table", "strikethrough"])
    found = _Parsed()
    found.feed(str(markdown(comment)))
    found.close()
    return found


def github_report(path: Path, read_from: Path) -> str:
    """The ``github`` rendering of the record at ``path``, its path as the comment names it ``debates/<name>``."""
    return render_github(read_report(path, env={}, read_from=read_from), f"debates/{path.name}")


def test_an_agreed_edit_is_shown_with_its_decision_and_diff_before_any_fold(
    service: DuelService, pair: tuple[Player, Player], tmp_path: Path
) -> None:
    path, revision = agreed_on_an_edit(service, *pair)
    comment = github_report(path, tmp_path)
    first_fold = comment.index("<details>")
    assert comment.index("### The change agreed") < comment.index("```diff") < first_fold
    assert comment.index(f"**Revision `{revision}`**") < first_fold
    assert comment.index("### Decision") < comment.index("**Agreed.**") < first_fold
    assert "<details><summary>Stances</summary>" in comment and "<details><summary>Participants</summary>" in comment
    assert "Cut to fit" not in comment and len(comment) <= LIMIT
    found = rendered(comment)
    assert found.problems == [] and found.open == []
    assert found.folds == comment.count("<details>")


def duelists(service: DuelService, source: Path, settings: DuelSettings) -> tuple[Player, Player]:
    """Alice and Bob, as :data:`DUELISTS` names them, in one duel."""
    return (
        join(service, source, "Alice", harness="claude-code", model_id="claude-x", settings=settings),
        join(service, source, "Bob", harness="codex", model_id="gpt-x", settings=settings),
    )


def test_a_fifty_turn_record_fits_one_comment_by_cutting_whole_sections_each_named(
    service: DuelService, source: Path, tmp_path: Path
) -> None:
    path = fifty_turns(service, source)
    report = read_report(path, env={}, read_from=tmp_path)
    assert report.turn_count == 50
    comment = render_github(report, f"debates/{path.name}")
    assert len(comment) <= LIMIT
    cut_line = next(line for line in comment.splitlines() if line.startswith("_Cut to fit one GitHub comment"))
    assert f"The record is `debates/{path.name}`" in cut_line
    named = cut_line.split("each section whole: ", 1)[1].split(". The record is", 1)[0].split("; ")
    assert named and all(named)
    for name in named:  # each section cut is named, and is wholly gone
        assert f"<summary>{name}</summary>" not in comment and f"### {name}" not in comment
    assert comment.index("### Decision") < comment.index("<details>") < comment.index(cut_line)
    for fence in re.findall(r"^(`{3,})\w*$", comment, flags=re.MULTILINE):
        assert comment.count(fence) % 2 == 0  # every fence opened is closed: no section was cut inside one
    found = rendered(comment)
    assert found.problems == [] and found.open == []


def test_hostile_recorded_text_closes_no_fold_opens_no_fence_and_runs_nothing(
    service: DuelService, source: Path, tmp_path: Path
) -> None:
    players = duelists(service, source, DuelSettings())
    path = Path()
    for n in (1, 2):
        text = make_turn(n, *DUELISTS[n], position_extra=" HOSTILE")
        path = Path(service.append(players[n - 1].seat, claim(service, players[n - 1]), text, release=True).debate_path)
    path.write_text(
        path.read_text().replace("HOSTILE", HOSTILE.replace("\n", " "))
    )  # edited by hand: the service refuses it
    report = read_report(path, env={}, read_from=tmp_path)
    report = replace(
        report,
        outcome=replace(report.outcome, explanation="~~~ " + HOSTILE),  # a line of its own, under the headline
        agreements=(Agreement(text=HOSTILE, turns=(1,), seats=(1, 2)),),
        model_written=(ModelSection(title=HOSTILE, model="m</summary>", text=HOSTILE),),
    )
    comment = render_github(report, "debates/x.md")
    found = rendered(comment)
    assert found.problems == [] and found.open == []
    assert found.folds == sum(1 for line in comment.splitlines() if line.startswith("<details><summary>"))
    assert "script" not in found.tags and found.comments == []
    assert found.tags <= {
        "h2",
        "h3",
        "p",
        "strong",
        "em",
        "code",
        "pre",
        "ul",
        "li",
        "blockquote",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "a",
        "details",
        "summary",
        "sub",
        "br",
        "del",
    }, found.tags
    shown = "".join(found.text)
    assert "<script>alert(1)</script>" in shown and "</details>" in shown  # shown to the reader, as text
    fences = [line for line in comment.splitlines() if line.startswith(("```", "~~~"))]
    assert fences == ["```mermaid", "```"]  # the chart's, and none from the record


def test_a_lone_backtick_or_tilde_run_in_recorded_text_opens_no_fence() -> None:
    assert inline("``` and ~~~") == "\\`\\`\\` and \\~\\~\\~"
    assert inline("a `code` b") == "a `code` b"  # a code span stays one
    assert inline("\\`x") == "\\`x"  # an escaped backtick stays as written


@pytest.mark.slow
def test_the_demo_record_renders_as_a_github_comment_decision_first(tmp_path: Path) -> None:
    demo = duel_command("demo", "--dir", "tmp", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    subprocess.run(["git", "init", "-q", str(tmp_path / "tmp")], check=True)
    (artifact,) = (tmp_path / "tmp" / "debates").glob("*.md")
    shown = duel_command("report", str(artifact), "--format", "github", cwd=tmp_path / "tmp")
    assert shown.returncode == 0, shown.stderr
    comment = shown.stdout
    first_fold = comment.index("<details>")
    assert comment.index("**ACCEPTED_CONSENSUS") < comment.index("```diff") < comment.index("### Decision") < first_fold
    assert f"`duel apply debates/{artifact.name}`" in comment
    assert len(comment) <= LIMIT
    found = rendered(comment)
    assert found.problems == [] and found.open == [] and found.folds >= 5
    # A comment resolves a relative link against the pull request's page: none is written, even with -o.
    written = duel_command("report", str(artifact), "--format", "github", "-o", "c.md", cwd=tmp_path / "tmp")
    assert written.returncode == 0, written.stderr
    for text in (comment, (tmp_path / "tmp" / "c.md").read_text(encoding="utf-8")):
        assert re.findall(r"\]\((?!https?://|#)([^)]*)\)", text) == []
