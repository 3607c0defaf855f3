"""What the encoder router is shown of a gold page, and rdr2's routing knobs, on a paged collection.

For the collection's dev + test questions with gold pages (FinanceBench), in each scope (as asked:
the documents whose cards the question names; every document; the documents its file names name;
the question's own document):

1. Where the gold page is lost, under the published router and rdr2's evaluated settings: is the
   gold document among the routed documents, is a content node of a gold page shown to the router
   (lit by the first-stage passages or by an expansion it chose), where the router's score ranks
   the best such node among every node it was shown, and how many words rank above it (the budget
   fill keeps about rag-hybrid's 500 words). The oracle reaches the same documents, so this
   separates "never shown" (retrieval and expansion) from "shown, ranked too low" (the scorer).
2. Page hit at rag-hybrid's words for each `--variants` entry, a semicolon-separated list of
   `name: key=value, ...` where a key is a field of rdr2's `StrategySpec` (passages_per_query,
   top_k, expand_iterations, fill_order, rerank) or of the router's thresholds (answer, expand,
   max_answers, max_expands), with the paired difference against rag-hybrid in the same scope.

    RAG_DATA=$PWD/../shared/datasets RAG_COLLECTIONS=collections.datasets.yaml \\
    RAG_DATA_DIR=dagster_home/data-datasets .venv/bin/python -m benchmarks.routed_views -c financebench \\
        --variants "passages 50: passages_per_query=50; expand 0.35: expand=0.35"

Nothing is written to the catalogue.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from collections.abc import Mapping, Sequence

from benchmarks.common import open_collection, parse_value
from benchmarks.common import parse_variants as parse_assignments
from rag_assets.core.answering.policy.catalogue import BUDGET_SOURCE, DEFAULT_SETTINGS, strategy_specs
from rag_assets.core.answering.types import StrategySpec
from rag_assets.core.corpus.tree import CONTENT, TreeNode
from rag_assets.core.evaluation.evidence import evidence_table, measure_evidence, summarise_evidence
from rag_assets.core.evaluation.scoring import page_hit, same_document
from rag_assets.core.tables import markdown_table
from rag_assets.defs.evaluation.evidence_evaluation import EvidenceConfig, scopes

THRESHOLD_KEYS = {"answer": float, "expand": float, "max_answers": int, "max_expands": int}
ROUTER = "encoder"


class RecordingRouter:
    """The router it wraps, remembering every content node it scored per query (best score)."""

    def __init__(self, router: object) -> None:
        self.inner = router
        self.shown: dict[str, dict[tuple[str, int], float]] = {}
        self.routed: dict[str, set[str]] = {}

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def route(self, requests: Sequence, knobs: object) -> list:
        replies = self.inner.route(requests, knobs)
        for request, reply in zip(requests, replies):
            seen = self.shown.setdefault(request.query, {})
            self.routed.setdefault(request.query, set()).add(request.state.doc_id)
            for node, score in reply.candidates.items():
                key = (request.state.doc_id, node)
                seen[key] = max(score, seen.get(key, float("-inf")))
        return replies


def parse_variants(text: str) -> dict[str, tuple[dict[str, object], dict[str, object]]]:
    """name -> (StrategySpec changes, threshold changes)."""
    spec_fields = {f.name for f in dataclasses.fields(StrategySpec)}
    variants: dict[str, tuple[dict[str, object], dict[str, object]]] = {"default": ({}, {})}
    for name, pairs in parse_assignments(text, named=True):
        spec: dict[str, object] = {}
        thresholds: dict[str, object] = {}
        for key, value in pairs.items():
            if key in THRESHOLD_KEYS:
                thresholds[key] = THRESHOLD_KEYS[key](value)
            elif key not in spec_fields:
                raise SystemExit(f"variant {name!r}: {key!r} is neither an rdr2 setting nor a threshold")
            else:
                spec[key] = parse_value(value)
        variants[name] = (spec, thresholds)
    return variants


def on_gold_page(node: TreeNode, doc_id: str, gold_doc: str, gold_pages: Sequence[int]) -> bool:
    """A content node the page-hit metric would count, by the metric's own rule."""
    return node.kind == CONTENT and page_hit([(doc_id, node.pages)], gold_doc, gold_pages) == 1.0


def shown_gold(
    questions: Sequence, recorder: RecordingRouter, trees: Mapping[str, Sequence[TreeNode]]
) -> list[list[str]]:
    """One table row per question: gold document routed, gold-page nodes shown, best rank, words above."""
    rows = []
    for q in questions:
        shown = recorder.shown.get(q.query, {})
        ranked = sorted(shown, key=lambda key: -shown[key])
        ranks = [i for i, (d, n) in enumerate(ranked) if on_gold_page(trees[d][n], d, q.gold_doc, q.gold_pages)]
        routed = any(same_document(d, q.gold_doc) for d in recorder.routed.get(q.query, ()))
        above = sum(len(trees[d][n].text.split()) for d, n in ranked[: ranks[0]]) if ranks else None
        rows.append(
            [
                q.qid,
                "yes" if routed else "no",
                str(len(ranks)),
                str(len(shown)),
                "" if not ranks else str(ranks[0] + 1),
                "" if above is None else str(above),
            ]
        )
    return rows


def shown_summary(rows: Sequence[Sequence[str]]) -> str:
    routed = sum(r[1] == "yes" for r in rows)
    shown = [r for r in rows if r[2] != "0"]
    words = [int(r[5]) for r in shown]
    within = sum(w < 500 for w in words)
    median = statistics.median(words) if words else 0
    return (
        f"{len(rows)} questions: gold document routed {routed}; a gold-page node shown {len(shown)}; "
        f"its best node within the first 500 words of the router's ranking {within} "
        f"(median {median:.0f} words ranked above it)"
    )


def _renamed(strategy: str, variant: str, routed: bool) -> str:
    return strategy.replace("rdr2", f"rdr2[{variant}]", 1) if routed else strategy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-c", "--collection", default="financebench")
    parser.add_argument("--split", default="dev,test")
    parser.add_argument(
        "--scopes",
        default="cards,all,named,single",
        help="cards (the default steer: the documents whose cards the question names, else all), all (every "
        "document), named (file names), single (the question's own document); comma-separated",
    )
    parser.add_argument("--variants", default="", help="'name: key=value, ...; ...' (see the module doc)")
    parser.add_argument("--per-question", action="store_true", help="print the shown-gold table per question")
    args = parser.parse_args()
    session, questions = open_collection(args.collection, args.split, keep=lambda q: bool(q.gold_pages and q.gold_doc))
    trees = session.trees
    if not questions:
        raise SystemExit(f"no {args.split} questions with gold pages in collection {args.collection!r}")
    config = EvidenceConfig(
        single_store=[args.collection], named_documents=[args.collection], every_document=[args.collection]
    )
    narrower = {s.suffix.strip(" ()").split()[0]: s for s in scopes(config, args.collection, questions, sorted(trees))}
    specs = strategy_specs(DEFAULT_SETTINGS, "short", session.published.llm_adapter)
    published_router = session.router(ROUTER)
    variants = parse_variants(args.variants)
    for scope_name in args.scopes.split(","):
        scope = None if scope_name == "cards" else narrower[scope_name]
        rows = []
        for name, (changes, thresholds) in variants.items():
            router = published_router.with_section_weight(
                published_router.section_weight,
                thresholds=dataclasses.replace(published_router.thresholds, **thresholds),
            )
            recorder = RecordingRouter(router)
            started = time.perf_counter()
            measured = measure_evidence(
                questions,
                baseline=specs[BUDGET_SOURCE],
                routed=dataclasses.replace(specs["rdr2"], **changes),
                kinds=[ROUTER],
                routers={ROUTER: recorder},
                retrieve=session.retrieve if scope is None else session.unsteered_retrieve,
                trees=trees,
                fills=(True,),
                scope=scope,
            )
            # the scope's rows are named as the whole store's, so each compares with its scope's rag-hybrid
            suffix = scope.suffix if scope is not None else ""
            rows += [
                dataclasses.replace(r, strategy=_renamed(r.strategy.removesuffix(suffix), name, bool(r.router)))
                for r in measured
                if r.router or not rows
            ]
            print(f"# {scope_name} / {name}: {time.perf_counter() - started:.0f} s", flush=True)
            if name == "default":
                table = shown_gold(questions, recorder, trees)
                print(shown_summary(table))
                if args.per_question:
                    header = ["question", "gold document routed", "gold-page nodes shown", "nodes shown", "best rank"]
                    print(markdown_table([*header, "words above"], table))
        print(f"## {scope_name}: each row within the {scope_name} scope, at its rag-hybrid's words")
        summary = summarise_evidence(rows, BUDGET_SOURCE)
        header, body = evidence_table(summary)
        print(markdown_table(header, body), flush=True)


if __name__ == "__main__":
    main()
