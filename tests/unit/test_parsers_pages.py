"""Page numbers go from a PDF's nodes into the catalogue, citations and answer traces; a catalogue
written before nodes had pages stays readable and gains the columns on its next write."""

from __future__ import annotations

from pathlib import Path

import duckdb

from rag_assets.commands.errors import console
from rag_assets.commands.output import print_trace
from rag_assets.core.answering.citations import node_citation
from rag_assets.core.answering.types import StrategySpec
from rag_assets.core.corpus.sources import CollectionSpec, ingest
from rag_assets.core.corpus.tree_building import document_tree
from rag_assets.core.lineage import answer_versions, build_record, store_answers, trace_answer
from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.document_tables import documents_table
from rag_assets.core.store.tree_tables import load_trees, nodes_table, texts_table
from rag_assets.serving.audit import document_dict, trace_dict
from tests.answer_outcomes import answer_outcome
from tests.unit.test_parsers_pdf import make_pdf

OLD_NODES_LAYOUT = """
    collection VARCHAR NOT NULL, doc_id VARCHAR NOT NULL, node_id INTEGER NOT NULL,
    parent_id INTEGER, kind VARCHAR NOT NULL, block VARCHAR NOT NULL, depth INTEGER NOT NULL,
    text VARCHAR NOT NULL, heading_path VARCHAR[] NOT NULL, span_start INTEGER NOT NULL,
    span_end INTEGER NOT NULL"""


def _write_manual(tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    pages = [
        [(72, 60, 20, "Dryer Manual", True), (72, 100, 10, "Read this first.", False)],
        [(72, 60, 14, "Lint filter", True), (72, 90, 10, "Empty the lint filter after every load.", False)],
    ]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "dryer.pdf").write_bytes(make_pdf(pages))
    documents = ingest(CollectionSpec("manuals", str(tmp_path / "docs"))).documents
    trees = [(d, document_tree(d)) for d in documents]
    replace_collection(
        con,
        "manuals",
        {
            "source_documents": documents_table(documents),
            "document_nodes": nodes_table(trees),
            "document_texts": texts_table(trees),
        },
    )


def test_pages_round_trip_into_citations_and_traces(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "catalogue.duckdb"))
    _write_manual(tmp_path, con)
    nodes, _ = load_trees(con, "manuals")["manuals/dryer.pdf"]
    assert [(n.text, n.pages) for n in nodes] == [
        ("Dryer Manual", "pp. 1-2"),
        ("Read this first.", "p. 1"),
        ("Lint filter", "p. 2"),
        ("Empty the lint filter after every load.", "p. 2"),
    ]
    citation = node_citation("manuals/dryer.pdf", nodes[3])
    assert citation.pages == "p. 2" and citation.heading_path == ("Dryer Manual", "Lint filter")
    outcome = answer_outcome(
        "When do I empty the lint filter?",
        "After every load.",
        citation.text,
        citations=[citation],
        passage_ids=["p1"],
        retrieved_doc_ids=["manuals/dryer.pdf"],
        seconds=0.1,
    )
    versions = answer_versions(
        con, "manuals", outcome, index={}, adapter_id=None, router_model=None, reader_model="r", embedder="e"
    )
    record = build_record(outcome, StrategySpec("rag", "rag"), collection="manuals", source="cli", versions=versions)
    store_answers(con, [record])
    (source,) = trace_answer(con, record.answer_id).sources
    assert source.pages == "p. 2" and source.current_text == "Empty the lint filter after every load."
    # what `rag trace` and the service show
    trace = trace_dict(con, record.answer_id)
    assert trace["sources"][0]["pages"] == "p. 2"
    with console.capture() as captured:
        print_trace(trace)
    assert "Dryer Manual > Lint filter (p. 2)" in captured.get()
    assert [n["pages"] for n in document_dict(con, "manuals", "manuals/dryer.pdf")["nodes"]] == [
        "pp. 1-2",
        "p. 1",
        "p. 2",
        "p. 2",
    ]


def test_catalogue_without_page_columns_stays_readable(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "old.duckdb"))
    con.execute(f"CREATE TABLE document_nodes ({OLD_NODES_LAYOUT})")
    con.execute("CREATE TABLE document_texts (collection VARCHAR, doc_id VARCHAR, content_hash VARCHAR, text VARCHAR)")
    con.execute(
        "INSERT INTO document_nodes VALUES ('old', 'old/a.md', 0, NULL, 'structure', 'title', 0, 'A', ['A'], 0, 1)"
    )
    con.execute("INSERT INTO document_texts VALUES ('old', 'old/a.md', 'h', 'A')")
    (root,), text = load_trees(con, "old")["old/a.md"]
    assert (root.text, root.page_start, root.page_end, root.pages, text) == ("A", 0, 0, "", "A")
    _write_manual(tmp_path, con)  # the next write adds the columns, old rows get page 0
    assert load_trees(con, "old")["old/a.md"][0][0].pages == ""
    assert load_trees(con, "manuals")["manuals/dryer.pdf"][0][2].pages == "p. 2"
