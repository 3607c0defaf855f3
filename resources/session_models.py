"""The answering session's models from the code location's resources: what the assets answer
with (`rag serve` keeps its own warm set, rag_assets/serving/models.py, behind the same protocol)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from rag_assets.core.answering.session import SearchableIndex
from rag_assets.core.engines.base import LLMEngine
from rag_assets.core.engines.cache import CachingEngine
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.index.reranking.folders import load_passage_reranker
from rag_assets.core.routing.encoder_training import load_encoder_router
from rag_assets.core.routing.navigation import Router
from resources.embedder import EmbedderResource
from resources.llm import LLMResource
from resources.vectors import VectorStoreResource


class ResourceModels:
    """`SessionModels` over the resources of one materialization. `replay`: wrap the engine in a
    `CachingEngine`, so repeated prompts (the evaluation's grid points) are generated once."""

    def __init__(
        self,
        embedder: EmbedderResource,
        vectors: VectorStoreResource,
        llm: LLMResource | None = None,
        *,
        replay: bool = False,
    ) -> None:
        self._embedder = embedder
        self._vectors = vectors
        self._llm = llm
        self._replay = replay
        self._engine: LLMEngine | None = None

    @cached_property
    def _model(self) -> Embedder:
        return self._embedder.get()

    def embedder(self) -> Embedder:
        return self._model

    def index(self, version: int | None) -> SearchableIndex:
        return self._vectors.index(self._model).pin(version)

    def engine(self, adapters: Mapping[str, Path]) -> LLMEngine:
        if self._llm is None:
            raise ValueError("this step answers without an LLM: no `llm` resource was given")
        if self._engine is None:
            engine = self._llm.engine(dict(adapters) or None)
            self._engine = CachingEngine(engine) if self._replay else engine
        return self._engine

    def encoder_router(self, folder: Path) -> Router:
        return load_encoder_router(folder, device=self._model.device)

    def passage_reranker(self, folder: Path) -> Any:
        return load_passage_reranker(folder, device=self._model.device)
