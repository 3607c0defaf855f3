"""`answers` on the single store, materialized for real (tiny corpus, real DuckDB and LanceDB in
tmp_path): each question with a document of its own is also answered within that document only,
under the strategy's name '... (single store)'; a question without one is not."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from rag_assets.definitions import ALL_ASSETS, ALL_CHECKS
from tests.conftest import tiny_project

pytestmark = pytest.mark.integration

QUESTIONS = [
    {
        "qid": "own",
        "question": "What does the pass statement do?",
        "answers": ["null operation"],
        "gold_doc": "pass.txt",
    },
    # the same question said to be about the kettle manual: within it the answer is out of reach
    {
        "qid": "other",
        "question": "What does the pass statement do?",
        "answers": ["null operation"],
        "gold_doc": "kettle.md",
    },
    {"qid": "none", "question": "What does the pass statement do?", "answers": ["null operation"]},
]


def test_questions_are_answered_within_their_own_document_beside_the_shared_store(
    tmp_path: Path, corpus_dir: Path, smollm2_checkpoint: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    jsonl = "".join(json.dumps({**q, "split": "dev"}) + "\n" for q in QUESTIONS)
    project = tiny_project(tmp_path, corpus_dir, smollm2_checkpoint, jsonl)
    keys = ("source_documents", "document_trees", "document_cards", "passages", "passage_index", "questions")
    config = {"split": "dev", "strategies": ["rag-hybrid-extractive"], "single_store": ["tiny"], "rag_top_k": 2}
    result = dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=project["resources"],
        partition_key="tiny",
        instance=project["instance"],
        selection=dg.AssetSelection.assets(*keys, "answers"),
        run_config={"ops": {"answers": {"config": config}}},
    )
    assert result.success
    with duckdb.connect(str(project["db"])) as con:
        rows = con.execute("SELECT strategy, qid, answer, passage_ids FROM answers ORDER BY strategy, qid").fetchall()
    shared = {
        qid: (answer, passages) for strategy, qid, answer, passages in rows if strategy == "rag-hybrid-extractive"
    }
    single = {
        qid: (answer, passages)
        for strategy, qid, answer, passages in rows
        if strategy == "rag-hybrid-extractive (single store)"
    }
    assert set(shared) == {"own", "other", "none"}
    assert set(single) == {"own", "other"}  # "none" names no document: it has no single store
    assert all(p.startswith("tiny/pass.txt") for p in single["own"][1])
    assert all(p.startswith("tiny/kettle.md") for p in single["other"][1])
    assert "null operation" in single["own"][0]
    assert "null operation" not in single["other"][0]
