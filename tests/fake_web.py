"""A fake web on 127.0.0.1 for ``duel verify``: pages that state a claim, contradict it or say
nothing of it, dead links, redirects, slow and huge pages, a PDF, refusals and rate limits.

A pytest plugin (conftest lists it in ``pytest_plugins``): the ``web`` fixture is a running
:class:`FakeWeb`; ``web.url("/states")`` is a page's address and ``web.requests`` the paths
asked for, in order. The benchmark runs one too (``with FakeWeb() as web``).

Every page is described by :data:`PAGES`; ``/fact/N`` is a page stating fact N (for many
distinct citations), ``/echo`` answers with the request's Host and User-Agent headers, and
``/hold/N`` answers after a moment while counting how many requests wait at once.
"""

from __future__ import annotations

import contextlib
import json
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from local_server import LocalServer, served_by

CLAIM = "Fifteen-minute leases are renewed every five minutes by their holder."
STATED = "In production, fifteen-minute leases are renewed every five minutes by their holder."
CONTRADICTED = "Leases here are never renewed: a fifteen-minute lease simply expires."
SIDEBAR_QUOTE = "the renewal interval is a third of the lease"
# The figures page (docs/protocol.md section 10, "Figures on the page"): counts, a percentage, money, a duration.
FIGURES = "In 2023 the service renewed 1200 leases, 40 percent of them within 15 minutes, for $1.2 million."
PDF_QUOTE = "Leases of fifteen minutes were renewed every five minutes in all trials."
PDF = (Path(__file__).parent / "data" / "lease-study.pdf").read_bytes()
SLOW_SECONDS = 3.0
HOLD_SECONDS = 0.2
HUGE_BYTES = 3 * 1024 * 1024


def html(title: str, *paragraphs: str, aside: str = "") -> bytes:
    body = "".join(f"<p>{text}</p>" for text in paragraphs)
    side = f"<aside><table><tr><td>Note</td><td>{aside}</td></tr></table></aside>" if aside else ""
    return (
        f"<!doctype html><html><head><title>{title}</title><style>p {{ margin: 0 }}</style>"
        f"<script>var hidden = 'not text';</script></head><body><nav>Home | About</nav><main><h1>{title}</h1>"
        f"{body}</main>{side}</body></html>"
    ).encode()


HTML = "text/html; charset=utf-8"
# path -> (status, headers, body)
PAGES: dict[str, tuple[int, dict[str, str], bytes]] = {
    "/states": (200, {"Content-Type": HTML}, html("Lease operations", STATED, "Holders renew in the background.")),
    "/reports": (200, {"Content-Type": HTML}, html("News", f"A study reported that {STATED.lower()}")),
    "/contradicts": (200, {"Content-Type": HTML}, html("Lease operations", CONTRADICTED)),
    "/figures": (200, {"Content-Type": HTML}, html("Lease figures", FIGURES)),
    "/silent": (200, {"Content-Type": HTML}, html("Gardening", "Tomatoes want sun and steady water.")),
    "/sidebar": (
        200,
        {"Content-Type": HTML},
        html("Design notes", "The main text is about fencing.", aside=f"In short, {SIDEBAR_QUOTE}."),
    ),
    "/hex-charset": (200, {"Content-Type": "text/html; charset=hex"}, html("Hex", STATED)),
    "/zlib-charset": (200, {"Content-Type": "text/plain; charset=zlib_codec"}, f"Notes\n{STATED}\n".encode()),
    "/plain.txt": (200, {"Content-Type": "text/plain; charset=utf-8"}, f"Notes\n{STATED}\n".encode()),
    "/study.pdf": (200, {"Content-Type": "application/pdf"}, PDF),
    "/broken.pdf": (200, {"Content-Type": "application/pdf"}, b"%PDF-1.4\nthis is not a PDF at all"),
    "/image.png": (200, {"Content-Type": "image/png"}, b"\x89PNG\r\n\x1a\n" + b"\x00" * 64),
    "/gzipped": (200, {"Content-Type": HTML, "Content-Encoding": "gzip"}, b"\x1f\x8b\x08\x00"),
    "/missing": (404, {"Content-Type": HTML}, html("Not found", "No such page.")),
    "/gone": (410, {"Content-Type": HTML}, html("Gone", "This page was removed.")),
    "/forbidden": (403, {"Content-Type": HTML}, html("Forbidden", "Bots are not welcome.")),
    "/login": (401, {"Content-Type": HTML}, html("Log in", "Log in to read.")),
    "/broken-server": (500, {"Content-Type": HTML}, html("Error", "Something broke.")),
    "/limited-always": (429, {"Content-Type": HTML, "Retry-After": "0"}, html("Slow down", "Too many requests.")),
    "/limited-long": (429, {"Content-Type": HTML, "Retry-After": "3600"}, html("Slow down", "Come back later.")),
    "/redirect/1": (302, {"Location": "/states"}, b""),
    "/redirect/2": (301, {"Location": "/redirect/1"}, b""),
    "/redirect/3": (307, {"Location": "/redirect/2"}, b""),
    "/loop": (302, {"Location": "/loop"}, b""),
    "/to-ftp": (302, {"Location": "ftp://127.0.0.1/file"}, b""),
}


class FakeWeb(LocalServer):
    """The fake web on a free port of 127.0.0.1; ``limited_first`` 429s before ``/limited`` answers;
    with ``tls`` (a server-side context) it speaks HTTPS."""

    def __init__(self, limited_first: int = 1, tls: ssl.SSLContext | None = None):
        self.requests: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.limited_left = limited_first
        self.in_flight = self.max_in_flight = 0  # requests to /hold/… being answered at once
        self._lock = threading.Lock()
        super().__init__(_Handler)
        self.scheme = "https" if tls else "http"
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def count(self, path: str) -> int:
        return self.requests.count(path)

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        path = urlsplit(handler.path).path
        with self._lock:
            self.requests.append(path)
            self.headers.append({name.lower(): value for name, value in handler.headers.items()})
        if path.startswith("/fact/"):
            number = path.removeprefix("/fact/")
            return _send(handler, 200, {"Content-Type": HTML}, html(f"Fact {number}", f"Fact number {number} is true."))
        if path == "/echo":
            seen = {
                "host": handler.headers.get("Host"),
                "user_agent": handler.headers.get("User-Agent"),
                "accept_encoding": handler.headers.get("Accept-Encoding"),
            }
            return _send(handler, 200, {"Content-Type": "text/plain"}, json.dumps(seen).encode())
        if path == "/to-private":  # 127.0.0.2 is this machine too: only the address check keeps it out
            return _send(handler, 302, {"Location": self.url("/states", host="127.0.0.2")}, b"")
        if path.startswith("/hold/"):
            return self._hold(handler)
        special = {
            "/limited": self._limited,
            "/escape": _escape,
            "/angled-404": _angled_404,
            "/trickle": _trickle,
            "/slow": _slow,
            "/slow-missing": _slow_missing,
        }.get(path)
        if special is not None:
            return special(handler)
        if path == "/huge":  # no Content-Length: only counting the bytes read stops it
            return _stream(handler, HUGE_BYTES)
        if path == "/huge-declared":
            return _send(handler, 200, {"Content-Type": HTML}, b"x" * HUGE_BYTES)
        status, headers, body = PAGES.get(path, (404, {"Content-Type": HTML}, html("Not found", "No such page.")))
        return _send(handler, status, headers, body)

    def _limited(self, handler: BaseHTTPRequestHandler) -> None:
        """``/limited``: 429 while ``limited_left`` lasts, then the page."""
        with self._lock:
            limited, self.limited_left = self.limited_left > 0, self.limited_left - 1
        if limited:
            return _send(handler, 429, {"Content-Type": HTML, "Retry-After": "0"}, html("Slow down", "Wait."))
        return _send(handler, *PAGES["/states"])

    def _hold(self, handler: BaseHTTPRequestHandler) -> None:
        """``/hold/N``: answers after HOLD_SECONDS, counting who waits at once."""
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        time.sleep(HOLD_SECONDS)
        with self._lock:
            self.in_flight -= 1
        return _send(handler, *PAGES["/states"])


def _send(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: bytes) -> None:
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client stopped reading: a size limit
        handler.wfile.write(body)


def _stream(handler: BaseHTTPRequestHandler, size: int) -> None:
    handler.protocol_version = "HTTP/1.0"  # no length said: the body ends when the connection does
    handler.send_response(200)
    handler.send_header("Content-Type", HTML)
    handler.end_headers()
    chunk = b"<p>" + b"lease " * 10_000 + b"</p>"
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        for _ in range(size // len(chunk) + 1):
            handler.wfile.write(chunk)


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        served_by(self, FakeWeb).answer(self)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002  BaseHTTPRequestHandler's signature
        pass


@pytest.fixture
def web() -> Iterator[FakeWeb]:
    with FakeWeb() as server:
        yield server


# -- scripted voters: responders for the fake model servers (tests/fake_models.py) -----------------
# A responder gets the model request's body; these read which fake page the prompt holds.

REPORTED = f"A study reported that {STATED.lower()}"


def vote(answer: str, excerpt: str | None, basis: str | None) -> str:
    return "```json\n" + json.dumps({"answer": answer, "excerpt": excerpt, "basis": basis}) + "\n```"


def honest_vote(body: dict) -> str:
    """Judges as a careful reader would: from what the page says."""
    prompt = json.dumps(body)
    if REPORTED in prompt:
        return vote("supports", REPORTED, "reports")
    if STATED in prompt or PDF_QUOTE in prompt:
        return vote("supports", STATED if STATED in prompt else PDF_QUOTE, "states")
    if CONTRADICTED in prompt:
        return vote("refutes", CONTRADICTED, "states")
    return vote("insufficient", None, None)


def lying_vote(body: dict) -> str:
    """Supports anything, quoting words the page does not hold: an invalid vote."""
    return vote("supports", "Leases are renewed every thirty seconds, as every study shows.", "states")


def contrary_vote(body: dict) -> str:
    """Refutes anything, quoting the page's first words honestly: a valid vote that disagrees."""
    return vote("refutes", "In production", "circumstantial")


def rambling_vote(body: dict) -> str:
    """No JSON at all: an invalid vote."""
    return "I think the page mostly agrees, but it is hard to say."


def _angled_404(handler: BaseHTTPRequestHandler) -> None:
    """``/angled-404``: a 404 whose reason phrase holds angle brackets, as a page's words may."""
    handler.send_response(404, "Not <b>Found</b>")
    handler.end_headers()


def _escape(handler: BaseHTTPRequestHandler) -> None:
    """``/escape``: a reason phrase meant to reach a terminal."""
    handler.send_response(404, "Not \x1b]0;owned\x07Found")
    handler.end_headers()


def _trickle(handler: BaseHTTPRequestHandler) -> None:
    """``/trickle``: a byte every 50 ms; each read is quick, and the page never ends within a short deadline."""
    handler.send_response(200)
    handler.send_header("Content-Type", HTML)
    handler.send_header("Content-Length", "1000")
    handler.end_headers()
    for _ in range(1000):
        try:
            handler.wfile.write(b"x")
            handler.wfile.flush()
        except OSError:  # the client gave up
            return
        time.sleep(0.05)


def _slow(handler: BaseHTTPRequestHandler) -> None:
    """``/slow``: the page, after SLOW_SECONDS."""
    time.sleep(SLOW_SECONDS)
    _send(handler, *PAGES["/states"])


def _slow_missing(handler: BaseHTTPRequestHandler) -> None:
    """``/slow-missing``: a 404, after SLOW_SECONDS (a dead link on a slow host)."""
    time.sleep(SLOW_SECONDS)
    _send(handler, 404, {"Content-Type": HTML}, html("Not found", "No such page."))
