"""The tables a PDF's stored layout reads into, as cell grids with their page and box.

What table benchmarks score is what the reader builds: the same cleaned page lines `parse_pdf`
reads (`pdf.layout_pages`), each table that stands in for its lines with the grid it was built with.
"""

from __future__ import annotations

from rag_assets.core.corpus.parsers.pdf import layout_pages
from rag_assets.core.corpus.parsers.pdf_table import TableGrid


def pdf_table_grids(layout: str) -> list[TableGrid]:
    """Every table of the layout (`pdf_extract.extract_pdf(...).layout`), in reading order,
    with its 1-based page, its box in points from the page's top-left, and its cells."""
    return [
        TableGrid(line.page, (line.x0, line.top, line.x1, line.bottom), list(line.table.grid))
        for lines in layout_pages(layout)
        for line in lines
        if line.table is not None
    ]
