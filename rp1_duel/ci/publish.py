"""A record's comment and its suggestions on the pull request, each found again by its marker: edited in place,
or posted when there is none; a suggestion no longer wanted deleted. Never two of one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from ..errors import DuelError
from ..review import code
from .event import PullRequest
from .github_api import GitHubApi
from .suggestions import Suggestion, suggestion_body
from .verdict import marker

__all__ = ["Publisher"]

_REFUSED = {403, 404}  # a comment someone else wrote, with our marker: not ours to edit or delete
_NOT_IN_DIFF = 422  # GitHub's answer to a review comment on a line outside the pull request's diff


def suggestion_marker(path: str) -> str:
    """The hidden line that finds a record's suggestions again."""
    return f"<!-- duel:suggestion {quote(path, safe='/')} -->"


class Publisher:
    """The comments of one pull request through ``api``: listed once, then kept in step as records publish."""

    def __init__(self, api: GitHubApi, repository: str, pull: PullRequest):
        self.api, self.pull = api, pull
        self._repo = f"/repos/{repository}"
        self._comments: list[dict[str, Any]] | None = None
        self._reviews: list[dict[str, Any]] | None = None

    def comment(self, path: str, body: str) -> str:
        """Make ``body`` the record's one comment: the first found by its marker (a bot's first) edited in place,
        else a new one. Which of the two it was."""
        if self._comments is None:
            self._comments = list(self.api.pages(f"{self._repo}/issues/{self.pull.number}/comments"))
        mark = marker(path) + "\n"
        ours = [one for one in self._comments if str(one.get("body") or "").startswith(mark)]
        for one in sorted(ours, key=lambda one: (one.get("user") or {}).get("type") != "Bot"):
            if one.get("body") == body:
                return "unchanged"
            try:
                self.api.call("PATCH", f"{self._repo}/issues/comments/{int(one['id'])}", {"body": body})
            except DuelError as exc:
                if exc.details.get("status") in _REFUSED:
                    continue
                raise
            one["body"] = body
            return "edited"
        made = self.api.call("POST", f"{self._repo}/issues/{self.pull.number}/comments", {"body": body})
        self._comments.append(made if isinstance(made, dict) else {"body": body})
        return "posted"

    def suggest(self, path: str, document: str | None, offered: Sequence[Suggestion]) -> int:
        """Make ``offered`` the record's suggestions on ``document``: those already there on the same lines kept,
        the others deleted, the missing posted. How many GitHub refused as outside the diff."""
        if self._reviews is None:
            self._reviews = list(self.api.pages(f"{self._repo}/pulls/{self.pull.number}/comments"))
        mark = suggestion_marker(path)
        wanted = {self._placed(path, document, one, mark): one for one in offered} if document else {}
        for one in [one for one in self._reviews if str(one.get("body") or "").startswith(mark + "\n")]:
            placed = (one.get("path"), one.get("start_line") or one.get("line"), one.get("line"), one.get("body"))
            if placed in wanted:
                del wanted[placed]
                continue
            try:
                self.api.call("DELETE", f"{self._repo}/pulls/comments/{int(one['id'])}")
            except DuelError as exc:
                if exc.details.get("status") not in _REFUSED:
                    raise
            self._reviews.remove(one)
        refused = 0
        for where, start, end, body in wanted:
            anchor = {"start_line": start, "start_side": "RIGHT"} if start != end else {}
            fields = {"body": body, "commit_id": self.pull.head, "path": where, "line": end, "side": "RIGHT", **anchor}
            try:
                made = self.api.call("POST", f"{self._repo}/pulls/{self.pull.number}/comments", fields)
            except DuelError as exc:
                if exc.details.get("status") != _NOT_IN_DIFF:
                    raise
                refused += 1
                continue
            self._reviews.append(made if isinstance(made, dict) else fields)
        return refused

    @staticmethod
    def _placed(path: str, document: str, one: Suggestion, mark: str) -> tuple[str, int, int, str]:
        """Where a suggestion goes, and its comment's body: the key a suggestion already there is found by."""
        lines = f"line {one.start}" if one.start == one.end else f"lines {one.start} to {one.end}"
        lead = f"The change the duel of {code(path)} agreed, for {lines}:"
        return document, one.start, one.end, suggestion_body(mark, lead, one)
