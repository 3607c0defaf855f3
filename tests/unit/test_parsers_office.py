"""Slides, spreadsheets and CSV files become trees: a heading per slide or sheet, header rows
found where they are, rows naming their columns. Expected texts were read off the public sample
files by hand (tests/fixtures/formats/SOURCES.md)."""

from __future__ import annotations

import io
from pathlib import Path

import openpyxl
import pptx
import pytest
from pptx.util import Inches

from rag_assets.core.corpus.sources import CollectionSpec, ingest
from rag_assets.core.corpus.tree import DocumentTree, tree_problems
from rag_assets.core.corpus.tree_building import document_tree

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
pytestmark = pytest.mark.unit


def tree_of(path: Path, fmt: str) -> DocumentTree:
    result = ingest(CollectionSpec("docs", str(path)))
    assert result.rejections == []
    (document,) = result.documents
    assert document.format == fmt
    tree = document_tree(document)
    assert tree_problems(tree.nodes, tree.text) == []
    return tree


def outline(tree: DocumentTree, block: str) -> list[tuple[int, str, str]]:
    return [(n.depth, n.text, n.pages) for n in tree.nodes if n.block == block]


def parent_text(tree: DocumentTree, text: str) -> str:
    node = next(n for n in tree.nodes if n.text == text)
    return tree.nodes[node.parent_id].text  # type: ignore[index]


def test_slides_headings_bullets_levels_tables_and_slide_numbers_as_pages() -> None:
    tree = tree_of(SAMPLES / "sample-presentation.pptx", "pptx")
    # the first slide's title is the deck's title: the root, as a Word file's Title paragraph is
    assert (tree.nodes[0].text, tree.nodes[0].pages) == ("Title Slide", "pp. 1-4")
    assert (tree.nodes[1].depth, tree.nodes[1].text, tree.nodes[1].pages) == (1, "With a subtitle", "p. 1")
    assert outline(tree, "heading") == [
        (1, "This is the first content slide", "p. 2"),
        (1, "This is the second content slide", "p. 3"),
        (1, "This is kinda backwards, huh?", "p. 4"),  # the title placeholder sits below the table
    ]
    items = [(n.text, n.depth) for n in tree.nodes if n.block == "list_item" and n.page_start == 2]
    assert items == [
        ("And a list of bulleted information", 3),
        ("With a sub-bullet", 4),
        ("And another one", 4),
        ("This one is a sub-sub-bullet", 5),
        ("We can see how it works", 3),
    ]
    assert parent_text(tree, "And a list of bulleted information") == "There’s text here"  # no bullet: a paragraph
    assert parent_text(tree, "This one is a sub-sub-bullet") == "And another one"
    # two body placeholders side by side: left one first
    texts = [n.text for n in tree.nodes]
    assert texts.index("Topic 2") < texts.index("What happens when there’s 2") < texts.index("Details 2")
    assert outline(tree, "table_row") == [
        (3, "1 | A: A1 | B: B1 | C: C1", "p. 4"),
        (3, "2 | A: A2 | B: B2 | C: C2", "p. 4"),
    ]
    assert parent_text(tree, "1 | A: A1 | B: B1 | C: C1") == "Table | A | B | C"


def test_a_slide_without_a_title_is_headed_by_its_number_and_empty_slides_give_nothing() -> None:
    tree = tree_of(SAMPLES / "tbl-cell.pptx", "pptx")
    assert outline(tree, "heading") == [(1, "Slide 1", "p. 1"), (1, "Slide 3", "p. 3")]
    assert outline(tree, "table_row")[-2:] == [(3, "d | b: e | c: f", "p. 3"), (3, "g | b: h | c: i", "p. 3")]


def test_speaker_notes_sit_under_their_slide(tmp_path: Path) -> None:
    deck = pptx.Presentation()
    deck.core_properties.title = "Sales review"
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Quarterly numbers"
    slide.placeholders[1].text_frame.text = "Revenue grew"
    slide.notes_slide.notes_text_frame.text = "Mention the currency effect first."
    box = deck.slides.add_slide(deck.slide_layouts[6]).shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1))
    box.text_frame.text = "Questions?"
    deck.save(tmp_path / "deck.pptx")
    tree = tree_of(tmp_path / "deck.pptx", "pptx")
    assert [(n.depth, n.block, n.text, n.pages) for n in tree.nodes[1:]] == [
        (1, "heading", "Quarterly numbers", "p. 1"),
        (2, "list_item", "Revenue grew", "p. 1"),
        (2, "heading", "Notes", "p. 1"),
        (3, "paragraph", "Mention the currency effect first.", "p. 1"),
        (1, "heading", "Questions?", "p. 2"),  # no title placeholder: its first text
    ]


def test_sheets_headers_found_below_titles_and_merged_title_rows() -> None:
    tree = tree_of(SAMPLES / "stanley-cups.xlsx", "xlsx")
    assert [t for _, t, _ in outline(tree, "heading")] == ["Stanley Cups", "Stanley Cups Since 67"]
    rows = [t for _, t, _ in outline(tree, "table_row")]
    assert rows[:3] == [
        "Blues | Location: STL | Stanley Cups: 1",
        "Flyers | Location: PHI | Stanley Cups: 2",
        "Maple Leafs | Location: TOR | Stanley Cups: 13",
    ]
    assert rows[5] == "Maple Leafs | Location: TOR | Stanley Cups: 0"
    assert parent_text(tree, rows[0]) == "Team | Location | Stanley Cups"


def test_several_captioned_tables_on_one_sheet() -> None:
    tree = tree_of(SAMPLES / "vodafone.xlsx", "xlsx")
    captions = [n.text for n in tree.nodes if n.block == "paragraph" and "|" not in n.text]
    assert captions == ["Financial performance", "Operational metrics", "Other"]
    rows = [t for _, t, _ in outline(tree, "table_row")]
    assert len(rows) == 5 + 8 + 2
    assert rows[0] == "Quarterly revenue | Period: Nine quarters to 30 June 2023 | Page: 1"
    assert "Mobile ARPU | Period: Nine quarters to 30 June 2023 | Page: 13" in rows
    assert rows[-1] == "Guidance rates | Period: FY 23/24 | Page: 14"


def test_report_sheet_header_under_a_unit_and_period_line_and_above_an_empty_row() -> None:
    tree = tree_of(SAMPLES / "2023-half-year-analyses-by-segment.xlsx", "xlsx")
    assert [t for _, t, _ in outline(tree, "heading")] == [
        "OS-Rev.and results 30 06 2023",
        "OS-Other information 30 06 2023",
        "Prod.Rev.and results 30 06 2023",
        "Prod.-Other inform. 30 06 23",
        "Reconciliation 30 06 2023",
    ]
    rows = [t for _, t, _ in outline(tree, "table_row")]
    zone_na = next(r for r in rows if r.startswith("Zone NA"))
    assert zone_na.startswith("Zone NA | Sales (a): 12553 | Underlying Trading operating profit (b): 2713 |")
    assert zone_na.endswith("| Depreciation and amortization: -337")
    assert parent_text(tree, zone_na).startswith("January–June 2023 | In millions of CHF | Sales (a) |")
    assert "Operating profit | January–June 2023: 7262 | January–June 2022: 6619" in rows
    assert "(a) Inter-segment sales are not significant." in [n.text for n in tree.nodes if n.block == "paragraph"]
    assert sum(r.startswith("Total") for r in rows) == 6  # every table's total row (2 + 1 + 2 + 1), none lost


def _workbook(tmp_path: Path) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Plan"
    sheet.append(["Budget 2024"])
    sheet.append(["Item", "Q1", "Q2", "Total"])
    sheet.append(["Rent", 100, 100, "=B3+C3"])
    sheet.append(["Draft line", 1, 2, 3])
    sheet.append(["Staff", 300, 320, "=B5+C5"])
    sheet.row_dimensions[4].hidden = True
    hidden = book.create_sheet("Scratch")
    hidden.append(["secret", "notes"])
    hidden.sheet_state = "hidden"
    path = tmp_path / "budget.xlsx"
    book.save(path)
    return path


def test_hidden_rows_and_sheets_skipped_and_formulas_without_saved_values_said(tmp_path: Path) -> None:
    tree = tree_of(_workbook(tmp_path), "xlsx")  # written by openpyxl: no cached formula values
    assert [n.text for n in tree.nodes[1:]] == [
        "Plan",
        "Budget 2024",
        "Item | Q1 | Q2 | Total",
        "Rent | Q1: 100 | Q2: 100",
        "Staff | Q1: 300 | Q2: 320",
        "2 formula cells of this sheet have no saved value (the file was not last saved by Excel, "
        "which stores them) and read as empty.",
    ]


def test_formulas_read_as_their_cached_values(tmp_path: Path) -> None:
    path = _workbook(tmp_path)
    with open(path, "rb") as f:
        data = f.read()
    # what Excel does on saving: it stores each formula's value next to it (<v>) in the sheet XML
    import zipfile

    parts = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    sheet = parts["xl/worksheets/sheet1.xml"].decode()
    sheet = sheet.replace("<f>B3+C3</f><v></v>", "<f>B3+C3</f><v>200</v>").replace(
        "<f>B5+C5</f><v></v>", "<f>B5+C5</f><v>620</v>"
    )
    assert "<v>620</v>" in sheet
    parts["xl/worksheets/sheet1.xml"] = sheet.encode()
    out = tmp_path / "saved.xlsx"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in parts.items():
            archive.writestr(name, content)
    path.unlink()
    rows = [t for _, t, _ in outline(tree_of(out, "xlsx"), "table_row")]
    assert rows == ["Rent | Q1: 100 | Q2: 100 | Total: 200", "Staff | Q1: 300 | Q2: 320 | Total: 620"]


def test_csv_is_a_table_with_its_header_found() -> None:
    tree = tree_of(SAMPLES / "stanley-cups.csv", "csv")
    assert tree.title == "stanley-cups"
    assert [(n.depth, n.block, n.text) for n in tree.nodes[1:3]] == [
        (1, "paragraph", "Stanley Cups"),
        (1, "paragraph", "Team | Location | Stanley Cups"),
    ]
    assert outline(tree, "table_row")[0] == (2, "Blues | Location: STL | Stanley Cups: 1", "")


def test_csv_two_line_header_and_quoted_commas() -> None:
    tree = tree_of(SAMPLES / "table-multi-row-column-cells-actual.csv", "csv")
    rows = [t for _, t, _ in outline(tree, "table_row")]
    assert rows[0] == (
        "Blind | Participants: 5 | Ballots Completed: 1 | Ballots Incomplete/Terminated: 4 | "
        "Results Accuracy: 34.5%, n=1 | Results Time to complete: 1199 sec, n=1"
    )
    assert [r.split(" | ")[0] for r in rows] == ["Blind", "Low Vision", "Dexterity", "Mobility"]


def test_slides_sheets_and_books_read_on_worker_processes_as_here(tmp_path: Path) -> None:
    import shutil

    for name in (
        "sample-presentation.pptx",
        "stanley-cups.xlsx",
        "vodafone.xlsx",
        "winter-sports.epub",
        "stanley-cups.csv",
    ):
        shutil.copy(SAMPLES / name, tmp_path / name)
    (tmp_path / "cut.xlsx").write_bytes((SAMPLES / "vodafone.xlsx").read_bytes()[:3000])
    spec = CollectionSpec("many", str(tmp_path))  # five zip files: more than MIN_POOLED_FILES, read on workers
    here, pooled = ingest(spec, read_workers=1), ingest(spec, read_workers=2)
    assert pooled.documents == here.documents and len(here.documents) == 5
    assert [(r.uri, r.reason) for r in pooled.rejections] == [(r.uri, r.reason) for r in here.rejections]
    assert [Path(r.uri).name for r in here.rejections] == ["cut.xlsx"]
