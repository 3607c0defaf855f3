"""rdr2's routing settings learned per collection: the choice on train questions, and what it does
on dev + test.

1. The choice, exactly as `answer_policy` makes it (`policy.measure.measure_routing`): every
   candidate of the grid (first-stage passages x documents routed x expand threshold) routes the
   collection's real train-split questions as an ask routes them, scored by the set's evidence
   metric at retrieve-and-read's words; the published rule picks (the best beyond noise and
   cross-fitted, else the defaults). Printed: every candidate's mean and the choice with its reason.
2. With `--evaluate`: the default settings and the chosen ones (and, with `--every`, each
   candidate) on the dev + test questions the report scores, beside rag-hybrid, with paired
   differences. Nothing measured here feeds the choice.

    RAG_DATA=$PWD/../shared/datasets RAG_COLLECTIONS=collections.datasets.yaml \\
    RAG_DATA_DIR=dagster_home/data-datasets .venv/bin/python -m benchmarks.routing_settings -c financebench --evaluate

Nothing is written to the catalogue (the `answer_policy` asset publishes the choice).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from benchmarks.common import open_collection
from rag_assets.core.answering.policy.catalogue import BUDGET_SOURCE, named_spec
from rag_assets.core.answering.policy.measure import asked_spec, measure_routing
from rag_assets.core.answering.policy.routing_choice import RoutingChoice, RoutingSetting, routing_grid
from rag_assets.core.answering.session import AnsweringSession
from rag_assets.core.answering.strategies import gather_evidence
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.evaluation.evidence import QUALITY_METRICS, estimate
from rag_assets.core.evaluation.held_out_evidence import evidence_metrics, remembered
from rag_assets.core.routing.samples import SYNTHETIC_QID_PREFIX
from rag_assets.core.tables import markdown_table


def on_questions(
    session: AnsweringSession, questions: Sequence[Question], settings: Sequence[RoutingSetting], router: str
) -> dict[str, list[list[str]]]:
    """Per evidence metric the questions' labels allow: each setting's mean with the paired
    difference against rag-hybrid and against the first setting (the default)."""
    spec = asked_spec(session, questions)
    baseline = named_spec(BUDGET_SOURCE, spec.answer_style, session.published.llm_adapter)
    retrieve = remembered(session.retrieve)
    queries = [q.query for q in questions]
    gathered = gather_evidence(queries, baseline, retrieve=retrieve, trees=session.trees)
    budgets = [g.words for g in gathered]
    measured = {BUDGET_SOURCE: [evidence_metrics(g, q) for g, q in zip(gathered, questions)]}
    for setting in settings:
        routed = gather_evidence(
            queries,
            setting.applied(spec, router),
            retrieve=retrieve,
            trees=session.trees,
            routers={router: session.router(router)},
            evidence_budgets=budgets,
        )
        measured[setting.label] = [evidence_metrics(g, q) for g, q in zip(routed, questions)]
    tables: dict[str, list[list[str]]] = {}
    for metric in QUALITY_METRICS:
        keep = [i for i, figures in enumerate(measured[BUDGET_SOURCE]) if metric in figures]
        if not keep:
            continue
        values = {name: [rows[i][metric] for i in keep] for name, rows in measured.items()}
        hybrid, default = values[BUDGET_SOURCE], values[settings[0].label]
        tables[f"{metric} on {len(keep)} questions"] = [
            [
                name,
                estimate(mine).text(),
                "" if name == BUDGET_SOURCE else estimate([m - h for m, h in zip(mine, hybrid)]).text(signed=True),
                ""
                if name in (BUDGET_SOURCE, settings[0].label)
                else estimate([m - d for m, d in zip(mine, default)]).text(signed=True),
            ]
            for name, mine in values.items()
        ]
    return tables


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-c", "--collection", default="financebench")
    parser.add_argument("--evaluate", action="store_true", help="also score the settings on dev + test")
    parser.add_argument("--every", action="store_true", help="with --evaluate: every candidate, not only the two")
    args = parser.parse_args()
    session, train = open_collection(
        args.collection,
        "train",
        keep=lambda q: not q.qid.startswith(SYNTHETIC_QID_PREFIX) and not q.not_answerable,
    )
    started = time.perf_counter()
    choice: RoutingChoice = measure_routing(session, train)
    print(
        f"# {args.collection}: the grid on {choice.questions} train questions ({time.perf_counter() - started:.0f} s)"
    )
    if choice.means:
        print(markdown_table(*routing_grid(choice)))
    if choice.interval:
        print(f"best - default, 95% paired interval: {choice.interval[0]:+.3f} .. {choice.interval[1]:+.3f}")
    if choice.cross_fitted:
        print("cross-fitted gain: {:+.3f} ({:+.3f} .. {:+.3f})".format(*choice.cross_fitted))
    print(f"published: {choice.setting.label} ({choice.reason})", flush=True)
    if not args.evaluate:
        return
    session, dev_test = open_collection(args.collection, "dev,test", models=session.models)
    settings = [s for s, _ in choice.means] if args.every else list(dict.fromkeys([choice.default, choice.setting]))
    started = time.perf_counter()
    tables = on_questions(session, dev_test, settings, choice.router)
    print(f"# dev + test ({time.perf_counter() - started:.0f} s)")
    for title, rows in tables.items():
        print(f"## {title}")
        print(markdown_table(["rows", "mean (95% interval)", f"- {BUDGET_SOURCE}", "- the default"], rows))


if __name__ == "__main__":
    main()
