"""`rag backup` of a real deployment (the tiny corpus indexed by the real pipeline into a DuckDB
catalogue and a LanceDB index, a Dagster instance on sqlite) taken while a reader keeps reading
both stores, restored into a fresh place: the same catalogue rows, the same LanceDB versions,
and the stores-agree rule of the `index_matches_catalogue` check holding for the restored pair."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import dagster as dg
import lance
import pytest

from rag_assets.core.backup.restore import restore_backup
from rag_assets.core.backup.snapshot import Stores, take_backup
from rag_assets.core.errors import ConfigError
from rag_assets.core.store.backup import table_rows
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.definitions import ALL_ASSETS, ALL_CHECKS
from rag_assets.defs.automation import passage_index_job
from rag_assets.defs.partitions import register_collections
from tests.conftest import TINY_QUESTIONS, tiny_project


@pytest.fixture
def indexed(tmp_path: Path, corpus_dir: Path) -> Stores:
    questions = "".join(json.dumps(q) + "\n" for q in TINY_QUESTIONS)
    project = tiny_project(tmp_path, corpus_dir, tmp_path / "no-model", questions)  # indexing reads no LLM
    home = tmp_path / "home"
    home.mkdir()
    with dg.DagsterInstance.local_temp(str(home)) as instance:  # run storage in sqlite files, as deployed
        register_collections(instance, ["tiny"])
        result = dg.materialize(
            [*ALL_ASSETS, *ALL_CHECKS],
            resources=project["resources"],
            partition_key="tiny",
            instance=instance,
            selection=passage_index_job.selection,
        )
        assert result.success
    return Stores(tmp_path, tmp_path / "lancedb", home)


def _keep_reading(stores: Stores, stop: threading.Event, reads: list[tuple[int, int]], failures: list) -> None:
    while not stop.is_set():
        try:
            with catalogue_connection(stores.catalogue, read_only=True) as con:
                passages = con.execute("SELECT count(*) FROM passages").fetchone()[0]
            reads.append((passages, lance.dataset(str(stores.lancedb / "passages.lance")).count_rows()))
        except Exception as err:
            failures.append(err)


@pytest.mark.timeout(900)
def test_a_backup_taken_while_reading_restores_whole_and_agreeing(indexed: Stores, tmp_path: Path) -> None:
    with catalogue_connection(indexed.catalogue, read_only=True) as con:
        rows = table_rows(con)
    versions = [v["version"] for v in lance.dataset(str(indexed.lancedb / "passages.lance")).versions()]
    assert rows["passages"] > 0 and len(versions) >= 2

    stop, reads, failures = threading.Event(), [], []
    reader = threading.Thread(target=_keep_reading, args=(indexed, stop, reads, failures))
    reader.start()
    try:
        while not reads:  # the reader is reading before the backup starts
            stop.wait(0.01)
        manifest = take_backup(indexed, tmp_path / "backup")
        during = len(reads)
        stop.wait(0.2)
    finally:
        stop.set()
        reader.join()
    assert failures == [] and len(reads) > during >= 1
    assert set(reads) == {(rows["passages"], rows["passages"])}
    assert manifest.tables == rows and manifest.lance_versions == {"passages.lance": versions}
    assert "dagster_home/history/runs.db" in manifest.files

    fresh = Stores(tmp_path / "restored", tmp_path / "restored" / "lancedb", tmp_path / "restored-home")
    restored = restore_backup(tmp_path / "backup", fresh)

    with catalogue_connection(fresh.catalogue, read_only=True) as con:
        assert table_rows(con) == rows
    assert [v["version"] for v in lance.dataset(str(fresh.lancedb / "passages.lance")).versions()] == versions
    [agreement] = restored.agreements
    assert agreement.collection == "tiny" and agreement.agree
    assert agreement.catalogue_passages == agreement.index_rows == rows["passages"]
    with (
        sqlite3.connect(indexed.dagster_home / "history" / "runs.db") as live,
        sqlite3.connect(fresh.dagster_home / "history" / "runs.db") as copy,
    ):
        query = "SELECT run_id, status FROM runs ORDER BY run_id"
        assert copy.execute(query).fetchall() == live.execute(query).fetchall() != []
    with pytest.raises(ConfigError, match="refusing to restore over"):
        restore_backup(tmp_path / "backup", fresh)
