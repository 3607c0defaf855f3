"""PDF tables become a table node with one row node per row, each row carrying its column headers.

A real ruled table (pdfplumber's `ca-warn-report.pdf`, see tests/data/documents/SOURCES.md), an
unruled statement drawn here at known positions (as filings set them: labels on the left,
figures in columns, the years above), and one real statement page of a filing from
../shared/datasets/financebench when that folder is present.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_parsers_pdf import DOCUMENTS, Run, make_pdf, tree_of, write_pdf

PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "pdfs" / "public"

pytestmark = pytest.mark.unit


def _rows_under(tree, parent_id: int) -> list[str]:
    return [n.text for n in tree.nodes if n.parent_id == parent_id and n.block == "table_row"]


def test_ruled_table_rows_keep_their_seven_cells_and_continue_over_the_page(tmp_path: Path) -> None:
    tree = tree_of(DOCUMENTS / "ca-warn-report.pdf")
    (table,) = [n for n in tree.nodes if n.text.startswith("Notice Date | Effective")]
    assert table.text == "Notice Date | Effective | Received | Company | City | No. Of | Layoff/Closure"
    assert table.block == "paragraph" and table.pages == "pp. 1-2"
    rows = [n for n in tree.nodes if n.parent_id == table.node_id]
    page_one = [n.text for n in rows if n.page_start == 1]
    # 37 rows of 7 cells on p. 1: the header (the table node) and 36 rows under it
    assert len(page_one) == 36
    assert all(len(text.split(" | ")) == 7 for text in page_one)
    assert page_one[0] == (
        "Notice Date: 06/22/2015 | Effective: 03/25/2016 | Received: 07/01/2015 | "
        "Company: Maxim Integrated Product | City: San Jose | No. Of: 150 | Layoff/Closure: Closure Permanent"
    )
    # p. 2 prints no header row: its rows carry p. 1's headers, none of them lost
    page_two = [n.text for n in rows if n.page_start == 2]
    assert len(page_two) == 43
    assert page_two[0].startswith("Notice Date: 07/17/2015 | Effective: 09/18/2015 |")
    assert not any(n.kind == "structure" and n.text in {"Company", "City", "No. Of"} for n in tree.nodes)


def _statement_page(title: str, rows: list[tuple[str, str, str, str]], header: bool = True) -> list[Run]:
    """A statement page as filings set it: bold title, years over right-aligned figures."""
    runs: list[Run] = [(72, 60, 12, title, True)]
    top = 100
    if header:
        runs += [(72, top, 9, "(Millions)", True), (372, top, 9, "2018", True), (432, top, 9, "2017", True)]
        runs += [(492, top, 9, "2016", True)]
        top += 14
    for label, *figures in rows:
        runs.append((72, top, 9, label, label.startswith("Cash Flows")))
        for x, figure in zip((380, 440, 500), figures, strict=True):
            if figure:
                runs.append((x - 4.5 * len(figure) + 18, top, 9, figure, False))
        top += 12
    return runs


def test_unruled_statement_rows_carry_the_years_and_continue_on_the_next_page(tmp_path: Path) -> None:
    first = [
        ("Cash Flows from Investing Activities", "", "", ""),
        ("Purchases of property, plant and equipment", "(1,577)", "(1,373)", "(1,420)"),
        ("Proceeds from sale of PP&E and other assets", "262", "49", "58"),
        ("Acquisitions, net of cash acquired", "13", "(2,023)", "(16)"),
    ]
    second = [
        ("Dividends paid to shareholders", "(3,193)", "(2,803)", "(2,678)"),
        ("Other - net", "(56)", "(121)", "(42)"),
    ]
    note: list[Run] = [(72, 400, 10, "The notes are an integral part of this statement.", False)]
    pages = [
        _statement_page("Consolidated Statement of Cash Flows", first),
        [*_statement_page("Consolidated Statement of Cash Flows (continued)", second), *note],
    ]
    (tmp_path / "statement.pdf").write_bytes(make_pdf(pages))
    tree = tree_of(tmp_path / "statement.pdf")
    (table,) = [n for n in tree.nodes if n.text == "(Millions) | 2018 | 2017 | 2016"]
    assert tree.nodes[table.parent_id].text == "Consolidated Statement of Cash Flows"
    # one table over both pages: the repeated title and header lines of p. 2 are not nodes
    assert _rows_under(tree, table.node_id) == [
        "Cash Flows from Investing Activities",
        "Purchases of property, plant and equipment | 2018: (1,577) | 2017: (1,373) | 2016: (1,420)",
        "Proceeds from sale of PP&E and other assets | 2018: 262 | 2017: 49 | 2016: 58",
        "Acquisitions, net of cash acquired | 2018: 13 | 2017: (2,023) | 2016: (16)",
        "Dividends paid to shareholders | 2018: (3,193) | 2017: (2,803) | 2016: (2,678)",
        "Other - net | 2018: (56) | 2017: (121) | 2016: (42)",
    ]
    assert table.pages == "pp. 1-2" and tree.nodes[-2].pages == "p. 2"
    # the text after the table is a paragraph of the section, not a row
    after = tree.nodes[-1]
    assert after.text == "The notes are an integral part of this statement."
    assert after.block == "paragraph" and after.parent_id == table.parent_id


def test_table_without_header_under_its_caption(tmp_path: Path) -> None:
    runs: list[Run] = [(72, 60, 14, "Debt", True), (72, 90, 9, "Maturities by year", False)]
    for index, (year, amount) in enumerate([("Due in one year", "1,250"), ("Due after one year", "13,411")]):
        runs += [(72, 104 + 12 * index, 9, year, False), (400, 104 + 12 * index, 9, amount, False)]
    (tmp_path / "debt.pdf").write_bytes(make_pdf([runs]))
    tree = tree_of(tmp_path / "debt.pdf")
    caption = next(n for n in tree.nodes if n.text == "Maturities by year")
    assert _rows_under(tree, caption.node_id) == ["Due in one year | 1,250", "Due after one year | 13,411"]


def test_real_filing_cash_flow_statement_rows(tmp_path: Path, shared_datasets: Path) -> None:
    import pypdfium2 as pdfium

    source = pdfium.PdfDocument(shared_datasets / "financebench" / "pdfs" / "3M_2018_10K.pdf")
    page = pdfium.PdfDocument.new()
    page.import_pages(source, [59])  # p. 60: Consolidated Statement of Cash Flows
    page.save(tmp_path / "cash_flows.pdf")
    tree = tree_of(tmp_path / "cash_flows.pdf")
    row = next(n for n in tree.nodes if n.text.startswith("Purchases of property, plant and equipment"))
    assert row.text == (
        "Purchases of property, plant and equipment (PP&E) | 2018: (1,577) | 2017: (1,373) | 2016: (1,420)"
    )
    table = tree.nodes[row.parent_id]
    assert table.text == "(Millions) | 2018 | 2017 | 2016"
    assert sum(1 for n in tree.nodes if n.parent_id == table.node_id) == 38


def _two_level_page() -> list[Run]:
    """Two years, each printed once over its two measures; one figure left blank."""
    runs: list[Run] = [(72, 60, 12, "Sales by segment", True)]
    runs += [(300, 100, 9, "Fiscal year 2019", True), (420, 100, 9, "Fiscal year 2018", True)]
    runs += [(300, 112, 9, "Sales", True), (360, 112, 9, "Margin", True)]
    runs += [(420, 112, 9, "Sales", True), (480, 112, 9, "Margin", True)]
    for index, (label, *figures) in enumerate(
        [("Cars", "1,250", "12%", "1,100", "11%"), ("Vans", "310", "", "290", "8%")]
    ):
        top = 126 + 12 * index
        runs.append((72, top, 9, label, False))
        runs += [(x, top, 9, figure, False) for x, figure in zip((300, 360, 420, 480), figures) if figure]
    return runs


def test_each_row_names_its_full_header_path_and_the_grid_keeps_the_span(tmp_path: Path) -> None:
    (tmp_path / "segments.pdf").write_bytes(make_pdf([_two_level_page()]))
    tree = tree_of(tmp_path / "segments.pdf")
    table = next(n for n in tree.nodes if n.block == "paragraph" and n.text.startswith("Fiscal"))
    assert table.text == (
        "Fiscal year 2019 / Sales | Fiscal year 2019 / Margin | Fiscal year 2018 / Sales | Fiscal year 2018 / Margin"
    )
    assert _rows_under(tree, table.node_id) == [
        "Cars | Fiscal year 2019 / Sales: 1,250 | Fiscal year 2019 / Margin: 12% | "
        "Fiscal year 2018 / Sales: 1,100 | Fiscal year 2018 / Margin: 11%",
        # the blank 2019 margin stays blank: 8% is still 2018's
        "Vans | Fiscal year 2019 / Sales: 310 | Fiscal year 2018 / Sales: 290 | Fiscal year 2018 / Margin: 8%",
    ]


def test_table_grids_give_page_box_spans_and_empty_cells(tmp_path: Path) -> None:
    from rag_assets.core.corpus.parsers.pdf_extract import extract_pdf
    from rag_assets.core.corpus.parsers.pdf_table import GridCell
    from rag_assets.core.corpus.parsers.pdf_table_grids import pdf_table_grids

    (grid,) = pdf_table_grids(extract_pdf(make_pdf([_two_level_page()])).layout)
    assert grid.page == 1 and grid.shape == (4, 5)
    x0, top, x1, bottom = grid.box
    assert 71 < x0 < 73 and 99 < top < 101 and 490 < x1 < 520 and 138 < bottom < 150
    assert GridCell(0, 1, "Fiscal year 2019", 1, 2) in grid.cells
    assert GridCell(0, 3, "Fiscal year 2018", 1, 2) in grid.cells
    assert [c.text for c in grid.cells if c.row == 3] == ["Vans", "310", "", "290", "8%"]


def test_a_title_centred_over_its_columns_heads_each_of_them(tmp_path: Path) -> None:
    # "Share of revenue" is narrower than the three columns it is set over: it overlaps the
    # first two, and the third lies within its own width of it
    runs: list[Run] = [(310, 100, 9, "Share of revenue", True)]
    runs += [(300, 112, 9, "2022", True), (360, 112, 9, "2021", True), (420, 112, 9, "2020", True)]
    for index, (label, *figures) in enumerate(
        [("Pharmacy", "76.9", "76.0", "76.9"), ("Front store", "23.1", "24.0", "23.1")]
    ):
        top = 126 + 12 * index
        runs.append((72, top, 9, label, False))
        runs += [(x, top, 9, figure, False) for x, figure in zip((300, 360, 420), figures)]
    (tmp_path / "shares.pdf").write_bytes(make_pdf([runs]))
    tree = tree_of(tmp_path / "shares.pdf")
    table = next(n for n in tree.nodes if n.block == "paragraph" and n.text.startswith("Share of revenue"))
    assert table.text == "Share of revenue / 2022 | Share of revenue / 2021 | Share of revenue / 2020"
    assert _rows_under(tree, table.node_id)[0] == (
        "Pharmacy | Share of revenue / 2022: 76.9 | Share of revenue / 2021: 76.0 | Share of revenue / 2020: 76.9"
    )


def test_a_real_ruled_table_keeps_its_grid_page_and_box() -> None:
    from rag_assets.core.corpus.parsers.pdf_extract import extract_pdf
    from rag_assets.core.corpus.parsers.pdf_table_grids import pdf_table_grids

    first, second = pdf_table_grids(extract_pdf((DOCUMENTS / "ca-warn-report.pdf").read_bytes()).layout)
    # p. 1: the header row and 36 rows of 7 cells; p. 2 goes on without a header, 43 rows
    assert (first.page, first.shape, second.page, second.shape) == (1, (37, 7), 2, (43, 7))
    assert [c.text for c in first.cells if c.row == 0] == [
        "Notice Date", "Effective", "Received", "Company", "City", "No. Of", "Layoff/Closure",
    ]  # fmt: skip
    assert first.box == pytest.approx((28.6, 104.8, 762.7, 593.3), abs=1)
    # the letter-spaced dates pdfplumber reads ("0 9 / 1 8 / 2 0 15") are whole again
    assert [c.text for c in second.cells if c.row == 0][:3] == ["07/17/2015", "09/18/2015", "07/21/2015"]


def _ruled_table_page(turned: bool) -> bytes:
    """One landscape page (792 x 612 as displayed) with a ruled table of a header row and three
    rows of four cells. Upright: drawn as it is shown. Turned: drawn on a portrait page, every
    glyph and rule turned a quarter to the left, and shown upright by /Rotate 90 (as landscape
    tables in reports are set: the ICDAR 2013 set's eu-015 is one)."""
    rows = [
        ["Country", "Staff", "Budget", "Offices"],
        ["Austria", "120", "4.5", "3"],
        ["Belgium", "310", "12.0", "7"],
        ["Denmark", "95", "3.1", "2"],
    ]
    left, top, width, height = 100.0, 150.0, 120.0, 24.0
    ops = []

    def place(x: float, y_top: float) -> tuple[float, float]:
        """A point given as displayed (top-left origin) in the drawn page's own space."""
        return (y_top, x) if turned else (x, 612 - y_top)

    matrix = "0 1 -1 0" if turned else "1 0 0 1"
    for r, cells in enumerate(rows):
        for c, text in enumerate(cells):
            x, y = place(left + c * width + 6, top + r * height + 16)
            ops.append(f"BT /F1 10 Tf {matrix} {x} {y} Tm ({text}) Tj ET")
    bottom, right = top + len(rows) * height, left + 4 * width
    for r in range(len(rows) + 1):
        (x0, y0), (x1, y1) = place(left, top + r * height), place(right, top + r * height)
        ops.append(f"0.5 w {x0} {y0} m {x1} {y1} l S")
    for c in range(5):
        (x0, y0), (x1, y1) = place(left + c * width, top), place(left + c * width, bottom)
        ops.append(f"0.5 w {x0} {y0} m {x1} {y1} l S")
    stream = "\n".join(ops)
    box = "[0 0 612 792] /Rotate 90" if turned else "[0 0 792 612]"
    return write_pdf(
        [
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [5 0 R] /Count 1 >>",
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
            f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
            f"<< /Type /Page /Parent 2 0 R /MediaBox {box} /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>",
        ]
    )


def test_a_ruled_table_drawn_turned_on_a_page_rotate_sets_upright_keeps_its_grid() -> None:
    from rag_assets.core.corpus.parsers.pdf_extract import extract_pdf
    from rag_assets.core.corpus.parsers.pdf_table_grids import pdf_table_grids

    for turned in (False, True):
        (grid,) = pdf_table_grids(extract_pdf(_ruled_table_page(turned)).layout)
        # the rules give the grid on the page as displayed, whichever way it was drawn
        assert grid.shape == (4, 4), turned
        assert [c.text for c in grid.cells if c.row == 2] == ["Belgium", "310", "12.0", "7"]
        assert grid.box == pytest.approx((100, 150, 580, 246), abs=1)


def test_a_real_ruled_header_over_a_body_ruled_as_one_box_files_every_value_under_its_column() -> None:
    """The Senate's expenditure report (pdfplumber's test file, tests/fixtures/pdfs/public): its
    header is ruled into columns, "Obligation/Service Dates" over Start and End; the body is two
    boxes with no rules inside, each record on one line and its description wrapped onto the
    next. Expected rows read off the printed page."""
    tree = tree_of(PUBLIC / "pdfplumber-senate-expenditures.pdf")
    (table,) = [n for n in tree.nodes if n.text.startswith("DOCUMENT NO. |")]
    assert table.text == (
        "DOCUMENT NO. | DATE POSTED | PAYEE NAME | OBLIGATION/SERVICE DATES / START | "
        "OBLIGATION/SERVICE DATES / END | DESCRIPTION | AMOUNT ($)"
    )
    rows = [n.text for n in tree.nodes if n.parent_id == table.node_id]
    assert len(rows) == 10 + 22  # ten salaries, 22 travel records (DHAW20190001 to DHAW20190070)
    assert (
        rows[9]
        == "PAYEE NAME: GRUENDER, BENJAMIN L | DESCRIPTION: FIELD REPRESENTATIVE FROM SEP. 16 | AMOUNT ($): 1,458.33"
    )
    assert rows[10] == (
        "DOCUMENT NO.: DHAW20190001 | DATE POSTED: 05/03/2019 | PAYEE NAME: CITIBANK - TRAVEL CBA CARD | "
        "OBLIGATION/SERVICE DATES / START: 03/04/2019 | OBLIGATION/SERVICE DATES / END: 03/06/2019 | "
        "DESCRIPTION: STAFF TRANSPORTATION AIRFARE FOR E JOHNSON KANSAS CITY TO WASHINGTON DC AND RETURN | "
        "AMOUNT ($): 920.68"
    )
    # a description wrapped over two lines below its record stays in that record's row
    assert rows[14].startswith("DOCUMENT NO.: DHAW20190005 |")
    assert "SAINT LOUIS TO KANSAS CITY; 3/24 SAINT LOUIS TO WASHINGTON DC | AMOUNT ($): 798.90" in rows[14]
    assert tree.nodes[0].text == "pdfplumber-senate-expenditures"  # no title printed: not a row's text


def _two_blocks_page(
    left: list[tuple[str, ...]], right: list[tuple[str, ...]], header: list[tuple[float, str]]
) -> list[Run]:
    """A page with a header line and rows of a label and figures on the left half and the
    same on the right half (label at x 320), figures right-aligned in columns of 50 pt."""
    runs: list[Run] = [(72, 60, 14, "Balance sheet summary", True)]
    runs += [(x, 100, 9, text, True) for x, text in header]
    for i, (l_row, r_row) in enumerate(zip(left, right, strict=True)):
        top = 116 + 13 * i
        for x_label, row in ((72, l_row), (320, r_row)):
            runs.append((x_label, top, 9, row[0], False))
            for k, figure in enumerate(row[1:]):
                if figure:
                    right_edge = x_label + 128 + 50 * k
                    runs.append((right_edge - 4.5 * len(figure), top, 9, figure, False))
    return runs


def test_two_statements_set_side_by_side_are_two_tables_each_row_under_its_own_headers(tmp_path: Path) -> None:
    left = [
        ("Assets", "", ""),
        ("Cash", "1,200", "1,100"),
        ("Receivables", "840", "790"),
        ("Total assets", "2,040", "1,890"),
    ]
    right = [
        ("Liabilities", "", ""),
        ("Payables", "610", "580"),
        ("Debt", "1,900", "2,000"),
        ("Total liabilities", "2,510", "2,580"),
    ]
    years = [(182, "2023"), (232, "2022"), (430, "2023"), (480, "2022")]
    (tmp_path / "side.pdf").write_bytes(make_pdf([_two_blocks_page(left, right, years)]))
    tree = tree_of(tmp_path / "side.pdf")
    assets, debts = (n for n in tree.nodes if n.text in {"Assets | 2023 | 2022", "Liabilities | 2023 | 2022"})
    assert _rows_under(tree, assets.node_id) == [
        "Cash | 2023: 1,200 | 2022: 1,100",
        "Receivables | 2023: 840 | 2022: 790",
        "Total assets | 2023: 2,040 | 2022: 1,890",
    ]
    assert _rows_under(tree, debts.node_id) == [
        "Payables | 2023: 610 | 2022: 580",
        "Debt | 2023: 1,900 | 2022: 2,000",
        "Total liabilities | 2023: 2,510 | 2022: 2,580",
    ]


def test_a_text_column_with_a_header_of_its_own_inside_one_table_does_not_split_it(tmp_path: Path) -> None:
    """An officers table: a name and an age, then a position in words and years of service.
    The position column looks like a second table's labels, but its header is its own."""
    left = [("Ann Lee", "47", ""), ("Bo Park", "50", ""), ("Cy Diaz", "46", "")]
    right = [("Chief Executive Officer", "23", ""), ("Chief Financial Officer", "7", ""), ("General Counsel", "12", "")]
    header = [(72, "Name"), (182, "Age"), (320, "Position"), (430, "Years")]
    (tmp_path / "officers.pdf").write_bytes(make_pdf([_two_blocks_page(left, right, header)]))
    tree = tree_of(tmp_path / "officers.pdf")
    (table,) = [n for n in tree.nodes if n.text.startswith("Name |")]
    assert _rows_under(tree, table.node_id) == [
        "Ann Lee | Age: 47 | Position: Chief Executive Officer | Years: 23",
        "Bo Park | Age: 50 | Position: Chief Financial Officer | Years: 7",
        "Cy Diaz | Age: 46 | Position: General Counsel | Years: 12",
    ]


def _plan_matrix(icons: bool) -> bytes:
    """A plan comparison without rules: a bold header of plan names over rows of a feature and
    the plans that have it, marked "Yes" (with `icons`, the Pro plan's marks are drawn check
    boxes that print no text), the cells of the plans that lack it left blank."""
    columns = [72, 250, 330, 410]
    matrix = [
        ("Shared folders", True, True, True),
        ("Audit log", False, True, True),
        ("Single sign-on", False, False, True),
        ("Phone support", False, True, False),
    ]
    ops = ["BT /F2 14 Tf 72 718 Td (Plan comparison) Tj ET"]
    ops += [
        f"BT /F2 10 Tf {x} 662 Td ({name}) Tj ET" for x, name in zip(columns, ["Feature", "Basic", "Pro", "Enterprise"])
    ]
    for i, (feature, *has) in enumerate(matrix):
        baseline = 646 - 14 * i
        ops.append(f"BT /F1 10 Tf 72 {baseline} Td ({feature}) Tj ET")
        for x, mark in zip(columns[1:], has):
            if mark and icons and x == columns[2]:
                ops.append(f"0 0.5 0 rg {x} {baseline} 8 8 re f 0 0 0 rg")
            elif mark:
                ops.append(f"BT /F1 10 Tf {x} {baseline} Td (Yes) Tj ET")
    stream = "\n".join(ops)
    fonts = "<< /F1 3 0 R /F2 4 0 R >>"
    return write_pdf(
        [
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [6 0 R] /Count 1 >>",
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
            f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font {fonts} >> /Contents 5 0 R >>",
        ]
    )


def test_a_table_of_words_keeps_each_mark_under_its_plan_and_blank_cells_empty(tmp_path: Path) -> None:
    from rag_assets.core.corpus.parsers.pdf_extract import extract_pdf
    from rag_assets.core.corpus.parsers.pdf_table_grids import pdf_table_grids

    (tmp_path / "plans.pdf").write_bytes(_plan_matrix(icons=False))
    tree = tree_of(tmp_path / "plans.pdf")
    (table,) = [n for n in tree.nodes if n.text == "Feature | Basic | Pro | Enterprise"]
    # a blank cell does not shift the marks after it into the plans before
    assert _rows_under(tree, table.node_id) == [
        "Shared folders | Basic: Yes | Pro: Yes | Enterprise: Yes",
        "Audit log | Pro: Yes | Enterprise: Yes",
        "Single sign-on | Enterprise: Yes",
        "Phone support | Pro: Yes",
    ]
    (grid,) = pdf_table_grids(extract_pdf(_plan_matrix(icons=False)).layout)
    assert grid.shape == (5, 4)
    assert [c.text for c in grid.cells if c.row == 4] == ["Phone support", "", "Yes", ""]


def test_marks_drawn_as_icons_leave_their_cells_empty_not_their_rows_shifted(tmp_path: Path) -> None:
    (tmp_path / "icons.pdf").write_bytes(_plan_matrix(icons=True))
    tree = tree_of(tmp_path / "icons.pdf")
    (table,) = [n for n in tree.nodes if n.text == "Feature | Basic | Pro | Enterprise"]
    # the Pro column's icons print no text: its cells are empty, and Enterprise's marks stay
    # under Enterprise (joined as they come, "Audit log | Yes" would give Pro's place to them)
    assert _rows_under(tree, table.node_id) == [
        "Shared folders | Basic: Yes | Enterprise: Yes",
        "Audit log | Enterprise: Yes",
        "Single sign-on | Enterprise: Yes",
    ]
    assert [n.text for n in tree.nodes][-1] == "Phone support"  # its only mark is an icon


def test_a_table_of_words_joins_its_header_names_wrapped_over_two_lines(tmp_path: Path) -> None:
    """Credit ratings as filings set them: the agencies' names wrap over two bold lines (the
    upper one leaves the first column blank), the ratings are words and letters."""
    page: list[Run] = [(72, 60, 14, "Security Ratings", True)]
    page += [(300, 100, 9, "Moody's Investors", True), (420, 100, 9, "Standard & Poor's", True)]
    page += [(72, 110, 9, "Securities", True), (300, 110, 9, "Service", True), (420, 110, 9, "Ratings Service", True)]
    rows = [
        ("Rating outlook", "Stable", "Stable"),
        ("Senior unsecured debt", "Baa1", "A"),
        ("Commercial paper", "P-2", "A-1"),
    ]
    for i, (label, moodys, sp) in enumerate(rows):
        page += [
            (72, 126 + 12 * i, 9, label, False),
            (300, 126 + 12 * i, 9, moodys, False),
            (420, 126 + 12 * i, 9, sp, False),
        ]
    (tmp_path / "ratings.pdf").write_bytes(make_pdf([page]))
    tree = tree_of(tmp_path / "ratings.pdf")
    (table,) = [n for n in tree.nodes if n.text.startswith("Securities |")]
    assert table.text == "Securities | Moody's Investors Service | Standard & Poor's Ratings Service"
    assert _rows_under(tree, table.node_id) == [
        "Rating outlook | Moody's Investors Service: Stable | Standard & Poor's Ratings Service: Stable",
        "Senior unsecured debt | Moody's Investors Service: Baa1 | Standard & Poor's Ratings Service: A",
        "Commercial paper | Moody's Investors Service: P-2 | Standard & Poor's Ratings Service: A-1",
    ]


def test_a_real_table_of_words_names_its_columns() -> None:
    """pdfplumber's Word 365 test page (tests/fixtures/pdfs/public): a table of words under a bold
    header, read off the page by hand."""
    tree = tree_of(PUBLIC / "pdfplumber-word365-structure.pdf")
    (table,) = [n for n in tree.nodes if n.text == "En-tête 1 | En-tête 2 | En-tête 3"]
    assert _rows_under(tree, table.node_id) == [
        "Ligne 1 | En-tête 2: Alouette | En-tête 3: Farfadet",
        "Linge 2 | En-tête 2: Belette | En-tête 3: Bibitte",
    ]
