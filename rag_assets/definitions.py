"""The code location: every asset, check, resource, job, schedule and sensor, assembled once."""

from __future__ import annotations

import dagster as dg

from checks import corpus as corpus_checks
from checks import evaluation as evaluation_checks
from checks import index as index_checks
from checks import router as router_checks
from checks import routing_data as routing_data_checks
from checks import structure as structure_checks
from rag_assets.core.process_priority import lower_priority
from rag_assets.core.settings import pipeline_niceness
from rag_assets.defs.answer_events_sensor import answer_events_sensor
from rag_assets.defs.automation import (
    dead_run_sensor,
    passage_index_job,
    reindex_job,
    reindex_schedule,
    source_change_sensor,
)
from rag_assets.defs.corpus.questions import questions
from rag_assets.defs.corpus.source_documents import source_documents
from rag_assets.defs.deployment import executor_from_env
from rag_assets.defs.evaluation.answer_policy import answer_policy
from rag_assets.defs.evaluation.answers import answers
from rag_assets.defs.evaluation.evaluation_report import evaluation_report
from rag_assets.defs.evaluation.evidence_evaluation import evidence_evaluation
from rag_assets.defs.index.namespace_router import namespace_router
from rag_assets.defs.index.passage_index import passage_index, passages
from rag_assets.defs.index.passage_reranker import passage_reranker
from rag_assets.defs.routing.reorder_policy import reorder_policy
from rag_assets.defs.routing.router_adapter import router_adapter
from rag_assets.defs.routing.router_metrics import router_metrics
from rag_assets.defs.routing.routing_data import routing_actions, routing_subtrees, synthetic_questions
from rag_assets.defs.served_answers import served_answers
from rag_assets.defs.side_tables import SIDE_TABLES
from rag_assets.defs.structure.document_cards import document_cards
from rag_assets.defs.structure.document_trees import document_trees
from resources.project import project_resources

# Whatever loads the pipeline (`rag run`, `rag index`, a run or step worker, the sensors' daemon)
# yields the CPU to a service on the same machine (core/process_priority.py says why).
lower_priority(pipeline_niceness())

ALL_ASSETS = [
    source_documents,
    document_trees,
    document_cards,
    passages,
    passage_index,
    questions,
    synthetic_questions,
    routing_subtrees,
    routing_actions,
    router_adapter,
    router_metrics,
    passage_reranker,
    namespace_router,
    reorder_policy,
    answer_policy,
    answers,
    evidence_evaluation,
    evaluation_report,
]
ALL_CHECKS = dg.load_asset_checks_from_modules(
    [corpus_checks, structure_checks, index_checks, routing_data_checks, router_checks, evaluation_checks]
)

# The main job: the whole graph for one collection partition (the side tables are written by the
# steps that own them, so selecting them adds no step).
main_job = dg.define_asset_job(
    "main_job",
    selection=dg.AssetSelection.all(),
    description="Materialize the whole asset graph (and its checks) for one collection.",
)

defs = dg.Definitions(
    assets=[*ALL_ASSETS, *SIDE_TABLES, served_answers],
    asset_checks=ALL_CHECKS,
    jobs=[main_job, reindex_job, passage_index_job],
    schedules=[reindex_schedule],
    sensors=[source_change_sensor, dead_run_sensor, answer_events_sensor],
    resources=project_resources(),
    # In-process by default (models load once per run, not once per step); RAG_EXECUTOR=celery is
    # the cluster profile (`make cluster`, README "Scale out").
    executor=executor_from_env(),
)
