"""One single-seat baseline run (``--baseline single``): the first seat's model, one turn with edits on the
document, one request (:func:`~rp1_duel.participant.single_turn`), its applicable edits written to ``revised.md``."""

from __future__ import annotations

import time
from collections.abc import Mapping

from ..configuration import ModelDefaults
from ..coordination import Usage
from ..errors import DuelError
from ..participant import (
    budget_stop,
    cost_usd,
    select_provider,
    sent_ceiling,
    single_turn,
    single_turn_request,
)
from ..turns import read_source
from .duel_run import DOCUMENT, REVISED, fresh_folder
from .layout import BUDGET, ERROR, RunResult, RunSpec
from .spend import SeatSpend

__all__ = ["ANSWER", "SINGLE_SEAT", "run_single"]

ANSWER = "answer.md"  # the model's whole answer, kept for a person to read
SINGLE_SEAT = "single"


def run_single(
    spec: RunSpec, text: str, *, model: str, share: float, env: Mapping[str, str], defaults: ModelDefaults
) -> RunResult:
    """Run the baseline on ``text`` in ``spec``'s folder; refused (stopped ``budget``, nothing sent) when the
    request could cost more than ``share``, as ``duel join --budget-usd`` checks a seat's. Never raises for what
    the model does: that is the result. ``defaults`` (the configuration's ``[model]``) choose the provider, server
    and output ceiling as they do for every seat's ``duel join``."""
    started = time.monotonic()
    fresh_folder(spec.directory)
    document = spec.directory / DOCUMENT
    document.write_text(text, encoding="utf-8")
    source = read_source(document)
    request = single_turn_request(source, name="Seat 1", model=model)
    nothing = (SeatSpend(seat=SINGLE_SEAT, model=model, served=None, tokens_in=0, tokens_out=0, usd=0.0),)
    try:
        provider = select_provider(
            model,
            provider=defaults.provider,
            base_url=defaults.base_url,
            env=env,
            reasoning=defaults.reasoning,
            max_output_tokens=defaults.max_output_tokens,
        )
    except DuelError as refused:
        failure = f"{refused.code}: {refused.message}"
        return RunResult(spec=spec, seats=nothing, seconds=time.monotonic() - started, stopped=ERROR, error=failure)
    ceiling = sent_ceiling(provider, request.max_tokens)  # what the provider sends bounds the answer, and its cost
    if budget_stop(request, cap_usd=share, spent=Usage(), model=model, ceiling=ceiling, number=1, env=env):
        return RunResult(spec=spec, seats=nothing, seconds=time.monotonic() - started, stopped=BUDGET)
    turn = single_turn(provider, source, request)
    (spec.directory / ANSWER).write_text(turn.answer, encoding="utf-8")
    revision = turn.revision
    changed = bool(revision.edits) and revision.text != revision.source
    if changed:  # the bytes as the edit code made them: the source's line ends kept
        (spec.directory / REVISED).write_text(revision.text, encoding="utf-8", newline="")
    usd = cost_usd(model, turn.usage, env)
    seat = SeatSpend(
        seat=SINGLE_SEAT,
        model=model,
        served=turn.served_model,
        tokens_in=turn.usage.all_input_tokens,
        tokens_out=turn.usage.output_tokens,
        usd=usd,
        costliest_draft_usd=usd or 0.0,
    )
    failed = turn.error
    return RunResult(
        spec=spec,
        outcome=None,
        record=None,
        revised=REVISED if changed else None,
        seats=(seat,),
        seconds=time.monotonic() - started,
        stopped=ERROR if failed else None,
        error=f"{failed.code}: {failed.message}" if failed else None,
    )
