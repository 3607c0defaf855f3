"""The source-change sensor and the re-index schedule, evaluated with Dagster's test helpers."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg

from rag_assets.defs.automation import reindex_schedule, source_change_sensor
from rag_assets.defs.partitions import COLLECTION_PARTITIONS_NAME, register_collections
from resources.sources import SourcesResource

TICK = datetime(2026, 11, 22, 3, 0, tzinfo=UTC)


def _evaluate(instance: dg.DagsterInstance, sources: SourcesResource, cursor: str | None) -> dg.SensorResult:
    # As a context manager: the context enters the instance and must leave it again, or a later
    # materialization in this process would reach this (then disposed) instance.
    with dg.build_sensor_context(instance=instance, cursor=cursor, resources={"sources": sources}) as context:
        return source_change_sensor(context)


def _touch(path: Path) -> None:
    later = time.time() + 5
    os.utime(path, (later, later))


def test_sensor_requests_runs_only_when_sources_change(tmp_path: Path, corpus_dir: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.md").write_text("# A\n\ntext\n")
    collections = tmp_path / "collections.yaml"
    collections.write_text(
        f"collections:\n  - name: tiny\n    path: {corpus_dir}\n  - name: other\n    path: {other}\n"
    )
    sources = SourcesResource(collections_file=str(collections))
    instance = dg.DagsterInstance.ephemeral()

    # turned on: the first tick records the files as they are and requests nothing, saying why
    first = _evaluate(instance, sources, None)
    assert first.run_requests == [] and first.cursor
    assert first.skip_reason.skip_message.startswith(
        "first tick: recorded the files of tiny (5 files), other (1 files)"
    )
    [request] = first.dynamic_partitions_requests
    assert sorted(request.partition_keys) == ["other", "tiny"]
    register_collections(instance, ["tiny", "other"])

    unchanged = _evaluate(instance, sources, first.cursor)
    assert unchanged.run_requests == [] and unchanged.dynamic_partitions_requests == []
    assert unchanged.skip_reason.skip_message.startswith("no file added, changed or removed since the last tick")
    assert "tiny: 5 files" in unchanged.skip_reason.skip_message

    _touch(corpus_dir / "kettle.md")  # changed
    changed = _evaluate(instance, sources, unchanged.cursor)
    assert [r.partition_key for r in changed.run_requests] == ["tiny"] and changed.skip_reason is None
    assert changed.run_requests[0].tags["rag/files"] == "5 -> 5"

    (corpus_dir / "new.md").write_text("# New\n\nadded\n")  # added
    added = _evaluate(instance, sources, changed.cursor)
    assert [r.partition_key for r in added.run_requests] == ["tiny"]
    assert added.run_requests[0].tags["rag/files"] == "5 -> 6"

    (other / "a.md").unlink()  # removed
    removed = _evaluate(instance, sources, added.cursor)
    assert [r.partition_key for r in removed.run_requests] == ["other"]
    assert _evaluate(instance, sources, removed.cursor).run_requests == []


def test_a_cursor_of_digests_alone_still_compares(tmp_path: Path, corpus_dir: Path) -> None:
    collections = tmp_path / "collections.yaml"
    collections.write_text(f"collections:\n  - name: tiny\n    path: {corpus_dir}\n")
    sources = SourcesResource(collections_file=str(collections))
    instance = dg.DagsterInstance.ephemeral()
    seeded = json.loads(_evaluate(instance, sources, None).cursor)
    older = json.dumps({"tiny": seeded["tiny"]["digest"]})  # the cursor format before file counts
    assert _evaluate(instance, sources, older).run_requests == []
    _touch(corpus_dir / "kettle.md")
    assert [r.partition_key for r in _evaluate(instance, sources, older).run_requests] == ["tiny"]


def test_schedule_requests_every_registered_collection() -> None:
    # Contexts as context managers, as in `_evaluate`: each leaves the instance it entered.
    with dg.instance_for_test() as instance:
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=TICK) as context:
            assert isinstance(reindex_schedule(context), dg.SkipReason)
        register_collections(instance, ["a", "b"])
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=TICK) as context:
            requests = reindex_schedule(context)
        assert [r.partition_key for r in requests] == ["a", "b"]
        assert instance.get_dynamic_partitions(COLLECTION_PARTITIONS_NAME) == ["a", "b"]
