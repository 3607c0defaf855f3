"""The one answering session: what every answering user (the `answers` and `evidence_evaluation`
assets, `router_metrics`, the router's validation, `rag ask` and the service) answers through.

Built from what was published for a collection (`PublishedCollection`) and a source of models
(`SessionModels`: the assets' resources, or the service's warm models), it gives the search every
strategy retrieves with, the routers of every kind, the engine, the strategy run and the versions
every stored answer records. Models load on first use, so a question that needs no index (the
`no-retrieval` strategy) loads none, and the router kinds a spec does not name are never built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import duckdb

from rag_assets.core.answering.extractive import EmbedderScorer
from rag_assets.core.answering.no_answer import RelevanceFloor
from rag_assets.core.answering.published import PublishedCollection
from rag_assets.core.answering.r4_reordering import PositionPolicy, load_position_policy
from rag_assets.core.answering.strategies import gather_evidence
from rag_assets.core.answering.strategy_runner import run_strategy
from rag_assets.core.answering.types import AnswerOutcome, PairScorer, RetrievalExtras, StrategySpec
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.engines.base import LLMEngine
from rag_assets.core.index.document_steer import DocumentSteer
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.index.namespace_routing import QueryNamespaces, load_namespace_router
from rag_assets.core.index.retrieval import SearchHit, search
from rag_assets.core.index.term_lookup import IndexTerms
from rag_assets.core.lineage import AnswerRecord, answer_versions, build_record
from rag_assets.core.routing.likelihood_router import LikelihoodRouter, engine_can_score
from rag_assets.core.routing.navigation import Router
from rag_assets.core.routing.scoring_router import HitNodesRouter, OracleRouter, ScoringRouter


class SearchableIndex(Protocol):
    """What `retrieval.search` reads: a LanceDB table at the published version."""

    @property
    def table(self) -> Any: ...


class SessionModels(Protocol):
    """Where a session's models come from: loaded per materialization from the resources, or kept
    warm by the service. Each is asked for once per session."""

    def embedder(self) -> Embedder: ...

    def index(self, version: int | None) -> SearchableIndex: ...

    def engine(self, adapters: Mapping[str, Path]) -> LLMEngine: ...

    def encoder_router(self, folder: Path) -> Router: ...

    def passage_reranker(self, folder: Path) -> Any: ...


class LazyScorer:
    """A pair scorer built on its first use (a question that needs none loads no model)."""

    def __init__(self, load: Callable[[], PairScorer]) -> None:
        self.load = load
        self._scorer: PairScorer | None = None

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        if self._scorer is None:
            self._scorer = self.load()
        return self._scorer.scores(query, texts)


class MissingPiece(ValueError):
    """A strategy needs a trained piece this collection has not published."""


class AnsweringSession:
    """Answers questions of `published.collection` with what was published for it.

    `gold`: the questions whose gold labels the oracle router reads (evaluation only);
    `search_in`: the collections searched (default: this one; the service's `all` passes the
    namespace router's choice); `documents`: the doc ids searched, and so routed (default: those
    `steer` chooses for each question: the documents whose cards it names, else all)."""

    def __init__(
        self,
        published: PublishedCollection,
        models: SessionModels,
        trees: Mapping[str, Sequence[TreeNode]],
        *,
        gold: Sequence[Question] = (),
        search_in: Sequence[str] | None = None,
        documents: Sequence[str] | None = None,
        steer: DocumentSteer | None = None,
    ) -> None:
        self.published = published
        self.models = models
        self.trees = trees
        self.gold = list(gold)
        self.search_in = list(search_in or [published.collection])
        self.documents = list(documents) if documents else None  # search (and so routing) only these doc ids
        self.steer = steer
        self._routers: dict[str, Router] = {}

    @property
    def collection(self) -> str:
        return self.published.collection

    # --- the models, each loaded on first use ---------------------------------------------------
    @cached_property
    def embedder(self) -> Embedder:
        return self.models.embedder()

    @cached_property
    def index(self) -> SearchableIndex:
        return self.models.index(self.published.index.version)

    @cached_property
    def engine(self) -> LLMEngine:
        """The router/stage/reader engine, with the trained LLM router's adapter when published."""
        return self.models.engine(self.published.adapters())

    @cached_property
    def reranker(self) -> Any | None:
        piece = self.published.reranker
        return self.models.passage_reranker(Path(piece.path)) if piece and piece.path else None

    @cached_property
    def namespaces(self) -> QueryNamespaces | None:
        piece = self.published.namespaces
        return QueryNamespaces(load_namespace_router(Path(piece.path)), self.embedder) if piece and piece.path else None

    @cached_property
    def policy(self) -> PositionPolicy | None:
        piece = self.published.policy
        return load_position_policy(Path(piece.path)) if piece and piece.path else None

    # --- what strategies call --------------------------------------------------------------------
    def retrieve(
        self,
        query: str,
        mode: str,
        k: int,
        *,
        rerank: bool = False,
        collections: list[str] | None = None,
        documents: list[str] | None = None,
        steered: bool = True,
    ) -> list[SearchHit]:
        """The search every strategy retrieves with: the published index version, this session's
        collections (or the namespaces a strategy routed to), `documents` (else this session's,
        else, `steered`, the ones the steer chooses for `query`), the published reranker on request."""
        if rerank and self.reranker is None:
            raise MissingPiece(f"no passage reranker is published for {self.collection!r}")
        return search(
            self.index,
            self.embedder,
            query,
            mode=mode,
            k=k,
            collections=collections or self.search_in,
            reranker=self.reranker if rerank else None,
            documents=documents or self.documents or (self.steered_documents(query) if steered else None),
        )

    def steered_documents(self, question: str) -> list[str] | None:
        """The documents the steer searches `question` in (None: every document)."""
        return self.steer.documents_for(question) if self.steer is not None else None

    def unsteered_retrieve(self, query: str, mode: str, k: int, **options: Any) -> list[SearchHit]:
        """`retrieve` in every document (or the `documents` given): what the steer is measured against."""
        return self.retrieve(query, mode, k, steered=False, **options)

    def missing_piece(self, spec: StrategySpec) -> str | None:
        """Why `spec` cannot run on what was published (None: it can). The LLM router has no
        such need: without a trained adapter it routes with the base model."""
        if spec.kind == "rdr2" and spec.router == "encoder" and "encoder" not in self.published.routers:
            return "no trained encoder router"
        if spec.kind == "rdr2" and spec.router == "oracle" and not self.gold:
            return "no gold questions for the oracle router"
        if spec.rerank and self.published.reranker is None:
            return "no passage reranker"
        if spec.route_namespaces and self.published.namespaces is None:
            return "no namespace router"
        if spec.reorder == "learned" and self.published.policy is None:
            return "no reorder policy"
        return None

    def can_rank(self) -> bool:
        """Whether the engine can score continuations (the `llm-rank` router's need)."""
        return engine_can_score(self.engine)

    def router(self, kind: str) -> Router:
        """The non-generating router of `kind`, built once: the one place router kinds are made."""
        if kind not in self._routers:
            self._routers[kind] = self._build_router(kind)
        return self._routers[kind]

    def _build_router(self, kind: str) -> Router:
        if kind == "similarity":
            return ScoringRouter(self.embedder, self.published.similarity, kind="similarity", contextual=False)
        if kind == "hit-nodes":
            return HitNodesRouter()
        if kind == "oracle":
            return OracleRouter(self.gold)
        if kind == "encoder":
            encoder = self.published.routers.get("encoder")
            if encoder is None or encoder.path is None:
                raise MissingPiece(f"no trained encoder router is published for {self.collection!r}")
            return self.models.encoder_router(Path(encoder.path))
        if kind == "llm-rank":
            if not self.can_rank():
                raise MissingPiece("the engine cannot score continuations (the llm-rank router)")
            return LikelihoodRouter(self.engine)
        raise ValueError(f"no router of kind {kind!r} (the llm router is the engine)")

    def routers_for(self, specs: Sequence[StrategySpec]) -> dict[str, Router]:
        """The non-generating routers the rdr2 specs among `specs` route with."""
        kinds = {s.router for s in specs if s.kind == "rdr2" and s.router != "llm"}
        return {kind: self.router(kind) for kind in sorted(kinds)}

    @cached_property
    def answer_scorer(self) -> PairScorer:
        """What picks an extractive answer's sentence (and attributes an answer sharing no word
        with its evidence): the trained passage reranker where published, else the embedder;
        loaded on first use."""
        return LazyScorer(lambda: self.reranker or EmbedderScorer(self.embedder))

    def scorer_id(self) -> str:
        """The model behind `answer_scorer` (recorded with extractive answers)."""
        piece = self.published.reranker
        return piece.model_id if piece is not None and piece.path else self.embedder.model_id

    @cached_property
    def relevance_scorer(self) -> PairScorer:
        """What scores the evidence against the relevance floor: the embedder, never the passage
        reranker, which learnt from the very train questions the floor is measured on."""
        return LazyScorer(lambda: EmbedderScorer(self.embedder))

    def relevance_floor(self) -> RelevanceFloor | None:
        """The published relevance floor, where it was measured with this session's embedder."""
        floor = self.published.relevance_floor
        return floor if floor is not None and floor.scorer == self.embedder.model_id else None

    @cached_property
    def term_lookup(self) -> IndexTerms:
        """Which of a question's terms occur in the documents this session searches (the index's
        full-text side, opened on the first lookup)."""
        return IndexTerms(lambda: self.index.table, self.search_in, self.documents)

    def extras(self, spec: StrategySpec, *, use_floor: bool = True) -> RetrievalExtras:
        floor = self.relevance_floor() if use_floor else None
        return RetrievalExtras(
            namespaces=self.namespaces if spec.route_namespaces else None,
            policy=self.policy if spec.reorder == "learned" else None,
            answer_scorer=self.answer_scorer,
            relevance_floor=floor.value if floor is not None else None,
            relevance_scorer=self.relevance_scorer if floor is not None else None,
            term_lookup=self.term_lookup if use_floor else None,
        )

    def run(
        self,
        questions: Sequence[str],
        spec: StrategySpec,
        *,
        evidence_budgets: Sequence[int | None] | None = None,
        reader: LLMEngine | None = None,
        use_floor: bool = True,
    ) -> list[AnswerOutcome]:
        """`spec`'s strategy for all `questions` (one engine call per stage), with `reader` (a
        streaming wrapper, say) instead of the engine for the final read when given; answers whose
        evidence is below the published relevance floor say they are not found (unless `use_floor`
        is False: the floor is being measured)."""
        return run_strategy(
            questions,
            spec,
            retrieve=self.retrieve,
            trees=self.trees,
            engine=self.engine,
            reader=reader,
            routers=self.routers_for([spec]),
            evidence_budgets=evidence_budgets,
            extras=self.extras(spec, use_floor=use_floor),
        )

    def evidence_words(self, questions: Sequence[str], spec: StrategySpec) -> list[int]:
        """The words `spec` would give the reader per question (rdr2's budget, without a read)."""
        gathered = gather_evidence(
            questions,
            spec,
            retrieve=self.retrieve,
            trees=self.trees,
            routers=self.routers_for([spec]),
            extras=self.extras(spec),
        )
        return [g.words for g in gathered]

    # --- what every stored answer records --------------------------------------------------------
    def router_versions(self, spec: StrategySpec) -> tuple[str | None, str | None]:
        """(router id, router model) an answer of `spec` records: the one mapping of router kinds
        to what routed (None, None for strategies that do not route)."""
        if spec.kind != "rdr2":
            return None, None
        encoder = self.published.routers.get("encoder")
        router_id = (encoder.model_id if encoder else None) if spec.router == "encoder" else spec.adapter
        model_id = self.engine.model_id
        model = {
            "llm": f"{model_id}+{spec.adapter}" if spec.adapter else model_id,
            "llm-rank": f"{model_id}+{spec.adapter} (ranked)" if spec.adapter else model_id,
            "encoder": router_id,
            "similarity": self.embedder.model_id,
        }.get(spec.router, spec.router)
        return router_id, model

    def versions(self, con: duckdb.DuckDBPyConnection, spec: StrategySpec, outcome: AnswerOutcome) -> dict[str, Any]:
        """The versions JSON of one answer: document hashes, index version, routers, reader,
        embedder, and the retrieval side (query searched, namespaces, reranker, reorder policy)."""
        searched = spec.kind != "none"
        router_id, router_model = self.router_versions(spec)
        versions = answer_versions(
            con,
            self.collection,
            outcome,
            index=self.published.index.index_info() if searched else None,
            adapter_id=router_id,
            router_model=router_model,
            reader_model=self.engine.model_id,
            embedder=self.embedder.model_id if searched else None,
        )
        steered = self.steer.choose(outcome.question) if searched and self.steer and not self.documents else None
        if outcome.retrieval or (steered and steered.documents):
            retrieval = dict(outcome.retrieval)
            if steered and steered.documents:  # where the steer searched: the lineage of "which filing"
                retrieval["steered"] = {"by": steered.by, "reason": steered.reason, "documents": steered.documents}
            if spec.rerank and self.published.reranker is not None:
                retrieval["reranker"] = self.published.reranker.model_id
            if spec.reorder == "learned" and self.published.policy is not None:
                retrieval["reorder_policy"] = self.published.policy.model_id
            versions["retrieval"] = retrieval
        if outcome.answer_form == "extractive":
            versions["answer_scorer"] = self.scorer_id()
        if outcome.reader_empty:  # generated was asked; the reader wrote nothing
            versions["reader_empty"] = True
        if outcome.verdict:  # the reader scored the yes or no before the quote
            versions["verdict"] = outcome.verdict
        if outcome.relevance is not None or outcome.not_found:  # a relevance floor was applied
            floor = self.relevance_floor()
            versions["relevance"] = {
                "best": None if outcome.relevance is None else round(outcome.relevance, 4),
                "floor": floor.value if floor is not None else None,
                "not_found": outcome.not_found,
            }
        return versions

    def record(
        self,
        con: duckdb.DuckDBPyConnection,
        outcome: AnswerOutcome,
        spec: StrategySpec,
        *,
        source: str,
        run_id: str = "",
        qid: str = "",
        grid: str = "",
        grid_value: int = -1,
        created_at: datetime | None = None,
    ) -> AnswerRecord:
        """The answers-table row of one outcome, with its versions."""
        return build_record(
            outcome,
            spec,
            collection=self.collection,
            source=source,
            versions=self.versions(con, spec, outcome),
            run_id=run_id,
            qid=qid,
            grid=grid,
            grid_value=grid_value,
            created_at=created_at,
        )
