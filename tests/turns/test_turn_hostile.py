"""Hostile turns cost linear time: the turn parser's line scanners have no adjacent
unbounded repeats, and say what the old backtracking patterns said (issue: a 5 KB turn
once took 26 s to validate, inside the duel's lock)."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rp1_duel.turns import atx_heading, validate_turn
from rp1_duel.turns.grammar import _trailing_stance, section_label
from rp1_duel.vocabulary import SECTIONS

from helpers import context

# The patterns the scanners replaced: the specification, cheap on short input only.
REFERENCE_LABEL = re.compile(r"^ {0,3}(?:\*\*|__)\s*([A-Za-z][A-Za-z ]*?)\s*:?\s*(?:\*\*|__)\s*:?\s*$")
REFERENCE_STANCE = re.compile(r"^(.*?)\s*(?:[\u2014\u2013]|(?:^|\s)-{1,2})\s*(\S+)$")
REFERENCE_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SECTION_BY_KEY = {name.casefold(): name for name in SECTIONS}


def short(alphabet: str, *seeds: str) -> st.SearchStrategy[str]:
    noise = st.text(alphabet=alphabet, max_size=12)
    return st.one_of(noise, st.builds(lambda a, s, b: a + s + b, noise, st.sampled_from(seeds), noise))


@given(short(" *_:\tAgrePosiNvlt", "**Agreements**", "__Novel argument:__", "** Position **:"))
def test_section_labels_are_read_as_the_reference_pattern_reads_them(line):
    match = REFERENCE_LABEL.match(line)
    expected = _SECTION_BY_KEY.get(" ".join(match.group(1).split()).casefold()) if match else None
    assert section_label(line) == expected


@given(short(" -\u2014\u2013aB(/)\t", "Alice (h / m) \u2014 CONVERGING", "A -- X", "A (h/m)\u2014X", "--x"))
def test_the_stance_is_split_off_as_the_reference_pattern_splits_it(rest):
    match = REFERENCE_STANCE.match(rest)
    assert _trailing_stance(rest) == ((match.group(1), match.group(2)) if match else None)


@given(short(" #\tab", "## T ##", "# a #b", "### "))
def test_atx_headings_are_read_as_the_reference_pattern_reads_them(line):
    match = REFERENCE_ATX.match(line)
    assert atx_heading(line) == ((len(match.group(1)), (match.group(2) or "").strip()) if match else None)


RUN = 20_000  # characters: the old patterns took minutes on runs like these
HOSTILE = {
    "label": "**a" + " " * RUN + "x",
    "heading": "## a" + " " * RUN + "x",
    "stance": "## Turn 1 \u2014 a" + " " * RUN + "x",
    "claimant": "## Turn 1 \u2014 a" + " " * RUN + "b \u2014 OPEN_TO_DEBATE",
    "marker": ("<!--" + " " * RUN + "x") * 3,
    "empty bullet": "**Position**\n" + " " * RUN + "x\n",
    "dashes": "## Turn 1 \u2014 " + "- " * (RUN // 2) + "x",
    "emphasis": "**Position**\n" + "**a" * (RUN // 2),
    # raw HTML: every `<` is a candidate tag, comment or autolink; every backtick a code span
    "angle brackets": "<" * (3 * RUN),
    "tag names": "<a" * RUN,
    "unclosed tag": "<a" + " b=c" * (RUN // 2),
    "unclosed quote": "<a b='" + '<a c="' * (RUN // 4),
    "nested quotes": '<a x="<b y=\'<c z="' * (RUN // 10),
    "complete tags": "<a>" * RUN,
    "comments": "<!--" * (RUN // 2),
    "declarations": "<!a" * RUN,
    "block starts": "<div\n" * (RUN // 2),
    "autolink": "<a:" + "b" * (2 * RUN),
    "email": "<a@" + ("b" * 60 + ".") * (RUN // 30),
    "backtick runs": " ".join("`" * k for k in range(1, 300)),
    "url backticks": "https://x`a`" * (RUN // 4),
    "link tails": "[x](/u`) <b> `\n" * (RUN // 10),
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_turn_is_validated_in_linear_time(text):
    started = time.perf_counter()
    validate_turn(text, context(1))
    # Generous for a shared machine: quadratic behaviour on these inputs takes minutes.
    assert time.perf_counter() - started < 5.0


hostile_lines = st.lists(
    st.builds(
        lambda piece, n: piece * n,
        st.sampled_from(
            [
                " ",
                "*",
                "_",
                "-",
                "#",
                "\u2014",
                "(",
                ")",
                "<!--",
                "**a",
                "- ",
                "1. ",
                "`",
                ":",
                "\t",
                "x",
                "<",
                "<a ",
                "b='",
                'c="',
                "=",
                ">",
                "</",
                "<!",
                "@",
                "\n",
            ]
        ),
        st.integers(1, 600),
    ),
    min_size=1,
    max_size=30,
).map("".join)


@settings(max_examples=40, deadline=None)
@given(hostile_lines)
def test_validation_time_grows_at_most_linearly_with_hostile_runs(text):
    started = time.perf_counter()
    validate_turn(text, context(2))
    elapsed = time.perf_counter() - started
    # At most 100 µs a byte plus a fixed cost: about 100x an honest turn's rate.
    assert elapsed < 0.5 + 100e-6 * len(text.encode()), (len(text), elapsed)
