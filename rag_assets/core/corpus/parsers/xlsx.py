"""Excel workbooks (.xlsx) -> blocks, with openpyxl (its XML read through defusedxml).

openpyxl reads the workbook: sheets, cells with the values Excel cached for formulas
(`data_only=True`), merged ranges, hidden rows, columns and sheets. This module turns each
visible sheet into a heading (its name) and its tables (sheet_tables.py finds captions, header
rows and table rows). Hidden rows, columns and sheets are left out, as a reader of the workbook
does not see them. A formula whose value was never cached (a file written by a program other than
Excel, never opened there) reads as empty, and the sheet says so in a paragraph. A sheet of more
than `MAX_SHEET_ROWS` rows is read to that row, and a paragraph says where it stopped and why.
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile

from openpyxl import load_workbook
from openpyxl.utils.exceptions import InvalidFileException
from openpyxl.worksheet.worksheet import Worksheet

from rag_assets.core.corpus.blocks import collapse_spaces
from rag_assets.core.corpus.parsers.archive_limits import ArchiveLimits, Deadline, plain_xml_error
from rag_assets.core.corpus.parsers.errors import ParseError
from rag_assets.core.corpus.parsers.layout_rows import (
    Row,
    check_zip,
    dump_layout,
    plain_text,
    row,
)
from rag_assets.core.corpus.parsers.sheet_tables import Grid, sheet_rows

FORMAT = "xlsx"
# Rows per sheet read at most: a sheet of 20,000 rows of ten columns is ~1.5 MB of row text,
# more than any question is answered from; the rest is named in the tree, not read.
MAX_SHEET_ROWS = 20_000


def _workbook(data: bytes, *, values: bool) -> object:
    try:
        return load_workbook(io.BytesIO(data), data_only=values, read_only=not values)
    except (InvalidFileException, zipfile.BadZipFile, KeyError, ValueError, TypeError) as err:
        raise ParseError(f"damaged or incomplete .xlsx ({err.__class__.__name__}: {err})") from None
    except Exception as err:  # defusedxml's refusals and expat's syntax errors
        if err.__class__.__module__.startswith(("defusedxml", "xml.", "lxml", "pyexpat")):
            raise plain_xml_error(err, ".xlsx") from None
        raise


def cell_text(value: object) -> str:
    """How a cell reads: whole numbers without '.0', dates as ISO dates, the rest as text."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:g}"
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return collapse_spaces(str(value))


def _uncached_formulas(data: bytes) -> dict[str, set[tuple[int, int]]]:
    """Per sheet, the (row, column) of every formula cell (read-only, streamed)."""
    workbook = _workbook(data, values=False)
    found: dict[str, set[tuple[int, int]]] = {}
    try:
        for sheet in workbook.worksheets:  # type: ignore[attr-defined]
            cells = found.setdefault(sheet.title, set())
            for cells_row in sheet.iter_rows():
                for cell in cells_row:
                    if getattr(cell, "data_type", None) == "f":
                        cells.add((cell.row, cell.column))
    finally:
        workbook.close()  # type: ignore[attr-defined]
    return found


def _sheet_grid(sheet: Worksheet, deadline: Deadline) -> tuple[Grid, dict[int, list[str]], list[int], int]:
    """(grid of visible rows, their merged-cell spreads, the sheet row numbers of the grid's
    rows, rows over the cap) of one sheet."""
    hidden_columns = {
        index
        for letter, dim in sheet.column_dimensions.items()
        if dim.hidden
        for index in range(dim.min or 0, (dim.max or 0) + 1)
    }
    merged = {(r.min_row, r.min_col): (r.max_row, r.max_col) for r in sheet.merged_cells.ranges}
    grid: Grid = []
    numbers: list[int] = []
    over = 0
    for number, cells in enumerate(sheet.iter_rows(values_only=True), start=1):
        if number % 1024 == 0:
            deadline.check()
        if sheet.row_dimensions[number].hidden if number in sheet.row_dimensions else False:
            continue
        if len(grid) >= MAX_SHEET_ROWS:
            over += any(v is not None for v in cells)
            continue
        texts = [cell_text(v) if c + 1 not in hidden_columns else "" for c, v in enumerate(cells)]
        grid.append(texts)
        numbers.append(number)
    at = {number: i for i, number in enumerate(numbers)}
    spread: dict[int, list[str]] = {}
    for (top, left), (bottom, right) in merged.items():
        value = grid[at[top]][left - 1] if top in at and left - 1 < len(grid[at[top]]) else ""
        for number in range(top, bottom + 1):
            if number in at and value:
                line = spread.setdefault(at[number], list(grid[at[number]]))
                for column in range(left - 1, min(right, len(line))):
                    line[column] = line[column] or value
    return grid, spread, numbers, over


def extract_xlsx(data: bytes, limits: ArchiveLimits = ArchiveLimits()) -> tuple[str, str]:
    """(layout JSON `parse_xlsx` reads, plain text) of a workbook; ParseError for a damaged,
    encrypted or empty file, or one past `limits` (archive_limits.py)."""
    if data.startswith(b"\xd0\xcf\x11\xe0"):
        raise ParseError("an encrypted workbook or an old binary .xls (save it unprotected as .xlsx)")
    check_zip(data, FORMAT, limits, "; an old binary .xls? save it as .xlsx")
    deadline = Deadline(limits.max_parse_seconds, ".xlsx")
    formulas = _uncached_formulas(data)
    workbook = _workbook(data, values=True)
    rows: list[Row] = []
    for sheet in workbook.worksheets:  # type: ignore[attr-defined]
        if sheet.sheet_state != "visible":
            continue
        grid, spread, numbers, over = _sheet_grid(sheet, deadline)
        found = sheet_rows(grid, 0, spread)
        if not found:
            continue
        rows.append(row("heading", sheet.title, 1))
        rows.extend(found)
        uncached = sum(1 for r, c in formulas.get(sheet.title, ()) if sheet.cell(r, c).value is None)
        if uncached:
            rows.append(
                row(
                    "paragraph",
                    f"{uncached} formula cell{'s' if uncached > 1 else ''} of this sheet have no saved value "
                    "(the file was not last saved by Excel, which stores them) and read as empty.",
                )
            )
        if over:
            rows.append(
                row(
                    "paragraph",
                    f"Rows after sheet row {numbers[-1]} are not read: {over:,} more rows, over the "
                    f"{MAX_SHEET_ROWS:,}-row limit per sheet.",
                )
            )
    title = collapse_spaces(workbook.properties.title or "") or None  # type: ignore[attr-defined]
    return dump_layout(FORMAT, title, rows), plain_text(rows)
