"""Retrieval quality: recall@1/5/10 of the gold document (or gold manual section) per mode.

Each set's documents are indexed as ONE collection (retrieval is part of the task), every dev
question is asked against the whole collection, and a hit counts when a retrieved passage comes
from the gold document (nq_wiki, conditionalqa: `doc_title`; the built-in Python reference: the
project's own questions' `gold_doc`) or, for emanual, from the gold manual *under the gold
section path*.

    .venv/bin/python benchmarks/retrieval_quality.py [--datasets ../shared/datasets] [--sets nq_wiki,...]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rag_assets.core.embedding import Embedder, default_embedder_path
from rag_assets.core.passages import Passage, cut_passages
from rag_assets.core.retrieval import SearchHit, search
from rag_assets.core.sources import BUILTIN_PYTHON_REFERENCE, CollectionSpec, SourceDocument, ingest
from rag_assets.core.structure import build_trees
from rag_assets.core.vector_index import PassageIndex

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", type=Path, default=REPO.parent / "shared" / "datasets")
    parser.add_argument("--sets", default="python-reference,nq_wiki,conditionalqa,emanual")
    args = parser.parse_args()
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
