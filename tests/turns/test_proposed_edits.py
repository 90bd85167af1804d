"""Proposed edits and the revision they make (docs/protocol.md section 7, "Proposed edits"; section 8).

Each rule code from a turn that triggers it, through the real ``validate_turn``; amending and
withdrawing across turns; consensus on one exact revision through the service, for two seats and
for a panel; and properties: applying the edits and applying their patch with ``git apply`` or
``patch -p1`` give the same bytes, whatever the document's line ends, BOM or characters.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import shutil
import subprocess
import sys
import tracemalloc
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rp1_duel.errors import DuelError
from rp1_duel.record import Claimant, History, RecordFile, citable_names, turn_block, validate_file
from rp1_duel.settings import DuelSettings
from rp1_duel.turns import SourceDocument, normalize_turn_text, validate_turn
from rp1_duel.turns._edits import Edit, EditKind, EditSection, parse_edits
from rp1_duel.turns.revision import MAX_GROWTH, Revision
from rp1_duel.vocabulary import ACCEPTED_CONSENSUS

from helpers import DUEL, SOURCE, Player, claim, join, lines_no_edit_wrote, make_turn, panel, replace_edit, with_edits

ALICE, BOB, CAROL = ("Alice", "claude-code", "claude-x"), ("Bob", "codex", "gpt-x"), ("Carol", "script", "carol-1")
PANEL = {1: ALICE, 2: BOB, 3: CAROL}
OPEN, ACCEPT = "OPEN_TO_DEBATE", "ACCEPTING_CONSENSUS"
EXPIRY = "Leases expire after fifteen minutes unless refreshed."
CONFIGURABLE = "Leases expire after `lease_seconds` unless refreshed."
DOC = SourceDocument.from_bytes(SOURCE.encode(), "design.md")
NAMES = citable_names("../design.md")  # as the service records a source beside the debate dir


def rid(document: str) -> str:
    """A revision id computed apart from the code under test: the document's SHA-256."""
    return "r-" + hashlib.sha256(document.encode()).hexdigest()[:12]


UNCHANGED = rid(SOURCE)


# -- turns with edits ---------------------------------------------------------------------------


def delete(name: str, find: str) -> str:
    return f"Edit {name}: delete\n```find\n{find}\n```\n"


def insert(name: str, heading: str, text: str) -> str:
    return f'Edit {name}: insert after heading "{heading}"\n```insert\n{text}\n```\n'


def withdraw(name: str) -> str:
    return f"Withdraw {name}\n"


def turn(n: int, who: tuple[str, str, str], stance: str = OPEN, *edits: str, accepts: str | None = None) -> str:
    """Turn ``n`` by ``who``, valid against SOURCE, with ``edits`` and the revision it ``accepts``."""
    return with_edits(make_turn(n, *who, stance), *edits, accepts=accepts)


def two_seats(n: int) -> tuple[str, str, str]:
    return PANEL[DUEL.speaker(n)]


def replayed(*texts: str, source: SourceDocument = DOC) -> History:
    """The history of ``texts`` (turns 1, 2, … of a two-seat duel), each valid when accepted."""
    history = History(source=source, source_names=NAMES, schedule=DUEL)
    for text in texts:
        report = validate_turn(text, history.context_for(Claimant(*two_seats(history.next_number))))
        assert report.ok, report.violations
        history.accept(turn_block(history.next_number, normalize_turn_text(text), history.head), report.turn)
    return history


def violations(history: History, text: str) -> list[tuple[str, int | None]]:
    """What ``validate_turn`` says of ``text`` as the history's next turn: (code, line) pairs."""
    report = validate_turn(text, history.context_for(Claimant(*two_seats(history.next_number))))
    return [(v.code, v.line) for v in report.violations]


def line_of(text: str, line: str) -> int:
    return text.splitlines().index(line.rstrip("\n")) + 1


# -- the revision of a turn -------------------------------------------------------------------


def test_a_turns_edits_make_the_revision_it_names_by_the_documents_hash():
    text = turn(
        1, ALICE, OPEN, replace_edit("expiry", EXPIRY, CONFIGURABLE), insert("pace", "Turn order", "Refresh rarely.")
    )
    history = replayed(text)
    expected = SOURCE.replace(EXPIRY, CONFIGURABLE).replace("## Turn order\n", "## Turn order\n\nRefresh rarely.\n\n")
    assert history.revision is not None
    assert (history.revision.text, history.revision.id) == (expected, rid(expected))
    assert history.accepted == [rid(expected)]  # the revision in force after the turn
    assert history.revision.counts() == (4, 1)


def test_edits_are_amended_and_withdrawn_by_name_across_turns():
    first = turn(1, ALICE, OPEN, replace_edit("expiry", EXPIRY, CONFIGURABLE), delete("pace", "A holder refreshes"))
    amended = turn(2, BOB, OPEN, replace_edit("expiry", EXPIRY, "Leases expire after ten minutes unless refreshed."))
    withdrawn = turn(3, ALICE, OPEN, withdraw("pace"))
    history = replayed(first, amended, withdrawn)
    assert history.revision is not None
    assert history.revision.text == SOURCE.replace("fifteen", "ten")
    everything_withdrawn = turn(4, BOB, OPEN, withdraw("expiry"))
    history = replayed(first, amended, withdrawn, everything_withdrawn)
    assert history.revision is not None
    assert (history.revision.edits, history.revision.id) == ({}, UNCHANGED)  # the source's own id again


def test_the_order_edits_were_proposed_in_never_matters():
    expiry, pace = replace_edit("expiry", EXPIRY, CONFIGURABLE), insert("pace", "Failure handling", "Refresh rarely.")
    one_way = replayed(turn(1, ALICE, OPEN, expiry), turn(2, BOB, OPEN, pace)).revision
    other_way = replayed(turn(1, ALICE, OPEN, pace), turn(2, BOB, OPEN, expiry)).revision
    assert one_way is not None and other_way is not None
    assert one_way.id == other_way.id


# -- each rule ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("section", "bad_line"),
    [
        ("Change the lease text to say ten minutes\n", "Change the lease text to say ten minutes"),
        ("Edit expiry: replace\n```find\nLeases expire after\n", "Edit expiry: replace"),  # never closed
        ("Edit expiry: replace\n```find\nLeases expire after\n```\n", "Edit expiry: replace"),  # no replace block
        ("Edit -expiry: delete\n```find\nLeases expire after\n```\n", "Edit -expiry: delete"),  # not a name
        (withdraw("ghost"), "Withdraw ghost"),  # no earlier turn proposed it
    ],
)
def test_a_section_that_does_not_read_as_edits_is_edit_format(section, bad_line):
    text = make_turn(1, *ALICE) + "**Proposed Edits**\n" + section
    assert violations(replayed(), text) == [("EDIT_FORMAT", line_of(text, bad_line))]


def test_more_than_fifty_edits_and_withdrawals_is_edit_format():
    history = replayed(turn(1, ALICE, OPEN, replace_edit("expiry", EXPIRY, CONFIGURABLE)))
    text = turn(2, BOB, OPEN, *[withdraw("expiry")] * 51)
    assert violations(history, text) == [("EDIT_FORMAT", line_of(text, "Withdraw expiry") + 50)]


@pytest.mark.parametrize("target", ["debates/lease-design.md", "notes.md", "/home/alice/design.md"])
def test_an_edit_aimed_at_another_file_is_edit_target(target):
    text = turn(1, ALICE, OPEN, replace_edit("expiry", EXPIRY, CONFIGURABLE, target=target))
    assert violations(replayed(), text) == [("EDIT_TARGET", line_of(text, f"Edit expiry: replace in {target}"))]


@pytest.mark.parametrize("target", ["design.md", "./design.md", "../design.md", "Design.MD", "`design.md`"])
def test_an_edit_may_name_the_source_by_any_citable_name(target):
    assert (
        violations(replayed(), turn(1, ALICE, OPEN, replace_edit("expiry", EXPIRY, CONFIGURABLE, target=target))) == []
    )


@pytest.mark.parametrize(
    ("edit", "code"),
    [
        (replace_edit("expiry", "Leases expire after an hour.", CONFIGURABLE), "EDIT_NOT_FOUND"),
        (delete("expiry", "   "), "EDIT_NOT_FOUND"),  # an empty find text finds nothing
        (insert("expiry", "Lease renewal", "Refresh rarely."), "EDIT_NOT_FOUND"),
        (replace_edit("expiry", "its lease", "the lease"), "EDIT_AMBIGUOUS"),  # refreshes its lease; its lease expires
        (delete("expiry", "Seat"), "EDIT_AMBIGUOUS"),
    ],
)
def test_a_find_text_or_heading_must_occur_exactly_once(edit, code):
    text = turn(1, ALICE, OPEN, edit)
    assert violations(replayed(), text) == [(code, line_of(text, edit.splitlines()[0]))]


def test_find_texts_match_as_quotes_do_but_rewrite_exact_characters():
    typographic = replace_edit("expiry", "LEASES  expire after fifteen\nminutes unless refreshed.", "Leases expire.")
    history = replayed(turn(1, ALICE, OPEN, typographic))
    assert history.revision is not None
    assert history.revision.text == SOURCE.replace(EXPIRY, "Leases expire.")
    emphasis = turn(1, ALICE, OPEN, replace_edit("expiry", "Leases *expire* after", "x"))
    assert violations(replayed(), emphasis) == [("EDIT_NOT_FOUND", line_of(emphasis, "Edit expiry: replace"))]


def test_two_edits_of_one_turn_touching_the_same_text_overlap():
    text = turn(1, ALICE, OPEN, replace_edit("expiry", EXPIRY, CONFIGURABLE), delete("minutes", "fifteen minutes"))
    assert [code for code, _ in violations(replayed(), text)] == ["EDIT_OVERLAP"]


def test_two_inserts_after_one_heading_overlap():
    text = turn(1, ALICE, OPEN, insert("one", "Turn order", "One."), insert("two", "Turn order", "Two."))
    assert [code for code, _ in violations(replayed(), text)] == ["EDIT_OVERLAP"]


def test_an_edit_overlapping_an_earlier_turns_edit_is_reported_on_the_new_turn():
    history = replayed(turn(1, ALICE, OPEN, replace_edit("expiry", EXPIRY, CONFIGURABLE)))
    text = turn(2, BOB, OPEN, delete("minutes", "after fifteen minutes"))
    [(code, line)] = violations(history, text)
    assert (code, line) == ("EDIT_OVERLAP", line_of(text, "Edit minutes: delete"))
    amending_instead = turn(2, BOB, OPEN, replace_edit("expiry", EXPIRY, "Leases expire after ten minutes."))
    assert violations(history, amending_instead) == []


def test_amending_an_edit_so_an_earlier_one_now_overlaps_it_names_the_earlier_edit():
    history = replayed(turn(1, ALICE, OPEN, delete("fifteen", "fifteen"), delete("refreshed", "unless refreshed")))
    text = turn(2, BOB, OPEN, replace_edit("fifteen", "after fifteen minutes unless", "after ten minutes unless"))
    report = validate_turn(text, history.context_for(Claimant(*BOB)))
    [found] = report.violations
    assert (found.code, found.line) == ("EDIT_OVERLAP", None)
    assert "an edit an earlier turn proposed: amend or withdraw it" in found.message


def test_a_revised_document_more_than_a_mebibyte_larger_is_edit_too_large():
    markers = "".join(f"Marker {k:03d}.\n" for k in range(20))
    source = SourceDocument.from_bytes((SOURCE + markers).encode(), "design.md")
    history = History(source=source, source_names=NAMES, schedule=DUEL)
    chunk = 64_000  # what one turn of 64 KiB can carry; sixteen of them fit under the limit
    history.revision = Revision(
        source.raw,
        {
            f"m{k}": Edit(name=f"m{k}", kind="replace", find=f"Marker {k:03d}.", text="x" * chunk, target=None, line=1)
            for k in range(16)
        },
    )
    assert not history.revision.problems
    assert 16 * chunk < MAX_GROWTH < 17 * chunk
    text = turn(1, ALICE, OPEN, replace_edit("last", "Marker 019.", "y" * chunk))
    assert violations(history, text) == [("EDIT_TOO_LARGE", None)]


def test_an_accepting_turn_with_edits_in_force_must_name_the_revision():
    history = replayed(turn(1, ALICE, OPEN, replace_edit("expiry", EXPIRY, CONFIGURABLE)))
    assert violations(history, turn(2, BOB, ACCEPT)) == [("REVISION_MISSING", None)]
    assert violations(history, turn(2, BOB, ACCEPT, accepts=rid(SOURCE.replace(EXPIRY, CONFIGURABLE)))) == []


def test_accepting_an_older_revision_is_revision_mismatch():
    history = replayed(turn(1, ALICE, OPEN, replace_edit("expiry", EXPIRY, CONFIGURABLE)))
    older = rid(SOURCE.replace(EXPIRY, CONFIGURABLE))
    text = turn(2, BOB, ACCEPT, withdraw("expiry"), accepts=older)  # the turn's own withdrawal counts
    assert violations(history, text) == [("REVISION_MISMATCH", line_of(text, "**Accepted Revision**"))]
    assert violations(history, turn(2, BOB, ACCEPT, withdraw("expiry"), accepts=UNCHANGED)) == []


@pytest.mark.parametrize("stance", ["OPEN_TO_DEBATE", "CONVERGING", "DISSENTING"])
def test_only_an_accepting_turn_has_an_accepted_revision(stance):
    text = turn(1, ALICE, stance, accepts=UNCHANGED)
    assert violations(replayed(), text) == [("REVISION_MISMATCH", line_of(text, "**Accepted Revision**"))]


def test_an_accepted_revision_holds_one_id():
    text = turn(1, ALICE, ACCEPT, accepts=f"{UNCHANGED} or so")
    assert violations(replayed(), text) == [("REVISION_MISMATCH", line_of(text, "**Accepted Revision**"))]


def test_with_no_edit_in_force_an_accepting_turn_may_name_the_unchanged_document_or_nothing():
    assert violations(replayed(), turn(1, ALICE, ACCEPT)) == []
    assert violations(replayed(), turn(1, ALICE, ACCEPT, accepts=UNCHANGED)) == []
    assert violations(replayed(), turn(1, ALICE, ACCEPT, accepts=f"`{UNCHANGED}`")) == []


# -- consensus on one revision, through the service ------------------------------------------------


def write(service, player: Player, text: str) -> str:
    """Append ``text`` as ``player``'s turn and give the floor back; the artifact's path."""
    return service.append(player.seat, claim(service, player), text, release=True).debate_path


def close(service, player: Player) -> None:
    service.release_lock(player.seat, claim(service, player), close=True, outcome=ACCEPTED_CONSENSUS)


def pending(service, player: Player) -> str | None:
    return service.status(player.duel_id).duel.pending_outcome


def agreed_revision(path: str) -> str:
    """The revision the closed duel's record agrees on, recomputed from its turns; the record is valid."""
    report = validate_file(path)
    assert report.valid, report.problems
    assert (report.outcome, report.implied_outcome) == (ACCEPTED_CONSENSUS, ACCEPTED_CONSENSUS)
    history = RecordFile.read(path).history()
    assert history.revision is not None
    return history.revision.id


def test_a_duel_agrees_on_the_revision_one_seat_proposed_and_the_other_amended(service, pair):
    alice, bob = pair
    write(service, alice, turn(1, ALICE, OPEN, replace_edit("expiry", EXPIRY, CONFIGURABLE)))
    amended = SOURCE.replace(EXPIRY, "Leases expire after `lease_seconds` (default 900) unless refreshed.")
    bobs = replace_edit("expiry", EXPIRY, "Leases expire after `lease_seconds` (default 900) unless refreshed.")
    write(service, bob, turn(2, BOB, ACCEPT, bobs, accepts=rid(amended)))
    assert pending(service, alice) is None  # Alice has not accepted anything yet
    path = write(service, alice, turn(3, ALICE, ACCEPT, accepts=rid(amended)))
    assert pending(service, alice) == ACCEPTED_CONSENSUS
    close(service, alice)
    assert agreed_revision(path) == rid(amended)


def test_an_edit_accepted_at_once_after_the_peer_accepted_needs_the_peer_to_accept_again(service, pair):
    alice, bob = pair
    write(service, alice, turn(1, ALICE, OPEN))
    write(service, bob, turn(2, BOB, OPEN))
    write(service, alice, turn(3, ALICE, ACCEPT))  # the document as it is
    revised = SOURCE.replace(EXPIRY, CONFIGURABLE)
    write(service, bob, turn(4, BOB, ACCEPT, replace_edit("expiry", EXPIRY, CONFIGURABLE), accepts=rid(revised)))
    assert pending(service, alice) is None  # Alice's acceptance names the unchanged document
    with pytest.raises(DuelError) as refused:
        write(service, alice, turn(5, ALICE, ACCEPT, accepts=UNCHANGED))
    assert refused.value.code == "TURN_INVALID"
    assert [v["code"] for v in refused.value.details["violations"]] == ["REVISION_MISMATCH"]
    path = write(service, alice, turn(5, ALICE, ACCEPT, accepts=rid(revised)))
    assert pending(service, alice) == ACCEPTED_CONSENSUS
    close(service, alice)
    assert agreed_revision(path) == rid(revised)
    # Read without its source, the record still tells the two acceptances apart: Alice's turn 3
    # accepted the unchanged document (no edit was in force), not Bob's revision.
    source = Path(service.status(alice.duel_id).duel.source_path)
    Path(path).with_name(f"{alice.duel_id}.revision.patch").unlink()
    shutil.rmtree(Path(path).parent / ".duel")
    source.unlink()
    report = validate_file(path)
    assert report.valid, report.problems
    assert report.implied_outcome == ACCEPTED_CONSENSUS


def test_without_consensus_each_seats_last_revision_is_kept_as_an_alternative_not_agreed(service, source):
    settings = DuelSettings(max_turns=2)
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x", settings=settings)
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x", settings=settings)
    write(service, alice, turn(1, ALICE, OPEN, replace_edit("expiry", EXPIRY, CONFIGURABLE)))
    lease = claim(service, bob)
    appended = service.append(bob.seat, lease, turn(2, BOB, "DISSENTING", withdraw("expiry")))
    path, outcome = appended.debate_path, appended.terminal_outcome
    assert outcome == "DISSENT"
    service.release_lock(bob.seat, lease, close=True, outcome=outcome)

    conclusion = Path(path).read_text().split("## Terminal Conclusion")[1]
    patch = f"{alice.duel_id}.alternative-1.patch"
    revised = SOURCE.replace(EXPIRY, CONFIGURABLE)
    assert (
        f"| Alternative | Alice's `{rid(revised)}`, not agreed: `design.md` +1 -1 lines, patch `{patch}` |"
        in conclusion
    )
    assert "alternative-2" not in conclusion  # Bob's last turn left no edit in force
    assert not Path(path).with_name(f"{alice.duel_id}.revision.patch").exists()
    assert "+" + CONFIGURABLE in Path(path).with_name(patch).read_text()
    assert validate_file(path).valid


def dissent_on_alices_edit(service, source) -> tuple[str, str]:
    """Alice proposes an edit, Bob dissents without one: the DISSENT record's path and its duel id."""
    settings = DuelSettings(max_turns=2)
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x", settings=settings)
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x", settings=settings)
    write(service, alice, turn(1, ALICE, OPEN, replace_edit("expiry", EXPIRY, CONFIGURABLE)))
    lease = claim(service, bob)
    appended = service.append(bob.seat, lease, turn(2, BOB, "DISSENTING"))
    assert appended.terminal_outcome == "DISSENT"
    service.release_lock(bob.seat, lease, close=True, outcome=appended.terminal_outcome)
    return appended.debate_path, alice.duel_id


def test_a_seat_that_only_dissented_against_the_others_edits_has_no_alternative(service, source):
    path, duel_id = dissent_on_alices_edit(service, source)
    conclusion = Path(path).read_text().split("## Terminal Conclusion")[1]
    assert f"Alice's `{rid(SOURCE.replace(EXPIRY, CONFIGURABLE))}`, not agreed" in conclusion
    assert "Bob's" not in conclusion  # Bob proposed no edit: Alice's revision is not his alternative
    assert not Path(path).with_name(f"{duel_id}.alternative-2.patch").exists()
    assert validate_file(path).valid


def test_a_record_closed_crediting_the_dissenter_with_the_others_edits_still_validates(service, source):
    path, duel_id = dissent_on_alices_edit(service, source)
    record, alices = Path(path), Path(path).with_name(f"{duel_id}.alternative-1.patch")
    row = next(line for line in record.read_text().splitlines() if line.startswith("| Alternative | Alice's"))
    bobs_row = row.replace("Alice's", "Bob's").replace("alternative-1", "alternative-2")
    record.write_text(record.read_text().replace(row, f"{row}\n{bobs_row}"))  # as the rule before wrote it
    shutil.copyfile(alices, record.with_name(f"{duel_id}.alternative-2.patch"))
    assert validate_file(path).valid, validate_file(path).problems
    record.with_name(f"{duel_id}.alternative-2.patch").write_text("--- a/design.md\n+++ b/design.md\n")
    assert not validate_file(path).valid  # either rule's patches, as written at the close


def test_a_record_closed_when_the_patch_matched_the_whole_documents_still_validates(service, source):
    """Issue 38, item 7: the patch now adds only lines the edits wrote; one written by the rule before (difflib over
    the whole documents, here re-adding the blank line between two edits of a 260-line document) is as good."""
    seat_line, heading = "Seat 1 writes odd turns and seat 2 writes even turns.", "## Failure handling"
    source.write_text(SOURCE + "".join(f"Note {k}.\n\n" for k in range(125)), encoding="utf-8")
    text = source.read_text(encoding="utf-8")
    revised = text.replace(seat_line, "Seats take turns.").replace(heading, "## Failures")
    edits = (replace_edit("seats", seat_line, "Seats take turns."), replace_edit("failures", heading, "## Failures"))
    alice = join(service, source, "Alice", harness="claude-code", model_id="claude-x")
    bob = join(service, source, "Bob", harness="codex", model_id="gpt-x")
    write(service, alice, turn(1, ALICE, OPEN, *edits))
    write(service, bob, turn(2, BOB, ACCEPT, accepts=rid(revised)))
    path = Path(write(service, alice, turn(3, ALICE, ACCEPT, accepts=rid(revised))))
    close(service, alice)
    [patch_file] = path.parent.glob("*.revision.patch")
    assert "\n-\n+\n" not in patch_file.read_text() and validate_file(path).valid
    before = difflib.unified_diff(
        text.splitlines(keepends=True), revised.splitlines(keepends=True), "a/design.md", "b/design.md"
    )
    whole = "".join(before)
    assert "\n-\n" in whole and "\n+\n" in whole  # the blank line between the edits, removed and added again
    patch_file.write_text(whole)
    record = path.read_text()
    path.write_text(record.replace("+2 -2 lines", "+3 -3 lines"))
    assert "+3 -3 lines" in path.read_text() and validate_file(path).valid, validate_file(path).problems
    path.write_text(record)  # the rows of the one rule, the patch of the other
    assert not validate_file(path).valid


def test_a_consensus_without_edits_agrees_on_the_unchanged_document(service, pair):
    alice, bob = pair
    write(service, alice, turn(1, ALICE, OPEN))
    path = write(service, bob, turn(2, BOB, ACCEPT))
    write(service, alice, turn(3, ALICE, ACCEPT, accepts=UNCHANGED))
    assert pending(service, alice) == ACCEPTED_CONSENSUS
    close(service, alice)
    assert agreed_revision(path) == UNCHANGED


def seat_panel(service, source: Path) -> dict[int, Player]:
    settings = DuelSettings(seats=3)
    return {
        seat: join(service, source, name, harness=harness, model_id=model, settings=settings)
        for seat, (name, harness, model) in PANEL.items()
    }


def panel_turns(service, players: dict[int, Player], *turns: tuple[str, tuple[str, ...], str | None]) -> str:
    """Append (stance, edits, accepted id) turns, seats in turn; the artifact's path."""
    path = ""
    for stance, edits, accepts in turns:
        number = service.status(players[1].duel_id).turn_count + 1
        seat = panel(3).speaker(number)
        path = write(service, players[seat], turn(number, PANEL[seat], stance, *edits, accepts=accepts))
    return path


def test_a_panel_agrees_on_one_revision(service, source):
    players = seat_panel(service, source)
    revised = rid(SOURCE.replace(EXPIRY, CONFIGURABLE))
    panel_turns(service, players, (OPEN, (replace_edit("expiry", EXPIRY, CONFIGURABLE),), None), (ACCEPT, (), revised))
    path = panel_turns(service, players, (ACCEPT, (), revised))
    assert pending(service, players[1]) is None  # Alice's latest turn is still open
    path = panel_turns(service, players, (ACCEPT, (), revised))
    assert pending(service, players[1]) == ACCEPTED_CONSENSUS
    close(service, players[1])
    assert agreed_revision(path) == revised


def test_a_panel_seat_whose_latest_acceptance_names_an_older_revision_holds_the_consensus(service, source):
    players = seat_panel(service, source)
    first, amended = CONFIGURABLE, "Leases expire after ten minutes unless refreshed."
    first_id, amended_id = rid(SOURCE.replace(EXPIRY, first)), rid(SOURCE.replace(EXPIRY, amended))
    panel_turns(
        service,
        players,
        (OPEN, (replace_edit("expiry", EXPIRY, first),), None),
        (OPEN, (), None),
        (ACCEPT, (), first_id),
        (ACCEPT, (), first_id),
        (ACCEPT, (replace_edit("expiry", EXPIRY, amended),), amended_id),  # Bob amends and accepts at once
    )
    assert pending(service, players[1]) is None  # Carol and Alice accepted the first revision
    panel_turns(service, players, (ACCEPT, (), amended_id))
    assert pending(service, players[1]) is None  # Alice's latest acceptance still names the first
    path = panel_turns(service, players, (ACCEPT, (), amended_id))
    assert pending(service, players[3]) == ACCEPTED_CONSENSUS
    close(service, players[1])
    assert agreed_revision(path) == amended_id


# -- properties: the edits, and their patch through git apply and patch -p1 -----------------------

WORDS = ["lease", "Lease", "refresh", "“quoted”", "‘single’", "it’s", "café", "cafe\u0301", "naïve", "—", "–"]
WORDS += ["…", "Größe", "ß", "日本語", "e\u0301\u0302", "**bold**", "`code`", "x", "1.", "#", "\t"]
LINE_ENDS = {"lf": ["\n"], "crlf": ["\r\n"], "mixed": ["\n", "\r\n", "\r"]}


@st.composite
def documents(draw: st.DrawFn) -> str:
    """A Markdown document: ATX and setext headings, paragraphs of awkward words and blank lines;
    LF, CRLF or mixed line ends (a lone CR too); perhaps a BOM, perhaps no final newline."""
    ends = LINE_ENDS[draw(st.sampled_from(sorted(LINE_ENDS)))]
    lines = draw(
        st.lists(
            st.tuples(st.sampled_from(LINE_KINDS), st.lists(st.sampled_from(WORDS), min_size=1, max_size=8)),
            min_size=1,
            max_size=14,
        )
    )
    text = ""
    for index, (kind, words) in enumerate(lines):
        line = "" if kind == "blank" else f"{kind.removeprefix('=')}{' '.join(words)} w{index}"
        text += line + draw(st.sampled_from(ends)) + ("===" + draw(st.sampled_from(ends)) if kind == "=" else "")
    if draw(st.booleans()):
        text = text.rstrip("\r\n")
    return ("\ufeff" if draw(st.booleans()) else "") + text


LINE_KINDS = ["", "", "## ", "# ", "=", "blank"]  # a paragraph line, ATX headings, a setext heading, a blank line
KINDS: tuple[EditKind, ...] = ("replace", "delete", "insert")
NEW_TEXT = st.lists(st.sampled_from([*WORDS, "\n", "\n\n"]), max_size=6).map(" ".join)


@st.composite
def revisions(draw: st.DrawFn) -> Revision:
    """A document and up to four edits that apply to it: replaces and deletes of a span occurring
    once, inserts after a heading; each kept only if the edits so far still apply."""
    source = draw(documents())
    kept: dict[str, Edit] = {}
    for index in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(KINDS))
        if kind == "insert":
            # Any line, its # marks aside: those that are no heading give EDIT_NOT_FOUND, and are dropped.
            find = draw(st.sampled_from(re.split(r"\r\n|\r|\n", source.lstrip("\ufeff")))).lstrip("#").strip()
        elif source:
            start = draw(st.integers(0, len(source) - 1))
            find = source[start : draw(st.integers(start + 1, min(len(source), start + 40)))]
        else:
            continue
        edit = Edit(
            name=f"e{index}",
            kind=kind,
            find=find,
            text="" if kind == "delete" else draw(NEW_TEXT),
            target=None,
            line=index + 1,
        )
        if not Revision(source, {**kept, edit.name: edit}).problems:
            kept[edit.name] = edit
    assume(kept)
    return Revision(source, kept)


def patched(folder: Path, revision: Revision, *command: str) -> bytes:
    """The source written to ``folder``, ``command`` run there on the revision's patch: the file's bytes."""
    (folder / "doc.md").write_bytes(revision.source.encode("utf-8"))
    (folder / "revision.patch").write_bytes(revision.patch("doc.md").encode("utf-8"))
    done = subprocess.run([*command, "revision.patch"], cwd=folder, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return (folder / "doc.md").read_bytes()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("repo")
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


GIT_APPLY = ("git", "-c", "core.autocrlf=false", "-c", "core.safecrlf=false", "apply")
PATCH = ("patch", "-p1", "--quiet", "--no-backup-if-mismatch", "-i")


def check_patch_applies(folder: Path, revision: Revision) -> None:
    if revision.text == revision.source:  # edits that change nothing (x replaced by x): no patch, git would refuse one
        assert revision.patch("doc.md") == ""
        return
    expected = revision.text.encode("utf-8")
    assert patched(folder, revision, *GIT_APPLY) == expected
    assert patched(folder, revision, *PATCH) == expected


def test_an_edit_that_changes_nothing_gives_an_empty_patch(repo):
    """Found by the property test below at length: `x` replaced by `x` leaves the document as it was."""
    source = "# T\nlease x w1\n"
    unchanged = Revision(source, {"e0": Edit(name="e0", kind="replace", find="x", text="x", target=None, line=1)})
    assert (unchanged.problems, unchanged.text, unchanged.patch("doc.md")) == ((), source, "")
    check_patch_applies(repo, unchanged)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(revision=revisions())
def test_git_apply_and_patch_give_the_revised_document_byte_for_byte(repo, revision):
    check_patch_applies(repo, revision)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(revision=revisions())
def test_git_apply_and_patch_give_the_revised_document_byte_for_byte_at_length(repo, revision):
    check_patch_applies(repo, revision)


@settings(max_examples=100, deadline=None)
@given(revision=revisions())
def test_a_revision_keeps_the_source_around_its_edits_and_counts_its_patch(revision):
    source, text = revision.source, revision.text
    assert text.startswith("\ufeff") == source.startswith("\ufeff")
    assert revision.id == rid(text)
    added, removed = revision.counts()
    assert added - removed == len(PATCH_LINES.findall(text)) - len(PATCH_LINES.findall(source))
    [*edits] = revision.edits.values()
    if len(edits) == 1 and edits[0].kind == "replace" and "\r" not in source and _exact_span(source, edits[0].find):
        assert text == source.replace(edits[0].find, edits[0].text)


PATCH_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")  # lines as a patch counts them: a lone CR ends none


@st.composite
def revisions_of_long_documents(draw: st.DrawFn) -> Revision:
    """:func:`revisions` over a document followed by 250 blank lines: from 200 lines on, difflib sets lines that
    repeat often (here the blank ones) aside when it matches the two documents."""
    revision = draw(revisions())
    padded = Revision(revision.source + "\n" * 250, revision.edits)
    assume(not padded.problems)
    return padded


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(revision=st.one_of(revisions(), revisions_of_long_documents()))
def test_every_line_the_patch_adds_comes_from_an_edit_in_force(revision):
    assert lines_no_edit_wrote(revision, revision.patch("doc.md")) == []


def test_a_line_between_two_edits_of_a_long_document_is_never_added_by_the_patch():
    """Issue 38, item 7: over 200 lines, the patch removed and added again the blank line between two edited lines."""
    source = "".join(f"Paragraph {k} says something.\n\n" for k in range(150))
    revision = Revision(source).amended(
        parse_edits(
            (
                replace_edit("forty", "Paragraph 40 says something.", "Paragraph 40 says more.")
                + replace_edit("forty-one", "Paragraph 41 says something.", "Paragraph 41 says more.")
            ).splitlines(),
            1,
        )
    )
    assert lines_no_edit_wrote(revision, revision.patch("doc.md")) == []
    assert "\n \n-Paragraph 41 says something.\n+Paragraph 41 says more.\n" in revision.diff("doc.md")


def _exact_span(source: str, find: str) -> bool:
    """Whether ``find`` occurs once in ``source`` as written, from a letter or digit to one not
    followed by a combining mark: where quote-style matching must find exactly it."""
    at = source.find(find)
    after = source[at + len(find) : at + len(find) + 1]
    whole = find[0].isalnum() and find[-1].isalnum() and not (after and unicodedata.combining(after))
    return whole and source.count(find) == 1


# -- cost: linear in the source and the edits (issue 42), counted, never timed -------------------


def long_document(lines: int, tag: str) -> tuple[str, list[str], list[str]]:
    """A document of about ``lines`` lines, unique to ``tag`` (the caches keep none of its work):
    headings over ten lines of prose each; its text, its prose lines and its headings."""
    text, prose, headings = [f"# Measured {tag}"], list[str](), list[str]()
    while len(text) < lines:
        headings.append(f"Part {len(headings)} of {tag}")
        text += ["", f"## {headings[-1]}", ""]
        for _ in range(10):
            prose.append(f"Line {len(prose)} of part {len(headings)} says something plain about leases and locks.")
            text.append(prose[-1])
    return "\n".join(text) + "\n", prose, headings


def spread_edits(prose: list[str], headings: list[str], count: int) -> EditSection:
    """``count`` edits spread evenly over the document: replaces, deletes of a whole line, inserts."""
    blocks = []
    for k in range(count):
        line, heading = prose[k * (len(prose) - 1) // (count - 1)], headings[k * (len(headings) - 1) // (count - 1)]
        blocks.append(
            (
                replace_edit(f"e{k}", line, f"New line {k}."),
                delete(f"e{k}", line),
                insert(f"e{k}", heading, f"A note {k}."),
            )[k % 3]
        )
    section = parse_edits("".join(blocks).splitlines(), 1)
    assert not section.problems
    return section


def python_calls_of_revising(lines: int, edits: int) -> tuple[int, int]:
    """Python calls (built-in ones too) made locating ``edits`` edits over a document of ``lines``
    lines, applying them and diffing the result; and the document's length."""
    source, prose, headings = long_document(lines, f"{lines} lines, {edits} edits")
    section = spread_edits(prose, headings, edits)
    calls = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        calls += event in ("call", "c_call")

    sys.setprofile(count)
    try:
        revision = Revision(source).amended(section)
        assert not revision.problems and revision.id and revision.counts()[0] > 0
    finally:
        sys.setprofile(None)
    return calls, len(source)


def test_the_work_of_more_edits_does_not_grow_with_the_source_nor_take_a_step_per_character():
    python_calls_of_revising(200, 10)  # the regexes compiled, as they are in a running duel
    work = {(lines, edits): python_calls_of_revising(lines, edits)[0] for lines in (1500, 3000) for edits in (10, 40)}
    thirty_more_edits = [work[lines, 40] - work[lines, 10] for lines in (1500, 3000)]
    assert thirty_more_edits[1] < 1.3 * thirty_more_edits[0]  # linear: the same; edits x source: twice
    calls, characters = python_calls_of_revising(3000, 50)
    assert calls < characters / 2  # a Python step per character is 16 million of them at 16 MiB


def test_proposed_edits_hold_memory_in_proportion_to_the_source():
    source, prose, headings = long_document(3000, "memory")
    section = spread_edits(prose, headings, 50)
    tracemalloc.start()
    try:
        revision = Revision(source).amended(section)
        assert not revision.problems and revision.id and revision.diff("design.md")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 24 * len(source)  # a map of every character to the source's was a hundred times it
