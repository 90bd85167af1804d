"""What every op's answer starts from: the seat and lease handles, and the fields each answer carries.

Apart from :mod:`.results` (a status, a wait, a watcher's observation) so that a lock op or a join,
a ``duel tools`` process each, builds its own answer on these alone. Each op's answer is in a module of
its own (:mod:`._join_result`, :mod:`._claim_result`, :mod:`._refresh_result`, :mod:`._release_result`;
the record ops' in :mod:`._record_results`), because a dataclass costs a ``duel tools`` process a quarter
of a millisecond to build (bench/bench_startup.py). :mod:`.results` names these too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import invalid_argument
from ..vocabulary import NextStep
from . import policy

if TYPE_CHECKING:
    from ..clock import Instant
    from ._state import DuelState, Participant

__all__ = ["DuelResult", "LeaseToken", "Seat", "check_handles", "common_fields"]


class Seat(NamedTuple):
    """A participant's handle: which duel, which participant, and its secret token."""

    duel_id: str
    participant_id: str
    token: str
    number: int = 0  # 1 or 2 (1..N in a panel, 0 for a chair); 0 too when built from flags that do not say

    def __repr__(self) -> str:  # never the token: handles end up in logs and tracebacks
        return f"Seat(duel_id={self.duel_id!r}, participant_id={self.participant_id!r}, number={self.number!r})"


class LeaseToken(NamedTuple):
    """The secret a grant hands out: ``<fence>-<random>``."""

    value: str

    def __repr__(self) -> str:  # never the secret
        return "LeaseToken()"

    @property
    def fence(self) -> int:
        """The lease's fence: the number before the first ``-``."""
        return int(self.value.split("-", 1)[0])


@dataclass(kw_only=True)
class DuelResult:
    """The fields every op's answer carries."""

    duel_id: str
    participant_id: str | None
    participant_count: int
    status: str
    next_step: NextStep | None

    def to_dict(self) -> dict[str, Any]:
        """The protocol's JSON fields of the answer (docs/protocol.md section 5)."""
        data: dict[str, Any] = {"duel_id": self.duel_id}
        if self.participant_id is not None:
            data["participant_id"] = self.participant_id
        data.update(participant_count=self.participant_count, status=self.status, next_step=self.next_step)
        return data


def common_fields(state: DuelState, participant: Participant | None, now: Instant) -> dict[str, Any]:
    """The fields of :class:`DuelResult`, for building any result from a state."""
    return {
        "duel_id": state.id,
        "participant_id": participant.id if participant else None,
        "participant_count": len(state.participants),
        "status": state.status,
        "next_step": policy.next_step(state, participant, now) if participant else None,
    }


def check_handles(seat: object, lease: object = None) -> None:
    """The seat handle and the lease token are two secrets of two types: either one passed
    where the other goes (or anything else) is ``INVALID_ARGUMENT``, naming only the type."""
    if not isinstance(seat, Seat):
        raise invalid_argument(f"expected the Seat a join returned, got a {type(seat).__name__}")
    if lease is not None and not isinstance(lease, LeaseToken):
        raise invalid_argument(f"expected the LeaseToken a claim granted (or None), got a {type(lease).__name__}")
