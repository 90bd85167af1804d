"""A threaded HTTP server on 127.0.0.1, run in the background: what the fake model servers
and the fake web share."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TypeVar

Server = TypeVar("Server", bound="LocalServer")


class LocalServer:
    """Serves ``handler`` on ``port`` (0: a free one) from :meth:`start` until :meth:`stop`."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], port: int = 0):
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    def start(self: Server) -> Server:
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

    def __enter__(self: Server) -> Server:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
