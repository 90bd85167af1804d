"""The artifact rendered from the state and written: all a join needs of the record.

Apart from :mod:`._record_writer` (tamper checks, append, close), which loads the turn
grammar and its Markdown parser and the one history: a join renders an artifact without
turns, and a ``duel tools join`` process loads none of that (bench/bench_startup.py).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..clock import iso
from ..record import FrontMatter, ParticipantEntry, render

if TYPE_CHECKING:
    from ..record import Conclusion, Seal, TurnBlock
    from ._state import DuelState
    from ._store import Transaction


def front_matter_of(state: DuelState, source_path: str) -> FrontMatter:
    """``source_path`` as the artifact shows it (the store's ``source_path_shown``)."""
    return FrontMatter(
        duel_id=state.id,
        topic=state.topic,
        topic_slug=state.topic_slug,
        source_path=source_path,
        source_sha256=state.source_sha256,
        schedule=state.schedule,
        status=state.status,
        outcome=state.outcome,
        created_at=iso(state.created_at) or "",
        closed_at=iso(state.closed_at),
        participants=tuple(
            ParticipantEntry(
                id=p.id,
                seat=p.seat,
                display_name=p.display_name,
                harness=p.harness,
                model_id=p.model_id,
                joined_at=iso(p.joined_at),
                signer=p.signer,
                persona=p.persona,
            )
            for p in sorted(state.participants, key=lambda p: p.seat)
        ),
        questions=tuple(state.questions),
        final_thoughts=tuple(state.final_thoughts),
    )


def write_artifact(
    tx: Transaction, turns: list[TurnBlock] | str, conclusion: Conclusion | None = None, *, create: bool = False
) -> None:
    """Render the artifact: ``turns`` are the state's accepted turns, each signed as the state
    recorded (a signature line edited in the file is put back), or raw text kept verbatim.
    ``create`` refuses to replace an existing file."""
    if not isinstance(turns, str):
        turns = [
            replace(block, signature=record.signature) for block, record in zip(turns, tx.state.turns, strict=True)
        ]
    shown = tx.store.source_path_shown(tx.state)
    seals: list[Seal] = []
    if tx.state.seals:  # a closed duel's: a join has none, and does not build the parser's records
        from ..record import Seal

        seals = [Seal(seal.seat, seal.signature) for seal in tx.state.seals]
    text = render(
        front=front_matter_of(tx.state, shown),
        lease_seconds=tx.state.lease_seconds,
        turns=turns,
        conclusion=conclusion,
        seals=seals,
        rulings=tx.state.rulings,
    )
    tx.store.write_artifact(tx.state, text, create=create)
