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
from typing import TYPE_CHECKING, Any

from rag_assets.core.errors import CatalogueBusy, ConfigError
from rag_assets.core.store.publication import IndexPin
from rag_assets.serving.models import WarmModels
from rag_assets.serving.published import (
    PublishedPairs,
    catalogue_path,
    check_collections,
    read_catalogue,
)

if TYPE_CHECKING:  # the session and its types import the models' code: loaded when an ask needs them
    from rag_assets.core.answering.published import PublishedCollection
    from rag_assets.core.answering.session import AnsweringSession
    from rag_assets.core.answering.types import AnswerOutcome, StrategySpec
    from rag_assets.core.lineage import AnswerRecord

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
    record: AnswerRecord  # as stored
    outcome: AnswerOutcome  # citations with heading paths
    published: IndexPin | None  # the index version read (None: the strategy read none)
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
        self.tables = self.models.tables
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
    ) -> tuple[list[Any], list[IndexPin]]:
        """Top-k passages and the published pair(s) they came from. `collections` ['all']: the
        ones the namespace router picks. A BM25 search without reranker loads no model."""
        from rag_assets.core.index.retrieval import search

        if mode not in MODES:
            raise ConfigError(f"--mode must be dense, bm25 or hybrid, not {mode!r}")
        if not query.strip():
            raise ConfigError("the query is empty")
        if collections == ["all"]:
            collections = self.routed_collections(query)
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

    def routed_collections(self, query: str) -> list[str]:
        """The collections the published namespace router picks for `query` (collection `all`)."""
        from rag_assets.core.answering.published import published_namespace_router

        with read_catalogue(self.on_wait) as con:
            folder = published_namespace_router(con)
        return self.models.routed_collections(query, folder)

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
        from rag_assets.strategy_config import canonical_strategy

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
            routed = self.routed_collections(question)
            collection = routed[0]
        session, spec = self._session(question, name, collection, routed, options, note)
        outcome = self._answer(question, spec, session, on_text, note)
        record = self._store(session, spec, outcome, source)
        return AskResult(
            record, outcome, session.published.index if spec.kind != "none" else None, spec.answer_style, notes
        )

    def _session(
        self,
        question: str,
        name: str,
        collection: str | None,
        routed: list[str] | None,
        options: AskOptions,
        note: Note,
    ) -> tuple[AnsweringSession, StrategySpec]:
        """The answering session of the asked collection and the spec it runs (fallbacks noted)."""
        from collections import ChainMap

        from rag_assets.core.answering.published import load_published
        from rag_assets.core.answering.session import AnsweringSession
        from rag_assets.core.store.connections import ShortReads
        from rag_assets.core.store.question_table import load_question_rows
        from rag_assets.core.store.transactions import table_exists
        from rag_assets.core.store.tree_tables import CatalogueTrees
        from rag_assets.strategy_config import AnswersConfig, answer_style

        with read_catalogue(self.on_wait) as con:
            known = check_collections(con, [collection] if collection else None)
            if len(known) != 1:
                raise ConfigError(f"say which collection with --collection (the catalogue holds {', '.join(known)})")
            published = load_published(con, known[0])
            questions = load_question_rows(con, known[0]) if table_exists(con, "questions") else []
        style = options.style or answer_style(AnswersConfig().answer_style, questions)
        spec = fallback_spec(_with_options(name, style, published.llm_adapter, options), published, note)
        # trees are read as the routing needs them, each read on its own short connection
        reads = ShortReads(catalogue_path(), on_wait=self.on_wait)
        trees = ChainMap(*(CatalogueTrees(reads, c) for c in routed or [published.collection]))
        session = AnsweringSession(published, self.models, trees, search_in=routed)
        missing = session.missing_piece(spec)
        if missing:
            raise ConfigError(f"{missing} for {published.collection!r}: {spec.name} cannot run (materialize it first)")
        return session, spec

    def _answer(
        self, question: str, spec: StrategySpec, session: AnsweringSession, on_text: Note | None, note: Note
    ) -> AnswerOutcome:
        """One answer through the session, budgeted as evaluated, streamed to `on_text`."""
        from rag_assets.strategy_config import interactive_spec

        engine = session.engine  # first: a misconfigured backend fails fast
        reader = None
        if on_text is not None:
            from rag_assets.serving.streaming import StreamingReader

            reader = StreamingReader(engine, on_text)
        if spec.kind != "none":  # `none` reads no evidence: no embedder, no index
            note(session.published.index.note)
        budgets = None
        if spec.evidence_budget_from:  # as evaluated: rdr2 reads at most the words rag-hybrid read
            source = interactive_spec(spec.evidence_budget_from, spec.answer_style, None)
            budgets = session.evidence_words([question], source)
        return session.run([question], spec, evidence_budgets=budgets, reader=reader)[0]

    def _store(
        self, session: AnsweringSession, spec: StrategySpec, outcome: AnswerOutcome, source: str
    ) -> AnswerRecord:
        """The answer with its lineage, stored in one short write."""
        from rag_assets.core.lineage import store_answers
        from rag_assets.core.store.connections import catalogue_connection

        with read_catalogue(self.on_wait) as con:
            record = session.record(con, outcome, spec, source=source)
        # the only write: one short transaction, waiting (bounded, visibly) for a writer's own
        with catalogue_connection(catalogue_path(), read_only=False, on_wait=self.on_wait) as con:
            store_answers(con, [record])
        return record

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


def fallback_spec(spec: StrategySpec, published: PublishedCollection, note: Note) -> StrategySpec:
    """`spec`, routed by what was published: the untrained encoder without a trained encoder, the
    base model without a trained LLM adapter (each noted)."""
    coll = published.collection
    if spec.kind == "rdr2" and spec.router == "encoder" and "encoder" not in published.routers:
        note(f"no trained encoder router for {coll!r}: routing with the untrained encoder (similarity)")
        # labelled as what routed it: the evaluation's `rdr2` row is the trained encoder's
        label = "rdr2-similarity" if spec.name in ("rdr2", "rdr2-encoder") else spec.name
        return dataclasses.replace(spec, router="similarity", name=label)
    if spec.kind == "rdr2" and spec.router == "llm" and spec.adapter and published.llm_adapter is None:
        note(f"no trained LLM router for {coll!r}: routing with the base model")
        return dataclasses.replace(spec, adapter=None)
    return spec


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
