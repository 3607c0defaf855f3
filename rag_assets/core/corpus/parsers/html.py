"""HTML -> blocks with the standard library's event-based `HTMLParser`.

Event based on purpose: malformed markup (unclosed `<p>`, stray end tags, 10,000 nested `<div>`s)
only moves a few counters, and nothing recurses. Only block boundaries matter; inline tags are
ignored and their text flows into the enclosing block. Natural Questions token HTML (upper-case
tags, `<Th_colspan="2">`) and the Samsung manuals' fragments go through the same code.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from html.parser import HTMLParser

from rag_assets.core.corpus.blocks import Block, code, collapse_spaces, heading, list_item, paragraph, table_row

_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_LISTS = frozenset({"ul", "ol", "dl", "menu"})
_ITEMS = frozenset({"li", "dt", "dd"})
_CELLS = frozenset({"td", "th"})
# Content never shown as text. (`title` is captured for the document title, not emitted.)
_SKIPPED = frozenset({"script", "style", "template"})
# Other tags that end the current paragraph or loose text (inside a list item, cell or heading
# they only separate words).
_BREAKING = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "caption",
        "center",
        "details",
        "dialog",
        "div",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "head",
        "header",
        "hgroup",
        "hr",
        "html",
        "main",
        "nav",
        "section",
        "summary",
        "tbody",
        "tfoot",
        "thead",
        "topic",
        "noscript",
    }
)

# Block kinds of the block being collected.
_LOOSE, _PARAGRAPH, _HEADING, _ITEM, _ROW, _PRE = range(6)

_tag_cache: dict[str, str] = {}
# Invisible characters that would otherwise make "empty" blocks (a lone BOM in a <div>).
_INVISIBLE = {0xFEFF: None, 0x200B: None, 0x2060: None}


def _tag(raw: str) -> str:
    """Lower-case name without NQ's `_attr="v"` suffix (`th_colspan="2"` -> `th`)."""
    tag = _tag_cache.get(raw)
    if tag is None:
        tag = raw.lower().split("_", 1)[0] if "_" in raw else raw.lower()
        if len(_tag_cache) < 4096:
            _tag_cache[raw] = tag
    return tag


class _BlockCollector(HTMLParser):
    """Collects blocks from parser events; see `parse_html` for the rules."""

    def __init__(self, clean: Callable[[str], str] | None = None) -> None:
        super().__init__(convert_charrefs=True)
        self.clean = clean
        self.blocks: list[Block] = []
        self.kind = _LOOSE
        self.level = 0
        self.parts: list[str] = []  # text of the block (of the current cell, for a row)
        self.cells: list[str] = []  # finished cells of the current row
        self.row_tables = 0  # table nesting depth where the current row lives
        self.tables = 0
        self.lists = 0
        self.pre = 0
        self.skipping = 0
        self.title: str | None = None
        self.title_parts: list[str] | None = None  # collecting <title> text while not None

    # -- block bookkeeping ---------------------------------------------------------------------
    def flush(self) -> None:
        """Emit the block being collected (if it has any text) and go back to loose text."""
        kind, parts = self.kind, self.parts
        if kind == _ROW:
            self.cells.append("".join(parts))
            block = table_row(self.cells)
            self.cells = []
        elif kind == _PRE:
            block = code(textwrap.dedent("".join(parts)))
        else:
            text = collapse_spaces("".join(parts)) if parts else ""
            if not text:
                block = None
            elif kind == _HEADING:
                block = heading(text, self.level)
            elif kind == _ITEM:
                block = list_item(text, self.level)
            elif kind == _PARAGRAPH or not self.lists:
                block = paragraph(text)
            else:  # loose text inside a list: a continuation of the list at this depth
                block = list_item(text, self.lists)
        if block is not None and block.text:
            self.blocks.append(block)
        self.kind, self.parts = _LOOSE, []

    def begin(self, kind: int, level: int = 0) -> None:
        self.flush()
        self.kind, self.level = kind, level

    # -- parser events -------------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:  # noqa: C901 — one branch per HTML tag that opens a block
        tag = _tag(tag)
        if self.title_parts is not None:
            self._end_title()
        if self.skipping:
            if tag in _SKIPPED:
                self.skipping += 1
            return
        if self.pre:
            if tag == "pre":
                self.pre += 1
            elif tag == "br":
                self.parts.append("\n")
            return
        kind = self.kind
        if tag in _HEADINGS:
            if kind == _ROW:
                self.parts.append(" ")
            else:
                self.begin(_HEADING, _HEADINGS[tag])
        elif tag == "p":
            if kind in (_ITEM, _ROW):
                self.parts.append(" ")
            else:
                self.begin(_PARAGRAPH)
        elif tag in _ITEMS:
            if kind == _ROW:
                self.parts.append(" ")
            else:
                self.begin(_ITEM, max(self.lists, 1))
        elif tag in _LISTS:
            if kind == _ROW:
                self.parts.append(" ")
            else:
                self.flush()  # before entering the list: loose text before it is not an item
            self.lists += 1
        elif tag == "table":
            self.tables += 1
            if kind == _ROW:
                self.parts.append(" ")
            else:
                self.flush()
        elif tag == "tr" or tag in _CELLS:
            if kind == _ROW and self.tables > self.row_tables:
                self.parts.append(" ")
            elif kind == _ROW and tag != "tr":
                self.cells.append("".join(self.parts))
                self.parts = []
            else:
                self.begin(_ROW)
                self.row_tables = self.tables
        elif tag == "pre":
            if kind == _ROW:
                self.parts.append(" ")
            else:
                self.begin(_PRE)
                self.pre = 1
        elif tag == "br" or tag == "img":  # a line break or an icon separates words, nothing more
            self.parts.append(" ")
        elif tag in _SKIPPED:
            self.skipping = 1
        elif tag == "title":
            self.title_parts = []  # never emitted; ends at </title> or at any other tag
        elif tag in _BREAKING:
            if kind in (_ITEM, _ROW):
                self.parts.append(" ")
            else:
                self.flush()
        # Any other tag is inline: its text simply continues the current block.

    def handle_endtag(self, tag: str) -> None:  # noqa: C901 — one branch per HTML tag that closes a block
        tag = _tag(tag)
        if self.title_parts is not None:
            self._end_title()
            if tag == "title":
                return
        if self.skipping:
            if tag in _SKIPPED:
                self.skipping -= 1
            return
        if self.pre:
            if tag == "pre":
                self.pre -= 1
                if not self.pre:
                    self.flush()
            return
        kind = self.kind
        if tag in _HEADINGS:
            if kind == _HEADING:
                self.flush()
            else:
                self.parts.append(" ")
        elif tag == "p":
            if kind == _PARAGRAPH:
                self.flush()
            else:
                self.parts.append(" ")
        elif tag in _ITEMS:
            if kind in (_ITEM, _LOOSE):
                self.flush()
            else:
                self.parts.append(" ")
        elif tag in _LISTS:
            if kind == _ROW:
                self.parts.append(" ")
            else:
                self.flush()  # before leaving the list: loose text in it is still a list item
            self.lists = max(self.lists - 1, 0)
        elif tag == "table":
            if kind == _ROW and self.tables <= self.row_tables:
                self.flush()
            else:
                self.parts.append(" ")
            self.tables = max(self.tables - 1, 0)
        elif tag == "tr":
            if kind == _ROW and self.tables <= self.row_tables:
                self.flush()
            else:
                self.parts.append(" ")
        elif tag in _CELLS or tag == "br":
            self.parts.append(" ")
        elif tag in _BREAKING:
            if kind in (_ITEM, _ROW, _HEADING):
                self.parts.append(" ")
            else:
                self.flush()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # `<br/>`, `<p/>`, `<div/>`: a start at once followed by its end.
        self.handle_starttag(tag, attrs)
        if _tag(tag) != "br":
            self.handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        if not data.isascii():
            if self.clean is not None:
                data = self.clean(data)
            data = data.translate(_INVISIBLE)
        if self.title_parts is not None:
            self.title_parts.append(data)
        elif not self.skipping:
            self.parts.append(data)

    def _end_title(self) -> None:
        assert self.title_parts is not None
        if self.title is None:
            self.title = collapse_spaces("".join(self.title_parts)) or None
        self.title_parts = None

    def finish(self) -> list[Block]:
        self.close()
        if self.title_parts is not None:
            self._end_title()
        self.flush()
        return self.blocks


def _collect(text: str, clean: Callable[[str], str] | None = None) -> _BlockCollector:
    collector = _BlockCollector(clean)
    try:
        collector.feed(text)
        collector.finish()
    except (AssertionError, ValueError):
        # Some malformed declarations (`<![if ...`) still raise inside the standard parser;
        # keep what was collected rather than lose the document.
        collector.flush()
    return collector


def parse_html(text: str, *, clean: Callable[[str], str] | None = None) -> list[Block]:
    """Blocks of an HTML document or fragment in reading order.

    h1-h6 are headings; p is a paragraph; li/dt/dd are list items at the depth of open
    ul/ol/dl; a tr is one table row of its th/td cells (lists, paragraphs and nested tables inside
    a cell fold into the cell's text); pre is code (dedented); text outside any of these is a paragraph.
    Unclosed blocks end at the next block start or at the end of input. `clean`, if given, is
    applied to non-ASCII text after entities are decoded (the manuals repair mojibake with it).
    """
    return _collect(text, clean).blocks


def html_title(text: str) -> str | None:
    """The `<title>`, else the first level-1 heading, else None."""
    collector = _collect(text)
    if collector.title:
        return collector.title
    for block in collector.blocks:
        if block.kind.value == "heading" and block.level == 1:
            return block.text
    return None
