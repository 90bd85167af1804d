"""The page text cache: extracted texts by the SHA-256 of the bytes they came from.

``${XDG_CACHE_HOME:-~/.cache}/duel/pages/<sha256>.txt``, the folder owner-only (0700): a
later run can judge a claim again, with a model it did not have before, without fetching
the page again. A cache is best effort: one that cannot be written is not used, and a
name that is not a SHA-256 (a sidecar is data) is never a path.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path

from ..files import MAX_CACHED_TEXT_BYTES, read_bounded

__all__ = ["PageCache", "default_cache_dir"]

_SHA256 = re.compile(r"[0-9a-f]{64}")


def default_cache_dir(env: Mapping[str, str] = os.environ) -> Path:
    """Where page texts are cached: ``${XDG_CACHE_HOME:-~/.cache}/duel/pages``."""
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "duel" / "pages"


class PageCache:
    """Extracted page texts on disk, by the SHA-256 of the bytes they came from; best effort."""

    def __init__(self, root: Path):
        self.root = root
        self._ready: bool | None = None

    def get(self, sha256: str | None) -> str | None:
        """The cached text for ``sha256``, or None when there is none (or the cache is not usable)."""
        if sha256 is None or not _SHA256.fullmatch(sha256) or not self._usable():
            return None
        try:
            return read_bounded(self.root / f"{sha256}.txt", MAX_CACHED_TEXT_BYTES).decode("utf-8")
        except (OSError, ValueError):
            return None

    def put(self, sha256: str, *, text: str) -> None:
        """Keep ``text`` under ``sha256``, atomically; a failure is silently skipped."""
        if not _SHA256.fullmatch(sha256) or not self._usable():
            return
        path = self.root / f"{sha256}.txt"
        temporary = self.root / f".{sha256}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(text.encode("utf-8"))
            os.replace(temporary, path)  # readers see a whole text or none
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)

    def _usable(self) -> bool:
        """Create the folder owner-only; one owned by someone else is not used."""
        if self._ready is None:
            try:
                self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
                if self.root.stat().st_uid != os.getuid():
                    self._ready = False
                else:
                    self.root.chmod(0o700)
                    self._ready = True
            except OSError:
                self._ready = False
        return self._ready
