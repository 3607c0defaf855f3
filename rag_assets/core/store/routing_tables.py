"""The routing stage's tables: `routing_subtrees` (the views), `routing_actions` (their teacher
labels) and `router_metrics` (routing quality per router model)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import duckdb
import pyarrow as pa

from rag_assets.core.store.schemas import (
    ROUTER_COUNT_COLUMNS,
    ROUTER_INTERVAL_COLUMNS,
    ROUTER_METRIC_COLUMNS,
    table_columns,
)
from rag_assets.core.store.transactions import table_exists


def load_router_metrics(con: duckdb.DuckDBPyConnection, collection: str) -> dict[str, dict[str, float]]:
    """model -> {"samples": n, "questions": q, "dev_test": 0 or 1, <metric>: value, <metric>_low /
    _high: its interval, <count>: what the rates rest on (answer_views, expand_lines, ...)} of one
    collection (models in descending name order). Values a catalogue written before they were
    recorded lacks (no column, or NULL) are left out: unknown, not 0."""
    if not table_exists(con, "router_metrics"):
        return {}
    present = {
        name
        for (name,) in con.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'router_metrics' AND table_schema = current_schema()"
        ).fetchall()
    }
    wanted = (
        "samples",
        "questions",
        "dev_test",
        *ROUTER_METRIC_COLUMNS,
        *ROUTER_INTERVAL_COLUMNS,
        *ROUTER_COUNT_COLUMNS,
    )
    columns = [c for c in wanted if c in present]
    rows = con.execute(
        f"SELECT model, {', '.join(columns)} FROM router_metrics WHERE collection = ? ORDER BY model DESC",
        [collection],
    ).fetchall()
    return {
        model: {c: int(v) if c == "dev_test" else v for c, v in zip(columns, values) if v is not None}
        for model, *values in rows
    }


def teacher_failures(con: duckdb.DuckDBPyConnection, collection: str) -> list[tuple[str, int, int]]:
    """(teacher, labels, failed labels) of one collection's routing actions."""
    if not table_exists(con, "routing_actions"):
        return []
    return con.execute(
        "SELECT teacher, count(*), count(*) FILTER (WHERE kind = 'failed') FROM routing_actions "
        "WHERE collection = ? GROUP BY 1 ORDER BY 1",
        [collection],
    ).fetchall()


def _check_subtree_columns(columns: Sequence[str]) -> None:
    known = {name for name, _, _ in table_columns("routing_subtrees")}
    if not set(columns) <= known:
        raise ValueError(f"routing_subtrees has no column(s) {sorted(set(columns) - known)}")


def load_subtree_rows(con: duckdb.DuckDBPyConnection, collection: str, columns: Sequence[str]) -> list[tuple]:
    """`columns` of the collection's routing views, by subtree id."""
    _check_subtree_columns(columns)
    return con.execute(
        f"SELECT {', '.join(columns)} FROM routing_subtrees WHERE collection = ? ORDER BY subtree_id", [collection]
    ).fetchall()


def load_labelled_rows(
    con: duckdb.DuckDBPyConnection,
    collection: str,
    sample_columns: Sequence[str],
    action_columns: Sequence[str],
    *,
    fold: str | None = None,
    limit: int | None = None,
) -> list[tuple]:
    """(*`sample_columns` of routing_subtrees, *`action_columns` of routing_actions) of the
    collection's usable labelled views (teacher failures are never trained on nor scored), of
    one fold when given, by subtree id (the first `limit` when given)."""
    _check_subtree_columns(sample_columns)
    known = {name for name, _, _ in table_columns("routing_actions")}
    if not set(action_columns) <= known:
        raise ValueError(f"routing_actions has no column(s) {sorted(set(action_columns) - known)}")
    clauses, params = ["a.collection = ?", "a.kind <> 'failed'"], [collection]
    if fold is not None:
        clauses.append("a.fold = ?")
        params.append(fold)
    columns = [f"s.{c}" for c in sample_columns] + [f"a.{c}" for c in action_columns]
    sql = (
        f"SELECT {', '.join(columns)} FROM routing_actions a JOIN routing_subtrees s USING (collection, subtree_id) "
        f"WHERE {' AND '.join(clauses)} ORDER BY s.subtree_id"
    )
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return con.execute(sql, params).fetchall()


def labelled_collections(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The collections with labelled routing views (rows in routing_actions), sorted."""
    if not table_exists(con, "routing_actions"):
        return []
    return [r[0] for r in con.execute("SELECT DISTINCT collection FROM routing_actions ORDER BY 1").fetchall()]


def load_usable_targets(con: duckdb.DuckDBPyConnection, collection: str, sample_columns: Sequence[str]) -> list[tuple]:
    """(*`sample_columns` of routing_subtrees, teacher target) of the collection's usable routing
    actions (kind not 'failed': failed teacher outputs are never trained on), by subtree id."""
    _check_subtree_columns(sample_columns)
    if not (table_exists(con, "routing_actions") and table_exists(con, "routing_subtrees")):
        return []
    return load_labelled_rows(con, collection, sample_columns, ["target"])


VIEW_KNOBS = ("top_docs", "passages_per_query", "expansion_views", "token_budget")


def view_settings_table(collection: str, split: str, knobs: Mapping[str, int]) -> pa.Table:
    """The `routing_view_settings` row of one collection's views (written with them, atomically)."""
    return pa.table(
        {"collection": [collection], "split": [split], **{k: pa.array([int(knobs[k])], pa.int32()) for k in VIEW_KNOBS}}
    )


def load_view_settings(con: duckdb.DuckDBPyConnection, collection: str) -> tuple[str, dict[str, int]] | None:
    """(split, knobs) routing_subtrees last built the collection's views with; None before it ran."""
    if not table_exists(con, "routing_view_settings"):
        return None
    row = con.execute(
        f"SELECT split, {', '.join(VIEW_KNOBS)} FROM routing_view_settings WHERE collection = ?", [collection]
    ).fetchone()
    return (row[0], dict(zip(VIEW_KNOBS, row[1:]))) if row else None
