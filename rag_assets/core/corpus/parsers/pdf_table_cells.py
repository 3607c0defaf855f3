"""The cells of a PDF table's lines as the unruled-table reader sees them (`pdf_tables`): a
line's cells with currency signs and closing marks joined to their figures, which cells are
figures, which lines are rows of figures, and the value columns the rows print."""

from __future__ import annotations

import re

from rag_assets.core.corpus.parsers.pdf_lines import Line

# a figure as statements print it: $1,234.5 (1,577) 12% — 3.2x, or a dash for nil
_FIGURE = re.compile(r"^[$€£(]*\s*[-–—]?\s*[$€£]?\s*(?:\d[\d,]*(?:\.\d+)?|\.\d+)\s*[)%x]*\)?%?$|^[-–—]+$")
YEAR = re.compile(r"^(?:19|20)\d\d$")
_CURRENCY = {"$", "€", "£", "$(", "("}
_CLOSERS = {")", "%", ")%", "%)"}
MIN_FIGURE_ROWS = 2  # rows of figures a table needs


def row_cells(line: Line) -> list[tuple[float, float, str]]:
    """A line's cells with currency signs joined to the figure after them and closing marks to
    the one before ("$ | 5,363" is one cell)."""
    raw = line.cells or [(line.x0, line.x1, line.text)]
    merged: list[tuple[float, float, str]] = []
    pending: tuple[float, str] | None = None
    for x0, x1, text in raw:
        text = text.strip()
        if pending is not None:
            x0, text = pending[0], f"{pending[1]}{text}"
            pending = None
        if text in _CURRENCY:
            pending = (x0, text)
            continue
        if text in _CLOSERS and merged:
            px0, _, ptext = merged[-1]
            merged[-1] = (px0, x1, f"{ptext}{text}")
            continue
        merged.append((x0, x1, text))
    if pending is not None:
        merged.append((pending[0], pending[0] + 1, pending[1]))
    return merged


def is_figure(text: str) -> bool:
    """A figure as a table prints it (not a year: "2023" names a column)."""
    return bool(_FIGURE.match(text.replace(" ", ""))) and not YEAR.match(text)


def figure_row(cells: list[tuple[float, float, str]]) -> bool:
    """A row of figures: at least one cell after the first is a number (not a year)."""
    return len(cells) >= 2 and any(is_figure(text) for _, _, text in cells[1:])


def value_columns(rows: list[list[tuple[float, float, str]]], value_left: float) -> list[tuple[float, float]]:
    """Value columns: the union of overlapping value cells' spans over the rows, left to right."""
    spans = sorted((x0, x1) for cells in rows for x0, x1, text in cells if x0 >= value_left or is_figure(text))
    columns: list[list[float]] = []
    for x0, x1 in spans:
        if columns and x0 <= columns[-1][1] + 1:
            columns[-1][1] = max(columns[-1][1], x1)
        else:
            columns.append([x0, x1])
    return [(a, b) for a, b in columns]
