"""``duel report --format github``: the body of one pull-request comment on GitHub.

The report's header, the change agreed (or the alternatives) and the decision come first, open; every other
section follows folded under ``<details>``, its title the summary. It is Markdown written by
:mod:`.markdown`, which stays the one home of Markdown escaping (recorded text, summaries, fences): this writer
only lays sections out and fits them in one comment. Past GitHub's limit, whole sections give way, never part
of one (so never part of a diff or a code fence): the folded ones from the last up, then the footer, then the
open ones from the last up; a line names each section cut and the artifact, by its path from the repository's
root (docs/protocol.md section 11).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .blocks import MARKDOWN, Fold, Inline, Only, Per, Section
from .data import Report
from .markdown import COMMENT_LIMIT, code, inline, section, summary
from .sections import decision, document_change, header, sections_of

__all__ = ["render_github"]

_NAME_CHARS = 100  # a cut section's name in the line that names it, at most (a model-written title is recorded text)
_ENTITY_CUT = re.compile(r"&[a-z]*$")  # an HTML entity the cut above split


@dataclass(kw_only=True, frozen=True)
class _Shown:
    """A section as the comment shows it, and its name in the line that says it was cut."""

    text: str
    name: str
    folded: bool
    footer: bool


def render_github(report: Report, artifact: str, *, limit: int = COMMENT_LIMIT) -> str:
    """The report as one GitHub comment, at most ``limit`` characters (65,536: less when a comment holds more than
    the report, as ``duel ci github``'s); ``artifact`` is the record's path from the root of its repository, which
    the line naming the sections cut gives."""
    opened = (header(report), document_change(report), decision(report))
    parts = [part for run in sections_of(report) for part in run if part is not None]
    every = [one for one in (_shown(part, folded=part not in opened) for part in parts) if one.text]
    shown: list[_Shown] = list(every)
    cut: list[_Shown] = []
    for one in _giving_way(every):
        if len(_comment(shown, cut, artifact)) <= limit:
            break
        shown.remove(one)
        cut = sorted([*cut, one], key=every.index)  # named in the report's order
    return _comment(shown, cut, artifact)


def _shown(part: Section, *, folded: bool) -> _Shown:
    """A section open as Markdown writes it, or folded: under its title, or, when it is one fold already, as it is."""
    name = _ENTITY_CUT.sub("", summary(_title(part))[:_NAME_CHARS])
    footer = part.kind == "footer"
    if not folded or footer:
        return _Shown(text=section(part), name=name, folded=False, footer=footer)
    shown = [one for one in part.blocks if not (isinstance(one, Only) and one.format != MARKDOWN)]
    if not summary(part.title) and len(shown) == 1 and isinstance(shown[0], Fold):
        return _Shown(text=section(part), name=name, folded=True, footer=False)
    body = section(replace(part, title=()))
    text = f"<details><summary>{summary(_title(part))}</summary>\n\n{body}\n\n</details>" if body else ""
    return _Shown(text=text, name=name, folded=True, footer=False)


def _title(part: Section) -> Inline:
    """The section's title in Markdown; when a comment gives it none, the page's."""
    if part.kind == "footer":
        return ("The record's hashes",)
    markdown = tuple(span for one in part.title for span in (one.markdown if isinstance(one, Per) else (one,)))
    if summary(markdown):
        return markdown
    return tuple(span for one in part.title for span in (one.html if isinstance(one, Per) else (one,)))


def _giving_way(shown: list[_Shown]) -> list[_Shown]:
    """The order sections give way in: the folded ones from the last up, the footer, then the open ones from the
    last up."""
    backwards = shown[::-1]
    return (
        [one for one in backwards if one.folded]
        + [one for one in backwards if one.footer]
        + [one for one in backwards if not one.folded and not one.footer]
    )


def _comment(shown: list[_Shown], cut: list[_Shown], artifact: str) -> str:
    """The sections shown, the line naming those cut (before the footer), the footer."""
    body = [one.text for one in shown if not one.footer]
    if cut:
        names = "; ".join(inline(one.name) for one in cut)
        body.append(
            f"_Cut to fit one GitHub comment ({COMMENT_LIMIT:,} characters), each section whole: {names}. "
            f"The record is {code(artifact)}; `duel report --format html` shows every section._"
        )
    body += [one.text for one in shown if one.footer]
    return "\n\n".join(body) + "\n"
