"""The `answers` step that measures each collection's default answer form (generated or
extractive) on the routers' validation questions and records it with the published models
(core/answering/default_form.py says how it is chosen)."""

from __future__ import annotations

import dataclasses

import dagster as dg
from dagster_duckdb import DuckDBResource

from rag_assets.core.answering.default_form import FormChoice, choose_form
from rag_assets.core.answering.session import AnsweringSession
from rag_assets.core.answering.types import StrategySpec
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.routing.held_out_routing import load_routing_examples
from rag_assets.core.routing.samples import SYNTHETIC_QID_PREFIX
from rag_assets.core.store.published_models import PublishedModel, publish_models
from rag_assets.core.store.question_table import load_question_rows
from rag_assets.defs.evaluation.strategy_config import BUDGET_SOURCE, interactive_spec


def validation_questions(con, collection: str) -> list[Question]:
    """The real questions of the routing data's validation fold (train-split questions only)."""
    qids = {v.qid for v in load_routing_examples(con, collection, fold="validation", synthetic=False)}
    qids = {q for q in qids if not q.startswith(SYNTHETIC_QID_PREFIX)}
    return [q for q in load_question_rows(con, collection) if q.qid in qids and q.split == "train"]


def asked_spec(session: AnsweringSession, style: str) -> StrategySpec:
    """The row `rag ask` answers with by default (rdr2), or rag-hybrid where rdr2 cannot run."""
    spec = interactive_spec("rdr2", style, session.published.llm_adapter)
    return spec if session.missing_piece(spec) is None else interactive_spec(BUDGET_SOURCE, style, None)


def measure_default_form(session: AnsweringSession, questions: list[Question], style: str) -> FormChoice:
    """Both forms of the asked row on `questions`, budgeted as `rag ask` budgets them."""
    spec = asked_spec(session, style)
    queries = [q.query for q in questions]
    budgets = None
    if spec.evidence_budget_from:
        budgets = session.evidence_words(queries, interactive_spec(spec.evidence_budget_from, style, None))
    generated = session.run(queries, spec, evidence_budgets=budgets)
    extractive = session.run(queries, dataclasses.replace(spec, answer_form="extractive"), evidence_budgets=budgets)
    return choose_form(questions, generated, extractive)


def publish_default_form(
    context: dg.AssetExecutionContext, catalogue: DuckDBResource, session: AnsweringSession, style: str
) -> FormChoice:
    """Measure the collection's better form and record it in `published_models` (kind answer_form)."""
    collection = session.collection
    with catalogue.get_connection() as con:
        questions = validation_questions(con, collection)
    choice = measure_default_form(session, questions, style) if questions else choose_form([], [], [])
    context.log.info(f"{collection}: default answer form {choice.note}")
    piece = PublishedModel("answer_form", choice.form, details=choice.details(), run_id=context.run.run_id)
    with catalogue.get_connection() as con:
        publish_models(con, collection, [piece], kinds=["answer_form"])
    return choice
