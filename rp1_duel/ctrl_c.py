"""Ctrl-C that never cuts an op in half.

Python raises KeyboardInterrupt wherever the main thread happens to be, the first line of a
lock's ``__exit__`` included. A claim that had committed would then keep its duel's lock, and the
same process's clean-up (give the floor back) could not take it: the lease stayed held. Code run
``with uninterrupted:`` is whole: a stop signal that lands inside it is raised as it ends.

Only :func:`interrupt`, the handler every ``duel`` command installs (:mod:`.cli.stopping`),
defers; under Python's own handler, in a program that embeds the library, nothing changes.
"""

from __future__ import annotations

import _thread
from types import FrameType, TracebackType

__all__ = ["interrupt", "uninterrupted"]


class _Sections(_thread._local):  # noqa: SLF001  threading.local is this; importing threading costs a command ~1 ms
    depth = 0  # sections of this thread under way
    pending = False  # a stop landed in one of them (handlers run in the main thread: only its own is read)


_sections = _Sections()


class _Uninterrupted:
    """A section a stop signal does not cut: one that lands inside it is raised as it ends.

    Sections nest; the outermost raises. The count is the thread's, so one instance serves every
    section. A signal landing in ``__exit__`` before the count goes down is still in the section.
    """

    def __enter__(self) -> None:
        _sections.depth += 1

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        _sections.depth -= 1
        if not _sections.depth and _sections.pending:
            _sections.pending = False
            raise KeyboardInterrupt


uninterrupted = _Uninterrupted()


def interrupt(signum: int, frame: FrameType | None) -> None:  # noqa: ARG001  a signal handler's signature
    """The stop handler: KeyboardInterrupt now, or when the section under way ends. A second
    stop while one waits is raised at once: an op stuck on its lock can still be left."""
    if _sections.depth and not _sections.pending:
        _sections.pending = True
        return
    _sections.pending = False
    raise KeyboardInterrupt
