"""Answers on the single store: each evaluation question searched, routed and answered within its
own document only (its gold document), as a per-document index would serve it.

FinanceBench's public anchors are given for both stores (a shared store of every filing, a
store per filing), so the `answers` asset stores the forms an ask chooses between, rag-hybrid and
rdr2, generated and extractive, on the single store beside the shared store's rows, named
'... (single store)'. rdr2's rows there are budgeted, question by question, by the words
rag-hybrid gave on the same single store, as on the shared store.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from rag_assets.core.answering.session import AnsweringSession
from rag_assets.core.answering.types import AnswerOutcome, StrategySpec
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.evaluation.evidence import SINGLE_SUFFIX, own_documents

# budget sources first: their words are the budgets of the rdr2 rows after them
SINGLE_STORE_STRATEGIES = ("rag-hybrid", "rag-hybrid-extractive", "rdr2", "rdr2-extractive")


def answers_in_own_documents(
    session: AnsweringSession,
    questions: Sequence[Question],
    spec: StrategySpec,
    own: Mapping[str, Sequence[str]],
    *,
    budgets: Sequence[int] | None = None,
    use_floor: bool = True,
) -> list[AnswerOutcome]:
    """`spec`'s answers to `questions`, each searched and routed only within `own[qid]` (one
    question at a time: the session's documents change per question); `budgets`: each
    question's evidence words at most."""
    outcomes: list[AnswerOutcome] = []
    try:
        for index, question in enumerate(questions):
            session.documents = list(own[question.qid])
            budget = None if budgets is None else [budgets[index]]
            outcomes += session.run([question.query], spec, evidence_budgets=budget, use_floor=use_floor)
    finally:
        session.documents = None
    return outcomes


@dataclasses.dataclass(frozen=True)
class SingleStoreRun:
    """One strategy's answers on the single store, to the questions that have their own document."""

    spec: StrategySpec  # named '<strategy> (single store)'
    questions: list[Question]
    outcomes: list[AnswerOutcome]


def single_store_answers(
    session: AnsweringSession, questions: Sequence[Question], specs: Mapping[str, StrategySpec]
) -> list[SingleStoreRun]:
    """The `SINGLE_STORE_STRATEGIES` among `specs` on the single store (questions without a
    document of their own in the collection are left out: they have no single store)."""
    own = own_documents(questions, sorted(session.trees))
    asked = [q for q in questions if q.qid in own]
    runs: list[SingleStoreRun] = []
    words: dict[str, list[int]] = {}
    for name in SINGLE_STORE_STRATEGIES:
        if name not in specs or not asked:
            continue
        spec = dataclasses.replace(specs[name], name=name + SINGLE_SUFFIX)
        budgets = words.get(spec.evidence_budget_from or "")
        outcomes = answers_in_own_documents(session, asked, spec, own, budgets=budgets)
        words.setdefault(name, [o.evidence_words for o in outcomes])
        runs.append(SingleStoreRun(spec, asked, outcomes))
    return runs
