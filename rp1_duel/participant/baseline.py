"""One model, one turn with edits, no peer: ``duel bench run --baseline single`` (docs/bench.md).

The request is a duel's first turn as a seat is asked for it (the same contract, numbered source and
heading), told it is the only turn; its **Proposed Edits** are applied by the duel's own edit code. An
edit that does not apply is left out: a baseline has no second turn to repair it in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..coordination import Usage, resolve_topic
from ..record import Claimant
from ..schedule import Schedule
from ..turns import Revision, SourceDocument, parse_turn
from .extraction import extract_turn
from .metering import RequestMeter
from .prompt import build_request, heading, system_prompt
from .providers import Provider, ProviderError, TurnRequest

__all__ = ["ONLY_TURN", "SingleTurn", "single_turn", "single_turn_request"]

ONLY_TURN: Final = (
    "This is the only turn: no participant answers it. Propose under **Proposed Edits** every change the "
    "document needs; the edits that apply are the document's revision.\n"
)
_TWO_SEATS: Final = Schedule(seats=2, max_turns=2, chair=False)  # the contract a duel's seat reads


@dataclass(frozen=True, kw_only=True)
class SingleTurn:
    """What the one request gave: the answer, the revision of its edits that apply, and what it cost."""

    answer: str  # the model's text; "" when the request failed
    revision: Revision  # the source with the turn's applicable edits; none when the request failed
    usage: Usage
    served_model: str | None
    error: ProviderError | None = None


def single_turn_request(source: SourceDocument, *, name: str, model: str) -> TurnRequest:
    """The request: turn 1 of a duel of two, as seat 1 is asked for it unsealed, and the last turn."""
    system = system_prompt(
        name,
        topic=resolve_topic(None, source),
        source=source,
        source_name=source.name,
        persona=None,
        position=None,
        schedule=_TWO_SEATS,
    )
    return build_request(
        duel_id=f"single-{source.sha256[:16]}",
        system=system,
        blocks=(),
        number=1,
        max_turns=1,
        heading=heading(1, Claimant(name, "duel", model), by_chair=False),
        own_turns_before=0,
        phase=ONLY_TURN,
    )


def single_turn(provider: Provider, source: SourceDocument, request: TurnRequest) -> SingleTurn:
    """Send ``request`` once (no retry, no repair) and apply the edits of its answer's turn to ``source``."""
    meter = RequestMeter(request, lambda _: None)
    unchanged = Revision(source.raw or source.text)
    try:
        composition = meter.attempt(provider.compose)
    except ProviderError as error:
        return SingleTurn(answer="", revision=unchanged, usage=meter.spent(), served_model=None, error=error)
    turn = parse_turn(extract_turn(composition.text).text)
    proposed = unchanged.amended(turn.edits)
    broken = {problem.name for problem in proposed.problems}
    applicable = Revision(unchanged.source, {name: e for name, e in proposed.edits.items() if name not in broken})
    return SingleTurn(
        answer=composition.text,
        revision=applicable,
        usage=meter.answered(composition.usage),
        served_model=composition.served_model,
    )
