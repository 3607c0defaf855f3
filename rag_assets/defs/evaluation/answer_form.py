"""The `answers` step that measures each collection's default answer form (generated or
extractive) and its relevance floor on the routers' validation questions and records them with the
published models (core/answering/default_form.py says how the form is chosen, no_answer.py the floor)."""

from __future__ import annotations

import dataclasses

import dagster as dg
from dagster_duckdb import DuckDBResource

from rag_assets.core.answering.default_form import FormChoice, choose_form
from rag_assets.core.answering.no_answer import (
    MIN_QUESTIONS,
    calibrate_floor,
    evidence_relevance,
    off_topic_questions,
)
from rag_assets.core.answering.session import AnsweringSession
from rag_assets.core.answering.types import AnswerOutcome, StrategySpec
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
    budgets = evidence_budgets(session, queries, spec, style)
    # measured as the reader and the scorer answer, no floor applied: the floor is measured here too
    generated = session.run(queries, spec, evidence_budgets=budgets, use_floor=False)
    extracted = dataclasses.replace(spec, answer_form="extractive")
    extractive = session.run(queries, extracted, evidence_budgets=budgets, use_floor=False)
    answered = relevances(session, [o for q, o in zip(questions, extractive) if not q.not_answerable])
    off_topic = (
        relevances(session, off_topic_evidence(session, extracted, style)) if len(answered) >= MIN_QUESTIONS else []
    )
    floor = calibrate_floor(answered, off_topic, session.embedder.model_id)
    return dataclasses.replace(choose_form(questions, generated, extractive), floor=floor)


def off_topic_evidence(session: AnsweringSession, spec: StrategySpec, style: str) -> list[AnswerOutcome]:
    """`spec`'s evidence for the packaged off-topic questions, budgeted as `rag ask` budgets it."""
    queries = off_topic_questions()
    return session.run(queries, spec, evidence_budgets=evidence_budgets(session, queries, spec, style), use_floor=False)


def evidence_budgets(session: AnsweringSession, queries: list[str], spec: StrategySpec, style: str) -> list[int] | None:
    """The words `spec` may give the reader per question, as `rag ask` budgets them (rdr2: at most
    the words rag-hybrid gives); None: unbudgeted."""
    if not spec.evidence_budget_from:
        return None
    return session.evidence_words(queries, interactive_spec(spec.evidence_budget_from, style, None))


def relevances(session: AnsweringSession, outcomes: list[AnswerOutcome]) -> list[float | None]:
    return [evidence_relevance(o.question, o.citations, session.relevance_scorer) for o in outcomes]


def publish_default_form(
    context: dg.AssetExecutionContext, catalogue: DuckDBResource, session: AnsweringSession, style: str
) -> FormChoice:
    """Measure the collection's better form and relevance floor, record them in `published_models`
    (kind answer_form), and hold `session`'s answers to that floor from now on."""
    collection = session.collection
    with catalogue.get_connection() as con:
        questions = validation_questions(con, collection)
    choice = measure_default_form(session, questions, style) if questions else choose_form([], [], [])
    context.log.info(f"{collection}: default answer form {choice.note}")
    piece = PublishedModel("answer_form", choice.form, details=choice.details(), run_id=context.run.run_id)
    with catalogue.get_connection() as con:
        publish_models(con, collection, [piece], kinds=["answer_form"])
    # the rows answered next are held to the floor just measured, as `rag ask` will be
    session.published = dataclasses.replace(session.published, default_form=choice.form, form_choice=piece.details)
    return choice
