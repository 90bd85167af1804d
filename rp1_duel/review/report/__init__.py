"""``duel report``: what a reviewer needs from a debate record, computed from its text alone.

- :mod:`.data`: the report's data (:class:`Report` and its parts);
- :mod:`.build` and :mod:`.turns`: :func:`build_report`, pure, from the artifact's text and what lies beside it;
- :mod:`.json_form`: the ``json`` format's declared type (docs/protocol.md section 11);
- :mod:`.markdown` and :mod:`.html`: the ``md`` and ``html`` writers; :mod:`.github`, the ``github`` format's
  layout over the ``md`` writer.

Reading files is :mod:`rp1_duel.review.report_files`'s job. May import what :mod:`rp1_duel.review` may import, and the review
modules a report shows (decision, openings, provenance, synthesis, verdict, the audience's view,
assessments); nothing in :mod:`rp1_duel.review` outside this package but the writers and
``report_files`` imports its modules directly.
"""

from ..decision import Quote
from .build import Record, build_report, read_record, record_of
from .data import (
    MARKED_STANCES,
    OPEN,
    STANCE_LEVELS,
    UNRESOLVED_STATUSES,
    Agreement,
    CitationRow,
    ModelFailure,
    NovelArgument,
    OutcomeFacts,
    Report,
    ReportLinks,
    ReportParticipant,
    SeatSigning,
    SidecarFile,
    TimelineEntry,
    UnresolvedEntry,
    VerificationFacts,
)
from .json_form import REPORT_VERSION, ReportJson

__all__ = [
    "MARKED_STANCES",
    "OPEN",
    "REPORT_VERSION",
    "STANCE_LEVELS",
    "UNRESOLVED_STATUSES",
    "Agreement",
    "CitationRow",
    "ModelFailure",
    "NovelArgument",
    "OutcomeFacts",
    "Quote",
    "Record",
    "Report",
    "ReportJson",
    "ReportLinks",
    "ReportParticipant",
    "SeatSigning",
    "SidecarFile",
    "TimelineEntry",
    "UnresolvedEntry",
    "VerificationFacts",
    "build_report",
    "read_record",
    "record_of",
]
