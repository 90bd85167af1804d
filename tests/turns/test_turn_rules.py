"""The turn rules of PROTOCOL.md section 7: for each rule, a turn that breaks it and the
nearest turn that keeps it."""

from __future__ import annotations

import pytest

from rp1_duel.turns import NoveltyIndex, SourceDocument, find_raw_html, normalize_turn_text, parse_reference, parse_turn
from rp1_duel.turns.matching import normalize_text
from rp1_duel.turns.rules import RULE_TABLE, RULES, TurnViolation, validate_turn
from rp1_duel.turns.rules._checked import Checked
from rp1_duel.vocabulary import SECTIONS, STANCES, RuleCode

from helpers import DEBATE, DESIGN, DESIGN_SOURCE, TURN_1, TURN_2, TURN_3, context


def edit(text: str, old: str, new: str) -> str:
    assert old in text, f"test edit: {old!r} is not in the turn"
    return text.replace(old, new, 1)


def check(text: str | bytes, number: int = 1, **changes):
    return validate_turn(text, context(number, **changes))


def codes(report) -> list[str]:
    return [violation.code for violation in report.violations]


def assert_only(report, code: str) -> list[TurnViolation]:
    assert set(codes(report)) == {code}, report.violations
    return report.violations


# --- realistic turns -----------------------------------------------------------------


@pytest.mark.parametrize("number", [1, 2, 3])
def test_sample_debate_turns_keep_every_rule(number):
    report = check(DEBATE[number - 1], number)
    assert report.ok, report.violations
    assert report.violations == []


def test_first_turn_parses_into_its_parts():
    turn = check(TURN_1).turn
    assert (turn.number, turn.name, turn.harness, turn.model, turn.stance) == (
        1,
        "Alice",
        "claude-code",
        "claude-opus-4",
        "OPEN_TO_DEBATE",
    )
    assert turn.heading_line == 2
    assert list(turn.sections) == list(SECTIONS)
    assert turn.sections["Counterpoints"].line == 5
    [point] = turn.counterpoints
    assert point.addresses == "design.md#Lease semantics"
    assert point.claim.startswith("A fixed fifteen-minute duration")
    assert [item.line for item in point.support] == [9, 10]
    assert turn.novel_claim.startswith("Shorter leases")
    assert next(item.text for item in turn.novel_support) == "design.md:31-32"
    assert [(item.blocking, item.line) for item in turn.unresolved] == [(False, 19), (True, 20)]
    assert turn.has_blocking
    assert turn.stance_revision_support == ()
    assert len(turn.support_items) == 4


def test_second_turn_counters_first_with_quotes():
    turn = check(TURN_2, 2).turn
    assert [point.addresses for point in turn.counterpoints] == ["Turn 1", "design.md#Failure handling"]
    assert turn.counterpoints[1].line == 13
    assert turn.stance == "DISSENTING"


def test_consensus_turn_without_blocking_items_is_valid():
    report = check(TURN_3, 3)
    assert report.ok
    assert not report.turn.has_blocking
    assert report.turn.stance == "ACCEPTING_CONSENSUS"


def test_submitted_bytes_are_accepted():
    assert check(TURN_1.encode("utf-8")).ok


def test_crlf_line_ends_are_accepted_and_lines_still_count():
    report = check(edit(TURN_1, "- Whether", "- Whether the owner agrees\n- Whether").replace("\n", "\r\n"))
    [violation] = assert_only(report, "UNRESOLVED_TAG")
    assert violation.line == 20


# --- HEADING -------------------------------------------------------------------------


def test_heading_must_name_claimant():
    [violation] = assert_only(check(edit(TURN_1, "— Alice (", "— Mallory (")), "HEADING")
    assert "Mallory" in violation.message
    assert violation.line == 2


def test_heading_must_give_claimants_harness_and_model():
    report = check(edit(TURN_1, "(claude-code / claude-opus-4)", "(codex / gpt-5)"))
    assert codes(report) == ["HEADING", "HEADING"]


def test_heading_must_have_next_turn_number():
    [violation] = assert_only(check(edit(TURN_1, "Turn 1", "Turn 2")), "HEADING")
    assert "Turn 2" in violation.message


def test_heading_accepts_em_dash_en_dash_and_hyphen():
    for separator in ("—", "–", "-"):
        assert check(TURN_1.replace(" — ", f" {separator} ")).ok, separator


def test_heading_must_come_first():
    [violation] = assert_only(check(edit(TURN_1, "---\n", "Here is my turn.\n")), "HEADING")
    assert violation.line == 1


def test_heading_must_be_present():
    report = check(edit(TURN_1, "## Turn 1 — Alice (claude-code / claude-opus-4) — OPEN_TO_DEBATE\n", ""))
    assert "HEADING" in codes(report)


def test_heading_must_be_level_two():
    assert_only(check(edit(TURN_1, "## Turn", "### Turn")), "HEADING")


def test_heading_must_give_harness_and_model_in_parentheses():
    report = check(edit(TURN_1, " (claude-code / claude-opus-4)", ""))
    assert codes(report) == ["HEADING", "HEADING"]


# --- STANCE --------------------------------------------------------------------------


def test_stance_must_be_one_of_the_five():
    [violation] = assert_only(check(edit(TURN_1, "OPEN_TO_DEBATE", "UNDECIDED")), "STANCE")
    assert violation.line == 2
    assert "UNDECIDED" in violation.message


def test_stance_is_upper_case():
    assert_only(check(edit(TURN_1, "OPEN_TO_DEBATE", "open_to_debate")), "STANCE")


def test_stance_must_be_given():
    assert_only(check(edit(TURN_1, " — OPEN_TO_DEBATE", "")), "STANCE")


@pytest.mark.parametrize("stance", ["OPEN_TO_DEBATE", "CONVERGING", "DISSENTING", "REVISING"])
def test_every_stance_is_accepted(stance):
    assert check(edit(TURN_1, "OPEN_TO_DEBATE", stance)).ok


# --- SECTION_MISSING, SECTION_ORDER, SECTION_EMPTY -----------------------------------


def test_all_six_sections_are_present():
    report = check(edit(TURN_1, "**Agreements**\n- Fencing tokens are the right defence against late writes.\n", ""))
    [violation] = assert_only(report, "SECTION_MISSING")
    assert violation.section == "Agreements"
    assert violation.line is None


def test_stance_revision_support_section_must_exist_even_empty():
    report = check(edit(TURN_1, "**Stance Revision Support**\n", ""))
    assert_only(report, "SECTION_MISSING")


def test_section_labels_tolerate_case_and_colon():
    assert check(edit(TURN_1, "**Agreements**", "**agreements:**")).ok


def test_sections_come_in_order():
    agreements = "**Agreements**\n- Fencing tokens are the right defence against late writes.\n"
    moved = edit(edit(TURN_1, agreements, ""), "**Counterpoints**\n", agreements + "**Counterpoints**\n")
    [violation] = assert_only(check(moved), "SECTION_ORDER")
    assert violation.section == "Counterpoints"
    assert violation.line == 7


def test_section_appears_once():
    report = check(edit(TURN_1, "**Stance Revision Support**\n", "**Stance Revision Support**\n**Agreements**\n"))
    [violation] = assert_only(report, "SECTION_ORDER")
    assert violation.line == 22


def test_position_is_not_empty():
    report = check(
        edit(
            TURN_1,
            "Fifteen-minute leases are too long: a crashed holder blocks every other worker"
            " for a quarter of an hour.\n",
            "",
        )
    )
    [violation] = assert_only(report, "SECTION_EMPTY")
    assert violation.section == "Position"
    assert violation.line == 3


def test_agreements_holding_an_empty_bullet_is_empty():
    report = check(edit(TURN_1, "- Fencing tokens are the right defence against late writes.", "-"))
    assert_only(report, "SECTION_EMPTY")


def test_stance_revision_support_may_be_empty():
    assert check(TURN_1).turn.sections["Stance Revision Support"].is_empty
    assert check(TURN_1).ok


# --- COUNTERPOINT_INCOMPLETE ---------------------------------------------------------


def test_counterpoint_needs_support_items():
    text = edit(
        TURN_2,
        "  - design.md:36-37\n  - https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html\n",
        "",
    )
    [violation] = assert_only(check(text, 2), "COUNTERPOINT_INCOMPLETE")
    assert violation.line == 13
    assert "Support" in violation.message


def test_counterpoint_needs_claim():
    text = edit(
        TURN_2,
        "  Claim: Fencing already makes late writes harmless, so expiry speed affects availability, never safety.\n",
        "",
    )
    assert_only(check(text, 2), "COUNTERPOINT_INCOMPLETE")


def test_counterpoint_needs_addresses():
    assert_only(
        check(edit(TURN_2, "- Addresses: design.md#Failure handling\n  Claim:", "- Claim:"), 2),
        "COUNTERPOINT_INCOMPLETE",
    )


def test_counterpoint_support_may_follow_on_the_support_line():
    text = edit(TURN_1, '  Support:\n  - design.md "Leases', '  Support: design.md#Goals\n  - design.md "Leases')
    report = check(text)
    assert report.ok
    assert len(report.turn.counterpoints[0].support) == 3


def test_counterpoints_written_as_prose_are_incomplete():
    text = edit(TURN_1, "- Addresses: design.md#Lease semantics\n", "I disagree with the lease design.\n\n")
    assert "COUNTERPOINT_INCOMPLETE" in codes(check(text))


# --- ADDRESSES_UNKNOWN ---------------------------------------------------------------


def test_addresses_names_an_earlier_turn():
    [violation] = assert_only(check(edit(TURN_2, "Addresses: Turn 1", "Addresses: Turn 2"), 2), "ADDRESSES_UNKNOWN")
    assert violation.line == 7
    assert violation.section == "Counterpoints"


def test_addresses_names_a_source_heading():
    report = check(edit(TURN_1, "Addresses: design.md#Lease semantics", "Addresses: design.md#Lease renewal"))
    assert_only(report, "ADDRESSES_UNKNOWN")


def test_addresses_heading_is_compared_after_normalisation():
    assert check(edit(TURN_1, "Addresses: design.md#Lease semantics", "Addresses: design.md#lease  SEMANTICS")).ok
    assert check(edit(TURN_1, "Addresses: design.md#Lease semantics", "Addresses: design.md#lease-semantics")).ok


def test_addresses_must_be_a_turn_or_a_heading():
    assert_only(
        check(edit(TURN_1, "Addresses: design.md#Lease semantics", "Addresses: the whole design")), "ADDRESSES_UNKNOWN"
    )
    assert_only(
        check(edit(TURN_1, "Addresses: design.md#Lease semantics", "Addresses: design.md:12")), "ADDRESSES_UNKNOWN"
    )


# --- SUPPORT_KIND --------------------------------------------------------------------


def test_support_item_must_be_one_of_four_kinds():
    report = check(edit(TURN_1, "- Principle: a failure", "- Everyone knows a failure"))
    [violation] = assert_only(report, "SUPPORT_KIND")
    assert violation.line == 17
    assert violation.section == "Novel Argument"


def test_support_item_kinds_all_accepted():
    for item in (
        "https://example.org/leases",
        "<https://example.org/leases>",
        "[Leases paper](https://example.org/leases.pdf)",
        "Principle: prefer safety over liveness",
        "design.md#Clock assumptions",
        "design.md:24-25",
        "design.md:24",
        'design.md "wall clock"',
        "`design.md#Goals`",
    ):
        assert check(edit(TURN_1, "- design.md:31-32", f"- {item}")).ok, item


def test_source_cited_by_its_absolute_path_is_support_kind():
    # Only the file name and the recorded path (source_names) resolve on every clone; the
    # absolute path the source was read from used to be accepted and no longer is.
    text = edit(TURN_1, "- design.md:31-32", f"- {DESIGN}#Goals")
    [violation] = assert_only(check(text), "SUPPORT_KIND")
    assert violation.line == 16
    assert violation.section == "Novel Argument"
    assert "cite it as `design.md`" in violation.message
    assert check(text, source_names=(str(DESIGN),)).ok


def test_support_item_citing_another_document_is_not_a_source_reference():
    [violation] = assert_only(check(edit(TURN_1, "- design.md:31-32", "- notes.md#Goals")), "SUPPORT_KIND")
    assert "another document" in violation.message


def test_source_reference_needs_a_locator():
    [violation] = assert_only(check(edit(TURN_1, "- design.md:31-32", "- design.md")), "SUPPORT_KIND")
    assert "locator" in violation.message


def test_source_may_be_cited_by_extra_names():
    text = edit(TURN_1, "- design.md:31-32", "- ../docs/design.md:31-32")
    assert_only(check(text), "SUPPORT_KIND")
    assert check(text, source_names=("../docs/design.md",)).ok


def test_stance_revision_support_entries_are_support_items():
    text = edit(TURN_1, "**Stance Revision Support**\n", "**Stance Revision Support**\n- None, stance unchanged\n")
    [violation] = assert_only(check(text), "SUPPORT_KIND")
    assert violation.section == "Stance Revision Support"
    assert violation.line == 22


# --- SOURCE_REF_NOT_FOUND ------------------------------------------------------------


def test_source_heading_cited_must_exist():
    [violation] = assert_only(check(edit(TURN_1, "- design.md#Goals", "- design.md#Non-goals")), "SOURCE_REF_NOT_FOUND")
    assert violation.line == 10
    assert violation.section == "Counterpoints"


def test_source_heading_may_be_followed_by_a_description():
    assert check(edit(TURN_1, "- design.md#Goals", "- design.md#Goals — at most one writer")).ok


def test_source_lines_cited_must_be_within_it():
    assert_only(check(edit(TURN_1, "- design.md:31-32", "- design.md:40-42")), "SOURCE_REF_NOT_FOUND")
    assert_only(check(edit(TURN_1, "- design.md:31-32", "- design.md:0")), "SOURCE_REF_NOT_FOUND")
    assert check(edit(TURN_1, "- design.md:31-32", "- design.md:40-41")).ok


def test_source_excerpt_must_appear_word_for_word():
    text = edit(TURN_1, "Leases expire after fifteen minutes", "Leases expire after ten minutes")
    [violation] = assert_only(check(text), "SOURCE_REF_NOT_FOUND")
    assert violation.line == 9


def test_source_excerpt_ignores_whitespace_case_quotes_and_dashes():
    # The source has curly quotes and an em dash, and wraps the sentence over two lines.
    excerpt = (
        'design.md "hosts read a \\"reasonably synchronised\\" wall clock. we assume  a skew of at most two'
        ' seconds between any two hosts - larger skews"'
    )
    assert check(edit(TURN_1, "- design.md:31-32", "- " + excerpt.replace('\\"', "“"))).ok


def test_source_excerpt_with_locator_checks_both():
    bad_heading = edit(TURN_1, "- design.md:31-32", '- design.md#Nowhere "wall clock"')
    assert_only(check(bad_heading), "SOURCE_REF_NOT_FOUND")
    assert check(edit(TURN_1, "- design.md:31-32", '- design.md:24 "wall clock"')).ok


# --- TURN_REF_NOT_FOUND --------------------------------------------------------------


def test_turn_cited_must_come_before_this_one():
    text = edit(TURN_2, "  - Turn 1 “Shorter leases", "  - Turn 3 “Shorter leases")
    [violation] = assert_only(check(text, 2), "TURN_REF_NOT_FOUND")
    assert violation.line == 10


def test_turn_excerpt_must_appear_in_that_turn():
    text = edit(TURN_2, "“Shorter leases with frequent refreshes", "“Longer leases with frequent refreshes")
    [violation] = assert_only(check(text, 2), "TURN_REF_NOT_FOUND")
    assert "Turn 1" in violation.message


def test_turn_reference_without_excerpt_needs_only_the_turn():
    assert check(
        edit(TURN_2, "  - Turn 1 “Shorter leases with frequent refreshes bound the blocking time”", "  - Turn 1"), 2
    ).ok


# --- NOVELTY -------------------------------------------------------------------------


def test_novel_argument_must_not_repeat_an_earlier_claim():
    text = edit(
        TURN_2,
        "Lease duration should be derived from measured refresh latency instead of being fixed in the design.",
        "Shorter leases with frequent refreshes bound the blocking time without weakening safety.",
    )
    [violation] = assert_only(check(text, 2), "NOVELTY")
    assert violation.line == 23
    assert violation.section == "Novel Argument"


def test_novel_argument_must_not_nearly_repeat_an_earlier_position():
    # Same words as turn 1's position, reordered, one word changed: Jaccard >= 0.8.
    text = edit(
        TURN_2,
        "Lease duration should be derived from measured refresh latency instead of being fixed in the design.",
        "A crashed holder blocks every other worker for a quarter of an hour: fifteen-minute leases are far too long.",
    )
    assert_only(check(text, 2), "NOVELTY")


def test_novel_argument_needs_support():
    text = edit(
        TURN_2,
        "Support:\n- design.md#Open questions\n- Principle: timeouts tuned to observed latency"
        " avoid both false expiries and long stalls.\n",
        "",
    )
    [violation] = assert_only(check(text, 2), "NOVELTY")
    assert "Support" in violation.message


def test_novel_argument_needs_a_claim():
    text = edit(
        TURN_2,
        "Lease duration should be derived from measured refresh latency instead of being fixed in the design.\n",
        "",
    )
    assert_only(check(text, 2), "NOVELTY")


def test_novelty_index_finds_exact_and_near_repeats():
    index = NoveltyIndex(["Leases expire after fifteen minutes unless refreshed by the holder"])
    assert index.repeats("leases  EXPIRE after fifteen minutes unless refreshed by the holder")
    assert index.repeats("unless refreshed by the holder, leases expire after fifteen minutes")
    assert index.repeats("Leases expire after fifteen minutes unless refreshed by their holder")  # 9/11 >= 0.8
    assert not index.repeats("Leases expire after five minutes unless renewed by their holder")
    assert not index.repeats("")
    assert len(index) == 1


# --- UNRESOLVED_TAG ------------------------------------------------------------------


def test_unresolved_item_needs_tag():
    [violation] = assert_only(check(edit(TURN_1, "matters (non-blocking)", "matters")), "UNRESOLVED_TAG")
    assert violation.line == 19
    assert violation.section == "Unresolved Items"


def test_unresolved_item_tag_ends_the_item():
    assert_only(check(edit(TURN_1, "matters (non-blocking)", "matters (non-blocking), maybe")), "UNRESOLVED_TAG")
    assert check(edit(TURN_1, "matters (non-blocking)", "matters (Non–Blocking)")).ok


def test_unresolved_prose_counts_as_an_item():
    text = edit(TURN_1, "- How short a lease can be before refresh traffic matters (non-blocking)\n", "None.\n")
    assert_only(check(text), "UNRESOLVED_TAG")


# --- STANCE_REVISION -----------------------------------------------------------------


def test_changed_stance_needs_revision_support():
    text = edit(TURN_3, '- Turn 2 "Fencing already makes late writes harmless"\n- design.md#Partitions\n', "")
    [violation] = assert_only(check(text, 3), "STANCE_REVISION")
    assert violation.section == "Stance Revision Support"
    assert violation.line == 18


def test_unchanged_stance_needs_no_revision_support():
    text = edit(
        edit(TURN_3, '- Turn 2 "Fencing already makes late writes harmless"\n- design.md#Partitions\n', ""),
        "ACCEPTING_CONSENSUS",
        "OPEN_TO_DEBATE",
    )
    assert check(text, 3).ok


def test_first_turn_of_a_participant_has_no_previous_stance():
    assert check(edit(TURN_1, "OPEN_TO_DEBATE", "CONVERGING")).ok


# --- CONSENSUS_BLOCKED ---------------------------------------------------------------


def test_consensus_has_no_blocking_item():
    text = edit(TURN_3, "tuned on (non-blocking)", "tuned on (blocking)")
    [violation] = assert_only(check(text, 3), "CONSENSUS_BLOCKED")
    assert violation.line == 17


def test_consensus_needs_a_non_blocking_item_or_scoped_critique():
    without_critique = edit(TURN_3, "- Addresses: Turn 2 | design.md#Lease semantics\n", "")
    assert "CONSENSUS_BLOCKED" not in codes(check(without_critique, 3))  # the non-blocking item suffices
    without_either = edit(
        without_critique, "- Which metric the ceiling is tuned on (non-blocking)", "- Nothing remains open (blocking)"
    )
    assert codes(check(without_either, 3)).count("CONSENSUS_BLOCKED") == 2


def test_consensus_needs_a_support_item():
    text = TURN_3
    for line in (
        '  - Turn 2 "Lease duration should be derived from measured refresh latency"\n',
        '- design.md "Should the lease duration adapt to the observed write latency?"\n',
        '- Turn 2 "Fencing already makes late writes harmless"\n',
        "- design.md#Partitions\n",
    ):
        text = edit(text, line, "")
    report = check(text, 3, previous_stance="ACCEPTING_CONSENSUS")
    assert "CONSENSUS_BLOCKED" in codes(report)
    assert any("support item" in v.message for v in report.violations if v.code == "CONSENSUS_BLOCKED")


# --- UNGROUNDED ----------------------------------------------------------------------


def test_first_turn_cites_the_source():
    text = TURN_1
    for old, new in (
        ('  - design.md "Leases expire after fifteen minutes unless the holder refreshes them"\n', ""),
        ("  - design.md#Goals", "  - https://example.org/leases"),
        ("- design.md:31-32\n", ""),
    ):
        text = edit(text, old, new)
    [violation] = assert_only(check(text), "UNGROUNDED")
    assert violation.line is None


def test_later_turn_may_cite_only_an_earlier_turn():
    text = TURN_2
    for old in (
        "  - design.md#Clock assumptions\n",
        '  - design.md "a skew of at most two seconds between any two hosts – larger skews are treated as outages"\n',
        "  - design.md:36-37\n",
        "- design.md#Open questions\n",
    ):
        text = edit(text, old, "")
    assert check(text, 2).ok
    ungrounded = edit(
        text,
        "  - Turn 1 “Shorter leases with frequent refreshes bound the blocking time”",
        "  - https://example.org/slow-holders",
    )
    assert_only(check(ungrounded, 2), "UNGROUNDED")


# --- UNSAFE_STRUCTURE ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "line"),
    [("## Notes", 4), ("# Title", 4), ("Notes\n-----", 4), ("Notes\n=====", 4)],
)
def test_no_level_one_or_two_heading_besides_the_turn_heading(heading, line):
    text = edit(TURN_1, "**Position**\n", f"**Position**\n{heading}\n")
    [violation] = assert_only(check(text), "UNSAFE_STRUCTURE")
    assert violation.line == line
    assert violation.section == "Position"


def test_lower_headings_and_headings_in_code_are_allowed():
    text = edit(TURN_1, "**Position**\n", "**Position**\n### Why\n```\n## not a heading\n<!-- only code -->\n```\n")
    assert check(text).ok


def test_no_duel_marker_anywhere():
    for marker in ("<!-- duel:turn n=1 sha256=00 prev=00 -->", "<!-- /duel:turn -->", "`<!--DUEL:x`"):
        [violation] = assert_only(check(edit(TURN_1, "late writes.", f"late writes. {marker}")), "UNSAFE_STRUCTURE")
        assert violation.line == 12


def test_no_front_matter():
    text = edit(TURN_1, "---\n", "---\ntitle: my turn\n---\n")
    [violation] = assert_only(check(text), "UNSAFE_STRUCTURE")
    assert violation.line == 1


def test_no_nul_character():
    [violation] = assert_only(check(edit(TURN_1, "late writes.", "late\x00 writes.")), "UNSAFE_STRUCTURE")
    assert violation.line == 12


def test_bytes_must_be_utf8():
    raw = edit(TURN_1, "late writes.", "late writes. \udcff").encode("utf-8", "surrogateescape")
    [violation] = assert_only(check(raw), "UNSAFE_STRUCTURE")
    assert violation.line == 12
    assert "UTF-8" in violation.message
    assert_only(check(edit(TURN_1, "late writes.", "late writes. \udcff")), "UNSAFE_STRUCTURE")  # lone surrogate


def test_turn_is_at_most_64_kib():
    padding = "word " * ((64 * 1024 - len(TURN_1.encode())) // 5)
    fits = edit(TURN_1, "late writes.", "late writes. " + padding[: 64 * 1024 - len(TURN_1.encode()) - 14])
    assert len(fits.encode()) <= 64 * 1024
    assert check(fits).ok
    too_big = edit(TURN_1, "late writes.", "late writes. " + padding + "extra words here")
    assert len(too_big.encode()) > 64 * 1024
    assert_only(check(too_big), "UNSAFE_STRUCTURE")


# --- RAW_HTML ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("html", "shown"),
    [
        ("<script>alert(1)</script>", "<script>"),
        ("<style>p { display: none }</style>", "<style>"),
        ("<pre>", "<pre>"),
        ("<details>", "<details>"),
        ("<!-- a note the reviewer never sees -->", "<!-- a note the reviewer never sees -->"),
        ('<span onclick="steal()">hi</span>', '<span onclick="steal()">'),
        ("<img src=x onerror=steal()>", "<img src=x onerror=steal()>"),
        ("<details", "<details"),
    ],
)
def test_raw_html_is_refused_at_its_line(html, shown):
    [violation] = assert_only(check(edit(TURN_1, "late writes.", f"late writes. {html}")), "RAW_HTML")
    assert violation.line == 12
    assert violation.section == "Agreements"
    assert repr(shown) in violation.message


def test_raw_html_message_says_what_to_write_instead():
    [tag] = assert_only(check(edit(TURN_1, "late writes.", "late writes <details open>.")), "RAW_HTML")
    assert tag.message.endswith("write it in a code span: `<details>`")
    [comment] = assert_only(check(edit(TURN_1, "late writes.", "late writes <!-- hidden -->.")), "RAW_HTML")
    assert "write the note as plain text" in comment.message


def test_an_unclosed_html_block_is_refused_where_it_opens():
    # Rendered, everything after `<details>` (the peer's turns, the conclusion) would fold away.
    text = edit(TURN_1, "**Agreements**\n", "**Agreements**\n<details>\n<summary>More</summary>\n\n")
    violations = assert_only(check(text), "RAW_HTML")
    assert [v.line for v in violations] == [12, 13]


def test_a_tag_spanning_lines_is_refused_at_its_first_line():
    text = edit(TURN_1, "late writes.", 'late writes <span\n  onmouseover="steal()">.')
    [violation] = assert_only(check(text), "RAW_HTML")
    assert violation.line == 12


def test_one_raw_html_violation_a_line():
    text = edit(TURN_1, "late writes.", "late <b>writes</b> <i>here</i>.")
    [violation] = assert_only(check(text), "RAW_HTML")
    assert "'<b>'" in violation.message


@pytest.mark.parametrize("html", ["<script>", "<details>", "<!-- note -->", '<span onclick="x">', "</pre>"])
def test_raw_html_in_a_code_span_or_fenced_block_is_text(html):
    assert check(edit(TURN_1, "late writes.", f"late writes, unlike `{html}`.")).ok
    assert check(edit(TURN_1, "late writes.", f"late writes, unlike `` {html} ``.")).ok
    assert check(edit(TURN_1, "**Position**\n", f"**Position**\n```html\n{html}\n```\n")).ok
    assert check(edit(TURN_1, "**Position**\n", f"**Position**\n~~~\n{html}\n~~~\n")).ok


@pytest.mark.parametrize(
    "text",
    [
        "<https://example.org/leases>",
        "<ops@example.com>",
        "a < b and x<y",
        "x<y",
        "&lt;div&gt;",
        "\\<div>",
        "latency <200ms",
        "a <- b, c <= d",
        "a <3",
    ],
)
def test_what_only_looks_like_html_is_text(text):
    assert check(edit(TURN_1, "late writes.", f"late writes ({text}).")).ok


@pytest.mark.parametrize(
    ("lines", "line"),
    [
        ("- a `x\n- <div> `", 5),  # no partner on its line: the two items are two paragraphs
        ("see https://example.org/`<div>` there", 4),  # GitHub links the whole word, backtick included
        ("| a | `b|<div>` |\n|---|---|", 4),  # a table splits cells before it reads code spans
        ("- a\n\n  ```\n  <div>\n  ```", 7),  # an indented fence may close with its list item
        ("    <div>", 4),  # four spaces after a paragraph line continue the paragraph
        ("see [a](/x`) <div> `", 4),  # the link takes the first backtick: only the Markdown parser sees it
    ],
    ids=["unpaired-backtick", "url-word", "table-cell", "indented-fence", "indented", "link-destination"],
)
def test_code_a_renderer_could_read_otherwise_hides_no_html(lines, line):
    text = edit(TURN_1, "**Position**\n", f"**Position**\n{lines}\n")
    [violation] = assert_only(check(text), "RAW_HTML")
    assert violation.line == line


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("`<div>` and `` <p> `` and ``a`<b>`c``", []),
        ("```\n<div>\n```\n", []),
        ("a `b\nc` <div> `e`", [2]),  # renderers pair the backticks across the line: `<div>` is outside
        ("- a `x\n- <div> `", [2]),  # two list items, two paragraphs: nothing pairs
        ("  ```\n<div>\n  ```", [2]),  # in a list, an indented fence closes with the item
        ("> ```\n> <div>\n> ```", [2]),
        ("<https://x.org/`> <div> `", [1]),  # the autolink takes its backtick
        ("<a href='x'\n  title=\"y\">", [1]),
    ],
)
def test_the_line_scanner_reads_code_only_where_every_renderer_does(text, lines):
    assert [html.line for html in find_raw_html(text)] == lines


def test_a_backtick_in_a_fence_info_string_opens_no_fence():
    text = edit(TURN_1, "**Position**\n", "**Position**\n```a`\n<div>\n")
    [violation] = assert_only(check(text), "RAW_HTML")
    assert violation.line == 5
    assert SourceDocument(path="notes.md", text="```a`\n# Real\n").headings == ["Real"]


def test_a_turn_opens_with_dashes_not_pluses():
    [violation] = assert_only(check(edit(TURN_1, "---\n", "+++\n")), "HEADING")
    assert violation.line == 1
    assert "not `+++`" in violation.message
    [violation] = assert_only(check(edit(TURN_1, "---\n", "---\n+++\n")), "HEADING")
    assert violation.line == 2
    [violation] = assert_only(check(edit(TURN_1, "---\n", "+++\ntitle = 'x'\n+++\n")), "UNSAFE_STRUCTURE")
    assert violation.line == 1


# --- reporting -----------------------------------------------------------------------


def test_all_violations_are_reported_together_in_line_order():
    text = TURN_1
    for old, new in (
        ("— Alice (", "— Mallory ("),
        ("OPEN_TO_DEBATE", "MAYBE"),
        ("  - design.md#Goals", "  - design.md#Nowhere"),
        ("matters (non-blocking)", "matters"),
        ("**Agreements**\n- Fencing tokens are the right defence against late writes.\n", ""),
    ):
        text = edit(text, old, new)
    report = check(text)
    assert not report.ok
    found = [(v.code, v.line) for v in report.violations]
    assert found == [
        ("HEADING", 2),
        ("STANCE", 2),
        ("SOURCE_REF_NOT_FOUND", 10),
        ("UNRESOLVED_TAG", 17),
        ("SECTION_MISSING", None),
    ]


def test_violation_dict_omits_what_cannot_be_told():
    assert TurnViolation(code="UNGROUNDED", message="no citation").to_dict() == {
        "code": "UNGROUNDED",
        "message": "no citation",
    }
    assert TurnViolation(code="HEADING", message="x", line=2).to_dict() == {
        "code": "HEADING",
        "message": "x",
        "line": 2,
    }


def test_every_rule_code_has_a_one_line_text():
    assert list(RULES) == [
        "HEADING",
        "STANCE",
        "SECTION_MISSING",
        "SECTION_ORDER",
        "SECTION_EMPTY",
        "COUNTERPOINT_INCOMPLETE",
        "ADDRESSES_UNKNOWN",
        "SUPPORT_KIND",
        "SOURCE_REF_NOT_FOUND",
        "FIGURE_NOT_IN_SOURCE",
        "TOO_MANY_SOURCES",
        "TURN_REF_NOT_FOUND",
        "CONJECTURE_AS_BASIS",
        "NOVELTY",
        "UNRESOLVED_TAG",
        "STANCE_REVISION",
        "CONSENSUS_BLOCKED",
        "UNGROUNDED",
        "UNSAFE_STRUCTURE",
        "CONTROL_CHARACTER",
        "RAW_HTML",
        "CHAIR_FORMAT",
        "UNENGAGED_POINTS",
        "SILENT_OVERRULE",
        "CLOSING_NEW_MATERIAL",
        "EDIT_FORMAT",
        "EDIT_TARGET",
        "EDIT_NOT_FOUND",
        "EDIT_AMBIGUOUS",
        "EDIT_OVERLAP",
        "EDIT_TOO_LARGE",
        "REVISION_MISSING",
        "REVISION_MISMATCH",
        "QUESTION_UNANSWERED",
        "REDACTED_REPEATED",
        "RULING_UNACKNOWLEDGED",
        "CORRECTION_INVALID",
        "RULED_SOURCE_CITED",
        "CHALLENGE_UNKNOWN",
        "CHALLENGE_NO_CLAIM",
        "SEALED_OPENING_EDITS",
    ]
    assert all(text and "\n" not in text for text in RULES.values())
    assert STANCES == ("OPEN_TO_DEBATE", "CONVERGING", "ACCEPTING_CONSENSUS", "DISSENTING", "REVISING")


def test_every_rule_code_has_exactly_one_rule_and_the_table_keeps_the_order_agents_read():
    declared = [code for name, code in vars(RuleCode).items() if not name.startswith("_")]
    table = [rule.code for rule in RULE_TABLE]
    assert sorted(table) == sorted(declared)  # each code has one row, and no row has a code of its own
    assert table == list(RULES) == declared


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (1, "just some words"),
        (1, TURN_1.replace("## Turn 1", "# Turn 1").replace("design.md", "other.md") + "\n<b>x</b> \x1b\n"),
        (2, TURN_2.replace("Turn 1", "Turn 9").replace("(blocking)", "")),
        (
            3,
            TURN_3 + "\n**Proposed Edits**\nEdit x: replace\n```find\nnot there\n```\n```replace\ny\n```\nWithdraw z\n",
        ),
    ],
    ids=["garbage", "unsafe-first-turn", "bad-references", "bad-edits"],
)
def test_each_rule_finds_only_violations_of_its_own_code(number: int, text: str) -> None:
    """What keeps the report's order independent of the order the rules run in: ties break by code."""
    ctx = context(number)
    checked = Checked(text, parse_turn(text), ctx)
    found = {rule.code: list(rule.check(checked)) for rule in RULE_TABLE if rule.applies(ctx)}
    assert any(found.values())
    assert all(violation.code == code for code, violations in found.items() for violation in violations)


def test_garbage_is_reported_not_raised():
    report = validate_turn("just some words", context(1))
    assert not report.ok
    assert {"HEADING", "SECTION_MISSING", "UNGROUNDED"} <= set(codes(report))


# --- parts used by the service -------------------------------------------------------


def test_normalized_turn_text_is_what_the_service_stores():
    assert normalize_turn_text("\r\n---\r\n\r\n## Turn 1\r\nbody  \r\n\r\n") == "## Turn 1\nbody\n"
    assert normalize_turn_text("## Turn 1\nbody") == "## Turn 1\nbody\n"
    assert check(TURN_1).turn.text == TURN_1.removeprefix("---\n")


def test_references_parse_into_lines_headings_and_excerpts():
    names = ("design.md",)
    assert parse_reference('design.md:12-18 "lease"', names).lines == (12, 18)
    assert parse_reference("design.md:12–18", names).lines == (12, 18)
    assert parse_reference('design.md#Lease semantics "they expire"', names).heading == "Lease semantics"
    assert parse_reference('design.md#Lease semantics "they expire"', names).excerpt == "they expire"
    assert parse_reference("Turn 4: “a “quoted” word”", names).excerpt == "a “quoted” word"
    assert parse_reference("Principle:", names).kind == "unknown"


def test_source_document_finds_headings_lines_and_excerpts():
    assert DESIGN_SOURCE.name == "design.md"
    assert DESIGN_SOURCE.path == str(DESIGN)
    assert DESIGN_SOURCE.has_heading("crashed  HOLDERS")
    assert DESIGN_SOURCE.has_heading("lease-semantics")
    assert not DESIGN_SOURCE.has_heading("Crashed")
    assert DESIGN_SOURCE.has_lines(1, 41)
    assert not DESIGN_SOURCE.has_lines(1, 42)
    assert not DESIGN_SOURCE.has_lines(3, 2)
    assert DESIGN_SOURCE.contains_excerpt("“REASONABLY synchronised”")
    assert not DESIGN_SOURCE.contains_excerpt("")
    assert DESIGN_SOURCE.numbered().splitlines()[11] == "12 | ## Lease semantics"
    assert normalize_text("  “A”\t—  ‘b’ ") == "\"a\" - 'b'"


def test_source_headings_skip_code_and_front_matter():
    doc = SourceDocument(path="notes.md", text="---\ntitle: x\n---\n# Top\n```\n# code\n```\nSub\n---\ntext\n")
    assert doc.headings == ["Top", "Sub"]
