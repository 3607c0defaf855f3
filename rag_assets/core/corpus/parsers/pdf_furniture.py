"""Running headers, footers and page numbers of a PDF's pages: what repeats from page to page
in the same place is the page's furniture, not its text."""

from __future__ import annotations

import re
from collections import Counter

from rag_assets.core.corpus.parsers.pdf_lines import HEADING_SCALE, Line, body_size

_MARGIN = 0.09  # top and bottom share of the page where running headers and footers live
_REPEAT_SHARE = 0.4  # a margin line on at least this share of the pages is a running header/footer
_TOP_REPEATS = 4  # pages a line must open (among their first three lines) to be a running header
_PAGE_NUMBER = re.compile(
    r"^(?:page\s+)?[-–(\[]?\s*(?:\d{1,4}|[ivxlcdm]{1,7})\s*[-–)\]]?(?:\s*(?:of|/)\s*\d{1,4})?$", re.IGNORECASE
)
_DIGITS = re.compile(r"\d+")
# Words of a date that change from page to page as its digits do ("Monday, 3 March" over
# "Tuesday, 4 March"): a running header that prints the date is one header on every page.
_DATE_WORDS = re.compile(
    r"\b(?:january|february|march|april|may|june|july|august|september|october|november|december"
    r"|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec|monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday)\b\.?",
    re.IGNORECASE,
)
_EDGE_BAND = 0.15  # share of the page's height, at top and bottom, where a header set inside the text area sits
_EDGE_ROWS = 2  # printed rows at each end of a page that may be a running header or footer
_EDGE_REPEATS = 3  # pages that must repeat such a row, besides `_REPEAT_SHARE` of them


def _margin_key(line: Line, height: float) -> tuple[str, int, int] | None:
    """What a running header or footer repeats from page to page: its text (digits aside), its
    size and its place (in 4-point bands); a heading near the top of a page that reads the same
    is not one (it is set larger), nor is a line of text that happens to open several pages."""
    if height <= 0 or _MARGIN * height < line.top < (1 - _MARGIN) * height:
        return None
    return _furniture_text(line.text.casefold()), round(line.size), round(line.top / 4)


def _furniture_text(text: str) -> str:
    """A header's or footer's text with what changes from page to page masked: its numbers and the
    words of a date."""
    return _DATE_WORDS.sub("@", _DIGITS.sub("#", " ".join(text.split())))


def _edge_rows(lines: list[Line], height: float) -> list[Line]:
    """The lines of the page's first and last `_EDGE_ROWS` printed rows (runs of one baseline: a
    footer's "Copyright Office Summary", "December 1998" and "Page 2" are one row), the first ones
    inside the top `_EDGE_BAND` of its height, the last ones inside the bottom one."""
    rows: list[list[Line]] = []
    for line in sorted(lines, key=lambda ln: ln.top):
        if rows and abs(line.top - rows[-1][0].top) < 0.5 * line.height:
            rows[-1].append(line)
        else:
            rows.append([line])
    top = [ln for row in rows[:_EDGE_ROWS] for ln in row if ln.top < _EDGE_BAND * height]
    bottom = [ln for row in rows[-_EDGE_ROWS:] for ln in row if ln.top > (1 - _EDGE_BAND) * height]
    return top + [ln for ln in bottom if ln not in top]


def _edge_furniture(pages: list[list[Line]], heights: list[float], repeated: int) -> set[int]:
    """ids of running headers and footers set inside the text area, below or above the margin
    band (a word processor's footer sits 10% up the page): lines of a page's first or last two
    rows whose text, numbers and date words aside, size and place (within a 4-point band) are
    the same on `repeated` pages and at least three. A line set larger than the body is a heading
    that opens pages alike ("Chapter 3" at every chapter's top), not a header; and case counts
    (a cover's title in capitals is not the header in small letters that repeats it)."""
    body = body_size(pages)
    candidates = [
        [ln for ln in _edge_rows(lines, height) if ln.size < body * HEADING_SCALE]
        for lines, height in zip(pages, heights, strict=True)
    ]

    def key(line: Line) -> tuple[str, int, int]:
        return _furniture_text(line.text), round(line.size), round(line.top / 4)

    counts: Counter[tuple[str, int, int]] = Counter()
    for lines in candidates:
        counts.update({key(line) for line in lines})
    least = max(repeated, _EDGE_REPEATS)
    return {id(line) for lines in candidates for line in lines if _repeats(counts, key(line)) >= least}


def _repeats(counts: Counter[tuple[str, int, int]], key: tuple[str, int, int]) -> int:
    """Pages with this margin line in this band or the next ones (positions vary by a point or so)."""
    text, size, band = key
    return counts[text, size, band - 1] + counts[key] + counts[text, size, band + 1]


def _slot_pages(slots: Counter[tuple[int, int]], key: tuple[str, int, int]) -> int:
    """Pages with a margin line of this size in this band or the next ones, whatever its text."""
    _, size, band = key
    return slots[size, band - 1] + slots[size, band] + slots[size, band + 1]


def _page_top_headers(pages: list[list[Line]]) -> set[int]:
    """ids of the lines among the first three of a page whose text (digits too: "Chapter 7" is
    no header) and size are among the first three of at least `_TOP_REPEATS` pages: a header set below the margin band ("The
    Boeing Company and Subsidiaries" over every financial statement)."""

    def tops(lines: list[Line]) -> list[Line]:
        return sorted(lines, key=lambda ln: ln.top)[:3]

    def key(line: Line) -> tuple[str, int]:
        # case and size count: the cover's "THE DIGITAL MILLENNIUM COPYRIGHT ACT OF 1998" is
        # the title the later pages' header "The Digital Millennium Copyright Act of 1998" repeats
        return " ".join(line.text.split()), round(line.size)

    counts = Counter(k for lines in pages for k in {key(line) for line in tops(lines)})
    return {id(line) for lines in pages for line in tops(lines) if counts[key(line)] >= _TOP_REPEATS}


def drop_page_furniture(pages: list[list[Line]], heights: list[float], titled_pages: bool = False) -> list[list[Line]]:
    """Without running headers/footers (margin lines repeated across pages, numbers and date
    words ignored, or the first or last rows of pages repeated so, see `_edge_furniture`; or
    set where most pages set one, at that size, and repeated on another page: a header that
    names the current section), bare page numbers in the margins, and vertical text (an arXiv
    stamp along the edge). With `titled_pages` (a slide deck), the top half of a page holds no
    header: a slide's title repeated on the slides that continue it is each one's title."""
    counts: Counter[tuple[str, int, int]] = Counter()
    slots: Counter[tuple[int, int]] = Counter()  # pages with a margin line of this size at this place
    for lines, height in zip(pages, heights, strict=True):
        keys = {key for line in lines if (key := _margin_key(line, height))}
        counts.update(keys)
        slots.update({(size, band) for _, size, band in keys})
    repeated = max(2, int(_REPEAT_SHARE * len(pages) + 0.999))
    headers = _page_top_headers(pages) | _edge_furniture(pages, heights, repeated)
    kept_pages: list[list[Line]] = []
    for lines, height in zip(pages, heights, strict=True):
        kept: list[Line] = []
        for line in lines:
            if titled_pages and line.bottom < height / 2:
                kept.append(line)
                continue
            key = _margin_key(line, height)
            if id(line) in headers:
                continue
            if key is not None and (
                (_repeats(counts, key) >= repeated and len(pages) > 1)
                or _PAGE_NUMBER.match(line.text.strip())
                or (_slot_pages(slots, key) >= repeated and _repeats(counts, key) >= 2)
            ):
                continue
            if line.height > 3 * max(line.x1 - line.x0, 1.0) and len(line.text) > 3:
                continue
            kept.append(line)
        kept_pages.append(_without_edge_number(kept))
    return kept_pages


def _without_edge_number(lines: list[Line]) -> list[Line]:
    """Without the page's lowest or highest line when it is a bare page number set apart from
    the text (a page number printed inside the margin band's limits)."""
    if len(lines) < 2:
        return lines
    ordered = sorted(lines, key=lambda ln: ln.top)
    drop: set[int] = set()
    lowest, above = ordered[-1], ordered[-2]
    if _PAGE_NUMBER.match(lowest.text.strip()) and lowest.top - above.bottom > lowest.height:
        drop.add(id(lowest))
    highest, below = ordered[0], ordered[1]
    if _PAGE_NUMBER.match(highest.text.strip()) and below.top - highest.bottom > highest.height:
        drop.add(id(highest))
    return [line for line in lines if id(line) not in drop]
