"""What an agent is told of each ``duel mcp`` tool: its parameters' types, bounds and descriptions, and the shape
of its answers (the tools' ``inputSchema`` and ``outputSchema``), as pydantic types the SDK turns into JSON Schema.

Cheap to import (pydantic and :mod:`rp1_duel.vocabulary` only): ``tools/list`` is answered from these before the
seat's own modules are loaded (docs/protocol.md section 2, "duel mcp"). An answer model names the fields an agent
acts on; the rest of a ``duel tools`` object passes through (``additionalProperties``).
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..vocabulary import DuelStatus, NextStep, Outcome, Readable, Stance

WAIT_LIMIT_SECONDS: Final = 3600  # the most a timeout_seconds may ask (the server's bound cuts it further)

# -- parameters ------------------------------------------------------------------------------------------
Target = Annotated[
    str | None, Field(description="Path of the Markdown document debated (default: the server's --target).")
]
Name = Annotated[str | None, Field(description="Your display name in the record (default: the server's --name).")]
Model = Annotated[str | None, Field(description="Your model id, as the record names it (default: --model-id).")]
Topic = Annotated[str | None, Field(description="The duel's topic (default: --topic, else the document's title).")]
JoinRole = Annotated[
    Literal["panelist", "chair"] | None,
    Field(description="Your seat: a panelist debates, the chair frames and sums up (default: --role, else panelist)."),
]
Persona = Annotated[str | None, Field(description="The persona this seat plays (default: --persona, else none).")]
What = Annotated[
    Readable, Field(description="`source`: the document, each line numbered as citations cite it; `turns`: the debate.")
]
Page = Annotated[int, Field(ge=1, description="Which page of 200 lines, from 1 (the answer gives `pages`).")]
TimeoutSeconds = Annotated[
    float | None,
    Field(
        ge=0,
        le=WAIT_LIMIT_SECONDS,
        description="The longest to block, in seconds (default and most: the server's bound, 45 unless set).",
    ),
]
SeenStep = Annotated[
    NextStep | None,
    Field(description="The next_step you last saw: the wait ends once it changes (default: the last one answered)."),
]
ForTimeout = Annotated[
    bool, Field(description="Claim the floor to close the duel TIMEOUT, once a deadline passed (next_step says so).")
]
Turn = Annotated[str, Field(description="Your turn, in Markdown, as duel_rules gives its format.")]
AppendedTurn = Annotated[
    str, Field(description="Your turn, in Markdown, as duel_rules gives its format (empty: your sealed opening).")
]
Release = Annotated[
    bool, Field(description="Give the floor back once the turn is appended (false: keep it, to close next).")
]
CloseOutcome = Annotated[
    Outcome | None,
    Field(description="The outcome to close with (default: the one reached): TIMEOUT after a deadline, INVALIDATED."),
]
Reason = Annotated[str | None, Field(description="Why the duel is closed INVALIDATED: one line, in the record.")]


# -- answers ---------------------------------------------------------------------------------------------
class _Answer(BaseModel):
    """The fields of every seat's answer; the rest of the ``duel tools`` object passes through."""

    model_config = ConfigDict(extra="allow")

    duel_id: str = Field(description="The duel's id.")
    status: DuelStatus = Field(description="Whether the duel is running or closed.")
    next_step: NextStep | None = Field(description="What to do next (duel_status says it in words).")


class JoinAnswer(_Answer):
    """``duel_join``: the seat taken (no token: the server keeps it)."""

    participant_id: str = Field(description="Your participant id in the duel.")
    seat: int = Field(description="Your seat: turns go round the seats from 1 (0 is the chair's).")
    topic: str = Field(description="The duel's topic.")
    debate_path: str = Field(description="The debate record's file.")
    max_turns: int = Field(description="The turns the duel allows.")


class StatusAnswer(_Answer):
    """``duel_status``: the duel now, and the next step in words."""

    next_step_words: str = Field(description="The next step in words: which tool to call.")
    turn_seconds_left: int | None = Field(description="Seconds until the current turn's deadline, if one runs.")
    floor_held_by_you: bool = Field(description="Whether you hold the floor (the lease) now.")
    turn_count: int = Field(description="The turns written so far.")
    next_turn_seat: int | None = Field(description="The seat whose turn is next.")


class WaitAnswer(StatusAnswer):
    """``duel_wait``: the status once the next step changed, or the bound ran out."""

    changed: bool = Field(description="Whether next_step changed; false: call duel_wait again.")
    waited_seconds: float = Field(description="How long the call blocked.")


class ReadAnswer(BaseModel):
    """``duel_read``: one page."""

    what: Readable = Field(description="What was read.")
    name: str = Field(description="The source's name, or how many turns there are.")
    page: int = Field(description="This page, from 1.")
    pages: int = Field(description="How many pages there are.")
    text: str = Field(description="The page's lines.")


class ClaimAnswer(_Answer):
    """``duel_claim``: the floor granted, or why not (no lease token: the server keeps it)."""

    acquired: bool = Field(description="Whether you hold the floor now.")
    reason: str = Field(description="Why the floor was or was not granted.")
    retry_after_seconds: float | None = Field(description="Refused: when to try again.")


class AppendAnswer(_Answer):
    """``duel_append``: the turn appended, and what the duel reached."""

    turn_number: int = Field(description="The turn's number.")
    stance: Literal[Stance, "CHAIR"] = Field(description="The turn's stance (CHAIR for the chair's turns).")
    terminal_outcome: Outcome | None = Field(description="The outcome the duel reached: call duel_close.")
    candidate_convergence: bool = Field(description="Whether the duel converges unless a seat objects.")
    challenges: list[dict[str, Any]] | None = Field(
        None, description="The sources your turn challenged, as they were ruled on."
    )
    challenges_not_checked: str | None = Field(None, description="Why the challenged sources were not ruled on.")


class CommitAnswer(_Answer):
    """``duel_commit_opening``: the sealed opening's hash kept."""

    turn_number: int = Field(description="The opening's turn number.")
    already_committed: bool = Field(description="Whether this very opening was committed before.")
    waiting_for_seats: list[int] = Field(description="The seats whose openings are not committed yet.")


class ReleaseAnswer(_Answer):
    """``duel_release`` and ``duel_close``: the floor given back, and the duel closed."""

    released: bool = Field(description="Whether the floor was given back.")
    closed: bool = Field(description="Whether the duel is closed.")
    outcome: Outcome | None = Field(description="The outcome it closed with.")
