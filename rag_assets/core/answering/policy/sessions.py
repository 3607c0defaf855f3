"""The answering session of a collection, opened from the catalogue: what was published for it
(index version, routers, reranker, default form and floor) and, unless the caller reads them its
own way (the service reads trees lazily), every document tree. The assets, `rag ask` and the
benchmarks open their sessions here instead of repeating the reads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import duckdb

from rag_assets.core.answering.published import load_published
from rag_assets.core.answering.session import AnsweringSession, SessionModels
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.store.tree_tables import load_trees


def collection_trees(con: duckdb.DuckDBPyConnection, collection: str) -> dict[str, list[TreeNode]]:
    """doc_id -> its tree's nodes in document order, for every document of `collection`."""
    return {doc_id: nodes for doc_id, (nodes, _) in load_trees(con, collection).items()}


def open_session(
    con: duckdb.DuckDBPyConnection,
    collection: str,
    models: SessionModels,
    *,
    gold: Sequence[Question] = (),
    trees: Mapping[str, Sequence[TreeNode]] | None = None,
    search_in: Sequence[str] | None = None,
    documents: Sequence[str] | None = None,
) -> AnsweringSession:
    """`collection`'s answering session with what the catalogue published for it; its trees read
    from `con` unless given (an empty mapping: a session that only searches)."""
    published = load_published(con, collection)
    if trees is None:
        trees = collection_trees(con, collection)
    return AnsweringSession(published, models, trees, gold=gold, search_in=search_in, documents=documents)
