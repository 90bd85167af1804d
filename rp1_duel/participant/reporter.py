"""What a person sees of a participant's run: its states and the :class:`Reporter` the loop tells
(:class:`~rp1_duel.participant.console.ConsoleReporter` prints it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final, Literal, Protocol

if TYPE_CHECKING:
    from ..coordination import Usage
    from ..turns import TurnViolation
    from .providers import Progress
    from .retry import RetryNotice

__all__ = [
    "CLOSING",
    "DEBATING",
    "PREPARING",
    "STATE_COMPLETED",
    "STATE_INVALIDATED",
    "WAITING",
    "ParticipantState",
    "Reporter",
]

# The participant's own states (shown to the person running it and in --json), not protocol words.
ParticipantState = Literal["preparing", "waiting_for_participant", "debating", "closing", "completed", "invalidated"]
PREPARING: Final = "preparing"
WAITING: Final = "waiting_for_participant"
DEBATING: Final = "debating"
CLOSING: Final = "closing"
STATE_COMPLETED: Final = "completed"
STATE_INVALIDATED: Final = "invalidated"


class Reporter(Protocol):
    """What a person sees; :class:`rp1_duel.participant.console.ConsoleReporter` prints it."""

    def state(self, state: ParticipantState, detail: str) -> None:
        """The participant entered ``state``, or has news in it: ``detail`` says what."""
        ...

    def composing(self) -> None:
        """A model request for a draft has begun."""
        ...

    def progress(self, progress: Progress) -> None:
        """The model's answer so far: how many tokens it wrote."""
        ...

    def retrying(self, notice: RetryNotice) -> None:
        """A model request failed and is tried again after a wait."""
        ...

    def composed(self, usage: Usage) -> None:
        """A draft is written; ``usage`` is what its requests used."""
        ...

    def turn_accepted(self, number: int, stance: str) -> None:
        """Turn ``number`` was appended, with ``stance``."""
        ...

    def turn_rejected(
        self, number: int, violations: list[TurnViolation], attempt: int, kept: str | None, *, repairs_left: int | None
    ) -> None:
        """Draft ``attempt`` of turn ``number`` broke the rules ``violations`` name; the model's answer is
        kept in the file ``kept`` (None: it could not be written); ``repairs_left`` may follow (None: until
        the turn deadline, a person's)."""
        ...

    def verifying(self, number: int, writer: str | None, citations: int) -> None:
        """--verify: the URLs of turn ``number`` (``writer`` None: this participant's own draft) are being opened."""
        ...

    def verified(self, number: int, writer: str | None, counts: Mapping[str, int], *, sent_back: bool) -> None:
        """--verify: what the check of turn ``number`` found, and whether the draft goes back for repair."""
        ...
