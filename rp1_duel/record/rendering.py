"""The artifact written: its front matter, its turns, its rulings and its conclusion, from the template.

Apart from :mod:`.artifact`, which reads a record back: a join renders an artifact without turns,
and a ``duel tools join`` process builds none of the parser's records and compiles none of its
patterns (bench/bench_startup.py). :mod:`.artifact` names what is here too.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .artifact import Conclusion, Seal, TurnBlock
    from .front_matter import FrontMatter, ParticipantEntry
    from .rulings import Ruling

__all__ = [
    "OPEN_CONCLUSION",
    "RULINGS_HEADING",
    "RULING_CLOSE",
    "SUMMARY_HEADING",
    "TURN_CLOSE",
    "conclusion_text",
    "render",
    "table_cell",
]

TEMPLATE = Path(__file__).parent.parent / "templates" / "debate-artifact.md"
OPEN_CONCLUSION = "_The duel is still open._"
TURN_CLOSE = "<!-- /duel:turn -->"
RULING_CLOSE = "<!-- /duel:ruling -->"
RULINGS_HEADING = "## Rulings"
SUMMARY_HEADING = "### Summary"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def render(
    front: FrontMatter,
    *,
    lease_seconds: int,
    turns: list[TurnBlock] | str,
    conclusion: Conclusion | None = None,
    seals: Sequence[Seal] = (),
    rulings: Sequence[Ruling] = (),
) -> str:
    """The whole artifact. ``turns`` may be raw text kept verbatim (a tampered record); ``seals``
    end a closed duel's conclusion; ``rulings`` follow the turns, under their heading, once there are some."""
    turns_text = turns if isinstance(turns, str) else "\n".join(_block_text(b) for b in turns)
    if rulings:
        from .rulings import chained, ruling_text

        turns_text = (
            turns_text.strip("\n")
            + f"\n\n{RULINGS_HEADING}\n\n"
            + "\n".join(
                f"<!-- duel:ruling r={ruling.r} sha256={sha} prev={prev} -->\n{ruling_text(ruling)}{RULING_CLOSE}\n"
                for ruling, sha, prev in chained(rulings)
            )
        )
    values = {
        "topic": front.topic,
        "duel_id": front.duel_id,
        "source_path": front.source_path,
        "source_sha256": front.source_sha256,
        "status": front.status,
        "outcome": front.outcome or "—",
        "created_at": front.created_at,
        "closed_at": front.closed_at or "—",
        "max_turns": str(front.schedule.max_turns),
        "seats_row": ("" if front.schedule.seats == 2 else f"\n| Seats | {front.schedule.seats} |")
        + ("\n| Chair | yes |" if front.schedule.chair else ""),
        "lease_seconds": str(lease_seconds),
        "participants_table": _participants_table(front.participants),
        "turns": turns_text.strip("\n") or "_No turns yet._",
        "conclusion": OPEN_CONCLUSION if conclusion is None else conclusion_text(conclusion, seals),
    }
    body = _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), _template())
    return f"---\n{front.to_yaml()}---\n\n{body.rstrip()}\n"


@functools.cache
def _template() -> str:
    return TEMPLATE.read_text(encoding="utf-8")


def _block_text(block: TurnBlock) -> str:
    signed = f"<!-- duel:signature n={block.n} ssh={block.signature} -->\n" if block.signature else ""
    return f"<!-- duel:turn n={block.n} sha256={block.sha256} prev={block.prev} -->\n{block.text}{TURN_CLOSE}\n{signed}"


def table_cell(value: str) -> str:
    """``value`` as a cell of one of the record's Markdown tables."""
    return value.replace("|", "\\|")


def _participants_table(participants: tuple[ParticipantEntry, ...]) -> str:
    if not participants:
        return "_Nobody has joined yet._"
    rows = ["| Seat | Participant | Harness | Model | ID | Joined |", "|---|---|---|---|---|---|"]
    rows.extend(
        f"| {p.seat or 'chair'} | {table_cell(p.display_name)} | {table_cell(p.harness)} | {table_cell(p.model_id)} "
        f"| `{p.id}` | {p.joined_at} |"
        for p in sorted(participants, key=lambda p: p.seat)
    )
    return "\n".join(rows)


def conclusion_text(conclusion: Conclusion, seals: Sequence[Seal] = ()) -> str:
    """What the artifact holds under ``## Terminal Conclusion``. Without ``seals``, the text a
    seal's ``conclusion`` hash covers: as :func:`.artifact.parse` reads it back."""
    rows = [
        "| Field | Value |",
        "|---|---|",
        f"| Outcome | {conclusion.outcome} |",
        f"| Closed at | {conclusion.closed_at} |",
        f"| Candidate convergence | {'yes' if conclusion.candidate_convergence else 'no'} |",
        *(
            [f"| Reason | {table_cell(conclusion.reason or '—')} |"]
            if conclusion.reason or conclusion.reason_row
            else []
        ),
        *([f"| Provisional | {table_cell(shown)} |"] if (shown := _provisional_value(conclusion)) else []),
        *(f"| {label} | {table_cell(value)} |" for label, value in conclusion.revision),
    ]
    text = "\n".join(rows)
    if conclusion.summary and conclusion.summary.strip():
        text += f"\n\n{SUMMARY_HEADING}\n\n" + conclusion.summary.strip()
    if seals:
        text += "\n\n" + "\n".join(f"<!-- duel:seal seat={seal.seat} ssh={seal.signature} -->" for seal in seals)
    return text


def _provisional_value(conclusion: Conclusion) -> str | None:
    if conclusion.provisional is not None:
        from .families import provisional_text  # loaded by a close, not by a join (tests/cli/test_op_imports.py)

        return provisional_text(conclusion.provisional)
    return conclusion.provisional_row
