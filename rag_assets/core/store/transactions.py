"""The catalogue's building blocks: does a table exist, create the tables, and the one
transaction every multi-statement write runs in (a killed run leaves the previous good version
readable: DuckDB rolls the open transaction back)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime

import duckdb
import pyarrow as pa

from rag_assets.core.store.schemas import ADDED_COLUMNS, CATALOGUE_VERSION, META_TABLE, SCHEMA


def present_columns(con: duckdb.DuckDBPyConnection, table: str) -> set[str]:
    """The columns a catalogue table has now (an older catalogue may lack columns added since,
    until its next write runs `ensure_schema`)."""
    return {d[0] for d in con.execute(f"SELECT * FROM {table} LIMIT 0").description}


def table_exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(
        con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = ? AND table_schema = current_schema()",
            [table],
        ).fetchone()[0]
    )


def ensure_schema(con: duckdb.DuckDBPyConnection, tables: Sequence[str] | None = None) -> None:
    """Create `tables` (default: all) and their added columns where missing. A new catalogue is
    stamped with the current schema version; an older one keeps its own until `rag run`, `rag
    serve` or `rag ask` upgrades it (store/upgrades.py), so it is never marked current unmigrated."""
    new_catalogue = not con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
    ).fetchone()[0]
    if new_catalogue:
        _stamp_version(con)
    for table in tables or SCHEMA:
        con.execute(f"CREATE TABLE IF NOT EXISTS {table} ({SCHEMA[table]})")
        for column in ADDED_COLUMNS.get(table, ()):
            con.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column}")


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN ... COMMIT around the block; any exception (or interruption) rolls it all back."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def insert_arrow(con: duckdb.DuckDBPyConnection, table: str, data: pa.Table) -> None:
    """Append Arrow rows to a catalogue table, matching columns by name."""
    con.register("_incoming", data)
    try:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _incoming")
    finally:
        con.unregister("_incoming")


def _stamp_version(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(f"CREATE TABLE IF NOT EXISTS {META_TABLE} ({SCHEMA[META_TABLE]})")
    con.execute(f"INSERT INTO {META_TABLE} VALUES (?, ?)", [CATALOGUE_VERSION, datetime.now(UTC).replace(tzinfo=None)])
