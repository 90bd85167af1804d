"""Turns: the Markdown scanner, the source document, the turn grammar and the turn rules.

Pure functions of text (the source is read from a path by :func:`source.read_source`,
the one decoding policy). Owns docs/protocol.md section 7. May import only
:mod:`rp1_duel.vocabulary` and :mod:`rp1_duel.errors`; everything else imports it.

This module is its face: it names what the other packages use, each loaded on first use
(:func:`rp1_duel.lazy_exports`), and they import it from here; the modules nothing outside uses
are private (``_edits``, ``_patch``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import lazy_exports

_EXPORTS = {
    "Challenge": ".challenges",
    "challenged": ".challenges",
    "read_correction": ".challenges",
    "Figure": ".figures",
    "FigureIndex": ".figures",
    "stated_figures": ".figures",
    "ParsedTurn": ".grammar",
    "SupportItem": ".grammar",
    "lines_before_turn": ".grammar",
    "normalize_turn_text": ".grammar",
    "parse_turn": ".grammar",
    "section_label": ".grammar",
    "split_tag": ".grammar",
    "turn_heading": ".grammar",
    "CHAIR_FORMATS": ".guide",
    "OUTCOMES": ".guide",
    "chair_guide": ".guide",
    "turn_guide": ".guide",
    "FENCE": ".markdown",
    "atx_heading": ".markdown",
    "fenced_lines": ".markdown",
    "front_matter_end": ".markdown",
    "normalize_newlines": ".markdown",
    "split_lines": ".markdown",
    "SearchableText": ".matching",
    "NoveltyIndex": ".novelty",
    "find_raw_html": ".raw_html",
    "heading_candidates": ".references",
    "parse_reference": ".references",
    "trim_url": ".references",
    "turns_in_text": ".references",
    "urls_in_line": ".references",
    "Revision": ".revision",
    "AudienceContext": ".rules",
    "ChairContext": ".rules",
    "EditsContext": ".rules",
    "RulingsContext": ".rules",
    "TurnContext": ".rules",
    "TurnReport": ".rules",
    "TurnViolation": ".rules",
    "phase_note": ".rules",
    "questions_note": ".rules",
    "revision_note": ".rules",
    "rulings_note": ".rules",
    "sealed_opening_note": ".rules",
    "turn_invalid": ".rules",
    "validate_turn": ".rules",
    "SourceDocument": ".source",
    "SourceUnreadable": ".source",
    "github_anchor": ".source",
    "read_source": ".source",
}
__all__ = [
    "CHAIR_FORMATS",
    "FENCE",
    "OUTCOMES",
    "AudienceContext",
    "ChairContext",
    "Challenge",
    "EditsContext",
    "Figure",
    "FigureIndex",
    "NoveltyIndex",
    "ParsedTurn",
    "Revision",
    "RulingsContext",
    "SearchableText",
    "SourceDocument",
    "SourceUnreadable",
    "SupportItem",
    "TurnContext",
    "TurnReport",
    "TurnViolation",
    "atx_heading",
    "chair_guide",
    "challenged",
    "fenced_lines",
    "find_raw_html",
    "front_matter_end",
    "github_anchor",
    "heading_candidates",
    "lines_before_turn",
    "normalize_newlines",
    "normalize_turn_text",
    "parse_reference",
    "parse_turn",
    "phase_note",
    "questions_note",
    "read_correction",
    "read_source",
    "revision_note",
    "rulings_note",
    "sealed_opening_note",
    "section_label",
    "split_lines",
    "split_tag",
    "stated_figures",
    "trim_url",
    "turn_guide",
    "turn_heading",
    "turn_invalid",
    "turns_in_text",
    "urls_in_line",
    "validate_turn",
]

if TYPE_CHECKING:
    from .challenges import Challenge, challenged, read_correction
    from .figures import Figure, FigureIndex, stated_figures
    from .grammar import (
        ParsedTurn,
        SupportItem,
        lines_before_turn,
        normalize_turn_text,
        parse_turn,
        section_label,
        split_tag,
        turn_heading,
    )
    from .guide import CHAIR_FORMATS, OUTCOMES, chair_guide, turn_guide
    from .markdown import FENCE, atx_heading, fenced_lines, front_matter_end, normalize_newlines, split_lines
    from .matching import SearchableText
    from .novelty import NoveltyIndex
    from .raw_html import find_raw_html
    from .references import heading_candidates, parse_reference, trim_url, turns_in_text, urls_in_line
    from .revision import Revision
    from .rules import (
        AudienceContext,
        ChairContext,
        EditsContext,
        RulingsContext,
        TurnContext,
        TurnReport,
        TurnViolation,
        phase_note,
        questions_note,
        revision_note,
        rulings_note,
        sealed_opening_note,
        turn_invalid,
        validate_turn,
    )
    from .source import SourceDocument, SourceUnreadable, github_anchor, read_source
else:
    __getattr__ = lazy_exports(__name__, _EXPORTS)
