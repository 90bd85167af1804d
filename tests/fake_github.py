"""A fake GitHub REST API on 127.0.0.1 for ``duel ci github``: a pull request's issue comments and review
comments, listed a few a page (``Link`` headers), posted, edited and deleted; every request recorded, and refused
(401) unless it carries ``Authorization: Bearer TOKEN``.

A pytest plugin (conftest lists it in ``pytest_plugins``): the ``github`` fixture is a running
:class:`FakeGitHub`; ``github.url`` is its ``$GITHUB_API_URL``, ``github.requests`` what was asked, in order,
``github.issue_comments`` and ``github.review_comments`` what the pull request holds. ``redirect_to`` answers
every call with a redirect to another server (``other_github``, a second fake): the token must not follow;
``read_only`` refuses every write (403), as GitHub does a fork's token.

The workflow run around it: ``base`` (a fixture) makes the test's folder a repository with a base commit;
:func:`commit` makes a head, :func:`event` its ``pull_request`` payload, :func:`ci` runs ``duel ci github``.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from local_server import LocalServer, served_by

from helpers import duel_command

TOKEN = "ghs_fakeTokenNeverToBeSeen0123456789"
REPOSITORY = "octo/duel-test"
PULL = 7
PAGE = 2  # comments a page, whatever per_page asks: a few comments already span pages


@dataclass(frozen=True)
class Request:
    """One request as the fake saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeGitHub(LocalServer):
    """The fake API; ``redirect_to``: every call answered 307 to that URL's server instead."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.issue_comments: list[dict[str, Any]] = []
        self.review_comments: list[dict[str, Any]] = []
        self.redirect_to: str | None = None
        self.read_only = False  # a fork's pull request: its token may read, never write
        self._next_id = 100
        self._lock = threading.Lock()
        super().__init__(_Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def calls(self, method: str, pattern: str) -> list[Request]:
        """The requests of ``method`` whose path matches ``pattern``."""
        return [one for one in self.requests if one.method == method and re.fullmatch(pattern, one.path)]

    def add_comment(self, body: str, login: str = "someone", kind: str = "User") -> dict[str, Any]:
        """An issue comment someone else wrote."""
        with self._lock:
            return self._made(self.issue_comments, {"body": body, "user": {"login": login, "type": kind}})

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        headers = {name.lower(): value for name, value in handler.headers.items()}
        with self._lock:
            self.requests.append(Request(handler.command, parts.path, headers, body))
            if self.redirect_to is not None:
                return _send(handler, 307, {"Location": self.redirect_to + handler.path}, None)
            if headers.get("authorization") != f"Bearer {TOKEN}":
                return _send(handler, 401, {}, {"message": "Bad credentials"})
            if self.read_only and handler.command != "GET":
                return _send(handler, 403, {}, {"message": "Resource not accessible by integration"})
            status, answer, extra = self._route(handler.command, parts.path, parse_qs(parts.query), body)
        return _send(handler, status, extra, answer)

    def _route(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any, dict[str, str]]:
        base = f"/repos/{REPOSITORY}"
        issue, pulls = f"{base}/issues/{PULL}/comments", f"{base}/pulls/{PULL}/comments"
        if path in (issue, pulls):
            kept = self.issue_comments if path == issue else self.review_comments
            if method == "GET":
                return self._page(path, kept, int(query.get("page", ["1"])[0]))
            if method == "POST":
                made = {**body, "user": {"login": "github-actions[bot]", "type": "Bot"}}
                if path == pulls:
                    made["start_line"] = body.get("start_line")
                return 201, self._made(kept, made), {}
        found = re.fullmatch(rf"{base}/(issues|pulls)/comments/(\d+)", path)
        if found:
            kept = self.issue_comments if found.group(1) == "issues" else self.review_comments
            comment = next((one for one in kept if one["id"] == int(found.group(2))), None)
            if comment is None:
                return 404, {"message": "Not Found"}, {}
            if comment["user"]["type"] != "Bot":
                return 403, {"message": "Resource not accessible by integration"}, {}
            if method == "PATCH":
                comment["body"] = body["body"]
                return 200, comment, {}
            if method == "DELETE":
                kept.remove(comment)
                return 204, None, {}
        return 404, {"message": "Not Found"}, {}

    def _made(self, kept: list[dict[str, Any]], comment: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        made = {**comment, "id": self._next_id}
        kept.append(made)
        return made

    def _page(self, path: str, kept: list[dict[str, Any]], page: int) -> tuple[int, Any, dict[str, str]]:
        shown = kept[(page - 1) * PAGE : page * PAGE]
        more = len(kept) > page * PAGE
        link = {"Link": f'<{self.url}{path}?per_page=100&page={page + 1}>; rel="next"'} if more else {}
        return 200, shown, link


def _send(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], answer: Any) -> None:
    data = b"" if answer is None else json.dumps(answer).encode()
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        served_by(self, FakeGitHub).answer(self)

    def do_POST(self) -> None:
        served_by(self, FakeGitHub).answer(self)

    def do_PATCH(self) -> None:
        served_by(self, FakeGitHub).answer(self)

    def do_DELETE(self) -> None:
        served_by(self, FakeGitHub).answer(self)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002  BaseHTTPRequestHandler's signature
        pass


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        yield server


@pytest.fixture
def other_github() -> Iterator[FakeGitHub]:
    """A second fake, on another port: another origin, where the token must never go."""
    with FakeGitHub() as server:
        yield server


# -- a workflow run: a repository with a pull request's base and head, and `duel ci github` in it ----------

GIT_USER = ("-c", "user.name=Duel Tests", "-c", "user.email=tests@duel.invalid", "-c", "commit.gpgsign=false")


def git(folder: Path, *args: str) -> str:
    """``git …`` in ``folder``; its standard output."""
    return subprocess.run(
        ["git", *GIT_USER, *args], cwd=folder, capture_output=True, text=True, check=True
    ).stdout.strip()


def commit(folder: Path, message: str) -> str:
    """Everything in the work tree committed (what .gitignore files leave out aside); the commit."""
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "--allow-empty", "-m", message)
    return git(folder, "rev-parse", "HEAD")


@pytest.fixture
def base(tmp_path: Path, source: Path) -> str:
    """A repository at ``tmp_path`` whose base commit holds a README only (the document comes with the pull
    request); the base commit."""
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "README.md").write_text("# A project\n", encoding="utf-8")
    git(tmp_path, "add", "README.md")
    git(tmp_path, "commit", "-q", "-m", "base")
    return git(tmp_path, "rev-parse", "HEAD")


def event(folder: Path, base: str, head: str, *, fork: bool = False) -> Path:
    """A pull_request event's payload, as ``$GITHUB_EVENT_PATH`` holds it."""
    head_repository = "someone/duel-test" if fork else REPOSITORY
    payload = {
        "action": "synchronize",
        "number": PULL,
        "pull_request": {
            "number": PULL,
            "base": {"sha": base, "repo": {"full_name": REPOSITORY}},
            "head": {"sha": head, "repo": {"full_name": head_repository}},
        },
    }
    path = folder / ".git" / f"event-{head[:8]}.json"  # in the repository, never in a commit
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def ci(
    folder: Path, github: FakeGitHub | None, event_path: Path | None, *flags: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """``duel ci github`` in ``folder`` with a workflow run's environment."""
    run_env = {
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_STEP_SUMMARY": str(folder / ".git" / "summary.md"),
        "GITHUB_WORKSPACE": str(folder),
        "GITHUB_EVENT_PATH": "" if event_path is None else str(event_path),
        "GITHUB_TOKEN": TOKEN if github is not None else "",
        "GITHUB_API_URL": "" if github is None else github.url,
        **env,
    }
    ran = duel_command("ci", "github", *flags, cwd=folder, env=run_env)
    assert "Traceback" not in ran.stderr, ran.stderr
    return ran
