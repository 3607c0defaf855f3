"""`answers` and `evaluation_report` materialized for real: tiny corpus, the packaged SmolLM2 and
embedder, DuckDB/LanceDB in tmp_path, a tiny grid."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterator
from dataclasses import replace as dataclasses_replace
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

from rag_assets.core.answering.policy.default_form import FormChoice
from rag_assets.core.answering.policy.routing_choice import RoutingChoice, RoutingSetting
from rag_assets.core.lineage import trace_answer
from rag_assets.definitions import ALL_ASSETS, ALL_CHECKS
from rag_assets.defs.evaluation.strategy_config import DEFAULT_STRATEGIES
from rag_assets.defs.evaluation.strategy_config import STRATEGIES as ALL_STRATEGIES
from rag_assets.defs.partitions import register_collections
from tests.answer_outcomes import answer_outcome
from tests.conftest import TINY_QUESTIONS as QUESTIONS
from tests.conftest import tiny_project, write_corpus

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
    "answer_policy",
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


def _materialize(project: dict, stages: tuple[str, ...], run_config: dict) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=project["resources"],
        partition_key="tiny",
        instance=project["instance"],
        selection=dg.AssetSelection.assets(*stages),
        run_config=run_config,
    )


def _metadata(result: dg.ExecuteInProcessResult) -> dict[str, dict]:
    return {m.asset_key.to_user_string(): m.materialization.metadata for m in result.get_asset_materialization_events()}


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory, smollm2_checkpoint: Path) -> Iterator[dict]:
    """The whole graph materialized ONCE for this module (the index, adapters and models are the
    expensive part): every strategy, the grids, the report. The tests of this first run read a copy
    of the catalogue and of `latest/` taken right after it, so the later scenarios (which replace
    the answers and rewrite `latest/`) cannot change what they see, whatever the test order."""
    tmp_path = tmp_path_factory.mktemp("evaluation")
    corpus_dir = write_corpus(tmp_path / "corpus")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))  # adapters and reports are written under it
        questions = "\n".join(json.dumps(q) for q in QUESTIONS) + "\n"
        project = tiny_project(tmp_path, corpus_dir, smollm2_checkpoint, questions)
        reports = tmp_path / "data" / "reports" / "tiny"
        result = _materialize(project, STAGES, RUN_CONFIG)
        first = tmp_path / "first-run"
        first.mkdir()
        for part in project["db"].parent.glob(project["db"].name + "*"):  # the file and any write-ahead log
            shutil.copy(part, first / part.name)
        shutil.copytree(reports / "latest", first / "latest")
        yield {
            **project,
            "reports": reports,
            "result": result,
            "first_db": first / "catalogue.duckdb",
            "first_latest": first / "latest",
        }


# The module's first test pays for the pipeline (the timeout counts fixture set-up); generous
# because the CPU may be shared.
PIPELINE_TIMEOUT = pytest.mark.timeout(1800)


def _first_run_answers(pipeline: dict, sql: str) -> list[tuple]:
    with duckdb.connect(str(pipeline["first_db"]), read_only=True) as con:
        return con.execute(sql).fetchall()


@PIPELINE_TIMEOUT
def test_answers_holds_every_strategy_and_grid_point_for_both_test_questions(pipeline: dict) -> None:
    result = pipeline["result"]
    assert result.success
    answers_meta = _metadata(result)["answers"]
    assert answers_meta["questions"].value == 2 and answers_meta["split"].value == "test"
    rows = _first_run_answers(
        pipeline,
        "SELECT strategy, grid, grid_value, count(*), count(DISTINCT answer_id), min(run_id), min(source) "
        "FROM answers GROUP BY ALL ORDER BY ALL",
    )
    main = {r[0]: r[3] for r in rows if r[1] == ""}
    assert main == {name: 2 for name in STRATEGIES}
    grids = {(r[1], r[2]) for r in rows if r[1]}
    assert grids == {("expand_iterations", 0), ("expand_iterations", 1), ("top_k", 1), ("top_k", 2)}
    assert all(r[3] == r[4] and r[5] == result.run_id and r[6] == "evaluation" for r in rows)
    assert answers_meta["dagster/row_count"].value == sum(r[3] for r in rows) == 2 * (len(STRATEGIES) + 4)
    [(cited, passages, words)] = _first_run_answers(
        pipeline,
        "SELECT cited_node_ids, passage_ids, evidence_words FROM answers WHERE strategy = 'rag-hybrid' LIMIT 1",
    )
    assert cited and len(passages) == 2 and words > 0


@PIPELINE_TIMEOUT
def test_rdr2_routes_with_the_trained_encoder_within_rag_hybrids_words_and_traces_to_its_sources(
    pipeline: dict,
) -> None:
    # rdr2 routes with the trained encoder router of this lineage, recorded in its versions
    [(versions_json,)] = _first_run_answers(pipeline, "SELECT versions FROM answers WHERE strategy = 'rdr2' LIMIT 1")
    versions = json.loads(versions_json)
    assert versions["index"]["tag"].startswith("tiny-")
    assert versions["adapter_id"] == _metadata(pipeline["result"])["router_adapter"]["encoder_adapter_id"].value
    # every budgeted rdr2 row gives the reader at most rag-hybrid's words for the same question
    words = dict(
        _first_run_answers(
            pipeline,
            "SELECT qid || '/' || strategy, evidence_words FROM answers WHERE grid = '' AND strategy IN "
            "('rag-hybrid', 'rdr2', 'rdr2-oracle', 'rdr2-hit-nodes', 'rdr2-similarity')",
        )
    )
    assert len(words) == 2 * 5
    over = {key: n for key, n in words.items() if n > words[f"{key.split('/')[0]}/rag-hybrid"]}
    assert not over, f"rdr2 rows over rag-hybrid's words for the same question: {over}"
    # an encoder-routed answer traces down to its exact source spans
    routed = _first_run_answers(
        pipeline, "SELECT answer_id FROM answers WHERE strategy = 'rdr2' AND cardinality(cited_node_ids) > 0"
    )
    assert routed, "no rdr2 answer cites a node: the encoder router selected nothing for either test question"
    with duckdb.connect(str(pipeline["first_db"]), read_only=True) as con:
        trace = trace_answer(con, routed[0][0])
    assert trace.sources, f"the trace of rdr2 answer {routed[0][0]} has no sources"
    changed = [src for src in trace.sources if src.current_text != src.recorded_text]
    assert not changed, f"sources whose text differs from what the answer recorded: {changed}"


@PIPELINE_TIMEOUT
def test_generation_rows_store_their_structures_and_the_metadata_counts_their_parses(pipeline: dict) -> None:
    structures = _first_run_answers(
        pipeline,
        "SELECT strategy, structure FROM answers WHERE strategy IN ('contregen', 'disco', 'disco-no-structure')",
    )
    assert sorted(s for s, _ in structures) == ["contregen"] * 2 + ["disco"] * 2 + ["disco-no-structure"] * 2
    assert [json.loads(structure)["stages"][-1] for _, structure in structures] == ["answer"] * 6
    assert "| contregen | 2 |" in _metadata(pipeline["result"])["answers"]["generation_parse"].value


@PIPELINE_TIMEOUT
def test_the_report_writes_its_files_and_finite_metrics_for_every_strategy(pipeline: dict) -> None:
    result = pipeline["result"]
    report_meta = _metadata(result)["evaluation_report"]
    html_path = Path(report_meta["report_html"].value)
    assert html_path.parent == pipeline["reports"] / result.run_id
    latest = pipeline["first_latest"]
    for name in ("report.md", "report.html", "summary.json", "metrics.png", "evidence.png", "scaling.png"):
        assert (html_path.parent / name).is_file() and (latest / name).is_file(), name
    html = html_path.read_text()
    assert "src='metrics.png'" in html and "src='scaling.png'" in html and "src='evidence.png'" in html
    summary = json.loads((latest / "summary.json").read_text())
    results = summary["results"]["tiny"]
    assert set(results) == set(STRATEGIES)
    expected = {
        "right",
        "f1",
        "passage_hit",
        "section_hit",
        "evidence_words",
        "first_cite_gold",
        "echoed",
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
    assert "**metrics**\n\n![metrics](data:image/png;base64," in report_meta["plots"].value
    assert "![scaling](data:image/png;base64," in report_meta["plots"].value
    # the Plots tab charts metrics per strategy (numbers), the counts are text
    assert report_meta["f1 rdr2"].value == round(results["rdr2"]["f1"], 4)
    assert report_meta["counts"].value.startswith(f"{len(STRATEGIES)} strategies, ")


@PIPELINE_TIMEOUT
def test_the_report_checks_pass_and_the_evidence_table_comes_first(pipeline: dict) -> None:
    checks = {e.check_name: e for e in pipeline["result"].get_asset_check_evaluations()}
    assert checks["evaluation_summary_is_complete"].passed, checks["evaluation_summary_is_complete"].metadata
    # the evidence evaluation (both test questions, no reader) is the report's first table
    assert checks["evidence_covers_every_question"].passed, checks["evidence_covers_every_question"].metadata
    summary = json.loads((pipeline["first_latest"] / "summary.json").read_text())
    assert summary["evidence"]["tiny"]["questions"] == 2
    markdown = (pipeline["first_latest"] / "report.md").read_text()
    assert markdown[markdown.index("## ") :].startswith("## Evidence without the reader: all 2 test questions")


@PIPELINE_TIMEOUT
def test_a_split_without_questions_falls_back_to_dev_then_to_all_questions(pipeline: dict) -> None:
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
    second = _materialize(pipeline, ("answers", "evaluation_report"), config)
    assert second.success
    meta = _metadata(second)
    assert meta["answers"]["split"].value == "all"  # no dev questions, and the fallback after dev is all
    assert "split 'dev' has no questions" in meta["answers"]["notes"].value
    assert meta["answers"]["dagster/row_count"].value == 2
    first_html = _metadata(pipeline["result"])["evaluation_report"]["report_html"].value
    assert meta["evaluation_report"]["report_html"].value != first_html
    summary = json.loads((pipeline["reports"] / "latest" / "summary.json").read_text())
    assert set(summary["results"]["tiny"]) == {"no-retrieval", "rag-hybrid"}
    checks = {e.check_name: e for e in second.get_asset_check_evaluations()}
    assert checks["evaluation_summary_is_complete"].passed, checks["evaluation_summary_is_complete"].metadata


@PIPELINE_TIMEOUT
def test_a_nan_in_the_latest_summary_fails_the_check(pipeline: dict) -> None:
    # run alone, without a partition, the check reads the summary of the collection
    # evaluation_report last materialized (rag-hybrid is in every run's summary)
    summary_path = pipeline["reports"] / "latest" / "summary.json"
    summary = json.loads(summary_path.read_text())
    summary["results"]["tiny"]["rag-hybrid"]["f1"] = float("nan")
    summary_path.write_text(json.dumps(summary))
    check_only = dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=pipeline["resources"],
        instance=pipeline["instance"],
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
    assert (
        summary["results"]["tiny"]["rdr2"]["right"] == 1.0 and summary["results"]["tiny"]["rdr2"]["passage_hit"] == 1.0
    )
    assert summary["results"]["tiny"]["no-retrieval"]["right"] == 0.0
    # rows came back rdr2 first; the report lists strategies in the answers asset's order
    assert list(summary["results"]["tiny"]) == ["no-retrieval", "rdr2"]
    markdown = Path(meta["report_markdown"].value).read_text()
    assert markdown.index("| no-retrieval |") < markdown.index("| rdr2 |")
    assert summary["scaling"]["tiny"]["top_k"]["1"]["right"] == 0.0
    assert summary["versions"]["adapter_id"] == "abc123" and summary["versions"]["index"]["tag"] == "tiny-1"
    assert summary["router_metrics"]["tiny"] == {}
    assert "src='metrics.png'" in Path(meta["report_html"].value).read_text()
    assert (tmp_path / "data" / "reports" / "tiny" / "latest" / "report.html").is_file()
    [check] = result.get_asset_check_evaluations()
    assert check.check_name == "evaluation_summary_is_complete" and check.passed


@PIPELINE_TIMEOUT
def test_extractive_rows_cite_their_sentence_every_answer_its_support_and_none_echoes(pipeline: dict) -> None:
    checks = {e.check_name: e for e in pipeline["result"].get_asset_check_evaluations()}
    assert checks["answers_echo_no_prompt"].passed, checks["answers_echo_no_prompt"].metadata
    assert checks["answers_echo_no_prompt"].metadata["answers"].value == 2 * (len(STRATEGIES) + 4)
    rows = _first_run_answers(
        pipeline,
        "SELECT strategy, answer, answer_form, supporting, attribution, cited_texts, versions FROM answers "
        "WHERE grid = ''",
    )
    extractive = [r for r in rows if r[0].endswith("-extractive")]
    assert sorted({r[0] for r in extractive}) == ["rag-hybrid-extractive", "rdr2-extractive"]
    for strategy, answer, form, supporting, attribution, cited, _ in extractive:
        assert (form, attribution) == ("extractive", "extractive" if cited else ""), strategy
        assert supporting == (1 if cited else 0)
        assert not cited or (answer and answer == cited[0])  # a quote: the cited sentence itself
    generated = [r for r in rows if not r[0].endswith("-extractive")]
    for strategy, answer, form, supporting, attribution, cited, versions in generated:
        # written by the reader, or, where it wrote nothing, the best sentence of the same evidence
        empty = json.loads(versions).get("reader_empty", False)
        assert form == ("extractive" if empty else "generated") and 0 <= supporting <= len(cited), strategy
        assert not empty or (attribution == "extractive" and supporting == 1 and answer and answer in cited[0])
    for strategy, answer, form, supporting, attribution, cited, _ in generated:
        # a reader's answer given evidence rests on the nodes holding what it says, or says none does
        if form == "generated" and answer.strip() and cited:
            assert (attribution == "unsupported") == (supporting == 0), (strategy, attribution, supporting)
            assert attribution in ("markers", "overlap", "unsupported"), (strategy, attribution)
    # The collection's default form, measured by `answer_policy` and published with its models. By
    # hand: the routers' validation fold of the tiny question set is t3 alone (the fold is a hash of
    # the question id, 20% validation), "What is the pass statement?", gold "null operation". Its
    # quote is the pass document's sentence '"pass" is a null operation; nothing happens when it
    # executes.', which holds the gold answer: the reader can at best tie it, a tie keeps the quote.
    # One question is under the 3 a relevance floor needs: none.
    [(form, details)] = _first_run_answers(
        pipeline, "SELECT model_id, details FROM published_models WHERE kind = 'answer_policy'"
    )
    choice = FormChoice.from_details(form, json.loads(details))
    assert (choice.form, choice.questions, choice.extractive_right, choice.floor) == ("extractive", 1, 1, None), details
    assert choice.reason.startswith("a quote of the evidence: on 1 validation questions the reader's answer was right")
    assert choice.reason.endswith("the quote 1; too few to make the reader the default")
    assert _metadata(pipeline["result"])["answers"]["default_form"].value == choice.note
    # rdr2's routing settings, learned on the train questions (t1-t3, each with a gold answer a
    # passage can hold): all 18 candidates measured, and 3 questions are under the 10 the rule
    # needs, so the defaults stand and the `answers` rows keep their configured 4 passages.
    routing = RoutingChoice.from_details(json.loads(details)["routing"])
    assert (routing.questions, routing.metric, len(routing.means)) == (3, "passage_hit", 18), details
    assert routing.setting == routing.default == RoutingSetting(20, 2, None) and not routing.learned
    assert routing.reason.endswith("too few questions to learn settings")
    assert _metadata(pipeline["result"])["answers"]["rdr2_routing"].value.startswith(
        "passages 4, documents 2, expand calibrated, as configured (the defaults: passage_hit on 3 train questions"
    )
    checks = {e.check_name: e for e in pipeline["result"].get_asset_check_evaluations()}
    assert checks["answer_policy_follows_its_rule"].passed
