"""Slide decks printed to PDF: one heading per slide, its title, and no other line of the slide a
heading; a deck told from a landscape report by the size of its text. A real deck others printed
(docling's Impress test deck, tests/fixtures/pdfs/public/SOURCES.md) and decks drawn here."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from tests.unit.test_parsers_pdf import Run, make_pdf, outline, tree_of

pytestmark = pytest.mark.unit

PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "pdfs" / "public"
WIDTH, HEIGHT = 960, 540  # PowerPoint's 16:9 slide, in points


def _slide(title: str, bullets: list[str], label: str | None = None, top: float = 40) -> list[Run]:
    runs: list[Run] = [(60, top, 36, title, False)]
    runs += [(80, 140 + 40 * i, 22, f"• {text}", False) for i, text in enumerate(bullets)]
    if label:  # a chart's big figure at the foot of the slide, larger than the title
        runs.append((300, 400, 48, label, True))
    return runs


def test_real_impress_deck_on_turned_pages_has_one_heading_per_slide() -> None:
    tree = tree_of(PUBLIC / "docling-odf-presentation.pdf")
    # slide 1's title is the document's; slide 3 prints no title (lists only)
    assert outline(tree) == [(0, "Test Table Slide (docling-odf-presentation)"), (1, "Second slide title")]
    texts = [n.text for n in tree.nodes if n.pages == "p. 2" and n.kind == "content"]
    assert texts[:2] == ["Let’s introduce a list", "With foo"]  # read upright: the page is turned by /Rotate
    assert "A rectangle shape with this text inside." in " ".join(texts)


def test_drawn_deck_titles_are_its_headings_and_a_big_chart_figure_is_not(tmp_path: Path) -> None:
    slides = [
        _slide("Quarterly review", ["Revenue up in every region", "Margins held"]),
        _slide("Revenue by region", ["Asia led the growth", "Europe flat"], label="$ 4.2 bn"),
        _slide("Revenue by region", ["Americas grew 3%", "Outlook unchanged"]),  # a continued slide
        _slide("Next steps", ["Hire two analysts"]),
    ]
    (tmp_path / "deck.pdf").write_bytes(make_pdf(slides, width=WIDTH, height=HEIGHT))
    tree = tree_of(tmp_path / "deck.pdf")
    assert outline(tree)[1:] == [
        (1, "Quarterly review"),
        (1, "Revenue by region"),
        (1, "Revenue by region"),
        (1, "Next steps"),
    ]
    big = next(n for n in tree.nodes if n.text == "$ 4.2 bn")
    assert big.kind == "content"
    # the continued slide's title, set where every title is and repeated, is no running header
    assert [n.pages for n in tree.nodes if n.text == "Revenue by region"] == ["p. 2", "p. 3"]
    assert next(n for n in tree.nodes if n.text == "Americas grew 3%").pages == "p. 3"


def test_the_same_pages_upright_or_in_small_type_are_no_deck(tmp_path: Path) -> None:
    slides = [
        _slide("Quarterly review", ["Revenue up in every region", "Margins held"]),
        _slide("Revenue by region", ["Asia led the growth", "Europe flat"], label="$ 4.2 bn"),
    ]
    (tmp_path / "portrait.pdf").write_bytes(make_pdf(slides, width=HEIGHT, height=WIDTH))
    portrait = tree_of(tmp_path / "portrait.pdf")
    # as a document, the large bold figure is a heading like the titles
    assert "$ 4.2 bn" in [text for _, text in outline(portrait)]
    report = [[(x, top / 3, size / 3, text, bold) for x, top, size, text, bold in slide] for slide in slides]
    (tmp_path / "report.pdf").write_bytes(make_pdf(report, width=WIDTH, height=HEIGHT))
    assert "$ 4.2 bn" in [text for _, text in outline(tree_of(tmp_path / "report.pdf"))]


def test_a_page_a_viewer_turned_is_read_as_it_was_drawn(tmp_path: Path) -> None:
    """Text drawn upright with a /Rotate added afterwards (a page turned in a viewer and saved):
    the text stands upright in the page's own space and reads as before the turn, whereas the
    Impress deck above draws its text turned and lets /Rotate set it upright."""
    page = [
        (72, 60, 20, "Boiler Guide", True),
        (72, 100, 11, "Read this guide before you install the boiler.", False),
        (72, 140, 16, "Installation", True),
        (72, 170, 11, "Fit the boiler to a solid wall and leave room for servicing.", False),
    ]
    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(make_pdf([page]))))
    writer.pages[0].rotate(90)
    writer.write(tmp_path / "turned.pdf")
    (tmp_path / "upright.pdf").write_bytes(make_pdf([page]))
    turned, upright = tree_of(tmp_path / "turned.pdf"), tree_of(tmp_path / "upright.pdf")
    assert [n.text for n in turned.nodes[1:]] == [n.text for n in upright.nodes[1:]]
    assert outline(turned)[1:] == outline(upright)[1:] == [(1, "Installation")]
