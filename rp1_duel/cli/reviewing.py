"""The commands that check and review a duel's record: ``duel validate``, ``duel verify``, ``duel apply``
and ``duel report``. Each parses, calls the library (:mod:`rp1_duel.record`, :mod:`rp1_duel.verify`,
:mod:`rp1_duel.review`), and prints; the commands that follow duels are in :mod:`.following`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import EXIT_INTERRUPTED, DuelError
from ..printable import printable, printable_json
from ..vocabulary import ErrorCode
from .shared import JsonOption, PathsArgument, check_allowed_signers, fail, usage_error

if TYPE_CHECKING:
    from ..participant import ProviderVoter
    from ..verify import Verifier

__all__ = ["apply_command", "report_command", "validate_command", "verify_command"]

# -- duel validate -----------------------------------------------------------------------------------------

_ValidateRoot = Annotated[
    str | None,
    typer.Option(
        "--root",
        help="Read sources only inside this folder (default: each artifact's git work tree, "
        "else the folder above its folder).",
    ),
]
_ValidateAllowedSigners = Annotated[
    str | None,
    typer.Option(
        "--allowed-signers",
        help="An ssh-keygen allowed signers file (as git's gpg.ssh.allowedSignersFile): every "
        "turn must be signed by a principal it names.",
    ),
]
_RequireVerified = Annotated[
    bool,
    typer.Option(
        "--require-verified",
        help="Also require a current <artifact>.verify.json (duel verify) with no fabricated citation.",
    ),
]
_Strict = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="Fail what was not checked: turns whose source could not be read, and a search that found no "
        "artifact (for CI).",
    ),
]


def validate_command(
    paths: PathsArgument,
    as_json: JsonOption = False,
    root: _ValidateRoot = None,
    allowed_signers: _ValidateAllowedSigners = None,
    require_verified: _RequireVerified = False,
    strict: _Strict = False,
) -> None:
    """Check duel artifacts: structure, hash chain, turn rules, outcome. Exit 0 valid, 1 invalid.

    A folder is searched for every *.md that looks like an artifact; one that looks like an artifact and does not parse is invalid, never skipped.

    Sources are checked at the version the duel recorded (from the git history if the file changed since).

    Without --allowed-signers this proves consistency, not authorship: anyone can edit a turn and recompute the hashes.
    """  # one line a paragraph: typer keeps a docstring's line breaks
    from ..record import scan, validate_paths

    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        usage_error(f"no such file or folder: {missing[0]}")
    check_allowed_signers(allowed_signers)
    scanned = scan(paths)
    reports = validate_paths(
        [str(path) for path in scanned.found],
        root=root,
        allowed_signers=allowed_signers,
        require_verified=require_verified,
        strict=strict,
    )
    valid = all(r.valid for r in reports) and bool(reports or not strict)
    skipped = [{"path": str(path), "reason": reason} for path, reason in scanned.skipped]
    if as_json:
        shown = {"valid": valid, "artifacts": [r.to_dict() for r in reports], "skipped": skipped}
        typer.echo(printable_json(shown))
    else:
        for report in reports:
            typer.echo(printable(report.to_text()))
        for entry in skipped:  # what a CI gate did not check, and why
            typer.echo(printable(f"{entry['path']}: skipped ({entry['reason']})"))
        if not reports:
            typer.echo("no duel artifacts found" + (" (--strict fails)" if strict else ""), err=True)
    raise typer.Exit(0 if valid else 1)


# -- duel verify -------------------------------------------------------------------------------------------

VERIFY_NO_MODEL = (
    "no model configured: mechanical verdicts only (claims that need judging stay unjudged); set "
    "ANTHROPIC_API_KEY or OPENAI_API_KEY, or pass --voter MODEL (with --base-url URL for an "
    "OpenAI-compatible server)"
)
_Refresh = Annotated[
    bool, typer.Option("--refresh", help="Fetch and judge everything again: reuse nothing of the existing sidecar.")
]
_VerifyAllowPrivateHosts = Annotated[
    bool,
    typer.Option(
        "--allow-private-hosts",
        help="Fetch from loopback and private addresses too (an intranet wiki, a "
        "test server); metadata addresses stay refused.",
    ),
]
_VerifyVoter = Annotated[
    list[str] | None,
    typer.Option(
        "--voter",
        help="A model that votes (up to 3 times; the third vote is adversarial). Default: Claude "
        "and/or GPT, as keys are set.",
    ),
]
_VoterBaseUrl = Annotated[
    str | None,
    typer.Option("--base-url", help="An OpenAI-compatible server for --voter (Ollama, vLLM, llama.cpp)."),
]


def verify_command(
    paths: PathsArgument,
    as_json: JsonOption = False,
    refresh: _Refresh = False,
    allow_private_hosts: _VerifyAllowPrivateHosts = False,
    voter: _VerifyVoter = None,
    base_url: _VoterBaseUrl = None,
    no_models: Annotated[bool, typer.Option("--no-models", help="Mechanical verdicts only, even with keys.")] = False,
) -> None:
    """Check every URL the turns cite, and the claim it supports; write <artifact>.verify.json beside it.

    Dead links and quoted excerpts not on the page are fabricated; a claim stating a figure its page does not (1,250 for 1,200) is unreliable, unless it begins [CONJECTURE]; a quorum of three model votes judges the rest. Exit 0 when no citation is fabricated, 1 otherwise.
    """
    from ..errors import invalid_argument
    from ..record import scan
    from ..verify import Fetcher, FetchPolicy, PageCache, Verifier, default_cache_dir

    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        fail(invalid_argument(f"no such file or folder: {missing[0]}"), as_json=as_json)
    voters = _ready_voters(voter or [], base_url, no_models=no_models, as_json=as_json)
    if not voters:
        typer.echo(
            f"duel verify: {'--no-models: mechanical verdicts only' if no_models else VERIFY_NO_MODEL}", err=True
        )
    verifier = Verifier(
        Fetcher(FetchPolicy(allow_private_hosts=allow_private_hosts)),
        voters,
        PageCache(default_cache_dir()),
        progress=lambda line: typer.echo(printable(f"duel verify: {line}"), err=True),
    )
    scanned = scan(paths)
    found = [str(path) for path in scanned.found]
    results, fabricated, errors = _verify_each(found, verifier, refresh=refresh, as_json=as_json)
    skipped = [{"path": str(path), "reason": reason} for path, reason in scanned.skipped]
    if as_json:
        voter_names = list(dict.fromkeys(v.name for v in voters))
        shown = {"success": not errors, "models": bool(voters), "voters": voter_names, "fabricated": fabricated}
        typer.echo(printable_json({**shown, "artifacts": results, "skipped": skipped}))
    else:
        for entry in skipped:  # what was not checked, and why, as duel validate lists it
            typer.echo(printable(f"{entry['path']}: skipped ({entry['reason']})"), err=True)
        if not results:
            typer.echo("no duel artifacts found", err=True)
    raise typer.Exit(1 if fabricated or errors else 0)


def _ready_voters(models: list[str], base_url: str | None, *, no_models: bool, as_json: bool) -> list[ProviderVoter]:
    """The voters of ``duel verify``, each preflighted and said ready; none with --no-models."""
    from ..participant import configured_voters

    try:
        voters = [] if no_models else configured_voters(os.environ, models, base_url)
        for name, chosen in {v.name: v for v in voters}.items():
            chosen.preflight()
            typer.echo(printable(f"duel verify: voter {name} is ready"), err=True)
    except DuelError as exc:
        fail(exc, as_json=as_json)
    return voters


def _verify_each(
    paths: list[str], verifier: Verifier, *, refresh: bool, as_json: bool
) -> tuple[list[dict[str, object]], int, int]:
    """Verify every artifact under ``paths``, each shown as it is done: the results, and how many
    citations were fabricated and how many artifacts failed."""
    from ..verify import verify_paths
    from ..vocabulary import Verdict

    results: list[dict[str, object]] = []
    fabricated = errors = 0
    try:
        for path, done in verify_paths(paths, verifier, refresh=refresh):
            if isinstance(done, DuelError):
                errors += 1
                typer.echo(printable(f"duel: {done.code}: {done.message}"), err=True)
                results.append({"path": str(path), "error": done.to_dict()})
                continue
            fabricated += sum(entry.verdict == Verdict.FABRICATED for entry in done.sidecar.citations)
            results.append(done.to_dict())
            if not as_json:
                typer.echo(printable(done.to_text()))
    except KeyboardInterrupt:
        typer.echo("duel verify: interrupted (every sidecar written so far is whole)", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    return results, fabricated, errors


# -- duel apply --------------------------------------------------------------------------------------------

_Check = Annotated[
    bool, typer.Option("--check", help="Say whether the agreed revision would apply, and write nothing.")
]
_To = Annotated[
    str | None, typer.Option("--to", help="Write the revised document to this file, not over the document.")
]
_ApplyRoot = Annotated[
    str | None,
    typer.Option(
        "--root",
        help="The document may lie only inside this folder (default: the artifact's git work tree, "
        "else the folder above its folder).",
    ),
]


def apply_command(
    artifact: Annotated[str, typer.Argument(help="A closed duel's artifact.")],
    check: _Check = False,
    to: _To = None,
    root: _ApplyRoot = None,
    as_json: JsonOption = False,
) -> None:
    """Apply the revision a duel agreed on (ACCEPTED_CONSENSUS) to its document, recomputed from the turns.

    Refused, writing nothing, when the artifact does not pass duel validate or the duel agreed on nothing. A document that moved on since the duel gets the agreed change merged in, three ways (git merge-file, else merge3); where both changed the same lines it is written with <<<<<<< today / >>>>>>> agreed markers (--check says so first). One that holds the revision already is left as it is. --to writes the agreed revision of the recorded version, whatever the document became. The file is replaced at once and keeps its mode.

    Exit 0 when applied or already applied (with --check: when it would apply), 1 when refused (a duel that agreed on nothing included: NO_AGREED_REVISION) or written with conflicts, 2 on wrong flags.
    """
    from ..record import apply_agreed

    try:
        result = apply_agreed(artifact, to=to, check=check, root=root)
    except DuelError as exc:
        fail(exc, as_json=as_json, exit_code=1 if check else None)  # --check answers no with 1, whatever the reason
    if as_json:
        typer.echo(printable_json({"success": True, **result.to_dict()}))
    else:
        typer.echo(printable(result.to_text()))
    if result.conflicts:
        raise typer.Exit(1)  # written with conflict markers, as git merge leaves them: not done until resolved


# -- duel report -------------------------------------------------------------------------------------------

_Format = Annotated[
    str,
    typer.Option(
        "--format",
        help="md (a pull-request comment), github (one GitHub comment's body: the decision and the diff first, the"
        " rest folded, whole sections cut to fit 65,536 characters), html (one self-contained page) or json (the data"
        " behind them).",
    ),
]
_Output = Annotated[
    str | None,
    typer.Option("-o", "--output", help="Write the report to this file (atomically) instead of standard output."),
]
_Assess = Annotated[
    bool,
    typer.Option(
        "--assess",
        help="Add a model's assessment of each side (model-written; its turn references checked), "
        "cached in NAME.assess.json beside the artifact.",
    ),
]
_Assessor = Annotated[
    list[str] | None,
    typer.Option("--assessor", help="A model that assesses (up to 2). Default: Claude and/or GPT, as keys are set."),
]
_AssessorBaseUrl = Annotated[
    str | None,
    typer.Option("--base-url", help="An OpenAI-compatible server for --assessor (Ollama, vLLM, llama.cpp)."),
]
_RefreshAssessment = Annotated[
    bool,
    typer.Option("--refresh-assessment", help="Ask the assessors again, even when the cache holds their answer."),
]
_ReportAllowedSigners = Annotated[
    str | None,
    typer.Option(
        "--allowed-signers",
        help="An ssh-keygen allowed signers file: each seat is shown with the principal that signed its turns "
        "(without it, the key), and `duel validate` is run with it.",
    ),
]


def report_command(
    artifact: Annotated[str, typer.Argument(help="A duel artifact.")],
    format_: _Format = "md",
    output: _Output = None,
    assess: _Assess = False,
    assessor: _Assessor = None,
    base_url: _AssessorBaseUrl = None,
    refresh_assessment: _RefreshAssessment = False,
    allowed_signers: _ReportAllowedSigners = None,
) -> None:
    """Summarise a duel for review: the decision first, and what it must not hide.

    The outcome and why; what it must not hide (a timeout's seat and turn, a seat that stopped, a model the API answered as in place of the one asked for, turns accepted after repairs, the rulings on cited sources); the openings' vote against the outcome; the stances turn by turn, agreements, unresolved items, novel arguments, the audience's questions with their answers and its final thoughts, citations, participants, cost, and each turn's provenance (provider, model asked for and answered as, reasoning, tokens, retries, seconds).

    Computed from the artifact alone, plus its verification sidecar (NAME.verify.json), the usage recorded under the debate dir's .duel/ and a current cached assessment (NAME.assess.json) when they are there. Writes nothing but the report, and with --assess the assessment cache.

    Exit 0 when the report is written, 1 on an error (an artifact that cannot be read or is not a duel artifact, no model for --assess, an assessor that gave no answer), 2 on wrong flags.
    """
    from ..review import REPORT_FORMATS, read_report, render_report, report_folder

    if format_ not in REPORT_FORMATS:
        usage_error(f"--format must be one of {', '.join(REPORT_FORMATS)}, not {format_!r}")
    if not os.path.exists(artifact):
        usage_error(f"no such file: {artifact}")
    if not assess and (assessor or base_url or refresh_assessment):
        usage_error("--assessor, --base-url and --refresh-assessment need --assess")
    check_allowed_signers(allowed_signers)
    if assess:
        assess_report(artifact, assessor or [], base_url, refresh=refresh_assessment)
    to_file = None if output == "-" else output
    read_from = report_folder(to_file, format_)
    try:  # its links are relative to where it is read: the output file's folder; a comment has none
        text = render_report(read_report(artifact, read_from=read_from, allowed_signers=allowed_signers), format_)
    except DuelError as exc:
        fail(exc)
    if to_file is None:
        typer.echo(printable(text), nl=False)  # a hostile record's text must not reach a terminal raw
        return
    from ..files import write_atomic

    try:
        write_atomic(Path(to_file), text.encode("utf-8"), mode=0o644)
    except OSError as exc:
        fail(DuelError(ErrorCode.STORAGE_FAILED, f"cannot write {to_file}: {exc.strerror or exc}"))


def assess_report(artifact: str, assessors: list[str], base_url: str | None, *, refresh: bool) -> None:
    """Ask the assessors (or reuse their cached answers) before the report is read; fail if one gave none."""
    from ..review import assess_artifact, configured_assessors

    def say(line: str) -> None:
        typer.echo(printable(f"duel report: {line}"), err=True)

    try:
        run = assess_artifact(
            artifact, configured_assessors(os.environ, assessors, base_url), refresh=refresh, progress=say
        )
    except DuelError as exc:
        fail(exc)
    except KeyboardInterrupt:
        say("interrupted: the assessment cache is as it was")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    for name in run.reused:
        say(f"the assessment by {name} is reused from the cache (--refresh-assessment asks again)")
    for failure in run.failures[1:]:
        typer.echo(printable(f"duel: {failure.code}: {failure.message}"), err=True)
    if run.failures:
        fail(run.failures[0])
