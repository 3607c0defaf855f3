"""The precision of "supporting" citations against gold evidence, in a materialized catalogue:
for the stored answers whose question has a gold node (core/evaluation/supporting_precision.py),
the share of citations marked as supporting the answer that are gold nodes (over all those answers,
and over the right ones: the answer holds a gold answer), as stored and as the
current attribution rule marks them on the same answers, with how many answers rest on at least
one citation under each; the extractive answers apart (a quote rests on the sentence it quotes).

    RAG_DATA_DIR=dagster_home/data .venv/bin/python -m benchmarks.supporting_precision -c python-reference
"""

from __future__ import annotations

import argparse

from benchmarks.common import open_collection
from benchmarks.records import add_record_option, keep_figures
from rag_assets.core.evaluation.supporting_precision import supporting_precision
from rag_assets.core.settings import catalogue_file
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.lineage import load_answers
from rag_assets.core.store.question_table import load_question_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-c", "--collection", required=True)
    parser.add_argument("--source", default="evaluation", help="answers.source to read (default: evaluation)")
    add_record_option(parser)
    args = parser.parse_args()
    with catalogue_connection(catalogue_file(), read_only=True) as con:
        questions = {q.qid: q for q in load_question_rows(con, args.collection)}
        records = load_answers(con, args.collection, source=args.source)
    session, _ = open_collection(args.collection)  # its answer scorer ranks the supporting nodes, as in an ask
    tallies = supporting_precision(records, questions, session.answer_scorer)
    print(f"{args.collection}: {len(records)} stored answers, {len(questions)} questions")
    print(f"{'rule':<11} {'answers':<7} {'count':>5} {'supported':>9} {'marked':>6} {'gold':>5} {'precision':>9}")
    for (rule, which), tally in tallies.items():
        precision = "-" if tally.precision is None else f"{tally.precision:.3f}"
        print(
            f"{rule:<11} {which:<7} {tally.answers:>5} {tally.supported:>9} {tally.marked:>6} {tally.right:>5} "
            f"{precision:>9}"
        )
    if args.record:
        keep_figures(
            "benchmarks.supporting_precision",
            [
                (
                    f"{args.collection}: supporting precision, {rule} rule, {which} answers",
                    f"{t.precision:.3f} ({t.right} of {t.marked} marked)",
                )
                for (rule, which), t in tallies.items()
                if t.precision is not None and rule != "stored"
            ],
        )


if __name__ == "__main__":
    main()
