"""Per-document caps: pages of a PDF (at ingestion), nodes of a tree, passages of a document;
each document over a cap is rejected with its count and the setting that raises it."""

from __future__ import annotations

import shutil
from pathlib import Path

from rag_assets.core.corpus.sources import CollectionSpec, SourceDocument, ingest
from rag_assets.core.corpus.tree_building import build_trees
from rag_assets.core.index.passages import collection_passages, too_many_passages

DOCUMENTS = Path(__file__).resolve().parents[1] / "data" / "documents"


def test_a_pdf_over_the_page_cap_is_rejected_before_it_is_read(tmp_path: Path) -> None:
    shutil.copy(DOCUMENTS / "sample_pdf_1.pdf", tmp_path / "four_pages.pdf")
    spec = CollectionSpec("pdfs", str(tmp_path))
    refused = ingest(spec, max_document_pages=3)
    assert refused.documents == []
    [rejection] = refused.rejections
    assert rejection.uri == str(tmp_path / "four_pages.pdf") and rejection.stage == "ingest"
    assert rejection.reason == (
        "PDF of 4 pages, over the limit of 3 pages per document (raise max_document_pages to accept it)"
    )
    accepted = ingest(spec, max_document_pages=4)
    assert [d.format for d in accepted.documents] == ["pdf"] and accepted.rejections == []


def _doc(name: str, text: str) -> SourceDocument:
    return SourceDocument(f"c/{name}", "c", f"/src/{name}", "markdown", name, "hash", len(text), text)


def test_a_tree_over_the_node_cap_is_rejected_with_its_count() -> None:
    small = _doc("small.md", "# Small\n\nOne paragraph.\n")
    big = _doc("big.md", "".join(f"## H{i}\n\nline {i}\n\n" for i in range(10)))
    built = build_trees([small, big], max_nodes=12)
    assert [doc.doc_id for doc, _ in built.trees] == ["c/small.md"]
    [rejection] = built.rejections
    assert (rejection.uri, rejection.stage) == ("/src/big.md", "parse")
    assert rejection.reason == "21 nodes, over the limit of 12 per document (document_trees config max_nodes)"
    assert len(build_trees([big], max_nodes=21).trees) == 1


def test_a_document_over_the_passage_cap_is_left_out_with_its_count() -> None:
    built = build_trees(
        [
            _doc("one.md", "# One\n\n" + "word " * 50 + "\n"),
            _doc("three.md", "# Three\n\n" + ("word " * 90 + "\n\n") * 3),
        ]
    )
    trees = {doc.doc_id: (tree.nodes, tree.text) for doc, tree in built.trees}
    kept, over = collection_passages(trees, max_words=100, max_passages=2)
    assert {p.doc_id for p in kept} == {"c/one.md"} and over == {"c/three.md": 3}
    assert too_many_passages(over, 2) == {
        "c/three.md": "c/three.md: cut into 3 passages, over the limit of 2 per document "
        "(passages config max_passages_per_document)"
    }
