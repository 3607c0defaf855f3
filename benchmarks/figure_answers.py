"""Figure answers against quotes on a materialized collection (FinanceBench): answer correctness of
the quote form of rag-hybrid and rdr2 as asked (the default steer, the published routers), each
question judged by `core/evaluation/answer_correctness.py` (every gold figure within 1%, or the
gold's leading yes/no), per question type; how many answers were figure answers and how many of
those were right (measure verdicts count as figure answers); and, with `--without-figures`, the
same rows with figure answers and measure verdicts turned off (the spec's `figures`: the quote
alone, with the reader's yes or no), paired on the same questions. `--single-store`: each question searched and
routed within its own filing only (its gold document), as a per-filing store would answer it.

    RAG_DATA=$PWD/../shared/datasets RAG_COLLECTIONS=collections.datasets.yaml \\
    RAG_DATA_DIR=dagster_home/data-datasets .venv/bin/python -m benchmarks.figure_answers \\
        -c financebench --split dev,test [--without-figures] [--single-store] [--show]

Nothing is written to the catalogue. The relevance floor is not applied (every question is answered).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import defaultdict

from benchmarks.common import open_collection
from rag_assets.core.answering.figure_answers import FIGURE
from rag_assets.core.answering.policy.catalogue import DEFAULT_SETTINGS, strategy_specs
from rag_assets.core.evaluation.answer_correctness import correctness_metrics
from rag_assets.core.evaluation.evidence import own_documents
from rag_assets.core.evaluation.single_store_answers import answers_in_own_documents
from rag_assets.core.routing.metrics import mean_interval
from rag_assets.core.tables import markdown_table

STRATEGIES = ("rag-hybrid-extractive", "rdr2-extractive")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-c", "--collection", default="financebench")
    parser.add_argument("--split", default="dev,test")
    parser.add_argument("--without-figures", action="store_true", help="also measure the quote alone")
    parser.add_argument("--show", action="store_true", help="print each figure answer with its gold")
    parser.add_argument("--single-store", action="store_true", help="search each question within its own document only")
    args = parser.parse_args()
    session, questions = open_collection(args.collection, args.split)
    if not questions:
        raise SystemExit(f"no {args.split} questions in collection {args.collection!r}")
    own = own_documents(questions, sorted(session.trees)) if args.single_store else None
    if own is not None:
        print(f"single store: {len(own)} of {len(questions)} questions name a document of the collection")
        questions = [q for q in questions if q.qid in own]
    specs = strategy_specs(DEFAULT_SETTINGS, "short", session.published.llm_adapter)
    variants = [("figures", False)] + ([("quote alone", True)] if args.without_figures else [])
    rows = []
    for name in STRATEGIES:
        for variant, off in variants:
            started = time.perf_counter()
            rows += measured_rows(
                session, questions, specs[name], variant, without_figures=off, show=args.show, own=own
            )
            print(f"{name} ({variant}): {time.perf_counter() - started:.0f} s", flush=True)
    print()
    print(markdown_table(["strategy", "answers", "question type", "correct (95% CI)", "n"], rows))


def answered(session, questions: list, spec, own: dict[str, list[str]] | None) -> list:
    """The outcomes of `spec` on `questions`, in the shared store or (`own`) each within its own
    document: the session searched and routed only there, one question at a time."""
    if own is None:
        return session.run([q.query for q in questions], spec, use_floor=False)
    return answers_in_own_documents(session, questions, spec, own, use_floor=False)


def measured_rows(
    session, questions: list, spec, variant: str, *, without_figures: bool, show: bool, own=None
) -> list[list[str]]:
    """One strategy's rows: correct per question type, and the figure answers made and right."""
    # without figures: the quote form as it was before figure answers and measure verdicts
    outcomes = answered(session, questions, dataclasses.replace(spec, figures=not without_figures), own)
    judged: dict[str, list[float]] = defaultdict(list)
    figures = right_figures = 0
    for question, outcome in zip(questions, outcomes):
        correct = correctness_metrics(outcome.answer, list(question.answers)).get("correct")
        if outcome.attribution == FIGURE:
            figures += 1
            right_figures += bool(correct)
            if show:
                print(f"[{correct}] gold {question.answers[0][:40]!r}: {outcome.answer[:300]}")
        if correct is not None:
            for kind in {question.question_type or "all", "all"}:
                judged[kind].append(correct)
    rows = []
    for kind, values in sorted(judged.items(), key=lambda item: (item[0] == "all", item[0])):
        low, high = mean_interval(values)
        rows.append(
            [spec.name, variant, kind, f"{sum(values) / len(values):.3f} ({low:.3f}–{high:.3f})", str(len(values))]
        )
    rows.append([spec.name, variant, "figure answers made / right", f"{figures} / {right_figures}", ""])
    return rows


if __name__ == "__main__":
    main()
