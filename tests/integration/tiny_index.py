"""The conftest corpus indexed for real: its trees and a LanceDB passage index in a temporary
folder, searched with the real embedder (what held-out evidence tests route over)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from rag_assets.core.corpus.sources import CollectionSpec, SourceDocument, iter_collection
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.corpus.tree_building import document_tree
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.index.passages import cut_passages
from rag_assets.core.index.retrieval import SearchHit, search
from rag_assets.core.index.vector_index import PassageIndex
from tests.conftest import write_corpus

Retrieve = Callable[..., list[SearchHit]]


def indexed_tiny_corpus(
    corpus_folder: Path, lance_folder: Path, embedder: Embedder
) -> tuple[Retrieve, dict[str, Sequence[TreeNode]]]:
    """(retrieve(query, mode, k, documents=None), doc id -> tree nodes) of the conftest corpus as
    collection `tiny` (`documents`: only those doc ids' passages)."""
    folder = write_corpus(corpus_folder)
    docs = [d for d in iter_collection(CollectionSpec("tiny", str(folder))) if isinstance(d, SourceDocument)]
    trees = {d.doc_id: document_tree(d) for d in docs}
    index = PassageIndex(lance_folder, embedder)
    index.sync([p for d in docs for p in cut_passages(d.doc_id, trees[d.doc_id].nodes, trees[d.doc_id].text)], "tiny")

    def retrieve(query: str, mode: str, k: int, documents: list[str] | None = None, **_: object) -> list[SearchHit]:
        return search(index, embedder, query, mode=mode, k=k, collections=["tiny"], documents=documents)

    return retrieve, {doc_id: tree.nodes for doc_id, tree in trees.items()}
