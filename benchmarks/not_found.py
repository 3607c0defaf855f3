"""Questions the documents do not answer: how often the default answer says so, per evaluation set.

The relevance floor is measured as the `answer_policy` step measures it (core/answering/no_answer.py:
the routers' validation questions, never dev or test) and the collection's default answer (the
strategy and form `rag ask` runs, budgeted as it budgets) answers three kinds of question:

- the set's dev + test questions the documents answer: the share said not found (false refusals,
  goal: low) and token F1 / containment with the floor against without it, paired;
- its dev + test questions the set marks not answerable (ConditionalQA has some): the share said
  not found;
- off-topic questions: the dev + test questions of the other collections in the catalogue (or of
  `--off-topic-catalogue`, for a collection alone in its catalogue such as the built-in corpus),
  up to `--per-set` of each: the share said not found (goal: high).

The last two need no reader: whether an answer is "not found" depends on its evidence alone
(the same evidence either form gathers), so they are gathered in the extractive form.

Each share with its 95% bootstrap interval.

    RAG_DATA_DIR=dagster_home/data-datasets .venv/bin/python -m benchmarks.not_found -c conditionalqa
    RAG_DATA_DIR=dagster_home/data .venv/bin/python -m benchmarks.not_found -c python-reference \\
        --off-topic-catalogue dagster_home/data-datasets/catalogue.duckdb
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np

from benchmarks.common import catalogue_in, dev_test, open_collection
from rag_assets.core.answering.no_answer import below_floor, evidence_relevance, not_found
from rag_assets.core.answering.policy.asks import plan_ask
from rag_assets.core.answering.policy.budgets import evidence_budgets
from rag_assets.core.answering.policy.catalogue import ASKED_BY_DEFAULT
from rag_assets.core.answering.policy.measure import measure_ask_policy, validation_questions
from rag_assets.core.answering.session import AnsweringSession
from rag_assets.core.answering.types import StrategySpec
from rag_assets.core.evaluation.scoring import answer_metrics
from rag_assets.core.routing.metrics import mean_interval
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.question_table import question_collections


def off_topic_questions(path: Path, collection: str, per_set: int) -> dict[str, list]:
    """Up to `per_set` dev + test questions of every other collection of the catalogue at `path`."""
    with catalogue_connection(path, read_only=True) as con:
        names = question_collections(con)
        return {name: dev_test(con, name)[:per_set] for name in names if name != collection}


def share(values: list[float]) -> str:
    if not values:
        return "-"
    low, high = mean_interval(values)
    return f"{np.mean(values):.3f} [{low:.2f}, {high:.2f}] of {len(values)}"


def paired(without: list[float], with_floor: list[float]) -> str:
    diff = np.asarray(with_floor) - np.asarray(without)
    rng = np.random.default_rng(0)
    means = [rng.choice(diff, size=len(diff)).mean() for _ in range(2000)]
    return f"{diff.mean():+.3f} [{np.percentile(means, 2.5):+.2f}, {np.percentile(means, 97.5):+.2f}]"


class Asker:
    """The collection's default answer to questions, without the floor and with it (same evidence)."""

    def __init__(self, session: AnsweringSession, spec: StrategySpec, floor: float) -> None:
        self.session, self.spec, self.floor = session, spec, floor

    def __call__(self, asked: list, *, read: bool = True) -> list[tuple[str, object]]:
        """(the answer without the floor, the outcome with it) per question; `read` False: the
        evidence only (its extractive answer: the same evidence, no reader call)."""
        queries = [q.query for q in asked]
        budgets = evidence_budgets(self.session, queries, self.spec)
        spec = self.spec if read else dataclasses.replace(self.spec, answer_form="extractive")
        rows = []
        for o in self.session.run(queries, spec, evidence_budgets=budgets, use_floor=False):
            relevance = evidence_relevance(o.question, o.citations, self.session.relevance_scorer)
            floored = dataclasses.replace(o, relevance=relevance)
            rows.append((o.answer, not_found(floored, relevance) if below_floor(relevance, self.floor) else floored))
        return rows


def report_answerable(answerable: list, rows: list) -> None:
    """False refusals, and the answer metrics without the floor against with it, paired."""
    print(f"\nanswerable dev+test questions said not found: {share([float(f.not_found) for _, f in rows])}")
    for metric in ("right", "f1", "rouge_l"):
        before = [answer_metrics(a, q.answers).get(metric) for q, (a, _) in zip(answerable, rows)]
        after = [answer_metrics(f.answer, q.answers).get(metric) for q, (_, f) in zip(answerable, rows)]
        pairs = [(b, a) for b, a in zip(before, after) if b is not None and a is not None]
        if pairs:
            b, a = (list(x) for x in zip(*pairs))
            print(f"  {metric}: without floor {np.mean(b):.3f}, with {np.mean(a):.3f}, paired {paired(b, a)}")
    relevances = [f.relevance for _, f in rows if f.relevance is not None]
    print(f"  relevance of answerable: 10% {np.quantile(relevances, 0.1):.3f}, median {np.median(relevances):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-c", "--collection", default="python-reference")
    parser.add_argument("--off-topic-catalogue", type=Path, default=None)
    parser.add_argument("--per-set", type=int, default=25)
    args = parser.parse_args()
    session, questions = open_collection(args.collection, "dev,test")
    with catalogue_connection(catalogue_in(), read_only=True) as con:
        validation = validation_questions(con, args.collection)
    off_topic = off_topic_questions(args.off_topic_catalogue or catalogue_in(), args.collection, args.per_set)
    if not questions or not any(off_topic.values()):
        raise SystemExit(f"need dev+test questions of {args.collection!r} and of another collection")
    started = time.perf_counter()
    floor = measure_ask_policy(session, validation).floor  # as `answer_policy` measures it
    if floor is None:
        raise SystemExit(f"{args.collection!r}: too few validation questions to measure a relevance floor")
    spec = plan_ask(ASKED_BY_DEFAULT, session.published, questions)  # what an ask without options runs
    print(f"# {args.collection}: {spec.name} ({spec.answer_form}), relevance by {floor.scorer}")
    print(f"relevance floor {floor.value:.4f} on {floor.questions} validation questions")
    ask = Asker(session, spec, floor.value)
    answerable = [q for q in questions if not q.not_answerable]
    report_answerable(answerable, ask(answerable))
    marked = [q for q in questions if q.not_answerable]
    if marked:
        said = [float(f.not_found) for _, f in ask(marked, read=False)]
        print(f"marked not answerable, said not found: {share(said)}")
    every: list[float] = []
    for name, asked in off_topic.items():
        said = [float(f.not_found) for _, f in ask(asked, read=False)] if asked else []
        every += said
        print(f"off-topic ({name} questions), said not found: {share(said)}")
    print(f"off-topic, all, said not found: {share(every)}")
    print(f"seconds: {time.perf_counter() - started:.0f}")


if __name__ == "__main__":
    main()
