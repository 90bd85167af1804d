"""Whatever is submitted, the validator answers with a report and never raises."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rp1_duel.turns import NoveltyIndex, normalize_turn_text, parse_turn
from rp1_duel.turns.matching import normalize_text
from rp1_duel.turns.rules import RULES, validate_turn
from rp1_duel.vocabulary import SECTIONS

from helpers import DEBATE, context

QUICK = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

MARKDOWN_PIECES = st.sampled_from(
    [
        "---",
        "## Turn 1 — Alice (claude-code / claude-opus-4) — OPEN_TO_DEBATE",
        "## Turn 2 – Bob (x / y) – DISSENTING",
        *(f"**{name}**" for name in SECTIONS),
        "- ",
        "  - ",
        "    - ",
        "1. ",
        "> ",
        "```",
        "~~~",
        "# ",
        "### ",
        "Addresses: ",
        "Claim: ",
        "Support:",
        "Turn 1",
        'Turn 9 "',
        "design.md#",
        "design.md:3-",
        'design.md "',
        "https://",
        "Principle: ",
        "(blocking)",
        "(non-blocking)",
        "<!-- duel:",
        "<!--",
        "-->",
        "===",
        "***",
        "`",
        "“",
        "”",
        "—",
        "\t",
        "\r\n",
        "\r",
        "\x00",
        "\ufeff",
        "lease",
        "expire",
        "[a](https://b)",
        "<https://c>",
        "|",
    ]
)
MARKDOWNISH = st.lists(st.one_of(MARKDOWN_PIECES, st.text(max_size=12), st.just("\n")), max_size=60).map("".join)


def assert_consistent(report) -> None:
    assert report.ok == (report.violations == [])
    for violation in report.violations:
        assert violation.code in RULES
        assert violation.message
        assert violation.line is None or violation.line >= 1
        assert violation.section is None or violation.section in SECTIONS
        assert set(violation.to_dict()) <= {"code", "message", "line", "section"}


@QUICK
@given(st.text(max_size=400))
def test_arbitrary_text_gets_a_consistent_report_never_an_exception(text):
    assert_consistent(validate_turn(text, context(2)))
    assert normalize_turn_text(text).endswith("\n")


@QUICK
@given(st.binary(max_size=300))
def test_arbitrary_bytes_get_a_consistent_report_never_an_exception(raw):
    assert_consistent(validate_turn(raw, context(1)))


@QUICK
@given(MARKDOWNISH)
def test_markdownish_text_gets_a_consistent_report_never_an_exception(text):
    assert_consistent(validate_turn(text, context(3)))
    parse_turn(text)


@st.composite
def mutated_turns(draw):
    number = draw(st.integers(1, len(DEBATE)))
    lines = DEBATE[number - 1].split("\n")
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["drop", "duplicate", "replace", "insert", "indent", "truncate"]))
        if action == "drop" and len(lines) > 1:
            del lines[index]
        elif action == "duplicate":
            lines.insert(index, lines[index])
        elif action == "replace":
            lines[index] = draw(MARKDOWNISH)
        elif action == "insert":
            lines.insert(index, draw(st.one_of(MARKDOWN_PIECES, MARKDOWNISH)))
        elif action == "indent":
            lines[index] = draw(st.sampled_from(["  ", "    ", "\t", "- "])) + lines[index]
        elif action == "truncate":
            line = lines[index]
            lines[index] = line[: draw(st.integers(0, len(line)))]
    return number, "\n".join(lines)


@QUICK
@given(mutated_turns())
def test_mutated_valid_turns_get_a_consistent_report_never_an_exception(case):
    number, text = case
    assert_consistent(validate_turn(text, context(number)))


@QUICK
@given(st.sampled_from([1, 2, 3]), st.sampled_from(["\r\n", "\r"]))
def test_line_endings_do_not_change_the_verdict(number, newline):
    text = DEBATE[number - 1].replace("\n", newline)
    assert validate_turn(text, context(number)).ok


WORDS = st.sampled_from(
    ["lease", "expiry", "fence", "token", "holder", "the", "a", "of", "clock", "skew", "refresh", "grant"]
)
PHRASES = st.lists(WORDS, min_size=1, max_size=12).map(" ".join)


@QUICK
@given(st.lists(PHRASES, max_size=30), PHRASES)
def test_novelty_index_agrees_with_a_full_scan(earlier, claim):
    # The prefix filter may only skip candidates that could never reach the threshold.
    def words(text):
        return normalize_text(text).split()

    def similar(first, second):
        a, b = set(words(first)), set(words(second))
        return words(first) == words(second) or len(a & b) / len(a | b) >= 0.8

    assert NoveltyIndex(earlier).repeats(claim) == any(similar(claim, text) for text in earlier)
