"""The model-written sections: each model's text, labelled as a model's and not the record's, its turn
references checked (docs/protocol.md section 11)."""

from __future__ import annotations

from ... import report_text as words
from ...assessment import LABEL
from ..blocks import Code, Paragraph, Per, Prose, Section, Strong, Untrusted
from ..data import Report

__all__ = ["model_written"]


def model_written(report: Report) -> tuple[Section, ...]:
    """One section per model-written text: who wrote it, what its references' check found, then the text."""
    return tuple(
        Section(
            title=(Untrusted(s.title), " by ", Per((Untrusted(s.model), f" ({LABEL})"), (Code(s.model),))),
            blocks=(
                Paragraph(
                    (Per((), (Strong((LABEL.capitalize(),)), ": ")), Untrusted(words.model_checks(s))), style="note"
                ),
                Prose(words.model_text(s)),
            ),
            model_written=True,
        )
        for s in report.model_written
    )
