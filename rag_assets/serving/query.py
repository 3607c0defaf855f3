"""Search, ask, trace, list answers, show a document: what `rag` and `rag serve` answer, in one
place. The CLI makes a `QueryService` per command (it loads only what the query touches), the
service keeps one warm for its whole life; both give the same results and store the same lineage.

The catalogue is only opened for short reads (and one short write per answer); LanceDB is read at
the version published with the catalogue's passages, re-read whenever the catalogue changed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_assets.core.errors import CatalogueBusy, ConfigError
from rag_assets.serving.models import WarmModels
from rag_assets.serving.published import (
    LanceTables,
    Published,
    PublishedPairs,
    catalogue_path,
    check_collections,
    published,
    read_catalogue,
)

MODES = ("dense", "bm25", "hybrid")
Note = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class AskOptions:
    """Overrides of the evaluated configuration (None: as evaluated)."""

    top_k: int | None = None
    expand_iterations: int | None = None
    retrieval_mode: str | None = None
    router: str | None = None
    style: str | None = None
    tree_depth: int | None = None
    tree_branching: int | None = None


@dataclass
class AskResult:
    record: Any  # the stored AnswerRecord
    outcome: Any  # the AnswerOutcome (citations with heading paths)
    published: Published | None
    answer_style: str
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer": self.record.to_dict(),
            "citations": [
                {
                    "n": i,
                    "doc_id": c.doc_id,
                    "node_id": c.node_id,
                    "heading_path": list(c.heading_path),
                    "span": [c.span_start, c.span_end],
                    "pages": c.pages,
                    "text": c.text,
                }
                for i, c in enumerate(self.outcome.citations, start=1)
            ],
            "published": self.published.to_dict() if self.published else None,
            "answer_style": self.answer_style,
            "notes": self.notes,
        }


def hit_dict(hit: Any) -> dict[str, Any]:
    return {
        "rank": hit.rank,
        "score": hit.score,
        "passage_id": hit.passage_id,
        "doc_id": hit.doc_id,
        "collection": hit.collection,
        "node_ids": list(hit.node_ids),
        "heading_path": list(hit.heading_path),
        "text": hit.text,
    }


class QueryService:
    def __init__(self, models: WarmModels | None = None, *, on_wait: Note | None = None) -> None:
        self.models = models or WarmModels()
        self.tables = LanceTables()
        self.publications = PublishedPairs()
        self.on_wait = on_wait

    def collections(self) -> list[str]:
        with read_catalogue(self.on_wait) as con:
            return check_collections(con, None)

    def search(
        self,
        query: str,
        *,
        collections: list[str] | None = None,
        mode: str = "hybrid",
        k: int = 5,
        reranker: str | None = None,
    ) -> tuple[list[Any], list[Published]]:
        """Top-k passages and the published pair(s) they came from. `collections` ['all']: the
        ones the namespace router picks. A BM25 search without reranker loads no model."""
        from rag_assets.core.index.retrieval import search

        if mode not in MODES:
            raise ConfigError(f"--mode must be dense, bm25 or hybrid, not {mode!r}")
        if not query.strip():
            raise ConfigError("the query is empty")
        if collections == ["all"]:
            collections = self.models.routed_collections(query)
        try:
            names, pairs = self.publications.get(collections, self.on_wait)
            # one collection: its published version; several: the newest (each has its own version)
            version = pairs[0].version if len(pairs) == 1 else None
        except CatalogueBusy:
            # a writer holds the catalogue (a run's write): a search needs only the index, so it
            # searches the newest version and checks the names there instead of waiting
            names, pairs, version = self.tables.known_collections(collections), [], None
        if mode == "bm25" and reranker is None:
            # no model and no lancedb: the light path a cold CLI search takes
            from rag_assets.core.index.full_text import full_text_search

            found = full_text_search(
                self.tables.dataset_uri, query, k=k, collections=collections and names, version=version
            )
            return found, pairs
        embedder = self.models.embedder() if mode != "bm25" else None
        rerank = self.models.reranker(reranker) if reranker else None
        hits = search(
            self.tables.at(version), embedder, query, mode=mode, k=k, collections=collections and names, reranker=rerank
        )
        return hits, pairs

    def ask(
        self,
        question: str,
        *,
        collection: str | None = None,
        strategy: str = "rdr2",
        options: AskOptions = AskOptions(),
        source: str = "cli",
        on_text: Note | None = None,
        on_note: Note | None = None,
    ) -> AskResult:
        """Answer `question` with the evaluated configuration of `strategy` (options override
        it) and store the answer with its lineage; `on_text` receives the reader's text as it is
        generated (streaming), `on_note` each note (fallbacks, the index used)."""
        from rag_assets.core.store.question_table import load_question_rows
        from rag_assets.core.store.router_registry import latest_router
        from rag_assets.core.store.transactions import table_exists
        from rag_assets.strategy_config import AnswersConfig, answer_style, canonical_strategy

        if not question.strip():
            raise ConfigError("the question is empty: ask something")
        name = canonical_strategy(strategy)
        notes: list[str] = []

        def note(text: str) -> None:
            notes.append(text)
            if on_note:
                on_note(text)

        routed: list[str] | None = None
        if collection == "all":  # the answer is stored under the best routed collection
            routed = self.models.routed_collections(question)
            collection = routed[0]
        with read_catalogue(self.on_wait) as con:
            known = check_collections(con, [collection] if collection else None)
            if len(known) != 1:
                raise ConfigError(f"say which collection with --collection (the catalogue holds {', '.join(known)})")
            coll = known[0]
            pair = published(con, coll)
            questions = load_question_rows(con, coll) if table_exists(con, "questions") else []
            encoder = latest_router(con, coll, "encoder")
            llm_router = latest_router(con, coll, "llm")
        style = options.style or answer_style(AnswersConfig().answer_style, questions)
        spec = _with_options(name, style, llm_router.adapter_id if llm_router else None, options)
        if spec.kind == "rdr2" and spec.router == "encoder" and encoder is None:
            note(f"no trained encoder router for {coll!r}: routing with the untrained encoder (similarity)")
            # labelled as what routed it: the evaluation's `rdr2` row is the trained encoder's
            label = "rdr2-similarity" if spec.name in ("rdr2", "rdr2-encoder") else spec.name
            spec = dataclasses.replace(spec, router="similarity", name=label)
        if spec.kind == "rdr2" and spec.router == "llm" and spec.adapter and llm_router is None:
            note(f"no trained LLM router for {coll!r}: routing with the base model")
            spec = dataclasses.replace(spec, adapter=None)
        adapters = {llm_router.adapter_id: Path(llm_router.path)} if spec.adapter and llm_router else {}
        engine = self.models.engine(adapters)  # first: a misconfigured backend fails fast
        reader = engine
        if on_text is not None:
            from rag_assets.serving.streaming import StreamingReader

            reader = StreamingReader(engine, on_text)
        outcome, embedder_id = self._run(question, spec, coll, routed, pair, engine, reader, encoder, note)
        router_model = None
        if spec.kind == "rdr2":
            router_model = {
                "llm": f"{engine.model_id}+{spec.adapter}" if spec.adapter else engine.model_id,
                "encoder": encoder.adapter_id if encoder else None,
                "similarity": embedder_id,
            }.get(spec.router, spec.router)
        return self._store(
            question, spec, coll, outcome, pair, engine, router_model, embedder_id, encoder, source, notes
        )

    def _run(self, question, spec, coll, routed, pair, engine, reader, encoder, note) -> tuple[Any, str | None]:
        from collections import ChainMap

        from rag_assets.core.answering.strategies import gather_evidence, run_strategy
        from rag_assets.core.index.retrieval import search
        from rag_assets.core.routing.scoring_router import HitNodesRouter, ScoringRouter
        from rag_assets.core.routing.teachers import SimilarityThresholds
        from rag_assets.core.store.connections import ShortReads
        from rag_assets.core.store.tree_tables import CatalogueTrees
        from rag_assets.strategy_config import interactive_spec

        embedder = table = reranker = None
        routers: dict[str, Any] = {}
        if spec.kind != "none":  # `none` reads no evidence: no embedder, no index
            embedder = self.models.embedder()
            table = self.tables.at(pair.version)
            note(pair.note)
            routers["hit-nodes"] = HitNodesRouter()
            routers["similarity"] = ScoringRouter(embedder, SimilarityThresholds(), kind="similarity", contextual=False)
            if encoder is not None and spec.router == "encoder":
                routers["encoder"] = self.models.encoder_router(Path(encoder.path))
            if spec.rerank:
                reranker = self.models.reranker("latest")

        def retrieve(query: str, how: str, top: int, *, rerank: bool = False, collections: list[str] | None = None):
            return search(
                table,
                embedder,
                query,
                mode=how,
                k=top,
                collections=collections or routed or [coll],
                reranker=reranker if rerank else None,
            )

        # trees are read as the routing needs them, each read on its own short connection
        reads = ShortReads(catalogue_path(), on_wait=self.on_wait)
        trees = ChainMap(*(CatalogueTrees(reads, c) for c in routed or [coll]))
        budgets = None
        if spec.evidence_budget_from:  # as evaluated: rdr2 reads at most the words rag-hybrid read
            source = interactive_spec(spec.evidence_budget_from, spec.answer_style, None)
            budgets = [g.words for g in gather_evidence([question], source, retrieve=retrieve, trees=trees)]
        outcome = run_strategy(
            [question],
            spec,
            retrieve=retrieve,
            trees=trees,
            engine=engine,
            reader=reader,
            routers=routers,
            evidence_budgets=budgets,
        )[0]
        return outcome, embedder.model_id if embedder is not None else None

    def _store(self, question, spec, coll, outcome, pair, engine, router_model, embedder_id, encoder, source, notes):
        from rag_assets.core.lineage import answer_versions, build_record, store_answers
        from rag_assets.core.store.connections import catalogue_connection

        with read_catalogue(self.on_wait) as con:
            versions = answer_versions(
                con,
                coll,
                outcome,
                index=pair.index_info() if spec.kind != "none" else None,
                adapter_id=(encoder.adapter_id if encoder and spec.router == "encoder" else spec.adapter)
                if spec.kind == "rdr2"
                else None,
                router_model=router_model,
                reader_model=engine.model_id,
                embedder=embedder_id,
            )
        record = build_record(outcome, spec, collection=coll, source=source, versions=versions)
        # the only write: one short transaction, waiting (bounded, visibly) for a writer's own
        with catalogue_connection(catalogue_path(), read_only=False, on_wait=self.on_wait) as con:
            store_answers(con, [record])
        return AskResult(record, outcome, pair if spec.kind != "none" else None, spec.answer_style, notes)

    def trace(self, answer_id: str) -> dict[str, Any]:
        """The audit of a stored answer: cited spans then and now, versions, source files."""
        from rag_assets.serving.audit import trace_dict

        with read_catalogue(self.on_wait) as con:
            return trace_dict(con, answer_id)

    def answers(self, **filters: Any) -> dict[str, Any]:
        from rag_assets.core.store.answers import AnswerFilter, answer_facets, list_answers

        wanted = AnswerFilter(**filters)
        with read_catalogue(self.on_wait) as con:
            rows = list_answers(con, wanted)
            facets = answer_facets(con)
        return {"answers": [r.to_dict() for r in rows], "facets": facets}

    def document(self, collection: str, doc_id: str) -> dict[str, Any]:
        from rag_assets.serving.audit import document_dict

        with read_catalogue(self.on_wait) as con:
            check_collections(con, [collection])
            return document_dict(con, collection, doc_id)


def _with_options(name: str, style: str, llm_adapter: str | None, options: AskOptions) -> Any:
    """The evaluated spec of `name` with the given overrides (the label names a changed router)."""
    from rag_assets.strategy_config import interactive_spec

    spec = interactive_spec(name, style, llm_adapter)
    if options.retrieval_mode is not None and options.retrieval_mode not in MODES:
        raise ConfigError(f"--mode must be dense, bm25 or hybrid, not {options.retrieval_mode!r}")
    changes = {
        key: value
        for key, value in (
            ("top_k", options.top_k),
            ("expand_iterations", options.expand_iterations),
            ("retrieval_mode", options.retrieval_mode),
            ("tree_depth", options.tree_depth),
            ("tree_branching", options.tree_branching),
        )
        if value is not None
    }
    if options.router is not None and spec.kind == "rdr2" and options.router != spec.router:
        if options.router not in ("encoder", "llm", "similarity", "hit-nodes"):
            raise ConfigError(f"--router must be encoder, llm, similarity or hit-nodes, not {options.router!r}")
        changes.update(
            router=options.router,
            name=f"rdr2-{options.router}",
            adapter=llm_adapter if options.router == "llm" else None,
        )
    if spec.kind == "rag" and options.retrieval_mode is not None:
        changes["name"] = f"rag-{options.retrieval_mode}"
    return dataclasses.replace(spec, **changes) if changes else spec
