"""The structure stage's tables: `document_nodes` (the trees) and `document_texts` (their texts)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property

import duckdb
import pyarrow as pa

from rag_assets.core.corpus.sources import SourceDocument
from rag_assets.core.corpus.tree import DocumentTree, TreeNode, page_label
from rag_assets.core.store.document_tables import rows_by_doc_id
from rag_assets.core.store.schemas import NODE_ARROW_SCHEMA
from rag_assets.core.store.transactions import present_columns, table_exists


def nodes_table(trees: Sequence[tuple[SourceDocument, DocumentTree]]) -> pa.Table:
    columns: dict[str, list] = {name: [] for name in NODE_ARROW_SCHEMA.names}
    for doc, tree in trees:
        for n in tree.nodes:
            columns["collection"].append(doc.collection)
            columns["doc_id"].append(doc.doc_id)
            columns["node_id"].append(n.node_id)
            columns["parent_id"].append(n.parent_id)
            columns["kind"].append(n.kind)
            columns["block"].append(n.block)
            columns["depth"].append(n.depth)
            columns["text"].append(n.text)
            columns["heading_path"].append(list(n.heading_path))
            columns["span_start"].append(n.span_start)
            columns["span_end"].append(n.span_end)
            columns["page_start"].append(n.page_start)
            columns["page_end"].append(n.page_end)
    return pa.table(columns, schema=NODE_ARROW_SCHEMA)


def texts_table(trees: Sequence[tuple[SourceDocument, DocumentTree]]) -> pa.Table:
    return pa.table(
        {
            "collection": [d.collection for d, _ in trees],
            "doc_id": [d.doc_id for d, _ in trees],
            "content_hash": [d.content_hash for d, _ in trees],
            "text": [t.text for _, t in trees],
            "reader_version": [d.reader_version for d, _ in trees],
        }
    )


def load_trees(
    con: duckdb.DuckDBPyConnection, collection: str | None = None, doc_ids: Sequence[str] | None = None
) -> dict[str, tuple[list[TreeNode], str]]:
    """doc_id -> (nodes in document order, normalised text) read back from the catalogue."""
    clauses, params = [], []
    if collection:
        clauses.append("n.collection = ?")
        params.append(collection)
    if doc_ids is not None:
        clauses.append("n.doc_id IN (SELECT unnest(?))")
        params.append(list(doc_ids))
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    # a catalogue written before nodes had pages has no page columns until its next write
    columns = present_columns(con, "document_nodes")
    pages = "n.page_start, n.page_end" if "page_start" in columns else "0, 0"
    rows = con.execute(
        "SELECT n.doc_id, n.node_id, n.parent_id, n.kind, n.block, n.depth, n.text, n.heading_path, "
        f"n.span_start, n.span_end, {pages} FROM document_nodes n "
        f"{where} ORDER BY n.doc_id, n.node_id",
        params,
    ).fetchall()
    text_clauses = [c.replace("n.", "") for c in clauses]  # the same filter on document_texts
    texts = dict(
        con.execute(
            "SELECT doc_id, text FROM document_texts" + (f" WHERE {' AND '.join(text_clauses)}" if clauses else ""),
            params,
        ).fetchall()
    )
    out: dict[str, tuple[list[TreeNode], str]] = {}
    for doc_id, *fields in rows:
        node = TreeNode(*fields[:6], tuple(fields[6]), *fields[7:])
        out.setdefault(doc_id, ([], texts.get(doc_id, "")))[0].append(node)
    return out


def load_tree_nodes(
    con: duckdb.DuckDBPyConnection, collection: str, doc_ids: Sequence[str] | None = None
) -> dict[str, list[TreeNode]]:
    """doc_id -> tree nodes in document order (the trees without their texts)."""
    return {doc_id: nodes for doc_id, (nodes, _) in load_trees(con, collection, doc_ids).items()}


def stored_trees(
    con: duckdb.DuckDBPyConnection, collection: str, docs: Sequence[SourceDocument]
) -> dict[str, DocumentTree]:
    """doc_id -> the catalogue's tree of each document whose stored tree was built from the same
    content by the same reading code (content hash and reader version both equal; see
    `core/corpus/reader_version.py`): those need not be parsed again."""
    columns = present_columns(con, "document_texts")
    if "reader_version" not in columns:
        return {}
    stored = dict(
        (doc_id, (digest, version))
        for doc_id, digest, version in con.execute(
            "SELECT doc_id, content_hash, reader_version FROM document_texts WHERE collection = ?", [collection]
        ).fetchall()
    )
    same = {
        d.doc_id: d for d in docs if d.reader_version and stored.get(d.doc_id) == (d.content_hash, d.reader_version)
    }
    if not same:
        return {}
    return {
        doc_id: DocumentTree(same[doc_id].title, nodes)
        for doc_id, (nodes, _) in load_trees(con, collection, sorted(same)).items()
    }


def node_pages(con: duckdb.DuckDBPyConnection, collection: str, doc_ids: Sequence[str]) -> dict[tuple[str, int], str]:
    """(doc_id, node_id) -> its pages ("p. 12", '' where unknown) for the nodes of `doc_ids`."""
    columns = present_columns(con, "document_nodes")
    if "page_start" not in columns or not doc_ids:
        return {}
    rows = con.execute(
        "SELECT doc_id, node_id, page_start, page_end FROM document_nodes "
        "WHERE collection = ? AND doc_id IN (SELECT unnest(?))",
        [collection, list(doc_ids)],
    ).fetchall()
    return {(doc_id, node_id): page_label(start, end) for doc_id, node_id, start, end in rows}


def tree_doc_ids(con: duckdb.DuckDBPyConnection, collection: str) -> list[str]:
    """The ids of the collection's documents that have a tree, sorted."""
    if not table_exists(con, "document_nodes"):
        return []
    rows = con.execute(
        "SELECT DISTINCT doc_id FROM document_nodes WHERE collection = ? ORDER BY doc_id", [collection]
    ).fetchall()
    return [r[0] for r in rows]


def document_texts(
    con: duckdb.DuckDBPyConnection, collection: str, doc_ids: Sequence[str]
) -> dict[str, tuple[str, str]]:
    """doc_id -> (content hash, normalised text) of the documents that still have a tree."""
    return {
        doc: (h, text)
        for doc, h, text in rows_by_doc_id(con, "document_texts", "content_hash, text", collection, doc_ids)
    }


class CatalogueTrees(Mapping[str, Sequence[TreeNode]]):
    """doc_id -> tree nodes of one collection, read from the catalogue on first use (a question
    touches a handful of documents; a collection may hold millions)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, collection: str) -> None:
        self.con = con
        self.collection = collection
        self._cache: dict[str, list[TreeNode]] = {}

    @cached_property
    def _ids(self) -> list[str]:
        return tree_doc_ids(self.con, self.collection)

    def __getitem__(self, doc_id: str) -> Sequence[TreeNode]:
        if doc_id not in self._cache:
            found = load_tree_nodes(self.con, self.collection, [doc_id])
            if doc_id not in found:
                raise KeyError(doc_id)
            self._cache[doc_id] = found[doc_id]
        return self._cache[doc_id]

    def __contains__(self, doc_id: object) -> bool:
        if not isinstance(doc_id, str):
            return False
        try:
            self[doc_id]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)
