"""Named personas: who a model plays in a duel or a panel, and what that debater is rewarded for.

``duel join --persona NAME`` picks one of these (or a custom one from the configuration's
``[personas.NAME]``); its description and incentives go into the system prompt. Any other
``--persona`` value is free text, as before (docs/protocol.md section 2, "Configuration").
The incentives reward scrutiny and honest concession alike, so that no persona can win by
stalling: a debater is paid for the objections that survive and for dropping those that do not.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Final

from ..configuration import Persona

__all__ = ["BUILT_IN", "Persona", "available_personas", "persona_label", "played", "resolve"]

BUILT_IN: Final = {
    persona.name: persona
    for persona in (
        Persona(
            "skeptic",
            "You treat every claim of the document as unproven until its text, a cited source or a plain argument "
            "carries it. You look for what the document asserts without support, and for what it quietly assumes.",
            (
                (
                    "finding the claim in the document that does not survive scrutiny, and showing why with its lines or "
                    "a source"
                ),
                "naming an assumption the document relies on but never states, and what follows if it is false",
                (
                    "keeping a blocking item open until the other side has answered it on the evidence; never for "
                    "agreeing early"
                ),
                "conceding a point as soon as it is shown: an objection kept after it has been answered earns nothing",
            ),
        ),
        Persona(
            "pragmatist",
            "You judge the document by what it takes to build, ship and run what it describes: effort, cost, "
            "operations, and the order in which the work can be done.",
            (
                (
                    "separating the objections that change what gets built from those that do not, and letting the "
                    "second kind go"
                ),
                "proposing the smallest change to the document that resolves a blocking item",
                "naming the concrete cost, risk or failure in operation behind a position, rather than its elegance",
                "reaching a consensus the team can act on, but never by accepting a claim that would fail in practice",
            ),
        ),
        Persona(
            "domain-expert",
            "You read the document as a specialist in its field: you know the established practice, the known "
            "failure modes and the standards and literature it should be measured against.",
            (
                "pointing out where the document departs from established practice, and whether it says why",
                (
                    "supporting each technical claim with a precise source: a specification, a paper, the documentation "
                    "of the tool in question"
                ),
                "correcting a technical error on either side, including one that would help your own position",
                (
                    "saying plainly where the evidence does not settle a question, instead of filling the gap with "
                    "authority"
                ),
            ),
        ),
        Persona(
            "users-advocate",
            "You speak for the people who will use what the document describes, none of whom is in the debate: "
            "their tasks, their mistakes, their data, their accessibility needs.",
            (
                (
                    "showing how a user actually meets a decision: the default, the error message, the migration, the "
                    "way back from a mistake"
                ),
                (
                    "finding the user the document forgets: a newcomer, someone on a slow network or an assistive "
                    "technology, someone about to lose data"
                ),
                (
                    "turning a concern about users into a concrete requirement the document could state and a test could "
                    "check"
                ),
                "saying which side the document chose when the builders' convenience and the users' cost pull apart",
            ),
        ),
    )
}


def available_personas(custom: Mapping[str, Persona]) -> dict[str, Persona]:
    """The built-in personas and the configuration's; a custom persona with a built-in's name replaces it."""
    return {**BUILT_IN, **custom}


def resolve(value: str | None, custom: Mapping[str, Persona]) -> Persona | str | None:
    """``--persona``: a known name (any case, spaces around ignored) is that persona; anything else is the
    free text it always was."""
    if value is None:
        return None
    return available_personas(custom).get(value.strip().lower(), value)


def persona_label(persona: Persona | str | None) -> str | None:
    """What the record says a seat plays: a named persona's name, ``custom`` for free text, else None."""
    if persona is None:
        return None
    return persona.name if isinstance(persona, Persona) else "custom"


def played(value: str | None, custom: Mapping[str, Persona]) -> str | None:
    """What ``duel join`` says of ``--persona`` before it starts: the named persona played, or the free text
    played as written, with the name it is close to (``skeptik``: a typo that would pass silently)."""
    if value is None:
        return None
    persona = resolve(value, custom)
    if isinstance(persona, Persona):
        return f"persona: {persona.name}"
    shown = value if len(value) <= 60 else f"{value[:57]}..."
    close = difflib.get_close_matches(value.strip().lower(), available_personas(custom), n=1, cutoff=0.75)
    near = f" (did you mean --persona {close[0]}? `duel config show` lists the named ones)" if close else ""
    return f"persona: as written, {shown!r}{near}"
