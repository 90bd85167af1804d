"""``duel config show``: the merged configuration, each value with the layer that set it.

Text is TOML-like, one dotted key a line with its origin as a comment; ``--json`` is
``{"values": {key: {"value", "origin"}}, "personas": {name: {"description", "incentives", "origin"}}}``
(docs/protocol.md section 2, "Configuration"). A store URL is shown without its password.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..configuration import DEFAULT, Config, Persona
from ..settings import DEFAULT_ROUNDS, redact

__all__ = ["render_text", "to_json"]

BUILT_IN = "built-in"
ORIGIN_COLUMN = 44  # where the origin comments line up; a longer line just gets two spaces


def rows(config: Config) -> list[tuple[str, object, str]]:
    """(dotted key, value, origin) for every value set, plus the turn limit the seats imply when none is set."""
    found = [
        (key, redact(leaf.value) if key == "store" and isinstance(leaf.value, str) else leaf.value, leaf.origin)
        for key, leaf in config.leaves.items()
    ]
    if "duel.max_turns" not in config.leaves:
        found.append(("duel.max_turns", config.settings().schedule.max_turns, f"{DEFAULT} ({DEFAULT_ROUNDS} rounds)"))
    return sorted(found, key=lambda row: row[0])


def persona_origins(config: Config, personas: Mapping[str, Persona]) -> dict[str, str]:
    """Each persona's origin: the configuration layer that defined it, or built-in."""
    return {
        name: config.origin(f"personas.{name}.description") if name in config.personas else BUILT_IN
        for name in personas
    }


def render_text(config: Config, personas: Mapping[str, Persona]) -> str:
    """The configuration as TOML-like text, one dotted key a line with its origin as a comment."""
    lines = []
    for key, value, origin in rows(config):
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


def to_json(config: Config, personas: Mapping[str, Persona]) -> dict[str, Any]:
    """The configuration as ``--json`` prints it: each value and persona with its origin."""
    origins = persona_origins(config, personas)
    return {
        "values": {key: {"value": value, "origin": origin} for key, value, origin in rows(config)},
        "personas": {
            name: {"description": persona.description, "incentives": list(persona.incentives), "origin": origins[name]}
            for name, persona in personas.items()
        },
    }
