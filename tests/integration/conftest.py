"""Fixtures shared by the integration tests that drive the real engine and a real index."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from rag_assets.core.corpus.sources import CollectionSpec, SourceDocument, iter_collection
from rag_assets.core.corpus.tree_building import document_tree
from rag_assets.core.engines.transformers_engine import TransformersEngine
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.index.passages import cut_passages
from rag_assets.core.index.retrieval import search
from rag_assets.core.index.vector_index import PassageIndex
from tests.conftest import write_corpus


class CountingEngine(TransformersEngine):
    """The real engine (the model still runs), recording every `generate` call: its chats and
    the grammars it was constrained by. Shared by the session: a test calls `reset()` before
    it counts."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[list[list[dict[str, str]]]] = []
        self.grammars: list[list[str]] = []

    def generate(self, batch, **kwargs):
        regex = kwargs.get("regex")
        self.calls.append(list(batch))
        self.grammars.append([regex] if isinstance(regex, str) else list(regex or []))
        return super().generate(batch, **kwargs)

    @property
    def sizes(self) -> list[int]:
        """The number of chats of each call, in call order."""
        return [len(batch) for batch in self.calls]

    def reset(self) -> None:
        self.calls.clear()
        self.grammars.clear()


@pytest.fixture(scope="session")
def counting_engine(smollm2_checkpoint: Path) -> CountingEngine:
    """The packaged SmolLM2 in the transformers engine, loaded once per session (16 chats per
    forward pass: more than any of these tests sends at once)."""
    return CountingEngine(smollm2_checkpoint, batch_size=16)


@dataclass(frozen=True)
class IndexedCorpus:
    """The conftest corpus (collection "tiny") parsed into trees and indexed in LanceDB."""

    retrieve: Callable  # (query, mode, k) -> the index's hits in the "tiny" collection
    trees: dict  # doc_id -> tree nodes
    texts: dict[str, str]  # doc_id -> the document's text (the spans' coordinates)
    docs: list[SourceDocument]


@pytest.fixture(scope="session")
def indexed_corpus(tmp_path_factory: pytest.TempPathFactory) -> IndexedCorpus:
    folder = write_corpus(tmp_path_factory.mktemp("corpus"))
    docs = [d for d in iter_collection(CollectionSpec("tiny", str(folder))) if isinstance(d, SourceDocument)]
    trees = {d.doc_id: document_tree(d) for d in docs}
    passages = [p for d in docs for p in cut_passages(d.doc_id, trees[d.doc_id].nodes, trees[d.doc_id].text)]
    embedder = Embedder(progress=False)
    index = PassageIndex(tmp_path_factory.mktemp("lance"), embedder)
    index.sync(passages, "tiny")

    def retrieve(query: str, mode: str, k: int):
        return search(index, embedder, query, mode=mode, k=k, collections=["tiny"])

    return IndexedCorpus(
        retrieve, {doc_id: tree.nodes for doc_id, tree in trees.items()}, {d: t.text for d, t in trees.items()}, docs
    )
