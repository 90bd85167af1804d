"""Words and numbers both report renderers show: durations, token counts, costs, counts of things, and
where links lead (relative paths, URL-encoded, so no recorded text can give a link a scheme or a host)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar
from urllib.parse import quote

from ..coordination import Usage
from ..participant import PricedUsage
from ..record import CURRENT, INTACT, INVALID, MISMATCH, STALE, UNSIGNED, UNTRUSTED, VERIFIED
from ..vocabulary import ACCEPTED_CONSENSUS, ACCEPTING_CONSENSUS, CitationKind
from .assessment import ModelSection
from .decision import FlaggedCitation, RevisionView, and_list
from .provenance import TurnProvenance
from .report import OPEN, CitationRow, Report, SeatSigning, UnresolvedEntry, VerificationFacts
from .verdict import AGREE, DRAW, NONE, VOID, WINNER, JudgedVerdict, JudgedVerdicts

_Shown = TypeVar("_Shown")  # what a format shows a stance as

__all__ = [
    "DEPARTURES_NOTE",
    "PROVENANCE_COLUMNS",
    "SEAT_COLOURS",
    "SEAT_COLOUR_NAMES",
    "answered_as",
    "cautions",
    "citation_href",
    "citation_kinds",
    "cost",
    "dollars",
    "duration",
    "everyone",
    "facts",
    "final_stance",
    "flagged_counts",
    "headline",
    "judged",
    "judged_agreement",
    "model_checks",
    "model_text",
    "moment",
    "no_decision",
    "plural",
    "provenance_cells",
    "revision_summary",
    "signed_by",
    "source_named",
    "tag",
    "title",
    "token_counts",
    "total_cost",
    "turn_href",
    "unchecked",
    "unresolved_status",
    "validation",
    "verification",
]

# The timeline's lines, in both renderers: up to 8 seats (a panel's most), apart in hue and lightness.
SEAT_COLOURS = {
    1: "#1f6feb",
    2: "#c2560c",
    3: "#1a7f37",
    4: "#8250df",
    5: "#bf3989",
    6: "#0a7b83",
    7: "#7d4e00",
    8: "#57606a",
}
SEAT_COLOUR_NAMES = {1: "blue", 2: "orange", 3: "green", 4: "purple", 5: "pink", 6: "teal", 7: "brown", 8: "grey"}
DEPARTURES_NOTE = "where the synthesis overrules a seat's final stance"


def duration(seconds: float | None) -> str:
    """`7 min 49 s`, `1 h 02 min` or `12 s`: a duel's length, rounded to the second; `open` when it has none."""
    if seconds is None:
        return "open"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


def moment(iso: str) -> str:
    """`2026-11-24T09:11:36.000Z` as `2026-11-24 09:11 UTC`; anything else as it is."""
    date, _, time = iso.partition("T")
    return f"{date} {time[:5]} UTC" if iso.endswith("Z") and len(time) >= 5 else iso


def token_counts(priced: PricedUsage | None) -> str:
    """`21,000 in / 1,200 out` (`~` before an estimated count), or `not recorded`."""
    if priced is None:
        return "not recorded"
    usage = priced.usage
    about_input = "~" if usage.input_estimated else ""
    about_output = "~" if usage.output_estimated else ""
    return f"{about_input}{usage.all_input_tokens:,} in / {about_output}{usage.output_tokens:,} out"


def cost(priced: PricedUsage | None) -> str:
    """`~$0.1200` (under a dollar) or `~$12.40`, `unpriced` when the model has no price, or `not recorded`."""
    if priced is None:
        return "not recorded"
    value = priced.cost_usd
    if value is None:
        return "unpriced"
    return "~" + dollars(value)


def dollars(value: float) -> str:
    """`$0.1200` under a dollar, `$12.40` from one on."""
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def total_cost(report: Report) -> str:
    """The total's :func:`cost`; with a seat that used tokens on an unpriced model, what the others cost at
    least: `at least $0.1200 (1 seat unpriced)`."""
    if report.usage is None or report.usage.cost_usd is not None:
        return cost(report.usage)
    used = [p.usage for p in report.participants if p.usage is not None and _used_tokens(p.usage.usage)]
    priced = [usage.cost_usd for usage in used if usage.cost_usd is not None]
    return f"at least {dollars(sum(priced))} ({plural(len(used) - len(priced), 'seat')} unpriced)"


def _used_tokens(usage: Usage) -> bool:
    return bool(usage.all_input_tokens + usage.output_tokens)


def plural(count: int, word: str) -> str:
    """`1 turn`, `2 turns`: ``count`` and ``word``, with an ``s`` unless the count is one."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def signed_by(signing: tuple[SeatSigning, ...]) -> str:
    """Who signed a seat's turns: `alice@example.com`, `key SHA256:… (not checked against allowed signers)` or
    `unsigned`; each with its turns when they differ, led by `more than one signer: ` when two keys or principals
    signed; `—` when its signatures were not checked."""
    if len(signing) <= 1:
        return _signer(signing[0]) if signing else "—"
    signers = {group.principal or group.key for group in signing if group.status in (VERIFIED, INTACT, UNTRUSTED)}
    each = "; ".join(
        f"{_signer(group)} ({'turn' if len(group.turns) == 1 else 'turns'} {and_list([str(n) for n in group.turns])})"
        for group in signing
    )
    return ("more than one signer: " if len(signers) > 1 else "") + each


def _signer(group: SeatSigning) -> str:
    if group.status == VERIFIED:
        return group.principal or "—"
    if group.status == INTACT:
        return f"key {group.key} (not checked against allowed signers)"
    if group.status == UNTRUSTED:
        return f"key {group.key}, which the allowed signers do not name"
    if group.status == INVALID:
        return "a signature that does not verify"
    return "unsigned" if group.status == UNSIGNED else f"key {group.key} (its signature not checked)"


def everyone(report: Report, seats: tuple[int, ...]) -> str | None:
    """`both` or `all` when every seat is among ``seats`` (an agreement's); None otherwise."""
    if len(seats) < report.schedule.seats:
        return None
    return "both" if report.schedule.seats == 2 else "all"


def unresolved_status(item: UnresolvedEntry) -> str:
    """`open`, or how and in which turn its author let an unresolved item go: `conceded in turn 3`."""
    return OPEN if item.open else f"{item.status} in turn {item.dropped_in}"


def tag(item: UnresolvedEntry) -> str:
    """`blocking`, `non-blocking` or `untagged`: how an unresolved item was tagged."""
    return {True: "blocking", False: "non-blocking", None: "untagged"}[item.blocking]


def facts(report: Report) -> list[str]:
    """`5 of 6 turns`, `7 min 49 s`, and with recorded usage `21,000 tokens`, `~$0.1200`; a duel whose
    participants asked no model (scripts, people) shows no tokens rather than a zero cost."""
    found = [f"{report.turn_count} of {report.schedule.turn_count} turns", duration(report.duration_seconds)]
    if report.schedule.seats != 2 or report.schedule.chair:
        found.insert(1, f"{report.schedule.seats} seats" + (" and a chair" if report.schedule.chair else ""))
    used = 0 if report.usage is None else report.usage.usage.all_input_tokens + report.usage.usage.output_tokens
    if used:
        found += [f"{used:,} tokens", total_cost(report)]
    return found


def title(report: Report) -> str:
    """`Duel report: TOPIC`, or `Panel report: TOPIC` for more than two seats or a chair."""
    kind = "Duel" if report.schedule.seats == 2 and not report.schedule.chair else "Panel"
    return f"{kind} report: {report.topic}"


def headline(report: Report) -> str:
    """`ACCEPTED_CONSENSUS after 5 of 6 turns · 7 min 49 s · 21,000 tokens · ~$0.1200`, then its :func:`cautions`
    (`· ⚠ 1 fabricated citation`)."""
    warned = "".join(f" · ⚠ {caution}" for caution in cautions(report))
    return f"{report.outcome.outcome or 'OPEN'} after " + " · ".join(facts(report)) + warned


def cautions(report: Report) -> list[str]:
    """What keeps an outcome from reading as good news: fabricated citations, a record that does not validate,
    seats an API answered for with another model than the one asked for."""
    found = [plural(report.decision.fabricated, "fabricated citation")] if report.decision.fabricated else []
    if report.decision.valid is False or not report.intact:
        found.append("the record does not validate")
    switched = len({turn.seat for turn in report.provenance if turn.model_mismatch})
    if switched:
        found.append(f"{plural(switched, 'seat')} answered by another model than asked for")
    return found


def answered_as(turn: TurnProvenance) -> str:
    """The model the API said answered the turn: its id, flagged `⚠ ID, not the model asked for` when it is
    another; `not said` when the API named none, `—` when no model was asked (a person, a script), `not recorded`."""
    if turn.provider is None:
        return "not recorded"
    if turn.served_model is None:
        return "not said" if _asked_a_model(turn) else "—"
    return f"⚠ {turn.served_model}, not the model asked for" if turn.model_mismatch else turn.served_model


# The columns of provenance_cells, after the turn and the participant.
PROVENANCE_COLUMNS = (
    *("Provider", "Asked for", "Answered as", "Reasoning"),
    *("Tokens", "Cost", "Retries", "Repairs", "Seconds"),
)


def provenance_cells(turn: TurnProvenance) -> tuple[str, ...]:
    """A turn's provenance as both renderers show it, cell by cell: provider, model asked for, model answered as,
    reasoning, tokens, cost, retries, repairs (with the codes repaired) and seconds."""
    if turn.provider is None and turn.usage is None:
        return ("not recorded", turn.requested_model or "—", *("not recorded",) * 7)
    usage = turn.usage
    asked = _asked_a_model(turn)
    reasoning = "not recorded" if turn.provider is None else turn.reasoning or ("default" if asked else "—")
    repairs = f"{turn.repairs} ({', '.join(turn.repair_codes)})" if turn.repair_codes else str(turn.repairs)
    return (
        turn.provider or "not recorded",
        turn.requested_model or "—",
        answered_as(turn),
        reasoning,
        token_counts(usage) if asked else "—",
        cost(usage) if asked else "—",
        str(usage.usage.retries) if usage is not None and asked else "—",
        repairs,
        "not recorded" if usage is None else f"{usage.usage.seconds:.1f} s",
    )


def _asked_a_model(turn: TurnProvenance) -> bool:
    return turn.usage is not None and turn.usage.usage.requests > 0


def no_decision(report: Report) -> str:
    """Why a report has no agreed decision: `the duel ended DISSENT`, `the duel is still open`, …"""
    facts = report.outcome
    if facts.outcome is None:
        return "the duel is still open"
    if facts.outcome == ACCEPTED_CONSENSUS:
        return f"the record says {ACCEPTED_CONSENSUS}, but the turns imply {facts.implied or 'no outcome'}"
    return f"the duel ended {facts.outcome}"


def validation(report: Report) -> str:
    """`passes`, `fails (2 problems)`, or `was not run`: what ``duel validate`` said of the record."""
    if report.decision.valid is None:
        return "was not run"
    count = len(report.decision.validation_problems)
    return "passes" if report.decision.valid else f"fails ({plural(count, 'problem')})"


def flagged_counts(flagged: tuple[FlaggedCitation, ...]) -> str:
    """`1 fabricated, 2 unreliable`: the flagged citations by verdict, in order of first appearance."""
    counts: dict[str, int] = {}
    for citation in flagged:
        counts[citation.verdict] = counts.get(citation.verdict, 0) + 1
    return ", ".join(f"{count} {verdict}" for verdict, count in counts.items())


def unchecked(report: Report) -> str | None:
    """Why the URLs the turns cite were not all checked: no sidecar, or one that is not current; None when they were,
    or when no turn cites a URL."""
    if not any(citation.kind == CitationKind.URL for citation in report.citations):
        return None
    if report.verification is None:
        return "The URLs cited were not checked: no duel verify sidecar"
    return None if report.verification.status == CURRENT else verification(report.verification)


def revision_summary(revision: RevisionView) -> str:
    """`design.md: +3 −1; accepted by Claude and GPT`."""
    accepted = and_list(revision.accepted_by) or "no one"
    return f"{', '.join(revision.files)}: +{revision.added} −{revision.removed}; accepted by {accepted}"


def turn_href(report: Report, turn: int) -> str | None:
    """A link to turn ``turn``'s heading in the artifact; None in a report that links nothing."""
    if not report.links.linked:
        return None
    anchor = report.anchor_of(turn)
    return quote(report.links.artifact) + (f"#{quote(anchor)}" if anchor else "")


def citation_href(report: Report, citation: CitationRow) -> str | None:
    """A link to what a source or turn citation points at; None for URLs and principles, an unknown source, or in
    a report that links nothing."""
    if not report.links.linked:
        return None
    if citation.kind == CitationKind.TURN:
        target = report.links.artifact
    elif citation.kind == CitationKind.SOURCE and report.links.source is not None:
        target = report.links.source
    else:
        return None
    return quote(target) + (f"#{quote(citation.anchor)}" if citation.anchor else "")


def source_named(report: Report) -> str:
    """The source as the report names it: as recorded (from the artifact's folder), or, in a report that links
    nothing, from the root of its git work tree, where a reader of a pull-request comment finds it."""
    return report.links.source if not report.links.linked and report.links.source else report.source_path


def citation_kinds(report: Report) -> str:
    """`18 citations: 6 source, 5 turn, 3 url, 4 principle`, kinds in order of first use."""
    counts: dict[str, int] = {}
    for citation in report.citations:
        counts[citation.kind] = counts.get(citation.kind, 0) + 1
    kinds = ", ".join(f"{count} {kind}" for kind, count in counts.items())
    return plural(len(report.citations), "citation") + (f": {kinds}" if kinds else "")


def verification(facts: VerificationFacts) -> str:
    """What the sidecar says, or why its verdicts are not shown."""
    where = f"Verification sidecar {facts.path}"
    if facts.status == STALE:
        coverage = f"covers turns 1–{facts.turns} only (later turns are not verified)"
    elif facts.status == MISMATCH or not facts.shown:
        reason = "belongs to another record" if facts.status == MISMATCH else "could not be read"
        return f"{where} {reason}; its verdicts are not shown: {'; '.join(facts.problems)}"
    else:
        coverage = "covers every turn"
    counts = ", ".join(f"{count} {verdict}" for verdict, count in facts.counts.items())
    return f"{where} ({moment(facts.verified_at or '')}) {coverage}: {counts or 'no citations'}"


def final_stance(stance: str | None, strong: Callable[[str], _Shown], plain: Callable[[str], _Shown]) -> _Shown:
    """A seat's final stance beside the synthesis: ``strong`` when it does not accept the consensus (the
    synthesis may not record agreement it did not give), else ``plain``."""
    return plain(stance) if stance == ACCEPTING_CONSENSUS else strong(stance or "no stance")


def model_checks(section: ModelSection) -> str:
    """`5 turn references, 2 not found (marked [not found: …]). Asked 2026-11-24 10:02 UTC.`"""
    count = len(section.references)
    if not count:
        checked = "No turn reference"
    elif section.not_found:
        checked = f"{plural(count, 'turn reference')}, {section.not_found} not found (marked [not found: …])"
    else:
        checked = f"{plural(count, 'turn reference')}, all found"
    return checked + (f". Asked {moment(section.asked_at)}." if section.asked_at else ".")


def model_text(section: ModelSection) -> str:
    """The model's text with `[not found: why]` after each turn reference that failed its check."""
    out, position = [], 0
    for reference in section.references:
        if not reference.found:
            out += [section.text[position : reference.end], f" [not found: {reference.reason}]"]
            position = reference.end
    out.append(section.text[position:])
    return "".join(out)


def _said(report: Report, kind: str | None, seat: int | None) -> str:
    """`Bob (seat 2) wins`, `a draw`, `void`."""
    if kind == WINNER and seat is not None:
        return f"{report.name_of(seat)} (seat {seat}) wins"
    return {DRAW: "a draw", VOID: "void"}.get(kind or "", "no verdict")


def judged(report: Report, verdict: JudgedVerdict) -> str:
    """One assessor's verdict, as it stands: `Bob (seat 2) wins`, `a draw`, `void (the model's own verdict)`,
    `void, forced: … (the model said: Bob (seat 2) wins)`, `no verdict: …`."""
    if verdict.void_reasons:
        said = _said(report, verdict.given, verdict.given_seat) if verdict.given else "no verdict"
        return f"void, forced: {'; '.join(verdict.void_reasons)} (the model said: {said})"
    if verdict.verdict == VOID:
        return "void (the model's own verdict)"
    if verdict.verdict == NONE:
        return f"no verdict: {verdict.problem}"
    return _said(report, verdict.verdict, verdict.seat)


def judged_agreement(report: Report, verdicts: JudgedVerdicts) -> str | None:
    """`The 2 assessors agree: Bob (seat 2) wins.`, or that they disagree; None with one verdict."""
    if verdicts.agreement is None:
        return None
    count = len(verdicts.verdicts)
    if verdicts.agreement == AGREE:
        first = verdicts.verdicts[0]
        return f"The {count} assessors agree: {_said(report, first.verdict, first.seat)}."
    return f"The {count} assessors disagree: each verdict is shown, labelled by its assessor; none changes the outcome."
