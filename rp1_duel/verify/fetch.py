"""The network edge: fetching the pages a model chose to cite, guarded.

Every fetch (docs/protocol.md section 10, "Fetching"):
- http and https only; the host is resolved once, every address is judged
  (:mod:`.addresses`), and the connection goes to the very address judged, so a second DNS
  answer cannot swap in another (DNS rebinding). TLS checks the certificate against the host
  name, sent as SNI.
- Redirects are followed by hand, at most :attr:`FetchPolicy.max_redirects`, each hop judged
  like the first. 429 and 503 are retried after the server's ``retry-after`` (capped).
- The body is read up to :attr:`FetchPolicy.max_bytes`, the whole fetch within
  :attr:`FetchPolicy.timeout_seconds`; ``Accept-Encoding: identity``, so nothing is
  decompressed (no decompression bombs). Proxy variables (``HTTPS_PROXY``…) are not read: a
  proxy would resolve and connect on its own, past the address checks.
- Fetches run concurrently, at most :attr:`FetchPolicy.concurrency` at once and
  :attr:`FetchPolicy.per_host` per host.

Built on the standard library's ``http.client`` over a socket this module connects itself.
"""

from __future__ import annotations

import contextlib
import email.utils
import errno
import http.client
import ipaddress
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timezone
from functools import cache, partial
from typing import Final
from urllib.parse import SplitResult, quote, urljoin, urlsplit

from ..vocabulary import FetchFailure
from ._addresses import IPAddress, refusal

__all__ = ["FetchPolicy", "Fetched", "Fetcher", "retry_after"]

REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
RETRIED: Final = frozenset({429, 503})
ACCEPT: Final = "text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.8,*/*;q=0.1"
_READ_CHUNK = 64 * 1024
# A request target keeps what the URL says, with spaces and non-ASCII characters percent-encoded.
_PRINTABLE_ASCII = "".join(chr(code) for code in range(33, 127))
_HOST = re.compile(r"[A-Za-z0-9._:-]+")  # a name after IDNA, or an address: nothing that could end a header
_NO_SUCH_NAME = {getattr(socket, name) for name in ("EAI_NONAME", "EAI_NODATA") if hasattr(socket, name)}
# Names reserved to exist (RFC 2606): a resolver that knows none of them is cut off, and its
# "no such name" says nothing about the cited host.
_KNOWN_NAMES: Final = ("example.com", "example.org", "example.net")


def user_agent() -> str:
    import rp1_duel

    return f"duel-verify/{rp1_duel.__version__} (rp1-duel: checks the URLs a debate cites)"


def resolve_host(host: str, port: int) -> list[IPAddress]:
    """The host's addresses, by the system resolver (raises socket.gaierror)."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in found]
    return list(dict.fromkeys(addresses))


@dataclass(kw_only=True, frozen=True)
class FetchPolicy:
    """What a fetch may do. Tests inject ``refuse`` (which addresses are refused) and ``resolve``."""

    allow_private_hosts: bool = False
    max_bytes: int = 10 * 1024 * 1024
    timeout_seconds: float = 20.0  # the whole fetch: every hop and retry wait
    connect_timeout_seconds: float = 10.0
    max_redirects: int = 5
    max_attempts: int = 3  # of one request answered 429 or 503
    max_retry_wait_seconds: float = 10.0  # a longer retry-after is not waited for
    concurrency: int = 8
    per_host: int = 2
    user_agent: str = field(default_factory=user_agent)
    refuse: Callable[[IPAddress], str | None] | None = None  # default: addresses.refusal
    resolve: Callable[[str, int], list[IPAddress]] = resolve_host
    ssl_context: ssl.SSLContext | None = None  # default: the system's trust store, hostname checked
    sleep: Callable[[float], None] = time.sleep

    def refusal(self, address: IPAddress) -> str | None:
        """Why ``address`` may not be fetched from under this policy, or None when it may."""
        judge = self.refuse or partial(refusal, allow_private=self.allow_private_hosts)
        return judge(address)


@dataclass(kw_only=True, frozen=True)
class Fetched:
    """What came back for one URL: a body to extract, or why there is none."""

    url: str
    final_url: str | None = None
    status: int | None = None
    content_type: str | None = None  # the media type, lower case, without parameters
    charset: str | None = None
    body: bytes | None = None
    error: str | None = None  # a FetchFailure code
    detail: str | None = None


class _Failed(Exception):
    def __init__(self, error: str, detail: str, status: int | None = None):
        super().__init__(detail)
        self.error = error
        self.detail = detail
        self.status = status


@dataclass(kw_only=True)
class _Answer:
    status: int
    reason: str
    headers: http.client.HTTPMessage
    body: bytes | None = None


class Fetcher:
    """Fetches under one policy; safe to share between threads."""

    def __init__(self, policy: FetchPolicy | None = None):
        self.policy = policy or FetchPolicy()
        self._hosts: dict[str, threading.BoundedSemaphore] = {}
        self._hosts_lock = threading.Lock()
        self._resolver_answers: bool | None = None

    def fetch_all(
        self, urls: Iterable[str], fetched: Callable[[Fetched], None] = lambda _page: None
    ) -> dict[str, Fetched]:
        """Each URL fetched once, concurrently within the policy's caps; ``fetched`` is told of each as it lands."""
        unique = list(dict.fromkeys(urls))
        if not unique:
            return {}

        def fetch(url: str) -> Fetched:
            page = self.fetch(url)
            fetched(page)
            return page

        with ThreadPoolExecutor(max_workers=min(self.policy.concurrency, len(unique))) as pool:
            return dict(zip(unique, pool.map(fetch, unique), strict=True))

    def fetch(self, url: str) -> Fetched:
        """One URL fetched, redirects followed: its body, or why there is none (never raises)."""
        deadline = time.monotonic() + self.policy.timeout_seconds
        current = url
        try:
            for _hop in range(self.policy.max_redirects + 1):
                answer = self._with_retries(current, deadline)
                location = answer.headers.get("Location")
                if answer.status not in REDIRECTS or not location:
                    return self._finished(url, current, answer)
                current = urljoin(current, location.strip())
        except _Failed as failed:
            return Fetched(url=url, final_url=current, status=failed.status, error=failed.error, detail=failed.detail)
        return Fetched(
            url=url,
            final_url=current,
            error=FetchFailure.TOO_MANY_REDIRECTS,
            detail=f"more than {self.policy.max_redirects} redirects",
        )

    def _finished(self, url: str, final: str, answer: _Answer) -> Fetched:
        if not 200 <= answer.status < 300:
            raise _Failed(FetchFailure.HTTP_STATUS, f"HTTP {answer.status} {answer.reason}".strip(), answer.status)
        content_type = answer.headers.get_content_type() if answer.headers.get("Content-Type") else None
        return Fetched(
            url=url,
            final_url=final,
            status=answer.status,
            content_type=content_type,
            charset=answer.headers.get_content_charset(),
            body=answer.body,
        )

    def _with_retries(self, url: str, deadline: float) -> _Answer:
        """The answer to ``url``, 429 and 503 asked again after the wait the server names (else 1 s, 2 s)."""
        attempt = 1
        while True:
            answer = self._request(url, deadline)
            if answer.status not in RETRIED:
                return answer
            said = f"HTTP {answer.status} {answer.reason}".strip()
            if attempt == self.policy.max_attempts:
                raise _Failed(FetchFailure.HTTP_STATUS, f"{said} after {attempt} attempts", answer.status)
            wait = retry_after(answer.headers.get("Retry-After"))
            wait = 2.0 ** (attempt - 1) if wait is None else wait
            if wait > self.policy.max_retry_wait_seconds or time.monotonic() + wait >= deadline:
                raise _Failed(
                    FetchFailure.HTTP_STATUS,
                    f"{said}; the {wait:g} s it asks to wait is more than this fetch may take",
                    answer.status,
                )
            self.policy.sleep(wait)
            attempt += 1

    def _request(self, url: str, deadline: float) -> _Answer:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise _Failed(FetchFailure.REFUSED_SCHEME, f"{scheme or 'no'} scheme: only http and https are fetched")
        try:
            host = (parts.hostname or "").encode("idna").decode("ascii")
            port = parts.port or (443 if scheme == "https" else 80)
        except (UnicodeError, ValueError):
            raise _Failed(FetchFailure.NAME_NOT_FOUND, f"{parts.netloc!r} is not a host name") from None
        if not _HOST.fullmatch(host):
            raise _Failed(FetchFailure.NAME_NOT_FOUND, f"{parts.netloc!r} names no host")
        with self._host_slot(host):
            sock = self._connect(host, port, deadline)
            try:
                if scheme == "https":
                    sock = self._tls(sock, host)
                return self._exchange(sock=sock, parts=parts, host=host, port=port, scheme=scheme, deadline=deadline)
            finally:
                sock.close()

    def _resolver_works(self) -> bool:
        """Whether the resolver answers for names that exist: asked once, on the first unknown name."""
        with self._hosts_lock:
            if self._resolver_answers is None:
                self._resolver_answers = any(self._resolves(name) for name in _KNOWN_NAMES)
            return self._resolver_answers

    def _resolves(self, name: str) -> bool:
        try:
            return bool(self.policy.resolve(name, 443))
        except (OSError, UnicodeError, ValueError):
            return False

    def _host_slot(self, host: str) -> threading.BoundedSemaphore:
        with self._hosts_lock:
            return self._hosts.setdefault(host, threading.BoundedSemaphore(self.policy.per_host))

    def _connect(self, host: str, port: int, deadline: float) -> socket.socket:
        failures: list[OSError] = []
        for address in self._addresses(host, port):
            family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.settimeout(_left(deadline, self.policy.connect_timeout_seconds))
                sock.connect((str(address), port))
            except OSError as exc:
                sock.close()
                failures.append(exc)
            else:
                return sock
        if all(isinstance(f, ConnectionRefusedError) for f in failures):
            raise _Failed(FetchFailure.CONNECTION_REFUSED, f"{host} refused the connection")
        if any(isinstance(f, TimeoutError) for f in failures):
            raise _Failed(FetchFailure.TIMEOUT, f"{host} did not answer in time")
        raise _Failed(FetchFailure.CONNECTION_FAILED, f"cannot connect to {host}: {_reason(failures[-1])}")

    def _addresses(self, host: str, port: int) -> list[IPAddress]:
        """The host's addresses, each judged: one refused address refuses the host."""
        try:
            addresses = self.policy.resolve(host, port)
        except socket.gaierror as exc:
            if exc.errno in _NO_SUCH_NAME and self._resolver_works():
                raise _Failed(FetchFailure.NAME_NOT_FOUND, f"no such host: {host}") from None
            if exc.errno in _NO_SUCH_NAME:
                raise _Failed(
                    FetchFailure.DNS_FAILED,
                    f"cannot resolve {host}: the resolver knows no name at all (offline, or DNS blocked)",
                ) from None
            raise _Failed(FetchFailure.DNS_FAILED, f"cannot resolve {host}: {exc.strerror or exc}") from None
        except (OSError, UnicodeError, ValueError) as exc:
            raise _Failed(FetchFailure.DNS_FAILED, f"cannot resolve {host}: {exc}") from None
        refused = [reason for address in addresses if (reason := self.policy.refusal(address))]
        if refused or not addresses:
            # One refused address refuses the host: a name that also points inside is not fetched.
            raise _Failed(FetchFailure.REFUSED_ADDRESS, f"{host}: {refused[0] if refused else 'no address'}")
        return addresses

    def _tls(self, sock: socket.socket, host: str) -> socket.socket:
        context = self.policy.ssl_context or _default_context()
        try:
            return context.wrap_socket(sock, server_hostname=host)
        except ssl.SSLCertVerificationError as exc:
            raise _Failed(
                FetchFailure.CONNECTION_FAILED, f"{host}: TLS certificate refused: {exc.verify_message or exc.reason}"
            ) from None
        except (ssl.SSLError, OSError) as exc:
            if isinstance(exc, TimeoutError):
                raise _Failed(FetchFailure.TIMEOUT, f"{host} did not complete TLS in time") from None
            raise _Failed(FetchFailure.CONNECTION_FAILED, f"{host}: TLS failed: {_reason(exc)}") from None

    def _exchange(
        self, sock: socket.socket, *, parts: SplitResult, host: str, port: int, scheme: str, deadline: float
    ) -> _Answer:
        """One GET on a connected socket, written by hand: every header is this module's choice."""
        path = quote((parts.path or "/") + (f"?{parts.query}" if parts.query else ""), safe=_PRINTABLE_ASCII)
        shown = f"[{host}]" if ":" in host else host
        headers = {
            "Host": shown if port == (443 if scheme == "https" else 80) else f"{shown}:{port}",
            "User-Agent": self.policy.user_agent,
            "Accept": ACCEPT,
            "Accept-Encoding": "identity",
            "Connection": "close",
        }
        request = f"GET {path} HTTP/1.1\r\n" + "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        # A socket timeout bounds one read only: a server trickling a byte a second would never trip it.
        # At the deadline the connection is cut, whatever it is doing, so the deadline is the whole fetch's.
        cut = threading.Timer(max(0.0, deadline - time.monotonic()), _shut, (sock,))
        cut.daemon = True
        cut.start()
        try:
            return self._converse(sock, request, deadline)
        except (http.client.HTTPException, OSError) as exc:  # TimeoutError among them
            if isinstance(exc, TimeoutError) or time.monotonic() >= deadline:
                raise _Failed(
                    FetchFailure.TIMEOUT, f"{host} did not answer within {self.policy.timeout_seconds:g} s"
                ) from None
            raise _Failed(FetchFailure.CONNECTION_FAILED, f"{host}: {_reason(exc)}") from None
        finally:
            cut.cancel()

    def _converse(self, sock: socket.socket, request: str, deadline: float) -> _Answer:
        """Send the request and read the answer; a socket cut at the deadline surfaces as an OSError."""
        sock.settimeout(_left(deadline))
        sock.sendall((request + "\r\n").encode("ascii"))
        response = http.client.HTTPResponse(sock, method="GET")
        try:
            response.begin()
            # The reason phrase is the server's text, bound for a terminal: printable characters only.
            reason = "".join(char if char.isprintable() else "?" for char in response.reason[:100])
            answer = _Answer(status=response.status, reason=reason, headers=response.headers)
            if 200 <= response.status < 300:
                answer.body = self._body(response, sock, deadline)
            return answer
        finally:
            response.close()

    def _body(self, response: http.client.HTTPResponse, sock: socket.socket, deadline: float) -> bytes:
        encoding = (response.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding != "identity":
            raise _Failed(
                FetchFailure.UNSUPPORTED_CONTENT,
                f"the page came {encoding}-encoded although identity was asked for",
                response.status,
            )
        limit = self.policy.max_bytes
        declared = response.headers.get("Content-Length")
        if declared and declared.strip().isdigit() and int(declared) > limit:
            raise _Failed(
                FetchFailure.TOO_LARGE, f"{int(declared)} bytes, over the {_size(limit)} limit", response.status
            )
        chunks: list[bytes] = []
        size = 0
        while True:
            sock.settimeout(_left(deadline))
            chunk = response.read1(min(_READ_CHUNK, limit + 1 - size))  # one read: the deadline is checked each time
            if not chunk:
                if time.monotonic() >= deadline:  # cut at the deadline: a part of a page is no page
                    raise TimeoutError
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise _Failed(FetchFailure.TOO_LARGE, f"over the {_size(limit)} limit", response.status)


def retry_after(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds a ``Retry-After`` asks for (a number or an HTTP date), if it says."""
    if value is None:
        return None
    text = value.strip()
    if text.replace(".", "", 1).isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - now())


def _shut(sock: socket.socket) -> None:
    """End the connection from another thread: a read under way returns at once."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _left(deadline: float, cap: float | None = None) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left if cap is None else min(left, cap)


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    if isinstance(error, OSError) and error.errno:
        return errno.errorcode.get(error.errno, str(error.errno))
    return str(error) or type(error).__name__


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit // 1024} KiB"


@cache
def _default_context() -> ssl.SSLContext:
    """The system's trust store, loaded once (on the first https fetch)."""
    return ssl.create_default_context()
