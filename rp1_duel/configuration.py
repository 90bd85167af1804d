"""Layered configuration: defaults, user, project and local files, lineups, the environment, flags.

Layers merge **deeply** (docs/protocol.md section 2, "Configuration"): tables key by key, scalars
and arrays replaced, so a project file that changes one seat's model keeps the rest of the lineup.
Every value remembers the layer that set it. :func:`merge` is the pure rule; :func:`read_layers`
reads the files and the environment; :func:`load_config` does both, for the commands.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, NamedTuple, cast

from .confinement import confine, project_of
from .errors import DuelError
from .files import MAX_CONFIG_BYTES, read_bounded, write_atomic
from .settings import DEBATE_DIR_ENV, DEFAULT_DEBATE_DIR, ON_FABRICATION, SETTINGS, STORE_ENV, DuelSettings, redact
from .vocabulary import PROVIDERS, REASONING_LEVELS, ErrorCode, ReasoningLevel

__all__ = [
    "DEFAULT",
    "ENVIRONMENT",
    "FLAGS",
    "LINEUP",
    "LOCAL",
    "LOCAL_FILE",
    "MAX_OUTPUT_TOKENS_RANGE",
    "PROJECT",
    "PROJECT_FILE",
    "USER",
    "Config",
    "Flags",
    "Layer",
    "Leaf",
    "ModelDefaults",
    "Panel",
    "Persona",
    "SeatSpec",
    "Untrusted",
    "config_error",
    "defaults",
    "destinations",
    "home",
    "load_config",
    "merge",
    "project_folder",
    "project_root",
    "read_file",
    "read_layers",
    "trust",
    "trust_file",
    "untrusted_keys",
]

USER_FILE: Final = Path("duel") / "config.toml"  # under $XDG_CONFIG_HOME, else ~/.config
TRUST_FILE: Final = Path("duel") / "trusted"  # beside it: `duel config trust`'s "SHA-256  path" lines
PROJECT_FILE: Final = "duel.toml"
LOCAL_FILE: Final = "duel.local.toml"
# Layer names, lowest first; "lineup" is a file named on the command line (duel panel --lineup).
DEFAULT, USER, PROJECT, LOCAL, LINEUP, ENVIRONMENT, FLAGS = (
    "default",
    "user",
    "project",
    "local",
    "lineup",
    "environment",
    "flags",
)
UNSET: Final = "unset"  # Config.origin of a key no layer sets
PERSONA_NAME: Final = re.compile(r"[a-z][a-z0-9-]{0,39}")


# -- what a configuration holds ----------------------------------------------------------------


class Persona(NamedTuple):
    """Who a model plays, and what that debater is rewarded for (participant.personas has the built-in ones)."""

    name: str
    description: str
    incentives: tuple[str, ...] = ()


class ModelDefaults(NamedTuple):
    """``[model]``: the defaults of ``duel join --provider/--model/--base-url/--reasoning/--max-output-tokens``."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    reasoning: ReasoningLevel | None = None
    max_output_tokens: int | None = None


class SeatSpec(NamedTuple):
    """``[panel.seats.N]`` or ``[panel.chair]``: who takes a seat of a panel; every key optional."""

    name: str | None = None
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    reasoning: ReasoningLevel | None = None
    max_output_tokens: int | None = None
    persona: str | None = None  # a persona's name (participant.personas), or free text
    position: str | None = None


class Panel(NamedTuple):
    """``[panel]``: the topic and the lineup of a ``duel panel``, seat by seat, and its chair."""

    topic: str | None = None
    seats: Mapping[int, SeatSpec] = MappingProxyType({})  # by seat number, in order
    chair: SeatSpec | None = None


class Leaf(NamedTuple):
    """One value set by a layer, with the layer and the file it came from."""

    value: object
    origin: str  # the layer that set it: "default", "project (/p/duel.toml)", "environment ($DUEL_DIR)", "flags"
    file: str  # what an error names: the file, the variable, or the layer


class Config(NamedTuple):
    """The merged configuration: what a command runs with when a flag is not given."""

    debate_dir: str
    store: str | None
    model: ModelDefaults
    personas: Mapping[str, Persona]  # the custom ones (participant.personas.available adds the built-in ones)
    panel: Panel
    duel: Mapping[str, int | bool]  # the [duel] table as merged
    leaves: Mapping[str, Leaf]  # every value set, by dotted key (``duel.max_turns``), sorted

    def settings(self) -> DuelSettings:
        """The duel's settings (``DuelSettings.check`` still runs at join, as for flags)."""
        return DuelSettings(**cast("Mapping[str, Any]", self.duel))  # its settings; chair is no key

    def origin(self, key: str) -> str:
        """Where the value of a dotted key came from, or ``unset``."""
        leaf = self.leaves.get(key)
        return leaf.origin if leaf else UNSET


class Layer(NamedTuple):
    """One source of configuration as read: its name, where it was read from, and its tables."""

    name: str  # DEFAULT, USER, … FLAGS
    origin: str  # the file, or the environment variable; "" for the defaults and the flags
    data: Mapping[str, Any]  # as read: nested tables

    @property
    def description(self) -> str:
        """The layer as messages name it: ``project (/p/duel.toml)``, or ``default``."""
        return f"{self.name} ({self.origin})" if self.origin else self.name


# -- the schema: every key, its type, and the values it may take -----------------------------------

Check = Callable[[Any], "str | None"]  # a problem with a value, or None


class Value(NamedTuple):
    """The schema of one key: its type and the check its values must pass."""

    kind: type  # str, int, bool, or list (of strings: the check says)
    check: Check | None = None  # ranges and choices; not applied to flags, which the command line checks


class Table(NamedTuple):
    """The schema of a table: each key's schema."""

    keys: Mapping[str, Value | Table | TableOf]


class TableOf(NamedTuple):
    """A table of tables of one shape, keyed by name (personas) or number (seats)."""

    key_rule: str  # what a key must be, said in the error
    key_ok: Callable[[str], bool]
    shape: Table


def _in_range(name: str) -> Check:
    low, high = SETTINGS[name].low, SETTINGS[name].high
    return lambda value: None if low <= value <= high else f"must be between {low} and {high}, got {value}"


def _one_of(choices: Sequence[str]) -> Check:
    return lambda value: None if value in choices else f"must be one of {', '.join(choices)}, got {value!r}"


# The output ceiling a request may be given: beyond any model's window, but a number a server takes.
MAX_OUTPUT_TOKENS_RANGE: Final = (1, 1_000_000)


def _output_ceiling(value: int) -> str | None:
    low, high = MAX_OUTPUT_TOKENS_RANGE
    return None if low <= value <= high else f"must be between {low} and {high}, got {value}"


def _text(value: str) -> str | None:
    return None if value.strip() else "must not be empty"


def _texts(value: list[Any]) -> str | None:
    if not all(isinstance(item, str) and item.strip() for item in value):
        return "must be an array of non-empty strings"
    return None


TEXT = Value(str, _text)
MODEL_KEYS: Final = {
    "provider": Value(str, _one_of(PROVIDERS)),
    "model": TEXT,
    "base_url": TEXT,
    "reasoning": Value(str, _one_of(REASONING_LEVELS)),
    "max_output_tokens": Value(int, _output_ceiling),
}
SEAT = Table({"name": TEXT, **MODEL_KEYS, "persona": TEXT, "position": TEXT})
MAX_SEATS: Final = SETTINGS["seats"].high
SCHEMA: Final = Table(
    {
        "debate_dir": TEXT,
        "store": TEXT,
        "duel": Table(
            {
                **{name: Value(int, _in_range(name)) for name in SETTINGS},
                "sealed_openings": Value(bool),
                "on_fabrication": Value(str, _one_of(ON_FABRICATION)),
            }
        ),
        "model": Table(MODEL_KEYS),
        "personas": TableOf(
            "a persona name: a lower-case letter, then up to 39 letters, digits and hyphens",
            lambda key: PERSONA_NAME.fullmatch(key) is not None,
            Table({"description": TEXT, "incentives": Value(list, _texts)}),
        ),
        "panel": Table(
            {
                "topic": TEXT,
                "seats": TableOf(
                    f"a seat number from 1 to {MAX_SEATS}",
                    lambda key: key.isdigit() and 1 <= int(key) <= MAX_SEATS and key == str(int(key)),
                    SEAT,
                ),
                "chair": SEAT,
            }
        ),
    }
)
_TYPE_NAMES: Final = {
    str: "a string",
    int: "an integer",
    bool: "a boolean",
    float: "a float",
    list: "an array",
    dict: "a table",
}


def config_error(where: str, *, key: str | None, problem: str) -> DuelError:
    """``INVALID_CONFIG``: ``problem`` with the file (or variable) ``where`` and the dotted ``key`` it is about."""
    details = {"file": where, **({"key": key} if key else {})}
    return DuelError(ErrorCode.INVALID_CONFIG, f"{where}: {f'{key}: ' if key else ''}{problem}", details)


def _type_name(value: object) -> str:
    return _TYPE_NAMES.get(type(value), f"a {type(value).__name__}")


def _check_table(table: Mapping[str, Any], shape: Table, path: str, layer: Layer) -> None:
    for key, value in table.items():
        dotted = f"{path}.{key}" if path else key
        expected = shape.keys.get(key)
        if expected is None:
            raise config_error(
                layer.origin or layer.name, key=dotted, problem=f"unknown key (known here: {', '.join(shape.keys)})"
            )
        _check_value(value, expected, dotted, layer)


def _check_value(value: Any, expected: Value | Table | TableOf, dotted: str, layer: Layer) -> None:
    where = layer.origin or layer.name
    if isinstance(expected, Value):
        # TOML's true is Python's True, an int: a boolean is never an integer here.
        if isinstance(value, bool) != (expected.kind is bool) or not isinstance(value, expected.kind):
            raise config_error(
                where, key=dotted, problem=f"must be {_TYPE_NAMES[expected.kind]}, not {_type_name(value)}"
            )
        problem = expected.check(value) if expected.check and layer.name != FLAGS else None
        if problem:
            raise config_error(where, key=dotted, problem=problem)
        return
    if not isinstance(value, Mapping):
        raise config_error(where, key=dotted, problem=f"must be a table, not {_type_name(value)}")
    if isinstance(expected, Table):
        _check_table(value, expected, dotted, layer)
        return
    for key, inner in value.items():
        if not expected.key_ok(key):
            raise config_error(where, key=f"{dotted}.{key}", problem=f"is not {expected.key_rule}")
        _check_value(inner, expected.shape, f"{dotted}.{key}", layer)


# -- the merge --------------------------------------------------------------------------------------


def merge(layers: Sequence[Layer]) -> Config:
    """Check each layer against the schema, then lay them over each other, lowest first:
    tables merge key by key, a scalar or an array replaces what was below it."""
    tree: dict[str, Any] = {}
    leaves: dict[str, Leaf] = {}
    for layer in layers:
        _check_table(layer.data, SCHEMA, "", layer)
        _overlay(
            tree=tree,
            data=layer.data,
            path="",
            leaves=leaves,
            layer=Leaf({}, layer.description, layer.origin or layer.name),
        )
    return _build(tree, dict(sorted(leaves.items())))


def _overlay(tree: dict[str, Any], *, data: Mapping[str, Any], path: str, leaves: dict[str, Leaf], layer: Leaf) -> None:
    """Lay ``data`` over ``tree``; ``layer`` is the leaf this layer makes (its value set for each key)."""
    for key, value in data.items():
        dotted = f"{path}.{key}" if path else key
        if isinstance(value, Mapping):
            below = tree.setdefault(key, {})
            leaves.pop(dotted, None)  # an empty table stands as a leaf only until something is set in it
            if not value and not below:
                leaves[dotted] = layer
            _overlay(tree=below, data=value, path=dotted, leaves=leaves, layer=layer)
        else:
            tree[key] = value
            leaves[dotted] = layer._replace(value=value)


def _build(tree: Mapping[str, Any], leaves: Mapping[str, Leaf]) -> Config:
    duel = dict(tree.get("duel", {}))
    max_turns, seats = duel.get("max_turns"), duel.get("seats", SETTINGS["seats"].default)
    if max_turns is not None and max_turns < seats:
        set_by = leaves["duel.max_turns"]
        if set_by.origin != FLAGS:  # a flag is checked by DuelSettings.check, as --max-turns always was
            seats_from = leaves["duel.seats"].origin if "duel.seats" in leaves else DEFAULT
            raise config_error(
                set_by.file,
                key="duel.max_turns",
                problem=f"must be at least duel.seats, got {max_turns} (duel.seats = {seats}: {seats_from})",
            )
    panel = tree.get("panel", {})
    chair = panel.get("chair")
    return Config(
        debate_dir=tree.get("debate_dir", DEFAULT_DEBATE_DIR),
        store=tree.get("store"),
        model=ModelDefaults(**tree.get("model", {})),
        personas={name: _persona(name, table, leaves) for name, table in sorted(tree.get("personas", {}).items())},
        panel=Panel(
            topic=panel.get("topic"),
            seats={
                int(n): SeatSpec(**spec)
                for n, spec in sorted(panel.get("seats", {}).items(), key=lambda item: int(item[0]))
            },
            chair=SeatSpec(**chair) if chair is not None else None,
        ),
        duel=duel,
        leaves=leaves,
    )


def _persona(name: str, table: Mapping[str, Any], leaves: Mapping[str, Leaf]) -> Persona:
    """A custom persona needs a description once every layer is merged (one file may add only incentives)."""
    if "description" not in table:
        table_key = f"personas.{name}"
        set_by = next(leaf.file for key, leaf in leaves.items() if key == table_key or key.startswith(table_key + "."))
        raise config_error(set_by, key=f"personas.{name}.description", problem="is required: say who this persona is")
    return Persona(name, table["description"].strip(), tuple(item.strip() for item in table.get("incentives", ())))


# -- the layers, read from files, the environment and the flags --------------------------------------


def defaults() -> Layer:
    """The built-in values: today's flag defaults (``max_turns`` has none: three rounds, from the seats)."""
    duel = {setting.name: setting.default for setting in SETTINGS.values() if setting.default is not None}
    return Layer(DEFAULT, "", {"debate_dir": DEFAULT_DEBATE_DIR, "duel": duel})


def user_file(env: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/duel/config.toml``, else ``~/.config/duel/config.toml`` (a relative
    ``$XDG_CONFIG_HOME`` is ignored, as the XDG specification says)."""
    base = env.get("XDG_CONFIG_HOME", "")
    return (Path(base) if os.path.isabs(base) else home(env) / ".config") / USER_FILE


def home(env: Mapping[str, str]) -> Path:
    """The home folder: ``$HOME``, else the one the system knows."""
    return Path(env.get("HOME") or Path.home())


def project_root(cwd: Path, *, home_folder: Path) -> Path | None:
    """The nearest folder from ``cwd`` up holding ``duel.toml`` or ``duel.local.toml``. The search ends
    after a folder holding ``.git`` (the repository's root), and before the home folder or a folder anyone
    may write to (``/tmp``): a file there is not this project's, and anyone could have put it there."""
    for folder in (cwd, *cwd.parents):
        if folder == home_folder or _writable_by_anyone(folder):
            return None
        if (folder / PROJECT_FILE).exists() or (folder / LOCAL_FILE).exists():
            return folder
        if (folder / ".git").exists():
            return None
    return None


def project_folder(cwd: Path, *, home_folder: Path) -> Path:
    """Where a project's own files go (``duel skill --install``): the folder :func:`project_root` finds
    the configuration in, else the top of the git work tree ``cwd`` is in, else ``cwd``; so that what is
    installed and what is configured are found in the same place from any subfolder."""
    root = project_root(cwd, home_folder=home_folder)
    if root is not None:
        return root
    for folder in (cwd, *cwd.parents):
        if folder == home_folder:
            break
        if (folder / ".git").exists():
            return folder
    return cwd


def _writable_by_anyone(folder: Path) -> bool:
    try:
        return bool(folder.stat().st_mode & stat.S_IWOTH)
    except OSError:
        return True  # a folder that cannot be looked at cannot be trusted either


def read_layers(
    cwd: Path, env: Mapping[str, str], extra: Sequence[Path] = (), *, untrusted: list[Untrusted] | None = None
) -> list[Layer]:
    """Every layer below the flags, lowest first; a file that does not exist is no layer (but an
    ``extra`` file must exist: it was named). A project file's value that needs a trust the user has not
    given is ``UNTRUSTED_CONFIG``; with ``untrusted`` (``duel config show``), it is left out and added there."""
    cwd, home_folder = Path(os.path.abspath(cwd)), Path(os.path.abspath(home(env)))
    layers = [defaults()]
    found = read_file(USER, user_file(env), relative_to=None, home_folder=home_folder)
    layers += [found] if found else []
    root = project_root(cwd, home_folder=home_folder)
    if root is not None:
        for name, file in ((PROJECT, PROJECT_FILE), (LOCAL, LOCAL_FILE)):
            found = read_file(name, root / file, relative_to=root, home_folder=home_folder)
            if found is None:
                continue
            if untrusted is None:
                refuse_untrusted(found, root, env)
            else:
                withheld = untrusted_values(found, root, env)
                untrusted += withheld
                found = found._replace(data=_without(found.data, {value.key for value in withheld}))
            layers.append(found)
    for named in extra:
        path = Path(os.path.abspath(named))
        found = read_file(LINEUP, path, relative_to=path.parent, home_folder=home_folder)
        if found is None:
            raise config_error(str(path), key=None, problem="no such file")
        layers.append(found)
    layers += [
        Layer(ENVIRONMENT, f"${variable}", {key: env[variable]})
        for variable, key in ((DEBATE_DIR_ENV, "debate_dir"), (STORE_ENV, "store"))
        if env.get(variable)
    ]
    return layers


def read_file(name: str, path: Path, *, relative_to: Path | None, home_folder: Path) -> Layer | None:
    """One TOML file as a layer, or None when there is none. In its ``debate_dir``, ``~/`` is the home
    folder, and a relative path is made relative to ``relative_to`` (the project root, a lineup's
    folder), or left relative to the current folder (None: the user's file)."""
    try:
        raw = config_bytes(path)
    except FileNotFoundError:
        return None
    if sys.version_info >= (3, 11):  # imported here: a command that finds no file never pays for the parser
        import tomllib
    else:
        import tomli as tomllib
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise config_error(str(path), key=None, problem="is not UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise config_error(str(path), key=None, problem=f"is not valid TOML: {exc}") from None
    where = data.get("debate_dir")
    if isinstance(where, str) and where.strip():
        if where == "~" or where.startswith("~/"):
            where = str(home_folder / where[2:])
        data["debate_dir"] = str(relative_to / where) if relative_to is not None else where
    return Layer(name, str(path), data)


def config_bytes(path: Path) -> bytes:
    """A configuration file's bytes (the trust file's too): a regular file of at most ``MAX_CONFIG_BYTES``,
    else ``INVALID_CONFIG``. FileNotFoundError passes through: a missing file is no layer."""
    try:
        return read_bounded(path, MAX_CONFIG_BYTES)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise config_error(str(path), key=None, problem=f"cannot be read: {reason}") from None


# -- trust: what a project's files may set ------------------------------------------------------------
#
# A repository's duel.toml (and a duel.local.toml it ships: git-ignored is not absent) is written by
# whoever owns the repository. As git refuses hooks and core.fsmonitor from a clone, such a file may set
# nothing that sends the user's API keys or documents to another host, or writes outside the project,
# until the user trusts that file, as it is now (docs/protocol.md section 2, "Trust").


def untrusted_keys(layer: Layer, root: Path) -> list[tuple[str, str]]:
    """(dotted key, what it would do) for each value of a project file that needs the user's trust."""
    found = []
    for key, value in _leaf_values(layer.data, ""):
        if key == "store":
            found.append((key, f"would write your documents into the database {_shown(value)}"))
        elif key.endswith("base_url"):
            found.append((key, f"would send your API key and documents to {_shown(value)}"))
        elif key == "debate_dir" and not _inside(Path(str(value)), root):
            found.append((key, f"would write outside the project or into .git/, to {_shown(value)}"))
    return found


class Untrusted(NamedTuple):
    """A value a project file sets that needs the user's trust, which it does not have: shown, never used."""

    key: str  # dotted
    value: object
    origin: str  # the layer, as Leaf.origin names it
    effect: str  # what it would do: "would send your API key and documents to …"


def untrusted_values(layer: Layer, root: Path, env: Mapping[str, str]) -> list[Untrusted]:
    """The values of a project file that need a trust the user has not given it (none once it is trusted)."""
    _check_table(layer.data, SCHEMA, "", layer)  # a malformed file is INVALID_CONFIG first
    found = untrusted_keys(layer, root)
    if not found or trusted(Path(layer.origin), env):
        return []
    values = dict(_leaf_values(layer.data, ""))
    return [Untrusted(key, values[key], layer.description, effect) for key, effect in found]


def _without(data: Mapping[str, Any], keys: set[str], path: str = "") -> dict[str, Any]:
    """``data`` less the values at the dotted ``keys``."""
    kept = {}
    for key, value in data.items():
        dotted = f"{path}.{key}" if path else key
        if dotted not in keys:
            kept[key] = _without(value, keys, dotted) if isinstance(value, Mapping) else value
    return kept


def _leaf_values(data: Mapping[str, Any], path: str) -> list[tuple[str, object]]:
    found: list[tuple[str, object]] = []
    for key, value in data.items():
        dotted = f"{path}.{key}" if path else key
        found += _leaf_values(value, dotted) if isinstance(value, Mapping) else [(dotted, value)]
    return found


def _shown(value: object) -> str:
    return repr(redact(value) if isinstance(value, str) else value)


def _inside(path: Path, root: Path) -> bool:
    try:
        confine(path, project=root, what="debate_dir")
    except DuelError:
        return False
    return True


def trust_file(env: Mapping[str, str]) -> Path:
    """Where ``duel config trust`` records the files the user trusts: beside the user's configuration."""
    return user_file(env).parent.parent / TRUST_FILE


def file_digest(path: Path) -> str:
    """The SHA-256 of the file's bytes, in hex, as the trust file records it."""
    import hashlib  # only where a configuration file exists

    return hashlib.sha256(config_bytes(path)).hexdigest()


def trusted(path: Path, env: Mapping[str, str]) -> bool:
    """Whether the user trusted this file with exactly its present bytes (a change needs trust again)."""
    try:
        lines = config_bytes(trust_file(env)).decode("utf-8").splitlines()
    except (OSError, DuelError, UnicodeDecodeError):  # no trust file, or one that cannot be read: nothing trusted
        return False
    return f"{file_digest(path)}  {path}" in lines


def trust(path: Path, env: Mapping[str, str]) -> None:
    """Record that the user trusts ``path`` as it is now; an earlier line for the same path is replaced."""
    record = trust_file(env)
    try:
        kept = [
            line for line in config_bytes(record).decode("utf-8").splitlines() if line.partition("  ")[2] != str(path)
        ]
    except FileNotFoundError:
        kept = []
    record.parent.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{line}\n" for line in [*kept, f"{file_digest(path)}  {path}"])
    write_atomic(record, lines.encode("utf-8"))  # owner-only, and whole: a torn write would trust nothing or too much


def refuse_untrusted(layer: Layer, root: Path, env: Mapping[str, str]) -> None:
    """``UNTRUSTED_CONFIG`` when a project file sets a key that needs trust and the user has not trusted it."""
    found = untrusted_values(layer, root, env)
    if not found:
        return
    key, effect = found[0].key, found[0].effect
    raise DuelError(
        ErrorCode.UNTRUSTED_CONFIG,
        f"{layer.origin}: {key}: this project file {effect}; a project may not choose that for you: "
        f"set it in {user_file(env)}, the environment or a flag, or run `duel config trust` to trust this file",
        {"file": layer.origin, "key": key},
    )


def destinations(config: Config) -> list[str]:
    """A line for each server or database a file or the environment chose, to show before anything is sent."""
    return [
        f"{key} = {_shown(leaf.value)} (from {leaf.origin})"
        for key, leaf in config.leaves.items()
        if (key == "store" or key.endswith("base_url")) and leaf.origin != FLAGS
    ]


class Flags:
    """The command line's values, the top layer; None (or "") is a flag not given.

    Keyword-only: fourteen optional values, most of one type, would be swapped silently by
    position. A plain class, as :class:`~rp1_duel.clock.Instant` is not a dataclass: building one costs
    every ``duel tools`` call about half a millisecond."""

    def __init__(
        self,
        *,
        debate_dir: str | None = None,
        store: str | None = None,
        provider: str | None = None,  # model.provider
        model: str | None = None,  # model.model
        base_url: str | None = None,  # model.base_url
        reasoning: str | None = None,  # model.reasoning
        max_turns: int | None = None,  # duel.*, one for each of settings.SETTINGS
        lease_seconds: int | None = None,
        peer_wait_seconds: int | None = None,
        turn_timeout_seconds: int | None = None,
        seats: int | None = None,
        max_output_tokens: int | None = None,  # model.max_output_tokens
        sealed_openings: bool | None = None,  # duel.sealed_openings: True, or None when not given
        on_fabrication: str | None = None,  # duel.on_fabrication
    ) -> None:
        self.debate_dir = debate_dir
        self.store = store
        self.provider = provider
        self.model = model
        self.base_url = base_url
        self.reasoning = reasoning
        self.max_turns = max_turns
        self.lease_seconds = lease_seconds
        self.peer_wait_seconds = peer_wait_seconds
        self.turn_timeout_seconds = turn_timeout_seconds
        self.seats = seats
        self.max_output_tokens = max_output_tokens
        self.sealed_openings = sealed_openings
        self.on_fabrication = on_fabrication

    def layer(self) -> Layer:
        """The flags as the top layer: only those given, under their dotted keys."""
        model = {
            "provider": self.provider,
            "model": self.model,
            "base_url": self.base_url,
            "reasoning": self.reasoning,
            "max_output_tokens": self.max_output_tokens,
        }
        duel = {name: getattr(self, name) for name in (*SETTINGS, "sealed_openings", "on_fabrication")}
        data = _given({"debate_dir": self.debate_dir, "store": self.store, "model": model, "duel": duel})
        return Layer(FLAGS, "", data)


NO_FLAGS: Final = Flags()


def _given(table: Mapping[str, Any]) -> dict[str, Any]:
    """``table`` without the flags not given, nor the tables left empty."""
    found: dict[str, Any] = {}
    for key, value in table.items():
        given = _given(value) if isinstance(value, Mapping) else value
        if given not in (None, "", {}):
            found[key] = given
    return found


def load_config(
    cwd: Path,
    env: Mapping[str, str],
    flags: Flags = NO_FLAGS,
    extra: Sequence[Path] = (),
    *,
    untrusted: list[Untrusted] | None = None,
) -> Config:
    """The configuration a command runs with: every layer read, the flags on top, merged. With
    ``untrusted``, a value a project file may not set untrusted is left out and added there, not refused.

    The default debate dir (``./debates``) is the repository's when it is a committed symbolic link:
    one that leads out of the project or into ``.git/`` is ``PATH_OUTSIDE_PROJECT``."""
    config = merge([*read_layers(cwd, env, extra, untrusted=untrusted), flags.layer()])
    if config.origin("debate_dir") == DEFAULT:
        confine(
            Path(cwd) / config.debate_dir,
            project=project_of(cwd),
            what="the debate dir",
            hint="pass --debate-dir to use it anyway",
        )
    return config
