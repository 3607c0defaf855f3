"""Text a reader of the printed page never sees stays out of the tree: invisible text, white
glyphs on the white page, a printer's slug outside the page's box, text turned against the
page's lines (a stamp along the edge, a rotated box), while a scan's invisible OCR layer and
white words on a dark sign are kept. Public files, labelled by hand: see
tests/fixtures/pdfs/public/SOURCES.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.core.corpus.parsers.pdf_extract import extract_pdf
from tests.unit.test_parsers_pdf import DOCUMENTS, tree_of

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
