"""Text a reader of the printed page never sees stays out of the tree: invisible text, white
glyphs on the white page, a printer's slug outside the page's box, text turned against the
page's lines (a stamp along the edge, a rotated box), while a scan's invisible OCR layer and
white words on a dark sign are kept. Public files, labelled by hand: see
tests/fixtures/pdfs/public/SOURCES.md.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter, Transformation

from rag_assets.core.corpus.parsers.pdf_extract import extract_pdf
from tests.unit.test_parsers_pdf import DOCUMENTS, make_pdf, tree_of

pytestmark = pytest.mark.unit

PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "pdfs" / "public"


def _texts(path: Path) -> list[str]:
    return [node.text for node in tree_of(path).nodes]


def test_invisible_render_mode_stamp_is_dropped() -> None:
    # TCPDF writes "Powered by TCPDF (www.tcpdf.org)" in text render mode 3 on every page
    texts = _texts(PUBLIC / "pdfjs-zerowidthline.pdf")
    assert texts[1:] == [
        "First line is thick, second should be 1 device pixel, third should also be 1 device pixel (but scaled 2x).",
        "Stroked text with zero line width.",
    ]
    assert not any("TCPDF" in text for text in texts)


def test_white_stamp_along_the_edge_is_dropped_and_paragraphs_stay_whole() -> None:
    # the Federal Register prints a white, vertical "jbell on DSKJLSW7X2PROD with PROPOSALS
    # VerDate ..." slug down the gutter; read as text it cut the DATES and ADDRESSES paragraphs
    texts = _texts(PUBLIC / "pdfminer-pr-00530-ml-lines.pdf")
    assert "DATES: The FAA must receive comments on this proposed AD by September 21, 2020." in texts
    assert (
        "ADDRESSES: You may send comments, using the procedures found in 14 CFR 11.43 and 11.45, "
        "by any of the following methods:"
    ) in texts
    assert not any("jbell" in text or "DSKJLSW7X2PROD" in text or "Sfmt 4702" in text for text in texts)


def test_rotated_text_is_left_out() -> None:
    # a web page printed with a box turned by 30 degrees ("This is a div element that got
    # rotated."); the upright box with the same opening words stays
    texts = _texts(PUBLIC / "pdfjs-issue2948.pdf")
    assert not any("rotated" in text or "got" in text.split() for text in texts)
    assert any(text.startswith("This page is made of CSS awesomeness") for text in texts)


def test_scan_ocr_layer_over_its_image_is_kept() -> None:
    # a scanned page whose OCR text is drawn invisible over the scan's image: the words are the page's
    text = extract_pdf((PUBLIC / "pdfjs-issue5747.pdf").read_bytes()).plain_text
    assert "Lorem ipsum dolor sit amet, consetetur" in text
    assert "At vero eos et" in text


def test_printer_slug_outside_the_crop_box_dropped_white_caution_on_its_sign_kept() -> None:
    # the IRS instructions carry a proof slug above the trimmed page ("Page 2 of 48 Instructions
    # for Form 1040NR 7:48 - 6-DEC-2007 / The type and rule above prints on all proofs ...") and
    # print a white "CAUTION" on a black sign beside their warnings
    text = extract_pdf((DOCUMENTS / "i1040nr.pdf").read_bytes()).plain_text
    assert "6-DEC-2007" not in text
    assert "prints on all proofs" not in text
    assert text.count("CAUTION") == 2


DMCA = PUBLIC / "dmca-summary-p1-5.pdf"


def test_running_header_and_footer_with_page_numbers_set_inside_the_text_area_dropped() -> None:
    # every page sets "Copyright Office Summary   December 1998   Page N" 11% up from its foot and
    # pages 2-5 "The Digital Millennium Copyright Act of 1998" over their text (not in the margin)
    tree = tree_of(DMCA)
    texts = [node.text for node in tree.nodes]
    assert not any("Page " in text or text == "Copyright Office Summary" for text in texts)
    assert not any(text.startswith("The Digital Millennium Copyright Act of 1998") for text in texts)
    # the cover's title in capitals is not the header that repeats it in small letters
    assert "THE DIGITAL MILLENNIUM COPYRIGHT ACT OF 1998" in texts
    assert [n.page_start for n in tree.nodes if n.text == "December 1998"] == [1]


def test_first_line_indented_paragraph_is_one_paragraph() -> None:
    # the paragraph's first line is set in half an inch; its footnote mark "1" after "(DMCA)"
    # is drawn after the line
    texts = _texts(DMCA)
    assert (
        "The Digital Millennium Copyright Act (DMCA) was signed into law by President Clinton on "
        "October 28, 1998. The legislation implements two 1996 World Intellectual Property "
        "Organization (WIPO) treaties: the WIPO Copyright Treaty and the WIPO Performances and "
        "Phonograms Treaty. The DMCA also addresses a number of other significant copyright-related issues."
    ) in texts
    assert (
        "Title I implements the WIPO treaties. First, it makes certain technical amendments to U.S. "
        "law, in order to provide appropriate references and links to the treaties. Second, it creates "
        "two new prohibitions in Title 17 of the U.S. Code—one on circumvention of technological "
        "measures used by copyright owners to protect their works and one on tampering with copyright "
        "management information—and adds civil remedies and criminal penalties for violating the "
        "prohibitions. In addition, Title I requires the U.S. Copyright Office to perform two joint "
        "studies with the National Telecommunications and Information Administration of the "
        "Department of Commerce (NTIA)."
    ) in texts


def test_section_titles_in_capitals_are_headings() -> None:
    # "INTRODUCTION" and "TITLE I: WIPO TREATY IMPLEMENTATION" are set in bold capitals a point
    # below the body's 12 pt; the sections under them in bold upper and lower case
    headings = [n.text for n in tree_of(DMCA).nodes if n.kind == "structure"]
    for title in (
        "INTRODUCTION",
        "TITLE I: WIPO TREATY IMPLEMENTATION",
        "Technical Amendments",
        "National Eligibility",
        "Restoration of Copyright Protection",
        "Registration as a Prerequisite to Suit",
        "Technological Protection and Copyright Management Systems",
        "Circumvention of Technological Protection Measures",
        "General approach",
        "No mandate",
        "Savings clauses",
        "Exceptions",
    ):
        assert title in headings


def test_diagonal_watermark_is_neither_heading_nor_text(tmp_path: Path) -> None:
    # a 60-pt bold "CONFIDENTIAL DRAFT" stamped across every page at 45 degrees, as an office
    # stamps a form; set straight, so large a line would head every page
    stamp = PdfReader(io.BytesIO(make_pdf([[(0, 732, 60, "CONFIDENTIAL DRAFT", True)]]))).pages[0]
    writer = PdfWriter(clone_from=PdfReader(DMCA))
    for page in writer.pages:
        page.merge_transformed_page(stamp, Transformation().rotate(45).translate(200, 150))
    buffer = io.BytesIO()
    writer.write(buffer)
    (tmp_path / "stamped.pdf").write_bytes(buffer.getvalue())
    tree = tree_of(tmp_path / "stamped.pdf")
    assert not any("CONFIDENTIAL" in node.text or "DRAFT" in node.text for node in tree.nodes)
    headings = [n.text for n in tree.nodes if n.kind == "structure"]
    assert "INTRODUCTION" in headings
    assert "Technical Amendments" in headings


def test_section_title_in_a_small_capitals_font_is_a_heading() -> None:
    # an amsart page (pdf.js's sample): "1. A section" is drawn in CMCSC10, LaTeX's small
    # capitals, centred at the body's size; it prints as capitals and heads the text under it
    tree = tree_of(PUBLIC / "pdfjs-bug1873345.pdf")
    section = next(n for n in tree.nodes if n.text == "1. A SECTION")
    assert section.kind == "structure"
    first = tree.nodes[section.node_id + 1]
    assert first.parent_id == section.node_id
    assert first.text.startswith("The standard permits different interval behavior via the flavor concept")


def test_running_footer_with_a_changing_date_dropped(tmp_path: Path) -> None:
    # a daily bulletin's footer prints the day's date and page; its text stays
    days = [
        ("Monday", "3 March", "The tide rose early and the north pier stayed closed all morning."),
        ("Tuesday", "4 March", "Fishing boats left at dawn after the harbour master lifted the warning."),
        ("Wednesday", "5 March", "A cargo ship unloaded timber at the east quay until late evening."),
        ("Thursday", "6 March", "Divers inspected the lock gates and found no damage from the storm."),
    ]
    pages = [
        [
            (72, 72, 10, text, False),
            (72, 700, 8, f"Harbour Bulletin - {weekday}, {date} 2025 - page {n}", False),
        ]
        for n, (weekday, date, text) in enumerate(days, start=1)
    ]
    (tmp_path / "bulletin.pdf").write_bytes(make_pdf(pages))
    texts = [node.text for node in tree_of(tmp_path / "bulletin.pdf").nodes]
    assert not any("Harbour Bulletin" in text for text in texts)
    assert "A cargo ship unloaded timber at the east quay until late evening." in " ".join(texts)


def test_bold_list_items_hung_from_a_symbol_font_marker_read_whole() -> None:
    # the five titles are listed after a bullet drawn in a symbol font (PDFium reads it "!"),
    # each item's bold act name wrapping onto a second bold line
    tree = tree_of(DMCA)
    item = next(n for n in tree.nodes if n.text.startswith("Title I, the"))
    assert item.kind == "content"
    assert item.text == (
        "Title I, the “WIPO Copyright and Performances and Phonograms Treaties Implementation "
        "Act of 1998,” implements the WIPO treaties."
    )
    assert not any(n.kind == "structure" and n.text.startswith("Treaties Implementation") for n in tree.nodes)
