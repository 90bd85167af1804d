"""``duel bench score --format md``: the score as Markdown tables (docs/protocol.md section 13, "Scoring").

Names and reasons come from records: every such text goes through the report's table cell writer
(:func:`rp1_duel.review.cell`), so a hostile one breaks no table and holds no raw HTML.
"""

from __future__ import annotations

from ..review import cell, plural
from .score import CONDITIONS, DUEL, OPENINGS, RIGHT_TO_WRONG, WRONG_TO_RIGHT
from .score_json import DocumentJson, RunJson, ScoreJson

__all__ = [
    "ARROWS",
    "DOCUMENT_COLUMNS",
    "RUN_COLUMNS",
    "condition_cost",
    "document_cells",
    "percent",
    "run_cells",
    "score_markdown",
    "totals_sentence",
    "usd",
]

ARROWS = {RIGHT_TO_WRONG: "right → wrong", WRONG_TO_RIGHT: "wrong → right"}


def percent(value: float | None) -> str:
    """A share as a whole percentage; `n/a` when not measured."""
    return "n/a" if value is None else f"{value:.0%}"


def usd(value: float | None) -> str:
    """A cost in dollars; `unknown` when a seat's cost is not known."""
    return "unknown" if value is None else f"${value:.4f}"


def score_markdown(data: ScoreJson) -> str:
    """The whole score: totals, then per document, the flip ledger and the wrong consensus."""
    total = data["total"]
    lines = [
        "# duel bench score",
        "",
        (
            f"{total['runs']} runs scored from {cell(data['out'])} against {cell(data['corpus'])}"
            + (f"; {len(total['pending'])} not finished" if total["pending"] else "")
            + "."
        ),
        "",
        "## Recall by condition",
        "",
        "| condition | defect recall | cost |",
        "|---|---:|---:|",
    ]
    lines += [
        f"| {condition} | {percent(total['recall'][condition])} | {condition_cost(data, condition)} |"
        for condition in CONDITIONS
    ]
    lines += [
        "",
        totals_sentence(data),
        "",
        "## Per document",
        "",
        "| " + " | ".join(DOCUMENT_COLUMNS) + " |",
        "|---|---|" + "---:|" * (len(DOCUMENT_COLUMNS) - 2),
    ]
    lines += ["| " + " | ".join(map(cell, document_cells(d))) + " |" for d in data["documents"]]
    lines += ["", "## Per run", "", "| " + " | ".join(RUN_COLUMNS) + " |", "|---|---|---|" + "---:|" * 4 + "---|"]
    lines += [
        "| " + " | ".join(map(cell, run_cells(d["document"], run))) + " |"
        for d in data["documents"]
        for run in d["runs"]
    ]
    lines += ["", "## Flip ledger", ""]
    ledger = [_flip_rows(document["document"], run) for document in data["documents"] for run in document["runs"]]
    rows = [row for rows in ledger for row in rows]
    if rows:
        lines += ["| document | run | seat | turn | defect | moved | reason cited |", "|---|---:|---|---:|---|---|---|"]
        lines += rows
    else:
        lines.append("No seat's position on a defect moved.")
    lines += ["", "## Wrong consensus", ""]
    wrong = [
        f"- {cell(document['document'])} duel {run['run']}: agreed a revision where "
        + ", ".join(cell(d) for d in run["failing"])
        + " is not fixed"
        for document in data["documents"]
        for run in document["runs"]
        if run["wrong_consensus"]
    ]
    lines += wrong or ["No consensus kept or added a labelled defect."]
    return "\n".join(lines) + "\n"


def totals_sentence(data: ScoreJson) -> str:
    """Consensus, wrong consensus, silent agreement, flips, rounds and tokens over every run, in one sentence."""
    total = data["total"]
    flips = total["flips"]
    duels = sum(run["condition"] == DUEL for document in data["documents"] for run in document["runs"])
    return (
        f"Consensus in {plural(total['consensus'], 'duel')}, {total['wrong_consensus']} of them wrong; "
        f"{plural(total['silent_agreements'], 'silent agreement')}; flips {flips[RIGHT_TO_WRONG]} right → wrong, "
        f"{flips[WRONG_TO_RIGHT]} wrong → right; {_rounds(total['rounds_mean'])} rounds a duel on average; "
        f"{total['provisional']} of {plural(duels, 'duel')} provisional (every seat of one model family); "
        f"{total['tokens_in']} tokens in, {total['tokens_out']} out."
    )


def condition_cost(data: ScoreJson, condition: str) -> str:
    """What a condition's runs cost together; the openings are part of their duels and cost nothing apart."""
    if condition == OPENINGS:
        return "in the duel's"
    return usd(data["total"]["usd"].get(condition))


DOCUMENT_COLUMNS = (
    "document",
    "kind",
    "defects",
    "duel",
    "openings",
    "single",
    "wrong consensus",
    "silent",
    "flips",
    "rounds",
    "cost",
)


def document_cells(document: DocumentJson) -> tuple[str, ...]:
    """A document's row, as plain (unescaped) text in :data:`DOCUMENT_COLUMNS` order; its duels' counts summed."""
    duels = [run for run in document["runs"] if run["condition"] == DUEL]
    costs = [run["usd"] for run in document["runs"]]
    cost = None if None in costs else sum(c for c in costs if c is not None)
    rounds = sum(run["rounds"] for run in duels) / len(duels) if duels else None
    return (
        document["document"],
        document["kind"],
        str(len(document["defects"])),
        *(percent(document["recall"][condition]) for condition in CONDITIONS),
        str(sum(run["wrong_consensus"] for run in duels)),
        str(sum(len(run["silent_agreements"]) for run in duels)),
        str(sum(len(run["flips"]) for run in duels)),
        _rounds(rounds),
        usd(cost),
    )


RUN_COLUMNS = ("document", "run", "outcome", "recall", "openings", "rounds", "cost", "provisional")


def run_cells(document: str, run: RunJson) -> tuple[str, ...]:
    """A run's row, as plain (unescaped) text in :data:`RUN_COLUMNS` order: a duel whose seats were all of one
    model family is marked ``⚠ FAMILY``, one that was not ``no``; a single seat has no one to agree with (``n/a``)."""
    label = run["provisional"]
    if run["condition"] != DUEL:
        mark = "n/a"
    else:
        mark = "no" if label is None else f"⚠ {label['family']} ({', '.join(label['models'])})"
    return (
        document,
        f"{run['condition']}-{run['run']}",
        run["outcome"] or run["stopped"] or "—",
        percent(run["recall"]),
        percent(run["openings_recall"]),
        str(run["rounds"]),
        usd(run["usd"]),
        mark,
    )


def _flip_rows(document: str, run: RunJson) -> list[str]:
    return [
        f"| {cell(document)} | {run['run']} | {cell(flip['name'])} (seat {flip['seat']}) | {flip['turn']} "
        f"| {cell(flip['defect'])} | {ARROWS[flip['direction']]} | {cell(flip['reason']) or '(nothing cited)'} |"
        for flip in run["flips"]
    ]


def _rounds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"
