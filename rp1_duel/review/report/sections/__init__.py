"""The report's sections: one function per section, from the :class:`~rp1_duel.review.report.data.Report`
to a :class:`~rp1_duel.review.report.blocks.Section` (None when the record has nothing for it), which every
format shows (docs/protocol.md section 11). May import what :mod:`rp1_duel.review.report` may import,
and its data and blocks; never a writer, so no section knows a format's markup or escaping."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .arguments import citations, novel_arguments
from .audience import audience
from .changes import changes, how_it_ended
from .debate import agreements, items_table, rulings
from .decision import decision, document_change, position
from .frame import footer, header
from .model_written import model_written
from .openings import openings
from .record import participants, provenance
from .stances import stances, turns_table
from .synthesis import synthesis
from .verdict import judged_verdict

if TYPE_CHECKING:
    from ..blocks import Section
    from ..data import Report

__all__ = [
    "agreements",
    "audience",
    "changes",
    "citations",
    "decision",
    "document_change",
    "footer",
    "header",
    "how_it_ended",
    "items_table",
    "judged_verdict",
    "model_written",
    "novel_arguments",
    "openings",
    "participants",
    "position",
    "provenance",
    "rulings",
    "sections_of",
    "stances",
    "synthesis",
    "turns_table",
]


def sections_of(report: Report) -> list[tuple[Section | None, ...]]:
    """Every section of the report, in its order, for every format: each entry a run of sections (the
    model-written ones are one run, which a page shows with nothing between them)."""
    return [
        (header(report),),
        (document_change(report),),
        (decision(report),),
        (rulings(report),),
        (openings(report),),
        (synthesis(report),),
        (changes(report),),
        (how_it_ended(report),),
        (participants(report),),
        (provenance(report),),
        (stances(report),),
        (turns_table(report),),
        (agreements(report),),
        (novel_arguments(report),),
        (audience(report),),
        (citations(report),),
        tuple(model_written(report)),
        (judged_verdict(report),),
        (footer(report),),
    ]
