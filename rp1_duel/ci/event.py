"""What a workflow run says about itself: the pull request of its event, and which changed paths are records.

Pure: the event's JSON (``$GITHUB_EVENT_PATH``) is read by :mod:`.run`, and handed here as data
(docs/protocol.md section 11, "`duel ci github`").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import invalid_argument

__all__ = ["DEFAULT_GLOB", "PullRequest", "glob_pattern", "pull_request_of"]

DEFAULT_GLOB = "debates/**/*.md"
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1, or SHA-256 in a repository that uses it


@dataclass(kw_only=True, frozen=True)
class PullRequest:
    """The pull request a workflow run is for: its number, the base and head commits, and whether its head is
    in another repository (a fork, whose token is read-only)."""

    number: int
    base: str
    head: str
    from_fork: bool


def pull_request_of(event: Mapping[str, Any]) -> PullRequest | None:
    """The pull request of a ``pull_request`` event's payload; None for an event of another kind (a push). A
    payload that names a pull request without a number or both commits is an ``INVALID_ARGUMENT`` refusal."""
    found = event.get("pull_request")
    if not isinstance(found, Mapping):
        return None
    number = found.get("number", event.get("number"))
    base, head = _sha(found, "base"), _sha(found, "head")
    if not isinstance(number, int) or isinstance(number, bool) or number < 1 or base is None or head is None:
        raise invalid_argument("$GITHUB_EVENT_PATH holds a pull_request without its number, base.sha and head.sha")
    return PullRequest(
        number=number, base=base, head=head, from_fork=_repository(found, "head") != _repository(found, "base")
    )


def _sha(pull_request: Mapping[str, Any], side: str) -> str | None:
    ref = pull_request.get(side)
    sha = ref.get("sha") if isinstance(ref, Mapping) else None
    return sha if isinstance(sha, str) and _SHA.fullmatch(sha) else None


def _repository(pull_request: Mapping[str, Any], side: str) -> object:
    """The full name of the repository a side of the pull request is in (None when a fork was deleted)."""
    ref = pull_request.get(side)
    repo = ref.get("repo") if isinstance(ref, Mapping) else None
    return repo.get("full_name") if isinstance(repo, Mapping) else None


def glob_pattern(glob: str) -> re.Pattern[str]:
    """A path glob as a pattern over a path from the repository's root: ``*`` and ``?`` within one folder's
    name, ``**/`` any number of folders (none included), ``[…]`` a set, as git's and the shells' globstar."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and "]" in glob[i + 2 :]:
            end = glob.index("]", i + 2)
            inside = glob[i + 1 : end]
            out.append("[" + ("^" + re.escape(inside[1:]) if inside[:1] == "!" else re.escape(inside)) + "]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)
