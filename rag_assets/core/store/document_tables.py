"""The corpus stage's tables: `source_documents` and `rejected_documents`."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pyarrow as pa

from rag_assets.core.corpus.sources import Rejection, SourceDocument
from rag_assets.core.store.transactions import ensure_schema, present_columns, table_exists


def documents_table(docs: Sequence[SourceDocument]) -> pa.Table:
    fields = ("collection", "doc_id", "uri", "format", "title", "content_hash", "size_bytes", "text", "reader_version")
    return pa.table({f: [getattr(d, f) for d in docs] for f in fields})


def rejections_table(rejections: Sequence[Rejection]) -> pa.Table:
    fields = ("collection", "uri", "stage", "reason")
    return pa.table({f: [getattr(r, f) for r in rejections] for f in fields})


def load_documents(con: duckdb.DuckDBPyConnection, collection: str | None = None) -> list[SourceDocument]:
    where, params = ("WHERE collection = ?", [collection]) if collection else ("", [])
    # a catalogue written before reader versions has none until its next write
    columns = present_columns(con, "source_documents")
    version = "reader_version" if "reader_version" in columns else "''"
    rows = con.execute(
        f"SELECT doc_id, collection, uri, format, title, content_hash, size_bytes, text, {version} "
        f"FROM source_documents {where} ORDER BY collection, doc_id",
        params,
    ).fetchall()
    return [SourceDocument(*row) for row in rows]


def unaccounted_documents(con: duckdb.DuckDBPyConnection, collection: str) -> list[tuple[str, str]]:
    """(doc_id, uri) of the collection's source documents with neither a tree nor a parse rejection."""
    ensure_schema(con, ["source_documents", "document_texts", "rejected_documents"])
    return con.execute(
        """SELECT s.doc_id, s.uri FROM source_documents s
           WHERE s.collection = ?
             AND NOT EXISTS (SELECT 1 FROM document_texts t WHERE t.collection = s.collection AND t.doc_id = s.doc_id)
             AND NOT EXISTS (SELECT 1 FROM rejected_documents r
                             WHERE r.collection = s.collection AND r.uri = s.uri AND r.stage = 'parse')
           ORDER BY 1""",
        [collection],
    ).fetchall()


def rows_by_doc_id(
    con: duckdb.DuckDBPyConnection, table: str, columns: str, collection: str, doc_ids: Sequence[str]
) -> list[tuple]:
    """(doc_id, *columns) of the given documents' rows of a per-document table."""
    wanted = sorted(set(doc_ids))
    if not wanted or not table_exists(con, table):
        return []
    return con.execute(
        f"SELECT doc_id, {columns} FROM {table} WHERE collection = ? AND doc_id IN (SELECT unnest(?))",
        [collection, wanted],
    ).fetchall()


def document_content_hashes(con: duckdb.DuckDBPyConnection, collection: str, doc_ids: Sequence[str]) -> dict[str, str]:
    """doc_id -> content hash of its current text: the parsed text's (document_texts) where there
    is one, else the source document's."""
    out = {doc: h for doc, h in rows_by_doc_id(con, "source_documents", "content_hash", collection, doc_ids)}
    out.update({doc: h for doc, h in rows_by_doc_id(con, "document_texts", "content_hash", collection, doc_ids)})
    return out


def document_sources(
    con: duckdb.DuckDBPyConnection, collection: str, doc_ids: Sequence[str]
) -> dict[str, tuple[str, str]]:
    """doc_id -> (title, uri) of the source documents still ingested."""
    return {
        doc: (title, uri)
        for doc, title, uri in rows_by_doc_id(con, "source_documents", "title, uri", collection, doc_ids)
    }


def rejected_doc_ids(con: duckdb.DuckDBPyConnection, collection: str, stage: str) -> set[str]:
    """The collection's source documents rejected at `stage` (matched by their uri)."""
    ensure_schema(con, ["source_documents", "rejected_documents"])
    rows = con.execute(
        """SELECT s.doc_id FROM source_documents s JOIN rejected_documents r
             ON r.collection = s.collection AND r.uri = s.uri AND r.stage = ?
           WHERE s.collection = ?""",
        [stage, collection],
    ).fetchall()
    return {row[0] for row in rows}


def _document_titles(con: duckdb.DuckDBPyConnection, collections: Sequence[str] | None) -> list[tuple[str, str]]:
    """(doc id, title) of every document stored for `collections` (None: all), by doc id."""
    where, params = (
        ("WHERE collection IN (" + ", ".join("?" * len(collections)) + ")", list(collections))
        if collections
        else ("", [])
    )
    return con.execute(f"SELECT doc_id, title FROM source_documents {where} ORDER BY doc_id", params).fetchall()


def collection_doc_ids(con: duckdb.DuckDBPyConnection, collections: Sequence[str]) -> list[str]:
    """The doc ids stored for `collections`, in order."""
    return [doc_id for doc_id, _ in _document_titles(con, collections)] if collections else []


def documents_named(con: duckdb.DuckDBPyConnection, collections: Sequence[str] | None, name: str) -> list[str]:
    """doc ids of the documents `name` names in `collections` (None: all): its doc id, its file
    name with or without extension, or its title (case aside)."""
    rows = _document_titles(con, collections)
    wanted = name.strip().casefold()
    found = []
    for doc_id, title in rows:
        tail = doc_id.rsplit("/", 1)[-1]
        if wanted in {n.casefold() for n in (doc_id, tail, tail.rsplit(".", 1)[0], title)}:
            found.append(doc_id)
    return found
