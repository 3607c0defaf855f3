"""Ruled tables (cells drawn with lines) found by pdfplumber, at extraction.

pdfplumber (MIT, on pdfminer.six) finds a table's cells from the page's drawn lines and
rectangles and reads each cell's text, wrapped lines included. It reads a page about ten times
slower than PDFium, so only pages that draw at least `MIN_RULES` vertical rules two rows tall or
more (PDFium counts them first, joining the row-high pieces a grid drawn cell by cell is made
of) are given to it: most pages of a filing draw none, or only the horizontal rules of an
unruled statement, which `pdf_tables` reads from the text itself. A table ruled only between
its columns is closed where its stacked horizontal rules end (`closing_sides`), so its first
and last columns are read too.
"""

from __future__ import annotations

import ctypes
import io
import logging

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

MIN_RULES = 2  # vertical rules a page must draw to be searched for ruled tables
# A rule must span two rows of text or more: the row-high edges that filings draw around each
# shaded row of an unruled statement are not a grid.
_MIN_RULE_HEIGHT = 24.0
_PALE = 0.85  # luminance (0 black, 1 white) from which a path is background, not a rule
_JOIN_GAP = 1.5  # pieces of one rule meet (within the line's width)
_MIN_ROWS = 2
_MIN_COLUMNS = 2
# A table's cells are mostly filled: a grid whose cells with text cover less than this share of
# its area is a chart's gridlines (labels in a few cells) or a blank form, not a table.
_MIN_TEXT_SHARE = 0.3


def _stands_out(obj: pdfium.PdfObject, get_colour: object) -> bool:
    r, g, b, a = (ctypes.c_uint() for _ in range(4))
    if not get_colour(obj.raw, *(ctypes.byref(v) for v in (r, g, b, a))):  # type: ignore[operator]
        return True
    return a.value > 0 and 0.299 * r.value + 0.587 * g.value + 0.114 * b.value < _PALE * 255


def _visible(obj: pdfium.PdfObject) -> bool:
    """Whether a path is filled or stroked in a colour that stands out on a white page (a rule),
    not in white or the pale tint of a shaded row's background, which filings draw in row-high
    slivers."""
    fill, stroke = ctypes.c_int(), ctypes.c_int()
    if not pdfium_c.FPDFPath_GetDrawMode(obj.raw, ctypes.byref(fill), ctypes.byref(stroke)):
        return True
    return bool(
        (fill.value and _stands_out(obj, pdfium_c.FPDFPageObj_GetFillColor))
        or (stroke.value and _stands_out(obj, pdfium_c.FPDFPageObj_GetStrokeColor))
    )


def vertical_rules(page: pdfium.PdfPage, *, turned: bool = False) -> int:
    """How many vertical rules two rows tall or more (a table's) the page draws: thin, upright,
    visible path objects, those set end to end at one x joined first (many producers draw a
    ruled grid cell by cell, each rule in row-high pieces). `turned`: upright as the page is
    displayed, a /Rotate of 90 or 270 degrees turning the page's own horizontal rules upright."""
    pieces: dict[int, list[tuple[float, float]]] = {}
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=2):
        left, bottom, right, top = obj.get_bounds()
        if turned:
            left, bottom, right, top = bottom, left, top, right
        if right - left < 2.5 and top > bottom and _visible(obj):
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


def _joined(page: object, orientation: str) -> list[tuple[float, float, float]]:
    """(position, start, end) of the page's rules of one orientation ("h": y, x0, x1; "v": x,
    top, bottom), the pieces drawn end to end on one line joined."""
    across, start, end = ("top", "x0", "x1") if orientation == "h" else ("x0", "top", "bottom")
    pieces = sorted(
        (round(e[across]), e[start], e[end])
        for e in page.edges  # type: ignore[attr-defined]
        if e["orientation"] == orientation
    )
    rules: list[list[float]] = []
    for at, low, high in pieces:
        if rules and abs(rules[-1][0] - at) <= 1 and low <= rules[-1][2] + _JOIN_GAP:
            rules[-1][2] = max(rules[-1][2], high)
        else:
            rules.append([at, low, high])
    return [(a, b, c) for a, b, c in rules]


def closing_sides(page: object) -> list[dict[str, object]]:
    """Vertical lines where a stack of horizontal rules ends: rules whose ends line up, each
    two consecutive ones with a drawn vertical rule running from one to the other (the rows of
    one ruled table, not two tables one above the other). A table ruled only between its
    columns is closed there, so its first and last columns are cells too."""
    verticals = _joined(page, "v")
    ends: dict[tuple[int, int], list[tuple[float, float, float]]] = {}
    for top, x0, x1 in _joined(page, "h"):
        if x1 - x0 > _MIN_RULE_HEIGHT:
            for side, x in ((0, x0), (1, x1)):
                ends.setdefault((side, round(x / 2)), []).append((top, x0, x1))

    def one_table(above: tuple[float, float, float], below: tuple[float, float, float]) -> bool:
        return any(
            top <= above[0] + 2 and bottom >= below[0] - 2 and max(above[1], below[1]) < x < min(above[2], below[2])
            for x, top, bottom in verticals
        )

    lines = []
    for (_, key), rules in ends.items():
        rules.sort()
        first = rules[0]
        for above, below in zip(rules, [*rules[1:], None], strict=True):
            if below is None or not one_table(above, below):
                if above[0] > first[0]:
                    lines.append({"x0": key * 2.0, "x1": key * 2.0, "top": first[0], "bottom": above[0]})
                first = below or first
    return [{**line, "width": 0.0, "height": line["bottom"] - line["top"], "object_type": "line"} for line in lines]


def _text_share(box: tuple[float, float, float, float], cells: list[list[object]]) -> float:
    """The share of the table's area covered by cells with text."""
    area = (box[2] - box[0]) * (box[3] - box[1])
    filled = sum((float(c[2]) - float(c[0])) * (float(c[3]) - float(c[1])) for c in cells if str(c[4]).strip())  # type: ignore[arg-type]
    return filled / area if area > 0 else 0.0


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
                    [*(round(v, 1) for v in table.bbox), rows, cells]
                    for table in page.find_tables({"explicit_vertical_lines": closing_sides(page)})
                    if len(rows := table.extract()) >= _MIN_ROWS
                    and sum(1 for cell in rows[0] if cell is not None) >= _MIN_COLUMNS
                    and _text_share(table.bbox, cells := cell_boxes(table)) >= _MIN_TEXT_SHARE
                ]
            except Exception:  # pdfminer raises many kinds on odd pages; the text is still read
                tables = []
            finally:
                page.close()
            if tables:
                found[index] = tables
    return found
