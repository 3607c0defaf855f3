"""Which characters of a PDF page a reader never sees, so extraction leaves them out.

A PDF may hold text that is not shown: text drawn in render mode 3 (invisible: TCPDF's
"Powered by TCPDF" stamp) or 7 (clip only), glyphs filled white, or fully transparent, on the
white page, a printer's slug or proof marks set outside the page's crop box, and text turned
against the page's own lines (a diagonal watermark, a stamp along the edge, a chart's axis
label). Each rule below names what it reads; all use PDFium's character and page-object calls.

Two exceptions keep text that is meant to be read:
- invisible text over an image is a scanned page's OCR layer (the image shows the words);
- white text over a filled shape or an image (a white "CAUTION" on a black sign) shows.
And where most of a page's characters are outside its box, or turned, the box or the page's
orientation is what is odd, not the text: nothing is dropped for that reason then.
"""

from __future__ import annotations

import ctypes
import math
from collections import Counter

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

_HIDDEN_MODES = (pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE, pdfium_c.FPDF_TEXTRENDERMODE_CLIP)
_WHITE = 250  # each of red, green and blue at least this: white (or near white) on paper
_TURN_TOLERANCE = math.radians(3)  # a glyph turned more than this from the page's lines is not on them
_MAX_NESTING = 4  # form XObjects inside form XObjects looked into for backgrounds


def _angle_apart(a: float, b: float) -> float:
    diff = abs(a - b) % (2 * math.pi)
    return min(diff, 2 * math.pi - diff)


class _Backgrounds:
    """The boxes (page space: left, bottom, right, top) of what the page paints under text:
    images, and filled shapes not white. Read once per page, and only when a glyph asks."""

    def __init__(self, page: pdfium.PdfPage) -> None:
        self._page = page
        self._images: list[tuple[float, float, float, float]] | None = None
        self._fills: list[tuple[float, float, float, float]] = []

    def _collect(self) -> None:
        self._images = []
        page = self._page.raw
        self._visit([pdfium_c.FPDFPage_GetObject(page, i) for i in range(pdfium_c.FPDFPage_CountObjects(page))], 0)

    def _visit(self, objects: list[object], depth: int) -> None:
        assert self._images is not None
        left, bottom, right, top = (ctypes.c_float() for _ in range(4))
        red, green, blue, alpha = (ctypes.c_uint() for _ in range(4))
        fill_mode, stroke = ctypes.c_int(), ctypes.c_int()
        for obj in objects:
            kind = pdfium_c.FPDFPageObj_GetType(obj)
            if kind == pdfium_c.FPDF_PAGEOBJ_FORM and depth < _MAX_NESTING:
                count = pdfium_c.FPDFFormObj_CountObjects(obj)
                self._visit([pdfium_c.FPDFFormObj_GetObject(obj, i) for i in range(max(count, 0))], depth + 1)
                continue
            if kind not in (pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_PATH, pdfium_c.FPDF_PAGEOBJ_SHADING):
                continue
            if not pdfium_c.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
                continue
            box = (left.value, bottom.value, right.value, top.value)
            if kind == pdfium_c.FPDF_PAGEOBJ_IMAGE:
                self._images.append(box)
                continue
            if kind == pdfium_c.FPDF_PAGEOBJ_PATH:
                filled = pdfium_c.FPDFPath_GetDrawMode(obj, fill_mode, stroke) and fill_mode.value
                if not filled or not pdfium_c.FPDFPageObj_GetFillColor(obj, red, green, blue, alpha):
                    continue
                if min(red.value, green.value, blue.value) >= _WHITE or alpha.value == 0:
                    continue
            self._fills.append(box)

    @staticmethod
    def _inside(boxes: list[tuple[float, float, float, float]], x: float, y: float) -> bool:
        return any(left <= x <= right and bottom <= y <= top for left, bottom, right, top in boxes)

    def image_at(self, x: float, y: float) -> bool:
        if self._images is None:
            self._collect()
        return self._inside(self._images or [], x, y)

    def painted_at(self, x: float, y: float) -> bool:
        return self.image_at(x, y) or self._inside(self._fills, x, y)


class _Paint:
    """Whether a character is painted where a reader sees it: its text object's render mode
    (cached per object: its characters share one) and its fill colour against what lies under it."""

    def __init__(self, page: pdfium.PdfPage, textpage: ctypes.c_void_p) -> None:
        self._textpage = textpage
        self._backgrounds = _Backgrounds(page)
        self._modes: dict[int, int] = {}
        self._rgba = [ctypes.c_uint() for _ in range(4)]

    def shows(self, index: int, x: float, y: float) -> bool:
        obj = pdfium_c.FPDFText_GetTextObject(self._textpage, index)
        key = ctypes.cast(obj, ctypes.c_void_p).value or 0
        mode = self._modes.get(key)
        if mode is None:
            mode = self._modes[key] = pdfium_c.FPDFTextObj_GetTextRenderMode(obj)
        if mode in _HIDDEN_MODES:
            return self._backgrounds.image_at(x, y)  # over an image: a scan's OCR layer, kept
        red, green, blue, alpha = self._rgba
        if not pdfium_c.FPDFText_GetFillColor(self._textpage, index, red, green, blue, alpha):
            return True
        if alpha.value == 0:
            return False
        white = min(red.value, green.value, blue.value) >= _WHITE
        return not white or self._backgrounds.painted_at(x, y)


def _turned(angles: dict[int, float]) -> set[int]:
    """The characters turned away from the page's lines: from the angle most characters share."""
    if not angles:
        return set()
    turns = Counter(round(math.degrees(angle)) % 360 for angle in angles.values())
    page_turn = math.radians(turns.most_common(1)[0][0])
    return {i for i, angle in angles.items() if _angle_apart(angle, page_turn) > _TURN_TOLERANCE}


def hidden_chars(page: pdfium.PdfPage, textpage: ctypes.c_void_p, count: int) -> set[int]:
    """Indices of the text page's characters a reader does not see (see the module's rules)."""
    crop_left, crop_bottom, crop_right, crop_top = page.get_cropbox()
    paint = _Paint(page, textpage)
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    unseen: set[int] = set()
    outside: set[int] = set()
    angles: dict[int, float] = {}
    for index in range(count):
        code = pdfium_c.FPDFText_GetUnicode(textpage, index)
        if code <= 0x20 or pdfium_c.FPDFText_IsGenerated(textpage, index) == 1:
            continue  # spaces and line breaks follow their words
        pdfium_c.FPDFText_GetCharBox(textpage, index, left, right, bottom, top)
        x, y = (left.value + right.value) / 2, (bottom.value + top.value) / 2
        if not (crop_left <= x <= crop_right and crop_bottom <= y <= crop_top):
            outside.add(index)
        angle = pdfium_c.FPDFText_GetCharAngle(textpage, index)
        if angle >= 0:
            angles[index] = angle
        if not paint.shows(index, x, y):
            unseen.add(index)
    shown = max(len(angles), 1)
    for odd in (outside, _turned(angles)):
        if len(odd) * 2 < shown:  # most characters odd: the box or the page's turn is, not they
            unseen |= odd
    return unseen
