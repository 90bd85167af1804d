"""Who and what a duel is about: targets, topics, slugs, names and secrets.

Pure functions, but for :func:`resolve_target`, which reads the source once. Tokens come from
``os.urandom`` and their hashes from :mod:`rp1_duel.digest`: no op loads hashlib, hmac or secrets.
"""

from __future__ import annotations

import os
import re
import unicodedata
from typing import TYPE_CHECKING

from ..confinement import is_markdown
from ..digest import sha256_hex
from ..errors import DuelError, invalid_argument
from ..vocabulary import ErrorCode

if TYPE_CHECKING:
    from ..settings import DuelSettings
    from ..turns import SourceDocument

__all__ = [
    "SLUG_MAX",
    "check_join_inputs",
    "check_name",
    "check_single_line",
    "hash_token",
    "name_problem",
    "new_token",
    "one_paragraph",
    "printable",
    "resolve_join_target",
    "resolve_target",
    "resolve_topic",
    "signer_problem",
    "single_line_problem",
    "slugify",
    "target_key",
    "token_matches",
]

SLUG_MAX = 60
_URL_SAFE_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

_SLUG_RUN = re.compile(r"[^a-z0-9]+")
# Display names land in a turn heading `Name (Harness / Model)` and in tables:
# characters that would break that grammar are refused up front.
_NAME_FORBIDDEN = re.compile(r"[/\\()|#`<>\[\]]")


def resolve_target(raw: str | None) -> SourceDocument:
    """The source a join names: an absolute path to a readable UTF-8 Markdown file, read once."""
    if not raw:
        raise invalid_argument("--target is required")
    if not raw.isprintable():  # control characters, or bytes that are not UTF-8 (lone surrogates)
        raise invalid_argument("--target must be a printable UTF-8 path")
    if not os.path.isabs(raw):
        raise DuelError(ErrorCode.TARGET_NOT_ABSOLUTE, f"target must be an absolute path, got {raw!r}")
    real = os.path.realpath(raw)
    if not is_markdown(raw) or not is_markdown(real):
        raise DuelError(
            ErrorCode.TARGET_NOT_MARKDOWN,
            f"target must be a .md or .markdown file: {raw}" + ("" if real == raw else f" (it is {real})"),
        )
    from ..turns import SourceUnreadable, read_source  # the Markdown scanner: only when a source is read

    try:
        return read_source(real)
    except SourceUnreadable as exc:
        raise DuelError(ErrorCode.TARGET_UNREADABLE, f"cannot read target {raw}: {exc.reason}") from None


def resolve_join_target(raw: str | None) -> SourceDocument:
    """The source a join may debate: :func:`resolve_target`, and not empty or blank
    (``TARGET_EMPTY``): there would be nothing to cite, and every turn would fail its rules."""
    source = resolve_target(raw)
    if not source.text.strip():
        raise DuelError(ErrorCode.TARGET_EMPTY, f"target {source.path} is empty: write the document first")
    return source


def check_join_inputs(target: str, settings: DuelSettings) -> None:
    """What a join will refuse that is known here, checked before a model is looked up or
    asked: the settings' ranges, then the source (section 2, ``TARGET_EMPTY``)."""
    settings.check()
    resolve_join_target(target)


def resolve_topic(topic: str | None, source: SourceDocument) -> str:
    """``--topic``, else the source's first heading, else its file name stem."""
    if topic is not None:
        topic = topic.strip()
        check_single_line("--topic", value=topic, max_len=200)
        if topic:
            return topic
    if source.first_heading:
        # A heading may hold characters a topic may not (DEL, C1 controls): they become spaces.
        heading = " ".join("".join(ch if printable(ch) else " " for ch in source.first_heading).split())
        if heading:
            return heading[:200]
    return os.path.splitext(source.name)[0]


def slugify(text: str) -> str:
    """``text`` as a file-name slug: lower-case ASCII words joined by ``-``, at most 60 characters, else ``debate``."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _SLUG_RUN.sub("-", ascii_text.lower()).strip("-")
    return slug[:SLUG_MAX].strip("-") or "debate"


def target_key(source_path: str, *, topic_slug: str) -> str:
    """The identity of "the active duel" of a debate dir: source and topic."""
    return sha256_hex(f"{source_path}\n{topic_slug}".encode())[:32]


# Control, format, surrogate, private-use and unassigned characters (U+FFFE among them),
# and line or paragraph separators: none may enter a heading, a table or the YAML header.
_UNPRINTABLE = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))


def printable(ch: str) -> bool:
    """Whether ``ch`` may stand in a heading, a table or the YAML header (no control or separator character)."""
    return unicodedata.category(ch) not in _UNPRINTABLE


def single_line_problem(value: str, max_len: int) -> str | None:
    """Why ``value`` cannot be one line of at most ``max_len`` printable characters, or None."""
    if len(value) > max_len:
        return f"is longer than {max_len} characters"
    if value.isascii() and value.isprintable():  # the usual name, checked at once: each state read checks every one
        return None
    if not all(printable(ch) for ch in value):
        return "must be one line of printable text"
    return None


def name_problem(value: str, max_len: int = 64, *, allow_slash: bool = False) -> str | None:
    """Why ``value`` cannot be a name, harness or model id, or None (it lands in turn headings)."""
    if not value or value != value.strip():
        return "must not be empty" if not value.strip() else "must not start or end with a space"
    problem = single_line_problem(value, max_len)
    if problem:
        return problem
    forbidden = _NAME_FORBIDDEN.search(value.replace("/", "") if allow_slash else value)
    return f"must not contain {forbidden.group(0)!r} (it would break turn headings)" if forbidden else None


_PRINCIPAL = re.compile(r"[\x21-\x2b\x2d-\x7e]{1,200}")  # printable ASCII, no space, no comma


def signer_problem(value: str) -> str | None:
    """Why ``value`` cannot be a declared signer, an allowed signers principal, or None."""
    if _PRINCIPAL.fullmatch(value):
        return None
    return "must be 1 to 200 printable ASCII characters without spaces or commas, like alice@example.com"


def check_single_line(flag: str, *, value: str, max_len: int) -> None:
    """``INVALID_ARGUMENT`` naming ``flag`` unless ``value`` is one line of at most ``max_len`` printable characters."""
    problem = single_line_problem(value, max_len)
    if problem:
        raise invalid_argument(f"{flag} {problem}", flag=flag)


def check_name(flag: str, *, value: str, max_len: int = 64, allow_slash: bool = False) -> str:
    """``value`` stripped, or ``INVALID_ARGUMENT`` naming ``flag`` when it cannot be a name (:func:`name_problem`)."""
    value = (value or "").strip()
    problem = name_problem(value, max_len, allow_slash=allow_slash)
    if problem:
        raise invalid_argument(f"{flag} {problem}", flag=flag)
    return value


def new_token() -> str:
    """A new participant token: ``pt_`` and 24 random bytes, URL-safe."""
    # A prefix keeps the token from starting with "-", which argparse would take for a flag.
    return "pt_" + urlsafe_base64(os.urandom(24))


def urlsafe_base64(data: bytes) -> str:
    """``data``, a multiple of 3 bytes long, in URL-safe base64: what secrets.token_urlsafe gives (no padding),
    without loading secrets, base64 or binascii into every join. Each 6 bits, from the first, is a character."""
    number, bits = int.from_bytes(data, "big"), 8 * len(data)
    return "".join(_URL_SAFE_BASE64[(number >> shift) & 63] for shift in range(bits - 6, -1, -6))


def hash_token(token: str) -> str:
    """The SHA-256 of ``token`` in hex, as the state keeps it instead of the token."""
    return sha256_hex(token.encode())


def same_secret(given: str, kept: str) -> bool:
    """Whether two secrets are equal, compared in constant time: hmac.compare_digest's own comparison,
    without hmac (which loads OpenSSL, as hashlib does)."""
    from _operator import _compare_digest

    return _compare_digest(given.encode(), kept.encode())


def token_matches(token: str | None, *, token_hash: str) -> bool:
    """Whether ``token`` is the one ``token_hash`` was made from, compared in constant time."""
    return token is not None and bool(token) and same_secret(hash_token(token), token_hash)


def one_paragraph(what: str, text: str, max_len: int) -> str:
    """``text`` as one line (its whitespace runs made single spaces), or ``INVALID_ARGUMENT``."""
    joined = " ".join(text.split())
    if not joined:
        raise invalid_argument(f"{what} is empty")
    check_single_line(what, value=joined, max_len=max_len)
    return joined
