"""A record in a pull request, a fork's included, is hostile input (docs/protocol.md section 3, "Trust", and
section 11, "`duel ci github`"): `duel ci github` reads no duel configuration, fetches no cited source, runs no
command the repository names, prints recorded text only as printable text, and sends the token to
$GITHUB_API_URL only. Each as a real process in a real repository."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rp1_duel.coordination import DuelService

from fake_github import TOKEN, FakeGitHub, ci, commit, event, git
from fake_web import CLAIM, FakeWeb
from helpers import Player, agreed_on_an_edit, duel_citing

pytestmark = pytest.mark.slow


def test_a_redirect_to_another_origin_is_not_followed_and_the_token_goes_nowhere_else(
    tmp_path: Path,
    base: str,
    github: FakeGitHub,
    other_github: FakeGitHub,
    service: DuelService,
    pair: tuple[Player, Player],
) -> None:
    agreed_on_an_edit(service, *pair)
    head = commit(tmp_path, "a debate")
    github.redirect_to = other_github.url
    ran = ci(tmp_path, github, event(tmp_path, base, head))
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "duel: GITHUB_API_FAILED: GET /repos/" in ran.stderr and "redirected to another origin" in ran.stderr
    assert other_github.requests == []  # not followed: neither with the token nor without
    assert TOKEN not in ran.stdout + ran.stderr
    assert (tmp_path / ".git" / "summary.md").is_file()  # the summary was written before GitHub was called


def test_the_projects_duel_configuration_is_not_read(
    tmp_path: Path, base: str, github: FakeGitHub, service: DuelService, pair: tuple[Player, Player]
) -> None:
    agreed_on_an_edit(service, *pair)
    (tmp_path / "duel.toml").write_text('store = "postgresql://attacker.invalid/db"\n[[[ not toml\n', encoding="utf-8")
    (tmp_path / "duel.local.toml").write_text('base_url = "http://attacker.invalid"\n', encoding="utf-8")
    head = commit(tmp_path, "a debate, and a configuration that would send it elsewhere")
    ran = ci(tmp_path, github, event(tmp_path, base, head))
    assert ran.returncode == 0, ran.stdout + ran.stderr  # read, the file would be INVALID_CONFIG
    assert "INVALID_CONFIG" not in ran.stderr and "UNTRUSTED_CONFIG" not in ran.stderr


def test_no_cited_source_is_fetched(
    tmp_path: Path, base: str, github: FakeGitHub, service: DuelService, source: Path, web: FakeWeb
) -> None:
    duel_citing(service, source, {"counterclaim": CLAIM, "citing": (web.url("/states"), web.url("/missing"))})
    head = commit(tmp_path, "a debate citing pages")
    ran = ci(tmp_path, github, event(tmp_path, base, head), "--require-verified")
    assert ran.returncode == 1 and "VERIFICATION_MISSING" in ran.stdout, ran.stdout + ran.stderr
    assert web.requests == []


def test_no_command_the_repository_names_is_run(
    tmp_path: Path, base: str, github: FakeGitHub, service: DuelService, pair: tuple[Player, Player]
) -> None:
    ran_it = tmp_path.parent / f"{tmp_path.name}-ran"
    script = tmp_path.parent / f"{tmp_path.name}-script.sh"
    script.write_text(f'#!/bin/sh\ntouch {ran_it}\ncat "$1" 2>/dev/null\n', encoding="utf-8")
    script.chmod(0o755)
    (tmp_path / ".gitattributes").write_text("*.md diff=evil\n", encoding="utf-8")
    agreed_on_an_edit(service, *pair)
    head = commit(tmp_path, "a debate, and a diff driver")
    for key in ("diff.external", "diff.evil.textconv", "core.fsmonitor", "core.pager"):
        git(tmp_path, "config", key, str(script))  # set after the test's own commits, which would run it
    ran = ci(tmp_path, github, event(tmp_path, base, head))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert github.review_comments, "suggestions need the pull request's diff: git diff ran"
    assert not ran_it.exists()
    git(tmp_path, "diff", f"{base}...{head}")  # as git runs with that configuration, the command runs
    assert ran_it.exists()


def test_recorded_text_reaches_the_log_only_as_printable_text(
    tmp_path: Path, base: str, github: FakeGitHub, service: DuelService, pair: tuple[Player, Player]
) -> None:
    record, _ = agreed_on_an_edit(service, *pair)
    hostile = record.with_name("\x1b]0;owned\x07\x1b[2J.md")
    os.rename(record, hostile)
    head = commit(tmp_path, "a record with a terminal's commands in its name")
    ran = ci(tmp_path, github, event(tmp_path, base, head))
    assert ran.returncode in (0, 1), ran.stdout + ran.stderr
    assert "\\u001b]0;owned\\u0007\\u001b[2J.md" in ran.stdout
    assert not any(character in ran.stdout + ran.stderr for character in "\x1b\x07")


def test_a_forks_read_only_token_comments_nothing_and_the_check_stands(
    tmp_path: Path, base: str, github: FakeGitHub, service: DuelService, pair: tuple[Player, Player]
) -> None:
    agreed_on_an_edit(service, *pair)
    head = commit(tmp_path, "a debate from a fork")
    github.read_only = True
    ran = ci(tmp_path, github, event(tmp_path, base, head, fork=True))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "pull request from a fork is read-only: nothing commented" in ran.stdout
    assert github.issue_comments == [] and (tmp_path / ".git" / "summary.md").is_file()


def test_without_a_pull_request_every_tracked_record_is_checked_and_nothing_is_called(
    tmp_path: Path, base: str, github: FakeGitHub, service: DuelService, pair: tuple[Player, Player]
) -> None:
    record, _ = agreed_on_an_edit(service, *pair)
    commit(tmp_path, "a debate, pushed")
    ran = ci(tmp_path, github, None)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "not a pull_request event" in ran.stdout and f"debates/{record.name}: passed" in ran.stdout
    assert github.requests == []
    no_token = ci(tmp_path, None, event(tmp_path, base, git(tmp_path, "rev-parse", "HEAD")))
    assert no_token.returncode == 0 and "no GITHUB_TOKEN: nothing commented" in no_token.stdout
    not_asked = ci(tmp_path, github, event(tmp_path, base, git(tmp_path, "rev-parse", "HEAD")), "--no-comment")
    assert not_asked.returncode == 0 and github.requests == []


def test_a_wrong_environment_is_a_usage_error_of_one_line(tmp_path: Path, base: str) -> None:
    shallow = event(tmp_path, "0" * 40, base)
    ran = ci(tmp_path, None, shallow)
    assert ran.returncode == 2 and ran.stderr.startswith("duel: INVALID_ARGUMENT: git diff"), ran.stderr
    assert ran.stderr.count("\n") == 1
    broken = tmp_path / ".git" / "event.json"
    broken.write_text("{not json", encoding="utf-8")
    ran = ci(tmp_path, None, broken)
    assert ran.returncode == 2 and "GITHUB_EVENT_PATH cannot be read as JSON" in ran.stderr
