"""`answer_policy`: the measured parts of each collection's ask policy, published for every ask.

Downstream of the routers and the passage reranker (what an ask routes and quotes with), it
answers the routers' validation questions (train split, never dev or test) with the spec an ask
runs by default, in both forms, and publishes (published_models, kind `answer_policy`):
- the default answer form: a quote unless the reader is right more often beyond noise
  (core/answering/policy/default_form.py);
- the relevance floor below which an ask says the documents do not answer
  (core/answering/no_answer.py).
`rag ask`, the service and the `answers` rows read them from there; nothing else writes them.
"""

import time

import dagster as dg
from dagster_duckdb import DuckDBResource

from rag_assets.core.answering.policy.measure import measure_ask_policy, validation_questions
from rag_assets.core.answering.policy.sessions import open_session
from rag_assets.core.answering.published import ANSWER_POLICY_KIND
from rag_assets.core.store.published_models import PublishedModel, publish_models
from rag_assets.defs.deployment import CATALOGUE_POOL, GPU_STEP_TAGS, TRANSIENT_RETRY
from rag_assets.defs.index.passage_reranker import passage_reranker
from rag_assets.defs.metadata import markdown_table
from rag_assets.defs.partitions import collection_partitions
from rag_assets.defs.routing.router_adapter import router_adapter
from resources.embedder import EmbedderResource
from resources.llm import LLMResource
from resources.session_models import ResourceModels
from resources.vectors import VectorStoreResource


@dg.asset(
    pool=CATALOGUE_POOL,
    retry_policy=TRANSIENT_RETRY,
    op_tags=GPU_STEP_TAGS,
    partitions_def=collection_partitions,
    deps=["passage_index", "questions", "document_cards", router_adapter, passage_reranker],
    group_name="evaluation",
    kinds={"python", "duckdb"},
    description="The collection's default answer form (a quote unless the reader is right more often beyond noise) "
    "and relevance floor, measured on the routers' validation questions with the spec an ask runs, and "
    "published for `rag ask`, the service and the `answers` rows.",
)
def answer_policy(
    context: dg.AssetExecutionContext,
    catalogue: DuckDBResource,
    embedder: EmbedderResource,
    vectors: VectorStoreResource,
    llm: LLMResource,
) -> dg.MaterializeResult:
    started = time.perf_counter()
    collection = context.partition_key
    with catalogue.get_connection() as con:
        questions = validation_questions(con, collection)
        session = open_session(con, collection, ResourceModels(embedder, vectors, llm), trees=None if questions else {})
    if session.published.index.version is None:
        raise dg.Failure(f"{collection}: no published passage index: materialize `passage_index` first")
    choice = measure_ask_policy(session, questions)
    context.log.info(f"{collection}: default answer form {choice.note}")
    piece = PublishedModel(ANSWER_POLICY_KIND, choice.form, details=choice.details(), run_id=context.run.run_id)
    with catalogue.get_connection() as con:
        publish_models(con, collection, [piece], kinds=[ANSWER_POLICY_KIND])
    floor = choice.floor
    rows = [
        ("default form", choice.form),
        ("why", choice.reason),
        ("validation questions with a gold answer", choice.questions),
        ("reader right", choice.generated_right),
        ("quote right", choice.extractive_right),
        (
            "95% interval of reader - quote",
            f"{choice.interval[0]:+.3f} .. {choice.interval[1]:+.3f}" if choice.interval else "-",
        ),
        (
            "relevance floor",
            f"{floor.value:.3f} ({floor.scorer}, {floor.questions} questions)" if floor else "none measured",
        ),
    ]
    return dg.MaterializeResult(
        metadata={
            "default_form": choice.form,
            "questions": choice.questions,
            **({"relevance_floor": round(floor.value, 4)} if floor else {}),
            "policy": dg.MetadataValue.md(markdown_table(["", ""], rows)),
            "seconds": round(time.perf_counter() - started, 1),
        }
    )
