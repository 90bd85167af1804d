"""A TCP relay on 127.0.0.1 that counts round trips: each time the client speaks after the
server has (or first), one more. What a client's op costs on the wire, measured on the wire."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress


class WireCounter:
    def __init__(self, host: str, port: int):
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.round_trips = 0
        self._lock = threading.Lock()
        self._last: dict[int, str] = {}  # connection -> who spoke last
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        n = 0
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            n += 1
            server = socket.create_connection(self.target)
            self._sockets += [client, server]
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._pump, args=(n, client, server, "client"), daemon=True).start()
            threading.Thread(target=self._pump, args=(n, server, client, "server"), daemon=True).start()

    def _pump(self, n: int, source: socket.socket, sink: socket.socket, who: str) -> None:
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if not data:
                for sock in (source, sink):
                    with suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
                return
            with self._lock:
                if who == "client" and self._last.get(n) != "client":
                    self.round_trips += 1
                self._last[n] = who
            try:
                sink.sendall(data)
            except OSError:  # the other side is gone (or the relay closed): this direction ends too
                return

    @contextmanager
    def counting(self) -> Iterator[list[int]]:
        """The round trips made inside the block, in a one-item list filled when it ends."""
        found: list[int] = []
        with self._lock:
            before = self.round_trips
        yield found
        with self._lock:
            found.append(self.round_trips - before)

    def close(self) -> None:
        self.listener.close()
        for sock in self._sockets:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
