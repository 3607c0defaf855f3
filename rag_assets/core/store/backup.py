"""The catalogue's part of a backup (rag_assets/core/backup): a consistent copy of the file while
readers go on, its tables' row counts, and the published folders' paths moved with a restore.

The copy is the file itself, taken under a read-only connection: DuckDB lets any number of
read-only connections share the file and no writer in while one is open, so nothing changes
between the first byte copied and the last (a write waits, visibly and bounded, as for any
reader); a write-ahead log a crashed writer left is copied with it. Chosen over `EXPORT
DATABASE` (a folder of CSV or Parquet files to re-import, in a second layout to keep in step
with the code) and `ATTACH ... COPY FROM DATABASE` (a rebuilt file, not the catalogue as it was):
the copy is the catalogue byte for byte, and a restore is a file copy.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import duckdb

from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.transactions import table_exists, transaction

WAL_SUFFIX = ".wal"
# the catalogue columns that hold a folder under the data dir (moved when a restore moves them)
PATH_COLUMNS = (("published_models", "path"), ("router_adapters", "path"))


def copy_catalogue(path: Path, target: Path, *, on_wait: Callable[[str], None] | None = None) -> list[Path]:
    """Copy the catalogue file (and its write-ahead log, if any) to `target` as one consistent
    state; returns the files written."""
    written = []
    with catalogue_connection(path, read_only=True, on_wait=on_wait):
        for source, copy in ((path, target), (_wal(path), _wal(target))):
            if source.exists():
                shutil.copy2(source, copy)
                written.append(copy)
    return written


def _wal(path: Path) -> Path:
    return path.with_name(path.name + WAL_SUFFIX)


def table_rows(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Each catalogue table's row count, by name."""
    tables = con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1"
    ).fetchall()
    return {name: con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for (name,) in tables}


def relocate_paths(con: duckdb.DuckDBPyConnection, old_root: str, new_root: str) -> int:
    """Published folders under `old_root` now under `new_root` (a restore into another data
    dir); returns the rows changed."""
    changed = 0
    with transaction(con):
        for table, column in PATH_COLUMNS:
            if not table_exists(con, table):
                continue
            prefix = old_root.rstrip("/") + "/"
            changed += con.execute(f"SELECT count(*) FROM {table} WHERE starts_with({column}, ?)", [prefix]).fetchone()[
                0
            ]
            con.execute(
                f"UPDATE {table} SET {column} = ? || substr({column}, ?) WHERE starts_with({column}, ?)",
                [new_root.rstrip("/") + "/", len(prefix) + 1, prefix],
            )
    return changed


def published_collections(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The collections with a published index (store/publication.py), by name."""
    if not table_exists(con, "index_publications"):
        return []
    return [r[0] for r in con.execute("SELECT DISTINCT collection FROM index_publications ORDER BY 1").fetchall()]
