"""A sheet's grid of cell texts -> captions, table nodes and rows naming their columns.

A sheet is not one table with its header in row 1: reports put a title above the table, a unit
("In millions of CHF") and a period over the header, notes below, and several tables one under
another. The grid (hidden rows already gone, merged header cells already spread) is read in bands
of consecutive non-empty rows:

- a row with a single text cell, before any table row of its band, is a caption (a paragraph),
  and so is one after the band's table that is longer than a cell label (a footnote);
- a table's header is its first row of two or more cells when every cell is text (no number); a
  text row with fewer cells right above it (a unit, a period) joins it as an upper header line;
- a band holding only header rows lends them to the next band (an empty row under the header);
- every other row is a table row: `label | Header: value | ...` (the first column is the label).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag_assets.core.corpus.parsers.layout_rows import Row, row, table_rows

Grid = list[list[str]]  # rows of cell texts ("" for an empty cell), hidden rows left out
_NUMBER = re.compile(r"^[-+(]?[$€£¥]?\s*[\d.,]+%?\)?$|^[-—–]+$")
_MAX_LABEL_CHARS = 60  # a longer lone cell below a table is a footnote, not a row label


def _filled(cells: Sequence[str]) -> list[int]:
    return [i for i, c in enumerate(cells) if c]


def _all_text(cells: Sequence[str]) -> bool:
    return all(not _NUMBER.match(c) for c in cells if c)


def _bands(grid: Grid) -> list[list[tuple[int, list[str]]]]:
    bands: list[list[tuple[int, list[str]]]] = [[]]
    for index, cells in enumerate(grid):
        if any(cells):
            bands[-1].append((index, cells))
        elif bands[-1]:
            bands.append([])
    return [b for b in bands if b]


def _merge_header(lines: list[list[str]]) -> list[str]:
    """One header from its lines, top to bottom: a column's header is its cells joined (a cell
    merged down over two lines counts once). An upper cell over sub-columns ("Results" over
    "Accuracy" and "Time") spreads right over the empty cells whose lower line has a value."""
    width = max(len(line) for line in lines)
    lines = [line + [""] * (width - len(line)) for line in lines]
    if len(lines) == 2:
        upper, lower = lines
        group = ""
        for i in range(width):
            group = upper[i] if upper[i] and lower[i] else (group if not upper[i] and lower[i] else "")
            upper[i] = upper[i] or group
    merged = []
    for i in range(width):
        parts: list[str] = []
        for line in lines:
            if i < len(line) and line[i] and (not parts or parts[-1] != line[i]):
                parts.append(line[i])
        merged.append(" ".join(parts))
    return merged


class _Table:
    def __init__(self, header_lines: list[list[str]], first_cells: int = 0) -> None:
        self.header_lines = header_lines
        self.first_cells = first_cells  # filled cells of the first header line, before spreading
        self.body: list[list[str]] = []


def sheet_rows(grid: Grid, page: int = 0, spread: dict[int, list[str]] | None = None) -> list[Row]:
    """The stored rows (see layout_rows.py) of one sheet's grid: captions and tables. `spread`:
    grid rows with merged cells, their value repeated in every column the cell spans, read
    instead when the row is a header line (a merged title row stays one caption)."""
    spread = spread or {}
    rows: list[Row] = []
    pending_header: list[list[str]] = []  # header lines of a band that held nothing else
    for band in _bands(grid):
        table: _Table | None = None
        captions: list[str] = []
        notes: list[str] = []
        for index, cells in band:
            header_line = spread.get(index, cells)
            filled = _filled(cells)
            lone = len(filled) == 1 and _all_text(cells)
            if table is None and lone and not pending_header:
                captions.append(cells[filled[0]])
                continue
            if table is not None and lone and table.body and len(cells[filled[0]]) > _MAX_LABEL_CHARS:
                notes.append(cells[filled[0]])
                continue
            if notes:  # rows again after a footnote: the footnotes were captions of what follows
                rows.extend(_flush(table, captions, page))
                table, captions, notes = None, notes, []
            if table is None:
                table = _start(cells, header_line, filled, pending_header)
                pending_header = []
                continue
            if not table.body and _all_text(cells) and _second_line(table, filled):
                table.header_lines.append(header_line)  # the header's second line
                continue
            table.body.append(cells)
        if table is not None and not table.body and table.header_lines:
            pending_header = table.header_lines  # an empty row between the header and its rows
            rows.extend(row("paragraph", c, 0, page) for c in captions)
            table = None
        else:
            rows.extend(_flush(table, captions, page))
        rows.extend(row("paragraph", n, 0, page) for n in notes)
    if pending_header:
        rows.extend(row("paragraph", " | ".join(c for c in line if c), 0, page) for line in pending_header)
    return rows


def _second_line(table: _Table, filled: list[int]) -> bool:
    """A text row right under a one-line header is its second line when the header has fewer
    cells (the header was a unit or period over it), or when it fills a column the header leaves
    empty (sub-columns under a group header)."""
    if len(table.header_lines) != 1:
        return False
    above = set(_filled(table.header_lines[0]))
    return (len(filled) >= 2 and table.first_cells < len(filled)) or any(i not in above for i in filled)


def _start(cells: list[str], header_line: list[str], filled: list[int], pending: list[list[str]]) -> _Table:
    if pending:
        table = _Table(pending)
        table.body.append(cells)
        return table
    if len(filled) >= 2 and _all_text(cells):
        return _Table([header_line], len(filled))
    table = _Table([])
    table.body.append(cells)
    return table


def _flush(table: _Table | None, captions: list[str], page: int) -> list[Row]:
    rows = [row("paragraph", c, 0, page) for c in captions]
    if table is None:
        return rows
    width = max(len(c) for c in [*table.header_lines, *table.body])
    used = sorted({i for cells in [*table.header_lines, *table.body] for i in _filled(cells)})
    first, last = (used[0], used[-1]) if used else (0, width - 1)
    lines = [(line + [""] * width)[first : last + 1] for line in table.header_lines]
    context = ""
    if len(lines) == 2 and len(_filled(lines[0][1:])) == 1:  # one cell over the columns: the table's period or unit
        context = next(c for c in lines[0][1:] if c)
        lines[0] = [lines[0][0]] + [""] * (len(lines[0]) - 1)
    header = _merge_header(lines) if lines else [""] * (last - first + 1)
    header += [""] * (last - first + 1 - len(header))
    body = [(cells + [""] * width)[first : last + 1] for cells in table.body]
    # keep only the columns that hold something: spacer columns between value columns go
    keep = [i for i in range(last - first + 1) if header[i] or any(r[i] for r in body)]
    header = [header[i] for i in keep]
    body = [[r[i] for i in keep] for r in body]
    return rows + table_rows(header, body, page, context=context)
