"""Company filings read as their Part / Item / statement / note structure.

A 10-K drawn here as filings set it (every heading at body size, bold; Items that end with a
period; a contents page; a company line over every page), and real pages of a FinanceBench
filing from ../shared/datasets when that folder is present.
"""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pytest

from tests.unit.test_parsers_pdf import Run, make_pdf, outline, tree_of

pytestmark = pytest.mark.unit


def _page(*lines: tuple[str, bool]) -> list[Run]:
    runs: list[Run] = [(72, 75, 10, "Acme Corporation and Subsidiaries", False)]
    for index, (text, bold) in enumerate(lines):
        runs.append((72, 100 + 20 * index, 10, text, bold))
    return runs


def _filing() -> bytes:
    cover = [(200, 100, 16, "FORM 10-K", True), (200, 140, 14, "ACME CORPORATION", True)]
    # the form's check boxes: a bold mark before each kind of report, its line bold too
    cover += [(72, 170, 12, "x", True), (90, 186, 10, "ANNUAL REPORT PURSUANT TO SECTION 13", True)]
    cover += [(72, 210, 12, "o", True), (90, 226, 10, "TRANSITION REPORT PURSUANT TO SECTION 13", True)]
    contents = [(250, 80, 10, "Table of Contents", True)]
    entries = [("Item 1. Business", "3"), ("Item 1A. Risk Factors", "3"), ("Item 7. Management's Discussion", "4")]
    for index, (entry, number) in enumerate([*entries, ("Item 8. Financial Statements", "5")]):
        contents += [(72, 120 + 16 * index, 10, entry, False), (500, 120 + 16 * index, 10, number, False)]
    contents += [(72, 200, 10, "PART I", True), (72, 220, 10, "PART II", True)]
    pages = [
        cover,
        contents,
        [
            *_page(
                ("PART I", True),
                ("Item 1. Business.", True),
                ("General", True),
                ("Acme makes anvils.", False),
            ),
            # a label set at a tab stop before its title: one heading
            (72, 180, 10, "ITEM 1A.", True),
            (160, 180, 10, "Risk Factors", True),
            (72, 200, 10, "Anvils may fall.", False),
        ],
        _page(("PART II", True), ("Item 7. Management's Discussion and Analysis.", True), ("Sales rose.", False)),
        _page(
            ("Item 8. Financial Statements and Supplementary Data.", True),
            ("Consolidated Statements of Cash Flows", True),
            ("(In millions)", False),
        ),
        _page(
            ("Notes to Consolidated Financial Statements", True), ("Note 7 — Debt", True), ("Acme owes nothing.", False)
        ),
    ]
    return make_pdf(pages)


def test_filing_parts_items_statements_and_notes_at_their_levels(tmp_path: Path) -> None:
    (tmp_path / "acme.pdf").write_bytes(_filing())
    tree = tree_of(tmp_path / "acme.pdf")
    # the cover's largest line, and the file's name that tells one filing from another
    assert tree.title == "FORM 10-K (acme)"
    # the cover is no cascade: its check boxes and report kinds are its text, under the title
    cover = [n.text for n in tree.nodes if n.page_start == 1 and n.kind == "content"]
    assert cover == [
        "ACME CORPORATION",
        "x",
        "ANNUAL REPORT PURSUANT TO SECTION 13",
        "o",
        "TRANSITION REPORT PURSUANT TO SECTION 13",
    ]
    assert outline(tree)[1:] == [
        (1, "Table of Contents"),  # the contents page's title; its entries are no headings
        (1, "PART I"),
        (2, "Item 1. Business."),
        (3, "General"),
        (2, "ITEM 1A. Risk Factors"),
        (1, "PART II"),
        (2, "Item 7. Management's Discussion and Analysis."),
        (2, "Item 8. Financial Statements and Supplementary Data."),
        (3, "Consolidated Statements of Cash Flows"),
        (3, "Notes to Consolidated Financial Statements"),
        (4, "Note 7 — Debt"),
    ]
    texts = [n.text for n in tree.nodes]
    # the contents page lists Items: its lines are not headings; the company line over every page is no text
    assert "Acme Corporation and Subsidiaries" not in texts
    assert [n.text for n in tree.nodes if n.block == "heading" and n.page_start == 2] == ["Table of Contents"]
    assert tree.nodes[texts.index("(In millions)")].block == "paragraph"


PAGES = {4: "Item 1. Business.", 13: "Item 1A. Risk Factors.", 31: "Item 7.", 118: "Item 7A."}


def test_real_filing_items_under_their_parts(tmp_path: Path, shared_datasets: Path) -> None:
    source = pdfium.PdfDocument(shared_datasets / "financebench" / "pdfs" / "PEPSICO_2022_10K.pdf")
    few = pdfium.PdfDocument.new()
    few.import_pages(source, [2, 3, 12, 29, 30, 117])  # contents, Item 1, 1A, Part II + Item 5, Item 7, 7A/8
    few.save(tmp_path / "pepsico.pdf")
    tree = tree_of(tmp_path / "pepsico.pdf")
    headings = {n.text: n for n in tree.nodes if n.kind == "structure"}
    parts = {text: node for text, node in headings.items() if text.startswith("PART")}
    assert sorted(parts) == ["PART I", "PART II"]
    for text in ("Item 1. Business.", "Item 1A. Risk Factors."):
        assert headings[text].parent_id == parts["PART I"].node_id
    items = [n for n in tree.nodes if n.kind == "structure" and n.text.startswith("Item")]
    assert [n.text.split()[1] for n in items] == ["1.", "1A.", "5.", "7.", "7A.", "8.", "9.", "9A."]
    assert all(tree.nodes[n.parent_id].text.startswith("PART") for n in items)
    # no Part or Item on the contents page (p. 1 here) is a heading
    assert not any(
        n.page_start == 1 and n.text.startswith(("PART", "Item")) for n in tree.nodes if n.kind == "structure"
    )


def _lines(top: float, *texts: str, size: float = 10, bold: bool = False) -> list[Run]:
    """Lines set under one another at the body's leading (one paragraph unless a line ends it)."""
    return [(72, top + 12 * index, size, text, bold) for index, text in enumerate(texts)]


def _plain_items_filing() -> bytes:
    """A 10-Q that sets its Part II Items in the body's own type, JPMorgan's way, and its MD&A
    sections in 12 pt capitals over 12 pt bold sub-sections."""
    body = ("The Firm reviews its results each", "quarter and reports them in full.", "Nothing else was found there.")
    return make_pdf(
        [
            [(200, 100, 16, "FORM 10-Q", True), *_lines(140, "For the quarterly period ended March 31")],
            [
                (72, 80, 12, "EXECUTIVE OVERVIEW", False),
                *_lines(100, *body),
                (72, 150, 12, "Business Developments", True),
                *_lines(170, *body),
                (72, 220, 12, "CONSOLIDATED RESULTS OF OPERATIONS", False),
                *_lines(240, *body),
                *_lines(290, "Selected impacts of securities on the", "Consolidated statements of income", bold=True),
                *_lines(322, *body),
            ],
            [
                (72, 80, 12, "Part II - Other Information", True),
                *_lines(100, "Item 1. Legal Proceedings.", *body),
                *_lines(150, "Item 1A. Risk Factors.", *body),
                *_lines(200, "Item 3. Quantitative and Qualitative", "Disclosures About Market Risk."),
                *_lines(240, *body),
                *_lines(290, "Item 4. Controls and Procedures."),
                *_lines(310, *body),
            ],
        ]
    )


def test_items_set_in_the_body_type_head_their_text_in_a_filing(tmp_path: Path) -> None:
    (tmp_path / "bank.pdf").write_bytes(_plain_items_filing())
    tree = tree_of(tmp_path / "bank.pdf")
    assert outline(tree) == [
        (0, "FORM 10-Q (bank)"),
        # the sections in capitals above the bold sub-section of the same size, below the filing's own levels
        (1, "EXECUTIVE OVERVIEW"),
        (2, "Business Developments"),
        (1, "CONSOLIDATED RESULTS OF OPERATIONS"),
        # a heading that breaks mid-phrase runs on over a statement's name: one heading, no statement
        (2, "Selected impacts of securities on the Consolidated statements of income"),
        (1, "Part II - Other Information"),
        (2, "Item 1. Legal Proceedings."),
        (2, "Item 1A. Risk Factors."),
        (2, "Item 3. Quantitative and Qualitative Disclosures About Market Risk."),
        (2, "Item 4. Controls and Procedures."),
    ]
    legal = next(n for n in tree.nodes if n.text == "Item 1. Legal Proceedings.")
    under = [n for n in tree.nodes if n.parent_id == legal.node_id]
    assert [n.text for n in under] == [
        "The Firm reviews its results each quarter and reports them in full.",
        "Nothing else was found there.",
    ]


def test_a_paragraph_that_opens_with_an_item_name_outside_a_filing_stays_a_paragraph(tmp_path: Path) -> None:
    lines = _lines(
        100, "Item 1. Flour and Water.", "Mix them in a bowl for a minute.", "Then rest the dough overnight."
    )
    lines += _lines(
        150, "Item 2. Salt and Yeast.", "Add both once the dough has rested.", "Knead it until it is smooth."
    )
    (tmp_path / "recipe.pdf").write_bytes(make_pdf([[(72, 70, 16, "Bread", True), *lines]]))
    tree = tree_of(tmp_path / "recipe.pdf")
    assert outline(tree) == [(0, "Bread (recipe)")]
    assert next(n.text for n in tree.nodes if n.kind == "content").startswith("Item 1. Flour and Water.")


def test_real_10q_items_in_body_type_under_their_part_and_notes_under_theirs(
    tmp_path: Path, shared_datasets: Path
) -> None:
    source = pdfium.PdfDocument(shared_datasets / "financebench" / "pdfs" / "JPMORGAN_2021Q1_10Q.pdf")
    few = pdfium.PdfDocument.new()
    # the last statement and the notes' first page; Part II's Items (in the body's type)
    few.import_pages(source, [82, 83, 171, 173])
    few.save(tmp_path / "jpmorgan.pdf")
    tree = tree_of(tmp_path / "jpmorgan.pdf")
    headings = {n.text: n for n in tree.nodes if n.kind == "structure"}
    part = headings["Part II – Other Information"]
    for item in ("Item 1. Legal Proceedings.", "Item 1A. Risk Factors.", "Item 6. Exhibits."):
        assert headings[item].parent_id == part.node_id
    note = headings["Note 1 – Basis of presentation"]
    assert tree.nodes[note.parent_id].text == "NOTES TO CONSOLIDATED FINANCIAL STATEMENTS (unaudited)"
