"""What every rule family shares: a violation, the report, a rule, and the turn under check.

A check is a function of :class:`Checked` yielding the violations of its rule's code only, so a
rule's findings never depend on another rule having run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from ...errors import DuelError
from ...vocabulary import ErrorCode
from ..figures import Figure
from ..grammar import ParsedTurn, SupportItem
from ..references import Reference, parse_reference

if TYPE_CHECKING:
    from ._context import TurnContext

__all__ = [
    "Checked",
    "Rule",
    "TurnReport",
    "TurnViolation",
    "any_turn",
    "chair_turn",
    "named_figures",
    "only",
    "panel_turn",
    "shorten",
    "turn_invalid",
]

T = TypeVar("T")


@dataclass(kw_only=True, frozen=True)
class TurnViolation:
    """One broken rule: its code, what is wrong, and the line and section where, when known."""

    code: str
    message: str
    line: int | None = None
    section: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """As the tools write it in JSON: the fields that are set."""
        found = {"code": self.code, "message": self.message, "line": self.line, "section": self.section}
        return {key: value for key, value in found.items() if value is not None}


def turn_invalid(number: int, violations: Sequence[TurnViolation]) -> DuelError:
    """``TURN_INVALID`` for turn ``number``: every violation, with its code and line, in the details."""
    codes = sorted({v.code for v in violations})
    return DuelError(
        ErrorCode.TURN_INVALID,
        f"turn {number} breaks {len(violations)} rule(s): " + ", ".join(codes),
        {"turn_number": number, "violations": [v.to_dict() for v in violations]},
    )


@dataclass(frozen=True)
class TurnReport:
    """What :func:`~rp1_duel.turns.rules.validate_turn` found: the turn as parsed, and every violation, sorted."""

    turn: ParsedTurn
    violations: list[TurnViolation]

    @property
    def ok(self) -> bool:
        """Whether the turn breaks no rule."""
        return not self.violations


class Checked:
    """One turn under check: its text as decoded, the turn as parsed, its context, and what several rules read."""

    def __init__(self, text: str, turn: ParsedTurn, ctx: TurnContext, encoding: Sequence[TurnViolation] = ()):
        self.text = text
        self.turn = turn
        self.ctx = ctx
        self.encoding = tuple(encoding)  # what decoding the submitted text found (UNSAFE_STRUCTURE)
        self.names = ctx.citable_names
        self._once: dict[Callable[[Checked], Any], Any] = {}

    @cached_property
    def references(self) -> list[tuple[SupportItem, Reference]]:
        """Every support item, in order, with what it cites."""
        return [(item, parse_reference(item.text, self.names)) for item in self.turn.support_items]

    def violation(self, code: str, message: str, line: int | None = None, section: str | None = None) -> TurnViolation:
        """A violation of ``code`` at ``line``, in ``section`` (by default the section holding that line)."""
        return TurnViolation(
            code=code, message=message, line=line, section=self.turn.section_at(line) if section is None else section
        )

    def once(self, compute: Callable[[Checked], T]) -> T:
        """``compute(self)``, computed once for every rule that reads it (an amended revision, say)."""
        if compute not in self._once:
            self._once[compute] = compute(self)
        found: T = self._once[compute]
        return found


def any_turn(_ctx: TurnContext) -> bool:
    """Every turn is held to the rule."""
    return True


def chair_turn(ctx: TurnContext) -> bool:
    """Only the chair's turns are held to the rule."""
    return ctx.by_chair


def panel_turn(ctx: TurnContext) -> bool:
    """Only a panelist's turns (every turn without a chair) are held to the rule."""
    return not ctx.by_chair


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One turn rule: its code, the sentence an agent reads, which turns it applies to, and its check."""

    code: str
    text: str
    applies: Callable[[TurnContext], bool]
    check: Callable[[Checked], Iterable[TurnViolation]]


def shorten(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def named_figures(figures: Sequence[Figure]) -> str:
    """Figures named in a message: `1,250`, `40%` and `$3 million`."""
    named = [f"`{figure.text}`" for figure in figures]
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


def only(
    code: str, *findings: Callable[[Checked], Iterable[TurnViolation]]
) -> Callable[[Checked], list[TurnViolation]]:
    """The check of ``code`` when one pass finds several rules' violations: its own among ``findings``, each
    computed once for every rule that reads it."""
    return lambda checked: [v for find in findings for v in checked.once(find) if v.code == code]
