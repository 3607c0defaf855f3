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
from dataclasses import dataclass

from docx import Document
from docx.document import Document as DocxDocument
from docx.opc.exceptions import PackageNotFoundError
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph

from rag_assets.core.corpus.blocks import Block, BlockKind, collapse_spaces, new_block, table_row
from rag_assets.core.corpus.parsers.errors import ParseError

DOCX_LAYOUT_VERSION = 1
ZIP_MAGIC = b"PK\x03\x04"
_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_LIST_STYLE = re.compile(r"^list(?:\s+(?:bullet|number|paragraph|continue))?(?:\s+(\d))?$", re.IGNORECASE)
_KINDS = {kind.value: kind for kind in BlockKind}
_T, _BR, _RENDERED_BREAK = qn("w:t"), qn("w:br"), qn("w:lastRenderedPageBreak")
_TAB, _PAGE_BREAK_BEFORE = qn("w:tab"), qn("w:pageBreakBefore")


@dataclass(frozen=True, slots=True)
class ExtractedDocx:
    layout: str  # the JSON document `parse_docx` reads
    plain_text: str
    title: str | None


def _open(data: bytes) -> DocxDocument:
    if not data.startswith(ZIP_MAGIC):
        raise ParseError("not a .docx file (not a zip archive; an old binary .doc? save it as .docx)")
    try:
        return Document(io.BytesIO(data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as err:
        raise ParseError(f"damaged or incomplete .docx ({err.__class__.__name__}: {err})") from None


def _outline_level(paragraph: Paragraph) -> int | None:
    """The outline level (1 = top) set on the paragraph or inherited from its style chain."""
    candidates = [paragraph._p.pPr]
    style = paragraph.style
    while style is not None:
        candidates.append(style.element.pPr)
        style = style.base_style
    for ppr in candidates:
        if ppr is None:
            continue
        level = ppr.find(qn("w:outlineLvl"))
        if level is not None:
            value = int(level.get(qn("w:val"), "9"))
            return value + 1 if value < 9 else None  # 9 is "body text"
    return None


def _heading_level(paragraph: Paragraph) -> int | None:
    name = paragraph.style.name if paragraph.style is not None else ""
    if name.lower() in ("title",):
        return 0
    match = _HEADING_STYLE.match(name)
    if match:
        return int(match.group(1))
    return _outline_level(paragraph)


def _list_level(paragraph: Paragraph) -> int | None:
    ppr = paragraph._p.pPr
    numbering = ppr.numPr if ppr is not None else None
    if numbering is not None and numbering.numId is not None and numbering.numId.val != 0:
        return (numbering.ilvl.val if numbering.ilvl is not None else 0) + 1
    match = _LIST_STYLE.match(paragraph.style.name if paragraph.style is not None else "")
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


def extract_docx(data: bytes) -> ExtractedDocx:
    """The blocks of a .docx as stored JSON rows `[kind, text, level, page_start, page_end]`."""
    document = _open(data)
    body = document.element.body
    pages = _Pages(rendered=body.find(f".//{_RENDERED_BREAK}") is not None)
    rows: list[list[object]] = []
    title = collapse_spaces(document.core_properties.title or "") or None
    has_title_style = False
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            rows.extend(_table_rows(item, pages))
            continue
        text, first, last = pages.text_of(item._p)
        text = collapse_spaces(text)
        if not text:
            continue
        level = _heading_level(item)
        if level is not None:
            if level == 0:
                has_title_style = True
                title = title or text
            rows.append(["heading", text, level, first, last])
            continue
        list_level = _list_level(item)
        if list_level is not None:
            rows.append(["list_item", text, list_level, first, last])
        else:
            rows.append(["paragraph", text, 0, first, last])
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
