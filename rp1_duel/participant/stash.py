"""Where a seat's token is kept between runs (and the drafts a model was paid for): owner-only,
in the debate dir's state folder, so ``duel join`` or ``duel mcp`` run again resumes the seat."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..coordination import DebateDir, DuelLock, Seat, resolve_target, resolve_topic, slugify, write_atomic
from ..errors import DuelError
from ..files import MAX_STATE_BYTES, read_bounded
from ..vocabulary import ErrorCode

if TYPE_CHECKING:
    from typing_extensions import Self

    from ..record import Claimant

__all__ = ["SeatStash"]


class SeatStash:
    """The participant token, kept owner-only in the state folder so a rerun resumes the seat.

    Keyed by source, topic, name and harness, not model: a rerun with a corrected
    ``--model`` finds the token and takes its seat over (docs/protocol.md section 3).
    Also held under a lock for the process's lifetime: two ``duel join`` runs with the same
    name and harness would otherwise share one seat.
    """

    def __init__(self, debate: DebateDir, key: str):
        folder = debate.state_root / "participants"
        folder.mkdir(mode=0o700, exist_ok=True)
        self.path = folder / f"{key}.json"
        self.drafts = folder / f"{key}.drafts"
        self._lock = DuelLock(folder / f"{key}.lock", timeout=0.2)

    @classmethod
    def of(cls, debate: DebateDir, target: str, topic: str | None, claimant: Claimant) -> SeatStash:
        """The stash of ``claimant``'s seat in the duel about ``target`` and ``topic``."""
        source = resolve_target(target)
        slug = slugify(resolve_topic(topic, source))
        identity = (source.path, slug, claimant.name, claimant.harness)
        key = hashlib.sha256("\n".join(identity).encode()).hexdigest()[:32]
        debate.ensure()
        return cls(debate, key)

    def __enter__(self) -> Self:
        try:
            self._lock.__enter__()
        except DuelError:
            raise DuelError(
                ErrorCode.SEAT_TAKEN,
                "another `duel join` with this name and harness is running on this duel; pass a different --name",
            ) from None
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.__exit__()

    def token(self) -> str | None:
        """The token kept by an earlier run; None when there is none."""
        return self._kept("participant_token")

    def duel_id(self) -> str | None:
        """The duel the seat kept by an earlier run is in; None when there is none."""
        return self._kept("duel_id")

    def _kept(self, field: str) -> str | None:
        try:
            value = json.loads(read_bounded(self.path, MAX_STATE_BYTES)).get(field)
        except (OSError, ValueError, AttributeError):
            return None
        return value if isinstance(value, str) else None

    def keep_draft(self, seat: Seat, number: int, attempt: int, answer: str) -> Path:
        """Keep a rejected draft, the model's answer as it came, owner-only beside the token: what a
        person reads to see what the model wrote. One file a draft, never overwritten by another."""
        return self._write_draft(f"{seat.duel_id}-turn-{number}-draft-{attempt}.md", answer)

    def keep_unsaved(self, seat: Seat, number: int, answer: str) -> Path:
        """Keep a valid turn the store failed to take: the model was paid for it, and a rerun appends it."""
        return self._write_draft(self._unsaved_name(seat, number), answer)

    def unsaved(self, seat: Seat, number: int) -> tuple[Path, str] | None:
        """The answer kept for turn ``number`` when storing it failed, and where; None when there is none."""
        path = self.drafts / self._unsaved_name(seat, number)
        try:
            return path, path.read_text()
        except (OSError, UnicodeDecodeError):
            return None

    def drop_unsaved(self, seat: Seat, number: int) -> None:
        """Forget the answer kept for turn ``number``, and a person's draft of it: the store has it now."""
        (self.drafts / self._unsaved_name(seat, number)).unlink(missing_ok=True)
        (self.drafts / self._person_name(seat, number)).unlink(missing_ok=True)

    def person_draft(self, seat: Seat, number: int) -> Path:
        """Where a person's draft of turn ``number`` is kept while it is written and after an abort or a stop,
        so the same command run again reopens it (the folder made owner-only; the file is made so by its writer)."""
        self.drafts.mkdir(mode=0o700, exist_ok=True)
        return self.drafts / self._person_name(seat, number)

    @staticmethod
    def _person_name(seat: Seat, number: int) -> str:
        return f"{seat.duel_id}-turn-{number}-person.md"

    @staticmethod
    def _unsaved_name(seat: Seat, number: int) -> str:
        return f"{seat.duel_id}-turn-{number}-unsaved.md"

    def _write_draft(self, name: str, answer: str) -> Path:
        self.drafts.mkdir(mode=0o700, exist_ok=True)
        path = self.drafts / name
        write_atomic(path, answer.encode())
        return path

    def save(self, seat: Seat) -> None:
        """Keep the seat's handle, its token included, for the next run."""
        keep = {
            "duel_id": seat.duel_id,
            "participant_id": seat.participant_id,
            "participant_token": seat.token,
            "seat": seat.number,
        }
        write_atomic(self.path, json.dumps(keep).encode())
