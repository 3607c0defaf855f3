"""Retrieval quality: recall@1/5/10 of the gold document (or gold manual section) per mode.

Each set's documents are indexed as ONE collection (retrieval is part of the task), every dev
question is asked against the whole collection, and a hit counts when a retrieved passage comes
from the gold document (nq_wiki, conditionalqa: `doc_title`; the built-in Python reference: the
project's own questions' `gold_doc`) or, for emanual, from the gold manual *under the gold
section path*.

    .venv/bin/python -m benchmarks.retrieval_quality [--datasets ../shared/datasets] [--sets nq_wiki,...]

With --data-dir (a catalogue `rag run` materialized, e.g. dagster_home/data-datasets after
`make run DATA=../shared/datasets`) it measures that catalogue's own index instead, in one run:
hybrid recall@1/5/10 of every collection's evaluation questions (dev + test) with and without
the collection's trained `passage_reranker` (the same hybrid query, reranked inside LanceDB), at
two levels: the gold document (gold manual section) and the gold passage (the finest label a
question has: its section, an evidence line, or its short answer; where the gold document is
already first for nearly every question, as on nq_wiki and conditionalqa, only the passage level
can show what a reranker adds), and
the namespace router over all collections at once (namespace accuracy, share of the index
searched, hybrid recall@5 when only the routed namespaces are searched).

    .venv/bin/python -m benchmarks.retrieval_quality --data-dir dagster_home/data-datasets

A catalogue materialized before these assets existed has no reranker or namespace router:
`--train-into DIR` trains the missing ones first (the assets' own recipe, `--reranker-steps`
steps each, `--reranker-model`) into DIR, leaving the catalogue's folders untouched; with
`--retrain` it trains every collection's reranker anew, and those are the ones measured.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.common import catalogue_in
from rag_assets.core.corpus.sources import BUILTIN_PYTHON_REFERENCE, CollectionSpec, SourceDocument, ingest
from rag_assets.core.corpus.tree_building import build_trees
from rag_assets.core.index.embedding import Embedder, default_embedder_path
from rag_assets.core.index.passages import Passage, cut_passages
from rag_assets.core.index.retrieval import SearchHit, search
from rag_assets.core.index.vector_index import PassageIndex
from rag_assets.core.store.connections import catalogue_connection

KS = (1, 5, 10)
MODES = ("dense", "bm25", "hybrid")
REPO = Path(__file__).resolve().parents[1]


def load_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def build_collection(
    name: str, spec: CollectionSpec, index: PassageIndex
) -> tuple[dict[str, SourceDocument], dict[str, Passage]]:
    docs = ingest(spec).documents
    built = build_trees(docs)
    passages = [p for doc, tree in built.trees for p in cut_passages(doc.doc_id, tree.nodes, tree.text)]
    index.sync(passages, name, tag=f"{name}-bench")
    return {d.doc_id: d for d in docs}, {p.passage_id: p for p in passages}


def evaluate(
    name: str,
    questions: list[tuple[str, Callable[[SearchHit], bool]]],
    index: PassageIndex,
    embedder: Embedder,
    collection: str | None = None,
) -> dict[str, dict[int, float]]:
    out: dict[str, dict[int, float]] = {}
    for mode in MODES:
        found = {k: 0 for k in KS}
        start = time.perf_counter()
        for query, is_gold in questions:
            hits = search(index, embedder, query, mode=mode, k=max(KS), collections=[collection or name])
            first = next((h.rank for h in hits if is_gold(h)), None)
            for k in KS:
                found[k] += first is not None and first <= k
        per_query = (time.perf_counter() - start) / max(len(questions), 1)
        out[mode] = {k: found[k] / len(questions) for k in KS}
        print(
            f"  {name:14s} {mode:6s} "
            + "  ".join(f"R@{k}={out[mode][k]:.3f}" for k in KS)
            + f"  ({len(questions)} questions, {per_query * 1000:.0f} ms/query)"
        )
    return out


def recall_at(ranks: list[int | None], k: int) -> float:
    return sum(r is not None and r <= k for r in ranks) / max(len(ranks), 1)


def train_missing(
    data_dir: Path, into: Path, names: list[str], settings, embedder: Embedder, index, *, retrain: bool = False
) -> None:
    """Rerankers for the collections without one (every collection with `retrain`), and a
    namespace router if none, into `into`."""
    from rag_assets.core.index.namespace_routing import (
        latest_namespace_router,
        publish_namespace_router,
        train_namespace_router,
    )
    from rag_assets.core.index.reranking.folders import latest_reranker
    from rag_assets.core.index.reranking.recipe import train_collection_reranker
    from rag_assets.core.store.passage_table import load_passages
    from rag_assets.core.store.question_table import load_question_rows

    wanted = [
        n
        for n in names
        if retrain or not (latest_reranker(data_dir / "rerankers", n) or latest_reranker(into / "rerankers", n))
    ]
    # Read everything first and let go of the catalogue: training takes minutes per collection,
    # and a connection held that long would lock out a `rag run` writing the same catalogue.
    with catalogue_connection(catalogue_in(data_dir), read_only=True) as con:
        data = {
            n: (
                load_passages(con, n),
                load_question_rows(con, n, "train"),
                load_question_rows(con, n, table="synthetic_questions"),
            )
            for n in wanted
        }
        needs_router = not (
            latest_namespace_router(data_dir / "namespaces") or latest_namespace_router(into / "namespaces")
        )
        pseudo = {
            n: [q.query for q in load_question_rows(con, n, table="synthetic_questions")][:60]
            + [q.query for q in load_question_rows(con, n, "train")]
            for n in (sorted(index.counts_by_collection()) if needs_router else [])
        }
    for name in wanted:
        passages, labelled, synthetic = data[name]
        started = time.perf_counter()
        result = train_collection_reranker(
            embedder.model_path,
            passages,
            labelled,
            synthetic,
            lambda q, n=name: search(index, embedder, q, mode="hybrid", k=settings.candidates, collections=[n]),
            into / "rerankers",
            settings,
            device=embedder.device,
            extra_record={"collection": name, "embedder": embedder.model_id},
        )
        if result is None:
            print(f"  {name}: no reranker training group", flush=True)
            continue
        print(
            f"  trained {settings.model} {result.reranker_id} for {name}: {result.groups} groups, "
            f"{result.steps} steps, loss {result.losses[0]:.3f} -> {result.losses[-1]:.3f}, fusion weight "
            f"{result.weight} (held-out R@5 {result.calibration}), {time.perf_counter() - started:.0f} s",
            flush=True,
        )
    if needs_router:
        router, _ = train_namespace_router(index, pseudo)
        publish_namespace_router(router, into / "namespaces")
        print(f"  trained namespace router {router.router_id}: margin {router.margin}", flush=True)


def catalogue_run(
    data_dir: Path, split: str, only: list[str], into: Path | None, settings, *, retrain: bool = False
) -> None:
    """Recall with and without each collection's trained reranker, and routed over all (module doc)."""
    from rag_assets.core.index.namespace_routing import QueryNamespaces, latest_namespace_router, load_namespace_router
    from rag_assets.core.index.reranking.folders import latest_reranker, load_passage_reranker
    from rag_assets.core.index.reranking.labels import is_gold_hit, is_gold_passage
    from rag_assets.core.store.question_table import load_question_rows

    embedder = Embedder(default_embedder_path(), progress=False)
    index = PassageIndex(str(data_dir / "lancedb"), embedder)
    with catalogue_connection(catalogue_in(data_dir), read_only=True) as con:
        names = [n for n in sorted(index.counts_by_collection()) if not only or n in only]
        questions = {n: load_question_rows(con, n, split) for n in names}
    roots = [data_dir]
    if into is not None:
        train_missing(data_dir, into, names, settings, embedder, index, retrain=retrain)
        roots.insert(0, into)  # what was trained in this run is what is measured
    router_folder = next((f for r in roots if (f := latest_namespace_router(r / "namespaces"))), None)
    namespaces = QueryNamespaces(load_namespace_router(router_folder), embedder) if router_folder else None
    print(f"catalogue {data_dir}: {', '.join(names)}; split {split}")
    for name in names:
        qs = questions[name]
        if not qs:
            print(f"  {name:14s} no {split} questions")
            continue
        folder = next((f for r in roots if (f := latest_reranker(r / "rerankers", name))), None)
        rows = {"hybrid": None, "hybrid+rerank": load_passage_reranker(folder) if folder else None}
        for label, reranker in rows.items():
            if label != "hybrid" and reranker is None:
                print(f"  {name:14s} {label:14s} no trained passage_reranker for {name}")
                continue
            start = time.perf_counter()
            ranks: dict[str, list[int | None]] = {"document": [], "passage": []}
            for q in qs:
                hits = search(index, embedder, q.query, mode="hybrid", k=max(KS), collections=[name], reranker=reranker)
                ranks["document"].append(next((h.rank for h in hits if is_gold_hit(q, h.doc_id, h.heading_path)), None))
                ranks["passage"].append(next((h.rank for h in hits if is_gold_passage(q, h)), None))
            ms = 1000 * (time.perf_counter() - start) / len(qs)
            extra = f" {reranker.reranker_id} {reranker.scorer.model_kind} weight {reranker.weight}" if reranker else ""
            for level, found in ranks.items():
                print(
                    f"  {name:14s} {label:14s} {level:8s} "
                    + "  ".join(f"R@{k}={recall_at(found, k):.3f}" for k in KS)
                    + f"  ({len(qs)} questions, {ms:.0f} ms/query){extra}"
                )
    if namespaces is None:
        print("  namespace routing skipped: no namespace_router published")
        return
    texts = [q for n in names for q in questions[n]]
    routed = namespaces.route([q.query for q in texts])
    gold = [n for n in names for _ in questions[n]]
    accuracy = sum(g in r for g, r in zip(gold, routed)) / max(len(gold), 1)
    share = sum(namespaces.share(r) for r in routed) / max(len(routed), 1)
    ranks = []
    for q, spaces in zip(texts, routed):
        hits = search(index, embedder, q.query, mode="hybrid", k=5, collections=spaces)
        ranks.append(next((h.rank for h in hits if is_gold_hit(q, h.doc_id, h.heading_path)), None))
    print(
        f"  all, routed    namespace accuracy {accuracy:.3f}, {share:.1%} of the index searched, "
        f"hybrid R@5={recall_at(ranks, 5):.3f} ({len(texts)} questions over {len(names)} namespaces)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", type=Path, default=REPO.parent / "shared" / "datasets")
    parser.add_argument("--sets", default="python-reference,nq_wiki,conditionalqa,emanual")
    parser.add_argument("--data-dir", type=Path, default=None, help="measure a materialized catalogue instead")
    parser.add_argument("--split", default="dev,test", help="--data-dir: the questions measured")
    parser.add_argument("--train-into", type=Path, default=None, help="--data-dir: train missing models into DIR")
    parser.add_argument("--reranker-steps", type=int, default=40, help="--train-into: reranker optimizer steps")
    parser.add_argument(
        "--reranker-model",
        choices=("bi-encoder", "cross-encoder"),
        default="bi-encoder",
        help="--train-into: which model",
    )
    parser.add_argument("--reranker-batch-size", type=int, default=16, help="--train-into: query groups per step")
    parser.add_argument("--retrain", action="store_true", help="--train-into: train every collection's reranker anew")
    args = parser.parse_args()
    if args.data_dir is not None:
        chosen = [] if args.sets == parser.get_default("sets") else args.sets.split(",")
        from rag_assets.core.index.reranking.training import RerankerSettings

        settings = RerankerSettings(
            model=args.reranker_model, max_steps=args.reranker_steps, batch_size=args.reranker_batch_size
        )
        catalogue_run(args.data_dir, args.split, chosen, args.train_into, settings, retrain=args.retrain)
        return
    wanted = args.sets.split(",")
    embedder = Embedder(default_embedder_path(), progress=False)
    with tempfile.TemporaryDirectory() as tmp:
        index = PassageIndex(tmp, embedder)
        if "python-reference" in wanted:
            docs, _ = build_collection(
                "python-reference", CollectionSpec("python-reference", BUILTIN_PYTHON_REFERENCE), index
            )
            qs = load_jsonl(REPO / "rag_assets" / "data" / "python_reference_questions.jsonl")
            evaluate(
                "python-reference",
                [(q["question"], lambda h, g=f"python-reference/{q['gold_doc']}": h.doc_id == g) for q in qs],
                index,
                embedder,
            )
        data = args.datasets
        if not data.is_dir():
            print(f"real sets skipped: {data} is absent")
            return
        if "nq_wiki" in wanted:
            docs, _ = build_collection(
                "nq_wiki", CollectionSpec("nq_wiki", str(data / "nq_wiki" / "pages.jsonl")), index
            )
            title_of = {d.doc_id: d.title for d in docs.values()}
            qs = load_jsonl(data / "nq_wiki" / "questions_dev.jsonl")
            evaluate(
                "nq_wiki",
                [(q["question"], lambda h, t=q["doc_title"]: title_of[h.doc_id] == t) for q in qs],
                index,
                embedder,
            )
        if "conditionalqa" in wanted:
            docs, _ = build_collection(
                "conditionalqa", CollectionSpec("conditionalqa", str(data / "conditionalqa" / "pages.jsonl")), index
            )
            title_of = {d.doc_id: d.title for d in docs.values()}
            qs = load_jsonl(data / "conditionalqa" / "questions_dev.jsonl")
            evaluate(
                "conditionalqa",
                [(f"{q['scenario']} {q['question']}", lambda h, t=q["doc_title"]: title_of[h.doc_id] == t) for q in qs],
                index,
                embedder,
            )
        if "emanual" in wanted:
            docs, _ = build_collection(
                "emanual", CollectionSpec("emanual", str(data / "emanual" / "manuals"), format="manual_json"), index
            )
            qs = load_jsonl(data / "emanual" / "questions_dev.jsonl")

            def under(q: dict, any_manual: bool = False) -> Callable[[SearchHit], bool]:
                gold_doc = f"emanual/{q['manual']}.json"
                path = [p.casefold() for p in q["section_path"]]
                # heading_path[0] is the manual's title (the tree root); the sections follow.
                return lambda h: (
                    (any_manual or h.doc_id == gold_doc)
                    and [p.casefold() for p in h.heading_path[1 : 1 + len(path)]] == path
                )

            evaluate("emanual", [(q["question"], under(q)) for q in qs], index, embedder)
            # The 33 manuals are near-duplicates: the same section of a sibling model is the
            # hard distractor. This second line counts the gold section in any manual.
            evaluate("emanual*", [(q["question"], under(q, any_manual=True)) for q in qs], index, embedder, "emanual")


if __name__ == "__main__":
    main()
