"""A monospaced block that is a table, cut into its cells.

Fixed-pitch text (a report printed from a terminal, a listing of scores pasted onto a slide) sets
its columns with spaces, so the cell gaps the reader cuts proportional text at never show: the
block would be read as code, one blob whose figures no longer say which column they sit in.

A block is a grid when every line splits at runs of two or more spaces into the same number of
cells (two or more), each column's cells share a character column on every line (left-, right-
or centre-aligned alike, give or take one character) and no column's extent runs into the next one's, and some column holds
only figures. Code with comments aligned after its statements has no column of figures; prose
set in a monospaced font wraps at single spaces and its lines do not split alike.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

_CELL = re.compile(r"\S+(?: \S+)*")  # a cell: words apart by single spaces
_FIGURE = re.compile(r"[(\-−+$€£¥]?\d[\d,.]*%?\)?")
MIN_ROWS = 3  # lines of figures under a header at least


@dataclass(frozen=True, slots=True)
class FixedGrid:
    """The cells of a monospaced table: its header line's (None: it has none) and its body rows',
    with the index of each body row's line among the block's lines."""

    header: list[str] | None
    rows: list[list[str]]
    lines: list[int]


def fixed_pitch_grid(lines: list[str]) -> FixedGrid | None:
    """`lines` (a monospaced block's lines, indents kept) as a grid, or None (see the module)."""
    kept = [i for i, line in enumerate(lines) if line.strip()]
    spans = [[m.span() for m in _CELL.finditer(lines[i])] for i in kept]
    if len(kept) < MIN_ROWS or len(spans[0]) < 2 or any(len(s) != len(spans[0]) for s in spans):
        return None
    columns = list(zip(*spans))  # per column, each line's (start, end)
    for column in columns:
        # a cell may sit one character off its column (glyphs placed one by one, rounded to characters)
        if max(start for start, _ in column) > min(end for _, end in column):
            return None  # no character column all its cells share
    extents = [(min(s for s, _ in column), max(e for _, e in column)) for column in columns]
    if any(left[1] >= right[0] for left, right in itertools.pairwise(extents)):
        return None  # a column runs into the next
    cells = [[lines[i][start:end] for start, end in row] for i, row in zip(kept, spans)]

    def figures_column(rows: list[list[str]]) -> bool:
        return any(all(_FIGURE.fullmatch(row[j]) for row in rows) for j in range(len(rows[0])))

    if figures_column(cells):
        return FixedGrid(None, cells, kept)
    if len(cells) > MIN_ROWS and figures_column(cells[1:]):
        return FixedGrid(cells[0], cells[1:], kept[1:])
    return None


def header_cells(row_text: str, columns: int) -> list[str] | None:
    """A table row's cells when they can head a grid of `columns` columns: as many cells, none a
    figure and none already naming its column ("2022: 1,234": a row of another table)."""
    cells = row_text.split(" | ")
    if len(cells) != columns or any(_FIGURE.fullmatch(c) or ": " in c for c in cells):
        return None
    return cells
