"""passage_reranker, namespace_router, reorder_policy and the retrieval-side rows of `answers`
(rag-hybrid-rerank, rag-hybrid-rewrite, dota, rag-hybrid-edges, rag-hybrid+r4) materialized for
real with Dagster on the tiny corpus: DuckDB and LanceDB in tmp_path, the packaged embedder and
the real SmolLM2 (tiny settings: 2 reranker steps, one policy-gradient step, 2 questions)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from typer.testing import CliRunner

from rag_assets.cli import app
from rag_assets.core.answering.r4_reordering import load_position_policy
from rag_assets.core.index.namespace_routing import QueryNamespaces, load_namespace_router
from rag_assets.core.index.reranking.folders import is_passage_reranker
from rag_assets.definitions import ALL_ASSETS, ALL_CHECKS
from rag_assets.defs.partitions import register_collections
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


GARDEN_DOCS = {
    "roses.md": "# Roses\n\n## Pruning\n\nPrune roses in early spring, just above an outward facing bud.\n\n"
    "## Feeding\n\nFeed roses with a rose fertiliser after the first flush of flowers.\n",
    "lawn.md": "# Lawn\n\n## Mowing\n\nMow the lawn weekly in summer and never cut more than a third of the grass.\n\n"
    "## Moss\n\nRake out moss in autumn and scatter grass seed on the bare patches.\n",
    "compost.md": "# Compost\n\n## Turning\n\nTurn the compost heap every month so that air reaches the middle.\n",
}
GARDEN_QUESTIONS = [
    {"qid": "prune", "question": "When should I prune the roses?", "answers": ["early spring"]},
    {"qid": "mow", "question": "How often should the lawn be mowed in summer?", "answers": ["weekly"]},
]


@pytest.fixture
def project(tmp_path: Path, corpus_dir: Path, smollm2_checkpoint: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """Two collections in one index, so the namespace router has a choice to make: "tiny" (the
    conftest corpus: kettle, pond, Python, phone, pages) and "garden" (roses, lawn, compost)."""
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))  # trained models are written under it
    project = tiny_project(
        tmp_path,
        corpus_dir,
        smollm2_checkpoint,
        "".join(json.dumps({**q, "split": "train"}) + "\n" for q in QUESTIONS),
        llm_batch_size=8,
    )
    garden = tmp_path / "garden"
    garden.mkdir()
    for name, text in GARDEN_DOCS.items():
        (garden / name).write_text(text, encoding="utf-8")
    questions = tmp_path / "garden-questions.jsonl"
    questions.write_text("".join(json.dumps({**q, "split": "train"}) + "\n" for q in GARDEN_QUESTIONS))
    collections = Path(project["resources"]["sources"].collections_file)
    collections.write_text(
        collections.read_text(encoding="utf-8") + f"  - name: garden\n    path: {garden}\n    questions: {questions}\n"
    )
    register_collections(project["instance"], ["garden"])
    return project


def _materialize(project: dict, *keys: str, ops: dict | None = None, partition: str | None = "tiny") -> dict[str, dict]:
    result = dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=project["resources"],
        partition_key=partition,
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
    for collection in ("tiny", "garden"):
        _materialize(project, *UPSTREAM, ops={"synthetic_questions": {"count": 4}}, partition=collection)
    # the namespace router is not partitioned: it routes over every collection of the index
    namespaces = _materialize(project, "namespace_router", partition=None)["namespace_router"]
    assert namespaces["namespaces"] == "garden, tiny" and namespaces["namespace_accuracy"] == 1.0
    assert 0 < namespaces["share_of_index_searched"] < 1
    router = QueryNamespaces(load_namespace_router(Path(namespaces["path"])), project["resources"]["embedder"].get())
    assert router.route(["How hot should the water be for green tea?", "When should I prune the roses?"]) == [
        ["tiny"],
        ["garden"],
    ]
    meta = _materialize(
        project,
        "passage_reranker",
        "reorder_policy",
        ops={
            "passage_reranker": {"max_steps": 2, "batch_size": 2, "negatives": 2, "max_length": 64, "depth": 4},
            "reorder_policy": {"max_questions": 2, "epochs": 1, "samples": 2, "batch_size": 2, "top_k": 3},
        },
    )
    reranker = meta["passage_reranker"]
    assert reranker["trained"] and reranker["steps"] == 2 and is_passage_reranker(Path(reranker["path"]))
    assert "loss_curve" in reranker and "calibration" in reranker
    assert load_namespace_router(Path(namespaces["path"])).namespaces == ["garden", "tiny"]
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

    # `rag search --collection all` is routed by the published namespace router (each query searches
    # only its own collection, though both are in the index) and reranked by the latest trained
    # reranker, in one LanceDB query
    # the CLI reads the published pair from the catalogue in the data folder
    shutil.copy(project["db"], Path(os.environ["RAG_DATA_DIR"]) / "catalogue.duckdb")
    env = {**os.environ, "RAG_LANCEDB_URI": str(project["resources"]["vectors"].uri)}
    for query, collection in [("green tea water temperature", "tiny"), ("pruning roses in spring", "garden")]:
        result = CliRunner().invoke(
            app, ["search", query, "--collection", "all", "--reranker", "latest", "--json"], env=env
        )
        assert result.exit_code == 0, result.output
        hits = json.loads(result.stdout)
        assert hits and {h["collection"] for h in hits} == {collection} and hits[0]["rank"] == 1
