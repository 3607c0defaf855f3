"""Bringing a backup back: only a whole one (its manifest's hashes verified first), only into an
empty place unless told to replace what is there, and verified after: the catalogue's row counts
and the LanceDB versions as the manifest recorded them, and each collection's two stores agreeing
(the `index_matches_catalogue` check's rule: the index rows at the published version are exactly
the catalogue's passages, and the publication records the same passages)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import lance
import pyarrow.compute as pc

from rag_assets.core.backup.copies import MODEL_FOLDERS, copy_tree, dagster_databases, lance_versions
from rag_assets.core.backup.manifest import Manifest, verified_manifest
from rag_assets.core.backup.snapshot import CATALOGUE_FILE, DAGSTER, DATA, LANCEDB, Stores
from rag_assets.core.errors import ConfigError
from rag_assets.core.store.backup import WAL_SUFFIX, published_collections, relocate_paths, table_rows
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.publication import StoreAgreement, catalogue_passages, compare_stores, load_publication


@dataclass(frozen=True, slots=True)
class Restored:
    manifest: Manifest
    relocated: int  # published folder paths moved to the new data dir
    agreements: list[StoreAgreement]  # one per collection with a published index


def occupied(stores: Stores) -> list[Path]:
    """What is already in the places a restore writes to (empty: nothing)."""
    found = [p for p in (stores.data_dir, stores.lancedb) if p.is_dir() and any(p.iterdir())]
    return found + dagster_databases(stores.dagster_home, stores.data_dir)


def restore_backup(backup: Path, stores: Stores, *, force: bool = False) -> Restored:
    """Restore the backup in `backup` into `stores`; ConfigError if it is not whole, if the
    places are not empty (without `force`) or if the restored stores do not check out."""
    manifest = verified_manifest(backup)
    taken = occupied(stores)
    if taken and not force:
        raise ConfigError(
            f"refusing to restore over {taken[0]}: it is not empty; restore into an empty data dir "
            "or pass --force to replace the catalogue, index, models and Dagster storage there"
        )
    if force:
        _clear(stores)
    _copy_back(backup, stores)
    relocated = 0
    if manifest.data_dir != str(stores.data_dir.resolve()):
        with catalogue_connection(stores.catalogue, read_only=False) as con:
            relocated = relocate_paths(con, manifest.data_dir, str(stores.data_dir.resolve()))
    agreements = verify_restored(manifest, stores)
    return Restored(manifest, relocated, agreements)


def _clear(stores: Stores) -> None:
    for path in (stores.catalogue, stores.catalogue.with_name(CATALOGUE_FILE + WAL_SUFFIX)):
        path.unlink(missing_ok=True)
    for folder in (stores.lancedb, *(stores.data_dir / name for name in MODEL_FOLDERS)):
        shutil.rmtree(folder, ignore_errors=True)
    for database in dagster_databases(stores.dagster_home, stores.data_dir):
        database.unlink()


def _copy_back(backup: Path, stores: Stores) -> None:
    stores.data_dir.mkdir(parents=True, exist_ok=True)
    copy_tree(backup / DATA, stores.data_dir)
    copy_tree(backup / LANCEDB, stores.lancedb)
    copy_tree(backup / DAGSTER, stores.dagster_home)


def verify_restored(manifest: Manifest, stores: Stores) -> list[StoreAgreement]:
    """The restored stores checked against the manifest and each other; ConfigError naming
    every difference."""
    problems = []
    with catalogue_connection(stores.catalogue, read_only=True) as con:
        rows = table_rows(con)
        publications = [load_publication(con, c) for c in published_collections(con)]
        expected = {p.collection: catalogue_passages(con, p.collection) for p in publications if p}
    if rows != manifest.tables:
        problems.append(f"catalogue rows {rows} differ from the backup's {manifest.tables}")
    for name, versions in manifest.lance_versions.items():
        restored = lance_versions(stores.lancedb / name)
        if restored != versions:
            problems.append(f"LanceDB table {name} has versions {restored}, the backup {versions}")
    agreements = []
    for publication in filter(None, publications):
        pairs = index_pairs(stores.lancedb, publication.table_name, publication.version, publication.collection)
        agreement = compare_stores(publication.collection, expected[publication.collection], pairs, publication)
        agreements.append(agreement)
        if not agreement.agree:
            problems.append(f"{publication.collection}: the catalogue's passages and the LanceDB index disagree")
    if problems:
        raise ConfigError("the restored stores do not check out: " + "; ".join(problems))
    return agreements


def index_pairs(uri: Path, table: str, version: int, collection: str) -> list[tuple[str, str]]:
    """(passage id, content hash) of `collection`'s rows of LanceDB `table` at `version`, sorted."""
    rows = lance.dataset(str(uri / f"{table}.lance"), version=version).to_table(
        columns=["collection", "passage_id", "content_hash"]
    )
    rows = rows.filter(pc.equal(rows["collection"], collection))
    return sorted(zip(rows["passage_id"].to_pylist(), rows["content_hash"].to_pylist()))
