"""A re-index reads only what changed: a file whose bytes and reader version (the reading code
and the caps) are what the catalogue holds keeps its stored document, and its stored tree."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import duckdb
import pytest

from rag_assets.core.corpus.reader_version import reader_version
from rag_assets.core.corpus.sources import CollectionSpec, ingest
from rag_assets.core.corpus.tree_building import build_trees
from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.tree_tables import nodes_table, stored_trees, texts_table
from tests.unit.test_parsers_pdf import make_pdf

pytestmark = pytest.mark.unit


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "pump.pdf").write_bytes(make_pdf([[(72, 60, 18, "Pump", True), (72, 100, 10, "Prime it first.", False)]]))
    (folder / "kettle.md").write_text("# Kettle\n\nDescale it monthly.\n")
    (folder / "pages.jsonl").write_text('{"doc_id": "p1", "title": "Pond", "html": "<p>Fish swim.</p>"}\n')
    return folder


def _by_id(result) -> dict:
    return {d.doc_id: d for d in result.documents}


def test_unchanged_files_keep_the_stored_document_and_changed_ones_are_read(tmp_path: Path) -> None:
    spec = CollectionSpec("docs", str(_folder(tmp_path)))
    first = _by_id(ingest(spec))
    assert {d.reader_version for d in first.values()} == {
        reader_version(max_document_words=500_000, max_document_pages=2000, ocr="auto", ocr_languages="eng")
    }
    # what the catalogue holds, marked: a kept document comes back with the stored text, unread
    known = {doc_id: dataclasses.replace(d, text=f"stored {doc_id}") for doc_id, d in first.items()}
    result = ingest(spec, known=known)
    assert result.kept == 2  # the PDF and the Markdown file; the page records are read again
    again = _by_id(result)
    assert again["docs/pump.pdf"].text == "stored docs/pump.pdf"
    assert again["docs/kettle.md"].text == "stored docs/kettle.md"
    assert again["docs/pages.jsonl/p1"].text == first["docs/pages.jsonl/p1"].text  # page records: read again

    (tmp_path / "docs" / "kettle.md").write_text("# Kettle\n\nDescale it every week.\n")
    result = ingest(spec, known=known)
    assert result.kept == 1
    changed = _by_id(result)
    assert changed["docs/kettle.md"].text == "# Kettle\n\nDescale it every week.\n"
    assert changed["docs/pump.pdf"].text == "stored docs/pump.pdf"

    # a cap that could now reject a document reads every document again
    capped = _by_id(ingest(spec, known=known, max_document_pages=5))
    assert capped["docs/pump.pdf"].text == first["docs/pump.pdf"].text
    assert capped["docs/pump.pdf"].reader_version != first["docs/pump.pdf"].reader_version
    # so does turning OCR off (a scanned page read before is now refused)
    no_ocr = _by_id(ingest(spec, known=known, ocr="off"))
    assert no_ocr["docs/pump.pdf"].text == first["docs/pump.pdf"].text
    assert no_ocr["docs/pump.pdf"].reader_version != first["docs/pump.pdf"].reader_version
    # or reading scans in other languages
    french = _by_id(ingest(spec, known=known, ocr_languages="fra+eng"))
    assert french["docs/pump.pdf"].reader_version != first["docs/pump.pdf"].reader_version
    # and a file now over the size cap is refused, not kept
    small = ingest(spec, known=known, max_document_mb=0.0005)
    assert "docs/pump.pdf" not in _by_id(small) and any(r.uri.endswith("pump.pdf") for r in small.rejections)


def test_stored_trees_are_kept_only_for_the_same_content_and_reader(tmp_path: Path) -> None:
    docs = ingest(CollectionSpec("docs", str(_folder(tmp_path)))).documents
    built = build_trees(docs)
    con = duckdb.connect(str(tmp_path / "catalogue.duckdb"))
    replace_collection(
        con, "docs", {"document_nodes": nodes_table(built.trees), "document_texts": texts_table(built.trees)}
    )
    kept = stored_trees(con, "docs", docs)
    assert sorted(kept) == sorted(d.doc_id for d in docs)
    trees = dict((d.doc_id, t) for d, t in built.trees)
    assert kept["docs/pump.pdf"].nodes == trees["docs/pump.pdf"].nodes
    assert kept["docs/pump.pdf"].text == trees["docs/pump.pdf"].text

    other_reader = [dataclasses.replace(d, reader_version="0" * 16) for d in docs]
    other_content = [dataclasses.replace(d, content_hash="x") for d in docs]
    assert stored_trees(con, "docs", other_reader) == {} and stored_trees(con, "docs", other_content) == {}
    # a kept tree goes through the same caps as a parsed one
    rebuilt = build_trees(docs, kept=kept, max_nodes=10)
    assert [d.doc_id for d, _ in rebuilt.trees] == [d.doc_id for d, t in built.trees if len(t.nodes) <= 10]


def test_files_read_on_worker_processes_come_out_as_read_here_and_in_order(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for n in range(6):  # more PDFs than MIN_POOLED_FILES: read on spawned workers
        page = [(72, 60, 18, f"Pump {n}", True), (72, 100, 10, f"Prime pump {n} before it runs.", False)]
        (folder / f"pump{n}.pdf").write_bytes(make_pdf([page]))
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\nnot really")
    (folder / "notes.md").write_text("# Notes\n\nKeep the manual.\n")
    spec = CollectionSpec("many", str(folder))
    here, pooled = ingest(spec, read_workers=1), ingest(spec, read_workers=2)
    assert [d.doc_id for d in pooled.documents] == [d.doc_id for d in here.documents]
    assert pooled.documents == here.documents and len(here.documents) == 7
    assert [(r.uri, r.reason) for r in pooled.rejections] == [(r.uri, r.reason) for r in here.rejections]
    assert [r.uri for r in here.rejections] == [str(folder / "broken.pdf")]
    # kept documents stay in their place among the ones read
    known = {d.doc_id: d for d in here.documents if d.doc_id != "many/pump3.pdf"}
    mixed = ingest(spec, known=known, read_workers=2)
    assert mixed.documents == here.documents


def test_in_order_reads_here_what_a_dead_worker_left() -> None:
    from rag_assets.core.corpus.reading_pool import in_order

    assert list(in_order([3, 1, 2], abs, workers=1)) == [3, 1, 2]
    # os._exit in a worker breaks the pool: every task is still done, here, in order
    assert list(in_order([1, -1, 2, 3], _exit_on_negative, workers=2)) == [1, 1, 2, 3]


def _exit_on_negative(value: int) -> int:
    import multiprocessing
    import os

    if value < 0 and multiprocessing.parent_process() is not None:
        os._exit(1)
    return abs(value)
