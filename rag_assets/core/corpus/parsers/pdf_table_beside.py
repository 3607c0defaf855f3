"""Two tables set side by side on a PDF page (two statements, a list of states in two columns):
where the second begins, whether its header repeats the first's, and each line's part on
either side, so `pdf_tables` reads one table after the other instead of merging them row by row."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from itertools import pairwise

from rag_assets.core.corpus.parsers.pdf_lines import Line
from rag_assets.core.corpus.parsers.pdf_table_cells import MIN_FIGURE_ROWS, is_figure, row_cells, value_columns


def second_table_left(
    number_cells: list[list[tuple[float, float, str]]], value_left: float, size: float
) -> float | None:
    """Where a second table set beside this one begins, or None: a column of row labels right of
    the figures and left of more figures on at least half of the rows of figures, left-aligned,
    each a different name in words (a text column inside one table repeats its values or holds
    figures: "Fixed" or "Floating", "NM", "7 years", "February 2015"), past a gutter wider than
    the gaps between the first table's value columns."""
    starts: list[tuple[float, str]] = []
    for cells in number_cells:
        seen_figure = False
        for index, (x0, _, text) in enumerate(cells):
            if x0 < value_left:
                continue
            if is_figure(text):
                seen_figure = True
            elif seen_figure:
                if any(is_figure(later) for _, _, later in cells[index + 1 :]):
                    starts.append((x0, text))
                break
    labels = [text for _, text in starts]
    if (
        len(starts) < max(MIN_FIGURE_ROWS, len(number_cells) / 2)
        or max(x for x, _ in starts) - min(x for x, _ in starts) > size
        or len(set(labels)) < len(labels)
        or any(ch.isdigit() for text in labels for ch in text)
        or any(sum(ch.isalpha() for ch in text) < 3 for text in labels)
    ):
        return None
    cut = min(x for x, _ in starts)
    left = value_columns(
        [[c for c in cells if value_left <= c[0] and c[1] < cut] for cells in number_cells], value_left
    )
    if not left:
        return None
    gaps = [b[0] - a[1] for a, b in pairwise(left)]
    gutter = cut - left[-1][1]
    return cut - 1 if gutter > max(1.5 * max(gaps, default=0.0), 3 * size) else None


def repeated_header(header: list[Line], value_left: float, cut: float) -> bool:
    """Whether the header over the second table repeats the first's, over its value columns
    ("2023 | 2022" over both) or as a whole ("Consumer & Business" over both label columns; the
    second may add a title): two tables of one kind set side by side, not one table whose text
    column (a position beside a name and an age) has a header of its own."""
    cells = [(x0, x1, t) for ln in header for x0, x1, t in row_cells(ln)]
    right = Counter(t for x0, x1, t in cells if (x0 + x1) / 2 >= cut)
    whole = [t for x0, x1, t in cells if (x0 + x1) / 2 < cut]
    values = [t for x0, x1, t in cells if (x0 + x1) / 2 < cut and x1 > value_left]
    return any(side and not Counter(side) - right for side in (values, whole))


def side_part(line: Line, left: bool, cut: float) -> Line | None:
    """The part of a line left of `cut` (or right of it), None where it prints nothing there."""
    cells = [c for c in (line.cells or [(line.x0, line.x1, line.text)]) if ((c[0] + c[1]) / 2 < cut) == left]
    if not cells:
        return None
    text = "\t".join(c[2] for c in cells)
    return replace(line, x0=cells[0][0], x1=cells[-1][1], text=text, cells=cells if len(cells) > 1 else [])
