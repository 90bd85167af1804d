"""What a report section says, in no format: small frozen blocks of inline spans, which the writers
(:mod:`.markdown`, :mod:`.html`) show, each in its own markup and with its own escaping.

Text the program wrote is a plain ``str``. Recorded text (a turn's, a name, a path, anything a record
or a file beside it holds) is :class:`Untrusted`: a section never escapes it, every writer always does,
so escaping lives in one place per format (docs/protocol.md section 11).

Where the formats must differ (a list in a comment, boxes on a page; a heading only the page has),
a section says so with :class:`Per` (spans) or :class:`Only` (a block), never with markup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .data import TimelineEntry

__all__ = [
    "HTML",
    "MARKDOWN",
    "Alert",
    "Aside",
    "Badge",
    "Block",
    "Box",
    "Card",
    "Cards",
    "Cell",
    "Chart",
    "Code",
    "Diff",
    "Emphasis",
    "Entry",
    "Fold",
    "Format",
    "Group",
    "Inline",
    "Items",
    "Kind",
    "Only",
    "Paragraph",
    "PathLink",
    "Per",
    "Position",
    "Prose",
    "SeatName",
    "Section",
    "Span",
    "Strong",
    "Style",
    "Subheading",
    "Table",
    "TurnLink",
    "Untrusted",
]

Format = Literal["md", "html"]
MARKDOWN: Format = "md"
HTML: Format = "html"


@dataclass(frozen=True)
class Untrusted:
    """Recorded text: each writer makes it text (never markup, a mention or a reference); with ``links``,
    the page makes its http(s) URLs links (followed only when clicked)."""

    text: str
    links: bool = False


@dataclass(frozen=True)
class Code:
    """Text shown as code (recorded or not): escaped as code in every format."""

    text: str


@dataclass(frozen=True)
class Strong:
    """Spans in bold."""

    content: Inline


@dataclass(frozen=True)
class Emphasis:
    """Spans in italics."""

    content: Inline


@dataclass(frozen=True)
class TurnLink:
    """Turn ``number``, linked to its heading in the artifact (``href``: a URL-encoded relative path)."""

    number: int
    href: str


@dataclass(frozen=True)
class SeatName:
    """A participant's recorded name: in the seat's colour on the page."""

    seat: int
    name: str


@dataclass(frozen=True)
class PathLink:
    """Recorded text linking to ``href``, a URL-encoded relative path built from paths, never from turn text."""

    text: str
    href: str
    css: str = ""  # on the page, the link's class


@dataclass(frozen=True)
class Aside:
    """Spans set apart from the text they follow: muted on the page (or in ``css``'s style), as they are in
    Markdown."""

    content: Inline
    css: str = "muted"
    title: str = ""  # recorded text the page shows on hover


@dataclass(frozen=True)
class Badge:
    """Spans on a badge in ``tone``'s colour on the page (an outcome's name, ``caution`` or ``warning``)."""

    content: Inline
    tone: str


@dataclass(frozen=True)
class Per:
    """Spans worded differently in each format."""

    markdown: Inline
    html: Inline


Span = str | Untrusted | Code | Strong | Emphasis | TurnLink | SeatName | PathLink | Aside | Badge | Per
Inline = tuple[Span, ...]


# How a paragraph is set apart from the text around it: a note (muted on the page), or something still
# to come (amber on the page), both in italics in Markdown; the record's facts (muted on the page); small print
# (``<sub>`` in Markdown).
Style = Literal["", "note", "pending", "facts", "small"]


@dataclass(frozen=True)
class Paragraph:
    """A paragraph, set apart in its ``style``."""

    text: Inline
    style: Style = ""


@dataclass(frozen=True)
class Subheading:
    """A heading inside a section: a bold lead in Markdown, a third-level heading on the page."""

    text: Inline


@dataclass(frozen=True)
class Items:
    """A bulleted list, one line per item; an item that is a :class:`Cell` carries a class on the page."""

    items: tuple[Inline | Cell | Entry, ...]
    css: str = ""


@dataclass(kw_only=True, frozen=True)
class Entry:
    """A list item with a list of its own under it on the page (``sub``, each in ``sub_css``'s class), which
    Markdown leaves out (the item's text says it there); ``anchor`` is its id on the page."""

    text: Inline
    sub: tuple[Inline, ...] = ()
    sub_css: str = ""
    anchor: str = ""


@dataclass(frozen=True)
class Cell:
    """A table cell the page marks with a class of its own (``tag-blocking``, ``open``) when ``marked``."""

    text: Inline
    css: str
    marked: bool | None


@dataclass(kw_only=True, frozen=True)
class Table:
    """A table, its header row first; on the page, each column's cells carry ``columns``' class (``n`` for a
    number, ``text`` for prose), and the table scrolls sideways in a box of its own."""

    head: tuple[str, ...]
    rows: tuple[tuple[Inline | Cell, ...], ...]
    columns: tuple[str, ...]
    total: tuple[Inline, Inline] | None = None  # on the page, a last row: its label, then its last column
    grouped: bool = True  # on the page, the header row and the body in ``<thead>`` and ``<tbody>``
    box: str = "scroll"  # on the page, the class of its box: ``scroll``, or ``fit`` for one that fits its column


@dataclass(frozen=True)
class Position:
    """Recorded prose shown whole, its line breaks kept (``empty`` when it has none): quoted in Markdown,
    in a box on the page; after its ``lead`` (muted on the page), when it has one."""

    text: str
    empty: str
    lead: Inline = ()


@dataclass(frozen=True)
class Prose:
    """Recorded prose in paragraphs: quoted in Markdown (``empty`` in italics when it has none), a paragraph
    each on the page."""

    text: str
    empty: str = ""


@dataclass(frozen=True)
class Box:
    """Blocks in a box of ``css``'s class on the page (``pair`` sets its two boxes side by side); in Markdown,
    the blocks a blank line apart."""

    blocks: tuple[Block, ...]
    css: str = ""


@dataclass(kw_only=True, frozen=True)
class Chart:
    """The stance of each turn by seat (``names``, seat 1 first), over ``turn_count`` turns: a Mermaid chart over
    the ``rounds`` in Markdown, an SVG on the page."""

    names: tuple[str, ...]
    timeline: tuple[TimelineEntry, ...]
    turn_count: int
    rounds: tuple[str, ...]


@dataclass(kw_only=True, frozen=True)
class Fold:
    """Blocks folded under a summary in Markdown (``<details>``); on the page, the blocks as they are. At a
    section's top level, a fold that ``gives_way`` is left out of a comment that would pass its length limit."""

    summary: Inline
    blocks: tuple[Block, ...]
    left_out: Inline = ()  # what a comment past its length limit says in its place: the fold's summary, briefly
    gives_way: int = 0  # past the limit, folds give way in this order (1 first); 0: never


@dataclass(frozen=True)
class Diff:
    """A unified diff under its heading and summary: a fenced ``diff`` block in Markdown, each added, removed
    and hunk line coloured on the page."""

    heading: Inline
    summary: Inline
    text: str


@dataclass(frozen=True)
class Alert:
    """A warning and what it lists: quoted in Markdown, in a red box on the page."""

    lead: Inline
    items: tuple[Inline, ...]


@dataclass(frozen=True)
class Card:
    """One box of a :class:`Cards` row: a heading over blocks."""

    heading: Inline
    blocks: tuple[Block, ...]
    heading_class: str = ""


@dataclass(frozen=True)
class Cards:
    """Boxes side by side on the page (one per seat, one per question); a comment says the same in lists, so
    Markdown shows none."""

    cards: tuple[Card, ...]


@dataclass(frozen=True)
class Only:
    """A block one format shows and the other does not."""

    format: Format
    block: Block


@dataclass(frozen=True)
class Group:
    """Blocks kept together: a line apart in Markdown, not a blank one (a list right under its lead)."""

    blocks: tuple[Block, ...]


Block = (
    Paragraph | Subheading | Items | Table | Position | Prose | Box | Chart | Fold | Diff | Alert | Cards | Group | Only
)

# Where a section stands on the page: a section of the report, its header, or its footer.
Kind = Literal["section", "header", "footer"]


@dataclass(kw_only=True, frozen=True)
class Section:
    """A titled part of the report: ``### title`` in Markdown, ``<section><h2>`` on the page (a title empty in
    a format, no heading there); a
    ``model_written`` one (a model's judgement, not the record's) in a dashed box on the page. A header's
    title is the report's (``##``, ``<h1>``); a footer has none. On the page, ``page_class`` is the section's
    class, and ``page_lines`` puts each block on a line of its own in the page's source."""

    title: Inline
    blocks: tuple[Block, ...]
    model_written: bool = False
    kind: Kind = "section"
    page_class: str = ""
    page_lines: bool = False
