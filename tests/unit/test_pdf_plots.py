"""A chart's plotted series is found at extraction (`pdf_plots`), and no unruled table is read
over it (`pdf_tables.with_tables`): its axis labels and legend line up in columns of figures
like a table's, the plot beside them tells them apart."""

from __future__ import annotations

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest

from rag_assets.core.corpus.parsers.pdf_lines import Line
from rag_assets.core.corpus.parsers.pdf_plots import plot_boxes
from rag_assets.core.corpus.parsers.pdf_tables import with_tables

pytestmark = pytest.mark.unit


def _page_with(paths: list[list[tuple[float, float]]]) -> pdfium.PdfPage:
    """A 600 x 800 page stroking each polyline (points from the page's bottom-left)."""
    document = pdfium.PdfDocument.new()
    page = document.new_page(600, 800)
    for points in paths:
        path = pdfium_c.FPDFPageObj_CreateNewPath(*points[0])
        for x, y in points[1:]:
            pdfium_c.FPDFPath_LineTo(path, x, y)
        pdfium_c.FPDFPath_SetDrawMode(path, 0, 1)
        pdfium_c.FPDFPage_InsertObject(page.raw, path)
    pdfium_c.FPDFPage_GenerateContent(page.raw)
    return page


def test_a_zigzag_series_is_a_plot_and_a_ruled_grid_is_not() -> None:
    series = [(100 + 10 * i, 600 + (30 if i % 2 else 0)) for i in range(20)]  # 190 x 30 points
    # a grid's rules as one path of eleven points, every segment upright or level
    grid = [(100, 100), (300, 100), (300, 200), (100, 200), (100, 100), (200, 100), (200, 200)]
    grid += [(250, 200), (250, 100), (150, 100), (150, 200)]
    page = _page_with([series, grid])
    # the series' box from the page's top-left: x 100..290, top 800 - 630, bottom 800 - 600
    ((x0, top, x1, bottom),) = plot_boxes(page)
    assert (x0, x1) == pytest.approx((100, 290), abs=1.5)
    # the stroke's sharp corners (miter joins) reach a few points past the points
    assert (top, bottom) == pytest.approx((170, 200), abs=4)


def _axis_labels() -> list[Line]:
    """Three rows set like an unruled table: a label and two figures each."""
    lines = []
    for index, (label, a, b) in enumerate([("Spread", "450", "300"), ("Yield", "400", "250"), ("Rate", "350", "200")]):
        top = 100 + 12 * index
        cells = [(72.0, 110.0, label), (300.0, 315.0, a), (400.0, 415.0, b)]
        lines.append(Line(72.0, top, 415.0, top + 9, 9.0, False, "\t".join(c[2] for c in cells), 1, cells=cells))
    return lines


def test_no_unruled_table_is_read_over_a_plot() -> None:
    assert [line.table is not None for line in with_tables(_axis_labels(), [], 1)] == [True]
    plot = [[70.0, 95.0, 420.0, 140.0]]  # a series drawn across the rows' box
    kept = with_tables(_axis_labels(), [], 1, plot)
    assert [line.text for line in kept] == ["Spread\t450\t300", "Yield\t400\t250", "Rate\t350\t200"]
    assert all(line.table is None for line in kept)
