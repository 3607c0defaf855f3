"""A table read from a PDF page: its column headers and its rows (see `pdf_tables`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rag_assets.core.corpus.blocks import collapse_spaces


@dataclass(slots=True)
class Table:
    """One table: column headers (one per value column), and rows of (label, values by column)."""

    header: list[str]
    label_header: str = ""
    rows: list[tuple[str, list[str]]] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)

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
