"""Reading order of a PDF page, block by block: where its text columns are (gutters no narrow
line crosses), whether what lies between them is running text or a table's columns, and the
order that reads each column, sidebar or figure beside it whole."""

from __future__ import annotations

import re
from itertools import pairwise

from rag_assets.core.corpus.parsers.pdf_lines import SENTENCE_END, Line, one_baseline

_AMOUNT = re.compile(r"^[$€£(\-–—]*\s*\d[\d,.\s]*%?\)?$")  # "48", "$ (43,872)", "61 %"


def crosses(line: Line, gutters: list[float]) -> bool:
    """Whether the line runs across a gutter (a title or a wide figure over the columns)."""
    return any(line.x0 < gutter - 3 and line.x1 > gutter + 3 for gutter in gutters)


def _wordy(text: str) -> bool:
    """Three words or more, some of them letters: a line of prose, not a cell or a figure."""
    return len(text.split()) >= 3 and any(c.isalpha() for c in text)


def gutters(lines: list[Line], width: float, left: float = 0.0) -> list[float]:
    """x positions of the gaps between text columns (at most two): stretches at least 8 points
    wide, inside the middle 80% of the page (or of the region `width` wide from `left`), that
    hardly any line crosses (a title, an affiliation or a wide figure may: they bound the column
    bands), with at least three lines wholly on each side. Lines wider than 60% of the page do
    not count."""
    narrow = [ln for ln in lines if ln.x1 - ln.x0 < 0.6 * width]
    if len(narrow) < 6:
        return []
    low, high = int(left + 0.1 * width), int(left + 0.9 * width)
    change = [0] * (high - low + 2)
    for line in narrow:
        start, end = max(low, int(line.x0)), min(high, int(line.x1) + 1)
        if start < end:
            change[start - low] += 1
            change[end - low] -= 1
    allowed = max(1.0, 0.15 * len(narrow))
    counts: list[int] = []
    crossing = 0
    for offset in range(high - low + 1):
        crossing += change[offset]
        counts.append(crossing)
    runs: list[tuple[int, int]] = []
    run_start = -1
    for offset, count in enumerate([*counts, allowed + 1]):
        if count <= allowed and run_start < 0:
            run_start = offset
        elif count > allowed and run_start >= 0:
            runs.append((run_start, offset))
            run_start = -1
    gutters = []
    for start, end in runs:
        # the gutter's middle is the middle of its least crossed stretch (the gap itself)
        fewest = min(counts[start:end])
        inner = [offset for offset in range(start, end) if counts[offset] == fewest]
        middle = low + (inner[0] + inner[-1]) / 2
        start, end = start + low, end + low
        on_left = sum(ln.x1 <= middle for ln in narrow)
        on_right = sum(ln.x0 >= middle for ln in narrow)
        if end - start >= 8 and on_left >= 3 and on_right >= 3:
            gutters.append((end - start, middle))
    return sorted(middle for _, middle in sorted(gutters, reverse=True)[:2])


def text_columns(lines: list[Line], gutters: list[float], width: float, left: float = 0.0) -> bool:
    """Whether the stretches between gutters are columns of running text, not the label and
    number columns of a table, whose cells are a number or a few words."""
    bounds = [left, *gutters, left + width]
    stretches = [[ln for ln in lines if ln.x0 >= start - 1 and ln.x1 <= end + 1] for start, end in pairwise(bounds)]
    verdicts = [_running_text(inside, width) for inside in stretches]
    if all(verdict == "text" for verdict in verdicts):
        return True
    if not all(verdicts) and not any(
        verdict == "text" and _wraps(inside) for inside, verdict in zip(stretches, verdicts, strict=True)
    ):
        return False  # beside what is not text, a column must be prose that wraps line to line
    # the looser reading (prose between code, short items or a table; a column of prose beside a
    # figure's labels, a chart or a sidebar) must not take a table's label and amount columns for
    # text (amounts on the baselines of most of the stretch to their left: a text column beside a
    # small table shares a baseline with a few of its rows only), nor a table's column of terms
    # for a figure beside the column of their definitions, nor a page of full-width paragraphs
    # with a narrow table for a column page
    crossing = sum(crosses(ln, gutters) for ln in lines)
    if crossing > len(lines) / 4 or any(_table_rows_across(labels, figures) for labels, figures in pairwise(stretches)):
        return False
    starts = [
        ln for inside, verdict in zip(stretches, verdicts, strict=True) if verdict for ln in _paragraph_starts(inside)
    ]
    return not any(
        _keyed_to(inside, starts) for inside, verdict in zip(stretches, verdicts, strict=True) if not verdict
    )


def _wraps(inside: list[Line]) -> bool:
    """Whether a column's text wraps: three lines at least, and a quarter of them, fill the
    column and run on, mid-sentence, to the line right below (a form's labels, a table's first
    column and a stack of single-line entries are lines of their own)."""
    ordered = sorted(inside, key=lambda ln: ln.top)
    right = max((ln.x1 for ln in ordered), default=0.0)
    span = right - min((ln.x0 for ln in ordered), default=0.0)
    wrapped = sum(
        1
        for line, below in pairwise(ordered)
        if line.x1 >= right - 0.15 * span
        and not SENTENCE_END.search(line.text)
        and 0 <= below.top - line.bottom <= 0.7 * line.height
    )
    return wrapped >= max(3, len(ordered) / 4)


def _paragraph_starts(inside: list[Line]) -> list[Line]:
    """The lines of a column that open a paragraph: its first, and each set below a wider gap
    than the line spacing or under a line that ends short of the column's right edge."""
    ordered = sorted(inside, key=lambda ln: ln.top)
    if not ordered:
        return []
    right = max(ln.x1 for ln in ordered)
    span = right - min(ln.x0 for ln in ordered)
    return [ordered[0]] + [
        line
        for above, line in pairwise(ordered)
        if line.top - above.bottom > 0.6 * line.height or above.x1 < right - 0.15 * span
    ]


def _keyed_to(inside: list[Line], starts: list[Line]) -> bool:
    """Whether most lines of a stretch that is not text (three at least) sit on the baseline of
    a paragraph's first line beside them: a table's terms beside their definitions, where a
    figure's labels fall on a paragraph's first line only by chance."""
    keyed = sum(1 for ln in inside if any(one_baseline(ln, start) for start in starts))
    return keyed >= max(3, len(inside) / 2)


def _table_rows_across(left: list[Line], right: list[Line]) -> bool:
    """Whether `left` is a table's label column for the amounts in `right`: three of its lines
    or more, and a quarter of them at least, have an amount on their baseline, and `right` holds
    no prose of its own (a table set across both columns above two columns of text pairs its
    halves too, but the column under its right half wraps line to line)."""
    amounts = [piece for piece in right if _AMOUNT.match(piece.text.strip())]
    paired = sum(1 for ln in left if any(one_baseline(ln, piece) for piece in amounts))
    return paired >= max(3, len(left) / 4) and not _wraps(right)


def _printed_lines(pieces: list[Line]) -> list[tuple[float, str]]:
    """(width, text) of each printed line a column's pieces make: runs in another font (inline
    code, a bold word) are pieces of their own, and pieces a word space apart on one baseline are
    one line (a wider gap parts a table's cells: they stay apart)."""
    printed: list[tuple[float, str]] = []
    for row in _in_rows_grouped(pieces):
        start = 0
        for i in range(1, len(row) + 1):
            if i == len(row) or not 0 <= row[i].x0 - row[i - 1].x1 <= row[i].height:
                printed.append((row[i - 1].x1 - row[start].x0, " ".join(p.text for p in row[start:i])))
                start = i
    return printed


def _running_text(inside: list[Line], width: float) -> str:
    """Whether a column's lines are running text: "text" when there are at least three, most of
    them of three words or more and not much narrower than the column; "loose" when code,
    formulas or short list items sit between the paragraphs but at least three lines, and one in
    seven, fill the column with words (the wrapped lines of prose; a table's label column has
    few); "" when not."""
    if len(inside) < 3:
        return ""
    span = max(ln.x1 for ln in inside) - min(ln.x0 for ln in inside)
    if span < 0.15 * width:
        return ""
    widths = sorted(ln.x1 - ln.x0 for ln in inside)
    wordy = sum(_wordy(ln.text) for ln in inside)
    if widths[len(widths) // 2] >= 0.4 * span and wordy >= 0.6 * len(inside):
        return "text"
    printed = _printed_lines(inside)
    full = sum(_wordy(text) and line_width >= 0.8 * span for line_width, text in printed)
    return "loose" if full >= max(3, len(printed) / 7) else ""


def _in_rows_grouped(lines: list[Line]) -> list[list[Line]]:
    """The printed rows top to bottom, each one's runs left to right."""
    rows: list[list[Line]] = []
    row: list[Line] = []
    for line in sorted(lines, key=lambda ln: ln.top):
        if row and not one_baseline(row[0], line):
            rows.append(sorted(row, key=lambda ln: ln.x0))
            row = []
        row.append(line)
    if row:
        rows.append(sorted(row, key=lambda ln: ln.x0))
    return rows


def _in_rows(lines: list[Line]) -> list[Line]:
    """Top to bottom, and the runs of one printed row left to right (a table's numbers after its
    labels even where the PDF draws every label first)."""
    return [line for row in _in_rows_grouped(lines) for line in row]


def reading_order(lines: list[Line], width: float) -> list[Line]:
    """Lines in reading order, block by block: on a page of text columns (two or three, or a
    column of prose beside a figure, a sidebar or a table), one side of a gutter after the other
    within each band between lines that cross it (a title, a wide figure); otherwise top to
    bottom, each printed row left to right.

    Columns are the stretches between gutters (gaps no narrow line crosses) that hold running
    text; a table's label and number columns are not text columns, so its rows stay rows.
    """
    if width <= 0:
        return _in_rows(lines)
    return _region_order(lines, 0.0, width)


def _region_order(lines: list[Line], left: float, right: float) -> list[Line]:
    """The lines of one region of the page (the whole page, or one side of a gutter within a
    band) in reading order. The gutter the fewest lines cross is cut first (one that runs the
    region's whole height first of all), and each side of it, band by band, is a region of its
    own: a full-height left column is read whole even where a table spans the two columns to
    its right, and that table stays rows."""
    width = right - left
    if len(lines) < 6:
        return _in_rows(lines)
    found = gutters(lines, width, left)
    if not found or not text_columns(lines, found, width, left):
        return _in_rows(lines)
    gutter = min(found, key=lambda g: sum(crosses(ln, [g]) for ln in lines))
    spans = _spans_across(lines, gutter)
    ordered: list[Line] = []
    band: list[Line] = []
    across: list[Line] = []

    def flush() -> None:
        sides = (
            [ln for ln in band if (ln.x0 + ln.x1) / 2 < gutter],
            [ln for ln in band if (ln.x0 + ln.x1) / 2 >= gutter],
        )
        if _table_rows_across(*sides):
            ordered.extend(_in_rows(band))  # a table's rows across the gutter, inside a band
        else:
            ordered.extend(_region_order(sides[0], left, gutter))
            ordered.extend(_region_order(sides[1], gutter, right))
        band.clear()

    for line in sorted(lines, key=lambda ln: ln.top):
        middle = (line.top + line.bottom) / 2
        if any(top <= middle <= bottom for top, bottom in spans):
            if band:
                flush()
            across.append(line)
        else:
            ordered.extend(_in_rows(across))
            across.clear()
            band.append(line)
    ordered.extend(_in_rows(across))
    if band:
        flush()
    return ordered


def _spans_across(lines: list[Line], gutter: float) -> list[tuple[float, float]]:
    """(top, bottom) of each stretch of the page that lines across the gutter hold (a title, a
    wide figure's caption, a table whose figures straddle it): lines set within two and a half
    line heights of each other are one stretch, read row by row with whatever sits beside them."""
    spans: list[list[float]] = []
    for line in sorted((ln for ln in lines if crosses(ln, [gutter])), key=lambda ln: ln.top):
        if spans and line.top - spans[-1][1] < 2.5 * line.height:
            spans[-1][1] = max(spans[-1][1], line.bottom)
        else:
            spans.append([line.top, line.bottom])
    return [(top, bottom) for top, bottom in spans]
