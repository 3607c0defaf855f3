"""The `evidence_evaluation` table: one row per (strategy, question) of the reader-free evidence
evaluation, rewritten per collection in one transaction (a killed run leaves the previous rows)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import duckdb

from rag_assets.core.evaluation.evidence import QUALITY_METRICS, EvidenceRow
from rag_assets.core.store.transactions import present_columns, table_exists, transaction

TABLE = "evidence_evaluation"
SCHEMA = """
    collection VARCHAR NOT NULL, run_id VARCHAR NOT NULL, created_at TIMESTAMP NOT NULL,
    position INTEGER NOT NULL, strategy VARCHAR NOT NULL, router VARCHAR NOT NULL, filled BOOLEAN NOT NULL,
    qid VARCHAR NOT NULL, passage_hit DOUBLE, evidence_recall DOUBLE, section_hit DOUBLE,
    words INTEGER NOT NULL, seconds DOUBLE NOT NULL, page_hit DOUBLE"""
_COLUMNS = ("strategy", "router", "filled", "qid", *QUALITY_METRICS, "words", "seconds")


def store_evidence(
    con: duckdb.DuckDBPyConnection, collection: str, rows: Sequence[EvidenceRow], *, run_id: str, created_at: datetime
) -> None:
    """Replace the collection's rows by `rows` (kept in their order) atomically."""
    con.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} ({SCHEMA})")
    con.execute(f"ALTER TABLE {TABLE} ADD COLUMN IF NOT EXISTS page_hit DOUBLE")  # tables from before page hit
    values = [
        [collection, run_id, created_at, position, r.strategy, r.router, r.filled, r.qid]
        + [r.metrics.get(m) for m in QUALITY_METRICS]
        + [r.words, r.seconds]
        for position, r in enumerate(rows)
    ]
    with transaction(con):
        con.execute(f"DELETE FROM {TABLE} WHERE collection = ?", [collection])
        if values:
            names = ("collection", "run_id", "created_at", "position", *_COLUMNS)
            con.executemany(f"INSERT INTO {TABLE} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", values)


def load_evidence(con: duckdb.DuckDBPyConnection, collection: str) -> list[EvidenceRow]:
    """The collection's stored rows in the order they were measured ([] before the first run)."""
    if not table_exists(con, TABLE):
        return []
    present = present_columns(con, TABLE)
    columns = [c if c in present else f"NULL AS {c}" for c in _COLUMNS]  # page_hit: absent from older tables
    found = con.execute(
        f"SELECT {', '.join(columns)} FROM {TABLE} WHERE collection = ? ORDER BY position", [collection]
    ).fetchall()
    out = []
    for strategy, router, filled, qid, *rest in found:
        figures = dict(zip(QUALITY_METRICS, rest[: len(QUALITY_METRICS)]))
        words, seconds = rest[len(QUALITY_METRICS) :]
        metrics = {m: float(v) for m, v in figures.items() if v is not None}
        out.append(EvidenceRow(strategy, router, bool(filled), qid, metrics, int(words), float(seconds)))
    return out
