"""How a command is stopped: SIGTERM and SIGHUP as Ctrl-C is, and Ctrl-C even when it came in ignored.

``timeout``, ``kill``, ``docker stop`` and a closed terminal send SIGTERM or SIGHUP; each
becomes a :class:`KeyboardInterrupt`, so the one Ctrl-C path runs (a participant gives the
floor back and keeps its seat, ``duel panel`` takes its seats down with it), never in the middle
of an op on a duel (:mod:`rp1_duel.ctrl_c`). A process started with SIGINT ignored (``cmd &`` in
a script, some CI runners) would install no Ctrl-C handler at all: it gets one all the same. A
SIGHUP ignored on purpose (``nohup``) stays ignored.
"""

from __future__ import annotations

import signal

from ..ctrl_c import interrupt

__all__ = ["stop_as_ctrl_c"]


def stop_as_ctrl_c() -> None:
    """Install the handlers, before the command runs; outside the main thread, where Python takes no
    handler, nothing (an embedding caller keeps its own)."""
    try:
        signal.signal(signal.SIGINT, interrupt)
        for name in ("SIGTERM", "SIGHUP"):  # SIGHUP does not exist on Windows
            number = getattr(signal, name, None)
            if number is not None and signal.getsignal(number) is not signal.SIG_IGN:
                signal.signal(number, interrupt)
    except ValueError:  # not the main thread
        return
