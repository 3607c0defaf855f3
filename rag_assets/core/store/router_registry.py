"""The `router_adapters` registry: every trained router (encoder or LLM) published, by collection."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from rag_assets.core.routing.folders import router_folder_kind
from rag_assets.core.store.transactions import ensure_schema, table_exists


@dataclass(frozen=True, slots=True)
class AdapterRecord:
    collection: str
    adapter_id: str
    path: str
    base_model: str
    created_at: datetime


def record_adapter(
    con: duckdb.DuckDBPyConnection, collection: str, adapter_id: str, path: str, base_model: str
) -> AdapterRecord:
    """Append a trained adapter to the `router_adapters` history (newest row = the current one)."""
    ensure_schema(con, ["router_adapters"])
    created = datetime.now(UTC).replace(tzinfo=None)
    con.execute(
        "INSERT INTO router_adapters VALUES (?, ?, ?, ?, ?)", [collection, adapter_id, path, base_model, created]
    )
    return AdapterRecord(collection, adapter_id, path, base_model, created)


def latest_adapter(con: duckdb.DuckDBPyConnection, collection: str) -> AdapterRecord | None:
    """The newest adapter recorded for `collection`, or None (never trained)."""
    ensure_schema(con, ["router_adapters"])
    row = con.execute(
        "SELECT collection, adapter_id, path, base_model, created_at FROM router_adapters "
        "WHERE collection = ? ORDER BY created_at DESC, adapter_id LIMIT 1",
        [collection],
    ).fetchone()
    return AdapterRecord(*row) if row else None


def adapter_record(con: duckdb.DuckDBPyConnection, collection: str, adapter_id: str) -> AdapterRecord | None:
    """The `router_adapters` row of one published router, or None."""
    ensure_schema(con, ["router_adapters"])
    row = con.execute(
        "SELECT collection, adapter_id, path, base_model, created_at FROM router_adapters "
        "WHERE collection = ? AND adapter_id = ? ORDER BY created_at DESC LIMIT 1",
        [collection, adapter_id],
    ).fetchone()
    return AdapterRecord(*row) if row else None


def latest_router(con: duckdb.DuckDBPyConnection, collection: str, kind: str) -> AdapterRecord | None:
    """The newest router of `kind` recorded for `collection` whose folder is still complete on disk.
    Read-only: `rag ask` calls it on a read-only connection, where no table may be created."""
    if not table_exists(con, "router_adapters"):
        return None
    rows = con.execute(
        "SELECT collection, adapter_id, path, base_model, created_at FROM router_adapters "
        "WHERE collection = ? ORDER BY created_at DESC, adapter_id",
        [collection],
    ).fetchall()
    return next((AdapterRecord(*row) for row in rows if router_folder_kind(Path(row[2])) == kind), None)
