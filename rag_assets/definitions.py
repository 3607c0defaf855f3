"""The code location: every asset, check, resource, job, schedule and sensor, assembled once."""

from __future__ import annotations

import os

import dagster as dg

from checks import corpus as corpus_checks
from checks import index as index_checks
from checks import router as router_checks
from checks import routing_data as routing_data_checks
from checks import structure as structure_checks
from rag_assets import evaluation as evaluation_module
from rag_assets.answers import answers
from rag_assets.automation import reindex_job, reindex_schedule, source_change_sensor
from rag_assets.corpus import source_documents
from rag_assets.deployment import executor_from_env
from rag_assets.evaluation import evaluation_report
from rag_assets.index import passage_index, passages
from rag_assets.questions import questions
from rag_assets.router import router_adapter, router_metrics
from rag_assets.routing_data import routing_actions, routing_subtrees, synthetic_questions
from rag_assets.structure import document_trees
from resources.catalogue import default_catalogue
from resources.embedder import EmbedderResource
from resources.llm import BaseModelResource, LLMResource
from resources.sources import SourcesResource
from resources.vectors import VectorStoreResource

ALL_ASSETS = [
    source_documents,
    document_trees,
    passages,
    passage_index,
    questions,
    synthetic_questions,
    routing_subtrees,
    routing_actions,
    router_adapter,
    router_metrics,
    answers,
    evaluation_report,
]
ALL_CHECKS = dg.load_asset_checks_from_modules(
    [corpus_checks, structure_checks, index_checks, routing_data_checks, router_checks, evaluation_module]
)

# The main job: the whole graph for one collection partition, ending with the latest stage.
main_job = dg.define_asset_job(
    "main_job",
    selection=dg.AssetSelection.all(),
    description="Materialize the whole asset graph (and its checks) for one collection.",
)


def build_resources() -> dict[str, object]:
    """The defaults (all offline); RAG_BASE_MODEL, RAG_LLM_BACKEND and RAG_OPENAI_* switch the
    models without code (see `LLMResource.from_env`)."""
    return {
        "catalogue": default_catalogue(),
        "sources": SourcesResource(),
        "embedder": EmbedderResource(),
        "vectors": VectorStoreResource(),
        "base_model": BaseModelResource(model_path=os.environ.get("RAG_BASE_MODEL", "")),
        "llm": LLMResource.from_env(),
    }


defs = dg.Definitions(
    assets=ALL_ASSETS,
    asset_checks=ALL_CHECKS,
    jobs=[main_job, reindex_job],
    schedules=[reindex_schedule],
    sensors=[source_change_sensor],
    resources=build_resources(),
    # In-process by default (models load once per run, not once per step); RAG_EXECUTOR=celery is
    # the cluster profile (`make cluster`, README "Scale out").
    executor=executor_from_env(),
)
