"""`answers` and `evaluation_report` materialized for real: tiny corpus, the packaged SmolLM2 and
embedder, DuckDB/LanceDB in tmp_path, a tiny grid."""

from __future__ import annotations

import json
import math
from dataclasses import replace as dataclasses_replace
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

from rag_assets.core.lineage import trace_answer
from rag_assets.definitions import ALL_ASSETS, ALL_CHECKS
from rag_assets.defs.partitions import register_collections
from rag_assets.defs.evaluation.strategy_config import DEFAULT_STRATEGIES
from rag_assets.defs.evaluation.strategy_config import STRATEGIES as ALL_STRATEGIES
from tests.answer_outcomes import answer_outcome
from tests.conftest import tiny_project

QUESTIONS = [
    {"qid": "t1", "question": "How hot should the water be for green tea?", "answers": ["80 C"], "split": "train"},
    {
        "qid": "t2",
        "question": "How much water at most goes into the kettle?",
        "answers": ["1.7 litres"],
        "split": "train",
    },
    {"qid": "t3", "question": "What is the pass statement?", "answers": ["null operation"], "split": "train"},
    {
        "qid": "e1",
        "question": "What should stay open in the pond ice in winter?",
        "answers": ["a hole"],
        "split": "test",
    },
    {
        "qid": "e2",
        "question": "Which charger should be used for the battery?",
        "answers": ["the supplied charger"],
        "section_path": ["Getting started", "Battery"],
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
    "router_metrics",
    "passage_reranker",
    "namespace_router",
    "reorder_policy",
    "answers",
    "evidence_evaluation",
    "evaluation_report",
)
# every strategy (rdr2-encoder is rdr2 under its own name), the defaults among them
STRATEGIES = [s for s in ALL_STRATEGIES if s != "rdr2-encoder"]
assert set(DEFAULT_STRATEGIES) <= set(STRATEGIES)
RUN_CONFIG = {
    "ops": {
        "synthetic_questions": {"config": {"count": 4}},
        "router_adapter": {
            "config": {
                "kinds": ["encoder", "llm"],
                "max_steps": 1,
                "batch_size": 2,
                "max_length": 512,
                "encoder_epochs": 1,
                "encoder_max_steps": 0,
                "encoder_batch_size": 4,
            }
        },
        "router_metrics": {"config": {"max_samples": 3, "max_new_tokens": 16}},
        "passage_reranker": {"config": {"max_steps": 1, "batch_size": 2, "negatives": 2, "max_length": 64, "depth": 4}},
        "reorder_policy": {"config": {"max_questions": 2, "epochs": 1, "samples": 2, "batch_size": 2, "top_k": 2}},
        "answers": {
            "config": {
                "top_k": 2,
                "rag_top_k": 2,
                "passages_per_query": 4,
                "expand_iterations": 1,
                "expand_grid": [0, 1],
                "top_k_grid": [1, 2],
                "router_max_new_tokens": 20,
                "strategies": STRATEGIES,
                # contregen / disco rows: a shallow tree and short stages (CI time)
                "tree_depth": 1,
                "contregen_top_k": 1,
                "disco_top_k": 2,
                "stage_max_new_tokens": 16,
            }
        },
    }
}


@pytest.fixture
def project(tmp_path: Path, corpus_dir: Path, smollm2_checkpoint: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))  # adapters and reports are written under it
    project = tiny_project(tmp_path, corpus_dir, smollm2_checkpoint, "\n".join(json.dumps(q) for q in QUESTIONS) + "\n")
    return {**project, "reports": tmp_path / "data" / "reports" / "tiny"}


# One pipeline per test run (the index, adapter and models are the expensive part); generous timeout
# because the CPU may be shared.
@pytest.mark.timeout(1800)
def test_answers_and_report_end_to_end_then_fallback_and_failing_check(project: dict) -> None:
    # 1. the whole graph: every strategy, the grids, the report
    result = dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=project["resources"],
        partition_key="tiny",
        instance=project["instance"],
        selection=dg.AssetSelection.assets(*STAGES),
        run_config=RUN_CONFIG,
    )
    assert result.success
    meta = {m.asset_key.to_user_string(): m.materialization.metadata for m in result.get_asset_materialization_events()}

    # answers: every strategy for both test questions, plus the grid rows
    answers_meta = meta["answers"]
    assert answers_meta["questions"].value == 2 and answers_meta["split"].value == "test"
    with duckdb.connect(str(project["db"])) as con:
        rows = con.execute(
            "SELECT strategy, grid, grid_value, count(*), count(DISTINCT answer_id), min(run_id), "
            "min(source) FROM answers GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        versions = json.loads(con.execute("SELECT versions FROM answers WHERE strategy = 'rdr2' LIMIT 1").fetchone()[0])
        words = dict(
            con.execute(
                "SELECT qid || '/' || strategy, evidence_words FROM answers WHERE grid = '' AND strategy IN "
                "('rag-hybrid', 'rdr2', 'rdr2-oracle', 'rdr2-hit-nodes', 'rdr2-similarity')"
            ).fetchall()
        )
        routed_id = con.execute(
            "SELECT answer_id FROM answers WHERE strategy = 'rdr2' AND cardinality(cited_node_ids) > 0 LIMIT 1"
        ).fetchone()
        rag = con.execute(
            "SELECT cited_node_ids, passage_ids, evidence_words FROM answers WHERE strategy = 'rag-hybrid' LIMIT 1"
        ).fetchone()
    main = {r[0]: r[3] for r in rows if r[1] == ""}
    assert main == {name: 2 for name in STRATEGIES}
    grids = {(r[1], r[2]) for r in rows if r[1]}
    assert grids == {("expand_iterations", 0), ("expand_iterations", 1), ("top_k", 1), ("top_k", 2)}
    assert all(r[3] == r[4] and r[5] == result.run_id and r[6] == "evaluation" for r in rows)
    assert answers_meta["dagster/row_count"].value == sum(r[3] for r in rows) == 2 * (len(STRATEGIES) + 4)
    # rdr2 routes with the trained encoder router of this lineage, recorded in its versions
    assert versions["index"]["tag"].startswith("tiny-")
    assert versions["adapter_id"] == meta["router_adapter"]["encoder_adapter_id"].value
    # every budgeted rdr2 row gives the reader at most rag-hybrid's words for the same question
    for key, count in words.items():
        qid, strategy = key.split("/")
        assert strategy == "rag-hybrid" or count <= words[f"{qid}/rag-hybrid"], key
    if routed_id:  # an encoder-routed answer traces down to its exact source spans
        with duckdb.connect(str(project["db"])) as con:
            trace = trace_answer(con, routed_id[0])
        assert trace.sources and all(src.current_text == src.recorded_text for src in trace.sources)
    assert rag[0] and len(rag[1]) == 2 and rag[2] > 0
    # the generation rows store their intermediate structures, and the metadata counts their parses
    with duckdb.connect(str(project["db"])) as con:
        structures = con.execute(
            "SELECT strategy, structure FROM answers WHERE strategy IN ('contregen', 'disco', 'disco-no-structure')"
        ).fetchall()
    assert sorted({s for s, _ in structures}) == ["contregen", "disco", "disco-no-structure"]
    assert all(json.loads(structure)["stages"][-1] == "answer" for _, structure in structures)
    assert "| contregen | 2 |" in answers_meta["generation_parse"].value

    # the report: files, finite numbers for every strategy, plots referenced by the HTML
    report_meta = meta["evaluation_report"]
    html_path = Path(report_meta["report_html"].value)
    assert html_path.parent == project["reports"] / result.run_id
    latest = project["reports"] / "latest"
    for name in ("report.md", "report.html", "summary.json", "metrics.png", "evidence.png", "scaling.png"):
        assert (html_path.parent / name).is_file() and (latest / name).is_file(), name
    html = html_path.read_text()
    assert "src='metrics.png'" in html and "src='scaling.png'" in html and "src='evidence.png'" in html
    summary = json.loads((latest / "summary.json").read_text())
    results = summary["results"]["tiny"]
    assert set(results) == set(STRATEGIES)
    expected = {
        "em",
        "f1",
        "passage_hit",
        "section_hit",
        "evidence_words",
        "router_prompt_tokens",
        "router_output_tokens",
        "engine_calls",
        "seconds_p50",
        "seconds_p95",
        "questions",
    }
    for strategy, metrics in results.items():
        # p95 only where questions were timed one by one (a batch gives each its mean)
        assert expected - {"seconds_p95"} <= set(metrics) <= expected, strategy
        assert all(isinstance(v, (int, float)) and math.isfinite(v) for v in metrics.values()), strategy
    assert results["no-retrieval"]["evidence_words"] == 0 and results["rdr2-llm"]["router_prompt_tokens"] > 0
    assert results["rdr2"]["router_prompt_tokens"] == 0  # the encoder router reads no prompt
    assert results["rdr2-llm-rank"]["questions"] == 2  # the LLM's actions ranked by likelihood
    assert set(summary["scaling"]["tiny"]) == {"expand_iterations", "top_k"}
    assert set(summary["scaling"]["tiny"]["top_k"]) == {"1", "2"}
    assert set(summary["router_metrics"]["tiny"]) <= {"base", "adapter", "adapter-rank", "encoder", "similarity"}
    assets = summary["versions"]["assets"]
    assert set(assets) == set(STAGES) - {"evaluation_report"}
    assert assets["passage_index"]["data_version"].startswith("v") and assets["router_adapter"]["materialized"]
    assert summary["versions"]["index"]["tag"].startswith("tiny-")
    assert report_meta["headline"].value.startswith("| strategy |")
    assert report_meta["main_plot_image"].value.startswith("![metrics per strategy](data:image/png;base64,")

    checks = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert checks["evaluation_summary_is_complete"].passed, checks["evaluation_summary_is_complete"].metadata
    # the evidence evaluation (both test questions, no reader) is the report's first table
    assert checks["evidence_covers_every_question"].passed
    assert summary["evidence"]["tiny"]["questions"] == 2
    markdown = (latest / "report.md").read_text()
    assert markdown[markdown.index("## ") :].startswith("## Evidence without the reader: all 2 test questions")

    # 2. a split without questions: falls back to dev (empty too), then to all questions
    stages = ("answers", "evaluation_report")
    config = {
        "ops": {
            "answers": {
                "config": {
                    "split": "dev",
                    "max_questions": 1,
                    "expand_grid": [],
                    "top_k_grid": [],
                    "strategies": ["no-retrieval", "rag-hybrid"],
                }
            }
        }
    }
    second = dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=project["resources"],
        partition_key="tiny",
        instance=project["instance"],
        selection=dg.AssetSelection.assets(*stages),
        run_config=config,
    )
    assert second.success
    meta = {m.asset_key.to_user_string(): m.materialization.metadata for m in second.get_asset_materialization_events()}
    assert meta["answers"]["split"].value == "all"  # no dev questions, and the fallback after dev is all
    assert "split 'dev' has no questions" in meta["answers"]["notes"].value
    assert meta["answers"]["dagster/row_count"].value == 2
    assert meta["evaluation_report"]["report_html"].value != str(html_path)
    summary_path = project["reports"] / "latest" / "summary.json"
    summary = json.loads(summary_path.read_text())
    assert set(summary["results"]["tiny"]) == {"no-retrieval", "rag-hybrid"}
    checks = {e.check_name: e.passed for e in second.get_asset_check_evaluations()}
    assert checks["evaluation_summary_is_complete"]

    # 3. a NaN in the summary fails the check (run alone, without a partition, it reads the summary of
    # the collection evaluation_report last materialized)
    summary["results"]["tiny"]["rag-hybrid"]["f1"] = float("nan")
    summary_path.write_text(json.dumps(summary))
    check_only = dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=project["resources"],
        instance=project["instance"],
        selection=dg.AssetSelection.checks(
            dg.AssetCheckKey(dg.AssetKey("evaluation_report"), "evaluation_summary_is_complete")
        ),
    )
    [evaluation] = check_only.get_asset_check_evaluations()
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.ERROR
    assert "rag-hybrid.f1 = nan" in evaluation.metadata["details"].value


def _outcome(question: str, answer: str, evidence: str, doc: str = "tiny/kettle.md"):
    from rag_assets.core.answering.types import Citation

    cites = [Citation(doc, 5, ("Kettle manual", "Boiling"), evidence, 0, len(evidence))] if evidence else []
    return answer_outcome(
        question,
        answer,
        evidence,
        citations=cites,
        passage_ids=["p1"] if evidence else [],
        retrieved_doc_ids=[doc] if evidence else [],
        router_prompt_tokens=100 if evidence else 0,
        router_output_tokens=10 if evidence else 0,
        reader_prompt_tokens=50,
        reader_output_tokens=5,
        engine_calls=2,
        seconds=0.5,
    )


def test_evaluation_report_on_stored_answers_without_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report asset alone, on hand-made answers rows: metrics, files, versions and the check."""
    from checks.evaluation import evaluation_summary_is_complete
    from rag_assets.core.answering.types import StrategySpec
    from rag_assets.core.corpus.question_sets import Question
    from rag_assets.core.lineage import build_record, store_answers
    from rag_assets.core.store.collections import replace_collection
    from rag_assets.core.store.question_table import questions_table
    from rag_assets.defs.evaluation.evaluation_report import evaluation_report

    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    db = tmp_path / "catalogue.duckdb"
    question = Question("e1", "How hot for green tea?", answers=("80 C",), split="test")
    rdr2 = StrategySpec("rdr2", "rdr2", adapter="abc123")
    rows = [
        build_record(
            _outcome(question.query, "80 C", "green tea | 80 C"),
            rdr2,
            collection="tiny",
            source="evaluation",
            versions={"index": {"table": "passages", "version": 3, "tag": "tiny-1"}, "adapter_id": "abc123"},
            run_id="r1",
            qid="e1",
        ),
        build_record(
            _outcome(question.query, "100 C", ""),
            StrategySpec("no-retrieval", "none"),
            collection="tiny",
            source="evaluation",
            versions={},
            run_id="r1",
            qid="e1",
        ),
        build_record(
            _outcome(question.query, "100 C", "black tea | 100 C"),
            dataclasses_replace(rdr2, top_k=1),
            collection="tiny",
            source="evaluation",
            versions={},
            run_id="r1",
            qid="e1",
            grid="top_k",
            grid_value=1,
        ),
    ]
    with duckdb.connect(str(db)) as con:
        replace_collection(con, "tiny", {"questions": questions_table("tiny", [question])})
        store_answers(con, rows, replace=("tiny", "evaluation"))
    instance = dg.DagsterInstance.ephemeral()
    register_collections(instance, ["tiny"])
    result = dg.materialize(
        [evaluation_report, evaluation_summary_is_complete],
        resources={"catalogue": DuckDBResource(database=str(db))},
        partition_key="tiny",
        instance=instance,
        selection=dg.AssetSelection.assets("evaluation_report")
        | dg.AssetSelection.checks_for_assets("evaluation_report"),
    )
    assert result.success
    [event] = result.get_asset_materialization_events()
    meta = event.materialization.metadata
    summary = json.loads(Path(meta["summary_json"].value).read_text())
    assert summary["results"]["tiny"]["rdr2"]["em"] == 1.0 and summary["results"]["tiny"]["rdr2"]["passage_hit"] == 1.0
    assert summary["results"]["tiny"]["no-retrieval"]["em"] == 0.0
    # rows came back rdr2 first; the report lists strategies in the answers asset's order
    assert list(summary["results"]["tiny"]) == ["no-retrieval", "rdr2"]
    markdown = Path(meta["report_markdown"].value).read_text()
    assert markdown.index("| no-retrieval |") < markdown.index("| rdr2 |")
    assert summary["scaling"]["tiny"]["top_k"]["1"]["em"] == 0.0
    assert summary["versions"]["adapter_id"] == "abc123" and summary["versions"]["index"]["tag"] == "tiny-1"
    assert summary["router_metrics"]["tiny"] == {}
    assert "src='metrics.png'" in Path(meta["report_html"].value).read_text()
    assert (tmp_path / "data" / "reports" / "tiny" / "latest" / "report.html").is_file()
    [check] = result.get_asset_check_evaluations()
    assert check.check_name == "evaluation_summary_is_complete" and check.passed
