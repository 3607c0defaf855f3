"""Generated against extractive answers, per evaluation set, on a materialized collection.

For each strategy (rag-hybrid, rdr2 as `rag ask` runs them: the catalogue's spec, the one fallback rule,
rdr2 budgeted by rag-hybrid's words)
both forms answer the same dev+test questions through the answering session, and the script
prints per form: containment (EM) and token F1 with 95% bootstrap intervals, ROUGE-L where gold
answers are long, yes/no accuracy where they are yes/no, the share of answers whose first
citation is a gold node (`first_cite_gold`), answer words, the share of answers with echoed
prompt text (cut at answer time or still there; goal 0), the share whose reader text looped or
was list numbering only (`garbled`: cut, or no answer), the share of generated answers the reader
left empty (or garbled) (answered with the evidence's best sentence instead), and the seconds each form took
for all questions (the extractive form makes no reader call). Also which form the collection's
published default is, the paired difference extractive - generated on F1 per strategy, and how
often rag-hybrid's first passage as retrieved begins with a gold node (the bar the default
answer's first citation is held to).

    RAG_DATA_DIR=dagster_home/data .venv/bin/python -m benchmarks.answer_styles \
        [-c python-reference] [--split dev,test] [--strategies rag-hybrid,rdr2] [--measure-default] [--json out.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np

from benchmarks.common import catalogue_in, open_collection
from rag_assets.core.answer_metrics import word_count
from rag_assets.core.answering.echo import ECHOED, GARBLED, LOOPED, echoed
from rag_assets.core.answering.policy.budgets import evidence_budgets
from rag_assets.core.answering.policy.catalogue import answer_style, named_spec
from rag_assets.core.answering.policy.fallback import runnable_spec
from rag_assets.core.answering.policy.measure import measure_ask_policy, validation_questions
from rag_assets.core.answering.session import AnsweringSession
from rag_assets.core.answering.strategies import gather_evidence
from rag_assets.core.evaluation.scoring import answer_metrics, first_citation_gold
from rag_assets.core.routing.metrics import mean_interval
from rag_assets.core.store.connections import catalogue_connection

FORMS = ("generated", "extractive")


def score(questions, outcomes) -> dict[str, list[float]]:
    """Per question: every metric that applies, plus words, echo and first-citation gold."""
    values: dict[str, list[float]] = {}
    for question, outcome in zip(questions, outcomes):
        metrics = dict(answer_metrics(outcome.answer, question.answers))
        paths = [" > ".join(c.heading_path) for c in outcome.citations]
        places = [(c.doc_id, c.pages) for c in outcome.citations]
        first = first_citation_gold([c.text for c in outcome.citations], paths, question, places)
        if first is not None:
            metrics["first_cite_gold"] = first
        metrics["echoed"] = float(outcome.echo in ECHOED or echoed(outcome.answer))
        metrics["garbled"] = float(outcome.echo in (LOOPED, GARBLED))  # a loop cut, or no answer in the text
        metrics["reader_empty"] = float(outcome.reader_empty)  # generated asked, answered extractively
        metrics["words"] = float(word_count(outcome.answer))
        for name, value in metrics.items():
            values.setdefault(name, []).append(value)
    return values


def first_passage_gold(session: AnsweringSession, questions, spec) -> list[float]:
    """Per question with gold to tell: whether the first node of `spec`'s first retrieved passage,
    as retrieved (no reader, no attribution), is gold: the bar the default's first citation is held to."""
    gathered = gather_evidence(
        [q.query for q in questions],
        spec,
        retrieve=session.retrieve,
        trees=session.trees,
        routers=session.routers_for([spec]),
        extras=session.extras(spec),
    )
    found = []
    for question, g in zip(questions, gathered):
        first = g.citations[:1]
        gold = first_citation_gold(
            [c.text for c in first],
            [" > ".join(c.heading_path) for c in first],
            question,
            [(c.doc_id, c.pages) for c in first],
        )
        if gold is not None:
            found.append(gold)
    return found


def paired_difference(a: list[float], b: list[float], seed: int = 0) -> tuple[float, float, float]:
    """Mean of b - a with its 95% bootstrap interval (questions resampled together)."""
    diff = np.asarray(b) - np.asarray(a)
    rng = np.random.default_rng(seed)
    means = [rng.choice(diff, size=len(diff)).mean() for _ in range(2000)]
    return float(diff.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def cell(values: list[float] | None, interval: bool) -> str:
    if not values:
        return "-"
    mean = float(np.mean(values))
    if not interval:
        return f"{mean:.1f}"
    low, high = mean_interval(values)
    return f"{mean:.3f} [{low:.2f}, {high:.2f}]"


def print_differences(results: dict) -> None:
    """Per strategy, extractive - generated on F1, ROUGE-L and first-citation gold, paired."""
    for name in dict.fromkeys(n for n, _ in results):
        gen, ext = results[(name, "generated")], results[(name, "extractive")]
        for metric in ("f1", "rouge_l", "first_cite_gold"):
            if metric in gen and metric in ext:
                mean, low, high = paired_difference(gen[metric], ext[metric])
                print(f"{name}: extractive - generated {metric} = {mean:+.3f} [{low:+.2f}, {high:+.2f}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-c", "--collection", default="python-reference")
    parser.add_argument("--split", default="dev,test")
    parser.add_argument("--strategies", default="rag-hybrid,rdr2")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--measure-default", action="store_true", help="measure the default form as `answers` does")
    args = parser.parse_args()
    session, questions = open_collection(args.collection, args.split)
    published = session.published
    if not questions:
        raise SystemExit(f"no {args.split} questions in collection {args.collection!r}")
    style = answer_style("auto", questions)  # as the `answers` asset's default config chooses it
    queries = [q.query for q in questions]
    print(f"# {args.collection}: {len(questions)} {args.split} questions, {style} answers")
    choice = published.form_choice
    print(f"published default form: {choice.note if choice else published.default_form + ' (not measured)'}")
    if args.measure_default:  # what `answer_policy` would publish: measured on the routers' validation questions
        with catalogue_connection(catalogue_in(), read_only=True) as con:
            validation = validation_questions(con, args.collection)
        print(f"measured default form: {measure_ask_policy(session, validation).note}")
    print()
    rows, results = [], {}
    for name in args.strategies.split(","):
        spec = runnable_spec(named_spec(name, style, published.llm_adapter), published).spec
        budgets = evidence_budgets(session, queries, spec)
        for form in FORMS:
            started = time.perf_counter()
            outcomes = session.run(queries, dataclasses.replace(spec, answer_form=form), evidence_budgets=budgets)
            seconds = time.perf_counter() - started
            values = score(questions, outcomes)
            results[(spec.name, form)] = {"seconds": seconds, **values}
            rows.append(
                [spec.name, form]
                + [cell(values.get(m), True) for m in ("right", "f1", "rouge_l", "yes_no_acc", "first_cite_gold")]
                + [cell(values.get("words"), False), f"{np.mean(values['echoed']):.3f}"]
                + [f"{np.mean(values[m]):.3f}" for m in ("garbled", "reader_empty")]
                + [f"{seconds:.1f}"]
            )
    header = [
        "strategy",
        "form",
        "EM",
        "F1",
        "ROUGE-L",
        "yes/no",
        "first cite gold",
        "words",
        "echoed",
        "garbled",
        "reader empty",
    ]
    header += ["seconds"]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    print_differences(results)
    first = first_passage_gold(session, questions, named_spec("rag-hybrid", style, None))
    print(f"rag-hybrid's first passage as retrieved, first node gold: {cell(first, True)} ({len(first)} questions)")
    if args.json:
        args.json.write_text(json.dumps({f"{n}/{f}": v for (n, f), v in results.items()}, indent=1))


if __name__ == "__main__":
    main()
