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
from rag_assets.core.index.document_names import document_names
from rag_assets.core.index.document_steer import DocumentSteer
from rag_assets.core.store.card_tables import load_cards
from rag_assets.core.store.document_tables import collection_doc_ids
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
    steer: str = "cards",
) -> AnsweringSession:
    """`collection`'s answering session with what the catalogue published for it; its trees read
    from `con` unless given (an empty mapping: a session that only searches). `steer`: where a
    question is searched by default (`document_steer`): "cards", "cards+names" (then file names),
    or "off" (every document)."""
    published = load_published(con, collection)
    if trees is None:
        trees = collection_trees(con, collection)
    return AnsweringSession(
        published,
        models,
        trees,
        gold=gold,
        search_in=search_in,
        documents=documents,
        steer=document_steer(con, list(search_in or [collection]), steer),
    )


STEERS = ("cards", "cards+names", "off")


def document_steer(
    con: duckdb.DuckDBPyConnection, collections: list[str], steer: str = "cards"
) -> DocumentSteer | None:
    """The steer of `collections` from their stored cards (and file names with "cards+names");
    None with "off"."""
    if steer not in STEERS:
        raise ValueError(f"unknown document steer {steer!r}; expected one of {STEERS}")
    if steer == "off":
        return None
    names = document_names(tuple(collection_doc_ids(con, collections))) if steer == "cards+names" else None
    return DocumentSteer(load_cards(con, collections, naming_only=True), names)
