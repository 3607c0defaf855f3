"""A PDF table's cell grid, with its spans, from what the table readers found (`pdf_tables`).

A ruled table comes as pdfplumber's rows, where a cell merged into its neighbour reads None:
a None right of a cell continues that cell's column span, one below continues its row span
(a merged cell covers a rectangle). An unruled table comes as its header levels (cells over
the value columns they span) and its rows of (label, values): the labels are column 0, the
value columns follow. Empty cells stay in the grid, empty.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_assets.core.corpus.parsers.pdf_table import GridCell

_MAX_HEADER_ROWS = 4
SLIVER = 5.5  # points: narrower than a character with its padding, no column or row of text


def ruled_grid(rows: Sequence[Sequence[str | None]]) -> list[GridCell]:
    """Cells of a ruled table from its rows (None: covered by a merged cell up or left)."""
    claimed: set[tuple[int, int]] = set()
    cells: list[GridCell] = []

    def covered(r: int, c: int) -> bool:
        return r < len(rows) and c < len(rows[r]) and rows[r][c] is None and (r, c) not in claimed

    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            if text is None:
                continue
            width = 1
            while covered(r, c + width):
                claimed.add((r, c + width))
                width += 1
            height = 1
            while all(covered(r + height, c + k) for k in range(width)):
                claimed.update((r + height, c + k) for k in range(width))
                height += 1
            cells.append(GridCell(r, c, text, height, width))
    return cells


def unruled_grid(
    header_rows: Sequence[Sequence[tuple[int, int, str]]],
    label_header: str,
    rows: Sequence[tuple[str, Sequence[str]]],
    columns: int,
) -> list[GridCell]:
    """Cells of an unruled table: each header row's cells over their value columns (the label
    header in column 0 of the last header row), then one grid row per table row."""
    cells: list[GridCell] = []
    for r, row in enumerate(header_rows):
        if r == len(header_rows) - 1 and label_header:
            cells.append(GridCell(r, 0, label_header))
        cells.extend(GridCell(r, first + 1, text, 1, last - first + 1) for first, last, text in row)
    if not header_rows and label_header:
        cells.append(GridCell(0, 0, label_header))
    top = max(len(header_rows), 1 if label_header else 0)
    for offset, (label, values) in enumerate(rows):
        r = top + offset
        cells.append(GridCell(r, 0, label))
        padded = [*values, *[""] * (columns - len(values))]
        cells.extend(GridCell(r, c + 1, text) for c, text in enumerate(padded))
    return cells


def _edges(values: list[float], tolerance: float) -> list[float]:
    """Sorted values, each run of values less than `tolerance` apart from the one before merged
    into its first."""
    edges: list[float] = []
    last = float("-inf")
    for value in sorted(values):
        if value - last > tolerance:
            edges.append(value)
        last = value
    return edges


def _nearest(edges: list[float], value: float) -> int:
    return min(range(len(edges)), key=lambda i: abs(edges[i] - value))


def box_grid(cells: Sequence[tuple[float, float, float, float, str]], tolerance: float = SLIVER) -> list[GridCell]:
    """Cells of a ruled table from each cell's box `(x0, top, x1, bottom, text)`: the grid's
    column and row lines are the cells' edges, edges closer than `tolerance` points being one
    (no text fits between them: a rule drawn double, or a shaded header's cells set in from the
    body's), so a merged cell spans the grid lines it covers; an empty sliver between such
    edges is no cell."""
    xs = _edges([v for c in cells for v in (c[0], c[2])], tolerance)
    ys = _edges([v for c in cells for v in (c[1], c[3])], tolerance)
    grid = []
    for x0, top, x1, bottom, text in cells:
        col, row = _nearest(xs, x0), _nearest(ys, top)
        width, height = _nearest(xs, x1) - col, _nearest(ys, bottom) - row
        if (width < 1 or height < 1) and not text:
            continue
        grid.append(GridCell(row, col, text, max(height, 1), max(width, 1)))
    return sorted(grid, key=lambda c: (c.row, c.col))


def _header_depth(grid: Sequence[GridCell], rows: int) -> int:
    """How many rows the header takes: the first row, and each next row while a header cell
    spans several columns (the names under that span follow) or reaches down into it."""
    depth = 1
    while depth < min(rows - 1, _MAX_HEADER_ROWS):
        above = [c for c in grid if c.row < depth]
        if not any(c.col_span > 1 and c.row == depth - 1 for c in above) and not any(
            c.row + c.row_span > depth for c in above
        ):
            break
        depth += 1
    return depth


def grid_rows(grid: Sequence[GridCell]) -> tuple[list[str], list[list[str]]]:
    """(column headers, body rows) of a ruled table's grid: each column's header is the path of
    the header cells over it, top first ("2007 / n"); a cell's text sits in its first column;
    columns no cell starts in with text (the slivers between double rules) are left out."""
    first = min((c.row for c in grid if c.text), default=0)  # empty rows above the header
    grid = [GridCell(c.row - first, c.col, c.text, c.row_span, c.col_span) for c in grid if c.row >= first]
    rows = max((c.row + c.row_span for c in grid), default=0)
    if rows == 0:
        return [], []
    depth = _header_depth(grid, rows)
    kept = sorted(
        {c.col for c in grid if c.text and c.row >= depth} | {c.col for c in grid if c.text and c.col_span == 1}
    )
    header = []
    for col in kept:
        path: list[str] = []
        for cell in sorted(
            (c for c in grid if c.row < depth and c.col <= col < c.col + c.col_span), key=lambda c: c.row
        ):
            if cell.text and cell.text not in path:
                path.append(cell.text)
        header.append(" / ".join(path))
    matrix = [[""] * len(kept) for _ in range(rows - depth)]
    where = {col: index for index, col in enumerate(kept)}
    for cell in grid:
        if cell.row >= depth and cell.col in where:
            matrix[cell.row - depth][where[cell.col]] = cell.text
    return header, matrix
