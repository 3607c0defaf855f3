"""`evidence_evaluation` materialized for real (tiny corpus, real embedder, LanceDB and DuckDB in
tmp_path, an encoder router trained by `router_adapter`), its check, and `evaluation_report`
showing its table first."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from rag_assets.definitions import ALL_ASSETS, ALL_CHECKS
from tests.conftest import tiny_project

QUESTIONS = [
    {"qid": "tea", "question": "How hot should the water be for green tea?", "answers": ["80 C"], "split": "train"},
    {
        "qid": "fill",
        "question": "What is the maximum amount of water in the kettle?",
        "answers": ["1.7 litres"],
        "split": "train",
    },
    {"qid": "pond", "question": "How do I clean the pond filter?", "answers": ["rinse the sponge"], "split": "train"},
    {"qid": "pass", "question": "What does the pass statement do?", "answers": ["null operation"], "split": "train"},
    {"qid": "pharos", "question": "When was the Pharos of Alexandria built?", "answers": ["280 BC"], "split": "dev"},
    {
        "qid": "tide",
        "question": "How many high tides are there each day?",
        "answers": ["two high tides"],
        "split": "test",
    },
    {
        "qid": "charger",
        "question": "Which charger should I use for the battery?",
        "answers": ["supplied charger"],
        "split": "test",
    },
]
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
    "evidence_evaluation",
    "evaluation_report",
)
RUN_CONFIG = {
    "ops": {
        "synthetic_questions": {"config": {"count": 0}},
        "router_adapter": {"config": {"kinds": ["encoder"], "encoder_epochs": 1, "encoder_max_steps": 0}},
        "evidence_evaluation": {"config": {"top_k": 2, "rag_top_k": 2, "passages_per_query": 4}},
    }
}


@pytest.fixture
def project(tmp_path: Path, corpus_dir: Path, smollm2_checkpoint: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))  # the router folder and reports go under it
    project = tiny_project(tmp_path, corpus_dir, smollm2_checkpoint, "".join(json.dumps(q) + "\n" for q in QUESTIONS))
    return {**project, "reports": tmp_path / "data" / "reports" / "tiny"}


@pytest.mark.timeout(1200)
def test_evidence_evaluation_every_kind_every_question_then_first_in_the_report(project: dict) -> None:
    result = dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=project["resources"],
        partition_key="tiny",
        instance=project["instance"],
        selection=dg.AssetSelection.assets(*STAGES),
        run_config=RUN_CONFIG,
    )
    assert result.success
    meta = {
        m.asset_key.to_user_string(): {k: v.value for k, v in m.materialization.metadata.items()}
        for m in result.get_asset_materialization_events()
    }
    evidence = meta["evidence_evaluation"]
    # every dev + test question (3), never the train ones; the trained encoder among the kinds
    assert evidence["questions"] == 3 and evidence["split"] == "dev+test"
    assert evidence["kinds"] == "encoder, similarity, hit-nodes, oracle"
    assert evidence["dagster/row_count"] == 3 * (1 + 2 * 4)
    assert "| rdr2-encoder own |" in evidence["evidence"] and "Δ passage hit vs rag-hybrid" in evidence["evidence"]
    with duckdb.connect(str(project["db"]), read_only=True) as con:
        stored = con.execute(
            "SELECT strategy, count(DISTINCT qid), max(passage_hit), min(passage_hit) FROM evidence_evaluation "
            "WHERE collection = 'tiny' GROUP BY strategy ORDER BY min(position)"
        ).fetchall()
        over_budget = con.execute(
            "SELECT count(*) FROM evidence_evaluation r JOIN evidence_evaluation b USING (collection, qid) "
            "WHERE b.strategy = 'rag-hybrid' AND r.router <> '' AND r.words > b.words"
        ).fetchone()[0]
        oracle_vs_rag = con.execute(
            "SELECT sum(o.passage_hit), sum(b.passage_hit) FROM evidence_evaluation o JOIN evidence_evaluation b "
            "USING (collection, qid) WHERE o.strategy = 'rdr2-oracle' AND b.strategy = 'rag-hybrid'"
        ).fetchone()
    assert [s for s, *_ in stored] == [
        "rag-hybrid",
        *(f"rdr2-{k}{own}" for k in ("encoder", "similarity", "hit-nodes", "oracle") for own in ("", " own")),
    ]
    assert all(n == 3 and 0.0 <= low <= high <= 1.0 for _, n, high, low in stored)
    assert over_budget == 0  # every routed row within rag-hybrid's words for the same question
    assert oracle_vs_rag[0] >= oracle_vs_rag[1] > 0  # the gold-aware ceiling keeps what rag found
    check = {e.check_name: e for e in result.get_asset_check_evaluations()}["evidence_covers_every_question"]
    assert check.passed and check.metadata["questions"].value == 3

    report = (project["reports"] / "latest" / "report.md").read_text()
    first = report.index("## ")
    assert report[first:].startswith("## Evidence without the reader: all 3 dev+test questions")
    assert report.index("| rdr2-oracle own |") < report.index("## Reader-based strategies")
    summary = json.loads((project["reports"] / "latest" / "summary.json").read_text())
    rows = summary["evidence"]["tiny"]["rows"]
    assert rows["rag-hybrid"]["passage_hit"]["n"] == 3
    assert rows["rag-hybrid"]["passage_hit"]["low"] <= rows["rag-hybrid"]["passage_hit"]["mean"]


def test_the_check_fails_when_a_routed_row_breaks_the_budget(project: dict) -> None:
    """The check on rows written by hand (no models): a routed row over rag-hybrid's words fails it."""
    from datetime import datetime

    from checks.evaluation import evidence_covers_every_question
    from rag_assets.core.evaluation.evidence import EvidenceRow
    from rag_assets.core.store.evidence import store_evidence
    from rag_assets.defs.evaluation.evidence_evaluation import evidence_evaluation

    rows = [
        EvidenceRow("rag-hybrid", "", False, "tide", {"passage_hit": 1.0}, 40, 0.01),
        EvidenceRow("rdr2-oracle", "oracle", True, "tide", {"passage_hit": 1.0}, 41, 0.01),
    ]
    with duckdb.connect(str(project["db"])) as con:
        store_evidence(con, "tiny", rows, run_id="hand", created_at=datetime(2026, 11, 25))
    # run alone, the check reads the partition of the asset's latest materialization
    project["instance"].report_runless_asset_event(dg.AssetMaterialization("evidence_evaluation", partition="tiny"))
    result = dg.materialize(
        [evidence_evaluation, evidence_covers_every_question],
        resources=project["resources"],
        instance=project["instance"],
        selection=dg.AssetSelection.checks(evidence_covers_every_question),
    )
    [evaluation] = result.get_asset_check_evaluations()
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.ERROR
    assert "rdr2-oracle: 1 questions over rag-hybrid's words (e.g. tide)" in evaluation.metadata["details"].value
