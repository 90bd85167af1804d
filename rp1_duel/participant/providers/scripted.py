"""Turns played from a directory of Markdown files, for demos, tests and reproducible debates."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ...vocabulary import ErrorCode, ReasoningLevel
from .base import Composition, Progress, ProviderError, TurnRequest

__all__ = ["ScriptedProvider"]


class ScriptedProvider:
    """Plays the ``*.md`` files of a directory in sorted order, as they are.

    The file is chosen by how many turns the participant has already written, not by a
    counter: a participant resumed after a crash, or asking for a repair, gets the same
    file again, and a script that breaks a rule stays broken (it fills nothing in).
    """

    name = "scripted"
    remote = False
    reasoning: ReasoningLevel | None = None  # no model: nothing to reason

    def __init__(self, directory: str | Path):
        self.directory = Path(directory).expanduser()
        self.files = sorted(self.directory.glob("*.md")) if self.directory.is_dir() else []
        if not self.files:
            raise ProviderError(
                ErrorCode.INVALID_ARGUMENT, f"scripted:{directory} is not a directory holding *.md turns"
            )
        self.model = f"scripted:{self.directory.resolve().name}"

    def preflight(self) -> str:
        """Every file must still be readable UTF-8: a broken script fails before it takes a seat."""
        for path in self.files:
            try:
                path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise ProviderError(
                    ErrorCode.INVALID_ARGUMENT, f"cannot read the scripted turn {path}: {error}"
                ) from None
        return f"{len(self.files)} scripted turns in {self.directory}"

    def compose(
        self,
        request: TurnRequest,
        progress: Callable[[Progress], None],  # noqa: ARG002  the Provider protocol's; a file reports no progress
    ) -> Composition:
        """The next file of the script, as it is: the one at index ``request.own_turns_before``."""
        index = request.own_turns_before
        if index >= len(self.files):
            raise ProviderError(
                ErrorCode.SCRIPT_EXHAUSTED, f"all {len(self.files)} scripted turns of {self.directory} have been played"
            )
        path = self.files[index]
        return Composition(text=path.read_text(encoding="utf-8"), origin=str(path))
