"""Cleaning a PDF's positioned lines before they become blocks: fragments, margins, columns.

Works on the per-page line lists `pdf_extract` stores; each step is one function so the tests
can hold each rule to a small hand-made page. Coordinates are points from the page's top-left.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

_MARGIN = 0.09  # top and bottom share of the page where running headers and footers live
_REPEAT_SHARE = 0.4  # a margin line on at least this share of the pages is a running header/footer
_PAGE_NUMBER = re.compile(
    r"^(?:page\s+)?[-–(\[]?\s*(?:\d{1,4}|[ivxlcdm]{1,7})\s*[-–)\]]?(?:\s*(?:of|/)\s*\d{1,4})?$", re.IGNORECASE
)
_DIGITS = re.compile(r"\d+")


@dataclass(slots=True)
class Line:
    """One text line: box in points, dominant font size, mostly-bold and monospaced flags, 1-based page."""

    x0: float
    top: float
    x1: float
    bottom: float
    size: float
    bold: bool
    text: str
    page: int
    mono: bool = False

    @property
    def height(self) -> float:
        return self.bottom - self.top


def page_lines(raw_lines: list[list[object]], page: int) -> list[Line]:
    """Stored `[x0, top, x1, bottom, size, bold, text, mono]` rows as Lines, duplicates dropped.

    Some PDFs draw a text twice (a fake bold, a shadow): the same text in the same box is kept once.
    """
    lines: list[Line] = []
    seen: set[tuple[object, ...]] = set()
    for row in raw_lines:
        x0, top, x1, bottom, size, bold, text, mono = row
        key = (round(float(x0)), round(float(top)), text)  # type: ignore[arg-type]
        if key in seen:
            continue
        seen.add(key)
        box = (float(x0), float(top), float(x1), float(bottom), float(size))  # type: ignore[arg-type]
        lines.append(Line(*box, bool(bold), str(text), page, bool(mono)))
    return lines


def merge_fragments(lines: list[Line]) -> list[Line]:
    """Join consecutive pieces of one printed line (PDFium breaks at superscripts, font changes)."""
    merged: list[Line] = []
    for line in lines:
        if merged:
            last = merged[-1]
            overlap = min(last.bottom, line.bottom) - max(last.top, line.top)
            gap = line.x0 - last.x1
            if overlap > 0.5 * min(last.height, line.height) and -2.0 <= gap <= 1.2 * max(last.size, line.size):
                joiner = "" if gap < 0.15 * line.size or line.text[:1] in ",.;:)" else " "
                weight_last, weight_line = len(last.text), len(line.text)
                last.text = f"{last.text}{joiner}{line.text}"
                last.x1 = max(last.x1, line.x1)
                last.top, last.bottom = min(last.top, line.top), max(last.bottom, line.bottom)
                if weight_line > weight_last:
                    last.size, last.bold = line.size, line.bold
                continue
        merged.append(line)
    return merged


def _margin_key(line: Line, height: float) -> tuple[str, int, int] | None:
    """What a running header or footer repeats from page to page: its text (digits aside), its
    size and its place (in 4-point bands); a heading near the top of a page that reads the same
    is not one (it is set larger), nor is a line of text that happens to open several pages."""
    if height <= 0 or _MARGIN * height < line.top < (1 - _MARGIN) * height:
        return None
    return _DIGITS.sub("#", " ".join(line.text.casefold().split())), round(line.size), round(line.top / 4)


def _repeats(counts: Counter[tuple[str, int, int]], key: tuple[str, int, int]) -> int:
    """Pages with this margin line in this band or the next ones (positions vary by a point or so)."""
    text, size, band = key
    return counts[text, size, band - 1] + counts[key] + counts[text, size, band + 1]


def drop_page_furniture(pages: list[list[Line]], heights: list[float]) -> list[list[Line]]:
    """Without running headers/footers (margin lines repeated across pages, digits ignored),
    bare page numbers in the margins, and vertical text (an arXiv stamp along the edge)."""
    counts: Counter[tuple[str, int, int]] = Counter()
    for lines, height in zip(pages, heights, strict=True):
        counts.update({key for line in lines if (key := _margin_key(line, height))})
    repeated = max(2, int(_REPEAT_SHARE * len(pages) + 0.999))
    kept_pages: list[list[Line]] = []
    for lines, height in zip(pages, heights, strict=True):
        kept: list[Line] = []
        for line in lines:
            key = _margin_key(line, height)
            if key is not None and (
                (_repeats(counts, key) >= repeated and len(pages) > 1) or _PAGE_NUMBER.match(line.text.strip())
            ):
                continue
            if line.height > 3 * max(line.x1 - line.x0, 1.0) and len(line.text) > 3:
                continue
            kept.append(line)
        kept_pages.append(kept)
    return kept_pages


def reading_order(lines: list[Line], width: float) -> list[Line]:
    """Lines in reading order: on a two-column page, the left column before the right one within
    each band between full-width lines (a title, a wide figure); one column pages keep the order.

    A page is two-column when at least a quarter of its lines sit wholly on each side of the
    middle and few lines cross it.
    """
    if len(lines) < 6 or width <= 0:
        return lines
    middle = width / 2
    left = [line for line in lines if line.x1 <= middle + 0.02 * width]
    right = [line for line in lines if line.x0 >= middle - 0.02 * width]
    crossing = len(lines) - len(left) - len(right)
    if len(left) < len(lines) / 4 or len(right) < len(lines) / 4 or crossing > len(lines) / 4:
        return lines
    ordered: list[Line] = []
    band: list[Line] = []

    def flush() -> None:
        ordered.extend(sorted((ln for ln in band if ln.x1 <= middle + 0.02 * width), key=lambda ln: ln.top))
        ordered.extend(sorted((ln for ln in band if ln.x1 > middle + 0.02 * width), key=lambda ln: ln.top))
        band.clear()

    for line in sorted(lines, key=lambda ln: ln.top):
        spans_middle = line.x0 < middle - 0.02 * width and line.x1 > middle + 0.02 * width
        if spans_middle:
            flush()
            ordered.append(line)
        else:
            band.append(line)
    flush()
    return ordered


def join_cells(lines: list[Line]) -> list[Line]:
    """Consecutive runs on one baseline with a wide gap between them (after reading order, so
    never two columns) are the cells of a table row: one line, cells separated by tabs."""
    joined: list[Line] = []
    for line in lines:
        if joined:
            last = joined[-1]
            overlap = min(last.bottom, line.bottom) - max(last.top, line.top)
            if overlap > 0.5 * min(last.height, line.height) and line.x0 > last.x1:
                last.text = f"{last.text}\t{line.text}"
                last.x1 = max(last.x1, line.x1)
                last.top, last.bottom = min(last.top, line.top), max(last.bottom, line.bottom)
                last.bold = last.bold and line.bold
                continue
        joined.append(line)
    return joined


def body_size(pages: list[list[Line]]) -> float:
    """The font size most characters are set in: the body text's, to which headings compare
    (code is set apart, often smaller, and in a manual may outweigh the prose)."""
    sizes: Counter[float] = Counter()
    for lines in pages:
        for line in lines:
            if not line.mono:
                sizes[round(line.size * 2) / 2] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def broken_early(last: Line, line: Line, right_edge: float) -> bool:
    """Whether `last` ended with room left for `line`'s first word before its column's right
    edge: the text broke the line there (a list drawn without markers, an address), since a
    wrapped line ends only where the next word no longer fits. The word's width is estimated
    from `line`'s mean character width, with a space before it and half an em for the estimate's error
    (a word of wide letters)."""
    words = line.text.split(maxsplit=1)
    if not words or not line.text:
        return False
    char_width = (line.x1 - line.x0) / len(line.text)
    return last.x1 + (len(words[0]) + 1) * char_width + 0.5 * line.size < right_edge
