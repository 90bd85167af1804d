"""The commands that follow the duels of a debate dir: ``duel watch``, ``duel list`` and ``duel stats``.
Each parses, calls :mod:`rp1_duel.review`, and prints.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from ..errors import EXIT_INTERRUPTED, DuelError
from ..printable import printable, printable_json
from .shared import (
    DEBATE_DIR_HELP,
    DebateDirOption,
    JsonOption,
    StoreOption,
    fail,
    load,
    login_name,
    open_service,
    review_line,
    service_for,
)

__all__ = ["list_command", "stats_command", "watch_command"]

_WatchDuelId = Annotated[
    str | None,
    typer.Option("--duel-id", help="The duel to watch (default: the only active duel of the debate dir)."),
]


def watch_command(
    debate_dir: DebateDirOption = None,
    store: StoreOption = None,
    duel_id: _WatchDuelId = None,
) -> None:
    """Follow a duel live: seats, the floor and its countdowns, each turn as it lands, the outcome.

    On a terminal, a live view; through a pipe, one plain line per event. Watching writes nothing and takes no lock.

    On a terminal, press a to ask a seat a question (as `duel ask`, named by your login): it prompts for the seat and the question, then shows the answer or the refusal and goes on watching.

    Exits 0 when the duel closes (at once, after its history, for a closed one), 130 on Ctrl-C.
    """
    import sys
    import time
    from contextlib import nullcontext

    from ..record import agreed_ending
    from ..review import AskKey, display_for, follow, pick_duel
    from ..vocabulary import ACTIVE

    try:
        service = service_for(debate_dir, store)
        duel = pick_duel(service, duel_id)
        display = display_for(sys.stdout)
        keys = None
        if sys.stdin is not None and AskKey.usable(sys.stdin) and service.status(duel).status == ACTIVE:
            keys = AskKey(service, duel, by=login_name(), screen=display, keyboard=sys.stdin)
        with keys or nullcontext():
            last = follow(service, duel, display, sleep=keys.wait if keys else time.sleep)
    except DuelError as exc:
        fail(exc)
    except KeyboardInterrupt:
        raise typer.Exit(EXIT_INTERRUPTED) from None
    for line in agreed_ending(last.debate_path).lines():
        typer.echo(printable(line), err=True)
    typer.echo(review_line(last.debate_path), err=True)


def list_command(
    debate_dir: DebateDirOption = None,
    store: StoreOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON list on stdout.")] = False,
) -> None:
    """List the duels of a debate dir: status, outcome, participants, turns, last activity.

    SILENT flags an open duel in which nobody has been seen for a lease: it will not end by itself.

    Exit 0, or 1 when a duel's state cannot be read (it is listed as unreadable).
    """
    from ..configuration import Flags
    from ..review import UnreadableDuel, duels_table, list_duels

    try:
        config = load(Flags(debate_dir=debate_dir, store=store))
        root = config.debate_dir
        rows = list_duels(open_service(root, store=config.store))
    except DuelError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        typer.echo(printable_json([row.to_dict() for row in rows]))
    elif rows:
        typer.echo(printable(duels_table(rows)))
    else:
        typer.echo(printable(f"no duels in {os.path.abspath(root)}"), err=True)
    raise typer.Exit(1 if any(isinstance(row, UnreadableDuel) for row in rows) else 0)


def stats_command(
    debate_dir: Annotated[
        str | None, typer.Argument(metavar="DEBATE_DIR", help=DEBATE_DIR_HELP, show_default=False)
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Study the duels of a debate dir together: outcomes, turns and cost per outcome, how often the debate changed what the openings alone would have decided, repairs and fabricated citations per model.

    Every duel artifact under the folder is read as `duel report` reads it. What is not recorded (cost without the debate dir's event log, fabricated citations without a verification sidecar) is said to be unknown, never 0.

    Exit 0, or 1 when an artifact cannot be read (it is named) or the folder does not exist.
    """
    from ..configuration import Flags
    from ..review import read_stats, stats_table

    try:
        stats = read_stats(load(Flags(debate_dir=debate_dir)).debate_dir)
    except DuelError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        typer.echo(printable_json(stats.to_dict()))
    else:
        typer.echo(printable(stats_table(stats)))
    raise typer.Exit(1 if stats.unreadable else 0)
