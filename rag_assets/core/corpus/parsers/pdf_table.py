"""A table read from a PDF page: its column headers and its rows (see `pdf_tables`), and its
cell grid with the spans the page sets (what table benchmarks score)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rag_assets.core.corpus.blocks import collapse_spaces


@dataclass(frozen=True, slots=True)
class GridCell:
    """One cell of a table's grid: its first row and column (0-based), its spans, its text
    ("" for an empty cell: it keeps its place)."""

    row: int
    col: int
    text: str
    row_span: int = 1
    col_span: int = 1


@dataclass(frozen=True, slots=True)
class TableGrid:
    """A table as it sits on its page: 1-based page, box (x0, top, x1, bottom) in points from
    the page's top-left corner, and its cells."""

    page: int
    box: tuple[float, float, float, float]
    cells: list[GridCell]

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns) of the grid."""
        rows = max((c.row + c.row_span for c in self.cells), default=0)
        columns = max((c.col + c.col_span for c in self.cells), default=0)
        return rows, columns


@dataclass(slots=True)
class Table:
    """One table: column headers (one per value column, each its full header path), and rows of
    (label, values by column); `grid` is the same table as cells with their spans."""

    header: list[str]
    label_header: str = ""
    rows: list[tuple[str, list[str]]] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)
    grid: list[GridCell] = field(default_factory=list)

    def header_text(self) -> str:
        """The header line as a node text: the label column's header and the column headers."""
        parts = [self.label_header, *self.header]
        return " | ".join(p for p in parts if p)

    def row_texts(self) -> list[str]:
        """`label | header: value | ...` for each row; a value without a header is just the value."""
        texts = []
        for label, values in self.rows:
            cells = [label] if label else []
            for head, value in zip(self.header, values, strict=False):
                if value:
                    cells.append(f"{head}: {value}" if head else value)
            text = collapse_spaces(" | ".join(cells))
            if text:
                texts.append(text)
        return texts
