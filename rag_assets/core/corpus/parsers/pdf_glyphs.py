"""Which characters of a PDF page a reader never sees, so extraction leaves them out, and which
are set in small capitals, so extraction reads them as the capitals the page shows.

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

A font of small capitals (LaTeX's "CMCSC10", "LMRomanCaps10", a "...-SC700" cut) draws its
lower-case letters as small capitals: "1. A section" prints as "1. A SECTION", and a section
title so set is a heading by its type (`pdf_headings`).
"""

from __future__ import annotations

import ctypes
import math
import re
from collections import Counter
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

_HIDDEN_MODES = (pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE, pdfium_c.FPDF_TEXTRENDERMODE_CLIP)
_WHITE = 250  # each of red, green and blue at least this: white (or near white) on paper
_TURN_TOLERANCE = math.radians(3)  # a glyph turned more than this from the page's lines is not on them
_MAX_NESTING = 4  # form XObjects inside form XObjects looked into for backgrounds
# a small-capitals font by its name ("CMCSC10", "LMRomanCaps10-Regular", "Garamond-SC700"); a
# Chinese font's "SC" (simplified Chinese: "PingFangSC-Regular") is no separate word of the name
_SMALL_CAPS_FONT = re.compile(r"smallcap|caps|csc\d|[-_]sc(?:\d|$|[-_])", re.IGNORECASE)
_FONT_NAME_BUFFER = 256


@dataclass(frozen=True, slots=True)
class PageGlyphs:
    """What a page's characters look like to a reader: indices of those not seen, and of those
    set in small capitals; the angle (degrees, clockwise) most of them are drawn at."""

    hidden: set[int]
    small_caps: set[int]
    turn: int = 0


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


class _Scratch:
    """ctypes out-parameters reused for every text object of a page (a filing's page holds
    hundreds), and the small-capitals verdict of each font, by the font's address."""

    def __init__(self) -> None:
        self.rgba = [ctypes.c_uint() for _ in range(4)]
        self.bounds = [ctypes.c_float() for _ in range(4)]
        self.name = ctypes.create_string_buffer(_FONT_NAME_BUFFER)
        self.fonts: dict[int, bool] = {}

    def small_caps(self, obj: ctypes.c_void_p, textpage: ctypes.c_void_p, index: int) -> bool:
        font = pdfium_c.FPDFTextObj_GetFont(obj)
        key = ctypes.addressof(font.contents) if font else 0
        known = self.fonts.get(key)
        if known is None:
            size = pdfium_c.FPDFText_GetFontInfo(textpage, index, self.name, _FONT_NAME_BUFFER, None)
            name = self.name.raw[: max(size - 1, 0)].decode("utf-8", "replace")
            known = self.fonts[key] = bool(_SMALL_CAPS_FONT.search(name))
        return known


class _TextObject:
    """What one text object's characters share: its render mode, fill, turn and box (PDFium
    draws each object with one state), read once per object rather than once per character."""

    __slots__ = ("angle", "box", "mode", "small_caps", "unfilled", "white")

    def __init__(self, obj: ctypes.c_void_p, textpage: ctypes.c_void_p, index: int, scratch: _Scratch) -> None:
        red, green, blue, alpha = scratch.rgba
        self.mode = pdfium_c.FPDFTextObj_GetTextRenderMode(obj)
        filled = pdfium_c.FPDFPageObj_GetFillColor(obj, red, green, blue, alpha)
        self.unfilled = bool(filled) and alpha.value == 0  # fully transparent
        self.white = bool(filled) and min(red.value, green.value, blue.value) >= _WHITE
        self.angle = pdfium_c.FPDFText_GetCharAngle(textpage, index)
        left, bottom, right, top = scratch.bounds
        known = pdfium_c.FPDFPageObj_GetBounds(obj, left, bottom, right, top)
        self.box = (left.value, bottom.value, right.value, top.value) if known else None
        self.small_caps = scratch.small_caps(obj, textpage, index)

    def shows(self, backgrounds: _Backgrounds) -> bool:
        """Whether the object's glyphs are painted where a reader sees them, judged at the middle
        of its box (one word or line: what lies under its middle lies under it)."""
        middle = None if self.box is None else ((self.box[0] + self.box[2]) / 2, (self.box[1] + self.box[3]) / 2)
        if self.mode in _HIDDEN_MODES:  # over an image: a scan's OCR layer, kept
            return middle is not None and backgrounds.image_at(*middle)
        if self.unfilled:
            return False
        return not self.white or middle is None or backgrounds.painted_at(*middle)

    def inside(self, crop: tuple[float, float, float, float]) -> bool | None:
        """True when the object lies within the crop box, False when wholly outside, None when it straddles."""
        if self.box is None:
            return None
        left, bottom, right, top = self.box
        if left >= crop[0] and bottom >= crop[1] and right <= crop[2] and top <= crop[3]:
            return True
        if right < crop[0] or left > crop[2] or top < crop[1] or bottom > crop[3]:
            return False
        return None


def _page_turn(objects: dict[int, _TextObject], chars: dict[int, list[int]]) -> int:
    """The angle (degrees, clockwise) most of the page's characters are drawn at; 0 for none."""
    turns: Counter[int] = Counter()
    for key, state in objects.items():
        turns[round(math.degrees(state.angle)) % 360] += len(chars[key])
    return turns.most_common(1)[0][0] if turns else 0


def _turned(objects: dict[int, _TextObject], chars: dict[int, list[int]], turn: int) -> set[int]:
    """The characters turned away from the page's lines: from the angle most characters share."""
    page_turn = math.radians(turn)
    return {
        index
        for key, state in objects.items()
        if _angle_apart(state.angle, page_turn) > _TURN_TOLERANCE
        for index in chars[key]
    }


def _object_chars(textpage: ctypes.c_void_p, count: int) -> tuple[dict[int, _TextObject], dict[int, list[int]]]:
    """The page's text objects (by address) and the indices of each one's characters; spaces and
    line breaks PDFium generated belong to none."""
    objects: dict[int, _TextObject] = {}
    chars: dict[int, list[int]] = {}
    scratch = _Scratch()
    for index in range(count):
        obj = pdfium_c.FPDFText_GetTextObject(textpage, index)
        if not obj:
            continue
        key = ctypes.addressof(obj.contents)
        members = chars.get(key)
        if members is None:
            objects[key] = _TextObject(obj, textpage, index, scratch)
            members = chars[key] = []
        members.append(index)
    return objects, chars


def page_glyphs(page: pdfium.PdfPage, textpage: ctypes.c_void_p, count: int) -> PageGlyphs:
    """The text page's characters a reader does not see, and those in small capitals (see the module's rules)."""
    objects, chars = _object_chars(textpage, count)
    small_caps = {index for key, state in objects.items() if state.small_caps for index in chars[key]}
    turn = _page_turn(objects, chars)
    return PageGlyphs(_hidden(page, textpage, objects, chars, turn), small_caps, turn)


def _hidden(
    page: pdfium.PdfPage,
    textpage: ctypes.c_void_p,
    objects: dict[int, _TextObject],
    chars: dict[int, list[int]],
    turn: int,
) -> set[int]:
    crop = page.get_cropbox()
    backgrounds = _Backgrounds(page)
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    unseen: set[int] = set()
    outside: set[int] = set()
    for key, state in objects.items():
        members = chars[key]
        if not state.shows(backgrounds):
            unseen.update(members)
        inside = state.inside(crop)
        if inside is False:
            outside.update(members)
        elif inside is None:  # across the box's edge: glyph by glyph, by where each one's middle sits
            for index in members:
                pdfium_c.FPDFText_GetCharBox(textpage, index, left, right, bottom, top)
                x, y = (left.value + right.value) / 2, (bottom.value + top.value) / 2
                if not (crop[0] <= x <= crop[2] and crop[1] <= y <= crop[3]):
                    outside.add(index)
    shown = max(sum(map(len, chars.values())), 1)
    for odd in (outside, _turned(objects, chars, turn)):
        if len(odd) * 2 < shown:  # most characters odd: the box or the page's turn is, not they
            unseen |= odd
    return unseen
