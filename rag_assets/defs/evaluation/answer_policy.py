"""`answer_policy`: the measured parts of each collection's ask policy, published for every ask.

Downstream of the routers and the passage reranker (what an ask routes and quotes with), it
learns rdr2's routing settings on the collection's train-split questions, then answers the routers'
validation questions (train split, never dev or test) with the spec an ask runs by default, in
both forms, and publishes (published_models, kind `answer_policy`):
- rdr2's routing settings: first-stage passages, documents routed, the scoring router's expand
  threshold (core/answering/policy/routing_choice.py), which every rdr2 ask and the report's rdr2
  rows route with;
- the default answer form: a quote unless the reader is right more often beyond noise
  (core/answering/policy/default_form.py);
- the relevance floor below which an ask says the documents do not answer
  (core/answering/no_answer.py).
`rag ask`, the service and the `answers` rows read them from there; nothing else writes them.
"""

import time

import dagster as dg
from dagster_duckdb import DuckDBResource

from rag_assets.core.answering.policy.default_form import FormChoice
from rag_assets.core.answering.policy.measure import (
    measure_ask_policy,
    measure_routing,
    routing_questions,
    validation_questions,
)
from rag_assets.core.answering.policy.routing_choice import RoutingChoice, routing_grid
from rag_assets.core.answering.policy.sessions import open_session
from rag_assets.core.answering.published import ANSWER_POLICY_KIND, ROUTING_DETAILS
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
    description="rdr2's routing settings (first-stage passages, documents routed, expand threshold), learned on "
    "the collection's train-split questions, and the default answer form (a quote unless the reader is right more "
    "often beyond noise) and relevance floor, measured on the routers' validation questions with the spec an ask "
    "runs; published for `rag ask`, the service and the `answers` and `evidence_evaluation` rows.",
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
        train = routing_questions(con, collection)
        models = ResourceModels(embedder, vectors, llm)
        session = open_session(con, collection, models, trees=None if questions or train else {})
    if session.published.index.version is None:
        raise dg.Failure(f"{collection}: no published passage index: materialize `passage_index` first")
    routing = measure_routing(session, train)
    context.log.info(f"{collection}: routing with {routing.setting.label} ({routing.reason})")
    choice = measure_ask_policy(session, questions, routing)
    context.log.info(f"{collection}: default answer form {choice.note}")
    details = {**choice.details(), ROUTING_DETAILS: routing.details()}
    piece = PublishedModel(ANSWER_POLICY_KIND, choice.form, details=details, run_id=context.run.run_id)
    with catalogue.get_connection() as con:
        publish_models(con, collection, [piece], kinds=[ANSWER_POLICY_KIND])
    return dg.MaterializeResult(
        metadata={**_policy_metadata(choice, routing), "seconds": round(time.perf_counter() - started, 1)}
    )


def _policy_metadata(choice: FormChoice, routing: RoutingChoice) -> dict[str, object]:
    """What the UI shows of the published policy: the routing settings with their grid, the
    default form with its counts, and the relevance floor."""
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
    return {
        "routing": routing.setting.label,
        "routing_why": routing.reason,
        "routing_grid": dg.MetadataValue.md(
            markdown_table(*routing_grid(routing)) if routing.means else "no train question measured: the defaults"
        ),
        "default_form": choice.form,
        "questions": choice.questions,
        **({"relevance_floor": round(floor.value, 4)} if floor else {}),
        "policy": dg.MetadataValue.md(markdown_table(["", ""], rows)),
    }
