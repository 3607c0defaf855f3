"""Word (.docx) -> blocks, with python-docx.

A .docx is a zip of XML, so it is read once at ingestion (`extract_docx`) into a small JSON list
of blocks the catalogue can store as text; `parse_docx` turns that list back into blocks. Word
states its structure, so nothing is guessed from looks: headings are paragraphs styled Title or
Heading 1..9, or with an outline level (set on the paragraph or its style); list items are
paragraphs with list numbering (their level is the numbering level) or a List style ("List
Bullet 2" is level 2); tables give one row block per row. Pages come from the page breaks Word
recorded when it last laid the document out, else from hard page breaks.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass

from docx import Document
from docx.document import Document as DocxDocument
from docx.enum.style import WD_STYLE_TYPE
from docx.opc.exceptions import PackageNotFoundError
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph
from lxml import etree

from rag_assets.core.corpus.blocks import Block, BlockKind, collapse_spaces, new_block, table_row
from rag_assets.core.corpus.parsers.archive_limits import ArchiveLimits, Deadline, check_archive, plain_xml_error
from rag_assets.core.corpus.parsers.errors import ParseError

DOCX_LAYOUT_VERSION = 1
ZIP_MAGIC = b"PK\x03\x04"
_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_LIST_STYLE = re.compile(r"^list(?:\s+(?:bullet|number|paragraph|continue))?(?:\s+(\d))?$", re.IGNORECASE)
_KINDS = {kind.value: kind for kind in BlockKind}
_T, _BR, _RENDERED_BREAK = qn("w:t"), qn("w:br"), qn("w:lastRenderedPageBreak")
_TAB, _PAGE_BREAK_BEFORE = qn("w:tab"), qn("w:pageBreakBefore")
_P, _TBL = qn("w:p"), qn("w:tbl")


@dataclass(frozen=True, slots=True)
class ExtractedDocx:
    layout: str  # the JSON document `parse_docx` reads
    plain_text: str
    title: str | None


def _open(data: bytes, limits: ArchiveLimits) -> DocxDocument:
    """The document, once its archive passed the limits (archive_limits.py), read by python-docx's
    lxml parser (no entity expansion, at most 256 levels deep)."""
    if not data.startswith(ZIP_MAGIC):
        raise ParseError("not a .docx file (not a zip archive; an old binary .doc? save it as .docx)")
    check_archive(data, limits)
    try:
        return Document(io.BytesIO(data))
    except etree.XMLSyntaxError as err:
        raise plain_xml_error(err) from None
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as err:
        raise ParseError(f"damaged or incomplete .docx ({err.__class__.__name__}: {err})") from None


class _Styles:
    """What a paragraph's style says (its name, the outline level along its style chain), worked
    out once per style: looking a style up through python-docx scans every style of the
    document, per paragraph."""

    def __init__(self, document: DocxDocument) -> None:
        styles = document.styles
        self._by_id = {s.style_id: s for s in styles if s.type == WD_STYLE_TYPE.PARAGRAPH}
        self._default = styles.default(WD_STYLE_TYPE.PARAGRAPH)
        self._found: dict[str | None, tuple[str, int | None]] = {}

    def of(self, paragraph: Paragraph) -> tuple[str, int | None]:
        """(style name, outline level of the style chain or None) of `paragraph`'s style, the
        document's default paragraph style when it names none or one that is not a paragraph style."""
        style_id = paragraph._p.style
        if style_id not in self._found:
            style = self._by_id.get(style_id, self._default) if style_id is not None else self._default
            name = style.name if style is not None else ""
            self._found[style_id] = (name or "", _style_outline(style))
        return self._found[style_id]


def _level_of(ppr: object) -> int | bool | None:
    """The outline level (1 = top) a paragraph-properties element sets; None: body text (9);
    False: it sets none."""
    level = ppr.find(qn("w:outlineLvl")) if ppr is not None else None  # type: ignore[attr-defined]
    if level is None:
        return False
    value = int(level.get(qn("w:val"), "9"))
    return value + 1 if value < 9 else None


def _style_outline(style: object) -> int | None:
    """The outline level set along a style's chain (itself, then its base styles)."""
    while style is not None:
        level = _level_of(style.element.pPr)  # type: ignore[attr-defined]
        if level is not False:
            return level  # type: ignore[return-value]
        style = style.base_style  # type: ignore[attr-defined]
    return None


def _heading_level(paragraph: Paragraph, styles: _Styles) -> int | None:
    name, style_outline = styles.of(paragraph)
    if name.lower() in ("title",):
        return 0
    match = _HEADING_STYLE.match(name)
    if match:
        return int(match.group(1))
    own = _level_of(paragraph._p.pPr)
    return style_outline if own is False else own  # type: ignore[return-value]


def _list_level(paragraph: Paragraph, styles: _Styles) -> int | None:
    ppr = paragraph._p.pPr
    numbering = ppr.numPr if ppr is not None else None
    if numbering is not None and numbering.numId is not None and numbering.numId.val != 0:
        return (numbering.ilvl.val if numbering.ilvl is not None else 0) + 1
    match = _LIST_STYLE.match(styles.of(paragraph)[0])
    if match:
        return int(match.group(1) or 1)
    return None


class _Pages:
    """The running page number while walking the body in order."""

    def __init__(self, rendered: bool) -> None:
        self.page = 1
        self._rendered = rendered  # Word recorded its own page breaks: count those only

    def text_of(self, element: object) -> tuple[str, int, int]:
        """(text, first page, last page) of a paragraph element, counting its page breaks."""
        parts: list[str] = []
        first = last = 0  # the pages of its first and last text: a break after the text is not its page
        ppr = getattr(element, "pPr", None)
        if not self._rendered and ppr is not None and ppr.find(_PAGE_BREAK_BEFORE) is not None:
            self.page += 1
        for node in element.iter(_T, _BR, _RENDERED_BREAK, _TAB):  # type: ignore[attr-defined]
            if node.tag == _T:
                if node.text:
                    parts.append(node.text)
                    first, last = first or self.page, self.page
            elif node.tag == _TAB:
                parts.append(" ")
            elif node.tag == _RENDERED_BREAK:
                self.page += self._rendered
            elif node.get(qn("w:type")) == "page":
                self.page += not self._rendered
            else:
                parts.append(" ")
        return "".join(parts), first or self.page, last or self.page


def _table_rows(table: Table, pages: _Pages) -> list[list[object]]:
    """One stored row per table row: its cells' texts joined by ' | '."""
    rows: list[list[object]] = []
    for row in table.rows:
        start = pages.page
        cells = [collapse_spaces(" ".join(pages.text_of(p._p)[0] for p in cell.paragraphs)) for cell in row.cells]
        # merged cells repeat: a cell spanning two columns is one value
        deduped = [c for i, c in enumerate(cells) if c and (i == 0 or c != cells[i - 1])]
        if deduped:
            rows.append(["table_row", " | ".join(deduped), 0, start, pages.page])
    return rows


def _body_items(document: DocxDocument) -> Iterator[Paragraph | Table]:
    """The body's paragraphs and tables in order, as python-docx's `iter_inner_content` gives
    them, without its XPath union (which libxml2 merges in time quadratic in the body's length)."""
    body = document._body
    for child in document.element.body.iterchildren(_P, _TBL):
        yield Paragraph(child, body) if child.tag == _P else Table(child, body)


def _paragraph_row(item: Paragraph, styles: _Styles, pages: _Pages) -> list[object] | None:
    """The stored row of a paragraph (heading, list item or paragraph), None when it has no text."""
    text, first, last = pages.text_of(item._p)
    text = collapse_spaces(text)
    if not text:
        return None
    level = _heading_level(item, styles)
    if level is not None:
        return ["heading", text, level, first, last]
    list_level = _list_level(item, styles)
    if list_level is not None:
        return ["list_item", text, list_level, first, last]
    return ["paragraph", text, 0, first, last]


def extract_docx(data: bytes, limits: ArchiveLimits = ArchiveLimits()) -> ExtractedDocx:
    """The blocks of a .docx as stored JSON rows `[kind, text, level, page_start, page_end]`;
    ParseError when the file passes `limits` (expanded size, entries, ratio, reading time)."""
    deadline = Deadline(limits.max_parse_seconds)
    document = _open(data, limits)
    body = document.element.body
    pages = _Pages(rendered=body.find(f".//{_RENDERED_BREAK}") is not None)
    rows: list[list[object]] = []
    title = collapse_spaces(document.core_properties.title or "") or None
    has_title_style = False
    styles = _Styles(document)
    for count, item in enumerate(_body_items(document)):
        if count % 256 == 0:
            deadline.check()
        if isinstance(item, Table):
            rows.extend(_table_rows(item, pages))
            continue
        row = _paragraph_row(item, styles, pages)
        if row is not None:
            rows.append(row)
            if row[0] == "heading" and row[2] == 0:
                has_title_style = True
                title = title or str(row[1])
    if not rows:
        raise ParseError("no text in the .docx (an empty document, or only images)")
    if has_title_style:  # Title sits above Heading 1: every heading goes one level down
        rows = [[k, t, lvl + 1 if k == "heading" else lvl, a, b] for k, t, lvl, a, b in rows]
    if title is None:
        title = next((str(r[1]) for r in rows if r[0] == "heading"), None)
    layout = json.dumps({"docx_layout": DOCX_LAYOUT_VERSION, "title": title, "blocks": rows}, ensure_ascii=False)
    return ExtractedDocx(layout, "\n".join(str(r[1]) for r in rows), title)


def _load(layout: str) -> dict[str, object]:
    try:
        data = json.loads(layout)
    except ValueError:
        raise ParseError("not a Word layout document (a .docx is read at ingestion; re-ingest it)") from None
    if not isinstance(data, dict) or data.get("docx_layout") != DOCX_LAYOUT_VERSION:
        raise ParseError(f"not a version-{DOCX_LAYOUT_VERSION} Word layout document; re-ingest the .docx")
    return data


def parse_docx(layout: str) -> list[Block]:
    """The blocks a .docx was read into at ingestion, with their pages."""
    blocks: list[Block] = []
    for kind, text, level, first, last in _load(layout)["blocks"]:  # type: ignore[union-attr]
        if kind == "table_row":
            row = table_row(str(text).split(" | "))
            blocks.append(new_block(row.kind, row.text, 0, first, last))
        else:
            blocks.append(new_block(_KINDS[kind], collapse_spaces(str(text)), int(level), first, last))
    return blocks


def docx_title(layout: str) -> str | None:
    """The document's title property, else its Title-styled paragraph, else its first heading."""
    title = _load(layout).get("title")
    return str(title) if title else None
