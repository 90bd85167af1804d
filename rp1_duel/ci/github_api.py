"""The GitHub REST API on urllib: the token goes to ``$GITHUB_API_URL`` only.

A redirect is followed only within that origin (GitHub moves a renamed repository's calls so); one to another
origin is refused, never followed with or without the token. A failure is one line with its code
(``GITHUB_API_FAILED``), the token never in it (docs/protocol.md section 11, "`duel ci github`").
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from ..errors import DuelError, invalid_argument
from ..vocabulary import ErrorCode

__all__ = ["DEFAULT_API_URL", "GitHubApi"]

DEFAULT_API_URL = "https://api.github.com"
_TIMEOUT_SECONDS = 30
_MAX_PAGES = 100  # 10,000 comments at 100 a page: a pull request with more is not listed further
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="next"')
_MESSAGE_CHARS = 300


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follows a redirect within the API's origin; refuses one elsewhere (the request carries the token)."""

    def __init__(self, origin: tuple[str, str, int | None]):
        self.origin = origin

    def redirect_request(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        if _origin(newurl) != self.origin:
            fp.close()  # the redirect's own answer, read no further
            raise DuelError(
                ErrorCode.GITHUB_API_FAILED,
                f"{req.get_method()} {urlsplit(req.full_url).path}: redirected to another origin "
                f"({_origin(newurl)[1]}): not followed, the token goes to $GITHUB_API_URL only",
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class GitHubApi:
    """Calls on ``api_url`` (``$GITHUB_API_URL``) with ``token`` as the bearer."""

    def __init__(self, api_url: str, token: str):
        if urlsplit(api_url).scheme not in {"http", "https"} or not urlsplit(api_url).hostname:
            raise invalid_argument("$GITHUB_API_URL is not an http(s) URL")
        self.api_url = api_url.rstrip("/")
        self._token = token
        self._opener = urllib.request.build_opener(_SameOrigin(_origin(self.api_url)))

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One call of ``path`` (from the API's root): its JSON answer (None when it has none)."""
        return self._send(method, self.api_url + path, body)[0]

    def pages(self, path: str) -> Iterator[dict[str, Any]]:
        """Every item of a listing, page after page as its ``Link`` header leads (within the API's origin)."""
        url: str | None = self.api_url + path + ("&" if "?" in path else "?") + "per_page=100"
        for _ in range(_MAX_PAGES):
            if url is None:
                return
            answer, link = self._send("GET", url, None)
            yield from (item for item in answer or () if isinstance(item, dict))
            found = _NEXT.search(link or "")
            url = found.group(1) if found and _origin(found.group(1)) == _origin(self.api_url) else None

    def _send(self, method: str, url: str, body: dict[str, Any] | None) -> tuple[Any, str | None]:
        request = urllib.request.Request(  # noqa: S310  every URL is in $GITHUB_API_URL's origin: http(s)
            url,
            data=None if body is None else json.dumps(body).encode("utf-8"),
            method=method,
            headers={
                "Authorization": f"Bearer {self._token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "duel-ci",
                **({} if body is None else {"Content-Type": "application/json"}),
            },
        )
        where = f"{method} {urlsplit(url).path}"
        try:
            with self._opener.open(request, timeout=_TIMEOUT_SECONDS) as answer:
                data, link = answer.read(), answer.headers.get("Link")
        except urllib.error.HTTPError as exc:
            with exc:
                raise self._failure(where, exc.code, exc.read()[:65_536]) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise DuelError(ErrorCode.GITHUB_API_FAILED, self._redacted(f"{where}: {reason}")) from None
        try:
            return (json.loads(data) if data.strip() else None), link
        except ValueError:
            raise DuelError(ErrorCode.GITHUB_API_FAILED, f"{where}: the answer is not JSON") from None

    def _failure(self, where: str, status: int, data: bytes) -> DuelError:
        """An HTTP error as one line: the status and GitHub's ``message``."""
        try:
            message = json.loads(data).get("message")
        except (ValueError, AttributeError):
            message = None
        said = f": {' '.join(str(message).split())[:_MESSAGE_CHARS]}" if message else ""
        return DuelError(
            ErrorCode.GITHUB_API_FAILED, self._redacted(f"{where}: HTTP {status}{said}"), {"status": status}
        )

    def _redacted(self, text: str) -> str:
        """``text`` with the token, should an answer quote it, hidden."""
        return text.replace(self._token, "***") if self._token else text
