"""The flags of each ``duel tools`` op, declared once, and a reader for the way agents write them.

:mod:`.tools_parser` builds argparse's parsers from the table, for ``--help`` and for every error.
:func:`read_plain` reads an op's flags without argparse when each is one of the op's, written whole,
with its value after it or after ``=``: argparse and the building of its parsers cost every op
about 3 ms of start-up (argparse imports gettext, whose first lookup imports locale), a tenth of
what an op costs (bench/bench_startup.py). Whatever the reader is not sure of, it leaves to
argparse, and on what it reads the two agree (tests/cli/test_tools_flags.py).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ..settings import (
    CHAIR_HELP,
    ON_FABRICATION,
    ON_FABRICATION_HELP,
    ROLE_HELP,
    SEALED_OPENINGS_HELP,
    SETTINGS,
    SIGNER_HELP,
)
from ..vocabulary import ROLES, Role

__all__ = ["OPS", "flags_of", "read_plain"]

Flag = tuple[str, dict[str, Any]]

# op -> (help, [(flag, kwargs)]); docs/protocol.md section 2, "Flags of duel tools".
_TOKEN = ("--participant-token", {"help": "your secret token from join [env: DUEL_PARTICIPANT_TOKEN]"})
_DUEL = ("--duel-id", {"required": True})
_PID = ("--participant-id", {"required": True})
_LEASE = ("--lease-token", {"help": "the token claim-lock granted [env: DUEL_LEASE_TOKEN]"})
_DIR = (
    "--debate-dir",
    {"help": "shared debate dir [default: $DUEL_DIR, else debate_dir in the configuration, else ./debates]"},
)
_SIGNING_KEY = (
    "--signing-key",
    {
        "help": "sign with this SSH key: a private key file, or a public key whose private half is in ssh-agent "
        "[env: DUEL_SIGNING_KEY]"
    },
)
_STORE: Flag = (
    "--store",
    {
        "help": "keep duels in a PostgreSQL database, for duels across machines: a postgresql:// URL "
        "[env: DUEL_STORE; default: store in the configuration, else the debate dir]"
    },
)
OPS: dict[str, tuple[str, list[Flag]]] = {
    "join": (
        "join, create or resume the duel about a source and topic",
        [
            ("--target", {"help": "path of the source (.md); a relative one is made absolute"}),
            ("--topic", {"help": "topic [default: the source's first heading]"}),
            _DIR,
            ("--participant-name", {"help": "your display name"}),
            ("--harness", {"default": "unknown"}),
            ("--model-id", {"default": "unknown-model", "help": "your model id, honestly"}),
            _TOKEN,
            # No default here: not given, the configuration's [duel] table (else the built-in default) decides.
            *((setting.flag, {"type": int, "help": setting.help_with_range}) for setting in SETTINGS.values()),
            ("--chair", {"action": "store_true", "help": CHAIR_HELP}),
            ("--sealed-openings", {"action": "store_true", "help": SEALED_OPENINGS_HELP}),
            ("--on-fabrication", {"choices": ON_FABRICATION, "help": ON_FABRICATION_HELP}),
            ("--role", {"choices": ROLES, "default": Role.PANELIST, "help": ROLE_HELP}),
            ("--signer", {"help": SIGNER_HELP}),
            ("--persona", {"help": "the persona your model plays, recorded for reviewers (a name)"}),
        ],
    ),
    "status": (
        "show a duel; with your id and token it also marks you as present",
        [
            ("--duel-id", {}),
            ("--target", {}),
            ("--topic", {}),
            _DIR,
            ("--participant-id", {"help": "adds your next_step"}),
            _TOKEN,
        ],
    ),
    "claim-lock": (
        "ask for the lease; a refusal is an answer (acquired: false)",
        [
            _DUEL,
            _PID,
            _TOKEN,
            ("--for-timeout", {"action": "store_true"}),
            _DIR,
        ],
    ),
    "refresh-lock": ("extend your live lease by lease_seconds", [_DUEL, _PID, _TOKEN, _LEASE, _DIR]),
    "release-lock": (
        "release your lease, or close the duel",
        [
            _DUEL,
            _PID,
            _TOKEN,
            _LEASE,
            ("--close", {"action": "store_true"}),
            ("--outcome", {}),
            ("--reason", {}),
            ("--summary-file", {}),
            _SIGNING_KEY,
            _DIR,
        ],
    ),
    "append": (
        "append your turn; exit 3 with every violation if it breaks a rule",
        [
            _DUEL,
            _PID,
            _TOKEN,
            _LEASE,
            ("--turn-file", {"default": "-", "help": "a file, or - for stdin"}),
            ("--release", {"action": "store_true"}),
            _SIGNING_KEY,
            _DIR,
        ],
    ),
    "commit-opening": (
        (
            "commit your sealed opening (next_step commit_opening): checked, only its SHA-256 kept; append the "
            "same file once every seat has committed and the floor is yours"
        ),
        [_DUEL, _PID, _TOKEN, ("--turn-file", {"default": "-", "help": "a file, or - for stdin"}), _DIR],
    ),
    "seal": (
        "sign the closed duel's ending with your seat's SSH key",
        [_DUEL, _PID, _TOKEN, _SIGNING_KEY, _DIR],
    ),
    "wait": (
        "block until your next_step or the duel changes (at a lower CPU priority); your token keeps your seat",
        [
            _DUEL,
            _PID,
            _TOKEN,
            ("--timeout", {"type": float, "default": 60.0}),
            ("--next-step", {"help": "the next_step you last saw: return at once if it already changed"}),
            _DIR,
        ],
    ),
}


def flags_of(op: str) -> list[Flag]:
    """The flags ``op`` takes: its own, and ``--store``, which every op takes."""
    return [*OPS[op][1], _STORE]


def read_plain(argv: list[str]) -> SimpleNamespace | None:
    """``argv`` (an op and its flags) as argparse would parse it, without argparse; None for anything the reader
    leaves to argparse: an op it does not know, a flag not the op's or abbreviated, a value that starts with ``-``
    after a space, a value its type or choices refuse, a required flag missing, ``--help``."""
    if not argv or argv[0] not in OPS:
        return None
    flags = dict(flags_of(argv[0]))
    given = _given(argv[1:], flags)
    if given is None or any(kwargs.get("required") and flag not in given for flag, kwargs in flags.items()):
        return None
    values = {flag[2:].replace("-", "_"): given.get(flag, _default(kwargs)) for flag, kwargs in flags.items()}
    return SimpleNamespace(op=argv[0], **values)


def _given(tokens: list[str], flags: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """Each flag given in ``tokens`` and its value (the last, when given twice, as with argparse); None at the
    first token argparse might read otherwise."""
    given: dict[str, Any] = {}
    rest = iter(tokens)
    for token in rest:
        flag, explicit, value = token.partition("=")
        kwargs = flags.get(flag) if flag.startswith("--") else None
        if kwargs is None or (explicit and kwargs.get("action") == "store_true"):
            return None
        if kwargs.get("action") == "store_true":
            given[flag] = True
            continue
        if not explicit:
            after = next(rest, None)
            if after is None or (after.startswith("-") and after != "-"):  # a flag, or what argparse may take for one
                return None
            value = after
        typed = _typed(value, kwargs)
        if typed is None:
            return None
        given[flag] = typed
    return given


def _typed(value: str, kwargs: dict[str, Any]) -> Any:
    """``value`` as the flag's type makes it, or None when its type or choices refuse it."""
    try:
        typed = kwargs.get("type", str)(value)
    except ValueError:
        return None
    return None if "choices" in kwargs and typed not in kwargs["choices"] else typed


def _default(kwargs: dict[str, Any]) -> Any:
    """A flag's value when it is not given, as argparse sets it."""
    return kwargs.get("default", False if kwargs.get("action") == "store_true" else None)
