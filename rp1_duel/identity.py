"""Who and what a duel is about: targets, topics, slugs, names and secrets.

Pure functions, but for :func:`resolve_target`, which reads the source once.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import unicodedata
from dataclasses import dataclass

from .errors import DuelError, invalid_argument

MARKDOWN_SUFFIXES = (".md", ".markdown")
SLUG_MAX = 60

_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_SLUG_RUN = re.compile(r"[^a-z0-9]+")
# Display names land in a turn heading `Name (Harness / Model)` and in tables:
# characters that would break that grammar are refused up front.
_NAME_FORBIDDEN = re.compile(r"[/\\()|#`<>\[\]]")


@dataclass(frozen=True)
class Target:
    """A source document as the service knows it."""

    path: str  # real, absolute path
    text: str
    sha256: str


def resolve_target(raw: str | None) -> Target:
    if not raw:
        raise invalid_argument("--target is required")
    if not os.path.isabs(raw):
        raise DuelError("TARGET_NOT_ABSOLUTE", f"target must be an absolute path, got {raw!r}")
    if not raw.lower().endswith(MARKDOWN_SUFFIXES):
        raise DuelError("TARGET_NOT_MARKDOWN", f"target must be a .md or .markdown file: {raw}")
    real = os.path.realpath(raw)
    try:
        with open(real, "rb") as handle:
            data = handle.read()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = "not UTF-8" if isinstance(exc, UnicodeDecodeError) else (exc.strerror or str(exc))
        raise DuelError("TARGET_UNREADABLE", f"cannot read target {raw}: {reason}") from None
    return Target(real, text, hashlib.sha256(data).hexdigest())


def first_heading(markdown: str) -> str | None:
    """The text of the first ATX heading outside code fences, if any."""
    in_fence = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else _ATX_HEADING.match(line)
        if match:
            return match.group(1).strip()
    return None


def resolve_topic(topic: str | None, target: Target) -> str:
    if topic is not None:
        topic = topic.strip()
        check_single_line("--topic", topic, max_len=200)
        if topic:
            return topic
    heading = first_heading(target.text)
    if heading:
        return heading[:200]
    return os.path.splitext(os.path.basename(target.path))[0]


def slugify(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _SLUG_RUN.sub("-", ascii_text.lower()).strip("-")
    return slug[:SLUG_MAX].strip("-") or "debate"


def target_key(source_path: str, topic_slug: str) -> str:
    """The identity of "the active duel" of a debate dir: source and topic."""
    return hashlib.sha256(f"{source_path}\n{topic_slug}".encode()).hexdigest()[:32]


def check_single_line(flag: str, value: str, max_len: int) -> None:
    if len(value) > max_len:
        raise invalid_argument(f"{flag} is longer than {max_len} characters", flag=flag)
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in value):
        raise invalid_argument(f"{flag} must be one line of printable text", flag=flag)


def check_name(flag: str, value: str, max_len: int = 64, allow_slash: bool = False) -> str:
    value = (value or "").strip()
    if not value:
        raise invalid_argument(f"{flag} must not be empty", flag=flag)
    check_single_line(flag, value, max_len)
    forbidden = _NAME_FORBIDDEN.search(value.replace("/", "") if allow_slash else value)
    if forbidden:
        raise invalid_argument(
            f"{flag} must not contain {forbidden.group(0)!r} (it would break turn headings)",
            flag=flag,
        )
    return value


def new_token() -> str:
    # A prefix keeps the token from starting with "-", which argparse would take for a flag.
    return "pt_" + secrets.token_urlsafe(24)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(token: str | None, token_hash: str) -> bool:
    return bool(token) and hmac.compare_digest(hash_token(token), token_hash)
