"""`duel ci github` as a process, in a real git repository holding a pull request's base and head commits, against
the fake GitHub REST API (docs/protocol.md section 11, "`duel ci github`"): one comment per record, edited in place;
suggestions that make the head's document the agreed one; the summary; the exit code of each outcome."""

from __future__ import annotations

from pathlib import Path

import pytest

from rp1_duel.clock import ManualClock
from rp1_duel.coordination import DuelService
from rp1_duel.settings import DuelSettings

from fake_github import PULL, REPOSITORY, TOKEN, FakeGitHub, ci, commit, event, git
from fake_web import CLAIM, FakeWeb
from helpers import (
    CONFIGURABLE_EXPIRY,
    DUELISTS,
    SOURCE,
    Player,
    agreed_on_an_edit,
    claim,
    duel_citing,
    duel_command,
    fifty_turns,
    join,
    make_turn,
)

pytestmark = pytest.mark.slow

AGREED = SOURCE.replace("Leases expire after fifteen minutes unless refreshed.", CONFIGURABLE_EXPIRY)
LIMIT = 65_536


def suggested(text: str, comments: list[dict[str, object]], path: str) -> str:
    """``text`` with every suggestion of ``comments`` on ``path`` applied, as GitHub's "Commit suggestion" does:
    the lines from start_line (or line) to line replaced by the suggestion's."""
    lines = text.split("\n")
    placed = []
    for comment in comments:
        if comment["path"] != path:
            continue
        body = str(comment["body"])
        fence = body[body.index("suggestion\n") - 3 : body.index("suggestion\n")]
        inside = body[body.index("suggestion\n") + len("suggestion\n") : body.rindex(fence)]
        new = inside.split("\n")[:-1] if inside else []
        end = int(str(comment["line"]))
        start = int(str(comment.get("start_line") or end))
        placed.append((start, end, new))
    for start, end, new in sorted(placed, reverse=True):
        lines[start - 1 : end] = new
    return "\n".join(lines)


def test_the_comment_is_posted_once_then_edited_in_place_and_its_suggestions_give_the_agreed_document(
    tmp_path: Path, base: str, github: FakeGitHub, service: DuelService, pair: tuple[Player, Player]
) -> None:
    record, revision = agreed_on_an_edit(service, *pair)
    name = f"debates/{record.name}"
    for n in range(3):  # the pull request's conversation already spans pages
        github.add_comment(f"a reviewer's comment {n}")
    head = commit(tmp_path, "a design and its debate")
    first = ci(tmp_path, github, event(tmp_path, base, head))
    assert first.returncode == 0, first.stdout + first.stderr
    assert f"{name}: passed (ACCEPTED_CONSENSUS)" in first.stdout and f"{name}: comment posted" in first.stdout
    assert f"\n{name}: valid (3 turns, ACCEPTED_CONSENSUS)" in "\n" + first.stdout  # named from the root
    ours = [one for one in github.issue_comments if one["body"].startswith(f"<!-- duel:record {name} -->\n")]
    assert len(ours) == 1 and "**ACCEPTED_CONSENSUS" in ours[0]["body"] and revision in ours[0]["body"]
    assert "offered as 1 suggested change" in ours[0]["body"]
    assert all(one.headers["authorization"] == f"Bearer {TOKEN}" for one in github.requests)
    (suggestion,) = github.review_comments
    assert suggestion["commit_id"] == head and suggestion["side"] == "RIGHT" and "```suggestion\n" in suggestion["body"]
    assert suggested(git(tmp_path, "show", f"{head}:design.md") + "\n", github.review_comments, "design.md") == AGREED
    summary = (tmp_path / ".git" / "summary.md").read_text(encoding="utf-8")
    assert f"| {name} | ACCEPTED_CONSENSUS | passed |" in summary and "### Decision" in summary

    # A new commit: the document's last section changes; the comment is found again (on page 2) and edited.
    design = tmp_path / "design.md"
    design.write_text(design.read_text(encoding="utf-8") + "\n## Audit\nEvery close is logged.\n", encoding="utf-8")
    github.add_comment(f"<!-- duel:record {name} -->\nnot duel's: a person quoting its marker")
    again = commit(tmp_path, "an audit section")
    second = ci(tmp_path, github, event(tmp_path, base, again))
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"{name}: comment edited" in second.stdout
    ours = [one for one in github.issue_comments if one["body"].startswith(f"<!-- duel:record {name} -->\n")]
    assert len(ours) == 2 and ours[1]["body"].endswith("a person quoting its marker")  # the person's untouched
    assert len(github.calls("POST", rf"/repos/{REPOSITORY}/issues/{PULL}/comments")) == 1
    assert len(github.calls("PATCH", rf"/repos/{REPOSITORY}/issues/comments/\d+")) == 1
    assert len(github.review_comments) == 1  # the same suggestion, on the same line: kept, not posted again
    assert github.calls("GET", rf"/repos/{REPOSITORY}/issues/{PULL}/comments")[-1].path.endswith("/comments")
    text = git(tmp_path, "show", f"{again}:design.md") + "\n"
    assert suggested(text, github.review_comments, "design.md") == AGREED + "\n## Audit\nEvery close is logged.\n"
    third = ci(tmp_path, github, event(tmp_path, base, again))  # the same head again: nothing to change
    assert third.returncode == 0 and f"{name}: comment unchanged" in third.stdout, third.stdout + third.stderr
    assert len(github.calls("PATCH", rf"/repos/{REPOSITORY}/issues/comments/\d+")) == 1
    assert len(github.calls("POST", rf"/repos/{REPOSITORY}/pulls/{PULL}/comments")) == 1  # one suggestion, ever

    # The agreed change applied in the pull request: its suggestion is stale, and deleted.
    applied = duel_command("apply", name, cwd=tmp_path)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    done = commit(tmp_path, "the agreed change, applied")
    fourth = ci(tmp_path, github, event(tmp_path, base, done))
    assert fourth.returncode == 0, fourth.stdout + fourth.stderr
    assert github.review_comments == [] and len(github.calls("DELETE", r".*/pulls/comments/\d+")) == 1
    assert "holds the change of the agreed revision" in github.issue_comments[3]["body"]


def test_a_change_outside_the_pull_requests_diff_is_no_suggestion_but_the_patch_and_duel_apply(
    tmp_path: Path, base: str, github: FakeGitHub, service: DuelService, source: Path, pair: tuple[Player, Player]
) -> None:
    git(tmp_path, "add", "design.md")
    git(tmp_path, "commit", "-q", "-m", "the design, on the base branch")
    base = git(tmp_path, "rev-parse", "HEAD")
    source.write_text(SOURCE.replace("A crashed holder", "A crashed or stopped holder"), encoding="utf-8")
    record, _ = agreed_on_an_edit(service, *pair)  # on lines 1 to 7; the pull request changes line 11
    head = commit(tmp_path, "the failure section, and a debate")
    ran = ci(tmp_path, github, event(tmp_path, base, head))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert github.review_comments == []
    (comment,) = github.issue_comments
    assert "1 change lies outside this pull request's diff" in comment["body"]
    assert f"`duel apply debates/{record.name}`" in comment["body"] and "```diff" in comment["body"]


def closed(service: DuelService, source: Path, stances: list[str], outcome: str, max_turns: int = 6) -> Path:
    """A duel whose turns take ``stances`` in order, closed with ``outcome``: its record."""
    settings = DuelSettings(max_turns=max_turns)
    players = [
        join(service, source, name, harness=h, model_id=m, settings=settings) for name, h, m in DUELISTS.values()
    ]
    path = ""
    for n, stance in enumerate(stances, start=1):
        player = players[(n - 1) % 2]
        text = make_turn(n, *DUELISTS[2 - n % 2], stance)
        path = service.append(player.seat, claim(service, player), text, release=True).debate_path
    last = players[(len(stances) - 1) % 2]  # the seat that reached the outcome closes
    service.release_lock(last.seat, claim(service, last), close=True, outcome=outcome)
    return Path(path)


def timed_out(service: DuelService, source: Path, clock: ManualClock, debate_dir: Path) -> Path:
    """A duel whose second seat never came: closed TIMEOUT."""
    alice = join(service, source, "Alice", settings=DuelSettings(peer_wait_seconds=900))
    clock.advance(900)
    lease = service.claim_lock(alice.seat, for_timeout=True).lease
    assert lease is not None
    service.release_lock(alice.seat, lease, close=True, outcome="TIMEOUT")
    return next(debate_dir.glob("*.md"))


def tampered(record: Path) -> Path:
    """One letter of turn 2's Position changed in place, as a hand edit would."""
    text = record.read_text(encoding="utf-8")
    position = text.index("**Position**", text.index("<!-- duel:turn n=2 "))
    changed = text.index("e", position + len("**Position**"))
    record.write_text(text[:changed] + "a" + text[changed + 1 :], encoding="utf-8")
    return record


@pytest.mark.parametrize(
    ("outcome", "flags", "code"),
    [
        ("ACCEPTED_CONSENSUS", (), 0),
        ("ACCEPTED_CONSENSUS", ("--require-consensus",), 0),
        ("DISSENT", (), 0),
        ("DISSENT", ("--require-consensus",), 1),
        ("MAX_TURNS", (), 0),
        ("MAX_TURNS", ("--require-consensus",), 1),
        ("TIMEOUT", (), 0),
        ("TAMPERED", (), 1),
    ],
)
def test_each_outcome_exits_as_documented(
    tmp_path: Path,
    base: str,
    github: FakeGitHub,
    service: DuelService,
    source: Path,
    clock: ManualClock,
    debate_dir: Path,
    request: pytest.FixtureRequest,
    outcome: str,
    flags: tuple[str, ...],
    code: int,
) -> None:
    if outcome == "ACCEPTED_CONSENSUS":
        record, _ = agreed_on_an_edit(service, *request.getfixturevalue("pair"))
    elif outcome == "DISSENT":
        record = closed(service, source, ["DISSENTING", "DISSENTING"], "DISSENT")
    elif outcome == "MAX_TURNS":
        record = closed(service, source, ["OPEN_TO_DEBATE", "OPEN_TO_DEBATE"], "MAX_TURNS", max_turns=2)
    elif outcome == "TIMEOUT":
        record = timed_out(service, source, clock, debate_dir)
    else:
        record = tampered(agreed_on_an_edit(service, *request.getfixturevalue("pair"))[0])
    head = commit(tmp_path, "a debate")
    ran = ci(tmp_path, github, event(tmp_path, base, head), *flags)
    assert ran.returncode == code, ran.stdout + ran.stderr
    shown = "INVALID" if outcome == "TAMPERED" else outcome
    assert f"debates/{record.name}: {'passed' if code == 0 else 'FAILED'}" in ran.stdout
    assert shown in ran.stdout
    (comment,) = github.issue_comments
    assert ("**failed**" in comment["body"]) == (code == 1)


def test_a_fifty_turn_records_comment_fits_one_github_comment(
    tmp_path: Path, base: str, github: FakeGitHub, service: DuelService, source: Path
) -> None:
    record = fifty_turns(service, source, words=400)  # a report longer than one comment
    head = commit(tmp_path, "a long debate")
    ran = ci(tmp_path, github, event(tmp_path, base, head))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (comment,) = github.issue_comments
    assert len(comment["body"]) <= LIMIT
    assert comment["body"].startswith(f"<!-- duel:record debates/{record.name} -->\n")
    assert "_Cut to fit one GitHub comment" in comment["body"]  # it needed cutting: the limit was reached


def test_a_record_whose_cited_source_was_ruled_fabricated_fails_only_with_require_verified(
    tmp_path: Path, base: str, github: FakeGitHub, service: DuelService, source: Path, web: FakeWeb
) -> None:
    record = duel_citing(service, source, {"counterclaim": CLAIM, "citing": (web.url("/states"), web.url("/missing"))})
    verified = duel_command("verify", "--allow-private-hosts", "--no-models", str(record), cwd=tmp_path)
    assert verified.returncode == 1 and "url fabricated" in verified.stdout, verified.stdout + verified.stderr
    head = commit(tmp_path, "a debate citing a dead link, and its verification")
    plain = ci(tmp_path, None, event(tmp_path, base, head))
    assert plain.returncode == 0, plain.stdout + plain.stderr
    required = ci(tmp_path, None, event(tmp_path, base, head), "--require-verified")
    assert required.returncode == 1, required.stdout + required.stderr
    assert f"debates/{record.name}: FAILED" in required.stdout and "CITATION_FABRICATED" in required.stdout


def test_a_file_the_glob_matches_that_is_no_record_fails_and_its_comment_says_why(
    tmp_path: Path, base: str, github: FakeGitHub
) -> None:
    (tmp_path / "debates").mkdir()
    (tmp_path / "debates" / "notes.md").write_text("# Notes\n\nNot a debate.\n", encoding="utf-8")
    head = commit(tmp_path, "notes where records go")
    ran = ci(tmp_path, github, event(tmp_path, base, head))
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "debates/notes.md: FAILED (unreadable): invalid: UNREADABLE not a duel artifact" in ran.stdout
    (comment,) = github.issue_comments
    assert comment["body"].count("not a duel artifact") == 1 and "`duel report` cannot read it" in comment["body"]
