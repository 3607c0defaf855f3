"""The models a query needs, each loaded on first use and then kept: the embedder, the passage
index at each published version, the reader engine (with the trained LLM router's adapter), the
encoder routers, the passage rerankers. They are the `SessionModels` of the service's answering
sessions (core/answering/session.py), the same protocol the assets answer through.

`rag serve` keeps one `WarmModels` for its whole life (loaded once, at start-up); a CLI command
makes one per call and so loads only what its query touches: a BM25 search loads nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_assets.serving.catalogue_reads import LanceTables

if TYPE_CHECKING:  # the models' code loads on first use: a BM25 search imports none of it
    from rag_assets.core.answering.session import SearchableIndex
    from rag_assets.core.engines.base import LLMEngine
    from rag_assets.core.index.embedding import Embedder
    from rag_assets.core.routing.navigation import Router


def quiet_model_loading() -> None:
    """No weight-loading progress bars on stderr: it is the channel for errors and waits."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()


class WarmModels:
    def __init__(self, tables: LanceTables | None = None) -> None:
        self.tables = tables or LanceTables()
        self._lock = threading.RLock()
        self._resources: dict[str, Any] | None = None
        self._embedder = None
        self._engines: dict[tuple[tuple[str, str], ...], Any] = {}
        self._encoders: dict[str, Any] = {}
        self._rerankers: dict[str, Any] = {}

    def resources(self) -> dict[str, Any]:
        """The code location's own resource objects (same models, same folders)."""
        with self._lock:
            if self._resources is None:
                from resources.project import project_resources

                self._resources = project_resources(progress=False)
            return self._resources

    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                quiet_model_loading()
                self._embedder = self.resources()["embedder"].get()
            return self._embedder

    def index(self, version: int | None) -> SearchableIndex:
        """The passage table at the published `version` (None: the newest)."""
        return self.tables.at(version)

    def engine(self, adapters: Mapping[str, Path] | None = None) -> LLMEngine:
        """The reader/router engine with these LoRA adapters (one engine per adapter set)."""
        key = tuple(sorted((name, str(path)) for name, path in (adapters or {}).items()))
        with self._lock:
            if key not in self._engines:
                llm = self.resources()["llm"]
                if llm.backend != "openai":
                    quiet_model_loading()
                if len(self._engines) >= 2:  # a newly published adapter replaces the old engine
                    self._engines.pop(next(iter(self._engines))).close()
                from rag_assets.serving.batching import BatchingEngine

                # concurrent requests' generations run batched on the one model
                self._engines[key] = BatchingEngine(llm.engine(adapters=dict(adapters or {})))
            return self._engines[key]

    def encoder_router(self, folder: Path) -> Router:
        from rag_assets.core.routing.encoder_training import load_encoder_router

        with self._lock:
            if str(folder) not in self._encoders:
                self._encoders[str(folder)] = load_encoder_router(folder, device=self.embedder().device)
            return self._encoders[str(folder)]

    def passage_reranker(self, folder: Path) -> Any:
        """The passage reranker published in `folder`."""
        return self.reranker(str(folder))

    def reranker(self, which: str) -> Any:
        """`latest`: the newest trained passage reranker; else a folder (a passage reranker, or
        any local sentence-transformers cross-encoder)."""
        from rag_assets.core.errors import ConfigError
        from rag_assets.core.index.reranking.folders import is_passage_reranker, latest_reranker, load_passage_reranker
        from rag_assets.core.index.retrieval import cross_encoder_reranker
        from rag_assets.core.settings import rerankers_dir

        folder = latest_reranker(rerankers_dir()) if which == "latest" else Path(which)
        if folder is None:
            raise ConfigError("no passage reranker trained yet (materialize `passage_reranker`)")
        with self._lock:
            if str(folder) not in self._rerankers:
                device = self.embedder().device
                self._rerankers[str(folder)] = (
                    load_passage_reranker(folder, device=device)
                    if is_passage_reranker(folder)
                    else cross_encoder_reranker(folder)
                )
            return self._rerankers[str(folder)]

    def routed_collections(self, query: str, folder: Path | None) -> list[str]:
        """The collections the published namespace router (in `folder`) picks for `query`."""
        from rag_assets.core.errors import ConfigError
        from rag_assets.core.index.namespace_routing import QueryNamespaces, load_namespace_router

        if folder is None:
            raise ConfigError(
                "collection `all` is routed by the namespace router: materialize `namespace_router` first"
            )
        return QueryNamespaces(load_namespace_router(folder), self.embedder()).route([query])[0]

    def close(self) -> None:
        with self._lock:
            for engine in self._engines.values():
                engine.close()
            self._engines.clear()
