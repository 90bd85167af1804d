"""Figures (issue 24, item 5): what counts as a figure of a claim, and how a page is found to state it
(docs/protocol.md section 10, "Figures on the page"). Pure."""

from __future__ import annotations

import pytest

from rp1_duel.turns.figures import Figure, FigureIndex, figures_in, stated_figures


def read(claim: str) -> list[tuple[str, str, str | None]]:
    return [(figure.text, figure.value, figure.unit) for figure in stated_figures(claim)]


def missing(page: str, claim: str) -> list[str]:
    return [figure.text for figure in FigureIndex(page).missing(stated_figures(claim))]


@pytest.mark.parametrize(
    ("claim", "figures"),
    [
        ("1,200 requests", [("1,200", "1200", None)]),
        (
            "1 200 and 1\u202f300 and 1200000",
            [("1 200", "1200", None), ("1\u202f300", "1300", None), ("1200000", "1200000", None)],
        ),
        ("40% then 41 %", [("40%", "40", "%"), ("41 %", "41", "%")]),
        (
            "40 percent, 41 per cent, 42 pct",
            [("40 percent", "40", "%"), ("41 per cent", "41", "%"), ("42 pct", "42", "%")],
        ),
        ("$1.2 million", [("$1.2 million", "1200000", "USD")]),
        (
            "€300 and USD 5,000 and 7 euros",
            [("€300", "300", "EUR"), ("USD 5,000", "5000", "USD"), ("7 euros", "7", "EUR")],
        ),
        (
            "$1.2bn and 10k users and 5M rows",
            [("$1.2bn", "1200000000", "USD"), ("10k", "10000", None), ("5M", "5000000", None)],
        ),
        (
            "a 15-minute lease, 3 hours, 2 days, 500 ms",
            [("15-minute", "15", "min"), ("3 hours", "3", "h"), ("2 days", "2", "day"), ("500 ms", "500", "ms")],
        ),
        ("3x faster, 1.50 and 0.5", [("3x", "3", "x"), ("1.50", "1.5", None), ("0.5", "0.5", None)]),
    ],
)
def test_a_claims_figures_are_read_in_their_usual_spellings(claim, figures):
    assert read(claim) == figures


@pytest.mark.parametrize(
    "claim",
    [
        "since 2019, in the 1990s",  # years and decades
        "the 4th attempt over 2FA on IPv6 and x86",  # glued to letters
        "design.md:12-18 and #42 and 24/7 and 1.2.3 and RFC-2616",  # locators, paths, versions
        "Turn 3 and Turns 2 and 4, Seat 2, section 4, lines 12-18, point 2, Argument 3, Q3, v2, § 10",  # labels
        "on 2024-05-01 at 10:30",  # dates and times
        "see https://example.org/reports/1200",  # inside a URL
        "a 5m cable",  # lower-case m without a currency: metres or minutes, not millions
        "[CONJECTURE] renewals rose 40% over 1,200 leases",  # a conjecture is not checked
    ],
)
def test_years_labels_locators_and_conjectures_are_not_figures(claim):
    assert stated_figures(claim) == ()


def test_a_conjecture_still_states_figures_when_read_as_plain_text():
    assert [figure.text for figure in figures_in("[CONJECTURE] renewals rose 40%")] == ["40%"]


def test_each_figure_is_read_once_in_order():
    assert read("1,200 leases, then 1200 again, then 40%") == [("1,200", "1200", None), ("40%", "40", "%")]


def test_a_figure_misquoted_by_one_digit_is_missing():
    assert missing("The service renewed 1,200 leases.", "it renewed 1,250 leases") == ["1,250"]
    assert missing("The service renewed 1,200 leases.", "it renewed 1,200 leases") == []


@pytest.mark.parametrize(
    ("page", "claim"),
    [
        ("renewed 1200 leases", "renewed 1,200 leases"),
        ("renewed 1,200 leases", "renewed 1200 leases"),
        ("renewed 1 200 leases", "renewed 1,200 leases"),
        ("40 percent of them", "40% of them"),
        ("40% of them", "40 per cent of them"),
        ("a budget of $1,500,000", "$1.5 million"),
        ("1.5 million dollars", "$1,500,000"),
        ("USD 5,000 a year", "$5,000"),
        ("Leases expire after fifteen minutes", "15 minutes"),
        ("a fifteen-minute lease", "a 15 min lease"),
        ("twenty-five holders", "25 holders"),
        ("two million rows", "2,000,000 rows"),
        ("twelve hundred requests", "1,200 requests"),
        ("forty percent", "40%"),
        ("a ratio of 1.50", "1.5"),
        ("renewed 1200 leases in 15 minutes", "1200"),  # a bare figure: whatever the page says it measures
    ],
)
def test_a_figure_is_found_in_any_usual_spelling(page, claim):
    assert missing(page, claim) == []


@pytest.mark.parametrize(
    ("page", "claim"),
    [
        ("it took 40 ms", "40%"),  # the measure named must be the page's
        ("a share of 40", "40%"),
        ("€5,000", "$5,000"),
        ("11,200 leases", "1,200 leases"),
        ("twenty-five holders", "5 holders"),  # `five` of `twenty-five` is not 5
        ("two million rows", "2 rows"),
        ("2 million rows", "2 rows"),
        ("1.2.3", "1.2"),  # a version is no decimal
    ],
)
def test_a_figure_the_page_does_not_state_is_missing(page, claim):
    assert missing(page, claim) == [figure.text for figure in stated_figures(claim)]


def test_the_index_answers_again_without_reading_the_text_again():
    index = FigureIndex("renewed 1200 leases in fifteen minutes")
    figures = stated_figures("1,200 leases in 15 minutes, 3x faster")
    assert [figure.text for figure in index.missing(figures)] == ["3x"]
    assert [figure.text for figure in index.missing(figures)] == ["3x"]
    assert index.missing([Figure("1200", "1200", None)]) == ()
