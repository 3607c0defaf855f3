"""Whole-collection operations on any catalogue table: the atomic per-collection replacement
every stage writes with, and the per-collection counts and frames the checks and reports read."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd
import pyarrow as pa

from rag_assets.core.corpus.sources import Rejection
from rag_assets.core.store.document_tables import rejections_table
from rag_assets.core.store.schemas import SCHEMA, table_columns
from rag_assets.core.store.transactions import ensure_schema, insert_arrow, table_exists, transaction


def replace_collection(
    con: duckdb.DuckDBPyConnection,
    collection: str,
    rows: dict[str, pa.Table],
    *,
    rejection_stage: str | None = None,
    rejections: Sequence[Rejection] = (),
) -> None:
    """Swap one collection's rows in several tables (and its rejections of one stage) atomically."""
    ensure_schema(con)
    with transaction(con):
        for table, data in rows.items():
            con.execute(f"DELETE FROM {table} WHERE collection = ?", [collection])
            if data.num_rows:
                insert_arrow(con, table, data)
        if rejection_stage is not None:
            con.execute(
                "DELETE FROM rejected_documents WHERE collection = ? AND stage = ?",
                [collection, rejection_stage],
            )
            if rejections:
                insert_arrow(con, "rejected_documents", rejections_table(rejections))


def count_rows(con: duckdb.DuckDBPyConnection, table: str, collection: str | None = None) -> int:
    """Rows of a catalogue table, of one collection when given (0 when the table does not exist)."""
    if table not in SCHEMA:
        raise ValueError(f"{table!r} is not a catalogue table")
    if not table_exists(con, table):
        return 0
    where, params = ("WHERE collection = ?", [collection]) if collection is not None else ("", [])
    return int(con.execute(f"SELECT count(*) FROM {table} {where}", params).fetchone()[0])


def collection_frame(
    con: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str], collection: str
) -> pd.DataFrame:
    """Some columns of one collection's rows of a catalogue table, as a DataFrame (for GX suites)."""
    known = {name for name, _, _ in table_columns(table)}
    unknown = [c for c in columns if c not in known]
    if unknown:
        raise ValueError(f"{table} has no column(s) {unknown}")
    if not table_exists(con, table):
        return pd.DataFrame(columns=list(columns))
    return con.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE collection = ?", [collection]).df()


def count_by(con: duckdb.DuckDBPyConnection, table: str, column: str, collection: str) -> dict[str, int]:
    """value -> rows of one collection's rows of `table`, grouped by `column`."""
    if column not in {name for name, _, _ in table_columns(table)}:
        raise ValueError(f"{table} has no column {column!r}")
    if not table_exists(con, table):
        return {}
    rows = con.execute(f"SELECT {column}, count(*) FROM {table} WHERE collection = ? GROUP BY 1", [collection])
    return dict(rows.fetchall())


# What `rag run` reports per collection: label -> (table, extra condition); all counts of one collection.
STAGE_COUNTS: dict[str, tuple[str, str]] = {
    "documents": ("source_documents", ""),
    "rejected documents": ("rejected_documents", ""),
    "tree nodes": ("document_nodes", ""),
    "content nodes": ("document_nodes", "kind = 'content'"),
    "passages": ("passages", ""),
    "questions": ("questions", ""),
    "synthetic questions": ("synthetic_questions", ""),
    "routing views": ("routing_subtrees", ""),
    "routing labels": ("routing_actions", ""),
    "trained routers": ("published_models", "kind IN ('encoder', 'llm') AND path IS NOT NULL"),
    "evaluation answers": ("answers", "source = 'evaluation'"),
}


def stage_counts(con: duckdb.DuckDBPyConnection, collection: str) -> dict[str, int | None]:
    """label -> rows of the collection at each stage (None: the stage's table does not exist yet)."""
    out: dict[str, int | None] = {}
    for label, (table, condition) in STAGE_COUNTS.items():
        if not table_exists(con, table):
            out[label] = None
            continue
        where = "collection = ?" + (f" AND {condition}" if condition else "")
        out[label] = int(con.execute(f"SELECT count(*) FROM {table} WHERE {where}", [collection]).fetchone()[0])
    return out
