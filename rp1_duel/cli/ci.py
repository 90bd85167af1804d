"""``duel ci github``: a pull request's debate records checked in a GitHub Actions job. Parses its flags, calls
:func:`rp1_duel.ci.run_github` and prints what it says, through :func:`~rp1_duel.printable.printable`."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from ..errors import DuelError
from ..printable import printable
from .shared import PlainHelpCommand, PlainHelpGroup, check_allowed_signers, fail

__all__ = ["ci_app"]

ci_app = typer.Typer(cls=PlainHelpGroup, help="Check debate records in continuous integration.", no_args_is_help=True)

_Glob = Annotated[
    str, typer.Option("--glob", help="The records: changed files matching this, from the repository's root.")
]
_RequireConsensus = Annotated[
    bool, typer.Option("--require-consensus", help="Fail a valid record that did not end ACCEPTED_CONSENSUS.")
]
_RequireVerified = Annotated[
    bool,
    typer.Option(
        "--require-verified", help="Require a current <record>.verify.json (duel verify) with no fabricated citation."
    ),
]
_AllowedSigners = Annotated[
    str | None,
    typer.Option(
        "--allowed-signers",
        help="An ssh-keygen allowed signers file (read it from where the pull request cannot change it): every "
        "turn must be signed by a principal it names.",
    ),
]
_NoComment = Annotated[
    bool, typer.Option("--no-comment", help="Check and write the job summary; comment nothing on the pull request.")
]


@ci_app.command("github", cls=PlainHelpCommand)
def github_command(
    glob: _Glob = "debates/**/*.md",
    require_consensus: _RequireConsensus = False,
    require_verified: _RequireVerified = False,
    allowed_signers: _AllowedSigners = None,
    no_comment: _NoComment = False,
) -> None:
    """Check the debate records a pull request adds or changes, as duel validate --strict does; write each one's report to the job summary and to one comment of the pull request, edited in place on each run; offer the change a consensus agreed as suggestions.

    Reads GITHUB_EVENT_PATH, GITHUB_REPOSITORY, GITHUB_TOKEN, GITHUB_API_URL, GITHUB_STEP_SUMMARY and GITHUB_WORKSPACE. Outside a pull request it checks every tracked record the glob matches and comments nothing; without GITHUB_TOKEN it comments nothing. It reads no duel configuration and fetches no cited source; the token goes to GITHUB_API_URL only.

    Exit 0 when every record is valid (DISSENT, MAX_TURNS and TIMEOUT included, unless --require-consensus), 1 when one is invalid or forged, fails a --require flag, or GitHub refused a call, 2 on wrong flags or a wrong environment.
    """
    from ..ci import CiOptions, run_github

    check_allowed_signers(allowed_signers)
    options = CiOptions(
        glob=glob,
        require_consensus=require_consensus,
        require_verified=require_verified,
        allowed_signers=allowed_signers,
        comment=not no_comment,
    )
    try:
        result = run_github(options, os.environ, lambda line: typer.echo(printable(line)))
    except DuelError as exc:
        fail(exc)
    raise typer.Exit(result.exit_code)
