"""Who took part and what each turn cost: the participants (with the total on the page) and each turn's
provenance (docs/protocol.md section 11)."""

from __future__ import annotations

from ... import report_text as words
from ..blocks import Aside, Cell, Code, Inline, Per, SeatName, Section, Strong, Table, Untrusted
from ..data import Report
from .common import turn, turns

__all__ = ["participants", "provenance"]

# Provenance figures the report formats (`~210` is no ~label): shown as they are, never as recorded text.
_FIGURES = frozenset({"Tokens", "Cost", "Retries", "Seconds"})


def participants(report: Report) -> Section:
    """Each seat: who, with what harness and model, signed by whom, its turns and what they cost; a table with
    no heading in Markdown."""
    rows = tuple(
        (
            (str(p.seat),),
            (
                Per(
                    (Untrusted(p.name + (f" (plays {p.persona})" if p.persona else "")),),
                    (
                        SeatName(p.seat, report.name_of(p.seat)),
                        *((" ", Aside(("plays ", Untrusted(p.persona)), css="persona")) if p.persona else ()),
                    ),
                ),
            ),
            (Untrusted(p.harness),),
            (Per((Untrusted(p.model),), (Code(p.model),)),),
            (Untrusted(words.signed_by(p.signed_by)),),
            turns(report, p.turns),
            (words.token_counts(p.usage),),
            (words.cost(p.usage),),
        )
        for p in report.participants
    )
    head = ("Seat", "Participant", "Harness", "Model", "Signed by", "Turns", "Tokens", "Cost")
    total = None if report.usage is None else ((Strong(("Total",)),), (words.total_cost(report),))
    table = Table(head=head, rows=rows, columns=("n", "", "", "", "", "", "n", "n"), total=total)
    return Section(title=(Per((), ("Participants",)),), blocks=(table,))


def provenance(report: Report) -> Section | None:
    """Each turn's provider, models, reasoning, tokens, cost, retries, repairs and seconds; another model than
    the one asked for set apart."""
    if not report.provenance:
        return None
    rows = []
    for entry in report.provenance:
        number: Inline = (turn(report, entry.turn),) if entry.written else (f"{entry.turn} (not written)",)
        cells: list[Inline | Cell] = [
            (text,) if column in _FIGURES else (Untrusted(text),)
            for column, text in zip(words.PROVENANCE_COLUMNS, words.provenance_cells(entry), strict=True)
        ]
        if entry.model_mismatch:
            said = words.provenance_cells(entry)[2]
            shown = Per((Strong((Untrusted(said),)),), (Untrusted(words.answered_as(entry)),))
            cells[2] = Cell((shown,), "other-model", marked=True)
        rows.append((number, (SeatName(entry.seat, report.name_of(entry.seat)),), *cells))
    head = ("Turn", "Participant", *words.PROVENANCE_COLUMNS)
    return Section(
        title=("Provenance",), blocks=(Table(head=head, rows=tuple(rows), columns=("n", *[""] * (len(head) - 1))),)
    )
