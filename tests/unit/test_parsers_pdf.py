"""PDF documents become structure trees with pages, or are rejected with the reason.

Real files others wrote (tests/data/documents, see SOURCES.md) and PDFs made here with PDFium
itself (text drawn at known positions, sizes and fonts), so each layout rule meets a real PDF.
"""

from __future__ import annotations

import io
from pathlib import Path

from pypdf import PdfReader, PdfWriter

from rag_assets.core.corpus.sources import CollectionSpec, Rejection, SourceDocument, ingest
from rag_assets.core.corpus.tree import DocumentTree, TreeNode, tree_problems
from rag_assets.core.corpus.tree_building import document_tree

DOCUMENTS = Path(__file__).resolve().parents[1] / "data" / "documents"

# (x, top, size, text, font) in points from the page's top-left corner; font: False for
# Helvetica, True for Helvetica-Bold, "Courier" (monospaced) or "Oblique" (italic)
Run = tuple[float, float, float, str, bool | str]
_FONTS = {False: 1, True: 2, "Courier": 3, "Oblique": 4}


def make_pdf(pages: list[list[Run]], width: float = 612, height: float = 792) -> bytes:
    """A PDF whose pages draw these text runs in Helvetica (bold: Helvetica-Bold), in this order;
    a page without runs draws a filled shape only (an image-only page). Written object by object
    (the PDF syntax is small), which makes a 1,000-page file in well under a second."""
    fonts = "<< /F1 3 0 R /F2 4 0 R /F3 5 0 R /F4 6 0 R >>"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "",  # the page tree, once the page numbers are known
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Oblique /Encoding /WinAnsiEncoding >>",
    ]
    kids = []
    for runs in pages:
        ops = []
        for x, top, size, text, font in runs:
            escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            literal = "".join(c if ord(c) < 128 else f"\\{c.encode('cp1252')[0]:03o}" for c in escaped)
            ops.append(f"BT /F{_FONTS[font]} {size} Tf {x} {height - top - size} Td ({literal}) Tj ET")
        stream = "\n".join(ops) or "0 0 1 rg 72 72 300 400 re f"
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {width} {height}] "
            f"/Resources << /Font {fonts} >> /Contents {len(objects)} 0 R >>"
        )
        kids.append(f"{len(objects)} 0 R")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    return write_pdf(objects)


def write_pdf(objects: list[str]) -> bytes:
    """A PDF of these objects, numbered from 1 (the first is the catalog), with its xref table."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def read(path: Path, fmt: str = "auto") -> tuple[list[SourceDocument], list[Rejection]]:
    result = ingest(CollectionSpec("docs", str(path), fmt))
    return result.documents, result.rejections


def tree_of(path: Path) -> DocumentTree:
    documents, rejections = read(path)
    assert rejections == []
    (document,) = documents
    tree = document_tree(document)
    assert tree_problems(tree.nodes, tree.text) == []
    return tree


def outline(tree: DocumentTree) -> list[tuple[int, str]]:
    return [(n.depth, n.text) for n in tree.nodes if n.kind == "structure"]


def by_text(tree: DocumentTree, start: str) -> TreeNode:
    return next(n for n in tree.nodes if n.text.startswith(start))


def test_real_sample_pdf_heading_table_and_pages() -> None:
    tree = tree_of(DOCUMENTS / "sample_pdf_1.pdf")
    assert tree.title == "A sample PDF file (sample pdf 1)"
    assert outline(tree) == [(0, "A sample PDF file (sample pdf 1)"), (1, "History and standardization")]
    heading = by_text(tree, "History and standardization")
    body = by_text(tree, "Format (PDF) Adobe Systems made the PDF specification available")
    assert body.parent_id == heading.node_id and body.block == "paragraph" and body.pages == "p. 1"
    # the table is a node (its header line) with a row node per row that names its columns
    table = by_text(tree, "Column 1")
    assert table.text == "Column 1 | Column 2 | Column 3" and table.parent_id == heading.node_id
    rows = [n for n in tree.nodes if n.parent_id == table.node_id]
    assert [n.block for n in rows] == ["table_row"] * 4
    assert rows[0].text == "A | Column 1: 324 | Column 2: 55 million units | Column 3: 2022"
    assert rows[-1].text == "D | Column 1: $54.35 | Column 2: $6345."
    last = tree.nodes[-1]
    assert last.text == "… the page 3 is empty." and last.pages == "p. 4"
    assert tree.nodes[0].pages == "pp. 1-4"
    # "Page 2 of Sample PDF" heads pages 2 and 4: a running header, not content
    assert not any("Sample PDF" in n.text for n in tree.nodes[1:])


def test_real_pdf_running_header_footer_dropped_and_paragraphs_cross_pages() -> None:
    tree = tree_of(DOCUMENTS / "sample_pdf_2.pdf")
    texts = [n.text for n in tree.nodes]
    assert not any("This is a header" in t or "footer number" in t or "Page 2 of 4" in t for t in texts)
    assert [n.text[:30] for n in tree.nodes[1:4]] == [
        "A wiki (/ˈwɪki/ (About this so",
        "Wiki engines usually allow con",
        "Ward Cunningham, the developer",
    ]
    ward = by_text(tree, "Ward Cunningham")
    assert ward.page_start == 2 and ward.text.endswith('"the simplest online database that could possibly work."[4]')
    assert by_text(tree, '"Wiki" (pronounced').pages == "p. 2"
    assert by_text(tree, "A defining characteristic").pages == "p. 3"
    assert by_text(tree, "Navigation Within the text").pages == "p. 4"


def test_real_rendered_page_lines_broken_early_are_list_items() -> None:
    # A gov.uk page printed by Chromium: its list items are HTML <li> lines without their <ul>, so
    # they print one under another with no bullet, no indent and no gap, like a paragraph's lines;
    # each ends with room left for the next word, which a wrapped line never does.
    tree = tree_of(DOCUMENTS / "govuk_employment_contracts.pdf")

    def under(start: str) -> list[tuple[str, str]]:
        parent = by_text(tree, start)
        return [(n.block, n.text) for n in tree.nodes if n.parent_id == parent.node_id]

    assert under("All employees have an employment contract") == [
        ("list_item", "employment conditions"),
        ("list_item", "rights"),
        ("list_item", "responsibilities"),
        ("list_item", "duties"),
    ]
    assert by_text(tree, "These are called the ‘terms’").parent_id == by_text(tree, "Overview").node_id
    assert under("Contract terms could be:")[:5] == [
        ("list_item", "in a written contract, or similar document like a written statement of employment"),
        ("list_item", "verbally agreed"),
        ("list_item", "in an employee handbook or on a company notice board"),
        ("list_item", "in an offer letter from the employer"),
        (
            "list_item",
            "required by law (for example, an employer must pay employees at least the National Minimum Wage)",
        ),
    ]
    assert under("If an employee or worker has a problem receiving their written statement") == [
        ("list_item", "Try to solve the problem with their employer informally."),
        (
            "list_item",
            "If this does not work, take out a grievance against their employer (employers can also get advice "
            "about handling grievances).",
        ),
        ("list_item", "Take a case to an employment tribunal as a last resort."),
    ]
    # a paragraph's wrapped lines still join: each ends where the next word no longer fits
    assert by_text(tree, "Employees and employers must stick").text.endswith(
        "(usually by agreement between the employee and employer)."
    )


def test_line_opening_with_a_dash_under_a_full_line_continues_it(tmp_path: Path) -> None:
    page = [
        (72, 60, 18, "Benefits", True),
        (72, 100, 10, "You could get extra Pension Credit, Housing Benefit or Council Tax Reduction if you get", False),
        (72, 114, 10, "- check with the office dealing with your benefit.", False),
        (72, 140, 10, "Bring these with you:", False),
        (72, 154, 10, "- your passport", False),
        (72, 168, 10, "- a recent bill", False),
    ]
    (tmp_path / "benefits.pdf").write_bytes(make_pdf([page]))
    tree = tree_of(tmp_path / "benefits.pdf")
    assert [(n.block, n.text) for n in tree.nodes if n.kind == "content"] == [
        (
            "paragraph",
            "You could get extra Pension Credit, Housing Benefit or Council Tax Reduction if you get - check with "
            "the office dealing with your benefit.",
        ),
        ("paragraph", "Bring these with you:"),
        ("list_item", "your passport"),
        ("list_item", "a recent bill"),
    ]


def test_short_line_right_above_a_paragraph_is_not_a_heading(tmp_path: Path) -> None:
    # a list drawn without markers whose first item is one word and whose second wraps: the word
    # is set right under nothing and right above its neighbour, at line spacing, so it is neither
    # the start of that paragraph (it ended with room for the next word) nor a heading over it
    page = [
        (72, 60, 10, "They will be given an honorary award if they are not:", False),
        (72, 86, 10, "British", False),
        (72, 98, 10, "a national of a country where the Queen is Head of State, as the rules for the award set", False),
        (72, 110, 10, "out in full.", False),
        (72, 136, 10, "There is a different process for gallantry awards.", False),
    ]
    (tmp_path / "awards.pdf").write_bytes(make_pdf([page]))
    tree = tree_of(tmp_path / "awards.pdf")
    assert [(n.kind, n.block, n.text) for n in tree.nodes[1:]] == [
        ("content", "paragraph", "They will be given an honorary award if they are not:"),
        ("content", "paragraph", "British"),
        (
            "content",
            "paragraph",
            "a national of a country where the Queen is Head of State, as the rules for the award set out in full.",
        ),
        ("content", "paragraph", "There is a different process for gallantry awards."),
    ]


def test_real_scanned_pdf_with_ocr_off_is_rejected_with_the_reason() -> None:
    # read by OCR by default (tests/integration/test_parsers_scanned_pdf.py); `sources.ocr: off` refuses it
    result = ingest(CollectionSpec("docs", str(DOCUMENTS / "non_text_searchable.pdf"), "auto"), ocr="off")
    assert result.documents == []
    (rejection,) = result.rejections
    assert rejection.stage == "ingest"
    assert rejection.reason == (
        "no text on any of its 1 page(s): a scanned or image-only PDF "
        "(page 1: no text layer (a scanned page) and OCR is off)"
    )


def test_headings_from_font_size_weight_and_numbering(tmp_path: Path) -> None:
    page = [
        (72, 60, 24, "Pump Manual", True),
        (72, 100, 10, "Read this manual before installing the pump.", False),
        (72, 130, 16, "1 Installation", True),
        (72, 155, 10, "Mount the pump on a level surface.", False),
        (72, 180, 13, "1.1 Wiring", True),
        (72, 200, 10, "Use a cable rated for the load.", False),
        (72, 215, 10, "• Disconnect the mains first", False),
        (90, 230, 10, "– check with a tester", False),
        (72, 245, 10, "• Tighten every terminal", False),
        (72, 280, 16, "2 Maintenance", True),
        (72, 305, 10, "Clean the filter every month.", False),
    ]
    (tmp_path / "pump.pdf").write_bytes(make_pdf([page]))
    tree = tree_of(tmp_path / "pump.pdf")
    assert tree.title == "Pump Manual"
    assert outline(tree) == [(0, "Pump Manual"), (1, "1 Installation"), (2, "1.1 Wiring"), (1, "2 Maintenance")]
    wiring = by_text(tree, "1.1 Wiring")
    first = by_text(tree, "Disconnect the mains first")
    nested = by_text(tree, "check with a tester")
    assert first.block == "list_item" and nested.parent_id == first.node_id
    assert by_text(tree, "Tighten every terminal").parent_id == first.parent_id
    assert by_text(tree, "Use a cable").parent_id == wiring.node_id
    assert by_text(tree, "Clean the filter").parent_id == by_text(tree, "2 Maintenance").node_id


def test_running_headers_footers_and_page_numbers_dropped(tmp_path: Path) -> None:
    bodies = ["The valve opens when the pressure", "rises above two bar.", "Close it by hand."]
    pages = [
        [
            (72, 20, 9, "ACME Corporation - Service Guide", False),
            (72, 100, 10, body, False),
            (300, 760, 9, f"Page {n} of 3", False),
        ]
        for n, body in enumerate(bodies, start=1)
    ]
    (tmp_path / "guide.pdf").write_bytes(make_pdf(pages))
    tree = tree_of(tmp_path / "guide.pdf")
    # the sentence cut by the page break is one paragraph on both pages
    assert [(n.text, n.pages) for n in tree.nodes[1:]] == [
        ("The valve opens when the pressure rises above two bar.", "pp. 1-2"),
        ("Close it by hand.", "p. 3"),
    ]


def test_two_columns_read_left_column_first(tmp_path: Path) -> None:
    # drawn row by row across both columns: the content stream's order is not the reading order
    runs: list[Run] = [(72, 50, 18, "Two Column Report", True)]
    # each column's paragraph ends its sentence at the column's foot (one that does not runs on
    # into the next column: see test_parsers_pdf_reading.py)
    for row in range(8):
        end = "." if row == 7 else ""
        runs.append((72, 100 + 14 * row, 10, f"left column line {row} text{end}", False))
        runs.append((330, 100 + 14 * row, 10, f"right column line {row} text{end}", False))
    (tmp_path / "columns.pdf").write_bytes(make_pdf([runs]))
    tree = tree_of(tmp_path / "columns.pdf")
    contents = [n.text for n in tree.nodes if n.kind == "content"]
    assert contents == [
        " ".join(f"left column line {row} text" for row in range(8)) + ".",
        " ".join(f"right column line {row} text" for row in range(8)) + ".",
    ]


def test_outline_gives_the_headings(tmp_path: Path) -> None:
    page1 = [
        (72, 60, 12, "Annual Report", False),
        (72, 90, 10, "Overview of the year.", False),
        (72, 120, 10, "Revenue", False),
        (72, 140, 10, "Revenue grew by a tenth.", False),
    ]
    page2 = [(72, 60, 10, "Costs", False), (72, 80, 10, "Costs fell.", False)]
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf([page1, page2]))))
    top = writer.add_outline_item(title="Annual Report", page_number=0)
    writer.add_outline_item(title="Revenue", page_number=0, parent=top)
    writer.add_outline_item(title="Costs", page_number=1, parent=top)
    buffer = io.BytesIO()
    writer.write(buffer)
    (tmp_path / "report.pdf").write_bytes(buffer.getvalue())
    tree = tree_of(tmp_path / "report.pdf")
    # same size and weight as the body: only the bookmarks make these headings; the top entry
    # is the printed title, so the root
    assert outline(tree) == [(0, "Annual Report"), (1, "Revenue"), (1, "Costs")]
    assert by_text(tree, "Costs fell.").parent_id == by_text(tree, "Costs").node_id
    assert by_text(tree, "Costs").pages == "p. 2"


def test_encrypted_pdf_rejected(tmp_path: Path) -> None:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf([[(72, 72, 10, "secret", False)]]))))
    writer.encrypt("letmein", algorithm="AES-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    (tmp_path / "locked.pdf").write_bytes(buffer.getvalue())
    documents, rejections = read(tmp_path / "locked.pdf")
    assert documents == [] and "encrypted PDF" in rejections[0].reason and "password" in rejections[0].reason


def test_truncated_malformed_and_image_only_pdfs_rejected(tmp_path: Path) -> None:
    whole = (DOCUMENTS / "sample_pdf_1.pdf").read_bytes()
    (tmp_path / "cut.pdf").write_bytes(whole[: len(whole) // 2])
    (tmp_path / "garbage.pdf").write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40 + b"\n%%EOF\n")
    (tmp_path / "image.pdf").write_bytes(make_pdf([[], []]))
    (tmp_path / "empty.pdf").write_bytes(b"")
    (tmp_path / "notes.pdf").write_bytes(b"just some text, not a PDF")
    documents, rejections = read(tmp_path)
    assert documents == []
    reasons = {Path(r.uri).name: r.reason for r in rejections}
    assert "truncated" in reasons["cut.pdf"]
    assert "damaged PDF" in reasons["garbage.pdf"]
    assert "no text on any of its 2 page(s): a scanned or image-only PDF" in reasons["image.pdf"]
    assert reasons["empty.pdf"] == "empty document (no text)"
    assert "not a PDF file" in reasons["notes.pdf"]


def test_thousand_pages(tmp_path: Path) -> None:
    pages = [
        [
            (72, 20, 9, "Big Manual", False),
            (72, 80, 16, f"Chapter {n}", True),
            (72, 110, 10, f"Text of chapter {n}.", False),
            (300, 760, 9, str(n), False),
        ]
        for n in range(1, 1001)
    ]
    (tmp_path / "big.pdf").write_bytes(make_pdf(pages))
    tree = tree_of(tmp_path / "big.pdf")
    assert tree.title == "big"  # every page's heading is as large: none of them is the title
    headings = [n for n in tree.nodes if n.block == "heading"]
    assert [n.text for n in headings] == [f"Chapter {n}" for n in range(1, 1001)]
    assert [n.page_start for n in headings] == list(range(1, 1001))
    assert tree.content_count == 1000 and not any(n.text == "Big Manual" for n in tree.nodes)


def test_monospaced_code_keeps_indentation_blank_lines_and_runs_over_a_page(tmp_path: Path) -> None:
    advance = 9 * 0.6  # Courier's glyphs are 0.6 em wide
    page1 = [
        (72, 60, 16, "Example", True),
        (72, 90, 10, "Run this program:", False),
        (72, 110, 9, "def double(x):", "Courier"),
        (72 + 4 * advance, 121, 9, "return  2 * x", "Courier"),
        (72, 143, 9, "print(double(21))", "Courier"),
        (72, 700, 9, "for n in range(3):", "Courier"),
    ]
    page2 = [(72 + 4 * advance, 60, 9, "print(n)", "Courier"), (72, 90, 10, "It prints 42.", False)]
    (tmp_path / "code.pdf").write_bytes(make_pdf([page1, page2]))
    tree = tree_of(tmp_path / "code.pdf")
    assert tree.title == "Example (code)"
    assert [(n.depth, n.block, n.text, n.pages) for n in tree.nodes[1:]] == [
        (1, "paragraph", "Run this program:", "p. 1"),
        (1, "code", "def double(x):\n    return  2 * x\n\nprint(double(21))", "p. 1"),
        (1, "code", "for n in range(3):\n    print(n)", "pp. 1-2"),
        (1, "paragraph", "It prints 42.", "p. 2"),
    ]


def _with_title(data: bytes, title: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.add_metadata({"/Title": title})
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def test_title_from_metadata_unless_it_is_a_file_name(tmp_path: Path) -> None:
    page = [(72, 60, 20, "Overview", True), (72, 100, 10, "The pump moves water.", False)]
    (tmp_path / "stated.pdf").write_bytes(_with_title(make_pdf([page]), "Pump Service Guide"))
    (tmp_path / "named.pdf").write_bytes(_with_title(make_pdf([page]), "Microsoft Word - pump guide.docx"))
    stated = tree_of(tmp_path / "stated.pdf")
    assert stated.title == "Pump Service Guide" and outline(stated) == [(0, "Pump Service Guide"), (1, "Overview")]
    # the printed title instead, with the file's name, which it does not say
    assert tree_of(tmp_path / "named.pdf").title == "Overview (named)"
    (tmp_path / "pump_overview.pdf").write_bytes(make_pdf([page]))
    assert tree_of(tmp_path / "pump_overview.pdf").title == "Overview (pump overview)"
    (tmp_path / "Overview.pdf").write_bytes(make_pdf([page]))
    assert tree_of(tmp_path / "Overview.pdf").title == "Overview"  # the title says the name
