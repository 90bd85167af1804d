"""Being told that a duel's state was replaced, sooner than the next poll (docs/protocol.md section 4, "Waiting").

Every write of a state ends with a rename into the duel's folder (:func:`~rp1_duel.files.write_atomic`).
On Linux, inotify reports that rename at once: a seat waiting on the debate dir hears a release
within a millisecond or so rather than at its next 10 ms poll. inotify is reached through ctypes,
loaded by the first wait only. Elsewhere, or when inotify cannot be had (its limits reached), the
wait sleeps as before; the poll stays the safety net either way, so a missed event costs 10 ms, never a hang.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from typing import Any

__all__ = ["StateWatch"]

_IN_MOVED_TO = 0x80  # a file was renamed into the watched folder: how every state write lands
_EVENTS_MAX = 64 * 1024  # drained in one read: more events than this only mean another wake


class StateWatch:
    """Sleeps a waiter until a file is renamed into a duel's folder, or for the poll interval.

    One inotify instance per store, a watch per duel folder waited on, kept while the store
    lives (a wait looks many times). Any watched folder's change wakes every sleeper: a wake
    only means "look at the stamp again", so a wake for another duel costs a stat.
    """

    def __init__(self) -> None:
        self._fd: int | None = None
        self._libc: Any = None
        self._watched: set[str] = set()
        self._usable = sys.platform == "linux"

    def sleep(self, folder: str, seconds: float) -> None:
        """Return after ``seconds``, or sooner once a file is renamed into ``folder``. The first
        sleep on a folder returns at once, its watch just added: a change just before it would
        otherwise go unheard until the poll's end."""
        if seconds <= 0:
            return
        fd = self._watch(folder) if self._usable else None
        if fd is None:
            time.sleep(seconds)
            return
        if folder not in self._watched:
            self._watched.add(folder)
            return
        import select  # a wait's, not every op's

        poller = select.poll()  # not select.select: a process with a thousand files open has higher descriptors
        poller.register(fd, select.POLLIN)
        try:
            if poller.poll(seconds * 1000):
                os.read(fd, _EVENTS_MAX)
        except OSError as exc:  # EAGAIN: another thread read the events first; else give the watch up
            if exc.errno != errno.EAGAIN:
                self._give_up()

    def _watch(self, folder: str) -> int | None:
        """The inotify instance, ``folder`` watched by it (added if need be); None where that cannot be had."""
        if folder in self._watched:
            return self._fd
        if self._fd is None:
            self._fd = self._open()
            if self._fd is None:
                self._usable = False
                return None
        if self._libc.inotify_add_watch(self._fd, os.fsencode(folder), _IN_MOVED_TO) < 0:
            return None  # a folder gone, or the watch limit reached: this folder is polled
        return self._fd

    def _open(self) -> int | None:
        """A new inotify instance, or None where there is none (not Linux, no inotify in this libc)."""
        try:
            import ctypes  # only a wait on the debate dir pays for it

            self._libc = ctypes.CDLL(None, use_errno=True)
            fd = int(self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        except (OSError, AttributeError):
            return None
        return fd if fd >= 0 else None  # its limit reached (EMFILE), say

    def _give_up(self) -> None:
        """Poll from now on, and let the instance go."""
        self._usable = False
        self.close()

    def close(self) -> None:
        """Release the inotify instance (a store that waits again opens another)."""
        fd, self._fd = self._fd, None
        self._watched.clear()
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        self.close()
