"""One answering path: the `answers` asset and the query service answer through the same session,
so for the same question and the same published index and routers they give the same evidence,
the same citations and record the same versions. Materialized for real on the tiny corpus
(DuckDB, LanceDB, the packaged embedder, the trained encoder router, SmolLM2) in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from rag_assets.core.answering.policy.options import AskOptions
from rag_assets.definitions import ALL_ASSETS
from rag_assets.serving.query import QueryService
from tests.conftest import TINY_QUESTIONS as QUESTIONS
from tests.conftest import tiny_project

STAGES = (
    "source_documents",
    "document_trees",
    "passages",
    "passage_index",
    "questions",
    "synthetic_questions",
    "routing_subtrees",
    "routing_actions",
    "router_adapter",
    "answers",
)
# `answers` with its default settings (what `rag ask` and the service run) for two rows, no grids
RUN_CONFIG = {
    "ops": {
        "synthetic_questions": {"config": {"count": 2}},
        "router_adapter": {"config": {"kinds": ["encoder"], "encoder_epochs": 1, "encoder_batch_size": 4}},
        "answers": {"config": {"strategies": ["rag-hybrid", "rdr2"], "expand_grid": [], "top_k_grid": []}},
    }
}


@pytest.fixture(scope="module")
def published_project(tmp_path_factory: pytest.TempPathFactory, smollm2_checkpoint: Path) -> Path:
    """The graph through `answers`, materialized once; the catalogue and the index where the
    service looks for them (RAG_DATA_DIR)."""
    from tests.conftest import write_corpus

    root = tmp_path_factory.mktemp("one_path")
    corpus = write_corpus(root / "corpus")
    jsonl = "\n".join(json.dumps(q) for q in QUESTIONS) + "\n"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAG_DATA_DIR", str(root))  # adapters are written under it
        project = tiny_project(root, corpus, smollm2_checkpoint, jsonl)
        result = dg.materialize(
            ALL_ASSETS,
            resources=project["resources"],
            partition_key="tiny",
            instance=project["instance"],
            selection=dg.AssetSelection.assets(*STAGES),
            run_config=RUN_CONFIG,
        )
    assert result.success
    return root


GENERATED = AskOptions(form="generated")


def evaluation_rows(db: Path, strategy: str) -> dict[str, dict]:
    """question -> the `answers` asset's stored row of `strategy`."""
    with duckdb.connect(str(db), read_only=True) as con:
        cursor = con.execute(
            "SELECT question, evidence, cited_doc_ids, cited_node_ids, passage_ids, versions, strategy "
            "FROM answers WHERE source = 'evaluation' AND strategy = ?",
            [strategy],
        )
        names = [d[0] for d in cursor.description]
        return {row[0]: dict(zip(names, row)) for row in cursor.fetchall()}


@pytest.mark.timeout(1800)  # a router trained and two strategies read on 2 shared CPU cores
@pytest.mark.parametrize("strategy", ["rag-hybrid", "rdr2"])
def test_service_and_answers_asset_give_the_same_evidence(
    published_project: Path, smollm2_checkpoint: Path, strategy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAG_DATA_DIR", str(published_project))
    monkeypatch.setenv("RAG_BASE_MODEL", str(smollm2_checkpoint))
    evaluated = evaluation_rows(published_project / "catalogue.duckdb", strategy)
    assert sorted(evaluated) == sorted(q["question"] for q in QUESTIONS if q["split"] == "test")

    service = QueryService()
    try:
        for question, row in evaluated.items():
            # the evaluated rows are generated answers: the collection's default form is not under test
            asked = service.ask(question, collection="tiny", strategy=strategy, options=GENERATED, source="service")
            served = asked.record
            assert served.strategy == row["strategy"] == strategy, "the service ran another strategy"
            assert served.evidence == row["evidence"], f"{strategy}: other evidence for {question!r}"
            assert list(served.cited_doc_ids) == list(row["cited_doc_ids"]), f"{strategy}: other cited documents"
            assert list(served.cited_node_ids) == list(row["cited_node_ids"]), f"{strategy}: other cited nodes"
            assert list(served.passage_ids) == list(row["passage_ids"]), f"{strategy}: other passages"
            served_versions, evaluated_versions = json.loads(served.versions), json.loads(row["versions"])
            for key in ("index", "adapter_id", "router_model", "embedder", "doc_hashes"):
                assert served_versions[key] == evaluated_versions[key], f"{strategy}: versions[{key!r}] differ"
    finally:
        service.models.close()


def test_routed_rows_route_with_the_published_encoder(published_project: Path) -> None:
    """The evaluation's rdr2 rows name the encoder router `router_adapter` published (not the
    untrained fallback), so the comparison above is of the trained router's path."""
    with duckdb.connect(str(published_project / "catalogue.duckdb"), read_only=True) as con:
        published = con.execute(
            "SELECT model_id FROM published_models WHERE collection = 'tiny' AND kind = 'encoder'"
        ).fetchall()
    rows = evaluation_rows(published_project / "catalogue.duckdb", "rdr2")
    assert len(published) == 1 and published[0][0], "router_adapter published no encoder router"
    assert {json.loads(r["versions"])["adapter_id"] for r in rows.values()} == {published[0][0]}
