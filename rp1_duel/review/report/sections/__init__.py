"""The report's sections: one function per section, from the :class:`~rp1_duel.review.report.data.Report`
to a :class:`~rp1_duel.review.report.blocks.Section` (None when the record has nothing for it), which every
format shows (docs/protocol.md section 11). May import what :mod:`rp1_duel.review.report` may import,
and its data and blocks; never a writer, so no section knows a format's markup or escaping."""

from .arguments import citations, novel_arguments
from .audience import audience
from .changes import changes, how_it_ended
from .debate import agreements, items_table, rulings, unresolved
from .decision import decision, position
from .frame import footer, header
from .model_written import model_written
from .openings import openings
from .record import participants, provenance
from .stances import stances, turns_table
from .synthesis import synthesis
from .verdict import judged_verdict

__all__ = [
    "agreements",
    "audience",
    "changes",
    "citations",
    "decision",
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
    "stances",
    "synthesis",
    "turns_table",
    "unresolved",
]
