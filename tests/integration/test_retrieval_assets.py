"""passage_reranker, namespace_router, reorder_policy and the retrieval-side rows of `answers`
(rag-hybrid-rerank, rag-hybrid-rewrite, dota, rag-hybrid-edges, rag-hybrid+r4) materialized for
real with Dagster on the tiny corpus: DuckDB and LanceDB in tmp_path, the packaged embedder and
the real SmolLM2 (tiny settings: 2 reranker steps, one policy-gradient step, 2 questions)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from typer.testing import CliRunner

from rag_assets.cli import app
from rag_assets.core.answering.r4_reordering import load_position_policy
from rag_assets.core.index.namespace_routing import load_namespace_router
from rag_assets.core.index.reranking import is_passage_reranker
from rag_assets.definitions import ALL_ASSETS, ALL_CHECKS
from tests.conftest import tiny_project

QUESTIONS = [
    {"qid": "tea", "question": "How hot should the water be for green tea?", "answers": ["80 C"]},
    {"qid": "fill", "question": "What is the maximum amount of water in the kettle?", "answers": ["1.7 litres"]},
    {"qid": "pond", "question": "How do I clean the pond filter?", "answers": ["rinse the sponge"]},
    {"qid": "pharos", "question": "When was the Pharos of Alexandria built?", "answers": ["280 BC"]},
    {"qid": "pass", "question": "What does the pass statement do?", "answers": ["null operation"]},
    {"qid": "tide", "question": "How many high tides are there each day?", "answers": ["two high tides"]},
]
UPSTREAM = ("source_documents", "document_trees", "passages", "passage_index", "questions", "synthetic_questions")
ROWS = ["rag-hybrid", "rag-hybrid-rerank", "rag-hybrid-rewrite", "dota", "rag-hybrid-edges", "rag-hybrid+r4"]


@pytest.fixture
def project(tmp_path: Path, corpus_dir: Path, smollm2_checkpoint: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))  # trained models are written under it
    return tiny_project(
        tmp_path,
        corpus_dir,
        smollm2_checkpoint,
        "".join(json.dumps({**q, "split": "train"}) + "\n" for q in QUESTIONS),
        llm_batch_size=8,
    )


def _materialize(project: dict, *keys: str, ops: dict | None = None) -> dict[str, dict]:
    result = dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=project["resources"],
        partition_key="tiny",
        instance=project["instance"],
        selection=dg.AssetSelection.assets(*keys),
        run_config={"ops": {k: {"config": v} for k, v in (ops or {}).items() if k in keys}},
    )
    assert result.success
    return {
        m.asset_key.to_user_string(): {k: v.value for k, v in m.materialization.metadata.items()}
        for m in result.get_asset_materialization_events()
    }


@pytest.mark.timeout(1800)
def test_retrieval_side_assets_and_rows(project: dict) -> None:
    _materialize(project, *UPSTREAM, ops={"synthetic_questions": {"count": 4}})
    meta = _materialize(
        project,
        "passage_reranker",
        "namespace_router",
        "reorder_policy",
        ops={
            "passage_reranker": {"max_steps": 2, "batch_size": 2, "negatives": 2, "max_length": 64, "depth": 4},
            "reorder_policy": {"max_questions": 2, "epochs": 1, "samples": 2, "batch_size": 2, "top_k": 3},
        },
    )
    reranker = meta["passage_reranker"]
    assert reranker["trained"] and reranker["steps"] == 2 and is_passage_reranker(Path(reranker["path"]))
    assert "loss_curve" in reranker and "calibration" in reranker
    namespaces = meta["namespace_router"]
    assert namespaces["namespaces"] == "tiny" and namespaces["namespace_accuracy"] == 1.0
    assert load_namespace_router(Path(namespaces["path"])).namespaces == ["tiny"]
    policy = meta["reorder_policy"]
    assert policy["trained"] and policy["steps"] == 1 and "reward_curve" in policy
    assert load_position_policy(Path(policy["path"])).policy_id == policy["policy_id"]

    answers = _materialize(
        project,
        "answers",
        ops={
            "answers": {
                "split": "train",
                "max_questions": 1,
                "strategies": ROWS,
                "expand_grid": [],
                "top_k_grid": [],
                "evidence_budget": False,
            }
        },
    )["answers"]
    assert "retrieval_side" in answers and "not run" not in answers["notes"]
    with duckdb.connect(str(project["db"]), read_only=True) as con:
        rows = con.execute("SELECT strategy, question, knobs, versions FROM answers").fetchall()
    assert sorted({r[0] for r in rows}) == sorted(ROWS) and len(rows) == len(ROWS)
    dota = [(q, json.loads(k), json.loads(v)) for s, q, k, v in rows if s == "dota"]
    for question, knobs, versions in dota:
        retrieval = versions["retrieval"]
        assert knobs["rewrite"] and knobs["rerank"] and knobs["route_namespaces"]
        assert retrieval["original_query"] == question and retrieval["retrieval_query"]
        assert retrieval["namespaces"] == ["tiny"] and retrieval["reranker"] == reranker["reranker_id"]
    learned = [json.loads(v) for s, _, _, v in rows if s == "rag-hybrid+r4"]
    assert all(v["retrieval"]["reorder_policy"] == policy["policy_id"] for v in learned)

    # `rag search --collection all` is routed by the published namespace router and reranked by
    # the latest trained reranker, in one LanceDB query
    env = {**os.environ, "RAG_LANCEDB_URI": str(project["resources"]["vectors"].uri)}
    result = CliRunner().invoke(
        app, ["search", "green tea water temperature", "--collection", "all", "--reranker", "latest", "--json"], env=env
    )
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)
    assert hits and {h["collection"] for h in hits} == {"tiny"} and hits[0]["rank"] == 1
