"""Taking a backup while everything runs: the catalogue first (its publications name the index
versions in use), then the LanceDB tables (their versions up to now: at least those the catalogue
names), the published model folders and the Dagster instance's sqlite databases. The backup is
written to `.NAME.partial` beside its destination and renamed to NAME only once its manifest,
with every file's hash, is written: a backup killed midway is never one `restore` accepts."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rag_assets.core.backup.copies import (
    DAGSTER_FILES,
    MODEL_FOLDERS,
    copy_lance_table,
    copy_sqlite,
    copy_tree,
    dagster_databases,
    lance_tables,
    lance_versions,
)
from rag_assets.core.backup.manifest import Manifest, hashed_files
from rag_assets.core.errors import ConfigError
from rag_assets.core.store.backup import copy_catalogue, table_rows
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.upgrades import catalogue_version

CATALOGUE_FILE = "catalogue.duckdb"
# the backup's own layout: where each store's copy goes
DATA = "data"
LANCEDB = "lancedb"
DAGSTER = "dagster_home"


@dataclass(frozen=True, slots=True)
class Stores:
    """Where a deployment keeps its state (core/settings.py decides)."""

    data_dir: Path
    lancedb: Path
    dagster_home: Path

    @property
    def catalogue(self) -> Path:
        return self.data_dir / CATALOGUE_FILE


def take_backup(stores: Stores, destination: Path, *, on_wait: Callable[[str], None] | None = None) -> Manifest:
    """Back `stores` up into the new folder `destination`; its manifest."""
    if destination.exists():
        raise ConfigError(f"{destination} exists already: back up into a new folder")
    if not stores.catalogue.is_file():
        raise ConfigError(f"no catalogue at {stores.catalogue}: nothing to back up")
    partial = destination.with_name(f".{destination.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        manifest = _write(stores, partial, on_wait)
        os.replace(partial, destination)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return manifest


def _write(stores: Stores, folder: Path, on_wait: Callable[[str], None] | None) -> Manifest:
    (folder / DATA).mkdir(parents=True)
    copy_catalogue(stores.catalogue, folder / DATA / CATALOGUE_FILE, on_wait=on_wait)
    with catalogue_connection(folder / DATA / CATALOGUE_FILE, read_only=True) as con:
        tables, version = table_rows(con), catalogue_version(con)
    versions = {}
    for table in lance_tables(stores.lancedb):
        copy_lance_table(table, folder / LANCEDB / table.name)
        versions[table.name] = lance_versions(folder / LANCEDB / table.name)
    for name in MODEL_FOLDERS:
        copy_tree(stores.data_dir / name, folder / DATA / name)
    for database in dagster_databases(stores.dagster_home, stores.data_dir):
        copy_sqlite(database, folder / DAGSTER / database.relative_to(stores.dagster_home.resolve()))
    for name in DAGSTER_FILES:
        if (stores.dagster_home / name).is_file():
            (folder / DAGSTER).mkdir(exist_ok=True)
            shutil.copy2(stores.dagster_home / name, folder / DAGSTER / name)
    manifest = Manifest(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        catalogue_version=version,
        data_dir=str(stores.data_dir.resolve()),
        tables=tables,
        lance_versions=versions,
        files=hashed_files(folder),
    )
    manifest.write(folder)
    return manifest
