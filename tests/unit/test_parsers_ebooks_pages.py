"""E-books read chapter by chapter in spine order; pages saved from a browser keep their article
and drop the site around it; other HTML reads as before. Expected texts were read off the public
sample files by hand (tests/fixtures/formats/SOURCES.md)."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from rag_assets.core.corpus.parsers.html import parse_html
from rag_assets.core.corpus.sources import CollectionSpec, ingest
from rag_assets.core.corpus.tree import DocumentTree, tree_problems
from rag_assets.core.corpus.tree_building import document_tree

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
PAGE = SAMPLES / "example-with-scripts.html"
SAVED_MARK = b"<!DOCTYPE html>\n<!-- saved from url=(0091)https://www.understandingwar.org/backgrounder/x -->\n"
pytestmark = pytest.mark.unit


def trees(path: Path) -> dict[str, tuple[str, DocumentTree]]:
    result = ingest(CollectionSpec("docs", str(path)))
    assert result.rejections == []
    built = {}
    for document in result.documents:
        tree = document_tree(document)
        assert tree_problems(tree.nodes, tree.text) == []
        built[Path(document.uri).name] = (document.format, tree)
    return built


def test_epub_chapters_in_spine_order_with_their_headings() -> None:
    ((fmt, tree),) = trees(SAMPLES / "winter-sports.epub").values()
    assert (fmt, tree.title) == ("epub", "Winter Sports in Switzerland")
    headings = [n.text for n in tree.nodes if n.block == "heading"]
    chapters = [h for h in headings if h.startswith("CHAPTER")]
    assert chapters == [
        "CHAPTER I THE SUN-SEEKER",
        "CHAPTER II RINKS AND SKATERS",
        "CHAPTER III TEES AND CRAMPITS",
        "CHAPTER IV TOBOGGANING",
        "CHAPTER V ICE-HOCKEY",
        "CHAPTER VI SKI-ING",
        "CHAPTER VII NOTES ON WINTER RESORTS",
        "CHAPTER VIII FOR PARENTS AND GUARDIANS",
    ]
    for sub in ("THIRD-CLASS TEST", "Rules of Match Play", "Jumping", "Oberland District"):
        assert sub in headings
    hockey = next(n for n in tree.nodes if n.text == "Rules of Match Play")
    assert hockey.heading_path[-2] == "CHAPTER V ICE-HOCKEY"


def test_epub_chapter_without_a_heading_is_named_by_the_navigation(tmp_path: Path) -> None:
    container = (
        '<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0">'
        '<rootfiles><rootfile full-path="OPS/book.opf" media-type="application/oebps-package+xml"/></rootfiles></container>'
    )
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Field Guide</dc:title></metadata>'
        '<manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
        '<item id="c2" href="two.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="c1" href="one.xhtml" media-type="application/xhtml+xml"/></manifest>'
        '<spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>'
    )
    nav = (
        '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body>'
        '<nav epub:type="toc"><ol><li><a href="one.xhtml">Birds of the Shore</a></li>'
        '<li><a href="two.xhtml">Waders</a></li></ol></nav></body></html>'
    )
    one = '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>Gulls nest on cliffs.</p></body></html>'
    two = '<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>Waders</h1><p>Avocets sweep the mud.</p></body></html>'
    path = tmp_path / "guide.epub"
    with zipfile.ZipFile(path, "w") as book:
        book.writestr("mimetype", "application/epub+zip")
        for name, text in {"META-INF/container.xml": container, "OPS/book.opf": opf, "OPS/nav.xhtml": nav}.items():
            book.writestr(name, text)
        book.writestr("OPS/one.xhtml", one)
        book.writestr("OPS/two.xhtml", two)
    ((_, tree),) = trees(path).values()
    assert [(n.depth, n.block, n.text) for n in tree.nodes] == [
        (0, "title", "Field Guide"),
        (1, "heading", "Birds of the Shore"),
        (2, "paragraph", "Gulls nest on cliffs."),
        (1, "heading", "Waders"),
        (2, "paragraph", "Avocets sweep the mud."),
    ]


# Labelled by hand from the page as a browser shows it: the site's chrome and the article's parts.
CHROME = [
    "Skip to main content",
    "Search form",
    "Who We Are",
    "Planned Giving",
    "Donate",
    "File Attachments:",
    "Tags",
    "1400 16th Street NW",
]
ARTICLE = [
    "Russian Offensive Campaign Assessment, December 13",  # the page's own h1
    "Karolina Hird, George Barros, Grace Mappes, Madison Williams, and Frederick W. Kagan",
    "Key Takeaways",
    "Russian forces conducted limited counterattacks near Svatove and Kreminna.",
    "[79] https://t.me/m0sc0wcalling/16191",  # the last endnote
]


def _has(tree: DocumentTree, text: str) -> bool:
    return any(n.text.startswith(text) for n in tree.nodes[1:])


@pytest.mark.parametrize("how", ["mark", "folder", "mhtml"])
def test_a_saved_page_keeps_its_article_and_drops_the_site_chrome(tmp_path: Path, how: str) -> None:
    data = PAGE.read_bytes()
    if how == "mark":
        (tmp_path / "assessment.html").write_bytes(SAVED_MARK + data)
    elif how == "folder":
        (tmp_path / "assessment.html").write_bytes(data)
        (tmp_path / "assessment_files").mkdir()
        (tmp_path / "assessment_files" / "menu.js").write_text("document.write('Donate');\n")
        (tmp_path / "assessment_files" / "site.css").write_text("body { color: black }\n")
    else:
        head = (
            "From: <Saved by Blink>\r\nSnapshot-Content-Location: https://www.understandingwar.org/x\r\n"
            'MIME-Version: 1.0\r\nContent-Type: multipart/related; type="text/html"; boundary="B"\r\n\r\n'
            "--B\r\nContent-Type: text/html\r\nContent-Transfer-Encoding: binary\r\n\r\n"
        )
        (tmp_path / "assessment.mhtml").write_bytes(head.encode() + data + b"\r\n--B--\r\n")
    built = trees(tmp_path)
    assert list(built) == [
        f"assessment.{'mhtml' if how == 'mhtml' else 'html'}"
    ]  # the folder's files are not documents
    fmt, tree = next(iter(built.values()))
    assert fmt == "web_page"
    assert tree.title == "Russian Offensive Campaign Assessment, December 13 | Institute for the Study of War"
    assert [t for t in CHROME if _has(tree, t)] == []
    assert [t for t in ARTICLE if not _has(tree, t)] == []
    assert [n.text for n in tree.nodes if n.block == "heading"] == [ARTICLE[0]]


def test_html_that_is_not_a_saved_page_reads_whole_as_before(tmp_path: Path) -> None:
    shutil.copy(PAGE, tmp_path / "page.html")
    ((fmt, tree),) = trees(tmp_path).values()
    assert fmt == "html"
    assert [n.text for n in tree.nodes[1:]] == [b.text for b in parse_html(PAGE.read_text(encoding="utf-8"))]
    assert _has(tree, "Skip to main content")


def test_html_pages_in_jsonl_records_are_not_extracted(tmp_path: Path) -> None:
    page = SAVED_MARK.decode() + PAGE.read_text(encoding="utf-8")
    import json

    (tmp_path / "pages.jsonl").write_text(json.dumps({"id": "p1", "html": page}) + "\n", encoding="utf-8")
    result = ingest(CollectionSpec("docs", str(tmp_path)))
    (document,) = result.documents
    assert document.format == "html" and document.text == page
