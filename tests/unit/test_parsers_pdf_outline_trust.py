"""A PDF's outline names its headings only where the pages print its entries: a junk outline,
or one of a single entry, gives way to the headings the layout shows. Public files, labelled by
hand: see tests/fixtures/pdfs/public/SOURCES.md.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from tests.unit.test_parsers_pdf import outline, tree_of

pytestmark = pytest.mark.unit

PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "pdfs" / "public"


def test_outline_whose_titles_no_page_prints_gives_way_to_the_layout() -> None:
    # pdf.js's bookmark test: five bookmarks ("this bookmark is bold", "... is italic", "... goes
    # to http://google.com") over pages that print only their numbers and one sentence
    tree = tree_of(PUBLIC / "pdfjs-issue3214.pdf")
    assert not any("bookmark" in node.text for node in tree.nodes)
    assert [n.text for n in tree.nodes if n.kind == "content"] == [
        "this is a test document with page numbers at the top"
    ]


def test_outline_entries_numbered_where_the_pages_are_not_head_their_printed_titles() -> None:
    # the outline says "1. Introduction", "1.1 Background"; each page prints "Introduction",
    # "Background" over "Content for ...": one heading per entry, at the outline's level, no
    # printed title left over as text
    tree = tree_of(PUBLIC / "pdfjs-nested_outline.pdf")
    assert outline(tree)[1:] == [
        (1, "Introduction"),
        (2, "Background"),
        (2, "Motivation"),
        (1, "Main Content"),
        (2, "First Topic"),
        (2, "Second Topic"),
        (1, "Conclusion"),
        (2, "Summary"),
        (2, "Future Work"),
    ]
    assert [n.text for n in tree.nodes if n.kind == "content"][:2] == [
        "Content for Introduction",
        "Content for Background",
    ]


def test_one_entry_outline_keeps_the_printed_headings(tmp_path: Path) -> None:
    # the US Copyright Office's DMCA summary with one bookmark, as converters write it (the
    # document's name on page 1): its printed section titles stay its headings
    writer = PdfWriter(clone_from=PdfReader(PUBLIC / "dmca-summary-p1-5.pdf"))
    writer.add_outline_item(title="The Digital Millennium Copyright Act of 1998", page_number=0)
    buffer = io.BytesIO()
    writer.write(buffer)
    (tmp_path / "dmca.pdf").write_bytes(buffer.getvalue())
    headings = [text for _, text in outline(tree_of(tmp_path / "dmca.pdf"))]
    for title in ("INTRODUCTION", "Technical Amendments", "National Eligibility", "No mandate", "Exceptions"):
        assert title in headings
