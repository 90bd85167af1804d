"""`[CONJECTURE]` labelling (docs/protocol.md section 7): a claim no citation supports may be tagged a
conjecture, and a counterpoint whose only evidence is conjectures is refused with CONJECTURE_AS_BASIS."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rp1_duel.cli import skill
from rp1_duel.coordination import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.participant.prompt import system_prompt
from rp1_duel.record import validate_file
from rp1_duel.turns import validate_turn

from helpers import DESIGN_SOURCE, DUEL, TURN_1, TURN_2, claim, context, join, make_turn, with_extra_turn

FIXTURES = Path(__file__).parents[1] / "data" / "reports" / "debates"

# Turn 1 of the sample debate with its counterpoint's claim tagged; its novel claim stays untagged.
TAGGED_CLAIM = "A fixed fifteen-minute duration leaves the directory blocked for up to fifteen minutes after a crash."
TURN_1_TAGGED = TURN_1.replace(f"Claim: {TAGGED_CLAIM}", f"Claim: [CONJECTURE] {TAGGED_CLAIM}", 1)
NOVEL_CLAIM = "Shorter leases with frequent refreshes bound the blocking time without weakening safety."
TURN_1_ALL_TAGGED = TURN_1_TAGGED.replace(NOVEL_CLAIM, f"[CONJECTURE] {NOVEL_CLAIM}", 1)

# Turn 2's first counterpoint (line 7), its support replaced by the test's; the second one keeps its citations.
FIRST_SUPPORT = """\
  - Turn 1 “Shorter leases with frequent refreshes bound the blocking time”
  - design.md#Clock assumptions
  - design.md "a skew of at most two seconds between any two hosts – larger skews are treated as outages"
"""
COUNTERPOINT_LINE = 7
SLOW_HOLDERS = "Shorter leases raise the risk that a healthy but slow holder loses its lease in the middle of a write."

CONJECTURE_ITEM = "[CONJECTURE] most holders that miss a refresh are slow, not dead"
QUOTING_TAGGED_CLAIM = 'Turn 1 "leaves the directory blocked for up to fifteen minutes"'
CITATIONS = [
    "https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html",
    "design.md#Lease semantics",
    'design.md "Leases expire after fifteen minutes"',
    'Turn 1 "Fencing tokens are the right defence against late writes"',  # Agreements: not a claim
]


def turn_2(*support: str, claim: str = SLOW_HOLDERS) -> str:
    assert FIRST_SUPPORT in TURN_2 and SLOW_HOLDERS in TURN_2
    items = "".join(f"  - {item}\n" for item in support)
    return TURN_2.replace(FIRST_SUPPORT, items, 1).replace(SLOW_HOLDERS, claim, 1)


def check(text: str, prior: tuple[str, ...] = (TURN_1_TAGGED,)):
    return validate_turn(text, context(len(prior) + 1, prior))


def conjecture_violations(report) -> list[tuple[int | None, str | None]]:
    return [(v.line, v.section) for v in report.violations if v.code == "CONJECTURE_AS_BASIS"]


# -- what is accepted ------------------------------------------------------------------------


def test_a_tagged_claim_with_principles_for_support_is_accepted():
    tagged = turn_2(
        "Principle: a timeout that is too short turns slowness into failure", claim=f"[CONJECTURE] {SLOW_HOLDERS}"
    )
    novel = "Lease duration should be derived from measured refresh latency instead of being fixed in the design."
    tagged = tagged.replace(novel, f"**[CONJECTURE]** {novel}", 1)
    report = check(tagged)
    assert report.ok, report.violations
    assert report.turn.counterpoints[0].claim.startswith("[CONJECTURE] ")


def test_an_untagged_claim_without_a_citation_is_accepted_as_before():
    report = check(turn_2("Principle: a timeout that is too short turns slowness into failure"))
    assert report.ok, report.violations


@pytest.mark.parametrize("citation", CITATIONS)
def test_one_real_citation_beside_the_conjecture_is_enough(citation):
    report = check(turn_2(CONJECTURE_ITEM, QUOTING_TAGGED_CLAIM, citation))
    assert report.ok, report.violations


def test_the_tag_in_the_position_is_not_a_claim():
    position = (
        "Fifteen-minute leases are too long: a crashed holder blocks every other worker for a quarter of an hour."
    )
    prior = TURN_1_TAGGED.replace(position, f"[CONJECTURE] {position}", 1).replace(
        f"[CONJECTURE] {TAGGED_CLAIM}", TAGGED_CLAIM, 1
    )
    report = check(turn_2('Turn 1 "a crashed holder blocks every other worker"'), (prior,))
    assert report.ok, report.violations
    assert check(turn_2("Turn 1"), (prior,)).ok


@pytest.mark.parametrize(
    "claim",
    [
        f"leases [CONJECTURE] {TAGGED_CLAIM}",  # not at the start
        f"[conjecture] {TAGGED_CLAIM}",  # not upper case
        f"[CONJECTURE]{TAGGED_CLAIM}",  # no space after the tag
    ],
)
def test_only_the_exact_tag_at_the_start_of_a_claim_makes_a_conjecture(claim):
    prior = TURN_1.replace(f"Claim: {TAGGED_CLAIM}", f"Claim: {claim}", 1)
    assert check(turn_2(QUOTING_TAGGED_CLAIM), (prior,)).ok


@pytest.mark.parametrize("item", ["[conjecture] holders are slow", "[CONJECTURE]", "CONJECTURE: holders are slow"])
def test_a_support_item_that_is_not_exactly_tagged_is_of_no_kind(item):
    report = check(turn_2(item, "design.md#Goals"))
    assert [v.code for v in report.violations] == ["SUPPORT_KIND"]


def test_a_link_whose_text_is_the_tag_is_a_url():
    assert check(turn_2("[CONJECTURE](https://example.org/slow-holders)")).ok


# -- what is refused -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "support",
    [
        (CONJECTURE_ITEM,),
        (CONJECTURE_ITEM, "Principle: a guess plus an argument is still no evidence"),
        (f"**{CONJECTURE_ITEM}**",),
    ],
)
def test_a_counterpoint_resting_on_a_conjecture_item_is_refused_at_its_line(support):
    report = check(turn_2(*support))
    assert [v.code for v in report.violations] == ["CONJECTURE_AS_BASIS"]
    assert conjecture_violations(report) == [(COUNTERPOINT_LINE, "Counterpoints")]


def test_a_counterpoint_resting_on_a_tagged_claim_of_an_earlier_turn_is_refused():
    report = check(turn_2(QUOTING_TAGGED_CLAIM))
    assert conjecture_violations(report) == [(COUNTERPOINT_LINE, "Counterpoints")]
    assert [v.code for v in report.violations] == ["CONJECTURE_AS_BASIS"]
    # The same quote is a citation when the claim it comes from is not tagged.
    assert check(turn_2(QUOTING_TAGGED_CLAIM), (TURN_1,)).ok


def test_a_bare_turn_reference_is_a_conjecture_only_when_every_claim_of_that_turn_is_tagged():
    assert check(turn_2("Turn 1"), (TURN_1_TAGGED,)).ok
    report = check(turn_2("Turn 1"), (TURN_1_ALL_TAGGED,))
    assert conjecture_violations(report) == [(COUNTERPOINT_LINE, "Counterpoints")]


def test_each_counterpoint_is_judged_on_its_own_support():
    second = "  - design.md:36-37\n  - https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html\n"
    text = turn_2("design.md#Goals").replace(second, f"  - {CONJECTURE_ITEM}\n", 1)
    report = check(text)
    assert conjecture_violations(report) == [(report.turn.counterpoints[1].line, "Counterpoints")]
    assert report.turn.counterpoints[1].line != COUNTERPOINT_LINE


def test_a_conjecture_among_the_novel_arguments_support_is_not_refused():
    text = turn_2("design.md#Goals").replace(
        "- Principle: timeouts tuned", f"- {CONJECTURE_ITEM}\n- Principle: timeouts tuned", 1
    )
    report = check(text)
    assert report.ok, report.violations
    assert any(item.text == CONJECTURE_ITEM for item in report.turn.novel_support)


# refused support: conjectures, optionally with principles; any real citation makes it acceptable
REFUSED_SUPPORT = st.lists(
    st.sampled_from([CONJECTURE_ITEM, QUOTING_TAGGED_CLAIM, "[CONJECTURE] fences are rarely checked"]),
    min_size=1,
    max_size=3,
).flatmap(
    lambda conjectures: st.lists(
        st.sampled_from(["Principle: slowness is not failure", "Principle: evidence beats intuition"]),
        max_size=2,
    ).flatmap(lambda principles: st.permutations(conjectures + principles))
)


@settings(max_examples=60, deadline=None)
@given(REFUSED_SUPPORT, st.sampled_from(CITATIONS), st.integers(min_value=0, max_value=5))
def test_adding_any_real_citation_to_a_refused_counterpoint_lifts_the_refusal(support, citation, where):
    assert conjecture_violations(check(turn_2(*support))) == [(COUNTERPOINT_LINE, "Counterpoints")]
    at = where % (len(support) + 1)
    report = check(turn_2(*support[:at], citation, *support[at:]))
    assert report.ok, report.violations


# -- the rule is known and applied everywhere the rules are -------------------------------------


def test_the_rule_and_the_tag_are_in_the_generated_skill_and_the_prompt():
    prompt = system_prompt(
        "Alice",
        topic="leases",
        source=DESIGN_SOURCE,
        source_name="design.md",
        persona=None,
        position=None,
        schedule=DUEL,
    )
    for text in (skill.render("generic"), prompt):
        assert "`CONJECTURE_AS_BASIS`" in text
        assert "`[CONJECTURE] …`" in text  # the support kind


def test_live_append_refuses_it_and_duel_validate_reports_it_the_same(service: DuelService, source: Path):
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    guess = "holders that miss a refresh are mostly slow"
    first = make_turn(1, "Alice", "claude-code", "claude-x", counterclaim=f"[CONJECTURE] {guess}")
    appended = service.append(alice.seat, claim(service, alice), first, release=True)
    second = make_turn(2, "Bob", "codex", "gpt-x").replace(
        "  - design.md#Failure handling\n", f'  - Turn 1 "{guess}"\n', 1
    )

    lease = claim(service, bob)
    with pytest.raises(DuelError) as refused:
        service.append(bob.seat, lease, second)
    assert refused.value.code == "TURN_INVALID"
    [violation] = refused.value.details["violations"]
    assert (violation["code"], violation["line"]) == ("CONJECTURE_AS_BASIS", 5)

    report = validate_file(with_extra_turn(Path(appended.debate_path), second))
    assert [(p.code, p.message) for p in report.problems] == [
        ("CONJECTURE_AS_BASIS", f"turn 2: {violation['message']}")
    ]


@pytest.mark.parametrize("artifact", sorted(FIXTURES.glob("*.md")), ids=lambda path: path.stem)
def test_artifacts_from_before_the_rule_validate_as_they_did(artifact: Path):
    report = validate_file(artifact)
    # The partition-handling fixture has raw HTML forged into its Terminal Conclusion, on purpose.
    expected = {"RAW_HTML"} if artifact.stem.endswith("partition-handling") else set()
    assert {problem.code for problem in report.problems} == expected
