"""A PDF page's words read from its picture (OCR), as the same text runs the text layer gives.

A scanned page has no text layer (or a garbage one, see `pdf_text_quality`): it is rendered with
PDFium, its rules whitened (`without_rules`), and read by Tesseract (the Debian packages
`tesseract-ocr`, `tesseract-ocr-eng` and `tesseract-ocr-osd`, installed by `make install`); a
page scanned on its side is turned upright by Tesseract's orientation detection when its words
are not trusted as read. Tesseract was measured against RapidOCR's PP-OCRv4 on rendered
born-digital pages
(`benchmarks/pdf_ocr.py`, figures in docs/results.md): more characters right, faster per page.

Tesseract's words keep its line grouping; one line becomes one run `[x0, top, x1, bottom, size,
bold, text, mono, italic]` in points, cut where the gap between two words is wider than the gap
that separates table cells in the text layer, so `parsers.pdf` applies the same heading,
paragraph and table rules to a scan as to a born-digital page. The size is the font size the
words' ink heights imply (by their letters: `_EM_SHARE`), the box the font's ascent and descent
around the line's baseline, as the text layer's boxes are; OCR does not see weight or slant, so
bold, mono and italic are False.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image

# 3 x 72 = 216 dpi: characters right 0.949 at 144 dpi, 0.954 at 216, 0.958 at 300, in 1.19,
# 1.40 and 1.66 s a page (docs/results.md, "Scanned pages (OCR)")
OCR_SCALE = 3.0
TESSERACT = "tesseract"
DEFAULT_OCR_LANGUAGES = "eng"
# Tesseract's language codes joined by "+" ("fra+eng"): each needs its data package (tesseract-ocr-fra)
OCR_LANGUAGES_PATTERN = r"^[A-Za-z_]+(?:\+[A-Za-z_]+)*$"
# a pixel darker than this is ink; a page with fewer ink pixels than this share prints nothing
_BLANK_LEVEL = 160
_MIN_INK_SHARE = 0.0005
_BLANK_SCALE = 0.5
_MIN_CONFIDENCE = 30.0  # Tesseract's words below this (0-100) are specks and rules read as letters
# A page whose kept words average less confidence than this (weighted by their characters) was
# not read: English scans read at 83 to 96 (FinanceBench's scanned exhibit, typewritten and
# browser-printed pages), a page in a script `eng` has no data for (Japanese slides) at 52 to 70,
# a page turned on its side at 41; its words would be indexed as junk
_MIN_PAGE_CONFIDENCE = 75.0
_CELL_GAP_EMS = 1.2  # the text layer's rule (pdf_extract): a wider gap between words separates cells
_TIMEOUT_S = 120
_SCAN_SHARE = 0.5  # a picture over half the page is a scan of it
_ROTATE = re.compile(r"^Rotate: (\d+)$", re.MULTILINE)  # Tesseract's orientation detection
# a dark run longer than this (points) is a rule: across (axis 1) 20 pt, about two words' width of
# an underline but longer than any letter's bar; along (axis 0) 30 pt, taller than a 24-point
# capital's stem
_RULE_POINTS = {1: 20.0, 0: 30.0}
# Share of the em a word's ink spans, by (has an ascender or capital, has a descender): Helvetica
# and Times draw capitals and ascenders about 0.70 em above the baseline, descenders 0.21 below,
# lower-case letters 0.50 high
_EM_SHARE = {(True, True): 0.91, (True, False): 0.70, (False, True): 0.71, (False, False): 0.50}
_DEPTH = 0.21  # a descender's depth below the baseline
_ASCENDERS = set("bdfhklt")
_DESCENDERS = set("gjpqy")
# the text layer's box of a line: the font's ascent above the baseline and its descent below
_ASCENT, _DESCENT = 0.93, 0.25


class OcrError(RuntimeError):
    """The OCR engine is not installed, failed or ran out of time; the message says which."""


@dataclass(frozen=True, slots=True)
class Word:
    left: float
    top: float
    right: float
    bottom: float
    text: str
    line: tuple[int, int, int]  # Tesseract's (block, paragraph, line)
    confidence: float = 100.0  # Tesseract's, 0-100


def is_blank(page: pdfium.PdfPage) -> bool:
    """Whether the page prints nothing (no dark pixels): there is nothing for OCR to read."""
    image = page.render(scale=_BLANK_SCALE, grayscale=True).to_pil().convert("L")
    histogram = image.histogram()
    dark = sum(histogram[:_BLANK_LEVEL])
    return dark < _MIN_INK_SHARE * image.width * image.height


def covered_by_image(page: pdfium.PdfPage) -> bool:
    """Whether one picture covers at least `_SCAN_SHARE` of the page: a scan, perhaps with a few
    words of text layer stamped on it (a page number, a filing stamp) that are not its content."""
    width, height = page.get_size()
    for image in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE]):
        left, bottom, right, top = image.get_bounds()
        if (right - left) * (top - bottom) >= _SCAN_SHARE * width * height:
            return True
    return False


@lru_cache(maxsize=1)
def installed_languages() -> frozenset[str]:
    """The language data Tesseract has (`tesseract --list-langs`); empty without Tesseract."""
    if shutil.which(TESSERACT) is None:
        return frozenset()
    done = subprocess.run([TESSERACT, "--list-langs"], capture_output=True, timeout=_TIMEOUT_S, check=False)
    return frozenset(line.strip() for line in done.stdout.decode("utf-8", "replace").splitlines()[1:] if line.strip())


def tesseract_words(png: bytes, scale: float, languages: str = DEFAULT_OCR_LANGUAGES) -> list[Word]:
    """The words Tesseract reads in a PNG rendered at `scale` pixels per point, boxes in points,
    with the data of `languages` ("eng", "fra+eng")."""
    if shutil.which(TESSERACT) is None:
        raise OcrError("OCR needs Tesseract: apt-get install tesseract-ocr tesseract-ocr-eng (make install)")
    missing = [code for code in languages.split("+") if code not in installed_languages()]
    if missing:
        packages = " ".join(f"tesseract-ocr-{code.lower().replace('_', '-')}" for code in missing)
        raise OcrError(f"Tesseract has no language data for {'+'.join(missing)}: apt-get install {packages}")
    # one OpenMP thread (`env` sets it for Tesseract alone): documents are read in parallel by
    # processes already, and Tesseract's own threads on a busy core make it several times slower
    command = ["env", "OMP_THREAD_LIMIT=1", TESSERACT, "stdin", "stdout", "-l", languages, "--psm", "3", "tsv"]
    try:
        done = subprocess.run(command, input=png, capture_output=True, timeout=_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise OcrError(f"Tesseract took over {_TIMEOUT_S} s on the page") from None
    if done.returncode != 0:
        raise OcrError(f"Tesseract failed: {done.stderr.decode('utf-8', 'replace').strip()[:300]}")
    words = []
    for row in csv.DictReader(io.StringIO(done.stdout.decode("utf-8", "replace")), delimiter="\t", quoting=3):
        text = (row.get("text") or "").strip()
        if row.get("level") != "5" or not text or float(row.get("conf") or -1) < _MIN_CONFIDENCE:
            continue
        left, top = int(row["left"]) / scale, int(row["top"]) / scale
        right, bottom = left + int(row["width"]) / scale, top + int(row["height"]) / scale
        line = (int(row["block_num"]), int(row["par_num"]), int(row["line_num"]))
        words.append(Word(left, top, right, bottom, text, line, float(row["conf"])))
    return words


def _em(word: Word) -> float | None:
    """The font size a word's ink height implies: the share of the em its letters span (ascenders
    and capitals to descenders, about Helvetica's and Times's), None for a word without letters or digits."""
    letters = [ch for ch in word.text if ch.isalnum()]
    if not letters:
        return None
    tall = any(ch in _ASCENDERS or ch.isupper() or ch.isdigit() for ch in letters)
    deep = any(ch in _DESCENDERS for ch in letters)
    share = _EM_SHARE[tall, deep]
    return (word.bottom - word.top) / share


def words_to_runs(words: list[Word]) -> list[list[object]]:
    """OCR words as text runs: one per Tesseract line, cut at a gap wider than `_CELL_GAP_EMS`
    font sizes. The run's box is what the text layer gives for the same line (ascent to descent
    around its baseline), so the paragraph rules' line gaps mean the same for both."""
    lines: dict[tuple[int, int, int], list[Word]] = {}
    for word in words:
        lines.setdefault(word.line, []).append(word)
    runs: list[list[object]] = []
    for line_words in lines.values():
        line_words.sort(key=lambda w: w.left)
        ems = sorted(em for em in map(_em, line_words) if em)
        size = round(ems[len(ems) // 2] * 2) / 2 if ems else max(w.bottom - w.top for w in line_words)
        shallow = [w.bottom for w in line_words if not any(ch in _DESCENDERS for ch in w.text)]
        baseline = max(shallow) if shallow else max(w.bottom for w in line_words) - _DEPTH * size
        top, bottom = baseline - _ASCENT * size, baseline + _DESCENT * size
        run: list[Word] = []
        for word in line_words:
            if run and word.left - run[-1].right > _CELL_GAP_EMS * size:
                runs.append(_run(run, top, bottom, size))
                run = []
            run.append(word)
        runs.append(_run(run, top, bottom, size))
    return runs


def _run(words: list[Word], top: float, bottom: float, size: float) -> list[object]:
    left, right = min(w.left for w in words), max(w.right for w in words)
    text = " ".join(w.text for w in words)
    return [round(left, 1), round(top, 1), round(right, 1), round(bottom, 1), size, False, text, False, False]


def without_rules(image: Image.Image, scale: float) -> Image.Image:
    """The grayscale picture with its long straight lines whitened: table rules, underlines and
    box edges. Tesseract takes a rule touching text for part of a letter, or the line a region's
    edge, and drops the words beside it (a ruled table read 0.28 of its characters right, 0.96
    with its rules gone; see docs/documents.md). A rule is a run of dark pixels longer than
    `_RULE_POINTS` (across, along the axis): no letter's stroke is that long."""
    from scipy import ndimage  # only scanned pages need it

    pixels = np.asarray(image.convert("L"))
    dark = (pixels < _BLANK_LEVEL).astype(np.uint8)
    out = pixels.copy()
    for axis, points in _RULE_POINTS.items():
        length = max(int(points * scale), 2)
        # an opening with a line `length` long: the dark pixels that lie on such a run
        runs = ndimage.maximum_filter1d(ndimage.minimum_filter1d(dark, length, axis=axis), length, axis=axis)
        out[runs.astype(bool)] = 255
    return Image.fromarray(out)


def page_image(page: pdfium.PdfPage, scale: float = OCR_SCALE) -> Image.Image:
    """The page as OCR reads it: rendered in grayscale at `scale` pixels per point, rules removed."""
    return without_rules(page.render(scale=scale, grayscale=True).to_pil(), scale)


@dataclass(frozen=True, slots=True)
class OcrReading:
    """A page's runs read by OCR, and how far its picture was turned (degrees clockwise: 0, 90,
    180 or 270) to read it upright; boxes are on the turned picture, so a quarter turn swaps the
    page's width and height."""

    runs: list[list[object]]
    turn: int = 0


def orientation_turn(png: bytes) -> int:
    """The degrees clockwise Tesseract's orientation detection (`osd` data, the Debian package
    tesseract-ocr-osd) turns the picture by to set its text upright; 0 where it finds none (too
    few letters, or the data is missing)."""
    command = ["env", "OMP_THREAD_LIMIT=1", TESSERACT, "stdin", "stdout", "--psm", "0", "-l", "osd"]
    try:
        done = subprocess.run(command, input=png, capture_output=True, timeout=_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return 0
    found = _ROTATE.search(done.stdout.decode("utf-8", "replace")) if done.returncode == 0 else None
    return int(found.group(1)) % 360 if found else 0


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def ocr_page(page: pdfium.PdfPage, scale: float = OCR_SCALE, languages: str = DEFAULT_OCR_LANGUAGES) -> OcrReading:
    """The page's text runs read by OCR, in Tesseract's reading order (empty: no words found).
    Words Tesseract trusts too little (a page set on its side, a script its data cannot read)
    are read again on the picture turned upright by its orientation detection; OcrError when
    they are still not trusted enough to be the page's text. `languages`: Tesseract's data to
    read with ("fra+eng" for French pages that quote English)."""
    image = page_image(page, scale)
    png = _png(image)
    words, turn = tesseract_words(png, scale, languages), 0
    if words and page_confidence(words) < _MIN_PAGE_CONFIDENCE and (found := orientation_turn(png)):
        turned = tesseract_words(
            _png(image.rotate(-found, expand=True)), scale, languages
        )  # PIL turns counter-clockwise
        if page_confidence(turned) > page_confidence(words):
            words, turn = turned, found
    confidence = page_confidence(words)
    if words and confidence < _MIN_PAGE_CONFIDENCE:
        raise OcrError(
            f"its words have a mean confidence of {confidence:.0f} of 100, under {_MIN_PAGE_CONFIDENCE:.0f}: "
            f"a script the '{languages}' language data does not read"
        )
    return OcrReading(words_to_runs(words), turn)


def page_confidence(words: list[Word]) -> float:
    """Tesseract's mean confidence in a page's words, each weighted by its characters."""
    chars = sum(len(word.text) for word in words)
    return sum(word.confidence * len(word.text) for word in words) / chars if chars else 0.0
