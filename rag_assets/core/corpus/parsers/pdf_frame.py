"""The frame a PDF page's text is read in: the page's own space, or the page as displayed where a
/Rotate sets text drawn turned upright (a landscape slide or table drawn on a portrait page)."""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c


def display_box(
    page: pdfium.PdfPage, text_turn: int
) -> Callable[[pdfium_c.FS_RECTF], tuple[float, float, float, float]] | None:
    """For a page whose /Rotate turns its text upright (a landscape slide or table drawn turned on
    a portrait page), the map from a character's box in the page's own space to (left, top,
    right, bottom) on the page as displayed, top-left origin, as PDFium renders it. None where
    the text stands upright in the page's own space (y is flipped): an upright page, or one a
    /Rotate shows turned (read as it was drawn, as before the turn)."""
    rotation = page.get_rotation()
    if not rotation or abs((text_turn + rotation) % 360 - 180) < 170:
        return None
    width, height = page.get_size()  # as displayed
    scale = 100  # PDFium maps to whole device pixels: a hundredth of a point
    device_x, device_y = ctypes.c_int(), ctypes.c_int()

    def device(x: float, y: float) -> tuple[float, float]:
        pdfium_c.FPDF_PageToDevice(
            page.raw,
            0,
            0,
            round(width * scale),
            round(height * scale),
            0,
            x,
            y,
            ctypes.byref(device_x),
            ctypes.byref(device_y),
        )
        return device_x.value / scale, device_y.value / scale

    (x0, y0), (xx, yx), (xy, yy) = device(0, 0), device(1000, 0), device(0, 1000)
    a, b, c, d = (xx - x0) / 1000, (xy - x0) / 1000, (yx - y0) / 1000, (yy - y0) / 1000

    def box(rect: pdfium_c.FS_RECTF) -> tuple[float, float, float, float]:
        xs = (x0 + a * rect.left + b * rect.bottom, x0 + a * rect.right + b * rect.top)
        ys = (y0 + c * rect.left + d * rect.bottom, y0 + c * rect.right + d * rect.top)
        return min(xs), min(ys), max(xs), max(ys)

    return box
