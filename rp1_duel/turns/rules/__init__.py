"""The turn rules of PROTOCOL.md section 7, as a table, and the validator that applies them.

Imports the turn modules below it (the grammar, references, figures, the revision) and the top-level
modules; the layers above import it.

Each rule is one :class:`Rule` row: its code, the sentence an agent reads, which turns it applies to, and
its check. The rows live in families, one private module each, with the decisions each family makes
where the protocol is silent in its own docstring: :mod:`._structure` (safe to store, the heading, the
sections), :mod:`._evidence` (citations), :mod:`._debate` (novelty, stances, consensus), and one a feature:
:mod:`._chair`, :mod:`._rulings` (with challenges and corrections), :mod:`._audience` and :mod:`._edits`
(with the revision and sealed openings). A feature's context (:class:`TurnContext` ``.chair``, ``.audience``,
``.rulings``, ``.edits``) and the note a model is told about it live in its family too.

:data:`RULE_TABLE` holds the rows in :class:`~rp1_duel.vocabulary.RuleCode`'s order, the order agents read the
rules in; :data:`RULES` (code -> text, in that order) is the single source of the rule texts the skill, the
MCP rules and the prompt's guide give. Violations come sorted by line (those without one last), then by rule
order; two identical findings are reported once.
"""

from __future__ import annotations

from types import MappingProxyType

from ...vocabulary import RuleCode
from ..grammar import parse_turn
from . import _audience, _chair, _debate, _edits, _evidence, _rulings, _structure
from ._audience import AudienceContext, questions_note
from ._chair import ChairContext, phase_note
from ._checked import Checked, Rule, TurnReport, TurnViolation, turn_invalid
from ._context import TurnContext
from ._edits import EditsContext, revision_note, sealed_opening_note
from ._rulings import RulingsContext, rulings_note

__all__ = [
    "RULES",
    "RULE_TABLE",
    "AudienceContext",
    "ChairContext",
    "EditsContext",
    "Rule",
    "RulingsContext",
    "TurnContext",
    "TurnReport",
    "TurnViolation",
    "phase_note",
    "questions_note",
    "revision_note",
    "rulings_note",
    "sealed_opening_note",
    "turn_invalid",
    "validate_turn",
]

_CODES = [code for name, code in vars(RuleCode).items() if not name.startswith("_")]
RULE_TABLE: tuple[Rule, ...] = tuple(
    sorted(
        (
            *_structure.RULES,
            *_evidence.RULES,
            *_debate.RULES,
            *_chair.RULES,
            *_rulings.RULES,
            *_audience.RULES,
            *_edits.RULES,
        ),
        key=lambda rule: _CODES.index(rule.code),
    )
)
RULES = MappingProxyType({rule.code: rule.text for rule in RULE_TABLE})
_RULE_ORDER = {code: index for index, code in enumerate(RULES)}


def validate_turn(text: str | bytes, ctx: TurnContext) -> TurnReport:
    """Check a submitted turn against every rule that applies to it; report all violations, never raise."""
    decoded, found, oversize = _structure.decode(text)
    if oversize:
        return TurnReport(parse_turn(""), found)  # bounds the cost of hostile input
    checked = Checked(decoded, parse_turn(decoded, chair=ctx.by_chair), ctx, found)
    violations = [violation for rule in RULE_TABLE if rule.applies(ctx) for violation in rule.check(checked)]
    unique = dict.fromkeys(violations)  # one report per identical finding, order kept
    ordered = sorted(unique, key=lambda v: (v.line is None, v.line or 0, _RULE_ORDER[v.code]))
    return TurnReport(checked.turn, ordered)
