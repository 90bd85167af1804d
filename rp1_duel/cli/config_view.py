"""``duel config show``: the merged configuration, each value with the layer that set it.

Text is TOML-like, one dotted key a line with its origin as a comment; ``--json`` is
``{"values": {key: {"value", "origin"}}, "personas": {name: {"description", "incentives", "origin"}},
"untrusted": {key: {"value", "origin", "effect"}}}`` (docs/protocol.md section 2, "Configuration"). A value
of a project file not trusted yet is shown apart, as not used. A store URL is shown without its password.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..configuration import DEFAULT, Config, Persona, Untrusted
from ..settings import DEFAULT_ROUNDS, redact

__all__ = ["render_text", "to_json"]

BUILT_IN = "built-in"
ORIGIN_COLUMN = 44  # where the origin comments line up; a longer line just gets two spaces
NOT_USED = "UNTRUSTED, not used ({origin}): run `duel config trust` to use it"


def _shown(key: str, value: object) -> object:
    return redact(value) if key == "store" and isinstance(value, str) else value


def rows(config: Config) -> list[tuple[str, object, str]]:
    """(dotted key, value, origin) for every value set, plus the turn limit the seats imply when none is set."""
    found = [(key, _shown(key, leaf.value), leaf.origin) for key, leaf in config.leaves.items()]
    if "duel.max_turns" not in config.leaves:
        found.append(("duel.max_turns", config.settings().schedule.max_turns, f"{DEFAULT} ({DEFAULT_ROUNDS} rounds)"))
    return sorted(found, key=lambda row: row[0])


def persona_origins(config: Config, personas: Mapping[str, Persona]) -> dict[str, str]:
    """Each persona's origin: the configuration layer that defined it, or built-in."""
    return {
        name: config.origin(f"personas.{name}.description") if name in config.personas else BUILT_IN
        for name in personas
    }


def render_text(config: Config, personas: Mapping[str, Persona], untrusted: list[Untrusted]) -> str:
    """The configuration as TOML-like text, one dotted key a line with its origin as a comment; then
    the values of project files not trusted yet, each said to be not used."""
    found = rows(config) + [
        (value.key, _shown(value.key, value.value), NOT_USED.format(origin=value.origin)) for value in untrusted
    ]
    lines = []
    for key, value, origin in found:
        setting = f"{key} = {json.dumps(value, ensure_ascii=False)}"
        lines.append(f"{setting.ljust(ORIGIN_COLUMN - 2)}  # {origin}")
    origins = persona_origins(config, personas)
    built_in = [name for name, origin in origins.items() if origin == BUILT_IN]
    custom = [f"{name} (custom)" for name, origin in origins.items() if origin != BUILT_IN]
    lines.append(
        f"# personas (duel join --persona NAME): {', '.join(built_in)} ({BUILT_IN})"
        + (f"; {', '.join(custom)}" if custom else "")
    )
    return "\n".join(lines) + "\n"


def to_json(config: Config, personas: Mapping[str, Persona], untrusted: list[Untrusted]) -> dict[str, Any]:
    """The configuration as ``--json`` prints it: each value and persona with its origin, and each value of
    a project file not trusted yet with what it would do."""
    origins = persona_origins(config, personas)
    return {
        "values": {key: {"value": value, "origin": origin} for key, value, origin in rows(config)},
        "personas": {
            name: {"description": persona.description, "incentives": list(persona.incentives), "origin": origins[name]}
            for name, persona in personas.items()
        },
        "untrusted": {
            value.key: {"value": _shown(value.key, value.value), "origin": value.origin, "effect": value.effect}
            for value in untrusted
        },
    }
