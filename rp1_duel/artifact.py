"""The debate record: rendering it from the state, and reading its turns back.

The artifact is Markdown with YAML front matter. Each turn sits between markers::

    <!-- duel:turn n=N sha256=HEX prev=HEX -->
    ---
    ## Turn N — …
    <!-- /duel:turn -->

``sha256`` hashes exactly the lines between the two markers (UTF-8), so anyone can
recheck the chain with a text editor and ``sha256sum``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .clock import iso
from .state import DuelState

GENESIS = "0" * 64
TEMPLATE = Path(__file__).parent / "templates" / "debate-artifact.md"
OPEN_CONCLUSION = "_The duel is still open._"

_OPEN = re.compile(r"^<!-- duel:turn n=(\d+) sha256=([0-9a-f]{64}) prev=([0-9a-f]{64}) -->$")
_CLOSE = "<!-- /duel:turn -->"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_template_cache: str | None = None


@dataclass(frozen=True)
class TurnBlock:
    n: int
    sha256: str  # as recorded in the marker
    prev: str
    text: str  # the lines between the markers, "---" line included
    line: int  # 1-based line of the opening marker

    @property
    def actual_sha256(self) -> str:
        return sha256_text(self.text)

    @property
    def body(self) -> str:
        """The turn as the participant wrote it, without the service's ``---`` line."""
        return self.text[4:] if self.text.startswith("---\n") else self.text


@dataclass(frozen=True)
class ParsedArtifact:
    front_matter: str | None  # raw YAML between the fences
    blocks: list[TurnBlock]
    problems: list[str]  # structural problems: stray or unclosed markers
    conclusion: str | None  # the text under "## Terminal Conclusion"


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def turn_text(body: str) -> str:
    """What the service writes between the markers for a normalised turn body."""
    return "---\n" + body


def turn_block(n: int, body: str, prev: str) -> TurnBlock:
    text = turn_text(body)
    return TurnBlock(n, sha256_text(text), prev, text, 0)


def display_source_path(source_path: str, artifact_path: Path) -> str:
    """Relative to the artifact when both share a tree, so clones read the same."""
    folder = os.path.dirname(os.path.realpath(artifact_path))
    if os.path.commonpath([source_path, folder]) == os.path.sep:
        return source_path
    return os.path.relpath(source_path, folder)


def render(
    state: DuelState,
    blocks: list[TurnBlock] | str,
    artifact_path: Path,
    summary: str | None = None,
) -> str:
    """The whole artifact. ``blocks`` may be raw text kept verbatim (a tampered record)."""
    source = display_source_path(state.source_path, artifact_path)
    participants = [p.public() for p in sorted(state.participants, key=lambda p: p.seat)]
    front = {
        "duel_id": state.id,
        "topic": state.topic,
        "topic_slug": state.topic_slug,
        "source_path": source,
        "source_sha256": state.source_sha256,
        "max_turns": state.max_turns,
        "status": state.status,
        "outcome": state.outcome,
        "created_at": iso(state.created_at),
        "closed_at": iso(state.closed_at),
        "participants": participants,
    }
    # JSON scalars and flow collections are valid YAML, and need no YAML library to write.
    front_matter = "".join(f"{key}: {json.dumps(value, ensure_ascii=False)}\n" for key, value in front.items())
    turns = blocks if isinstance(blocks, str) else "\n".join(_block_text(b) for b in blocks)
    values = {
        "topic": state.topic,
        "duel_id": state.id,
        "source_path": source,
        "source_sha256": state.source_sha256,
        "status": state.status,
        "outcome": state.outcome or "—",
        "created_at": iso(state.created_at),
        "closed_at": iso(state.closed_at) or "—",
        "max_turns": str(state.max_turns),
        "lease_seconds": str(state.lease_seconds),
        "participants_table": _participants_table(state),
        "turns": turns.strip("\n") or "_No turns yet._",
        "conclusion": _conclusion(state, summary),
    }
    body = _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), _template())
    return f"---\n{front_matter}---\n\n{body.rstrip()}\n"


def _template() -> str:
    global _template_cache
    if _template_cache is None:
        _template_cache = TEMPLATE.read_text(encoding="utf-8")
    return _template_cache


def _block_text(block: TurnBlock) -> str:
    return f"<!-- duel:turn n={block.n} sha256={block.sha256} prev={block.prev} -->\n{block.text}{_CLOSE}\n"


def _cell(value: str) -> str:
    return value.replace("|", "\\|")


def _participants_table(state: DuelState) -> str:
    if not state.participants:
        return "_Nobody has joined yet._"
    rows = ["| Seat | Participant | Harness | Model | ID | Joined |", "|---|---|---|---|---|---|"]
    for p in sorted(state.participants, key=lambda p: p.seat):
        rows.append(
            f"| {p.seat} | {_cell(p.display_name)} | {_cell(p.harness)} | {_cell(p.model_id)} "
            f"| `{p.id}` | {iso(p.joined_at)} |"
        )
    return "\n".join(rows)


def _conclusion(state: DuelState, summary: str | None) -> str:
    if state.outcome is None:
        return OPEN_CONCLUSION
    rows = [
        "| Field | Value |",
        "|---|---|",
        f"| Outcome | {state.outcome} |",
        f"| Closed at | {iso(state.closed_at)} |",
        f"| Candidate convergence | {'yes' if state.candidate_convergence else 'no'} |",
        f"| Reason | {_cell(state.reason or '—')} |",
    ]
    text = "\n".join(rows)
    if summary and summary.strip():
        text += "\n\n### Summary\n\n" + summary.strip()
    return text


def parse(text: str) -> ParsedArtifact:
    """Split an artifact into front matter, turn blocks and conclusion; never raises."""
    lines = text.split("\n")
    front_matter = None
    start = 0
    if lines and lines[0] == "---":
        for i in range(1, len(lines)):
            if lines[i] == "---":
                front_matter = "\n".join(lines[1:i]) + "\n"
                start = i + 1
                break
    blocks: list[TurnBlock] = []
    problems: list[str] = []
    conclusion = None
    opened: tuple[int, re.Match[str]] | None = None
    body: list[str] = []
    for i in range(start, len(lines)):
        line = lines[i]
        match = _OPEN.match(line)
        if opened is None:
            if match:
                opened, body = (i, match), []
            elif line == _CLOSE or line.startswith("<!-- duel:"):
                problems.append(f"line {i + 1}: stray turn marker")
            elif line == "## Terminal Conclusion":
                conclusion = "\n".join(lines[i + 1:]).strip()
                break
            continue
        if line == _CLOSE:
            first, m = opened
            blocks.append(TurnBlock(int(m.group(1)), m.group(2), m.group(3), "".join(s + "\n" for s in body), first + 1))
            opened = None
        elif match or line.startswith("<!-- duel:"):
            problems.append(f"line {i + 1}: turn marker inside turn {opened[1].group(1)}")
        else:
            body.append(line)
    if opened is not None:
        problems.append(f"line {opened[0] + 1}: turn {opened[1].group(1)} is never closed")
    return ParsedArtifact(front_matter, blocks, problems, conclusion)


def turns_region(text: str) -> str:
    """The raw text from the first turn marker to the last closing one (tampered records)."""
    first = text.find("<!-- duel:turn ")
    last = text.rfind(_CLOSE)
    if first < 0 or last < first:
        return ""
    return text[first:last + len(_CLOSE)] + "\n"
