"""Index build speed: embedding throughput, incremental re-index, search latency.

1. Embedding throughput of the project's `Embedder` (length-sorted batches) against a plain
   `SentenceTransformer.encode` over the same passage texts, in the same run (target >= 1.0x).
2. A full index build against an incremental re-index after changing 1% of the documents
   (target <= 5% of the full build's time).
3. Search latency p50/p95 for dense, bm25 and hybrid over 100 queries.

    .venv/bin/python -m benchmarks.index_build [--docs 300] [--batch-size 64]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time

from benchmarks.dst_build import markdown_document, sentence
from rag_assets.core.corpus.parsers import parse_blocks
from rag_assets.core.corpus.tree import build_tree
from rag_assets.core.index.embedding import Embedder, default_embedder_path
from rag_assets.core.index.passages import cut_passages
from rag_assets.core.index.retrieval import MODES, search
from rag_assets.core.index.vector_index import PassageIndex, search_text


def passages_of(docs: dict[str, str]) -> list:
    out = []
    for doc_id, text in docs.items():
        tree = build_tree(doc_id, parse_blocks("markdown", text))
        out += cut_passages(doc_id, tree.nodes, tree.text)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    docs = {f"bench/doc{i:05d}": markdown_document(rng, i, target_bytes=2048) for i in range(args.docs)}
    passages = passages_of(docs)
    texts = [search_text(p.heading_path, p.text) for p in passages]
    print(
        f"corpus: {len(docs)} documents, {len(passages)} passages, "
        f"{statistics.fmean(p.word_count for p in passages):.0f} words per passage"
    )

    embedder = Embedder(default_embedder_path(), batch_size=args.batch_size, progress=False)
    shuffled = texts[:]
    rng.shuffle(shuffled)  # corpus order mixes lengths, as real collections do
    start = time.perf_counter()
    embedder.model.encode(shuffled, batch_size=args.batch_size, normalize_embeddings=True, show_progress_bar=False)
    plain = len(shuffled) / (time.perf_counter() - start)
    start = time.perf_counter()
    embedder.encode(shuffled)
    ours = len(shuffled) / (time.perf_counter() - start)
    print(
        f"embedding: Embedder {ours:.1f} passages/s vs plain SentenceTransformer.encode {plain:.1f} "
        f"passages/s -> {ours / plain:.2f}x (target >= 1.0x)"
    )

    with tempfile.TemporaryDirectory() as tmp:
        index = PassageIndex(tmp, embedder)
        start = time.perf_counter()
        index.sync(passages, "bench", tag="full")
        full = time.perf_counter() - start
        changed = dict(docs)
        for doc_id in rng.sample(sorted(docs), max(1, len(docs) // 100)):
            changed[doc_id] = docs[doc_id] + f"\n\n## Update\n\n{sentence(rng)}\n"
        new_passages = passages_of(changed)
        start = time.perf_counter()
        report = index.sync(new_passages, "bench", tag="incremental")
        incremental = time.perf_counter() - start
        print(
            f"index: full build {full:.2f} s; incremental after changing {len(docs) // 100 or 1} documents "
            f"(1%): {incremental:.2f} s, {len(report.embedded_ids)} passages embedded -> "
            f"{incremental / full * 100:.1f}% of the full build (target <= 5%)"
        )

        queries = [sentence(rng) for _ in range(args.queries)]
        for mode in MODES:
            search(index, embedder, queries[0], mode=mode, k=10)  # warm-up
            times = []
            for query in queries:
                start = time.perf_counter()
                search(index, embedder, query, mode=mode, k=10)
                times.append((time.perf_counter() - start) * 1000)
            times.sort()
            print(
                f"search {mode:6s}: p50 {statistics.median(times):.1f} ms, "
                f"p95 {times[int(0.95 * (len(times) - 1))]:.1f} ms ({len(times)} queries, k=10)"
            )


if __name__ == "__main__":
    main()
