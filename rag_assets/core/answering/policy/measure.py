"""The measured parts of the ask policy: rdr2's routing settings, learned on the collection's
train-split questions (`routing_choice`), then the default answer form and relevance floor,
measured on the routers' validation questions with the spec an ask runs (`asks.plan_ask`, routing
with the settings just learned), both forms budgeted as an ask budgets them. The `answer_policy`
asset publishes the result; nothing else measures or writes it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import duckdb

from rag_assets.core.answering.no_answer import MIN_QUESTIONS, calibrate_floor, evidence_relevance, off_topic_questions
from rag_assets.core.answering.policy.asks import plan_ask
from rag_assets.core.answering.policy.budgets import evidence_budgets
from rag_assets.core.answering.policy.catalogue import ASKED_BY_DEFAULT, BUDGET_SOURCE, named_spec
from rag_assets.core.answering.policy.default_form import FormChoice, choose_form
from rag_assets.core.answering.policy.routing_choice import (
    RoutingChoice,
    RoutingSetting,
    candidate_settings,
    choose_routing,
)
from rag_assets.core.answering.session import AnsweringSession
from rag_assets.core.answering.types import AnswerOutcome, StrategySpec
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.evaluation.held_out_evidence import held_out_evidence
from rag_assets.core.evaluation.scoring import routing_metric
from rag_assets.core.routing.held_out_routing import load_routing_examples
from rag_assets.core.routing.samples import SYNTHETIC_QID_PREFIX
from rag_assets.core.store.question_table import load_question_rows


def validation_questions(con: duckdb.DuckDBPyConnection, collection: str) -> list[Question]:
    """The real questions of the routing data's validation fold (train-split questions only)."""
    qids = {v.qid for v in load_routing_examples(con, collection, fold="validation", synthetic=False)}
    qids = {q for q in qids if not q.startswith(SYNTHETIC_QID_PREFIX)}
    return [q for q in load_question_rows(con, collection) if q.qid in qids and q.split == "train"]


def routing_questions(con: duckdb.DuckDBPyConnection, collection: str) -> list[Question]:
    """The real train-split questions (every fold: the settings are chosen cross-fitted), never a
    dev or test one, which the report scores."""
    return [
        q
        for q in load_question_rows(con, collection)
        if q.split == "train" and not q.qid.startswith(SYNTHETIC_QID_PREFIX) and not q.not_answerable
    ]


def asked_spec(
    session: AnsweringSession, questions: Sequence[Question], routing: RoutingChoice | None = None
) -> StrategySpec:
    """The spec an ask without options runs on this collection, in the generated form (the form
    is what is being measured), routing with `routing` (None: the evaluated defaults)."""
    published = dataclasses.replace(session.published, routing_choice=routing)
    spec = plan_ask(ASKED_BY_DEFAULT, published, questions)
    return dataclasses.replace(spec, answer_form="generated", name=spec.name.removesuffix("-extractive"))


def measure_routing(session: AnsweringSession, questions: Sequence[Question]) -> RoutingChoice:
    """rdr2's routing settings for the collection: every candidate of the grid routes `questions`
    as an ask routes (the asked router, retrieve-and-read's words as the budget), scored by the
    set's routing metric (`scoring.routing_metric`: page hit on a paged set), and `choose_routing`
    picks by its rule."""
    spec = asked_spec(session, questions)
    default = RoutingSetting.of(spec)
    router = session.router(spec.router)
    thresholds = getattr(router, "thresholds", None)
    grid = candidate_settings(default, getattr(thresholds, "expand", None))
    baseline = named_spec(BUDGET_SOURCE, spec.answer_style, session.published.llm_adapter)
    held = held_out_evidence(
        questions,
        baseline=baseline,
        routed=spec,
        retrieve=session.retrieve,
        trees=session.trees,
        choose_metric=routing_metric,
    )
    if held is None:
        return choose_routing({default: []}, [], router=spec.router, metric="")
    scores = {setting: held.per_question(router, setting.applied(spec, spec.router))[0] for setting in grid}
    measured = [i for i, value in enumerate(scores[default]) if value is not None]
    return choose_routing(
        {s: [float(values[i] or 0.0) for i in measured] for s, values in scores.items()},
        [questions[i].qid for i in measured],
        router=spec.router,
        metric=held.metric,
    )


def measure_ask_policy(
    session: AnsweringSession, questions: Sequence[Question], routing: RoutingChoice | None = None
) -> FormChoice:
    """Both forms of the asked spec (routing with `routing`) on `questions`, and the relevance
    floor between them and the packaged off-topic questions; nothing is held to a floor while it
    is being measured."""
    if not questions:
        return choose_form([], [], [])
    spec = asked_spec(session, questions, routing)
    extracted = dataclasses.replace(spec, answer_form="extractive", name=f"{spec.name}-extractive")
    queries = [q.query for q in questions]
    budgets = evidence_budgets(session, queries, spec)
    generated = session.run(queries, spec, evidence_budgets=budgets, use_floor=False)
    extractive = session.run(queries, extracted, evidence_budgets=budgets, use_floor=False)
    answered = relevances(session, [o for q, o in zip(questions, extractive) if not q.not_answerable])
    off_topic = relevances(session, off_topic_evidence(session, extracted)) if len(answered) >= MIN_QUESTIONS else []
    floor = calibrate_floor(answered, off_topic, session.embedder.model_id)
    return dataclasses.replace(choose_form(questions, generated, extractive), floor=floor)


def off_topic_evidence(session: AnsweringSession, spec: StrategySpec) -> list[AnswerOutcome]:
    """`spec`'s evidence for the packaged off-topic questions, budgeted as an ask budgets it."""
    queries = off_topic_questions()
    return session.run(queries, spec, evidence_budgets=evidence_budgets(session, queries, spec), use_floor=False)


def relevances(session: AnsweringSession, outcomes: Sequence[AnswerOutcome]) -> list[float | None]:
    return [evidence_relevance(o.question, o.citations, session.relevance_scorer) for o in outcomes]
