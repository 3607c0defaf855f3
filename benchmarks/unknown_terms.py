"""How often the term rule (core/answering/known_terms.py) says a question is not found, on a
materialized collection's passage index: the packaged noise questions (goal: all), the packaged
everyday off-topic questions, and the collection's own questions per split (goal: none).

    RAG_DATA_DIR=dagster_home/data .venv/bin/python -m benchmarks.unknown_terms -c python-reference
"""

from __future__ import annotations

import argparse

import lancedb

from rag_assets.core.answering.known_terms import term_share
from rag_assets.core.answering.no_answer import noise_questions, off_topic_questions
from rag_assets.core.index.term_lookup import IndexTerms
from rag_assets.core.index.vector_index import DEFAULT_TABLE
from rag_assets.core.settings import catalogue_file, lancedb_uri
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.question_table import load_question_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-c", "--collection", required=True)
    args = parser.parse_args()
    table = lancedb.connect(lancedb_uri()).open_table(DEFAULT_TABLE)
    lookup = IndexTerms(lambda: table, [args.collection])
    with catalogue_connection(catalogue_file(), read_only=True) as con:
        own = load_question_rows(con, args.collection)
    sets = {"noise (packaged)": noise_questions(), "off-topic (packaged)": off_topic_questions()}
    for split in ("train", "dev", "test"):
        sets[f"{args.collection} {split}"] = [q.query for q in own if q.split == split]
    for name, questions in sets.items():
        refused = [q for q in questions if term_share(q, lookup).refused()]
        print(f"{name:<32} {len(refused):>4} of {len(questions):>4} not found by their words")
        if refused and not name.endswith("(packaged)"):
            print("    " + "\n    ".join(refused))


if __name__ == "__main__":
    main()
