"""The corpus's contract (docs/bench.md, "The corpus"): each kind of predicate says "fixed" exactly when the text is
fixed, and a corpus folder that cannot be used is refused with CORPUS_INVALID, one line naming the file."""

from __future__ import annotations

import json
import re
from collections import Counter
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

import pytest

from rp1_duel.benchmark import DEFECT_KINDS, DOCUMENT_KINDS, CorpusDocument, Predicate, load_corpus, section_text
from rp1_duel.errors import DuelError
from rp1_duel.turns import atx_heading, fenced_lines, split_lines
from rp1_duel.vocabulary import ErrorCode

DOCUMENT = """# Cache service

## Timeouts

A read waits 30 seconds for the origin, then serves stale.

```
# not a heading: a shell comment in a fence
timeout = 30
```

### Retries

Up to 3 retries.

## Failure modes

- origin down: serve stale
"""

SIDECAR: dict[str, Any] = {
    "kind": "rfc",
    "defects": [
        {
            "id": "d1",
            "kind": "wrong-figure",
            "where": "## Timeouts",
            "description": "the timeout is longer than the client's",
            "fixed_when": {"figure": "30", "section": "## Timeouts"},
        },
        {
            "id": "d2",
            "kind": "missing-failure-mode",
            "where": "## Failure modes",
            "description": "a full disk is not covered",
            "fixed_when": {"section_has": {"section": "## Failure modes", "item": "disk full"}},
        },
    ],
}


def test_absent_holds_once_the_phrase_is_gone_whatever_its_case_wrapping_or_marks() -> None:
    predicate = Predicate("absent", "serves stale")
    assert not predicate.holds(DOCUMENT)
    assert not predicate.holds("then **Serves\n  stale**.")
    assert predicate.holds(DOCUMENT.replace("serves stale", "fails the read"))


def test_present_holds_once_the_phrase_appears() -> None:
    predicate = Predicate("present", "circuit breaker")
    assert not predicate.holds(DOCUMENT)
    assert predicate.holds(DOCUMENT + "\nA `Circuit breaker` opens after 5 failures.\n")


def test_figure_holds_once_the_wrong_figure_is_gone_from_its_section_only() -> None:
    predicate = Predicate("figure", "30", "## Timeouts")
    assert not predicate.holds(DOCUMENT)
    fixed = DOCUMENT.replace("30 seconds", "5 seconds").replace("timeout = 30", "timeout = 5")
    assert predicate.holds(fixed)
    assert predicate.holds(fixed + "\n## Appendix\n\nThe old value was 30.\n"), "another section may keep the figure"
    assert predicate.holds(fixed.replace("5 seconds", "300 seconds")), "300 is another figure than 30"
    assert not predicate.holds(fixed.replace("5 seconds", "30s")), "30s states the figure 30"


def test_figure_in_a_subsection_counts_as_in_the_section() -> None:
    predicate = Predicate("figure", "3", "## Timeouts")
    assert not predicate.holds(DOCUMENT)
    assert predicate.holds(DOCUMENT.replace("Up to 3 retries", "Up to 2 retries"))


def test_a_deleted_section_fixes_nothing() -> None:
    without = DOCUMENT.replace("## Timeouts", "## Deadlines")
    assert not Predicate("figure", "30", "## Timeouts").holds(without)
    assert not Predicate("section_has", "disk full", "## Timeouts").holds(without)


def test_section_has_holds_once_the_named_section_gains_the_item() -> None:
    predicate = Predicate("section_has", "disk full", "## Failure modes")
    assert not predicate.holds(DOCUMENT)
    assert not predicate.holds(DOCUMENT.replace("## Timeouts\n", "## Timeouts\n\nDisk full.\n")), "another section"
    assert predicate.holds(DOCUMENT + "- Disk full: stop writing, alert\n")


@pytest.mark.parametrize(
    ("kind", "section"), [("vanishes", None), ("absent", "## Timeouts"), ("figure", None), ("section_has", None)]
)
def test_a_predicate_of_an_unknown_kind_or_the_wrong_section_cannot_be_made(kind: str, section: str | None) -> None:
    with pytest.raises(ValueError, match="predicate"):
        Predicate(kind, "30", section)


def test_a_section_ends_at_the_next_heading_of_its_level_and_a_fence_holds_no_heading() -> None:
    timeouts = section_text(DOCUMENT, "## Timeouts")
    assert timeouts is not None
    assert "Up to 3 retries" in timeouts and "origin down" not in timeouts
    assert "# not a heading" in timeouts
    assert section_text(DOCUMENT, "# not a heading: a shell comment in a fence") is None
    assert section_text(DOCUMENT, "## timeouts") == timeouts, "a title matches whatever its case"
    assert section_text(DOCUMENT, "### Timeouts") is None, "a heading's level is part of it"


def write_document(root: Path, name: str = "cache-rfc", sidecar: Any = SIDECAR) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "document.md").write_text(DOCUMENT, encoding="utf-8")
    fixed = DOCUMENT.replace("30", "5") + "- disk full: stop writing\n"
    (folder / "fixed.md").write_text(fixed, encoding="utf-8")
    text = sidecar if isinstance(sidecar, str) else json.dumps(sidecar)
    (folder / "defects.json").write_text(text, encoding="utf-8")
    return folder


def test_a_corpus_loads_sorted_by_name_and_a_document_reports_what_a_text_fixes(tmp_path: Path) -> None:
    write_document(tmp_path, "b-doc")
    write_document(tmp_path, "a-doc")
    (tmp_path / "README.md").write_text("files beside the folders are not documents\n", encoding="utf-8")
    corpus = load_corpus(tmp_path)
    assert [document.name for document in corpus] == ["a-doc", "b-doc"]
    document = corpus[0]
    kinds = [defect.kind for defect in document.defects]
    assert document.kind == "rfc" and kinds == ["wrong-figure", "missing-failure-mode"]
    assert document.fixed(document.text) == frozenset()
    assert document.fixed(document.fixed_text) == {"d1", "d2"}
    assert document.fixed(document.text + "- disk full\n") == {"d2"}


def refusal(root: Path) -> str:
    with pytest.raises(DuelError) as caught:
        load_corpus(root)
    assert caught.value.code == ErrorCode.CORPUS_INVALID
    assert "\n" not in caught.value.message
    return caught.value.message


@pytest.mark.parametrize("missing", ["document.md", "fixed.md", "defects.json"])
def test_a_document_folder_missing_a_file_is_refused_naming_it(tmp_path: Path, missing: str) -> None:
    folder = write_document(tmp_path)
    (folder / missing).unlink()
    assert str(folder / missing) in refusal(tmp_path)


def test_a_sidecar_that_is_not_json_is_refused_naming_it(tmp_path: Path) -> None:
    folder = write_document(tmp_path, sidecar='{"kind": "rfc",\n "defects": [')
    message = refusal(tmp_path)
    assert str(folder / "defects.json") in message


def with_defect(**changes: Any) -> dict[str, Any]:
    defect = {**SIDECAR["defects"][0], **changes}
    return {"kind": "rfc", "defects": [defect]}


@pytest.mark.parametrize(
    ("sidecar", "says"),
    [
        ({**SIDECAR, "kind": "memo"}, "unknown document kind 'memo'"),
        (with_defect(kind="typo"), "unknown defect kind 'typo'"),
        (with_defect(fixed_when={"vanishes": "30"}), "fixed_when must name one of"),
        (with_defect(fixed_when={"figure": "30"}), "exactly 'figure' and 'section'"),
        (with_defect(fixed_when={"section_has": {"section": "## Failure modes"}}), "exactly 'section' and 'item'"),
        (with_defect(fixed_when={"absent": ""}), "absent must be a non-empty string"),
        (with_defect(where="Timeouts"), "where must be a Markdown heading"),
        (with_defect(severity="high"), "a defect has exactly the fields"),
        ({"kind": "rfc", "defects": []}, "a list of 1 to 4 defects"),
        ({"kind": "rfc", "defects": [SIDECAR["defects"][0]] * 2}, "two defects share an id"),
        ([], "an object with exactly 'kind' and 'defects'"),
    ],
)
def test_a_sidecar_of_the_wrong_shape_is_refused_saying_what_is_wrong(tmp_path: Path, sidecar: Any, says: str) -> None:
    folder = write_document(tmp_path, sidecar=sidecar)
    message = refusal(tmp_path)
    assert str(folder / "defects.json") in message and says in message


def test_a_folder_that_is_no_corpus_is_refused(tmp_path: Path) -> None:
    assert "not a readable folder" in refusal(tmp_path / "nowhere")
    assert "holds no document folder" in refusal(tmp_path)


# -- the shipped corpus ---------------------------------------------------------------------------------------------
CORPUS = load_corpus()
HINTS = re.compile(r"\b(defects?|todo|fixme|bugs?|xxx|seeded|deliberate(ly)?|intentional(ly)?)\b", re.IGNORECASE)


def enclosing_headings(text: str) -> list[set[tuple[int, str]]]:
    """For each line of ``text``, the headings (level, title) of every section it is in, its own heading included."""
    lines = split_lines(text)
    fenced = fenced_lines(lines)
    open_headings: list[tuple[int, str]] = []
    found: list[set[tuple[int, str]]] = []
    for index, line in enumerate(lines):
        heading = None if fenced[index] else atx_heading(line)
        if heading is not None:
            open_headings = [*(h for h in open_headings if h[0] < heading[0]), heading]
        found.append(set(open_headings))
    return found


def test_the_shipped_corpus_has_forty_documents_of_every_kind_and_every_kind_of_defect() -> None:
    assert len(CORPUS) >= 40
    kinds = Counter(document.kind for document in CORPUS)
    assert set(kinds) == set(DOCUMENT_KINDS) and min(kinds.values()) >= 8, kinds
    defect_kinds = Counter(defect.kind for document in CORPUS for defect in document.defects)
    assert set(defect_kinds) == set(DEFECT_KINDS) and min(defect_kinds.values()) >= 5, defect_kinds


@pytest.mark.parametrize("document", CORPUS, ids=lambda document: document.name)
def test_each_predicate_fails_on_the_original_and_holds_on_the_hand_fixed_version(document: CorpusDocument) -> None:
    assert document.fixed(document.text) == frozenset()
    assert document.fixed(document.fixed_text) == {defect.id for defect in document.defects}


@pytest.mark.parametrize("document", CORPUS, ids=lambda document: document.name)
def test_the_fixed_version_differs_only_in_the_sections_the_defects_name(document: CorpusDocument) -> None:
    """At most two changed runs of lines a defect (a moved step is two), each inside a section a defect names."""
    original, fixed = split_lines(document.text), split_lines(document.fixed_text)
    changes = [op for op in SequenceMatcher(None, original, fixed, autojunk=False).get_opcodes() if op[0] != "equal"]
    assert 0 < len(changes) <= 2 * len(document.defects), changes
    named = {(level, title) for defect in document.defects for level, title in [atx_heading(defect.where) or (0, "")]}
    inside = enclosing_headings(document.text)
    for _, start, end, _, _ in changes:
        touched = range(start, end) if end > start else [start - 1]  # an insertion extends the line above it
        assert all(inside[line] & named for line in touched), (document.name, original[start - 1 : end + 1])


@pytest.mark.parametrize("document", CORPUS, ids=lambda document: document.name)
def test_a_document_reads_as_a_real_one_and_gives_no_hint_of_what_is_wrong(document: CorpusDocument) -> None:
    assert 60 <= len(split_lines(document.text)) <= 200
    assert HINTS.search(document.text) is None, HINTS.search(document.text)
    headings = [heading for heading in map(atx_heading, split_lines(document.text)) if heading]
    assert all(section_text(document.text, defect.where) is not None for defect in document.defects)
    assert headings[0][0] == 1, "a document opens with its title"
