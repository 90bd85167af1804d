"""A threaded HTTP server on 127.0.0.1, run in the background: what the fake model servers
and the fake web share."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # typing.Self is Python 3.11; typing_extensions is only needed by the type checker
    from typing_extensions import Self

Server = TypeVar("Server", bound="LocalServer")


class _HTTPServer(ThreadingHTTPServer):
    owner: LocalServer  # the server object whose handler answers, for the handler to reach


class LocalServer:
    """Serves ``handler`` on ``port`` (0: a free one) from :meth:`start` until :meth:`stop`;
    ``handler`` reaches this object through :func:`served_by`."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], port: int = 0):
        self._httpd = _HTTPServer(("127.0.0.1", port), handler)
        self._httpd.owner = self
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    def start(self) -> Self:
        # A short poll interval makes stop() quick: shutdown() waits for the next poll.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, name=type(self).__name__, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def served_by(handler: BaseHTTPRequestHandler, kind: type[Server]) -> Server:
    """The :class:`LocalServer` (of class ``kind``) whose request ``handler`` answers."""
    httpd = handler.server
    assert isinstance(httpd, _HTTPServer), f"{type(handler).__name__} not served by a LocalServer"
    assert isinstance(httpd.owner, kind), f"{type(httpd.owner).__name__} is not a {kind.__name__}"
    return httpd.owner
