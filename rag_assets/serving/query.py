"""Search, ask, trace, list answers, show a document: what `rag` and `rag serve` answer, in one
place. The CLI makes a `QueryService` per command (it loads only what the query touches), the
service keeps one warm for its whole life; both give the same results and store the same lineage.

The catalogue is only opened for short reads (and one short write per answer); LanceDB is read at
the version published with the catalogue's passages, re-read whenever the catalogue changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rag_assets.core.answering.policy.options import MODES, AskOptions, Note
from rag_assets.core.answering.published import published_namespace_router
from rag_assets.core.errors import CatalogueBusy, ConfigError
from rag_assets.core.store.answers import AnswerFilter, answer_facets, list_answers
from rag_assets.core.store.api_tokens import askers
from rag_assets.core.store.lineage import unknown_answer
from rag_assets.core.store.publication import IndexPin
from rag_assets.serving.audit import document_dict, trace_dict
from rag_assets.serving.catalogue_reads import (
    PublishedPairs,
    check_collections,
    read_catalogue,
)
from rag_assets.serving.models import WarmModels

if TYPE_CHECKING:  # the answering path imports the models' code: loaded when an ask needs it
    from rag_assets.serving.asking import AskResult


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
        document: str | None = None,
    ) -> tuple[list[Any], list[IndexPin]]:
        """Top-k passages and the published pair(s) they came from. `collections` ['all']: the
        ones the namespace router picks; `document`: only that document's passages (doc id, file
        name or title). A BM25 search without reranker loads no model."""
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
        documents = self.documents(collections and names, document)
        if mode == "bm25" and reranker is None:
            # no model and no lancedb: the light path a cold CLI search takes
            from rag_assets.core.index.full_text import full_text_search

            found = full_text_search(
                self.tables.dataset_uri,
                query,
                k=k,
                collections=collections and names,
                version=version,
                documents=documents,
            )
            return found, pairs
        embedder = self.models.embedder() if mode != "bm25" else None
        rerank = self.models.reranker(reranker) if reranker else None
        hits = search(
            self.tables.at(version),
            embedder,
            query,
            mode=mode,
            k=k,
            collections=collections and names,
            reranker=rerank,
            documents=documents,
        )
        return hits, pairs

    def documents(self, collections: list[str] | None, name: str | None) -> list[str] | None:
        """The doc ids `name` names in `collections` (None: all), None without a name."""
        if not name:
            return None
        from rag_assets.serving.asking import named_documents

        with read_catalogue(self.on_wait) as con:
            return named_documents(con, collections or check_collections(con, None), name)

    def routed_collections(self, query: str) -> list[str]:
        """The collections the published namespace router picks for `query` (collection `all`)."""
        with read_catalogue(self.on_wait) as con:
            folder = published_namespace_router(con)
        return self.models.routed_collections(query, folder)

    def ask(
        self,
        question: str,
        *,
        collection: str | None = None,
        strategy: str = "rdr2",
        options: AskOptions | None = None,
        source: str = "cli",
        on_text: Note | None = None,
        on_note: Note | None = None,
        asked_by: str | None = None,
    ) -> AskResult:
        """Answer `question` with the evaluated configuration of `strategy` (options override
        it) and store the answer with its lineage; `on_text` receives the reader's text as it is
        generated (streaming), `on_note` each note (fallbacks, the index used); `asked_by`: the
        name of the service's API token that asked (recorded with the answer)."""
        # the answering path imports the models' code: only when something is asked
        from rag_assets.serving.asking import Ask

        asking = Ask(self, on_note)
        result = asking.answer(question, collection, strategy, options or AskOptions(), source, on_text)
        if asked_by is not None:
            from rag_assets.core.store.api_tokens import record_asker
            from rag_assets.core.store.connections import catalogue_connection
            from rag_assets.serving.catalogue_reads import catalogue_path

            with catalogue_connection(catalogue_path(), read_only=False, on_wait=self.on_wait) as con:
                record_asker(con, result.record.answer_id, asked_by)
        return result

    def trace(self, answer_id: str, may_read: Callable[[str], bool] | None = None) -> dict[str, Any]:
        """The audit of a stored answer: cited spans then and now, versions, source files. With
        `may_read(collection)` false for the answer's collection: the error of an unknown id, word
        for word (a caller without rights learns nothing of the answer, not even that it exists)."""
        with read_catalogue(self.on_wait) as con:
            found = trace_dict(con, answer_id)
        if may_read is not None and not may_read(found["answer"]["collection"]):
            raise unknown_answer(answer_id)
        return found

    def answers(self, **filters: Any) -> dict[str, Any]:
        wanted = AnswerFilter(**filters)
        with read_catalogue(self.on_wait) as con:
            rows = list_answers(con, wanted)
            facets = answer_facets(con, wanted.within)
            asked_by = askers(con, [r.answer_id for r in rows])
        return {
            "answers": [{**r.to_dict(), "asked_by": asked_by.get(r.answer_id)} for r in rows],
            "facets": facets,
        }

    def document(self, collection: str, doc_id: str) -> dict[str, Any]:
        with read_catalogue(self.on_wait) as con:
            check_collections(con, [collection])
            return document_dict(con, collection, doc_id)
