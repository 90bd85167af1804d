"""Named personas (issue 13 item 3): the built-in library, custom ones from the configuration, and
what reaches the system prompt (a free-text persona, and no persona, exactly as before)."""

from __future__ import annotations

import pytest

from rp1_duel.configuration import Persona, load_config
from rp1_duel.participant.personas import BUILT_IN, available_personas, resolve
from rp1_duel.participant.prompt import system_prompt
from rp1_duel.turns import SourceDocument

from helpers import SOURCE, panel

DOCUMENT = SourceDocument.from_bytes(SOURCE.encode(), "design.md")


def prompt(persona: Persona | str | None, seats: int = 2) -> str:
    return system_prompt(
        "Ada",
        topic="Lease design",
        source=DOCUMENT,
        source_name="design.md",
        persona=persona,
        position=None,
        schedule=panel(seats),
    )


def test_the_built_in_library_has_four_personas_each_rewarded_for_something():
    assert list(BUILT_IN) == ["skeptic", "pragmatist", "domain-expert", "users-advocate"]
    for name, persona in BUILT_IN.items():
        assert persona.name == name
        assert persona.description.endswith(".")
        assert len(persona.incentives) >= 3
    assert any("never for agreeing early" in incentive for incentive in BUILT_IN["skeptic"].incentives)


def test_a_named_persona_puts_its_description_and_incentives_under_the_persona_line():
    text = prompt(resolve("skeptic", {}))
    skeptic = BUILT_IN["skeptic"]
    expected = (
        f"Persona: skeptic. {skeptic.description}\nYou are rewarded for:\n"
        + "".join(f"- {incentive}\n" for incentive in skeptic.incentives)
        + "Your position: form your own view"
    )
    assert expected in text


def test_a_free_text_persona_and_no_persona_give_the_prompt_as_before():
    assert "\nPersona: a grumpy build engineer.\nYour position: " in prompt(resolve("a grumpy build engineer", {}))
    assert "\nPersona: a rigorous, fair-minded reviewer who argues from the text.\nYour position: " in prompt(
        resolve(None, {})
    )
    assert "rewarded" not in prompt(None)


def test_a_name_is_matched_in_any_case_and_anything_else_stays_text():
    assert resolve(" Domain-Expert ", {}) is BUILT_IN["domain-expert"]
    assert resolve("skeptical", {}) == "skeptical"


def test_a_custom_persona_from_the_configuration_is_available_and_may_replace_a_built_in(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "duel.toml").write_text(
        '[personas.security-reviewer]\ndescription = "You review for attacks."\nincentives = ["finding the hole"]\n'
        '[personas.skeptic]\ndescription = "Our house skeptic."\n',
        encoding="utf-8",
    )
    custom = load_config(tmp_path, {"HOME": str(tmp_path / "home")}).personas
    assert list(available_personas(custom)) == [
        "skeptic",
        "pragmatist",
        "domain-expert",
        "users-advocate",
        "security-reviewer",
    ]
    assert resolve("skeptic", custom) == Persona("skeptic", "Our house skeptic.")
    text = prompt(resolve("security-reviewer", custom))
    assert "Persona: security-reviewer. You review for attacks.\nYou are rewarded for:\n- finding the hole\n" in text
    assert "Persona: skeptic. Our house skeptic.\nYour position: " in prompt(resolve("skeptic", custom))


@pytest.mark.parametrize("seats", [2, 3])
def test_a_persona_changes_nothing_else_in_the_prompt(seats):
    plain, named = prompt("x", seats), prompt(BUILT_IN["pragmatist"], seats)
    before, _, after = named.partition("Persona: pragmatist.")
    assert plain.startswith(before) and plain.endswith(after.partition("Your position: ")[2])
