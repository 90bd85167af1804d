"""`duel ci github`'s pure rules and its GitHub client, in process (docs/protocol.md section 11, "`duel ci
github`"): which paths are records, the event's pull request, each record's check and the exit code, the
comment's limit and marker, suggestions that make the head's document the agreed one, the token's one origin."""

from __future__ import annotations

import pytest

from rp1_duel.ci import (
    GitHubApi,
    Suggestion,
    check_of,
    comment_body,
    diff_ranges,
    exit_code,
    fits,
    glob_pattern,
    marker,
    pull_request_of,
    suggested_changes,
    summary_text,
)
from rp1_duel.ci.suggestions import suggestion_body
from rp1_duel.errors import DuelError

from fake_github import PULL, REPOSITORY, TOKEN, FakeGitHub

SHA_A, SHA_B = "a" * 40, "b" * 40


@pytest.mark.parametrize(
    ("path", "matched"),
    [
        ("debates/x.md", True),
        ("debates/2026/q1/x.md", True),
        ("debates/x.md.orig", False),
        ("docs/debates/x.md", False),
        ("debates.md", False),
        ("debates/notes.txt", False),
    ],
)
def test_the_default_glob_takes_markdown_at_any_depth_under_debates_only(path: str, *, matched: bool) -> None:
    assert bool(glob_pattern("debates/**/*.md").fullmatch(path)) is matched


def test_a_glob_matches_within_one_folder_for_a_star_and_a_set() -> None:
    assert glob_pattern("records/*.md").fullmatch("records/a.md")
    assert not glob_pattern("records/*.md").fullmatch("records/old/a.md")
    assert glob_pattern("r/[!x]?.md").fullmatch("r/ab.md") and not glob_pattern("r/[!x]?.md").fullmatch("r/xb.md")


def test_a_pull_request_event_gives_its_number_and_commits_and_says_a_fork() -> None:
    def event(head_repository: str | None) -> dict[str, object]:
        head = {"sha": SHA_B, "repo": None if head_repository is None else {"full_name": head_repository}}
        return {"pull_request": {"number": 3, "base": {"sha": SHA_A, "repo": {"full_name": "o/r"}}, "head": head}}

    found = pull_request_of(event("o/r"))
    assert found is not None and (found.number, found.base, found.head, found.from_fork) == (3, SHA_A, SHA_B, False)
    assert pull_request_of(event("fork/r")).from_fork  # type: ignore[union-attr]
    assert pull_request_of(event(None)).from_fork  # type: ignore[union-attr]  # a deleted fork
    assert pull_request_of({"ref": "refs/heads/main", "after": SHA_B}) is None  # a push


def test_a_pull_request_event_without_its_commits_is_a_usage_error() -> None:
    with pytest.raises(DuelError) as refused:
        pull_request_of({"pull_request": {"number": 3, "base": {"sha": "main"}, "head": {"sha": SHA_B}}})
    assert refused.value.code == "INVALID_ARGUMENT" and refused.value.exit_code == 2


@pytest.mark.parametrize(
    ("outcome", "require_consensus", "passed"),
    [
        ("ACCEPTED_CONSENSUS", False, True),
        ("DISSENT", False, True),
        ("MAX_TURNS", False, True),
        ("TIMEOUT", False, True),
        (None, False, True),  # an open duel: valid, its outcome shown
        ("ACCEPTED_CONSENSUS", True, True),
        ("DISSENT", True, False),
        ("TIMEOUT", True, False),
    ],
)
def test_a_valid_record_passes_whatever_it_decided_unless_consensus_is_required(
    outcome: str | None, *, require_consensus: bool, passed: bool
) -> None:
    check = check_of(
        "debates/x.md", valid=True, problems=[], outcome=outcome, turns=4, require_consensus=require_consensus
    )
    assert check.passed is passed and exit_code([check]) == (0 if passed else 1)


def test_an_invalid_record_fails_naming_its_first_problem() -> None:
    check = check_of(
        "debates/x.md",
        valid=False,
        problems=["HASH_MISMATCH turn 2 was changed", "OUTCOME_MISMATCH x"],
        outcome="ACCEPTED_CONSENSUS",
        turns=3,
        require_consensus=False,
    )
    passed = check_of("debates/y.md", valid=True, problems=[], outcome="DISSENT", turns=2, require_consensus=False)
    assert not check.passed and check.reason == "invalid: HASH_MISMATCH turn 2 was changed (and 1 more)"
    assert exit_code([passed, check]) == 1 and exit_code([]) == 0


def test_a_comment_is_its_marker_first_and_at_most_one_github_comment_long() -> None:
    check = check_of("debates/x.md", valid=True, problems=[], outcome="DISSENT", turns=2, require_consensus=False)
    body = comment_body(check, lambda room: "x" * room, ["A note duel wrote."])
    assert len(body) == 65_536 and body.startswith("<!-- duel:record debates/x.md -->\n")


def test_a_marker_holds_a_hostile_name_percent_encoded() -> None:
    found = marker("debates/a --><script>`x`.md")
    assert found == "<!-- duel:record debates/a%20--%3E%3Cscript%3E%60x%60.md -->"
    assert found.count("-->") == 1


def apply(text: str, offered: list[Suggestion]) -> str:
    """``text`` with the suggestions applied as GitHub applies one: its lines replaced by the suggestion's."""
    lines = text.split("\n")
    for one in sorted(offered, key=lambda one: one.start, reverse=True):
        lines[one.start - 1 : one.end] = list(one.lines)
    return "\n".join(lines)


@pytest.mark.parametrize(
    "target",
    [
        "# T\n\nnew first\nb\nc\n",  # a line replaced
        "# T\n\na\nb\nc\nd\n",  # a line added at the end
        "added\n# T\n\na\nb\nc\n",  # a line added at the top
        "# T\n\na\nin between\nb\nc\n",  # a line added in the middle
        "# T\n\nc\n",  # lines removed
        "# T\n\na\nb\nc\n",  # nothing
    ],
)
def test_suggestions_applied_to_the_head_give_the_agreed_document(target: str) -> None:
    today = "# T\n\na\nb\nc\n"
    offered = suggested_changes(today, target)
    assert apply(today, offered) == target
    assert all(1 <= one.start <= one.end <= today.count("\n") for one in offered)


def test_a_suggestion_fits_only_wholly_inside_one_hunk_of_the_diff() -> None:
    hunks = diff_ranges("--- a/d.md\n+++ b/d.md\n@@ -1,3 +1,4 @@\n x\n+y\n z\n w\n@@ -20 +21,2 @@\n-a\n+b\n+c\n")
    assert hunks == [range(1, 5), range(21, 23)]
    assert fits(Suggestion(2, 4, ("q",)), hunks) and fits(Suggestion(22, 22, ()), hunks)
    assert not fits(Suggestion(4, 5, ("q",)), hunks) and not fits(Suggestion(10, 10, ("q",)), hunks)


def test_a_suggestions_fence_is_longer_than_any_backtick_run_it_holds() -> None:
    body = suggestion_body("<!-- m -->", "lead", Suggestion(1, 1, ("```", "````python")))
    assert "\n`````suggestion\n```\n````python\n`````\n" in body
    assert suggestion_body("<!-- m -->", "lead", Suggestion(3, 4, ())).endswith("```suggestion\n```\n")  # a deletion


def test_the_summary_tables_every_record_and_leaves_out_reports_past_its_limit() -> None:
    checks = [
        check_of(f"debates/{n}.md", valid=True, problems=[], outcome="DISSENT", turns=2, require_consensus=False)
        for n in range(20)
    ]
    text = summary_text(checks, ["r" * 60_000] * 20)
    assert all(f"| debates/{n}.md | DISSENT | passed |" in text for n in range(20))
    assert len(text.encode()) <= 1_000_000 and "left out here" in text


def test_listing_follows_every_page_with_the_token(github: FakeGitHub) -> None:
    for n in range(5):
        github.add_comment(f"comment {n}")
    api = GitHubApi(github.url, TOKEN)
    listed = list(api.pages(f"/repos/{REPOSITORY}/issues/{PULL}/comments"))
    assert [one["body"] for one in listed] == [f"comment {n}" for n in range(5)]
    assert len(github.requests) == 3 and all(
        one.headers["authorization"] == f"Bearer {TOKEN}" for one in github.requests
    )


def test_a_redirect_to_another_origin_is_refused_and_the_token_stays(
    github: FakeGitHub, other_github: FakeGitHub
) -> None:
    github.redirect_to = other_github.url
    with pytest.raises(DuelError) as refused:
        GitHubApi(github.url, TOKEN).call("POST", f"/repos/{REPOSITORY}/issues/{PULL}/comments", {"body": "x"})
    assert refused.value.code == "GITHUB_API_FAILED" and "another origin" in refused.value.message
    assert other_github.requests == [] and TOKEN not in refused.value.message


def test_an_http_error_is_one_line_with_its_status_and_never_the_token(github: FakeGitHub) -> None:
    with pytest.raises(DuelError) as refused:
        GitHubApi(github.url, "another-token").call("GET", f"/repos/{REPOSITORY}/issues/{PULL}/comments")
    error = refused.value
    assert error.message == f"GET /repos/{REPOSITORY}/issues/{PULL}/comments: HTTP 401: Bad credentials"
    assert error.details == {"status": 401} and "another-token" not in error.message
