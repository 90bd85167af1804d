"""A fetched page's bytes as the text its excerpts are looked for in.

- HTML (``text/html``, ``application/xhtml+xml``): inscriptis, which renders every visible
  text with its block structure (paragraphs, lists, table cells), so a quote from a sidebar,
  a caption or a table is found. Main-content extractors (trafilatura, readability) drop
  such text, and an honest quote from it would read as fabricated.
- PDF: pypdf's text layer, page by page (a scan without one has no text to quote).
- ``text/*``: decoded by its charset.

The libraries are imported on first use: ``duel tools`` and ``duel validate`` never pay for them.
"""

from __future__ import annotations

import codecs
import io
import logging
import re
from typing import Final

HTML: Final = "html"
PDF: Final = "pdf"
TEXT: Final = "text"
_HTML_TYPES = ("text/html", "application/xhtml+xml")
MAX_PDF_PAGES: Final = 500  # a document longer than this is read in its first pages only
_META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?([A-Za-z0-9._:-]{1,40})""", re.IGNORECASE)


class ExtractionError(Exception):
    """The bytes do not give a text: a broken PDF, say. The message fits in a line."""


def page_kind(content_type: str | None, body: bytes) -> str | None:
    """How a page is read (HTML, PDF or TEXT), or None for a type this tool does not read."""
    if content_type is None:  # no type said: the bytes tell
        return PDF if body.startswith(b"%PDF-") else HTML
    if content_type in _HTML_TYPES:
        return HTML
    if content_type == "application/pdf":
        return PDF
    if content_type.startswith("text/"):
        return TEXT
    return None


def extract_text(body: bytes, kind: str, *, charset: str | None = None) -> str:
    """The page's text. Raises :class:`ExtractionError`."""
    if kind == PDF:
        return _pdf_text(body)
    text = body.decode(_codec(charset) or _sniffed_codec(body, kind) or "utf-8", errors="replace")
    if kind == HTML:
        from inscriptis import get_text

        try:
            return str(get_text(text))
        except Exception as exc:  # noqa: BLE001  a third-party parser must not end the run
            raise ExtractionError(f"the HTML could not be read: {exc}") from None
    return text


def _codec(charset: str | None) -> str | None:
    """The text encoding ``charset`` names, or None: Python also registers bytes-to-bytes codecs (``hex``,
    ``zlib_codec``) under names a page may give, and decoding with one raises."""
    if not charset:
        return None
    try:
        info = codecs.lookup(charset)
    except LookupError:
        return None
    # The flag bytes.decode itself consults (CPython's codecs registry) to refuse such codecs.
    return info.name if getattr(info, "_is_text_encoding", True) else None


def _sniffed_codec(body: bytes, kind: str) -> str | None:
    if body.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if kind == HTML:
        declared = _META_CHARSET.search(body[:4096])
        if declared:
            return _codec(declared.group(1).decode("ascii"))
    return None


def _pdf_text(body: bytes) -> str:
    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings about sloppy PDFs are not the reader's
    try:
        reader = PdfReader(io.BytesIO(body))
        if reader.is_encrypted:
            reader.decrypt("")  # a PDF that only restricts printing opens with the empty password
        return "\n".join(page.extract_text() or "" for page in reader.pages[:MAX_PDF_PAGES])
    except Exception as exc:  # noqa: BLE001  pypdf raises many kinds on a broken file; none may end the run
        raise ExtractionError(f"the PDF could not be read: {exc or type(exc).__name__}") from None
