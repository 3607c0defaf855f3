"""Ruled tables (cells drawn with lines) found by pdfplumber, at extraction.

pdfplumber (MIT, on pdfminer.six) finds a table's cells from the page's drawn lines and
rectangles and reads each cell's text, wrapped lines included. It reads a page about ten times
slower than PDFium, so only pages that draw at least `MIN_RULES` vertical rules several rows tall
(PDFium counts them first, joining the row-high pieces a grid drawn cell by cell is made of) are given to it: most pages of a filing draw none, or only the horizontal rules of
an unruled statement, which `pdf_tables` reads from the text itself.
"""

from __future__ import annotations

import io
import logging

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

MIN_RULES = 3  # vertical rules a page must draw to be searched for ruled tables
# A rule must span several rows: the row-high edges that filings draw around each shaded row of
# an unruled statement are not a grid.
_MIN_RULE_HEIGHT = 40.0
_JOIN_GAP = 1.5  # pieces of one rule meet (within the line's width)
_MIN_ROWS = 2
_MIN_COLUMNS = 2


def vertical_rules(page: pdfium.PdfPage) -> int:
    """How many vertical rules taller than a few rows (a table's) the page draws: thin, upright
    path objects, those set end to end at one x joined first (many producers draw a ruled grid
    cell by cell, each rule in row-high pieces)."""
    pieces: dict[int, list[tuple[float, float]]] = {}
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=2):
        left, bottom, right, top = obj.get_bounds()
        if right - left < 2.5 and top > bottom:
            pieces.setdefault(round((left + right) / 2), []).append((bottom, top))
    count = 0
    for spans in pieces.values():
        spans.sort()
        low, high = spans[0]
        for bottom, top in spans[1:]:
            if bottom > high + _JOIN_GAP:
                count += high - low > _MIN_RULE_HEIGHT
                low = bottom
            high = max(high, top)
        count += high - low > _MIN_RULE_HEIGHT
    return count


def cell_boxes(table: object) -> list[list[object]]:
    """`[x0, top, x1, bottom, text]` of each of the table's cells (pdfplumber's `Table`)."""
    cells = []
    for row, texts in zip(table.rows, table.extract(), strict=True):  # type: ignore[attr-defined]
        for box, text in zip(row.cells, texts, strict=True):
            if box is not None:
                cells.append([*(round(v, 1) for v in box), text or ""])
    return cells


def ruled_tables(data: bytes, page_indices: list[int]) -> dict[int, list[list[object]]]:
    """page index -> its ruled tables as `[x0, top, x1, bottom, rows, cells]` (rows of cell
    texts, None for a slot a merged cell covers; cells as `[x0, top, x1, bottom, text]`, which
    give the merged cells' spans), for the given pages; a page pdfplumber cannot read gives none."""
    if not page_indices:
        return {}
    import pdfplumber  # imported here: only PDFs with ruled pages need it

    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    found: dict[int, list[list[object]]] = {}
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        for index in page_indices:
            page = pdf.pages[index]
            try:
                tables = [
                    [*(round(v, 1) for v in table.bbox), rows, cell_boxes(table)]
                    for table in page.find_tables()
                    if len(rows := table.extract()) >= _MIN_ROWS
                    and sum(1 for cell in rows[0] if cell is not None) >= _MIN_COLUMNS
                ]
            except Exception:  # pdfminer raises many kinds on odd pages; the text is still read
                tables = []
            finally:
                page.close()
            if tables:
                found[index] = tables
    return found
