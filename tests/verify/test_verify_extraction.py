"""A fetched page's text: every visible text of HTML, a PDF's text layer, plain text by its charset."""

from __future__ import annotations

import pytest

from rp1_duel.turns import SearchableText
from rp1_duel.verify._extraction import HTML, PDF, TEXT, ExtractionError, extract_text, page_kind

from fake_web import PAGES, PDF_QUOTE, SIDEBAR_QUOTE, STATED


@pytest.mark.parametrize(
    ("content_type", "body", "kind"),
    [
        ("text/html", b"<p>x</p>", HTML),
        ("application/xhtml+xml", b"<p>x</p>", HTML),
        ("application/pdf", b"%PDF-1.4", PDF),
        ("text/plain", b"x", TEXT),
        ("text/markdown", b"# x", TEXT),
        ("image/png", b"\x89PNG", None),
        ("application/octet-stream", b"\x00", None),
        (None, b"%PDF-1.7 ...", PDF),
        (None, b"<html>", HTML),
    ],
)
def test_the_content_type_says_how_a_page_is_read(content_type, body, kind):
    assert page_kind(content_type, body) == kind


def test_html_keeps_every_visible_text_sidebars_and_tables_included():
    text = extract_text(PAGES["/sidebar"][2], HTML)
    assert SearchableText(text).contains(SIDEBAR_QUOTE)
    assert "The main text is about fencing." in text and "Home | About" in text


def test_html_drops_scripts_styles_and_markup():
    text = extract_text(PAGES["/states"][2], HTML)
    assert SearchableText(text).contains(STATED)
    assert "hidden" not in text and "margin" not in text and "<p>" not in text


def test_an_excerpt_across_inline_markup_and_lines_is_found():
    page = b"<p>Leases are <b>renewed</b>\n   every <a href='/x'>five</a> minutes.</p>"
    assert SearchableText(extract_text(page, HTML)).contains("Leases are renewed every five minutes")


@pytest.mark.parametrize(
    ("body", "charset"),
    [
        ("<meta charset='windows-1252'><p>caf\u00e9 cr\u00e8me</p>".encode("cp1252"), None),
        ("<p>caf\u00e9 cr\u00e8me</p>".encode("latin-1"), "iso-8859-1"),
        ("<p>caf\u00e9 cr\u00e8me</p>".encode(), None),
    ],
)
def test_html_is_decoded_by_its_declared_charset(body, charset):
    assert "caf\u00e9 cr\u00e8me" in extract_text(body, HTML, charset=charset)


def test_plain_text_is_decoded_by_its_charset():
    assert extract_text("na\u00efve".encode("utf-16"), TEXT, charset="utf-16") == "na\u00efve"
    assert extract_text(b"bad \xff byte", TEXT, charset="no-such-charset") == "bad \ufffd byte"


def test_a_pdf_gives_its_text_layer():
    assert SearchableText(extract_text(PAGES["/study.pdf"][2], PDF)).contains(PDF_QUOTE)


def test_a_broken_pdf_is_an_extraction_error():
    with pytest.raises(ExtractionError, match="PDF"):
        extract_text(PAGES["/broken.pdf"][2], PDF)


@pytest.mark.parametrize("charset", ["hex", "zlib_codec", "base64", "rot13", "no-such-charset"])
def test_a_charset_that_is_no_text_encoding_is_ignored_never_a_crash(charset):
    """Python registers bytes-to-bytes codecs under names a page may give: only text encodings are honoured."""
    text = extract_text(PAGES["/hex-charset"][2], HTML, charset=charset)
    assert STATED in " ".join(text.split())
