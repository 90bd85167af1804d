"""The one history (rp1_duel/record/history.py): live append and ``duel validate`` replay a
record the same way, whatever bytes the source was saved with and wherever the tree is.

Regression tests for two drifts the redesign fixed, each through the real service and
through :func:`validate_file`:

- a source saved with a BOM, CRLF line ends or NFD text was read one way by append and
  another by validation;
- a turn could cite the source by the absolute path it was read from, which live append
  accepted and validation of a moved or cloned tree did not. Now a turn cites the source
  only by its file name or by the ``source_path`` the front matter records (relative to
  the artifact when they share a tree).
"""

from __future__ import annotations

import shutil
import unicodedata
from dataclasses import replace
from pathlib import Path

import pytest

from rp1_duel.coordination import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.record import ArtifactReport, validate_file
from rp1_duel.record.artifact import GENESIS, decode_artifact, turn_block
from rp1_duel.record.history import (
    Claimant,
    History,
    RecordFile,
    chain_problems,
    citable_names,
    claimants,
    source_location,
)
from rp1_duel.schedule import Schedule
from rp1_duel.turns import normalize_newlines, parse_turn, validate_turn
from rp1_duel.turns.source import decode_source, read_source

from helpers import DUEL, SOURCE, Player, claim, join, make_turn, with_extra_turn

ALICE = ("Alice", "claude-code", "claude-x")  # as the `pair` fixture seats them
BOB = ("Bob", "codex", "gpt-x")


# -- local helpers ---------------------------------------------------------------------------


def edit(text: str, old: str, new: str) -> str:
    assert old in text, f"test edit: {old!r} is not in the turn"
    return text.replace(old, new, 1)


def turn(n: int, stance: str = "OPEN_TO_DEBATE") -> str:
    """make_turn's valid turn ``n`` for the seats of the `pair` fixture."""
    return make_turn(n, *(ALICE if DUEL.speaker(n) == 1 else BOB), stance=stance)


def rewrite(text: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        text = edit(text, old, new)
    return text


def play(service: DuelService, player: Player, text: str):
    """Claim the floor, append ``text`` and give the floor back; the service's answer."""
    return service.append(player.seat, claim(service, player), text, release=True)


def refusal(service: DuelService, player: Player, text: str) -> DuelError:
    """Append ``text``, which the service must refuse; the lease is released afterwards."""
    lease = claim(service, player)
    with pytest.raises(DuelError) as caught:
        service.append(player.seat, lease, text)
    service.release_lock(player.seat, lease)
    return caught.value


def violation_codes(error: DuelError) -> set[str]:
    assert error.code == "TURN_INVALID", error.to_dict()
    return {v["code"] for v in error.details["violations"]}


def problems(report: ArtifactReport) -> list[dict]:
    return [p.to_dict() for p in report.problems]


def assert_validate_agrees(error: DuelError, artifact: Path, text: str) -> set[str]:
    """``duel validate`` on the record with ``text`` as its next turn finds what live append refused."""
    number = error.details["turn_number"]
    report = validate_file(with_extra_turn(artifact, text))
    offline = {(p.code, p.message) for p in report.problems}
    live = {(v["code"], f"turn {number}: {v['message']}") for v in error.details["violations"]}
    assert offline == live
    return {code for code, _ in live}


# -- citable names and where the recorded source is -------------------------------------------


def test_citable_names_are_the_file_name_and_the_recorded_path():
    assert citable_names("../docs/design.md") == ("design.md", "../docs/design.md")
    assert citable_names("design.md") == ("design.md",)
    assert citable_names("/srv/docs/design.md") == ("design.md", "/srv/docs/design.md")
    assert citable_names("") == ()


def test_recorded_source_path_is_read_from_the_artifacts_folder(tmp_path):
    artifact = tmp_path / "debates" / "duel.md"
    assert source_location("../design.md", artifact_path=artifact) == tmp_path / "debates" / ".." / "design.md"
    assert source_location("/srv/docs/design.md", artifact_path=artifact) == Path("/srv/docs/design.md")


# -- History replays the record the service wrote ---------------------------------------------


@pytest.fixture
def two_turns(service, pair):
    """A duel with turn 1 (Alice, CONVERGING) and turn 2 (Bob, OPEN_TO_DEBATE) appended live."""
    alice, bob = pair
    first = play(service, alice, turn(1, "CONVERGING"))
    second = play(service, bob, turn(2))
    assert (first.turn_number, second.turn_number) == (1, 2)
    return Path(second.debate_path), first, second


def test_record_file_history_replays_the_recorded_turns(two_turns, source):
    artifact, first, second = two_turns
    record = RecordFile.read(artifact)
    assert record.front is not None
    assert record.front_problem is None
    assert record.source_note is None
    assert record.front.source_path == "../design.md"
    assert record.source is not None
    assert (record.source.text, record.source.sha256) == (read_source(source).text, record.front.source_sha256)
    history = record.history()
    assert [block.n for block in history.blocks] == [1, 2]
    assert [t.number for t in history.turns] == [1, 2]
    assert [t.name for t in history.turns] == ["Alice", "Bob"]
    assert history.head == second.turn_sha256
    assert history.blocks[0].sha256 == first.turn_sha256
    assert history.next_number == 3
    assert history.stances == {1: "CONVERGING", 2: "OPEN_TO_DEBATE"}
    assert history.source_names == ("design.md", "../design.md")
    assert len(record.history(upto=1).turns) == 1
    assert record.history(upto=0).head == GENESIS


def test_context_for_gives_the_next_turn_its_seat_and_earlier_claims(two_turns):
    artifact, _, _ = two_turns
    history = RecordFile.read(artifact).history()
    ctx = history.context_for(Claimant(*ALICE))
    assert ctx.turn_number == 3
    assert (ctx.participant_name, ctx.harness, ctx.model_id) == ALICE
    assert ctx.previous_stance == "CONVERGING"  # seat 1's, from turn 1; not Bob's turn 2
    assert ctx.source is history.source
    assert tuple(ctx.source_names) == ("design.md", "../design.md")
    assert [t.number for t in ctx.prior_turns] == [1, 2]
    first_claim = history.turns[0].novel_claim
    assert ctx.novelty is not None
    assert ctx.novelty.repeats(first_claim)
    assert history.context_for(Claimant(*BOB), 4).previous_stance == "OPEN_TO_DEBATE"
    # The next turn as written is valid in that context; repeating turn 1's claim is NOVELTY.
    fresh = turn(3, "CONVERGING")
    assert validate_turn(fresh, ctx).ok
    repeated = edit(fresh, "Argument 3: strict alternation matters because reviewers read turn 3 later.", first_claim)
    assert {v.code for v in validate_turn(repeated, ctx).violations} == {"NOVELTY"}


def test_context_from_the_record_judges_the_next_turn_as_the_service_does(service, pair, two_turns):
    alice, _ = pair
    artifact, _, _ = two_turns
    history = RecordFile.read(artifact).history()
    ctx = history.context_for(Claimant(*ALICE))
    first_claim = history.turns[0].novel_claim
    repeated = edit(
        turn(3, "CONVERGING"),
        "Argument 3: strict alternation matters because reviewers read turn 3 later.",
        first_claim,
    )
    error = refusal(service, alice, repeated)
    assert {v.code for v in validate_turn(repeated, ctx).violations} == violation_codes(error) == {"NOVELTY"}
    assert assert_validate_agrees(error, artifact, repeated) == {"NOVELTY"}
    assert validate_turn(turn(3, "CONVERGING"), ctx).ok
    assert play(service, alice, turn(3, "CONVERGING")).turn_number == 3


def test_history_looks_turns_up_by_number_from_zero_with_a_chair():
    history = History(source=None, source_names=("design.md",), schedule=Schedule(seats=2, max_turns=4, chair=True))
    for number, body in enumerate(("brief\n", "first\n", "second\n")):
        history.accept(turn_block(number, body, history.head), parse_turn(body, chair=number == 0))
    assert history.numbers == range(3)
    assert [history.block(n).n for n in history.numbers] == [0, 1, 2]
    assert history.turn(2) is history.turns[-1] and history.block(0).body == "brief\n"
    for missing in (-1, 3):  # a negative index would otherwise read from the end
        with pytest.raises(IndexError):
            history.turn(missing)


def test_history_numbers_turns_from_one_without_a_chair():
    history = History(source=None, source_names=("design.md",), schedule=DUEL)
    history.accept(turn_block(1, "first\n", GENESIS), parse_turn("first\n"))
    assert (history.numbers, history.block(1).body, history.next_number) == (range(1, 2), "first\n", 2)
    with pytest.raises(IndexError):
        history.block(0)


def test_chain_problems_accepts_the_chain_the_service_wrote(two_turns):
    artifact, _, _ = two_turns
    assert list(chain_problems(RecordFile.read(artifact).parsed.blocks, first=1)) == []


def test_chain_problems_flags_an_edited_turn(two_turns):
    artifact, _, _ = two_turns
    artifact.write_text(edit(artifact.read_text(), "On fifteen-minute leases", "On ten-minute leases"))
    found = list(chain_problems(RecordFile.read(artifact).parsed.blocks, first=1))
    assert [(p.code, p.block.n) for p in found] == [("HASH_MISMATCH", 1)]


def test_chain_problems_flags_a_wrong_prev(two_turns):
    artifact, _, _ = two_turns
    first, second = RecordFile.read(artifact).parsed.blocks
    found = list(chain_problems([first, replace(second, prev=GENESIS)], first=1))
    assert [(p.code, p.block.n) for p in found] == [("HASH_CHAIN", 2)]


def test_chain_problems_flags_a_wrong_number(two_turns):
    artifact, _, _ = two_turns
    first, second = RecordFile.read(artifact).parsed.blocks
    found = list(chain_problems([first, replace(second, n=3)], first=1))
    assert [(p.code, p.block.n) for p in found] == [("TURN_ORDER", 3)]


def test_checked_replay_ends_where_the_plain_replay_does(two_turns):
    # duel validate replays with every rule checked, live append without: same history.
    artifact, _, _ = two_turns
    record = RecordFile.read(artifact)
    assert record.front is not None
    plain = record.history()
    checked = record.history(upto=0)
    reports = [report for _, report in checked.replay_checked(record.parsed.blocks, claimants(record.front))]
    assert [report.ok for report in reports] == [True, True]
    assert (checked.head, checked.stances, checked.next_number) == (plain.head, plain.stances, plain.next_number)
    assert checked.summaries() == plain.summaries()
    assert len(checked.novelty) == len(plain.novelty) > 0


# -- drift a: the source's bytes (BOM, CRLF, NFD) ---------------------------------------------

NFD_SOURCE = SOURCE + "\n## Caf\u0065\u0301 failover\nThe caf\u0065\u0301 node takes over once the lease expires.\n"
assert unicodedata.is_normalized("NFD", NFD_SOURCE)
assert not unicodedata.is_normalized("NFC", NFD_SOURCE)


def test_bom_source_topic_is_its_first_heading_and_citable_live_and_offline(service, source):
    source.write_bytes(b"\xef\xbb\xbf" + SOURCE.encode("utf-8"))
    joined = service.join(target=str(source), participant_name="Alice", harness=ALICE[1], model_id=ALICE[2])
    assert (joined.topic, joined.topic_slug) == ("Lease design", "lease-design")
    alice = Player(joined.seat, "Alice")
    bob = join(service, source, "Bob", harness=BOB[1], model_id=BOB[2])
    first = rewrite(
        turn(1),
        ("- Addresses: design.md#Lease semantics", "- Addresses: design.md#Lease design"),
        ("  - design.md#Failure handling", "  - design.md#Lease design"),
    )
    appended = play(service, alice, first)
    assert appended.turn_number == 1
    second = rewrite(turn(2), ("- Addresses: Turn 1", "- Addresses: design.md#Lease design"))
    assert play(service, bob, second).turn_number == 2
    report = validate_file(appended.debate_path)
    assert report.valid
    assert problems(report) == []
    assert report.notes == []
    assert report.turns == 2
    record = RecordFile.read(appended.debate_path)
    assert record.front is not None
    assert record.front.topic == "Lease design"


CRLF_CITATIONS = (
    ("  - design.md#Failure handling", "  - design.md:10-11"),  # the last two lines
    (
        '- design.md "Leases expire after fifteen minutes unless refreshed."',
        '- design.md "unless refreshed. A holder refreshes its lease"',
    ),  # across a line end
)
NFD_CITATIONS = (
    ("- Addresses: design.md#Lease semantics", "- Addresses: design.md#Caf\u00e9 failover"),  # cited NFC
    ("  - design.md#Failure handling", "  - design.md:13-14"),  # the last two lines
    (
        '- design.md "Leases expire after fifteen minutes unless refreshed."',
        '- design.md "The caf\u00e9 node takes over"',
    ),
    ("- Principle: a first stance needs no revision support", "- design.md#caf\u00e9-failover"),  # its anchor
)


@pytest.mark.parametrize(
    ("saved", "citations", "last_lines", "past_the_end"),
    [
        (SOURCE.replace("\n", "\r\n").encode(), CRLF_CITATIONS, "design.md:10-11", "design.md:11-12"),
        (SOURCE.replace("\n", "\r").encode(), CRLF_CITATIONS, "design.md:10-11", "design.md:11-12"),
        (NFD_SOURCE.encode(), NFD_CITATIONS, "design.md:13-14", "design.md:14-15"),
        (
            b"\xef\xbb\xbf" + NFD_SOURCE.replace("\n", "\r\n").encode(),
            NFD_CITATIONS,
            "design.md:13-14",
            "design.md:14-15",
        ),
    ],
    ids=["crlf", "lone-cr", "nfd", "bom-crlf-nfd"],
)
def test_source_bytes_are_read_alike_live_and_offline(service, source, saved, citations, last_lines, past_the_end):
    source.write_bytes(saved)
    alice = join(service, source, "Alice", harness=ALICE[1], model_id=ALICE[2])
    join(service, source, "Bob", harness=BOB[1], model_id=BOB[2])
    first = rewrite(turn(1), *citations)
    # A line past the end is refused live, and validate reports that very turn the same way.
    beyond = edit(first, last_lines, past_the_end)
    error = refusal(service, alice, beyond)
    assert violation_codes(error) == {"SOURCE_REF_NOT_FOUND"}
    artifact = Path(service.status(alice.duel_id).duel.debate_path)
    assert assert_validate_agrees(error, artifact, beyond) == {"SOURCE_REF_NOT_FOUND"}
    # The turn citing the last lines, headings and an excerpt is accepted live and valid offline.
    appended = play(service, alice, first)
    assert appended.turn_number == 1
    report = validate_file(appended.debate_path)
    assert report.valid
    assert problems(report) == []
    assert report.notes == []


# -- drift b: citing the source by an absolute path, then moving the tree -----------------------


def test_turn_citing_the_source_by_absolute_path_is_refused_live_and_offline(service, pair, source):
    alice, _ = pair
    cited = rewrite(turn(1), ("  - design.md#Failure handling", f"  - {source}#Lease semantics"))
    error = refusal(service, alice, cited)
    assert violation_codes(error) == {"SUPPORT_KIND"}
    [violation] = error.details["violations"]
    assert violation["section"] == "Counterpoints"
    assert "cite it as `design.md`" in violation["message"]
    artifact = Path(service.status(alice.duel_id).duel.debate_path)
    assert assert_validate_agrees(error, artifact, cited) == {"SUPPORT_KIND"}


def test_addresses_naming_the_source_by_absolute_path_is_refused_live_and_offline(service, pair, source):
    alice, _ = pair
    cited = rewrite(turn(1), ("- Addresses: design.md#Lease semantics", f"- Addresses: {source}#Lease semantics"))
    error = refusal(service, alice, cited)
    assert violation_codes(error) == {"ADDRESSES_UNKNOWN"}
    [violation] = error.details["violations"]
    assert "`design.md#Heading`" in violation["message"]
    artifact = Path(service.status(alice.duel_id).duel.debate_path)
    assert assert_validate_agrees(error, artifact, cited) == {"ADDRESSES_UNKNOWN"}


# -- raw HTML: refused live, reported by `duel validate` in a record written before the rule --------------------


def test_raw_html_and_a_plus_opening_are_refused_live_and_offline(service, pair):
    alice, _ = pair
    artifact = Path(service.status(alice.duel_id).duel.debate_path)
    hidden = rewrite(turn(1), ("**Agreements**\n", "**Agreements**\n<!-- the reviewer never sees this -->\n"))
    error = refusal(service, alice, hidden)
    assert assert_validate_agrees(error, artifact, hidden) == {"RAW_HTML"}
    opened = "+++\n" + turn(1)
    error = refusal(service, alice, opened)
    assert assert_validate_agrees(error, artifact, opened) == {"HEADING"}


def test_duel_citing_file_name_and_recorded_path_stays_valid_after_the_tree_moves(
    service, pair, source, tmp_path, tmp_path_factory
):
    alice, bob = pair
    first = rewrite(turn(1), ("  - design.md#Failure handling", "  - ../design.md#Failure handling"))
    artifact = Path(play(service, alice, first).debate_path)
    second = rewrite(
        turn(2),
        ("- Addresses: Turn 1", "- Addresses: ../design.md#Turn order"),
        ('- design.md "Leases expire', '- ./design.md "Leases expire'),
    )
    play(service, bob, second)
    front = RecordFile.read(artifact).front
    assert front is not None and front.source_path == "../design.md"
    in_place = validate_file(artifact)
    assert in_place.valid
    assert problems(in_place) == []
    assert in_place.notes == []
    assert in_place.turns == 2

    moved_root = tmp_path_factory.mktemp("elsewhere") / "tree"
    shutil.copytree(tmp_path, moved_root)
    source.unlink()  # the copy must stand on its own: nothing may be read from the old tree
    shutil.rmtree(tmp_path / "debates")
    moved = moved_root / artifact.relative_to(tmp_path)
    after = validate_file(moved)
    assert after.valid
    assert problems(after) == problems(in_place) == []
    assert after.notes == []
    assert after.turns == 2
    # The whole report is the same, but for where the artifact now is.
    assert {**after.to_dict(), "path": None} == {**in_place.to_dict(), "path": None}


def test_one_reader_decodes_an_artifact_strictly_for_the_tamper_check_and_leniently_for_a_checkout():
    checked_out = "\ufeffline one\r\nline two\rline three\n".encode()
    assert decode_artifact(checked_out, strict=False) == "line one\nline two\nline three\n"
    assert decode_artifact(checked_out, strict=True) == checked_out.decode()  # a changed byte is a changed record
    for strict in (True, False):
        with pytest.raises(UnicodeDecodeError):
            decode_artifact(b"\xff", strict=strict)


def test_the_source_and_the_artifact_make_line_ends_lf_by_the_one_rule():
    mixed = "a\r\nb\rc\n"
    assert normalize_newlines(mixed) == "a\nb\nc\n"
    assert decode_source(mixed.encode()) == decode_artifact(mixed.encode(), strict=False) == normalize_newlines(mixed)
