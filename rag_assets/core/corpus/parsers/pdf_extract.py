"""PDF bytes -> positioned text lines per page (and the outline), with pypdfium2 (PDFium).

Extraction runs once, at ingestion, because PDF is binary and the catalogue stores text: the
lines are kept as a compact JSON document (`PDF_LAYOUT_VERSION`), and `parsers.pdf` turns that
into blocks. Keeping the font statistics in the stored JSON means heading inference can change
without re-reading the PDFs. Each text run is `[x0, top, x1, bottom, size, bold, text, mono, italic]`
in points from the page's top-left corner (a page's ruled tables, when it has some, are under
`tables`: see `pdf_ruled_tables`; where it draws charts, their plots' boxes are under `plots`:
see `pdf_plots`); a wide gap between characters starts a new run,
except in monospaced text (code), where it becomes the spaces that fill it. Text a reader does
not see (invisible, white on white, outside the page's box, turned against its lines: see
`pdf_glyphs`) is left out, and letters set in small capitals read as the capitals they show.

A page without a text layer, or whose text layer is garbage (`pdf_text_quality`), is read by
OCR (`pdf_ocr`) unless the source says `ocr: off`; its runs have the same form, and the page is
listed under `ocr` (1-based). A page that prints something but gives no text either way is listed
under `unread` with the reason, and logged naming the file and the page. A PDF that cannot give
text is refused here with the reason: damaged or truncated files, password-protected ones, and
scanned pages that OCR cannot read (or with OCR off).
"""

from __future__ import annotations

import ctypes
import json
import logging
import math
import re
from dataclasses import dataclass, field

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from rag_assets.core.corpus.parsers.errors import ParseError
from rag_assets.core.corpus.parsers.pdf_document_info import metadata_title, outline_entries
from rag_assets.core.corpus.parsers.pdf_frame import display_box
from rag_assets.core.corpus.parsers.pdf_glyphs import page_glyphs
from rag_assets.core.corpus.parsers.pdf_ocr import (
    DEFAULT_OCR_LANGUAGES,
    OCR_LANGUAGES_PATTERN,
    OcrError,
    covered_by_image,
    is_blank,
    ocr_page,
)
from rag_assets.core.corpus.parsers.pdf_plots import plot_boxes
from rag_assets.core.corpus.parsers.pdf_ruled_tables import MIN_RULES, ruled_tables, vertical_rules
from rag_assets.core.corpus.parsers.pdf_text_quality import MIN_CHARS, text_is_garbage

PDF_LAYOUT_VERSION = 5
MOSTLY_UNMAPPED = 0.5  # share of a page's glyphs without Unicode beyond which its layer is garbage
PDF_MAGIC = b"%PDF-"
_EOF_MARKER = b"%%EOF"
_EOF_WINDOW = 4096  # the marker must be near the end; a cut-off download lacks it
# A gap between two characters of one line wider than this many font sizes separates cells.
_CELL_GAP_EMS = 1.2
_BOLD_NAMES = ("bold", "black", "heavy", "semibold", "demi")
_BOLD_WEIGHT = 600
_FONT_NAME_BUFFER = 256
_FIXED_PITCH = 1  # PDF font descriptor flag: all glyphs have the same width
_MONO_NAMES = ("mono", "courier", "consol", "menlo")
_ITALIC = 64  # PDF font descriptor flag: italic glyphs
_ITALIC_NAMES = ("italic", "oblique")
OCR_MODES = ("auto", "off")  # `sources.ocr`: read scanned pages by OCR, or report them unreadable
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ExtractedPdf:
    layout: str  # the JSON document `parsers.pdf` reads
    plain_text: str  # the lines' text, for word counts and titles
    ocr_pages: tuple[int, ...] = ()  # 1-based pages read by OCR
    unread_pages: tuple[tuple[int, str], ...] = field(default=())  # (1-based page, why no text came)


def _open(data: bytes) -> pdfium.PdfDocument:
    if PDF_MAGIC not in data[:1024]:
        raise ParseError("not a PDF file (no %PDF- header in its first 1 KB)")
    if _EOF_MARKER not in data[-_EOF_WINDOW:]:
        raise ParseError("truncated or damaged PDF: no %%EOF end marker (an incomplete download or copy?)")
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as err:
        message = str(err)
        if "password" in message.lower():
            raise ParseError("encrypted PDF: it needs a password to open; save an unprotected copy") from None
        raise ParseError(f"damaged PDF that PDFium cannot open ({message})") from None


def _is_bold(name: str, weight: int) -> bool:
    lowered = name.lower()
    return weight >= _BOLD_WEIGHT or any(word in lowered for word in _BOLD_NAMES)


class _Fonts:
    """(bold, monospaced) of a character's font, cached per text object (its characters share one font)."""

    def __init__(self, textpage: ctypes.c_void_p) -> None:
        self._textpage = textpage
        self._styles: dict[int, tuple[bool, bool, bool]] = {}
        self._buffer = ctypes.create_string_buffer(_FONT_NAME_BUFFER)
        self._flags = ctypes.c_int()

    def style(self, index: int) -> tuple[bool, bool, bool]:
        obj = pdfium_c.FPDFText_GetTextObject(self._textpage, index)
        key = ctypes.addressof(obj.contents) if obj else 0  # the object's address (a cast is 10x slower)
        known = self._styles.get(key)
        if known is None:
            size = pdfium_c.FPDFText_GetFontInfo(
                self._textpage, index, self._buffer, _FONT_NAME_BUFFER, ctypes.byref(self._flags)
            )
            name = self._buffer.raw[: max(size - 1, 0)].decode("utf-8", "replace") if size else ""
            mono = bool(self._flags.value & _FIXED_PITCH) or any(w in name.lower() for w in _MONO_NAMES)
            italic = bool(self._flags.value & _ITALIC) or any(w in name.lower() for w in _ITALIC_NAMES)
            known = (_is_bold(name, pdfium_c.FPDFText_GetFontWeight(self._textpage, index)), mono, italic)
            self._styles[key] = known
        return known


class _Segment:
    """The characters of one run of text on a line, with its box and font statistics."""

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.box = [float("inf"), float("inf"), float("-inf"), float("-inf")]
        self.sizes: dict[float, int] = {}
        self.bold_chars = 0
        self.right: float | None = None
        self.size = 0.0
        self.mono_chars = 0
        self.italic_chars = 0
        self.bold = False  # the last character's weight
        self.italic = False  # the last character's slant

    @property
    def mono(self) -> bool:
        return self.mono_chars > 0 and self.mono_chars * 2 > sum(self.sizes.values())

    def add(
        self,
        char: str,
        left: float,
        top: float,
        right: float,
        bottom: float,
        size: float,
        bold: bool,
        mono: bool,
        italic: bool = False,
    ) -> None:
        if mono and self.mono and self.right is not None:
            # code keeps its spacing: a monospaced gap is as many spaces as glyphs would fill it
            width = max(right - left, 0.1)
            gap = round((left - self.right) / width)
            if self.chars and self.chars[-1] == " ":
                self.chars.pop()
            self.chars.append(" " * max(gap, 0))
        self.mono_chars += mono
        self.chars.append(char)
        self.right, self.size, self.bold, self.italic = right, size, bold, italic
        box = self.box
        box[0], box[1], box[2], box[3] = min(box[0], left), min(box[1], top), max(box[2], right), max(box[3], bottom)
        self.sizes[size] = self.sizes.get(size, 0) + 1
        self.bold_chars += bold
        self.italic_chars += italic

    def row(self) -> list[object] | None:
        text = "".join(self.chars).strip()
        if not text or not self.sizes:
            return None
        size = max(self.sizes, key=self.sizes.__getitem__)
        bold = self.bold_chars * 2 > sum(self.sizes.values())
        italic = self.italic_chars * 2 > sum(self.sizes.values())
        return [*(round(v, 1) for v in self.box), size, bold, text, self.mono, italic]


@dataclass(frozen=True)
class TextLayer:
    """A page's text runs in PDFium's text order, each `[x0, top, x1, bottom, size, bold, text,
    mono, italic]`; the share of its printable glyphs that have no Unicode (a font without a map:
    a page whose text is mostly such glyphs has no usable text layer); and whether the runs are
    placed on the page as displayed (a /Rotate that sets turned text upright) rather than in the
    page's own space."""

    runs: list[list[object]]
    unmapped: float
    displayed: bool


def text_layer(page: pdfium.PdfPage) -> TextLayer:  # noqa: C901 — one pass over the characters, one branch per kind of character
    """The page's text runs (`TextLayer`).

    A line is cut into separate runs where the next character is far to the right (a table
    cell, the other column of a two-column page) or back to the left: `parsers.pdf` decides
    whether such runs are cells of one row or lines of different columns.
    """
    height = page.get_height()
    textpage = page.get_textpage()
    raw = textpage.raw
    fonts = _Fonts(raw)
    rect = pdfium_c.FS_RECTF()
    matrix = pdfium_c.FS_MATRIX()
    lines: list[list[object]] = []
    segment = _Segment()
    printable = unmapped = 0

    def close() -> _Segment:
        row = segment.row()
        if row is not None:
            lines.append(row)
        return _Segment()

    try:
        count = textpage.count_chars()
        glyphs = page_glyphs(page, raw, count)  # hidden: invisible, white on white, off the page, turned
        displayed = display_box(page, glyphs.turn)
        for index in range(count):
            if index in glyphs.hidden:
                continue
            code = pdfium_c.FPDFText_GetUnicode(raw, index)
            char = chr(code) if 0 < code < 0x110000 else ""
            if index in glyphs.small_caps:
                char = char.upper()  # printed as a capital
            if char == "\x02":  # PDFium's mark for a hyphen that ends a line: keep it as one
                segment.chars.append("-")
                continue
            if char == "\n":
                segment = close()
                continue
            if char == "\r":
                continue
            if pdfium_c.FPDFText_IsGenerated(raw, index) == 1 or char.isspace():
                if segment.chars and segment.chars[-1] != " " and not segment.mono:
                    segment.chars.append(" ")
                continue
            if not char.isprintable():
                continue
            printable += 1
            if pdfium_c.FPDFText_HasUnicodeMapError(raw, index) == 1:
                unmapped += 1
                continue  # no Unicode for this glyph (a figure's subset font): its code is noise
            # The loose box spans the glyph's advance and the font's ascent to descent, so letters
            # of one word touch; the size a reader sees is the font size times the text matrix's
            # vertical scale (many PDFs draw with size 1 and scale the matrix).
            pdfium_c.FPDFText_GetLooseCharBox(raw, index, rect)
            if displayed is None:
                left, top, right, bottom = rect.left, height - rect.top, rect.right, height - rect.bottom
            else:
                left, top, right, bottom = displayed(rect)
            pdfium_c.FPDFText_GetMatrix(raw, index, matrix)
            size = round(pdfium_c.FPDFText_GetFontSize(raw, index) * (math.hypot(matrix.c, matrix.d) or 1.0), 1)
            bold, mono, italic = fonts.style(index)
            if segment.right is not None:
                gap = left - segment.right
                em = max(min(size, segment.size), 1.0)  # a large glyph (a bullet) does not widen the gap allowed
                if (gap > _CELL_GAP_EMS * em and not (mono and segment.mono)) or gap < -2 * em:
                    segment = close()
                elif (bold != segment.bold or italic != segment.italic) and segment.chars[-1:] == [" "]:
                    segment = close()  # a bold or italic lead-in ("Exceptions.") is a run of its own
            segment.add(char, left, top, right, bottom, size, bold, mono, italic)
        close()
    finally:
        textpage.close()
    return TextLayer(lines, unmapped / printable if printable else 0.0, displayed is not None)


def text_layer_runs(page: pdfium.PdfPage) -> list[list[object]]:
    """The page's text runs from its text layer alone (no OCR), as stored."""
    return text_layer(page).runs


STAMPED = "a scan under a few stamped words"


def layer_fault(page: pdfium.PdfPage, lines: list[list[object]], unmapped: float) -> str | None:
    """Why a page's text layer (`TextLayer`'s runs and unmapped share) is not its text, so OCR
    should read it: "its text layer is garbage" (by the statistics of `pdf_text_quality`, or most
    glyphs without Unicode: a page set in a font with no map, its few mapped words a caption),
    "no text layer", or `STAMPED` (fewer than `MIN_CHARS` characters over a page-sized picture);
    None where the layer is the page's text."""
    text = "\n".join(str(line[6]) for line in lines)
    if unmapped > MOSTLY_UNMAPPED or (lines and text_is_garbage(text)):
        return "its text layer is garbage"
    if not lines:
        return "no text layer"
    if len("".join(text.split())) < MIN_CHARS and covered_by_image(page):
        return STAMPED
    return None


@dataclass(frozen=True)
class PageReading:
    """One page as read: its runs, whether OCR read them, why the page gave no text (None when
    it did, or when it is blank), whether the runs are placed on the page as displayed, and how
    far OCR turned the page's picture to read it upright (degrees clockwise)."""

    runs: list[list[object]]
    by_ocr: bool = False
    problem: str | None = None
    displayed: bool = False
    turn: int = 0


def _read_page(page: pdfium.PdfPage, ocr: str, languages: str = DEFAULT_OCR_LANGUAGES) -> PageReading:
    """One page: its text layer, else OCR's words when `ocr` is auto and the layer is missing,
    garbage, or a few words stamped on a scan (fewer than `MIN_CHARS` characters over a
    page-sized picture, where OCR reads more than twice as many), unless OCR gives no words it
    trusts (then the layer stays); OCR reads Tesseract's `languages`. A blank page gives nothing
    and no reason."""
    layer = text_layer(page)
    lines = layer.runs
    kept = PageReading(lines, displayed=layer.displayed)
    fault = layer_fault(page, lines, layer.unmapped)
    if fault is None:
        return kept
    if ocr == "off":
        return (
            kept
            if lines or is_blank(page)
            else PageReading([], problem="no text layer (a scanned page) and OCR is off")
        )
    if not lines and is_blank(page):
        return PageReading([])
    stamped = fault == STAMPED
    try:
        words = ocr_page(page, languages=languages)
    except OcrError as err:
        if lines:
            # no trusted reading of the picture (Tesseract missing, or its words untrusted: a page
            # of formulas in Japanese looks like garbage to the word statistics): the page's own
            # text layer is what there is
            return kept
        return PageReading([], problem=f"{fault} and OCR failed ({err})")
    if stamped and _chars(words.runs) <= 2 * _chars(lines) + MIN_CHARS:
        # the picture holds no more words than the layer (a born-digital cover's photo and
        # title): the layer is the page, with its fonts
        return kept
    if words.runs:
        return PageReading(words.runs, by_ocr=True, turn=words.turn)
    return PageReading([], problem=f"{fault} and OCR found no words")


def _chars(runs: list[list[object]]) -> int:
    return sum(len("".join(str(run[6]).split())) for run in runs)


def _read_pages(
    document: pdfium.PdfDocument, ocr: str, languages: str = DEFAULT_OCR_LANGUAGES
) -> tuple[list[dict[str, object]], list[int], list[int], list[tuple[int, str]]]:
    """(pages as stored, indexes of pages with ruled tables, 1-based pages read by OCR,
    (1-based page, why it gave no text) for the unreadable ones)."""
    pages: list[dict[str, object]] = []
    ruled: list[int] = []
    read_by_ocr: list[int] = []
    unread: list[tuple[int, str]] = []
    for index in range(len(document)):
        page = document[index]
        try:
            width, height = page.get_size()
            reading = _read_page(page, ocr, languages)
            lines = reading.runs
            rotation = page.get_rotation()
            # pdfplumber places its cells on the page as displayed (it applies /Rotate): they meet
            # the text where the text is read in that frame too, or where nothing turns the page.
            # The plotted paths are in the page's own space.
            text_layer_read = bool(lines) and not reading.by_ocr
            turned = reading.displayed and rotation in (90, 270)
            if (
                text_layer_read
                and (reading.displayed or not rotation)
                and vertical_rules(page, turned=turned) >= MIN_RULES
            ):
                ruled.append(index)
            plots = plot_boxes(page) if text_layer_read and not rotation else []
        finally:
            page.close()
        if reading.turn in (90, 270):  # read upright on the picture turned a quarter
            width, height = height, width
        if reading.by_ocr:
            read_by_ocr.append(index + 1)
        if reading.problem:
            unread.append((index + 1, reading.problem))
        pages.append({"w": round(width, 1), "h": round(height, 1), "lines": lines})
        if plots:
            pages[-1]["plots"] = plots
    return pages, ruled, read_by_ocr, unread


def extract_pdf(
    data: bytes,
    max_pages: int | None = None,
    *,
    ocr: str = "auto",
    name: str = "",
    ocr_languages: str = DEFAULT_OCR_LANGUAGES,
) -> ExtractedPdf:
    """The positioned lines of every page; ParseError naming why when the PDF gives no text or
    has more than `max_pages` pages (counted before any page is read). `ocr`: `auto` reads pages
    without a usable text layer by OCR (reading Tesseract's `ocr_languages`: "eng", "fra+eng"),
    `off` reports them unreadable; `name`: the file, for the log."""
    if ocr not in OCR_MODES:
        raise ValueError(f"ocr must be one of {', '.join(OCR_MODES)}, not {ocr!r}")
    if not re.match(OCR_LANGUAGES_PATTERN, ocr_languages):
        raise ValueError(
            f"ocr_languages must be Tesseract language codes joined by '+' (fra+eng), not {ocr_languages!r}"
        )
    document = _open(data)
    try:
        if max_pages is not None and len(document) > max_pages:
            raise ParseError(
                f"PDF of {len(document)} pages, over the limit of {max_pages} pages per document "
                "(raise max_document_pages to accept it)"
            )
        pages, ruled, read_by_ocr, unread = _read_pages(document, ocr, ocr_languages)
        if not pages:
            raise ParseError("PDF has no pages")
        if not any(page["lines"] for page in pages):
            raise ParseError(_no_text(len(pages), unread))
        for number, problem in unread:
            _log.warning("%s page %d: no text read: %s", name or "PDF", number, problem)
        for index, tables in ruled_tables(data, ruled).items():
            pages[index]["tables"] = tables
        outline = outline_entries(document)
        title = metadata_title(document)
    finally:
        document.close()
    layout = json.dumps(
        {"pdf_layout": PDF_LAYOUT_VERSION, "title": title, "outline": outline, "pages": pages}
        | ({"ocr": read_by_ocr} if read_by_ocr else {})
        | ({"unread": [list(item) for item in unread]} if unread else {}),
        ensure_ascii=False,
        separators=(",", ":"),
    )
    plain = "\n".join(str(line[6]) for page in pages for line in page["lines"])  # type: ignore[union-attr]
    return ExtractedPdf(layout, plain, tuple(read_by_ocr), tuple(unread))


def unread_pages(layout: str) -> list[tuple[int, str]]:
    """(1-based page, why it gave no text) of a stored layout's unreadable pages."""
    if '"unread":' not in layout:  # most PDFs: no need to parse megabytes of JSON
        return []
    return [(int(page), str(why)) for page, why in json.loads(layout).get("unread", [])]


def _no_text(pages: int, unread: list[tuple[int, str]]) -> str:
    """Why a PDF gave no text on any page: the first unreadable page's reason, if any."""
    if not unread:
        return f"no text on any of its {pages} page(s): every page is blank"
    number, problem = unread[0]
    return f"no text on any of its {pages} page(s): a scanned or image-only PDF (page {number}: {problem})"
