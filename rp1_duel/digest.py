"""SHA-256 in hex, without loading OpenSSL.

hashlib loads OpenSSL's libcrypto first, which costs every ``duel tools`` call that hashes (a join
hashes its source, a seated op its token) a few milliseconds of start-up (bench/bench_startup.py).
CPython's own SHA-256 (``_sha2`` from 3.12, ``_sha256`` before), which hashlib falls back to,
gives the same digests; hashlib's is used where neither is built in.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from typing import Any

__all__ = ["sha256_hex"]


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data``, in lower-case hex."""
    return str(_sha256()(data).hexdigest())


@functools.cache  # looked up once a process: a failed import searches sys.path every time
def _sha256() -> Any:
    for name in ("_sha2", "_sha256"):
        with contextlib.suppress(ImportError):
            return importlib.import_module(name).sha256
    import hashlib

    return hashlib.sha256
