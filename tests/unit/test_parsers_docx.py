"""Word documents become structure trees from their styles, with pages, or are rejected."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import docx
from docx.enum.text import WD_BREAK
from docx.oxml import OxmlElement
from docx.oxml.ns import qn

from rag_assets.core.corpus.sources import CollectionSpec, ingest
from rag_assets.core.corpus.tree import DocumentTree, tree_problems
from rag_assets.core.corpus.tree_building import document_tree

DOCUMENTS = Path(__file__).resolve().parents[1] / "data" / "documents"


def tree_of(path: Path, fmt: str = "auto") -> DocumentTree:
    result = ingest(CollectionSpec("docs", str(path), fmt))
    assert result.rejections == []
    (document,) = result.documents
    assert document.format == "docx"
    tree = document_tree(document)
    assert tree_problems(tree.nodes, tree.text) == []
    return tree


def rows(tree: DocumentTree) -> list[tuple[int, str, str, str]]:
    return [(n.depth, n.block, n.text, n.pages) for n in tree.nodes]


def test_real_docx_title_table_and_pages() -> None:
    tree = tree_of(DOCUMENTS / "sample_docx.docx")
    assert tree.title == "Sample Docx File"
    got = rows(tree)
    assert got[0] == (0, "title", "Sample Docx File", "pp. 1-4")
    assert got[1][:2] == (1, "paragraph") and got[1][2].startswith('The US has "passed the peak"')
    assert got[6:] == [
        (1, "table_row", "This | Is | Just a", "p. 1"),
        (1, "table_row", "2020 | Random | Table", "p. 1"),
        (1, "paragraph", "Now we are in Page 2", "p. 2"),
        (1, "paragraph", "Page 3 was empty this is page 4", "p. 4"),
    ]


def test_real_docx_table_between_paragraphs() -> None:
    tree = tree_of(DOCUMENTS / "sample_docx_3.docx")
    assert [n.text for n in tree.nodes if n.block == "table_row"] == [
        "Industry | AI Use Case | Impact",
        "Healthcare | Predictive diagnostics | Improved patient outcomes",
        "Finance | Fraud detection and prevention | Reduced financial losses",
    ]
    assert tree.nodes[3].text == "Table: AI Use Cases in Different Industries"
    assert tree.nodes[7].text == "Paragraph 2:"


def test_real_docx_soft_and_hard_page_breaks() -> None:
    tree = tree_of(DOCUMENTS / "sample_docx_2_page_breaks.docx")
    pages = {n.text[:30]: n.pages for n in tree.nodes[1:]}
    assert pages["This paragraph has a soft page"] == "pp. 1-2"
    assert pages["Hard page break coming up"] == "p. 2"
    assert pages["Now this is a new paragraph on"] == "p. 3"
    assert pages["This paragraph is super long a"] == "pp. 3-5"


def _outline_style(document: docx.Document, name: str, level: int) -> None:
    """A custom paragraph style that is a heading only by its outline level."""
    style = document.styles.add_style(name, 1)
    outline = OxmlElement("w:outlineLvl")
    outline.set(qn("w:val"), str(level - 1))
    style.element.get_or_add_pPr().append(outline)


def test_styles_outline_levels_lists_tables_and_page_breaks(tmp_path: Path) -> None:
    document = docx.Document()
    _outline_style(document, "Chapter Title", 1)
    document.add_paragraph("Operating Manual", style="Title")
    document.add_paragraph("Safety", style="Chapter Title")
    document.add_paragraph("Read every warning.")
    document.add_paragraph("Keep the cover closed", style="List Bullet")
    document.add_paragraph("even when idle", style="List Bullet 2")
    document.add_paragraph("Unplug before cleaning", style="List Bullet")
    document.add_heading("Electrical", level=2)
    table = document.add_table(rows=2, cols=2)
    for r, values in enumerate((("Voltage", "230 V"), ("Fuse", "10 A"))):
        for c, value in enumerate(values):
            table.cell(r, c).text = value
    document.add_paragraph("End of safety.").add_run().add_break(WD_BREAK.PAGE)
    document.add_heading("Setup", level=1)
    document.add_paragraph("Step one", style="List Number")
    buffer = io.BytesIO()
    document.save(buffer)
    (tmp_path / "manual.docx").write_bytes(buffer.getvalue())
    tree = tree_of(tmp_path / "manual.docx")
    assert rows(tree) == [
        (0, "title", "Operating Manual", "pp. 1-2"),
        (1, "heading", "Safety", "p. 1"),
        (2, "paragraph", "Read every warning.", "p. 1"),
        (3, "list_item", "Keep the cover closed", "p. 1"),
        (4, "list_item", "even when idle", "p. 1"),
        (3, "list_item", "Unplug before cleaning", "p. 1"),
        (2, "heading", "Electrical", "p. 1"),
        (3, "table_row", "Voltage | 230 V", "p. 1"),
        (3, "table_row", "Fuse | 10 A", "p. 1"),
        (3, "paragraph", "End of safety.", "p. 1"),
        (1, "heading", "Setup", "p. 2"),
        (2, "list_item", "Step one", "p. 2"),
    ]


def test_broken_word_files_rejected_with_reasons(tmp_path: Path) -> None:
    whole = (DOCUMENTS / "sample_docx.docx").read_bytes()
    (tmp_path / "cut.docx").write_bytes(whole[: len(whole) // 2])
    (tmp_path / "old.docx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 512)  # an OLE .doc renamed
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("hello.txt", "not a Word document")
    (tmp_path / "zip.docx").write_bytes(archive.getvalue())
    empty = io.BytesIO()
    docx.Document().save(empty)
    (tmp_path / "blank.docx").write_bytes(empty.getvalue())
    result = ingest(CollectionSpec("docs", str(tmp_path)))
    assert result.documents == []
    reasons = {Path(r.uri).name: r.reason for r in result.rejections}
    assert "damaged or incomplete .docx" in reasons["cut.docx"]
    assert "not a .docx file" in reasons["old.docx"]
    assert "damaged or incomplete .docx" in reasons["zip.docx"]
    assert "no text in the .docx" in reasons["blank.docx"]


def test_auto_folder_reads_every_format_by_extension(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Alpha\n\ntext\n")
    (tmp_path / "b.docx").write_bytes((DOCUMENTS / "sample_docx_3.docx").read_bytes())
    (tmp_path / "c.pdf").write_bytes((DOCUMENTS / "sample_pdf_1.pdf").read_bytes())
    (tmp_path / "d.html").write_text("<h1>Delta</h1><p>text</p>")
    result = ingest(CollectionSpec("docs", str(tmp_path), "auto"))
    assert result.rejections == []
    assert [(d.doc_id, d.format) for d in result.documents] == [
        ("docs/a.md", "markdown"),
        ("docs/b.docx", "docx"),
        ("docs/c.pdf", "pdf"),
        ("docs/d.html", "html"),
    ]
    # an explicit format reads every file as that format: the others are refused by name
    refused = ingest(CollectionSpec("docs", str(tmp_path), "pdf"))
    assert [d.doc_id for d in refused.documents] == ["docs/c.pdf"]
    assert {Path(r.uri).name for r in refused.rejections} == {"a.md", "b.docx", "d.html"}
