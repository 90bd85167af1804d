"""The participant: one seat of a duel, start to finish, behind ``duel join``.

The loop (:mod:`.loop`) drives the lock service in process; the prompt (:mod:`.prompt`)
lays out what a model is asked so prompt caches reuse it; providers
(:mod:`.providers`) compose turns with Anthropic, OpenAI-compatible servers, a person
or a script; :mod:`.console` is what a person sees; :mod:`.demo` runs two scripted
participants. May import :mod:`rp1_duel.coordination`, :mod:`rp1_duel.record`,
:mod:`rp1_duel.turns` and the top-level modules; never the CLI.

This module is its face (:func:`rp1_duel.lazy_exports`: naming it loads nothing behind it, so
``duel tools`` never pays for the model SDKs); the other packages import from here only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import lazy_exports

_EXPORTS = {
    "ModelAsker": ".asking",
    "configured_providers": ".asking",
    "AudienceMember": ".audience",
    "SingleTurn": ".baseline",
    "budget_stop": ".budget",
    "sent_ceiling": ".budget",
    "single_turn": ".baseline",
    "single_turn_request": ".baseline",
    "ChallengeCheck": ".checking",
    "CitationChecker": ".checking",
    "citation_checker": ".checking",
    "rule_on_challenges": ".checking",
    "ConsoleReporter": ".console",
    "run_demo": ".demo",
    "JoinFlags": ".joining",
    "PreparedJoin": ".joining",
    "checked_on_fabrication": ".joining",
    "prepare_join": ".joining",
    "LeaseKeeper": ".lease_keeper",
    "Duelist": ".loop",
    "ParticipantConfig": ".loop",
    "ParticipantResult": ".loop",
    "PanelPlan": ".panel",
    "PanelSeat": ".panel",
    "SeatRun": ".panel",
    "exit_code": ".panel",
    "lineup_seats": ".panel",
    "plan_panel": ".panel",
    "run_seats": ".panel",
    "panel_summary": ".panel",
    "shared_flags": ".panel",
    "available_personas": ".personas",
    "ProviderError": ".providers",
    "select_provider": ".providers",
    "STATE_COMPLETED": ".reporter",
    "SeatStash": ".stash",
    "PricedUsage": ".usage",
    "TOKEN_KINDS": ".usage",
    "cost_usd": ".usage",
    "recorded": ".usage",
    "summary": ".usage",
    "total": ".usage",
    "ProviderVoter": ".voters",
    "configured_voters": ".voters",
}
__all__ = [
    "STATE_COMPLETED",
    "TOKEN_KINDS",
    "AudienceMember",
    "ChallengeCheck",
    "CitationChecker",
    "ConsoleReporter",
    "Duelist",
    "JoinFlags",
    "LeaseKeeper",
    "ModelAsker",
    "PanelPlan",
    "PanelSeat",
    "ParticipantConfig",
    "ParticipantResult",
    "PreparedJoin",
    "PricedUsage",
    "ProviderError",
    "ProviderVoter",
    "SeatRun",
    "SeatStash",
    "SingleTurn",
    "available_personas",
    "budget_stop",
    "checked_on_fabrication",
    "citation_checker",
    "configured_providers",
    "configured_voters",
    "cost_usd",
    "exit_code",
    "lineup_seats",
    "panel_summary",
    "plan_panel",
    "prepare_join",
    "recorded",
    "rule_on_challenges",
    "run_demo",
    "run_seats",
    "select_provider",
    "sent_ceiling",
    "shared_flags",
    "single_turn",
    "single_turn_request",
    "summary",
    "total",
]

if TYPE_CHECKING:
    from .asking import ModelAsker, configured_providers
    from .audience import AudienceMember
    from .baseline import SingleTurn, single_turn, single_turn_request
    from .budget import budget_stop, sent_ceiling
    from .checking import ChallengeCheck, CitationChecker, citation_checker, rule_on_challenges
    from .console import ConsoleReporter
    from .demo import run_demo
    from .joining import JoinFlags, PreparedJoin, checked_on_fabrication, prepare_join
    from .lease_keeper import LeaseKeeper
    from .loop import Duelist, ParticipantConfig, ParticipantResult
    from .panel import (
        PanelPlan,
        PanelSeat,
        SeatRun,
        exit_code,
        lineup_seats,
        panel_summary,
        plan_panel,
        run_seats,
        shared_flags,
    )
    from .personas import available_personas
    from .providers import ProviderError, select_provider
    from .reporter import STATE_COMPLETED
    from .stash import SeatStash
    from .usage import TOKEN_KINDS, PricedUsage, cost_usd, recorded, summary, total
    from .voters import ProviderVoter, configured_voters
else:
    __getattr__ = lazy_exports(__name__, _EXPORTS)
