"""The `published_models` table: the trained pieces answering uses, as their steps last published
them (the encoder and LLM routers with the similarity thresholds, the passage reranker, the
namespace router, the reorder policy).

Each training step replaces its own kinds' rows for its collection in one transaction, also when
it trained nothing (a row without a folder, saying why), so the current rows are exactly what the
step's latest materialization produced. The `answers` asset, the router's validation and the query
service read them here: upstream values pass through this table, not through materialization
metadata read back by key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from rag_assets.core.store.transactions import ensure_schema, table_exists, transaction

TABLE = "published_models"
# the namespace router serves every collection of the index
ALL_COLLECTIONS = ""
# answer_policy: the collection's default answer form (model_id generated | extractive) and relevance
# floor, measured by the `answer_policy` asset
KINDS = ("encoder", "llm", "similarity", "reranker", "namespaces", "reorder_policy", "answer_policy")


@dataclass(frozen=True, slots=True)
class PublishedModel:
    """One published piece: its id and folder (None when its step trained none, `details` saying why)."""

    kind: str
    model_id: str | None = None
    path: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    run_id: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"published model kind must be one of {KINDS}, not {self.kind!r}")


def publish_models(
    con: duckdb.DuckDBPyConnection, collection: str, models: Sequence[PublishedModel], *, kinds: Sequence[str]
) -> None:
    """Replace `collection`'s rows of `kinds` by `models` (each of one of those kinds), atomically."""
    stray = [m.kind for m in models if m.kind not in kinds]
    if stray:
        raise ValueError(f"published models of kinds {stray} are not among the kinds replaced {list(kinds)}")
    ensure_schema(con, [TABLE])
    now = datetime.now(UTC).replace(tzinfo=None)
    with transaction(con):
        con.execute(f"DELETE FROM {TABLE} WHERE collection = ? AND list_contains(?, kind)", [collection, list(kinds)])
        for m in models:
            con.execute(
                f"INSERT INTO {TABLE} VALUES (?, ?, ?, ?, ?, ?, ?)",
                [collection, m.kind, m.model_id, m.path, json.dumps(dict(m.details), sort_keys=True), m.run_id, now],
            )


def published_models(con: duckdb.DuckDBPyConnection, collection: str) -> dict[str, PublishedModel]:
    """kind -> the piece currently published for `collection` (and the pieces over all collections).
    Read-only: the service reads it on a read-only connection, where no table may be created."""
    if not table_exists(con, TABLE):
        return {}
    rows = con.execute(
        f"SELECT kind, model_id, path, details, run_id FROM {TABLE} WHERE collection IN (?, ?) "
        "ORDER BY collection = ? DESC, published_at DESC",
        [collection, ALL_COLLECTIONS, collection],
    ).fetchall()
    found: dict[str, PublishedModel] = {}
    for kind, model_id, path, details, run_id in rows:
        if kind in KINDS:  # the collection's own row first, then the newest
            found.setdefault(kind, PublishedModel(kind, model_id, path, json.loads(details or "{}"), run_id))
    return found


def missing_piece_notes(con: duckdb.DuckDBPyConnection, collection: str) -> list[str]:
    """One line per piece answering `collection` would go without, and the command that makes it:
    what `rag serve`, `rag ask` and `rag run` say at start, before any question meets it. Read-only."""
    found = published_models(con, collection)
    notes = []
    views = table_exists(con, "routing_view_settings") and bool(
        con.execute("SELECT count(*) FROM routing_view_settings WHERE collection = ?", [collection]).fetchone()[0]
    )
    if not views or not any(kind in found for kind in ("similarity", "encoder", "llm")):
        notes.append(f"router_adapter was never materialized for {collection}: `rag run -c {collection}` trains it")
    if "answer_policy" not in found:
        notes.append(
            f"answer_policy was never materialized for {collection}: "
            "answers use a quote and no relevance floor until `rag run`"
        )
    for piece in found.values():
        if piece.path is not None and not Path(piece.path).exists():
            notes.append(
                f"the published {piece.kind} {piece.path} of {collection} is gone: "
                f"`rag run -c {collection}` publishes it again"
            )
    return notes
