"""A catalogue the query service can answer from without any model: the conftest corpus's trees in
collection `tiny`, one stored answer, and API tokens, in a data folder under tmp_path."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from rag_assets.core.answering.types import StrategySpec
from rag_assets.core.corpus.sources import CollectionSpec, SourceDocument, iter_collection
from rag_assets.core.corpus.tree_building import document_tree
from rag_assets.core.lineage import AnswerRecord, answer_versions, build_record, store_answers
from rag_assets.core.store.api_tokens import create_token
from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.document_tables import documents_table
from rag_assets.core.store.tree_tables import nodes_table, texts_table
from tests.answer_outcomes import answer_outcome
from tests.conftest import write_corpus

TOKENS = {  # name -> (collection, scope)
    "reader": ("tiny", "read"),
    "asker": ("tiny", "ask"),
    "elsewhere": ("other", "admin"),  # every scope, in a collection that is not `tiny`
}


@dataclass
class ServedCatalogue:
    data: Path
    tokens: dict[str, str]  # name -> secret
    answer: AnswerRecord  # stored, in collection tiny


def answer_record(con: duckdb.DuckDBPyConnection, question: str = "How hot for green tea?", **fields) -> AnswerRecord:
    """A stored-answer record of `tiny` (no model ran: the outcome is made by hand)."""
    outcome = answer_outcome(question, "80 C", "| green tea | 80 C |", **fields)
    versions = answer_versions(
        con,
        "tiny",
        outcome,
        index={"table": "passages", "version": 1, "tag": "tiny-x"},
        adapter_id=None,
        router_model="none",
        reader_model="none",
        embedder="none",
    )
    return build_record(
        outcome, StrategySpec("no-retrieval", "none"), collection="tiny", source="service", versions=versions
    )


def build_catalogue(data: Path, corpus: Path, *, with_tokens: bool = True) -> ServedCatalogue:
    docs = [d for d in iter_collection(CollectionSpec("tiny", str(corpus))) if isinstance(d, SourceDocument)]
    trees = [(d, document_tree(d)) for d in docs]
    data.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(data / "catalogue.duckdb")) as con:
        replace_collection(
            con,
            "tiny",
            {
                "source_documents": documents_table(docs),
                "document_nodes": nodes_table(trees),
                "document_texts": texts_table(trees),
            },
        )
        record = answer_record(con)
        store_answers(con, [record])
        secrets = {}
        if with_tokens:
            secrets = {name: create_token(con, name, [coll], scope) for name, (coll, scope) in TOKENS.items()}
    return ServedCatalogue(data, secrets, record)


def served_catalogue_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ServedCatalogue:
    """The catalogue built under `tmp_path`, made the data folder of the process (RAG_DATA_DIR)."""
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RAG_LANCEDB_URI", str(tmp_path / "data" / "lancedb"))
    return build_catalogue(tmp_path / "data", write_corpus(tmp_path / "corpus"))
