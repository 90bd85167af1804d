"""How texts are compared: "does this excerpt occur there?", word for word.

One normalisation for every comparison (headings, quoted excerpts, novelty): Unicode
NFC, case folding, typographic quotes and dashes folded to ASCII, runs of whitespace
collapsed; and, for excerpts and headings, inline emphasis and code markers aside.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["SearchableText", "normalize_text", "without_markup"]

# Typographic variants that agents (and editors) substitute freely for ASCII ones.
_TYPOGRAPHIC = {
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
    **dict.fromkeys("\u2013\u2014\u2012\u2015\u2212", "-"),
    "\u2026": "...",
}
# A regex finds them: str.translate walks a 50 KB text one dict lookup per character.
_TYPOGRAPHIC_CHARACTER = re.compile("[" + "".join(_TYPOGRAPHIC) + "]")
# Inline Markdown markers that change no words: `**expire**` still says "expire".
_INLINE_MARKUP = ("*", "_", "`")


def normalize_text(s: str) -> str:
    """Fold Unicode form, case, typographic quotes and dashes, and runs of whitespace."""
    if not s.isascii():
        # NFC: a source saved in NFD (macOS) and a model quoting in NFC say the same words.
        s = unicodedata.normalize("NFC", s)
        s = _TYPOGRAPHIC_CHARACTER.sub(lambda found: _TYPOGRAPHIC[found.group()], s)
    return " ".join(s.casefold().split())


def without_markup(normalized: str) -> str:
    """A normalized text without inline emphasis and code markers, whitespace collapsed again."""
    for marker in _INLINE_MARKUP:
        normalized = normalized.replace(marker, "")
    return " ".join(normalized.split())


class SearchableText:
    """A text that answers "is this excerpt in it?" word for word, built once, asked often.

    Whitespace, case, typographic quotes and dashes aside; inline emphasis and code
    markers (`*`, `_`, `` ` ``) aside too, since quoting `**must**` as "must" changes no word.
    """

    __slots__ = ("_normalized", "_unmarked")

    def __init__(self, text: str):
        self._normalized = normalize_text(text)
        self._unmarked = without_markup(self._normalized)

    def contains(self, excerpt: str) -> bool:
        """Whether ``excerpt`` occurs in the text, word for word as this class compares."""
        needle = normalize_text(excerpt)
        if not needle:
            return False
        return needle in self._normalized or without_markup(needle) in self._unmarked
