"""Stored answers as Dagster events: a real index materialization, then an answer recorded on
`served_answers` (its id a partition) with its lineage and the links a Dagster user follows."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from rag_assets.core.answering.types import Citation, StrategySpec
from rag_assets.core.lineage import answer_versions, build_record
from rag_assets.core.lineage.answer_events import AnswerEventQueue
from rag_assets.core.store.publication import pin_index
from rag_assets.core.store.tree_tables import load_trees
from rag_assets.definitions import ALL_ASSETS, ALL_CHECKS
from rag_assets.events.served_answers import SERVED_ANSWER_PARTITIONS_NAME, SERVED_ANSWERS, InstanceSink, record_answers
from rag_assets.events.upstream import latest_materialization, latest_materializations
from tests.answer_outcomes import answer_outcome
from tests.conftest import REPO_ROOT, tiny_project

INDEX_STAGES = ("source_documents", "document_trees", "passages", "passage_index")


@pytest.fixture
def project(tmp_path: Path, corpus_dir: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    return tiny_project(tmp_path, corpus_dir, tmp_path / "no-model", "")  # no step here reads a model


def _materialize(project: dict) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=project["resources"],
        partition_key="tiny",
        instance=project["instance"],
        selection=dg.AssetSelection.assets(*INDEX_STAGES),
    )


def _answer(con: duckdb.DuckDBPyConnection):
    """An answer citing the kettle's green-tea row, with the versions `rag ask` records."""
    nodes, _ = load_trees(con, "tiny", ["tiny/kettle.md"])["tiny/kettle.md"]
    [node] = [n for n in nodes if n.text.startswith("green tea")]
    cite = Citation("tiny/kettle.md", node.node_id, node.heading_path, node.text, node.span_start, node.span_end)
    outcome = answer_outcome(
        "How hot for green tea?", "80 C", node.text, citations=[cite], retrieved_doc_ids=["tiny/kettle.md"]
    )
    pin = pin_index(con, "tiny")
    versions = answer_versions(
        con,
        "tiny",
        outcome,
        index=pin.index_info(),
        adapter_id=None,
        router_model="none",
        reader_model="SmolLM2",
        embedder="all-MiniLM-L6-v2",
    )
    spec = StrategySpec(name="rag-hybrid", kind="rag")
    return build_record(outcome, spec, collection="tiny", source="service", versions=versions), node


def test_an_answer_is_a_partition_of_served_answers_with_its_lineage_and_links(project: dict) -> None:
    result = _materialize(project)
    assert result.success
    instance = project["instance"]
    with duckdb.connect(str(project["db"])) as con:
        record, node = _answer(con)
    assert record_answers(instance, [record]) == 1

    assert instance.get_dynamic_partitions(SERVED_ANSWER_PARTITIONS_NAME) == [record.answer_id]
    event = latest_materialization(instance, SERVED_ANSWERS, partition=record.answer_id)
    assert event is not None and event.run_id == ""  # runless: no run per answer
    meta = {k: getattr(v, "value", v) for k, v in event.asset_materialization.metadata.items()}
    assert meta["answer_id"] == record.answer_id and meta["question"] == "How hot for green tea?"
    assert meta["strategy"] == "rag-hybrid" and meta["source"] == "service" and meta["reader"] == "SmolLM2"
    assert meta["cited_node_ids"] == [{"doc_id": "tiny/kettle.md", "node_id": node.node_id}]
    assert f"| 1 | tiny/kettle.md | {node.node_id} | {node.span_start}-{node.span_end} |" in meta["cited_nodes"]
    assert meta["document_hashes"]["tiny/kettle.md"] == record.versions_dict["doc_hashes"]["tiny/kettle.md"]
    assert meta["index_tag"] == f"tiny-{result.run_id[:8]}" and meta["index_table"] == "passages"
    # the full id of the run that published the index, and the documents' materialization event
    assert meta["index_run"] == result.run_id
    documents = latest_materialization(instance, dg.AssetKey("source_documents"), partition="tiny")
    url = f"/assets/source_documents?view=events&partition=tiny&time={int(documents.timestamp * 1000)}"
    assert meta["documents_materialization"] == url  # the materialization that ingested this version
    assert (
        f"| tiny/kettle.md | {meta['document_hashes']['tiny/kettle.md'][:16]} | [source_documents]({url}) |"
        in (meta["documents"])
    )
    assert instance.get_runs_count() == 1  # the index run alone


def test_the_document_link_is_the_materialization_that_ingested_the_cited_version(
    project: dict, corpus_dir: Path
) -> None:
    first = _materialize(project)
    (corpus_dir / "pass.txt").write_text("Pass\n****\n\nChanged text for the pass statement.\n")
    second = _materialize(project)  # the kettle manual is unchanged in this run
    assert first.success and second.success
    instance = project["instance"]
    with duckdb.connect(str(project["db"])) as con:
        record, _ = _answer(con)  # read from the second run's index
    record_answers(instance, [record])
    meta = {
        k: getattr(v, "value", v)
        for k, v in latest_materialization(
            instance, SERVED_ANSWERS, partition=record.answer_id
        ).asset_materialization.metadata.items()
    }
    assert meta["index_run"] == second.run_id and meta["index_tag"] == f"tiny-{second.run_id[:8]}"
    documents = {
        r.run_id: r for r in latest_materializations(instance, dg.AssetKey("source_documents"), partition="tiny")
    }
    ingested = documents[first.run_id]  # where the kettle manual's version was added
    assert meta["documents_materialization"].endswith(f"&time={int(ingested.timestamp * 1000)}")


def test_queued_answers_reach_the_instance_of_dagster_home_from_the_background_thread(
    project: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the service and `rag ask` do where they store an answer: queue it; the queue's thread
    writes it to DAGSTER_HOME's instance without anyone flushing."""
    assert _materialize(project).success
    with duckdb.connect(str(project["db"])) as con:
        records = [_answer(con)[0] for _ in range(3)]
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(REPO_ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    queue = AnswerEventQueue(InstanceSink(), max_wait_s=0.2)
    queue.put(records[:1])
    queue.put(records[1:])
    with dg.DagsterInstance.from_config(str(home)) as instance:
        deadline = time.monotonic() + 60
        while any(latest_materialization(instance, SERVED_ANSWERS, partition=r.answer_id) is None for r in records):
            assert time.monotonic() < deadline, "the queued answers were not written"
            time.sleep(0.2)
        assert sorted(instance.get_dynamic_partitions(SERVED_ANSWER_PARTITIONS_NAME)) == sorted(
            r.answer_id for r in records
        )
        for record in records:
            event = latest_materialization(instance, SERVED_ANSWERS, partition=record.answer_id)
            assert event is not None and event.asset_materialization.metadata["answer_id"].value == record.answer_id
        assert instance.get_runs_count() == 0  # runless events: no run per answer
    assert queue.close() == 0 and queue.batches_written >= 1 and not queue.pending
