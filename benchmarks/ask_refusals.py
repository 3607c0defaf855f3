"""How often the whole ask says "not found", as `rag ask` runs it on a materialized collection: the
collection's default strategy (plan_ask), its evidence budgets, the published relevance floor (the
`answer_policy` asset's) and the term rule (core/answering/known_terms.py), on

- the packaged noise questions (rag_assets/data/noise_questions.txt; goal: at least 0.95),
- the packaged everyday off-topic questions (off_topic_questions.txt; goal: at least 0.95; the
  floor is set above most of them, so this share is not held out),
- the dev + test questions of the catalogue's other collections (up to `--per-set` of each): the
  held-out off-topic questions,
- the collection's own dev + test questions it marks not answerable (ConditionalQA has some),
- its answerable dev + test questions (goal: at most 0.05).

Whether an answer is "not found" is decided before any reading (the term rule and the floor look at
the question and its evidence only), so every question is asked in the extractive form: the same
refusals the generated form gives, without the reader's minutes. Each share comes with its 95%
bootstrap interval and the count refused by the question's words (the rest: by the floor).

    RAG_DATA_DIR=dagster_home/data-datasets .venv/bin/python -m benchmarks.ask_refusals -c nq_wiki
    RAG_DATA_DIR=dagster_home/data .venv/bin/python -m benchmarks.ask_refusals -c python-reference \\
        --other-catalogue dagster_home/data-datasets/catalogue.duckdb
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.common import catalogue_in, dev_test, open_collection
from benchmarks.records import add_record_option, keep_figures
from rag_assets.core.answering.no_answer import noise_questions, off_topic_questions
from rag_assets.core.answering.policy.asks import plan_ask
from rag_assets.core.answering.policy.budgets import evidence_budgets
from rag_assets.core.answering.policy.catalogue import ASKED_BY_DEFAULT
from rag_assets.core.answering.session import AnsweringSession
from rag_assets.core.answering.types import StrategySpec
from rag_assets.core.routing.metrics import mean_interval
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.question_table import question_collections

GOALS = {"noise": (">=", 0.95), "off-topic": (">=", 0.95), "answerable": ("<=", 0.05)}


@dataclass(frozen=True, slots=True)
class Refusals:
    group: str
    asked: int
    refused: list[float]  # 1.0 per question said not found
    by_terms: int  # of them, refused because the documents lack the question's words

    @property
    def share(self) -> float:
        return float(np.mean(self.refused)) if self.refused else float("nan")

    def row(self) -> str:
        if not self.refused:
            return f"{self.group:<34} {self.asked:>5}  -"
        low, high = mean_interval(self.refused)
        goal = GOALS.get(self.group)
        verdict = ""
        if goal is not None:
            met = self.share >= goal[1] if goal[0] == ">=" else self.share <= goal[1]
            verdict = f"  goal {goal[0]} {goal[1]}: {'met' if met else 'NOT met'}"
        return (
            f"{self.group:<34} {self.asked:>5}  {self.share:.3f} [{low:.2f}, {high:.2f}]  "
            f"by words {self.by_terms:>4}, by the floor {int(sum(self.refused)) - self.by_terms:>4}{verdict}"
        )


def refusals(session: AnsweringSession, spec: StrategySpec, group: str, questions: Sequence[str]) -> Refusals:
    """`questions` asked as `rag ask` asks them (in the extractive form: refusals come before reading)."""
    if not questions:
        return Refusals(group, 0, [], 0)
    budgets = evidence_budgets(session, list(questions), spec)
    outcomes = session.run(list(questions), spec, evidence_budgets=budgets)
    said = [float(o.not_found) for o in outcomes]
    return Refusals(group, len(questions), said, sum(bool(o.not_found and o.not_found_note) for o in outcomes))


def other_sets(collection: str, per_set: int, catalogue: Path | None) -> dict[str, list[str]]:
    with catalogue_connection(catalogue or catalogue_in(), read_only=True) as con:
        names = [name for name in question_collections(con) if name != collection]
        return {name: [q.query for q in dev_test(con, name)[:per_set]] for name in names}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-c", "--collection", required=True)
    parser.add_argument("--per-set", type=int, default=25, help="questions of each other collection (default 25)")
    parser.add_argument(
        "--other-catalogue",
        type=Path,
        default=None,
        help="read the other collections' questions from this catalogue (default: the collection's own)",
    )
    add_record_option(parser)
    args = parser.parse_args()
    started = time.perf_counter()
    session, questions = open_collection(args.collection, "dev,test")
    planned = plan_ask(ASKED_BY_DEFAULT, session.published, questions)
    spec = dataclasses.replace(planned, answer_form="extractive")
    floor = session.relevance_floor()
    if floor is None:
        raise SystemExit(f"{args.collection!r}: no relevance floor published (materialize `answer_policy` first)")
    print(
        f"# {args.collection}: {planned.name} as `rag ask` runs it; relevance floor {floor.value:.4f} "
        f"({floor.questions} validation questions); term rule on"
    )
    groups = [
        refusals(session, spec, "noise", noise_questions()),
        refusals(session, spec, "off-topic", off_topic_questions()),
        *(
            refusals(session, spec, f"other set: {name}", asked)
            for name, asked in other_sets(args.collection, args.per_set, args.other_catalogue).items()
        ),
        refusals(session, spec, "marked not answerable", [q.query for q in questions if q.not_answerable]),
        refusals(session, spec, "answerable", [q.query for q in questions if not q.not_answerable]),
    ]
    print(f"{'questions':<34} {'asked':>5}  said not found")
    for group in groups:
        print(group.row())
    print(f"seconds: {time.perf_counter() - started:.0f}")
    if args.record:
        keep_figures(
            "benchmarks.ask_refusals",
            [(f"{args.collection}: not found, {g.group} ({g.asked})", round(g.share, 3)) for g in groups if g.refused],
        )


if __name__ == "__main__":
    main()
