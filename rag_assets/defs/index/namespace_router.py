"""`namespace_router`: which collections (namespaces) a query should search, over every collection
of the passage index at once (core/index/namespace_routing.py).

Not partitioned: it routes between the partitions. It reads every collection's passage vectors
from the index (document centroids, nothing re-embedded), calibrates its margin on each
collection's synthetic and train questions, and measures itself on the evaluation questions
(dev + test) of every collection: namespace accuracy, share of the index searched, and dense
search latency over the routed namespaces against the whole index.
"""

import os
import time
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource
from pydantic import Field

from rag_assets.core.index.embedding import Embedder
from rag_assets.core.index.namespace_routing import (
    ROUTER_RECORD,
    NamespaceRouter,
    RoutingQuality,
    publish_namespace_router,
    routing_quality,
    train_namespace_router,
)
from rag_assets.core.index.retraining import RetrainDecision, TrainingData, training_data
from rag_assets.core.index.retrieval import search
from rag_assets.core.index.vector_index import PassageIndex
from rag_assets.core.settings import data_dir
from rag_assets.core.store.passage_table import passage_hashes
from rag_assets.core.store.published_models import ALL_COLLECTIONS, PublishedModel, publish_models, published_models
from rag_assets.core.store.question_table import load_question_rows
from rag_assets.defs.deployment import CATALOGUE_POOL
from rag_assets.defs.index.retrain_config import RETRAIN_FIELDS, RetrainConfig, kept_model_result, retrain_or_keep
from rag_assets.defs.metadata import markdown_table
from resources.embedder import EmbedderResource
from resources.vectors import VectorStoreResource


def namespace_routers_dir() -> Path:
    return data_dir() / "namespaces"


class NamespaceRouterConfig(RetrainConfig):
    target_accuracy: float = Field(
        default=0.95, gt=0, le=1, description="Namespace accuracy the margin must reach on the pseudo-queries."
    )
    max_namespaces: int = Field(default=0, ge=0, description="Namespaces searched per query at most (0 = no cap).")
    pseudo_queries: int = Field(
        default=60, ge=0, le=100000, description="Synthetic + train questions per collection calibrating the margin."
    )
    latency_queries: int = Field(
        default=12, ge=0, le=1000, description="Evaluation questions timed for search latency."
    )


@dg.asset(
    pool=CATALOGUE_POOL,
    deps=["passage_index", "questions", "synthetic_questions"],
    group_name="index",
    kinds={"python", "lancedb"},
    description="The namespace router over every collection of the passage index (document centroids of the "
    "packaged embedder, margin calibrated on each collection's pseudo-queries), with namespace accuracy, share "
    "of the index searched and search latency with and without routing on the evaluation questions.",
)
def namespace_router(
    context: dg.AssetExecutionContext,
    config: NamespaceRouterConfig,
    catalogue: DuckDBResource,
    embedder: EmbedderResource,
    vectors: VectorStoreResource,
) -> dg.MaterializeResult:
    model = embedder.get()
    index = vectors.index(model)
    collections = sorted(index.counts_by_collection())
    if not collections:
        raise dg.Failure("the passage index holds no collection: materialize `passage_index` first")
    questions = _namespace_questions(catalogue, collections, config.pseudo_queries)
    decision, data, published = _retrain_decision(catalogue, collections, questions, config)
    context.log.info(f"namespace router: {decision.reason}")
    if not decision.retrain:
        return kept_model_result(published, decision, "router_id")
    router, grid = train_namespace_router(
        index, questions.pseudo, target_accuracy=config.target_accuracy, max_namespaces=config.max_namespaces
    )
    folder = publish_namespace_router(router, namespace_routers_dir(), {"collections": collections})
    os.utime(folder / ROUTER_RECORD)  # an identical router published again is the latest one again
    with catalogue.get_connection() as con:
        details = {"training_data": data.to_json()}
        piece = PublishedModel("namespaces", router.router_id, str(folder), details, run_id=context.run.run_id)
        publish_models(con, ALL_COLLECTIONS, [piece], kinds=["namespaces"])

    texts = [q for name in collections for q in questions.evaluation[name]]
    gold = [name for name in collections for _ in questions.evaluation[name]]
    query_vectors = model.encode(texts, progress=False)
    routed = router.route(query_vectors) if texts else []
    quality = routing_quality(router, routed, gold)
    latency_all, latency_routed = _search_latencies(index, model, texts, routed, config.latency_queries)
    context.log.info(
        f"namespace router over {collections}: accuracy {quality.accuracy:.3f}, "
        f"{quality.share_searched:.1%} of the index searched, margin {router.margin}"
    )
    return dg.MaterializeResult(
        data_version=dg.DataVersion(router.router_id),
        metadata={
            "router_id": router.router_id,
            "path": str(folder),
            "namespaces": ", ".join(collections),
            "documents": len(router.owners),
            "margin": router.margin,
            "evaluation_questions": quality.queries,
            "evaluated_on": questions.evaluated_on,
            "namespace_accuracy": round(quality.accuracy, 4),
            "share_of_index_searched": round(quality.share_searched, 4),
            "dense_search_ms_whole_index": round(latency_all, 2),
            "dense_search_ms_routed": round(latency_routed, 2),
            **_quality_tables(router, quality, grid),
            **decision.metadata(),
        },
    )


def _retrain_decision(
    catalogue: DuckDBResource,
    collections: list[str],
    questions: "_NamespaceQuestions",
    config: NamespaceRouterConfig,
) -> tuple[RetrainDecision, TrainingData, PublishedModel | None]:
    """Whether to train again; what the router would learn from now (every collection's passages,
    the pseudo-queries, the settings); the router published now."""
    with catalogue.get_connection() as con:
        pairs = [pair for name in collections for pair in passage_hashes(con, name)]
        published = published_models(con, ALL_COLLECTIONS).get("namespaces")
    pseudo = [f"{name}\t{q}" for name, queries in sorted(questions.pseudo.items()) for q in queries]
    settings = config.model_dump(exclude={*RETRAIN_FIELDS, "latency_queries"})
    data = training_data(pairs, pseudo, settings)
    return retrain_or_keep(published, data, config), data, published


@dataclass(frozen=True)
class _NamespaceQuestions:
    """Per collection: the pseudo-queries calibrating the margin and the questions measuring the router."""

    pseudo: dict[str, list[str]]
    evaluation: dict[str, list[str]]
    evaluated_on: str  # "dev,test", or "all questions" when the catalogue has no evaluation question


def _namespace_questions(catalogue: DuckDBResource, collections: list[str], pseudo_queries: int) -> _NamespaceQuestions:
    """Each collection's synthetic + train questions (at most `pseudo_queries`) and dev + test ones."""
    pseudo: dict[str, list[str]] = {}
    evaluation: dict[str, list[str]] = {}
    with catalogue.get_connection() as con:
        for name in collections:
            queries = [q.query for q in load_question_rows(con, name, table="synthetic_questions")]
            queries += [q.query for q in load_question_rows(con, name, "train")]
            pseudo[name] = queries[:pseudo_queries]
            evaluation[name] = [q.query for q in load_question_rows(con, name, "dev,test")]
    # a catalogue whose questions are all train questions is measured on them (and says so)
    evaluated_on = "dev,test" if any(evaluation.values()) else "all questions"
    if not any(evaluation.values()):
        with catalogue.get_connection() as con:
            evaluation = {name: [q.query for q in load_question_rows(con, name)] for name in collections}
    return _NamespaceQuestions(pseudo, evaluation, evaluated_on)


def _search_latencies(
    index: PassageIndex, model: Embedder, texts: list[str], routed: list, latency_queries: int
) -> tuple[float, float]:
    """Mean dense search milliseconds over every namespace and over the routed ones, on a sample."""
    timed = list(range(len(texts)))[:: max(1, len(texts) // max(latency_queries, 1))][:latency_queries]

    def mean_ms(scoped: bool) -> float:
        started = time.perf_counter()
        for i in timed:
            search(index, model, texts[i], mode="dense", k=5, collections=routed[i] if scoped else None)
        return 1000 * (time.perf_counter() - started) / max(len(timed), 1)

    return (mean_ms(False), mean_ms(True)) if timed else (0.0, 0.0)


def _quality_tables(
    router: NamespaceRouter, quality: RoutingQuality, grid: dict[str, tuple[float, float]]
) -> dict[str, object]:
    """Accuracy and share searched per namespace, and the margin calibration grid."""
    return {
        "per_namespace": dg.MetadataValue.md(
            markdown_table(
                ["namespace", "passages", "evaluation questions", "accuracy", "share searched"],
                [
                    (n, router.passages[n], q, round(a, 3), round(s, 3))
                    for n, (a, s, q) in quality.per_namespace.items()
                ],
            )
        ),
        "margin_calibration": dg.MetadataValue.md(
            markdown_table(
                ["margin", "pseudo-query accuracy", "share searched"],
                [(m, round(a, 3), round(s, 3)) for m, (a, s) in grid.items()],
            )
        ),
    }
