"""Where a PDF page draws a chart's plotted lines, found at extraction.

A chart's axis labels and legend are set in columns of figures ("450 400 350", "Jan-08 Jul-08")
that read like an unruled table; the plot beside them is what tells them apart. A plotted
series is a path of many segments, several of them slanted (a table's rules, boxes and bars
are upright or level); its box is kept with the page (`plots`), and `pdf_tables` reads no
table over it.
"""

from __future__ import annotations

import ctypes

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

_MIN_SEGMENTS = 8  # a plotted series has many points
_MIN_SLANTED = 3  # of which at least this many segments are neither upright nor level
_MIN_SIZE = 20.0  # points, each way: not a glyph-like mark or an arrow
_SAMPLED = 400  # segments looked at per path: enough to see a series slant
_STRETCH = 2.0  # points a stretch of a line runs before its slant is judged


def _slanted(path: ctypes.c_void_p, count: int) -> int:
    """Slanted stretches among the path's first `_SAMPLED` segments, up to `_MIN_SLANTED`: a
    stretch ends where the line has moved `_STRETCH` points from where it started (a daily
    series moves a fraction of a point per segment), and is slanted when it moved both ways."""
    x, y = ctypes.c_float(), ctypes.c_float()
    anchor: tuple[float, float] | None = None
    slanted = 0
    for index in range(min(count, _SAMPLED)):
        segment = pdfium_c.FPDFPath_GetPathSegment(path, index)
        if not pdfium_c.FPDFPathSegment_GetPoint(segment, ctypes.byref(x), ctypes.byref(y)):
            continue
        if pdfium_c.FPDFPathSegment_GetType(segment) != pdfium_c.FPDF_SEGMENT_LINETO or anchor is None:
            anchor = (x.value, y.value)
            continue
        dx, dy = abs(x.value - anchor[0]), abs(y.value - anchor[1])
        if max(dx, dy) >= _STRETCH:
            slanted += min(dx, dy) > _STRETCH / 4
            if slanted >= _MIN_SLANTED:
                break
            anchor = (x.value, y.value)
    return slanted


def plot_boxes(page: pdfium.PdfPage) -> list[list[float]]:
    """`[x0, top, x1, bottom]` (points from the page's top-left) of each plotted series."""
    height = page.get_height()
    boxes = []
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=3):
        count = pdfium_c.FPDFPath_CountSegments(obj.raw)
        if count < _MIN_SEGMENTS:
            continue
        left, bottom, right, top = obj.get_bounds()
        if right - left >= _MIN_SIZE and top - bottom >= _MIN_SIZE and _slanted(obj.raw, count) >= _MIN_SLANTED:
            boxes.append([round(left, 1), round(height - top, 1), round(right, 1), round(height - bottom, 1)])
    return boxes
