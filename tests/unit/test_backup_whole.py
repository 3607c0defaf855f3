"""A backup is all or nothing: a backup killed midway leaves nothing `rag restore` accepts (it is
written under a temporary name and renamed once its manifest is in it), a file changed since is
caught by its hash, and a restore never writes over a data dir that is not empty unless forced."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from rag_assets.core.backup import copies, snapshot
from rag_assets.core.backup.restore import restore_backup
from rag_assets.core.backup.snapshot import Stores, take_backup
from rag_assets.core.errors import ConfigError
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.published_models import PublishedModel, publish_models


@pytest.fixture
def stores(tmp_path: Path) -> Stores:
    """A small deployment: a catalogue, a LanceDB table with two versions, a published model
    folder and a Dagster sqlite database."""
    live = Stores(tmp_path / "data", tmp_path / "data" / "lancedb", tmp_path / "home")
    (live.data_dir / "rerankers" / "r1").mkdir(parents=True)
    (live.data_dir / "rerankers" / "r1" / "model.bin").write_bytes(b"weights" * 100)
    with catalogue_connection(live.catalogue, read_only=False) as con:
        folder = str(live.data_dir / "rerankers" / "r1")
        publish_models(con, "c", [PublishedModel("reranker", "r1", folder)], kinds=["reranker"])
    rows = pa.table({"collection": ["c", "c"], "passage_id": ["p1", "p2"], "content_hash": ["h1", "h2"]})
    lance.write_dataset(rows, str(live.lancedb / "passages.lance"))
    lance.write_dataset(rows, str(live.lancedb / "passages.lance"), mode="append")
    live.dagster_home.mkdir()
    with sqlite3.connect(live.dagster_home / "runs.db") as db:
        db.execute("CREATE TABLE runs (run_id TEXT)")
        db.execute("INSERT INTO runs VALUES ('r-1')")
    return live


def _fresh(tmp_path: Path) -> Stores:
    return Stores(tmp_path / "new" / "data", tmp_path / "new" / "data" / "lancedb", tmp_path / "new" / "home")


def test_a_backup_restores_whole_into_a_fresh_place(stores: Stores, tmp_path: Path) -> None:
    manifest = take_backup(stores, tmp_path / "backup")
    assert manifest.lance_versions == {"passages.lance": [1, 2]} and manifest.tables["published_models"] == 1
    fresh = _fresh(tmp_path)
    restored = restore_backup(tmp_path / "backup", fresh)
    assert restored.relocated == 1 and restored.agreements == []  # no index publication here
    with catalogue_connection(fresh.catalogue, read_only=True) as con:
        [(path,)] = con.execute("SELECT path FROM published_models").fetchall()
    assert path == str(fresh.data_dir.resolve() / "rerankers" / "r1")
    assert (Path(path) / "model.bin").read_bytes() == b"weights" * 100
    with sqlite3.connect(fresh.dagster_home / "runs.db") as db:
        assert db.execute("SELECT run_id FROM runs").fetchall() == [("r-1",)]


def test_restore_refuses_a_place_that_is_not_empty(stores: Stores, tmp_path: Path) -> None:
    take_backup(stores, tmp_path / "backup")
    fresh = _fresh(tmp_path)
    fresh.data_dir.mkdir(parents=True)
    (fresh.data_dir / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match=r"refusing to restore over .*not empty.*--force"):
        restore_backup(tmp_path / "backup", fresh)
    assert not fresh.catalogue.exists()
    with pytest.raises(ConfigError, match="refusing to restore over"):
        restore_backup(tmp_path / "backup", stores)  # the live deployment itself
    restore_backup(tmp_path / "backup", fresh, force=True)
    assert fresh.catalogue.exists()


def test_a_backup_killed_midway_leaves_nothing_restore_accepts(
    stores: Stores, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copied = []
    real_copy = copies.shutil.copy2

    def dies_on_the_third_file(source, target, **kwargs):
        if len(copied) == 2:
            raise KeyboardInterrupt  # as a kill would stop it: mid-copy of the LanceDB table
        copied.append(source)
        return real_copy(source, target, **kwargs)

    monkeypatch.setattr(copies.shutil, "copy2", dies_on_the_third_file)
    monkeypatch.setattr(snapshot.shutil, "rmtree", lambda *a, **k: None)  # a hard kill cleans nothing up
    with pytest.raises(KeyboardInterrupt):
        take_backup(stores, tmp_path / "backup")
    monkeypatch.undo()
    assert not (tmp_path / "backup").exists()
    [partial] = tmp_path.glob(".backup.partial-*")
    for folder in (tmp_path / "backup", partial):
        with pytest.raises(ConfigError, match=r"no backup at|no complete backup"):
            restore_backup(folder, _fresh(tmp_path))
    assert not _fresh(tmp_path).data_dir.exists()  # nothing was written


def test_a_file_changed_since_the_backup_fails_its_hash(stores: Stores, tmp_path: Path) -> None:
    take_backup(stores, tmp_path / "backup")
    model = tmp_path / "backup" / "data" / "rerankers" / "r1" / "model.bin"
    model.write_bytes(b"weights" * 99 + b"WEIGHTS")  # same size, other bytes
    with pytest.raises(ConfigError, match=r"has data/rerankers/r1/model.bin changed since it was taken"):
        restore_backup(tmp_path / "backup", _fresh(tmp_path))
    manifest = json.loads((tmp_path / "backup" / "manifest.json").read_text())
    assert manifest["files"]["data/catalogue.duckdb"]["bytes"] > 0
