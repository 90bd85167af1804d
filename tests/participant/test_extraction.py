"""Answer extraction (issue 9, finding 4): the wrappers models put around a turn are removed
before validation, locally; a well-formed turn is never changed and nothing is invented."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rp1_duel.participant as participant_package
from rp1_duel.errors import DuelError
from rp1_duel.participant import prompt
from rp1_duel.participant.extraction import Extraction, extract_turn, wrapper_notes
from rp1_duel.turns import read_source, validate_turn
from rp1_duel.vocabulary import STANCES, WRAPPERS, ErrorCode

from helpers import DUEL, SOURCE, TURN_1, TURN_2, TURN_3, claim, context, join, make_turn

TURN = TURN_1.removeprefix("---\n")  # valid as turn 1 in helpers.context(1)
EXAMPLES = sorted((Path(participant_package.__file__).parent / "examples").glob("*/*.md"))


def assert_extracted(answer: str, *stripped: str, turn: str = TURN) -> None:
    result = extract_turn(answer)
    assert result == Extraction(turn, stripped)
    assert validate_turn(result.text, context(1)).ok


# -- each wrapper, then combinations -------------------------------------------------------
@pytest.mark.parametrize(
    ("opener", "closer"),
    [
        ("```markdown", "```"),
        ("```", "```"),
        ("````md", "`````"),
        ("~~~", "~~~"),
        ("~~~ markdown", "~~~"),
        ("  ```text", "```"),
    ],
)
def test_a_fence_around_the_whole_answer_is_stripped(opener, closer):
    assert_extracted(f"{opener}\n{TURN}{closer}\n", "fence")


def test_an_unclosed_fence_is_stripped_to_the_end():
    assert_extracted(f"```markdown\n{TURN}", "fence")


@pytest.mark.parametrize("preamble", ["Here is my turn:", "Sure! Below is turn 1.\n\nIt cites the source.", "+++"])
def test_text_before_the_heading_is_stripped(preamble):
    assert_extracted(f"{preamble}\n\n{TURN}", "preamble")


def test_the_opening_rule_line_is_kept_and_what_precedes_it_stripped():
    assert_extracted(f"Here is my turn:\n---\n{TURN}", "preamble", turn="---\n" + TURN)


@pytest.mark.parametrize("tag", ["think", "thinking", "reasoning", "THINK"])
def test_a_leading_reasoning_block_is_stripped_even_when_it_drafts_a_heading(tag):
    assert_extracted(f"<{tag}>\nFirst a draft:\n## Turn 1 — draft\n</{tag}>\n\n{TURN}", "reasoning")


def test_several_reasoning_blocks_are_stripped():
    assert_extracted(f"<think>a</think>\n<reasoning>\nb\n</reasoning>{TURN}", "reasoning")


def test_a_closing_tag_whose_opening_tag_was_in_the_prompt_ends_the_reasoning():
    assert_extracted(f"I should cite lines.\n## Turn 1 — plan\n</think>\n\n{TURN}", "reasoning")


def test_an_unclosed_reasoning_block_ends_at_the_turn_heading_as_a_preamble():
    assert_extracted(f"<think>\nI should cite lines.\n\n{TURN}", "preamble")


@pytest.mark.parametrize(
    "remark",
    [
        "Let me know if you want changes.",
        "I hope this helps move us toward consensus.",
        "Feel free to push back on any of it.",
        "Thank you for a careful debate!\nI look forward to your reply.",
    ],
)
def test_a_closing_remark_after_the_last_section_is_stripped(remark):
    assert_extracted(f"{TURN}\n{remark}\n", "trailing_remark")
    assert_extracted(f"{TURN}\n---\n\n{remark}\n", "trailing_remark")


@pytest.mark.parametrize(
    "note",
    [
        "*Note: this turn answers Bob's second counterpoint only.*",
        "_Written under a tight turn deadline; the sweep question is left for the next turn._",
        "*Word count: about 400.*\n*Confidence: moderate.*",
    ],
)
@pytest.mark.parametrize("rule", ["---", "***", "___"])
def test_a_note_in_italics_after_a_rule_at_the_end_is_a_closing_remark(note, rule):
    assert_extracted(f"{TURN}\n{rule}\n\n{note}\n", "trailing_remark")


@pytest.mark.parametrize(
    "tail",
    [
        "\n*An italic item, with no rule above it, is an item of the section.*\n",
        "\n---\n\n*See Turn 1 for the evidence.*\n",  # cites: may be an item
        "\n---\n\n**Note:** bold is not a note in italics.\n",
        "\n---\n\n*half italic* and half not.\n",
    ],
)
def test_an_italic_paragraph_without_a_rule_or_that_cites_stays(tail):
    answer = TURN + tail
    assert extract_turn(answer) == Extraction(answer)


def test_every_wrapper_at_once_is_stripped_in_the_order_it_stood():
    answer = f"<think>plan</think>\nHere is my turn:\n\n````markdown\n---\n{TURN}\nI hope this helps.\n````\nCheers!\n"
    assert_extracted(answer, "reasoning", "preamble", "fence", "trailing_remark", turn="---\n" + TURN)


def test_a_wrapping_fence_keeps_the_turns_own_code_blocks():
    turn = TURN.replace("**Agreements**\n", "**Agreements**\n```python\nlease.refresh()\n```\n")
    assert extract_turn(f"```\n{turn}```\n").text == turn
    assert extract_turn(f"```markdown\n{turn}").text == turn  # unclosed wrapper: the inner block stays whole


# -- conservative: what is not clearly a wrapper stays ---------------------------------------
@pytest.mark.parametrize(
    "tail",
    [
        "- Turn 1\n",  # a list item
        "\nThanks for Turn 1: its evidence moved me.\n",  # cites: may be an item
        "\nLet me know: design.md:3 is ambiguous.\n",  # cites the source
        "Let me know if this is blocking.\n",  # no blank line: continues the last item
        "\n    Let me know.\n",  # indented: code, not a paragraph of the turn's own
        "\nWe still disagree on sweeps.\n",  # an ordinary paragraph is an item of the section
    ],
)
def test_a_final_paragraph_that_may_be_part_of_the_turn_stays(tail):
    answer = TURN + tail
    assert extract_turn(answer) == Extraction(answer)


def test_a_remark_before_the_first_section_is_not_a_trailer():
    answer = "## Turn 1 — Alice (claude-code / claude-opus-4) — OPEN_TO_DEBATE\n\nLet me know what you think.\n"
    assert extract_turn(answer) == Extraction(answer)


def test_an_answer_without_a_turn_heading_is_left_to_validation():
    for answer in ("```markdown\n# Turn 1 — Alice\n```\n", "Sorry, I cannot write that.", ""):
        assert extract_turn(answer) == Extraction(answer)


@pytest.mark.parametrize(
    "turn",
    [TURN_1, TURN_2, TURN_3, *(p.read_text() for p in EXAMPLES)],
    ids=["TURN_1", "TURN_2", "TURN_3", *(f"{p.parent.name}/{p.name}" for p in EXAMPLES)],
)
def test_a_well_formed_turn_is_returned_unchanged(turn):
    assert extract_turn(turn) == Extraction(turn)


@settings(max_examples=200)
@given(
    st.integers(1, 12),
    st.sampled_from(STANCES),
    st.booleans(),
    st.sampled_from(["", "\n", "\n\n", "\n\n\n"]),
    st.sampled_from(["", "---\n", "\n---\n\n"]),
    st.sampled_from(["\n", "\r\n"]),
    st.sampled_from(["", "\nTurn 1\n", "\n- Principle: the last word is a real item\n"]),
)
def test_extraction_never_changes_a_well_formed_turn(n, stance, blocking, trailing, opening, newline, last_item):
    turn = (
        opening
        + make_turn(n, "Alice", "claude-code", "claude-opus-4", stance, blocking=blocking)
        + last_item
        + trailing
    )
    turn = turn.replace("\n", newline)
    assert extract_turn(turn) == Extraction(turn)


MARKDOWNISH = st.lists(
    st.sampled_from(
        [
            "```",
            "```markdown",
            "~~~",
            "---",
            "## Turn 1 — A (h / m) — CONVERGING",
            "**Position**",
            "**Agreements**",
            "<think>",
            "</think>",
            "Let me know.",
            "I hope this helps.",
            "- item",
            "Here is my turn:",
            "",
            "text",
        ]
    ),
    max_size=25,
).map("\n".join)


@given(MARKDOWNISH)
def test_extraction_only_ever_removes_text(answer):
    result = extract_turn(answer)
    assert set(result.stripped) <= set(WRAPPERS)
    if result.stripped:
        assert result.text.rstrip() in answer
    else:
        assert result.text == answer


# -- linear time ---------------------------------------------------------------------------
RUN = 20_000
HOSTILE = {
    "reasoning blocks": "<think></think>" * RUN,
    "unclosed reasoning blocks": "<think>" * RUN,
    "orphan closers": "</think>\n" * RUN,
    "blank lines": "\n" * (5 * RUN),
    "whitespace before a tag": " " * (5 * RUN) + "<think>",
    "fence lines": "```\n" * RUN + TURN,
    "closing fences": "```\n" + TURN + "```\n" * RUN,
    "headings": "## Turn 1\n" * RUN,
    "labels then remarks": TURN + "\n**Agreements**\n\nLet me know\n" * (RUN // 10),
    "remark words": TURN + "\nLet me know " + "let me know " * RUN,
}


@pytest.mark.parametrize("answer", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_answer_is_extracted_in_linear_time(answer):
    started = time.perf_counter()
    result = extract_turn(answer)
    wrapper_notes(result)
    # About 10 µs a byte at most: a quadratic scan of these inputs takes minutes.
    assert time.perf_counter() - started < 0.5 + 10e-6 * len(answer.encode())


# -- what the model is told ----------------------------------------------------------------
def test_the_system_prompt_shows_the_turn_format_without_a_fence(tmp_path):
    (tmp_path / "design.md").write_text(SOURCE)
    system = prompt.system_prompt(
        "Alice",
        topic="t",
        source=read_source(tmp_path / "design.md"),
        source_name="design.md",
        persona=None,
        position=None,
        schedule=DUEL,
    )
    assert "```" not in system and "~~~" not in system
    assert "\n## Turn {N} — {Participant} ({Harness} / {Model}) — {STANCE}\n**Position**\n" in system


def test_a_rejection_after_stripping_names_what_was_stripped():
    notes = wrapper_notes(extract_turn(f"Here is my turn:\n```markdown\n{TURN}```"))
    assert len(notes) == 1
    assert "text before the heading line, a code fence (```)" in notes[0]
    text = prompt.instruction(
        1,
        max_turns=4,
        heading="## Turn 1 — ",
        violations=validate_turn("x", context(1)).violations,
        draft="x",
        notes=notes,
    )
    assert "About the form of your answer:\n- Your answer had text before the heading line" in text


def test_a_fence_or_reasoning_block_left_in_the_draft_is_named():
    fenced = wrapper_notes(extract_turn("```markdown\n# Turn 1 — Alice\n```"))
    assert any("inside a code fence" in note for note in fenced)
    thinking = wrapper_notes(extract_turn("<think>\nstill thinking"))
    assert any("reasoning block" in note for note in thinking)
    assert wrapper_notes(extract_turn(TURN)) == ()


# -- what the events record ----------------------------------------------------------------
def events(service, duel_id: str) -> list[dict]:
    path = Path(service.debate.root) / ".duel" / "duels" / duel_id / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_turn_appended_event_records_what_was_stripped(service, source):
    alice, _bob = join(service, source, "Alice", harness="duel", model_id="m"), join(service, source, "Bob")
    turn = make_turn(1, "Alice", "duel", "m")
    service.append(alice.seat, claim(service, alice), turn, release=True, stripped=("preamble", "fence"))
    appended = [e for e in events(service, alice.duel_id) if e["type"] == "turn_appended"]
    assert appended[-1]["data"]["stripped"] == ["preamble", "fence"]


def test_append_refuses_an_unknown_wrapper_name_and_writes_nothing(service, source):
    alice, _bob = join(service, source, "Alice", harness="duel", model_id="m"), join(service, source, "Bob")
    lease = claim(service, alice)
    with pytest.raises(DuelError) as caught:
        service.append(alice.seat, lease, make_turn(1, "Alice", "duel", "m"), stripped=("signature",))
    assert caught.value.code == ErrorCode.INVALID_ARGUMENT
    assert service.status(alice.duel_id).turn_count == 0
