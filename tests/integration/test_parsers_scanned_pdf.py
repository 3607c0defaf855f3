"""Scanned PDF pages are read by OCR (Tesseract) into the same tree a text layer gives, with their
pages; a page OCR cannot read is reported by file and page.

Tesseract is a Debian package that `make install` brings (install-system-packages.sh): these
tests fail, not skip, where it is missing.
"""

from __future__ import annotations

import io
import json
import logging
import zlib
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from PIL import Image

from rag_assets.core.corpus.parsers.pdf_extract import extract_pdf
from rag_assets.core.corpus.sources import CollectionSpec, ingest
from rag_assets.core.corpus.tree import tree_problems
from rag_assets.core.corpus.tree_building import document_tree
from tests.unit.test_parsers_pdf import DOCUMENTS, make_pdf, write_pdf

pytestmark = pytest.mark.integration

PAGES = [
    [
        (72, 60, 20, "Boiler Guide", True),
        (72, 100, 11, "Read this guide before you install the boiler.", False),
        (72, 140, 16, "Installation", True),
        (72, 170, 11, "Fit the boiler to a solid wall and leave room for servicing.", False),
    ],
    [
        (72, 60, 16, "Servicing", True),
        (72, 90, 11, "Have the boiler serviced once a year by an engineer.", False),
    ],
]


def scanned(pdf: bytes, dpi: int = 200) -> bytes:
    """The PDF's pages as pictures only (what a scanner gives): rendered, saved as a PDF of images."""
    document = pdfium.PdfDocument(pdf)
    images = [document[i].render(scale=dpi / 72, grayscale=True).to_pil().convert("L") for i in range(len(document))]
    buffer = io.BytesIO()
    images[0].save(buffer, format="PDF", save_all=True, append_images=images[1:], resolution=dpi)
    return buffer.getvalue()


def scan_with_text_layer(image: Image.Image, hidden: str, width: float = 612, height: float = 792) -> bytes:
    """A one-page PDF as a scanner with poor OCR writes it: the page's picture, and over it the
    OCR's text in render mode 3 (invisible), here `hidden`."""
    pixels = zlib.compress(image.convert("L").tobytes())
    text = hidden.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    content = f"q {width} 0 0 {height} 0 0 cm /Im1 Do Q BT 3 Tr /F1 10 Tf 72 700 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {width} {height}] /Contents 4 0 R "
        "/Resources << /Font << /F1 6 0 R >> /XObject << /Im1 5 0 R >> >> >>".encode(),
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
        b"/BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream"
        % (image.width, image.height, len(pixels), pixels),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_image_only_pdf_reads_as_the_tree_of_its_text(tmp_path: Path) -> None:
    path = tmp_path / "docs" / "boiler.pdf"
    path.parent.mkdir()
    path.write_bytes(scanned(make_pdf(PAGES)))
    assert pdfium.PdfDocument(path)[0].get_textpage().count_chars() == 0  # no text layer at all
    result = ingest(CollectionSpec("docs", str(path.parent), "auto"))
    assert result.rejections == []
    (document,) = result.documents
    assert json.loads(document.text)["ocr"] == [1, 2]
    tree = document_tree(document)
    assert tree_problems(tree.nodes, tree.text) == []
    # the tree the text layer gives (the heading sizes come from the words' heights)
    assert [(n.depth, n.text, n.pages) for n in tree.nodes] == [
        (0, "Boiler Guide", "pp. 1-2"),
        (1, "Read this guide before you install the boiler.", "p. 1"),
        (1, "Installation", "p. 1"),
        (2, "Fit the boiler to a solid wall and leave room for servicing.", "p. 1"),
        (1, "Servicing", "p. 2"),
        (2, "Have the boiler serviced once a year by an engineer.", "p. 2"),
    ]


def test_real_scan_reads_its_words(tmp_path: Path) -> None:
    # a scanned page from haystack's test files (tests/data/documents/SOURCES.md), words read by eye
    result = ingest(CollectionSpec("docs", str(DOCUMENTS / "non_text_searchable.pdf"), "auto"))
    assert result.rejections == []
    (document,) = result.documents
    text = " ".join(n.text for n in document_tree(document).nodes)
    for words in (
        "This is an example of a non-text-searchable PDF.",
        "it cannot be rendered as plain text by the",
        "regardless of how neatly it is organized.",
    ):
        assert words in text
    assert {n.pages for n in document_tree(document).nodes} == {"p. 1"}


def test_a_page_ocr_cannot_read_is_reported_by_file_and_page(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # page 2 draws a filled shape only: something is printed, OCR finds no word in it
    pdf = make_pdf([[(72, 72, 11, "The only page with words on it.", False)], []])
    with caplog.at_level(logging.WARNING):
        extracted = extract_pdf(pdf, ocr="auto", name="shapes.pdf")
    assert extracted.unread_pages == ((2, "no text layer and OCR found no words"),)
    assert json.loads(extracted.layout)["unread"] == [[2, "no text layer and OCR found no words"]]
    assert "shapes.pdf page 2: no text read: no text layer and OCR found no words" in caplog.text
    # the collection's reading names it too (source_documents logs these lines as warnings)
    (tmp_path / "shapes.pdf").write_bytes(pdf)
    result = ingest(CollectionSpec("docs", str(tmp_path), "auto"))
    assert [d.doc_id for d in result.documents] == ["docs/shapes.pdf"]
    assert result.unread_pages() == [
        f"{tmp_path / 'shapes.pdf'} page 2: no text read: no text layer and OCR found no words"
    ]


def test_a_garbage_text_layer_is_read_again_by_ocr() -> None:
    picture = pdfium.PdfDocument(make_pdf(PAGES[:1]))[0].render(scale=200 / 72, grayscale=True).to_pil()
    garbage = "~;,i ' ll'l .1:.. ,i ~~ '' ;: .:. l1' ,,. ~:; i'l .;, |!| ^^ ,.' tHe lIl rnmw"
    pdf = scan_with_text_layer(picture, garbage)
    assert "rnmw" in pdfium.PdfDocument(pdf)[0].get_textpage().get_text_range()  # the layer is there
    extracted = extract_pdf(pdf)
    assert json.loads(extracted.layout)["ocr"] == [1]
    assert "rnmw" not in extracted.plain_text
    assert "Fit the boiler to a solid wall and leave room for servicing." in extracted.plain_text
    # with OCR off the text layer is what there is
    assert "rnmw" in extract_pdf(pdf, ocr="off").plain_text


def test_a_scan_with_a_stamped_page_number_is_read_by_ocr() -> None:
    # a few words of text layer (a page number stamped on the scan) are not the page's content
    picture = pdfium.PdfDocument(make_pdf(PAGES[1:]))[0].render(scale=200 / 72, grayscale=True).to_pil()
    extracted = extract_pdf(scan_with_text_layer(picture, "Page 7"))
    assert json.loads(extracted.layout)["ocr"] == [1]
    assert "Have the boiler serviced once a year by an engineer." in extracted.plain_text


def test_a_title_over_a_page_sized_picture_keeps_its_text_layer() -> None:
    # a born-digital cover: a photo under its title; OCR reads no more words than the layer has
    cover = make_pdf([[(72, 60, 20, "Boiler Guide", True)]])
    picture = pdfium.PdfDocument(cover)[0].render(scale=200 / 72, grayscale=True).to_pil()
    extracted = extract_pdf(scan_with_text_layer(picture, "Boiler Guide"))
    assert "ocr" not in json.loads(extracted.layout)
    assert extracted.plain_text == "Boiler Guide"


def test_a_scan_set_on_its_side_is_turned_upright_and_read() -> None:
    """docling's OCR test page, upright and turned on its side (tests/fixtures/pdfs/public/SOURCES.md):
    on its side Tesseract first reads a few junk letters it does not trust ("UOISJBAUOD 4Gqd"),
    which once became the document's text; its orientation detection turns the picture upright
    and the sentence is read as from the upright page."""
    public = Path(__file__).resolve().parents[1] / "fixtures" / "pdfs" / "public"
    sentence = "Docling bundles PDF document conversion to JSON and Markdown in an easy self contained package"
    upright = extract_pdf((public / "docling-ocr-test.pdf").read_bytes())
    assert json.loads(upright.layout)["ocr"] == [1]
    assert " ".join(upright.plain_text.split()) == sentence
    turned = extract_pdf((public / "docling-ocr-test-rotated-90.pdf").read_bytes())
    layout = json.loads(turned.layout)
    assert layout["ocr"] == [1] and turned.unread_pages == ()
    assert " ".join(turned.plain_text.split()) == sentence
    # the page is displayed landscape (842 x 595); its text reads upright on the turned picture
    assert (layout["pages"][0]["w"], layout["pages"][0]["h"]) == (595.2, 841.9)


FRENCH_PAGE = [
    (72, 60, 18, "Plan local d'urbanisme", True),
    (72, 100, 11, "Le règlement s'applique à l'ensemble du territoire de la commune.", False),
    (72, 120, 11, "Les hauteurs des façades ne dépassent pas douze mètres.", False),
]


def test_a_french_scan_is_read_with_the_french_language_data(tmp_path: Path) -> None:
    """`ocr_languages` names Tesseract's data (`make install` brings tesseract-ocr-fra): with the
    English data alone the accents go wrong or whole words drop out ("façades"), with the French
    data every word of the page is read as printed."""
    (tmp_path / "plu.pdf").write_bytes(scanned(make_pdf([FRENCH_PAGE])))
    result = ingest(CollectionSpec("docs", str(tmp_path), "auto"), ocr_languages="fra+eng")
    assert result.rejections == []
    (document,) = result.documents
    assert [n.text for n in document_tree(document).nodes] == [
        "Plan local d'urbanisme (plu)",  # the title, with the file's name after it
        "Le règlement s'applique à l'ensemble du territoire de la commune.",
        "Les hauteurs des façades ne dépassent pas douze mètres.",
    ]
    english = extract_pdf(scanned(make_pdf([FRENCH_PAGE]))).plain_text
    assert "Les hauteurs des façades ne dépassent pas douze mètres." not in english


def test_a_language_without_its_data_is_reported_naming_the_package(tmp_path: Path) -> None:
    (tmp_path / "plu.pdf").write_bytes(scanned(make_pdf([FRENCH_PAGE])))
    result = ingest(CollectionSpec("docs", str(tmp_path), "auto"), ocr_languages="xyz")
    assert result.documents == []
    (rejection,) = result.rejections
    assert "Tesseract has no language data for xyz: apt-get install tesseract-ocr-xyz" in rejection.reason
    with pytest.raises(ValueError, match="ocr_languages must be Tesseract language codes"):
        extract_pdf(make_pdf([FRENCH_PAGE]), ocr_languages="fra eng")


def _unmapped_font_page() -> bytes:
    """A page whose caption is in Helvetica and whose eight body lines are in a font whose
    encoding names glyphs no Unicode map knows (/zz97 ...): PDFium has no text for them, as for a
    document set in an embedded font without a map, whose few mapped words are all its layer says."""
    names = " ".join(f"/zz{code}" for code in range(97, 123))
    unmapped = f"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /Differences [97 {names}] >> >>"
    body = "\n".join(
        f"BT /F2 11 Tf 72 {700 - 14 * i} Td (the quick brown fox jumps over the lazy dog) Tj ET" for i in range(8)
    )
    stream = f"BT /F1 11 Tf 72 720 Td (Table 4) Tj ET\n{body}"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        "/Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> /Contents 3 0 R >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        unmapped,
    ]
    return write_pdf(objects)


def test_a_text_layer_mostly_without_unicode_is_read_by_ocr() -> None:
    # its mapped words ("Table 4") pass the garbage statistics, but 85% of its glyphs have no text
    extracted = extract_pdf(_unmapped_font_page())
    assert json.loads(extracted.layout)["ocr"] == [1]
    assert extracted.plain_text.strip() == "Table 4"
    assert "ocr" not in json.loads(extract_pdf(_unmapped_font_page(), ocr="off").layout)
