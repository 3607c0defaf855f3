"""Answer lineage for real: a DuckDB file in tmp_path holding the conftest corpus's trees."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from rag_assets.core.answering.types import AnswerOutcome, Citation, StrategySpec
from rag_assets.core.corpus.sources import CollectionSpec, SourceDocument, iter_collection
from rag_assets.core.corpus.tree_building import document_tree
from rag_assets.core.lineage import (
    COLUMNS,
    CatalogueTrees,
    answer_versions,
    build_record,
    load_answer,
    load_answers,
    store_answers,
    trace_answer,
)
from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.document_tables import documents_table
from rag_assets.core.store.schemas import SCHEMA
from rag_assets.core.store.tree_tables import nodes_table, texts_table
from tests.answer_outcomes import answer_outcome
from tests.conftest import write_corpus


@pytest.fixture
def catalogue(tmp_path: Path):
    docs = [
        d
        for d in iter_collection(CollectionSpec("tiny", str(write_corpus(tmp_path / "corpus"))))
        if isinstance(d, SourceDocument)
    ]
    trees = [(d, document_tree(d)) for d in docs]
    con = duckdb.connect(str(tmp_path / "catalogue.duckdb"))
    replace_collection(
        con,
        "tiny",
        {
            "source_documents": documents_table(docs),
            "document_nodes": nodes_table(trees),
            "document_texts": texts_table(trees),
        },
    )
    yield con, {d.doc_id: t for d, t in trees}
    con.close()


def _outcome(trees, question: str = "How hot for green tea?") -> AnswerOutcome:
    nodes = trees["tiny/kettle.md"].nodes
    cited = [n for n in nodes if n.text.startswith("green tea")]
    citations = [Citation("tiny/kettle.md", n.node_id, n.heading_path, n.text, n.span_start, n.span_end) for n in cited]
    return answer_outcome(
        question,
        "80 C",
        "[1] Kettle manual > Boiling\n| green tea | 80 C |",
        citations=citations,
        passage_ids=["p1"],
        retrieved_doc_ids=["tiny/kettle.md", "tiny/pond.html"],
        router_prompt_tokens=120,
        router_output_tokens=9,
        reader_prompt_tokens=60,
        reader_output_tokens=3,
        engine_calls=2,
        seconds=0.5,
        expelled=1,
        refused_docs=1,
    )


def test_schema_matches_the_record() -> None:
    con = duckdb.connect()
    con.execute(f"CREATE TABLE answers ({SCHEMA['answers']})")
    assert tuple(r[0] for r in con.execute("DESCRIBE answers").fetchall()) == COLUMNS


def test_store_load_trace_round_trip_and_changed_source(catalogue) -> None:
    con, trees = catalogue
    spec = StrategySpec("rdr2", "rdr2", top_k=2)
    outcome = _outcome(trees)
    assert outcome.citations, "the corpus has a 'green tea' table row"
    versions = answer_versions(
        con,
        "tiny",
        outcome,
        index={"table": "passages", "version": 3, "tag": "tiny-abc"},
        adapter_id="a1",
        router_model="smol",
        reader_model="smol",
        embedder="minilm@x",
    )
    assert set(versions["doc_hashes"]) == {"tiny/kettle.md", "tiny/pond.html"}
    record = build_record(outcome, spec, collection="tiny", source="cli", versions=versions)
    other = build_record(
        _outcome(trees, "Other?"),
        StrategySpec("rag-hybrid", "rag"),
        collection="tiny",
        source="evaluation",
        versions=versions,
        run_id="r1",
        qid="q1",
        grid="top_k",
        grid_value=3,
    )
    store_answers(con, [record, other])
    assert load_answer(con, record.answer_id) == record
    assert [r.answer_id for r in load_answers(con, "tiny", "cli")] == [record.answer_id]
    assert len(load_answers(con, "tiny")) == 2 and load_answers(con, "elsewhere") == []
    assert json.loads(record.knobs)["top_k"] == 2 and other.grid_value == 3 and record.grid_value == -1

    trace = trace_answer(con, record.answer_id)
    assert not trace.changed and trace.versions["index"]["tag"] == "tiny-abc"
    source = trace.sources[0]
    assert source.current_text == source.recorded_text == outcome.citations[0].text
    assert source.uri.endswith("kettle.md") and source.title == "Kettle manual"
    assert source.heading_path == "Kettle manual > Boiling"

    # The document changes (re-indexed: its text and its tree): its hash and the cited text no
    # longer match; the text now is the node that reads like the cited one.
    con.execute(
        "UPDATE document_texts SET content_hash = 'new', text = replace(text, 'green tea', 'herbal tea') "
        "WHERE doc_id = 'tiny/kettle.md'"
    )
    con.execute(
        "UPDATE document_nodes SET text = replace(text, 'green tea', 'herbal tea') WHERE doc_id = 'tiny/kettle.md'"
    )
    changed = trace_answer(con, record.answer_id)
    assert changed.changed and changed.changed_docs == ("tiny/kettle.md",)
    assert changed.sources[0].changed and changed.sources[0].recorded_text == "green tea | 80 C"
    assert changed.sources[0].current_text == "herbal tea | 80 C"
    # A retrieved (not cited) document that disappears is a change too.
    con.execute(
        "UPDATE document_texts SET content_hash = (SELECT content_hash FROM source_documents "
        "WHERE doc_id = 'tiny/kettle.md'), text = replace(text, 'herbal tea', 'green tea') "
        "WHERE doc_id = 'tiny/kettle.md'"
    )
    con.execute(
        "UPDATE document_nodes SET text = replace(text, 'herbal tea', 'green tea') WHERE doc_id = 'tiny/kettle.md'"
    )
    assert not trace_answer(con, record.answer_id).changed
    con.execute("DELETE FROM document_texts WHERE doc_id = 'tiny/pond.html'")
    assert trace_answer(con, record.answer_id).changed_docs == ("tiny/pond.html",)


def test_replace_duplicates_and_unknown_ids(catalogue) -> None:
    con, trees = catalogue
    versions = {"doc_hashes": {}}
    first = build_record(
        _outcome(trees), StrategySpec("rdr2", "rdr2"), collection="tiny", source="evaluation", versions=versions
    )
    store_answers(con, [first])
    with pytest.raises(ValueError, match="already stored"):
        store_answers(con, [first])
    assert len(load_answers(con, "tiny")) == 1  # the failed transaction left nothing behind
    second = build_record(
        _outcome(trees), StrategySpec("rdr2", "rdr2"), collection="tiny", source="evaluation", versions=versions
    )
    store_answers(con, [second], replace=("tiny", "evaluation"))
    assert [r.answer_id for r in load_answers(con, "tiny")] == [second.answer_id]
    with pytest.raises(KeyError, match="no answer"):
        trace_answer(con, "nope")
    with pytest.raises(ValueError, match="source"):
        build_record(_outcome(trees), StrategySpec("x", "none"), collection="tiny", source="web", versions=versions)


def test_catalogue_trees_read_lazily(catalogue) -> None:
    con, trees = catalogue
    lazy = CatalogueTrees(con, "tiny")
    assert "tiny/kettle.md" in lazy and "missing" not in lazy and len(lazy) == len(trees)
    assert list(lazy["tiny/kettle.md"]) == trees["tiny/kettle.md"].nodes


def test_a_cited_source_state_in_words_from_the_catalogue_and_the_disk() -> None:
    from rag_assets.core.lineage.trace import source_state

    # (hash recorded with the answer, catalogue's hash now, the file against the catalogue)
    assert source_state("a", "a", "unchanged", text_differs=False) == "unchanged"
    assert source_state("a", "a", "changed", text_differs=False) == "changed on disk, not re-indexed"
    assert source_state("a", "b", "unchanged", text_differs=True) == "changed and re-indexed"
    assert source_state("a", "a", "gone", text_differs=False) == "deleted on disk, not re-indexed"
    assert source_state("a", None, "unknown", text_differs=True) == "deleted"
    assert source_state(None, "b", "unknown", text_differs=True) == "changed and re-indexed"  # an answer without hashes
