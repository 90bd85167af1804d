"""Benchmark: ``duel bench``, what a duel adds over its openings' vote, measured on a corpus of known defects.

Owns the corpus (design documents with seeded defects and the predicates that say each is fixed), the runs over
it and their scores (docs/bench.md). May import every layer below it: :mod:`rp1_duel.review`,
:mod:`rp1_duel.participant`, :mod:`rp1_duel.coordination`, :mod:`rp1_duel.record`, :mod:`rp1_duel.turns` and the
top-level modules; never the CLI.

This module is its face (:func:`rp1_duel.lazy_exports`: naming it loads nothing behind it); the other packages
import from here only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import lazy_exports

_EXPORTS = {
    "DEFECT_KINDS": ".corpus",
    "DOCUMENT_KINDS": ".corpus",
    "PREDICATE_KINDS": ".corpus",
    "CorpusDocument": ".corpus",
    "Defect": ".corpus",
    "Predicate": ".corpus",
    "corpus_directory": ".corpus",
    "load_corpus": ".corpus",
    "section_text": ".corpus",
    "BenchScore": ".score",
    "score_bench": ".score",
    "SCORE_FORMATS": ".score_files",
    "read_score": ".score_files",
    "render_score": ".score_files",
}
__all__ = [
    "DEFECT_KINDS",
    "DOCUMENT_KINDS",
    "PREDICATE_KINDS",
    "SCORE_FORMATS",
    "BenchScore",
    "CorpusDocument",
    "Defect",
    "Predicate",
    "corpus_directory",
    "load_corpus",
    "read_score",
    "render_score",
    "score_bench",
    "section_text",
]

if TYPE_CHECKING:
    from .corpus import (
        DEFECT_KINDS,
        DOCUMENT_KINDS,
        PREDICATE_KINDS,
        CorpusDocument,
        Defect,
        Predicate,
        corpus_directory,
        load_corpus,
        section_text,
    )
    from .score import BenchScore, score_bench
    from .score_files import SCORE_FORMATS, read_score, render_score
else:
    __getattr__ = lazy_exports(__name__, _EXPORTS)
