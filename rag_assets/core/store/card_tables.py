"""The `document_cards` table: one card per document (core/corpus/document_cards.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

import duckdb
import pyarrow as pa

from rag_assets.core.corpus.document_cards import DocumentCard
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.store.transactions import present_columns, table_exists

_CARD_COLUMNS = [f.name for f in fields(DocumentCard)]
_TYPES = {"fiscal_year": pa.int32(), "quarter": pa.int32(), "from_sidecar": pa.list_(pa.string())}


def cards_table(collection: str, cards: Sequence[DocumentCard]) -> pa.Table:
    columns: dict[str, list] = {"collection": [collection] * len(cards)}
    for name in _CARD_COLUMNS:
        columns[name] = [list(getattr(c, name)) if name == "from_sidecar" else getattr(c, name) for c in cards]
    schema = pa.schema([(name, _TYPES.get(name, pa.string())) for name in columns])
    return pa.table(columns, schema=schema)


def load_cards(
    con: duckdb.DuckDBPyConnection, collections: Sequence[str], *, naming_only: bool = False
) -> list[DocumentCard]:
    """The cards of `collections`' documents, by doc id ([] where none was made); with
    `naming_only`, only those a question can name (an organisation or a product on them): every ask
    reads them, and a wiki of 100,000 pages has none to read."""
    if not collections or not table_exists(con, "document_cards"):
        return []
    naming = " AND (organisation <> '' OR product <> '')" if naming_only else ""
    rows = con.execute(
        f"SELECT {', '.join(_CARD_COLUMNS)} FROM document_cards WHERE collection IN (SELECT unnest(?)){naming} "
        "ORDER BY doc_id",
        [list(collections)],
    ).fetchall()
    return [DocumentCard(*row[:-1], from_sidecar=tuple(row[-1])) for row in rows]


def first_nodes(con: duckdb.DuckDBPyConnection, collection: str, limit: int) -> dict[str, list[TreeNode]]:
    """doc_id -> the first `limit` nodes of its tree (all a card is read from), in document order."""
    if not table_exists(con, "document_nodes"):
        return {}
    pages = "page_start, page_end" if "page_start" in present_columns(con, "document_nodes") else "0, 0"
    rows = con.execute(
        "SELECT doc_id, node_id, parent_id, kind, block, depth, text, heading_path, span_start, span_end, "
        f"{pages} FROM document_nodes WHERE collection = ? AND node_id < ? ORDER BY doc_id, node_id",
        [collection, limit],
    ).fetchall()
    out: dict[str, list[TreeNode]] = {}
    for doc_id, *values in rows:
        out.setdefault(doc_id, []).append(TreeNode(*values[:6], tuple(values[6]), *values[7:]))
    return out
