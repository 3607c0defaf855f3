"""The real Dagster materialization of the graph with DuckDB in tmp_path."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest

from rag_assets.definitions import ALL_ASSETS, ALL_CHECKS, defs
from rag_assets.defs.partitions import COLLECTION_PARTITIONS_NAME, register_collections
from tests.conftest import tiny_project


@pytest.fixture
def project(tmp_path: Path, corpus_dir: Path, smollm2_checkpoint: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))  # adapters are written under it
    (corpus_dir / "empty.md").write_bytes(b"")
    (corpus_dir / "broken.json").write_text('{"section_0": {"html": 3}}')
    return tiny_project(
        tmp_path,
        corpus_dir,
        smollm2_checkpoint,
        '{"qid": "k1", "question": "How hot for green tea?", "answers": ["80 C"], "split": "train"}\n'
        '{"qid": "k2", "question": "Max fill?", "answers": ["1.7 litres"]}\nbroken\n',
    )


def _materialize(project: dict, *keys: str, run_config: dict | None = None) -> dg.ExecuteInProcessResult:
    selection = dg.AssetSelection.assets(*(keys or ("source_documents", "document_trees")))
    return dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=project["resources"],
        partition_key="tiny",
        instance=project["instance"],
        selection=selection,
        run_config=run_config,
    )


def test_definitions_load_with_every_asset_check_and_job() -> None:
    repo = defs.get_repository_def()
    keys = {k.to_user_string() for k in repo.asset_graph.get_all_asset_keys()}
    assert {"source_documents", "document_trees"} <= keys
    checks = {c.name for c in repo.asset_graph.asset_check_keys}
    assert {
        "document_trees_are_valid",
        "document_nodes_expectations",
        "every_document_accounted_for",
        "every_document_has_a_card",
        "source_documents_expectations",
    } <= checks
    # the main job materializes the whole graph (resolve_job_def raises when there is no such job)
    main_job = defs.resolve_job_def("main_job")
    assert {k.to_user_string() for k in main_job.asset_layer.executable_asset_keys} == {
        "source_documents",
        "document_trees",
        "document_cards",
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
    }
    # The side tables are in the lineage graph, downstream of the steps that write them.
    graph = repo.asset_graph
    parents = {
        name: {k.to_user_string() for k in graph.get(dg.AssetKey(name)).parent_keys}
        for name in ("rejected_documents", "document_texts")
    }
    assert parents == {
        "rejected_documents": {"source_documents", "document_trees"},
        "document_texts": {"document_trees"},
    }
    # Catalogue assets carry their table's name and column schema.
    spec = graph.get(dg.AssetKey("document_trees"))
    assert spec.metadata["dagster/table_name"] == "catalogue.main.document_nodes"
    columns = {c.name: c for c in spec.metadata["dagster/column_schema"].columns}
    assert columns["parent_id"].constraints.nullable and not columns["doc_id"].constraints.nullable


def test_materialize_sources_and_trees_with_checks(project: dict) -> None:
    result = _materialize(project)
    assert result.success
    evaluations = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert set(evaluations) >= {
        "document_trees_are_valid",
        "document_nodes_expectations",
        "every_document_accounted_for",
        "source_documents_expectations",
    }
    assert all(e.passed for e in evaluations.values()), {k: e.metadata for k, e in evaluations.items()}

    mats = {m.asset_key.to_user_string(): m for m in result.get_asset_materialization_events()}
    source_meta = mats["source_documents"].materialization.metadata
    assert source_meta["documents"].value == 7 and source_meta["rejected"].value == 1
    assert source_meta["dagster/partition_row_count"].value == 7 and source_meta["dagster/row_count"].value == 7
    # the side tables' rows of this partition are recorded as their own materializations
    texts = mats["document_texts"].materialization
    assert texts.partition == "tiny" and texts.metadata["dagster/partition_row_count"].value == 6
    assert mats["rejected_documents"].materialization.metadata["written_by"].value == "document_trees"
    tree_meta = mats["document_trees"].materialization.metadata
    assert tree_meta["documents"].value == 6 and tree_meta["rejected"].value == 1
    assert "```" in tree_meta["sample_tree"].value
    assert "| depth | count |" in tree_meta["depth_histogram"].value
    assert tree_meta["depth_plot"].value.startswith("![node depth](data:image/png;base64,")

    with duckdb.connect(str(project["db"])) as con:
        rejected = dict(con.execute("SELECT regexp_extract(uri, '[^/]+$'), stage FROM rejected_documents").fetchall())
        assert rejected == {"empty.md": "ingest", "broken.json": "parse"}
        assert con.execute("SELECT count(DISTINCT doc_id) FROM document_nodes").fetchone()[0] == 6
        kettle = con.execute(
            "SELECT node_id, parent_id, kind, text FROM document_nodes WHERE doc_id = 'tiny/kettle.md' ORDER BY node_id"
        ).fetchall()
        assert kettle[0] == (0, None, "structure", "Kettle manual")
        assert (2, 0, "structure", "Filling") in kettle
        assert (4, 3, "content", "at least 0.5 litres") in kettle


def test_rematerializing_replaces_the_collection_atomically(project: dict, corpus_dir: Path) -> None:
    assert _materialize(project).success
    (corpus_dir / "kettle.md").unlink()
    assert _materialize(project).success
    with duckdb.connect(str(project["db"])) as con:
        docs = [r[0] for r in con.execute("SELECT doc_id FROM source_documents ORDER BY 1").fetchall()]
        assert "tiny/kettle.md" not in docs and len(docs) == 6
        assert con.execute("SELECT count(*) FROM document_nodes WHERE doc_id = 'tiny/kettle.md'").fetchone()[0] == 0


def test_a_failed_write_leaves_the_previous_version(project: dict) -> None:
    import pyarrow as pa

    from rag_assets.core.store.collections import replace_collection

    assert _materialize(project).success
    with duckdb.connect(str(project["db"])) as con:
        before = con.execute("SELECT count(*) FROM document_nodes").fetchone()[0]
        bad = pa.table({"collection": ["tiny"], "doc_id": [None]})  # violates NOT NULL mid-transaction
        with pytest.raises(duckdb.Error):
            replace_collection(
                con, "tiny", {"document_texts": pa.table({"collection": ["tiny"]}), "document_nodes": bad}
            )
        assert con.execute("SELECT count(*) FROM document_nodes").fetchone()[0] == before
        assert con.execute("SELECT count(*) FROM document_texts").fetchone()[0] == 6


def test_partitions_are_registered_once(project: dict) -> None:
    instance = project["instance"]
    assert register_collections(instance, ["tiny", "other"]) == ["other"]
    assert instance.get_dynamic_partitions(COLLECTION_PARTITIONS_NAME) == ["tiny", "other"]


def test_the_index_stages_materialize_and_reindex_incrementally(project: dict, corpus_dir: Path) -> None:
    stages = ("source_documents", "document_trees", "passages", "passage_index")
    first = _materialize(project, *stages)
    assert first.success
    checks = {e.check_name: e.passed for e in first.get_asset_check_evaluations()}
    assert checks["passages_are_exact"] and checks["index_matches_catalogue"] and checks["index_vectors_and_fts"]
    meta = {m.asset_key.to_user_string(): m.materialization.metadata for m in first.get_asset_materialization_events()}
    passages = meta["passages"]["passages"].value
    assert passages > 0 and meta["passage_index"]["added"].value == passages
    assert meta["passage_index"]["tag"].value.startswith("tiny-")

    (corpus_dir / "pass.txt").write_text("Pass\n****\n\nChanged text for the pass statement.\n")
    second = _materialize(project, *stages)
    assert second.success
    meta2 = {
        m.asset_key.to_user_string(): m.materialization.metadata for m in second.get_asset_materialization_events()
    }
    index_meta = meta2["passage_index"]
    assert index_meta["embedded"].value == index_meta["added"].value + index_meta["changed"].value
    assert 0 < index_meta["embedded"].value < passages
    # only the changed file is read again, and pages.jsonl's two page records (a file of records
    # is read to split it); the other files keep what was read before
    documents = meta2["source_documents"]["documents"].value
    assert meta["source_documents"]["documents_kept"].value == 0
    assert (meta2["source_documents"]["documents_read"].value, meta2["source_documents"]["documents_kept"].value) == (
        3,
        documents - 3,
    )
    # parsed: the changed file, and broken.json, which has no stored tree to keep (its parse fails again)
    assert meta2["document_trees"]["trees_parsed"].value == 2
    assert meta2["document_trees"]["trees_kept"].value == meta2["document_trees"]["documents"].value - 1
    assert index_meta["version"].value > meta["passage_index"]["version"].value


def test_questions_materialize_with_splits_and_skipped_lines(project: dict) -> None:
    result = _materialize(project, "questions")
    assert result.success
    [event] = result.get_asset_materialization_events()
    assert event.materialization.metadata["dagster/row_count"].value == 2
    assert event.materialization.metadata["skipped"].value == 1
    with duckdb.connect(str(project["db"])) as con:
        rows = con.execute("SELECT qid, split, answers FROM questions ORDER BY qid").fetchall()
    assert rows[0] == ("k1", "train", ["80 C"]) and rows[1][0] == "k2"


def test_routing_data_is_curated_by_the_oracle_teacher(project: dict) -> None:
    stages = (
        "source_documents",
        "document_trees",
        "passages",
        "passage_index",
        "questions",
        "routing_subtrees",
        "routing_actions",
    )
    result = _materialize(project, *stages)
    assert result.success
    checks = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert checks["routing_targets_are_valid"].passed, checks["routing_targets_are_valid"].metadata
    assert "routing_action_kinds_present" in checks
    meta = {m.asset_key.to_user_string(): m.materialization.metadata for m in result.get_asset_materialization_events()}
    assert meta["routing_subtrees"]["questions"].value >= 1  # k1 is a train question
    actions = meta["routing_actions"]
    assert actions["ANS"].value >= 1  # "80 C" is in the kettle table row
    assert actions["ANS"].value + actions["EXP"].value + actions["REF"].value == actions["dagster/row_count"].value
    with duckdb.connect(str(project["db"])) as con:
        kettle = con.execute(
            "SELECT a.target FROM routing_actions a JOIN routing_subtrees s USING (collection, subtree_id) "
            "WHERE s.doc_id = 'tiny/kettle.md' AND s.view = 'initial' AND s.qid = 'k1'"
        ).fetchone()[0]
    assert kettle.startswith("[ANSWER] ") and "green tea" in kettle


def test_router_adapter_trains_on_the_train_fold(project: dict, tmp_path: Path) -> None:
    stages = (
        "source_documents",
        "document_trees",
        "passages",
        "passage_index",
        "questions",
        "routing_subtrees",
        "routing_actions",
        "router_adapter",
    )
    config = {
        "ops": {
            "router_adapter": {
                "config": {"kinds": ["encoder", "llm"], "max_steps": 2, "batch_size": 2, "max_length": 512}
            }
        }
    }
    result = _materialize(project, *stages, run_config=config)
    assert result.success
    meta = {m.asset_key.to_user_string(): m.materialization.metadata for m in result.get_asset_materialization_events()}
    adapter = meta["router_adapter"]
    with duckdb.connect(str(project["db"])) as con:
        train = con.execute("SELECT count(*) FROM routing_actions WHERE fold = 'train'").fetchone()[0]
    assert train > 0  # k1 lands in the train fold, k2 in validation
    assert adapter["trained"].value is True and adapter["steps"].value == 2
    assert Path(adapter["path"].value).parent == tmp_path / "data" / "adapters"
    assert (Path(adapter["path"].value) / "adapter_config.json").is_file()
    assert adapter["loss_curve"].value.startswith("![LLM router loss](data:image/png;base64,")


def test_a_document_over_the_passage_cap_is_listed_and_the_check_still_passes(project: dict) -> None:
    config = {"ops": {"passages": {"config": {"max_passages_per_document": 3, "max_words": 10}}}}
    result = _materialize(project, "source_documents", "document_trees", "passages", run_config=config)
    assert result.success
    exact = next(e for e in result.get_asset_check_evaluations() if e.check_name == "passages_are_exact")
    assert exact.passed, exact.metadata
    with duckdb.connect(str(project["db"])) as con:
        left_out = con.execute(
            "SELECT regexp_extract(uri, '[^/]+$'), reason FROM rejected_documents WHERE stage = 'passages' ORDER BY 1"
        ).fetchall()
        indexed = {r[0] for r in con.execute("SELECT DISTINCT doc_id FROM passages").fetchall()}
    cap = "over the limit of 3 per document (passages config max_passages_per_document)"
    assert left_out == [
        ("kettle.md", f"tiny/kettle.md: cut into 6 passages, {cap}"),
        ("pass.txt", f"tiny/pass.txt: cut into 5 passages, {cap}"),
        ("phone.json", f"tiny/phone.json: cut into 4 passages, {cap}"),
    ]
    assert indexed == {"tiny/pond.html", "tiny/pages.jsonl/p1", "tiny/pages.jsonl/p2"}
    metadata = next(
        m.materialization.metadata
        for m in result.get_asset_materialization_events()
        if m.asset_key.to_user_string() == "passages"
    )
    assert metadata["rejected"].value == 3
