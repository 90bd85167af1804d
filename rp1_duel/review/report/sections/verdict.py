"""The judged verdict's section: each assessor's verdict, labelled as a judgement, the turns it rests on
checked; whether they agree (docs/protocol.md section 11)."""

from __future__ import annotations

from ... import report_text as words
from ...assessment import CheckedReference
from ..blocks import Code, Emphasis, Inline, Items, Paragraph, Per, Section, Span, Strong, Untrusted
from ..data import Report

__all__ = ["VERDICT_NOTE", "judged_verdict", "rests_on"]

VERDICT_NOTE = (
    "Read from each assessment's last Verdict line, its turn references checked; void is forced when the record"
    " was invalidated or does not validate, or when a fabricated citation decided it; the record and its outcome"
    " are unchanged"
)


def judged_verdict(report: Report) -> Section | None:
    """The verdicts, one item per assessor, set apart as model-written; then whether they agree."""
    verdicts = report.judged_verdict
    if verdicts is None:
        return None
    items = tuple(
        (
            Per((Strong((Untrusted(v.model),)),), (Code(v.model),)),
            ": ",
            Per((Untrusted(words.judged(report, v)),), (Strong((Untrusted(words.judged(report, v)),)),)),
            "; ",
            *rests_on(v.rests_on),
            ".",
        )
        for v in verdicts.verdicts
    )
    blocks: list[Paragraph | Items] = [Paragraph((VERDICT_NOTE, "."), style="note"), Items(items)]
    if (agreement := words.judged_agreement(report, verdicts)) is not None:
        said = (Untrusted(agreement),)
        blocks.append(Paragraph((Per((Emphasis(said),), (Strong(said),)),)))
    return Section(title=(Untrusted(verdicts.label),), blocks=tuple(blocks), model_written=True)


def rests_on(references: tuple[CheckedReference, ...]) -> Inline:
    """`rests on Turn 4 "…", Turn 9 [not found: …]`, or `names no turn it rests on`."""
    if not references:
        return ("names no turn it rests on",)
    marked: list[Span] = ["rests on "]
    for index, reference in enumerate(references):
        marked += [", "] if index else []
        marked.append(Untrusted(reference.text))
        if not reference.found:
            marked += [" [not found: ", Untrusted(reference.reason or ""), "]"]
    return tuple(marked)
