"""The source-change sensor driving real re-index runs on the tiny corpus: no run on the first tick
(turned on) nor on a tick with no change; after an edited paragraph, one run that re-embeds only
the edited document's passages and keeps the passage reranker and namespace router it trained
before (their training data changed less than the threshold), saying so in their metadata."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from rag_assets.definitions import ALL_ASSETS, ALL_CHECKS
from rag_assets.defs.automation import reindex_job, source_change_sensor
from tests.conftest import TINY_QUESTIONS, tiny_project

TRAINING = {"retrain_threshold": 0.5}  # within it: 1 of 6 documents, and the few synthetic questions of it
RUN_CONFIG = {
    "ops": {
        "synthetic_questions": {"config": {"count": 6}},
        "passage_reranker": {
            "config": {"max_steps": 2, "batch_size": 2, "negatives": 2, "max_length": 64, "depth": 4, **TRAINING}
        },
        "namespace_router": {"config": {"latency_queries": 2, **TRAINING}},
    }
}


@pytest.fixture
def project(tmp_path: Path, corpus_dir: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))  # trained models are written under it
    questions = "".join(json.dumps(q) + "\n" for q in TINY_QUESTIONS)
    return tiny_project(tmp_path, corpus_dir, tmp_path / "no-model", questions)  # no step here reads the LLM


def _tick(project: dict, cursor: str | None) -> dg.SensorResult:
    with dg.build_sensor_context(
        instance=project["instance"], cursor=cursor, resources={"sources": project["resources"]["sources"]}
    ) as context:
        return source_change_sensor(context)


def _reindex(project: dict, partition: str) -> dict[str, dg.AssetMaterialization]:
    result = dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=project["resources"],
        partition_key=partition,
        instance=project["instance"],
        selection=reindex_job.selection,
        run_config=RUN_CONFIG,
    )
    assert result.success
    return {m.asset_key.to_user_string(): m.materialization for m in result.get_asset_materialization_events()}


def _values(materialization: dg.AssetMaterialization) -> dict:
    return {k: getattr(v, "value", v) for k, v in materialization.metadata.items()}


@pytest.mark.timeout(1800)
def test_the_sensor_reindexes_only_what_changed_and_keeps_unchanged_models(project: dict, corpus_dir: Path) -> None:
    first = _tick(project, None)  # the sensor turned on: nothing requested, and why
    assert first.run_requests == [] and first.skip_reason.skip_message.startswith("first tick: recorded the files")

    before = _reindex(project, "tiny")  # the collection's first index (as `rag run` or `rag index` made it)
    reranker_before, router_before = _values(before["passage_reranker"]), _values(before["namespace_router"])
    assert (
        reranker_before["retrained"] and reranker_before["retrain_reason"] == "no model trained before from this data"
    )
    assert router_before["retrained"]

    quiet = _tick(project, first.cursor)
    assert quiet.run_requests == [] and "no file added, changed or removed" in quiet.skip_reason.skip_message

    kettle = corpus_dir / "kettle.md"
    kettle.write_text(kettle.read_text().replace("Press the switch.", "Press the switch firmly."))
    changed = _tick(project, quiet.cursor)
    [request] = changed.run_requests
    assert request.partition_key == "tiny" and request.tags["rag/trigger"] == "sources-changed"

    after = _reindex(project, request.partition_key)
    documents = _values(after["source_documents"])
    assert [(c["doc_id"], c["change"]) for c in documents["document_changes_json"]] == [("tiny/kettle.md", "changed")]
    assert documents["documents_changed"] == 1 and documents["documents_unchanged"] == 5
    assert "| tiny/kettle.md | changed |" in documents["document_changes"]
    index = _values(after["passage_index"])
    assert [c["doc_id"] for c in index["document_changes_json"]] == ["tiny/kettle.md"]
    assert index["embedded"] == index["changed"] + index["added"] == 1  # the edited paragraph's passage alone
    assert index["unchanged"] == _values(before["passage_index"])["added"] - 1

    reranker, router = _values(after["passage_reranker"]), _values(after["namespace_router"])
    assert not reranker["retrained"] and not router["retrained"]
    assert (
        reranker["reranker_id"] == reranker_before["reranker_id"] and router["router_id"] == router_before["router_id"]
    )
    assert reranker["retrain_reason"].startswith("1 of 6 documents (16.7%)")
    assert reranker["retrain_reason"].endswith(f"within the 50% threshold; kept {reranker_before['reranker_id']}")
    assert "within the 50% threshold" in router["retrain_reason"]
    # the kept models' data versions are the ones they had: nothing downstream of them goes stale
    version = "dagster/data_version"
    assert after["passage_reranker"].tags[version] == before["passage_reranker"].tags[version]
    assert after["namespace_router"].tags[version] == before["namespace_router"].tags[version]
