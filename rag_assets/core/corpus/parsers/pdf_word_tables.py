"""Tables of words on a PDF page, without rules or figures (a plan comparison, a feature matrix):
a header line of names over rows of cells that line up under them.

Such rows are already cells (`Line.cells`, runs split at wide gaps), but joined as they come, a
row with an empty cell (a mark that is an icon, a blank where a plan lacks a feature) would shift
the rest left: "Audit log | Yes | Yes" says nothing of which plans. Here each cell goes to the
header column it stands under, so the row names its columns ("Audit log | Pro: Yes |
Enterprise: Yes") and an empty cell stays empty in the grid.

A header is a bold line of at least `MIN_COLUMNS` cells, each a short name (no figure, no
sentence, not a column's letter) that no row under it repeats in its column, its names wrapped
over bold lines right above it joined; the rows under it are lines of cells on the same page, set
as close as table rows are, whose first cell stands under the first name and whose other cells
each fall under a different name. A line right below the header whose cells all open in lower
case goes on with its names; "rows" that mostly go on in lower case are a header's wrapped
lines, not a table.
"""

from __future__ import annotations

from itertools import pairwise

from rag_assets.core.corpus.parsers.pdf_lines import SENTENCE_END, Line
from rag_assets.core.corpus.parsers.pdf_table import Table
from rag_assets.core.corpus.parsers.pdf_table_cells import YEAR, is_figure, row_cells
from rag_assets.core.corpus.parsers.pdf_table_grid import unruled_grid

MIN_COLUMNS = 3
MIN_ROWS = 2
_MAX_NAME_WORDS = 6
_ROW_GAP_LINES = 2.5  # a wider gap than this many line heights ends the table
_HEADER_GAP_LINES = 1.0  # a header's wrapped lines are set closer than this many line heights
_MAX_HEADER_LINES = 3
_MIN_NAME_LETTERS = 2  # "(a)", "B": a column's letter, not its name

Cell = tuple[float, float, str]


def _names(line: Line) -> list[Cell] | None:
    """The header's cells when the line is a header of names, else None."""
    if line.table is not None or len(line.cells) < MIN_COLUMNS or not line.bold:
        return None
    cells = row_cells(line)
    if len(cells) < MIN_COLUMNS:
        return None
    for _, _, text in cells:
        if is_figure(text) or len(text.split()) > _MAX_NAME_WORDS or SENTENCE_END.search(text):
            return None
        if sum(ch.isalpha() for ch in text) < _MIN_NAME_LETTERS and not YEAR.match(text):
            return None  # "1-1183": a form's number; "(b)": a column's letter; not names
    return cells


def _bounds(names: list[Cell]) -> list[tuple[float, float]]:
    """Each header column's span on the page: from halfway to the name before it to halfway to
    the name after it (columns of words are set left, centred or right under their names)."""
    edges = [(a[1] + b[0]) / 2 for a, b in pairwise(names)]
    return [(lo, hi) for lo, hi in zip([float("-inf"), *edges], [*edges, float("inf")], strict=True)]


def _placed(line: Line, bounds: list[tuple[float, float]], first_optional: bool = False) -> list[str] | None:
    """The line's cells by header column ("" where it prints none), or None when it is no row
    of the table: fewer than two cells, its first cell not under the first name (unless
    `first_optional`: a wrapped header's upper line may leave the first column blank), or two
    cells under one name."""
    if line.table is not None or len(line.cells) < 2:
        return None
    values = [""] * len(bounds)
    for number, (x0, x1, text) in enumerate(row_cells(line)):
        overlaps = [min(x1, hi) - max(x0, lo) for lo, hi in bounds]
        column = max(range(len(bounds)), key=lambda i: overlaps[i])
        if values[column] or (number > 0 and column == 0) or (number == 0 and column != 0 and not first_optional):
            return None
        values[column] = text
    return values


def _wrapped_above(lines: list[Line], index: int, bounds: list[tuple[float, float]]) -> tuple[int, list[str]]:
    """(first header line, the header's upper parts) where the header's names wrap over lines
    above its last one ("Moody's Investors" over "Service"): bold lines set right above it whose
    cells each fall under a different name, none a figure."""
    upper = [""] * len(bounds)
    start = index
    while start > 0 and index - start < _MAX_HEADER_LINES - 1:
        line, below = lines[start - 1], lines[start]
        close = line.page == below.page and below.top - line.bottom <= _HEADER_GAP_LINES * line.height
        placed = _placed(line, bounds, first_optional=True) if line.bold and close else None
        if placed is None or any(is_figure(text) for text in placed if text):
            break
        upper = [f"{part} {name}".strip() for part, name in zip(placed, upper, strict=True)]
        start -= 1
    return start, upper


def _wrapped_below(lines: list[Line], index: int, bounds: list[tuple[float, float]]) -> tuple[list[str], int]:
    """(the header's lower parts, the line its rows start at) where its names go on, in lower case,
    on the line right below ("Purpose, scope," over "and methodology"): that line's every cell
    opens in lower case and falls under a different name."""
    lower = [""] * len(bounds)
    end = index + 1
    if end < len(lines):
        line, header = lines[end], lines[index]
        close = line.page == header.page and line.top - header.bottom <= _HEADER_GAP_LINES * line.height
        placed = _placed(line, bounds, first_optional=True) if close else None
        if placed is not None and all(cell[:1].islower() for cell in placed if cell):
            return placed, end + 1
    return lower, end


def word_tables(lines: list[Line]) -> list[tuple[int, int, Table]]:
    """(start, end, table) for each table of words among one page's lines in reading order
    (`lines[start:end]` are its header line and rows)."""
    found: list[tuple[int, int, Table]] = []
    index = 0
    while index < len(lines):
        names = _names(lines[index])
        if names is None:
            index += 1
            continue
        bounds = _bounds(names)
        below, end = _wrapped_below(lines, index, bounds)
        rows: list[list[str]] = []
        while end < len(lines):
            line, above = lines[end], lines[end - 1]
            placed = _placed(line, bounds)
            if placed is None or line.page != above.page or line.top - above.bottom > _ROW_GAP_LINES * line.height:
                break
            rows.append(placed)
            end += 1
        if len(rows) < MIN_ROWS or any(row[i] == name for row in rows for i, (_, _, name) in enumerate(names)):
            index += 1  # too few rows, or the "names" are a row's values (their column repeats them)
            continue
        if 2 * sum(all(cell[:1].islower() for cell in row if cell) for row in rows) > len(rows):
            index += 1  # most "rows" go on in lower case: the wrapped lines of a header set over many
            continue
        start, upper = _wrapped_above(lines, index, bounds)
        header = [
            f"{part} {text} {lower}".strip() for part, (_, _, text), lower in zip(upper, names, below, strict=True)
        ]
        body = [(row[0], row[1:]) for row in rows]
        table = Table(header[1:], header[0], body, [lines[index].page])
        table.grid = unruled_grid(
            [[(i, i, text) for i, text in enumerate(header[1:])]], header[0], body, len(header) - 1
        )
        found.append((start, end, table))
        index = end
    return found
