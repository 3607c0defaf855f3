"""The index stage's catalogue table: `passages` (their vectors live in LanceDB)."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pyarrow as pa

from rag_assets.core.index.passages import Passage, passage_columns
from rag_assets.core.store.schemas import PASSAGE_ARROW_SCHEMA
from rag_assets.core.store.transactions import table_exists


def passages_table(collection: str, passages: Sequence[Passage]) -> pa.Table:
    return pa.table(passage_columns(passages, collection), schema=PASSAGE_ARROW_SCHEMA)


def load_passages(con: duckdb.DuckDBPyConnection, collection: str | None = None) -> list[Passage]:
    where, params = ("WHERE collection = ?", [collection]) if collection else ("", [])
    rows = con.execute(
        "SELECT passage_id, doc_id, node_ids, span_starts, span_ends, heading_path, text, word_count, "
        f"content_hash FROM passages {where} ORDER BY doc_id, passage_id",
        params,
    ).fetchall()
    return [
        Passage(
            passage_id=r[0],
            doc_id=r[1],
            node_ids=tuple(r[2]),
            spans=tuple(zip(r[3], r[4])),
            heading_path=tuple(r[5]),
            text=r[6],
            word_count=r[7],
            content_hash=r[8],
        )
        for r in rows
    ]


def passage_hashes(con: duckdb.DuckDBPyConnection, collection: str) -> list[tuple[str, str]]:
    """(passage id, content hash) of the collection's catalogue passages, by passage id."""
    if not table_exists(con, "passages"):
        return []
    rows = con.execute(
        "SELECT passage_id, content_hash FROM passages WHERE collection = ? ORDER BY passage_id", [collection]
    ).fetchall()
    return [(r[0], r[1]) for r in rows]
