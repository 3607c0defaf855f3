"""Searching within the documents a question names, on a materialized collection (FinanceBench).

For the collection's dev+test questions: how often the documents the question names (by their
cards, the default steer: `core/index/document_steer.py`; by their file names: company, year,
form, `core/index/document_names.py`) include its gold document, and how many are named; then
the evidence (page hit, passage hit, words) of rag-hybrid and rdr2 with the given router kinds as
asked (steered by the cards), in every document (unsteered), within the documents the file names
name, and within the question's own document (the single store), each row's paired difference
against rag-hybrid in the same scope.

    RAG_DATA_DIR=dagster_home/data-datasets .venv/bin/python -m benchmarks.named_documents \
        -c financebench [--kinds encoder,oracle] [--split dev,test]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from benchmarks.common import open_collection
from rag_assets.core.answering.policy.catalogue import BUDGET_SOURCE, DEFAULT_SETTINGS, strategy_specs
from rag_assets.core.evaluation.evidence import NAMED_SUFFIX, evidence_table, measure_evidence, summarise_evidence
from rag_assets.core.evaluation.scoring import same_document
from rag_assets.core.tables import markdown_table
from rag_assets.defs.evaluation.evidence_evaluation import EvidenceConfig, scopes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-c", "--collection", default="financebench")
    parser.add_argument("--split", default="dev,test")
    parser.add_argument("--kinds", default="encoder,oracle")
    args = parser.parse_args()
    session, questions = open_collection(args.collection, args.split)
    trees = session.trees
    if not questions:
        raise SystemExit(f"no {args.split} questions in collection {args.collection!r}")
    # the scopes `evidence_evaluation` measures when the collection is named in both settings
    config = EvidenceConfig(
        single_store=[args.collection], named_documents=[args.collection], every_document=[args.collection]
    )
    scoped = scopes(config, args.collection, questions, sorted(trees))
    by_names = next(s for s in scoped if s.suffix == NAMED_SUFFIX).documents
    steered = {q.qid: session.steered_documents(q.query) or [] for q in questions}
    print(f"# {args.collection}: {len(questions)} {args.split} questions, {len(trees)} documents")
    for label, named in (("cards (the default steer)", steered), ("file names (named documents)", by_names)):
        print(f"## {label}")
        print(gold_among(questions, named))
        sizes = Counter(len(named[q.qid]) for q in questions)
        print(
            "documents named per question (0: none named, all searched): "
            + ", ".join(f"{n}: {c}" for n, c in sorted(sizes.items()))
        )
    print()
    kinds = [k for k in args.kinds.split(",") if k]
    specs = strategy_specs(DEFAULT_SETTINGS, "short", session.published.llm_adapter)
    rows = []
    for scope in (None, *scoped):
        started = time.perf_counter()
        rows += measure_evidence(
            questions,
            baseline=specs[BUDGET_SOURCE],
            routed=specs["rdr2"],
            kinds=kinds,
            routers={kind: session.router(kind) for kind in kinds},
            retrieve=session.retrieve if scope is None else session.unsteered_retrieve,
            trees=trees,
            fills=(True,),
            scope=scope,
        )
        print(
            f"{scope.suffix.strip() if scope else 'cards (the default steer)'}: {time.perf_counter() - started:.0f} s"
        )
    summary = summarise_evidence(rows, BUDGET_SOURCE)
    header, body = evidence_table(summary)
    print()
    print(markdown_table(header, body))


def gold_among(questions: list, named: dict[str, list[str]]) -> str:
    """The gold document among the named ones, over the questions naming something and over all."""
    with_gold = [q for q in questions if q.gold_doc]
    naming = [q for q in with_gold if named[q.qid]]
    kept = sum(any(same_document(d, q.gold_doc) for d in named[q.qid]) for q in naming)
    return (
        f"gold document among the named: {kept} of the {len(naming)} questions naming some "
        f"({kept / max(len(naming), 1):.3f}); {len(with_gold) - len(naming)} name none (all searched)"
    )


if __name__ == "__main__":
    main()
