"""Signed turns and sealed endings: the messages a participant signs, and a thin ``ssh-keygen`` adapter.

A turn's signature is an SSH signature (``ssh-keygen -Y sign``, as git signs commits with
SSH keys) in namespace ``duel-turn`` over :func:`turn_message`, which binds the turn's hash
to its duel, source, number, seat and predecessor (docs/protocol.md section 6, "Signed
turns"). A seal is one over :func:`close_message`, which binds the ending: the outcome, the
number of turns, the last turn's hash and the conclusion's. The artifact keeps only the
armored signature's base64 body, on one line. :func:`signer_key` reads which key made a
signature without running anything, so a seat can be held to one key.

ssh-keygen runs without a terminal and with a timeout, so a key that needs a passphrase
fails at once instead of prompting; signing failures are ``SIGNING_FAILED``, and a check
never raises: it answers a :class:`Verdict`.

The lock service checks a recorded signature's shape (:data:`SIGNATURE_BODY`) on every read
of a duel's state: the modules that run ssh-keygen load only when it runs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..errors import DuelError
from ..vocabulary import ErrorCode

if TYPE_CHECKING:
    from subprocess import CompletedProcess

__all__ = [
    "INTACT",
    "INVALID",
    "SIGNATURE_BODY",
    "SIGNATURE_MAX_CHARS",
    "UNCHECKED",
    "UNSIGNED",
    "UNTRUSTED",
    "VERIFIED",
    "Verdict",
    "available",
    "check",
    "close_message",
    "key_fingerprint",
    "sign",
    "signer_key",
    "turn_message",
]

NAMESPACE: Final = "duel-turn"
MESSAGE_HEADER: Final = "duel-turn v1"
CLOSE_HEADER: Final = "duel-close v1"  # another first line: a turn's signature never verifies as a seal
SIGNATURE_MAX_CHARS: Final = 16384  # an ed25519 signature is 240 characters, an RSA-4096 one under 1100
SIGNATURE_BODY: Final = re.compile(rf"[A-Za-z0-9+/]{{1,{SIGNATURE_MAX_CHARS}}}={{0,2}}")
SIGN_TIMEOUT_SECONDS: Final = 20.0  # a hardware key waits for a touch; the duel's lock is held meanwhile
CHECK_TIMEOUT_SECONDS: Final = 10.0

_ARMOR_BEGIN = "-----BEGIN SSH SIGNATURE-----"
_ARMOR_END = "-----END SSH SIGNATURE-----"
_PROMPT = re.compile(r"^Enter passphrase[^:]*: ")  # the prompt shown with no terminal to answer it
_MESSAGE_VALUE = re.compile(r"[\x21-\x7e]{1,200}")  # printable ASCII, no spaces: one unambiguous line each

# What a check found (docs/protocol.md section 6, "Signed turns").
VERIFIED: Final = "verified"  # verifies for this turn, by a key the allowed signers name
INTACT: Final = "intact"  # verifies for this turn by the key it carries; authorship not checked
UNTRUSTED: Final = "untrusted"  # verifies for this turn, by a key the allowed signers do not name
INVALID: Final = "invalid"  # does not verify for this turn's message
UNCHECKED: Final = "unchecked"  # ssh-keygen could not run (missing, timed out)
UNSIGNED: Final = "unsigned"  # the turn carries no signature line


@dataclass(frozen=True)
class Verdict:
    """What checking one turn's signature found: its status, and who signed or why not."""

    status: str
    signer: str | None = None  # the allowed signers' principal(s), comma-separated, when verified
    reason: str | None = None  # why it is not verified, in a few words


def turn_message(
    duel_id: str, *, source_sha256: str, n: int, seat: int, prev: str, sha256: str, signer: str | None = None
) -> bytes:
    """The exact bytes signed for turn ``n``, written from ``seat``. ``sha256`` covers the turn
    text, heading and author's name included; the rest pins it to one place in one duel about
    one document; ``signer``, the principal the seat declared at its join, who signs.
    Raises ValueError for a value that would not fit on one line (a hostile front matter)."""
    fields = {
        "duel_id": duel_id,
        "source_sha256": source_sha256,
        "n": str(n),
        "seat": str(seat),
        "sha256": sha256,
        "prev": prev,
    }
    return _message(MESSAGE_HEADER, fields, signer)


def close_message(
    duel_id: str,
    *,
    source_sha256: str,
    seat: int,
    outcome: str,
    turns: int,
    last: str,
    conclusion: str,
    signer: str | None = None,
) -> bytes:
    """The exact bytes a seat signs to seal a closed duel's ending: its ``outcome``, how many
    ``turns`` it holds, the ``last`` turn's sha256 (64 zeros for none) and the ``conclusion``'s
    sha256. Cutting turns off, or changing the outcome or the conclusion, breaks every seal.
    Raises ValueError for a value that would not fit on one line (a hostile front matter)."""
    fields = {
        "duel_id": duel_id,
        "source_sha256": source_sha256,
        "seat": str(seat),
        "outcome": outcome,
        "turns": str(turns),
        "last": last,
        "conclusion": conclusion,
    }
    return _message(CLOSE_HEADER, fields, signer)


def _message(header: str, fields: dict[str, str], signer: str | None) -> bytes:
    if signer is not None:  # a last line, so a seat that declared no signer signs what it always did
        fields = {**fields, "signer": signer}
    bad = next((name for name, value in fields.items() if not _MESSAGE_VALUE.fullmatch(value)), None)
    if bad is not None:
        raise ValueError(f"{bad} is not a value a signed message holds")
    return (header + "\n" + "".join(f"{name}={value}\n" for name, value in fields.items())).encode()


def signer_key(signature: str) -> str | None:
    """The fingerprint (``SHA256:…``, as ``ssh-keygen -l`` prints it) of the public key an SSH
    signature carries, read from its bytes; None for what is not an SSH signature.
    Which key signed says nothing of whether it verifies: :func:`check` does that."""
    import base64  # here, not above: the lock service loads this module on every state read
    import binascii
    import hashlib

    try:
        blob = base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        return None
    # SSHSIG: a 6-byte magic, a uint32 version, then the public key as a uint32-length string.
    if blob[:6] != b"SSHSIG" or len(blob) < 14:
        return None
    size = int.from_bytes(blob[10:14], "big")
    key = blob[14 : 14 + size]
    if size == 0 or len(key) != size:
        return None
    return "SHA256:" + base64.b64encode(hashlib.sha256(key).digest()).decode().rstrip("=")


def available() -> bool:
    """Whether ``ssh-keygen`` is on the PATH, to sign or check signatures with."""
    import shutil

    return shutil.which("ssh-keygen") is not None


def sign(message: bytes, key_path: str | os.PathLike[str]) -> str:
    """Sign with a private key file, or a public key whose private half is in ssh-agent
    (``ssh-keygen -Y sign -f``); the signature's base64 body. Raises ``SIGNING_FAILED``."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="duel-sign-") as folder:
        message_file = Path(folder) / "turn"
        message_file.write_bytes(message)
        done = _run(
            ["-Y", "sign", "-n", NAMESPACE, "-f", os.fspath(key_path), str(message_file)], b"", SIGN_TIMEOUT_SECONDS
        )
        if isinstance(done, str) or done.returncode != 0:
            why = done if isinstance(done, str) else _last_line(done.stderr)
            raise _signing_failed(key_path, why)
        try:
            armored = message_file.with_name("turn.sig").read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError):
            raise _signing_failed(key_path, "ssh-keygen wrote no readable signature") from None
    body = "".join(line for line in armored.splitlines() if line not in (_ARMOR_BEGIN, _ARMOR_END))
    if not SIGNATURE_BODY.fullmatch(body):
        raise _signing_failed(key_path, "ssh-keygen wrote something that is not an SSH signature")
    return body


def key_fingerprint(key_path: str | os.PathLike[str]) -> str:
    """``ssh-keygen -l`` of a key file, checked before a participant starts; raises ``SIGNING_FAILED``."""
    done = _run(["-l", "-f", os.fspath(key_path)], b"", CHECK_TIMEOUT_SECONDS)
    if isinstance(done, str) or done.returncode != 0:
        raise _signing_failed(key_path, done if isinstance(done, str) else _last_line(done.stderr))
    return _last_line(done.stdout)


def check(
    message: bytes,
    signature: str,
    *,
    allowed_signers: str | os.PathLike[str] | None = None,
    principal: str | None = None,
) -> Verdict:
    """Check one signature over ``message``. Without ``allowed_signers``: only that it
    verifies for the key it carries (``check-novalidate``). With it: which principal of
    the file signed (``find-principals``, then ``verify -I`` as ``principal`` when the file
    gives the key that name, else as the first it gives); two or three runs of ssh-keygen."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="duel-verify-") as folder:
        signature_file = Path(folder) / "turn.sig"
        signature_file.write_text(armor(signature), encoding="ascii")
        sig = str(signature_file)
        if allowed_signers is None:
            return _intact(message, sig, INTACT)
        allowed = os.fspath(allowed_signers)
        found = _run(["-Y", "find-principals", "-f", allowed, "-s", sig], b"", CHECK_TIMEOUT_SECONDS)
        if isinstance(found, str):
            return Verdict(UNCHECKED, reason=found)
        principals = [line for line in found.stdout.decode("utf-8", "replace").splitlines() if line]
        if found.returncode != 0 or not principals:
            return _intact(message, sig, UNTRUSTED)
        named = principal if principal in principals else principals[0]
        verified = _run(
            ["-Y", "verify", "-n", NAMESPACE, "-f", allowed, "-I", named, "-s", sig],
            message,
            CHECK_TIMEOUT_SECONDS,
        )
        if isinstance(verified, str):
            return Verdict(UNCHECKED, reason=verified)
        if verified.returncode != 0:
            return Verdict(INVALID, reason=f"it does not verify for this turn as {named}")
        return Verdict(VERIFIED, signer=",".join(principals))


def _intact(message: bytes, sig: str, status_if_good: str) -> Verdict:
    done = _run(["-Y", "check-novalidate", "-n", NAMESPACE, "-s", sig], message, CHECK_TIMEOUT_SECONDS)
    if isinstance(done, str):
        return Verdict(UNCHECKED, reason=done)
    if done.returncode != 0:
        return Verdict(INVALID, reason="it does not verify for this turn")
    if status_if_good == UNTRUSTED:
        return Verdict(UNTRUSTED, reason="its key is not in the allowed signers file")
    return Verdict(status_if_good)


def armor(body: str) -> str:
    """The armored signature ssh-keygen reads, rebuilt from its one-line body."""
    return "\n".join([_ARMOR_BEGIN, *(body[i : i + 70] for i in range(0, len(body), 70)), _ARMOR_END]) + "\n"


def _run(args: list[str], stdin: bytes, timeout: float) -> CompletedProcess[bytes] | str:
    """ssh-keygen with no terminal and no askpass, so a passphrase prompt fails instead of
    waiting; the process, or why it could not run."""
    import subprocess

    env = {name: value for name, value in os.environ.items() if name not in ("DISPLAY", "SSH_ASKPASS")}
    env["SSH_ASKPASS_REQUIRE"] = "never"
    try:
        return subprocess.run(
            ["ssh-keygen", *args],
            input=stdin,
            capture_output=True,
            timeout=timeout,
            env=env,
            start_new_session=True,
            check=False,
        )
    except FileNotFoundError:
        return "ssh-keygen not found (OpenSSH 8.2 or later is needed)"
    except subprocess.TimeoutExpired:
        return f"ssh-keygen did not answer within {timeout:g} s"
    except OSError as exc:
        return f"ssh-keygen could not run ({exc.strerror or exc})"


def _last_line(output: bytes) -> str:
    lines = [line.strip() for line in output.decode("utf-8", "replace").splitlines() if line.strip()]
    return _PROMPT.sub("", lines[-1] if lines else "ssh-keygen failed")[:300]


# S105 reads "PASSPHRASE" in the name: this is advice shown to the user, no secret.
_PASSPHRASE_HINT = " (add a key with a passphrase to ssh-agent, and pass its public key or the key file)"  # noqa: S105


def _signing_failed(key_path: str | os.PathLike[str], why: str) -> DuelError:
    return DuelError(
        ErrorCode.SIGNING_FAILED,
        f"cannot sign with {os.fspath(key_path)}: {why}" + (_PASSPHRASE_HINT if "passphrase" in why else ""),
    )
