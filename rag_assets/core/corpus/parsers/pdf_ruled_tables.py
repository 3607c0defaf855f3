"""Ruled tables (cells drawn with lines) found by pdfplumber, at extraction.

pdfplumber (MIT, on pdfminer.six) finds a table's cells from the page's drawn lines and
rectangles and reads each cell's text, wrapped lines included. It reads a page about ten times
slower than PDFium, so only pages that draw at least `MIN_RULES` vertical rules several rows tall
(PDFium counts them first) are given to it: most pages of a filing draw none, or only the horizontal rules of
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
_MIN_ROWS = 2
_MIN_COLUMNS = 2


def vertical_rules(page: pdfium.PdfPage) -> int:
    """How many thin, upright path objects taller than a few rows (a table's vertical rules) the page draws."""
    count = 0
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=2):
        left, bottom, right, top = obj.get_bounds()
        count += right - left < 2.5 and top - bottom > _MIN_RULE_HEIGHT
    return count


def ruled_tables(data: bytes, page_indices: list[int]) -> dict[int, list[list[object]]]:
    """page index -> its ruled tables as `[x0, top, x1, bottom, rows]` (rows of cell texts, None
    for an empty cell), for the given pages; a page pdfplumber cannot read gives none."""
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
                    [*(round(v, 1) for v in table.bbox), rows]
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
