"""Scale-out throughput: trees, passages and embeddings of a generated Markdown corpus on 1..N
worker processes, each with one CPU thread (a worker = a core = a Celery worker / k8s pod).

The corpus (Wikipedia-like articles, ~4 KB, from benchmarks/dst_build.py) is written to files and
split into one shard per worker, as partitions would be. Every worker loads the embedder, waits
at a barrier, then reads its files, builds the Document Structure Trees, cuts the passages and
embeds them (all-MiniLM-L6-v2, the project's `Embedder`). Reported per worker count: wall time of
the processing phase (after the barrier), docs/s, the ratio to one worker, and each worker's own
docs/s; then what a 5.82M-page corpus would take on N workers at the measured per-worker rate and
the measured parallel efficiency. Model load and process start-up are printed apart: they are
paid once per worker, not per document.

    .venv/bin/python -m benchmarks.scale_out                  # 120 docs, 1 and 2 workers
    .venv/bin/python -m benchmarks.scale_out --docs 100000    # a corpus at scale (hours on 2 cores)
    .venv/bin/python -m benchmarks.scale_out --workers 1,2,4  # more workers than cores oversubscribe

Figures from a shared, busy machine are lower bounds of what a dedicated core gives.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import tempfile
import time
from pathlib import Path

WIKIPEDIA_PAGES = 5_820_000  # the paper's Wikipedia corpus


def write_corpus(root: Path, docs: int, seed: int = 0) -> list[Path]:
    from benchmarks.dst_build import markdown_document

    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(docs):
        path = root / f"article-{i:06d}.md"
        path.write_text(markdown_document(rng, i), encoding="utf-8")
        paths.append(path)
    return paths


def worker(shard: str, index: int, barrier, results) -> None:
    """One worker: load the model, wait for the others, then trees -> passages -> vectors."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch

    torch.set_num_threads(1)  # one core per worker: the per-worker rate is a per-core rate
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    started = time.monotonic()
    from rag_assets.core.corpus.sources import CollectionSpec, ingest
    from rag_assets.core.corpus.tree_building import build_trees
    from rag_assets.core.index.embedding import Embedder
    from rag_assets.core.index.passages import cut_passages
    from rag_assets.core.index.vector_index import search_text

    embedder = Embedder(device="cpu", progress=False)
    load_s = time.monotonic() - started
    barrier.wait()
    t0 = time.monotonic()
    cpu0 = time.process_time()
    result = ingest(CollectionSpec(name=f"shard{index}", path=shard, format="markdown"))
    documents = len(result.documents)
    passages = []
    for doc, tree in build_trees(result.documents).trees:
        passages += cut_passages(doc.doc_id, tree.nodes, tree.text)
    t1 = time.monotonic()
    vectors = embedder.encode([search_text(p.heading_path, p.text) for p in passages], progress=False)
    t2 = time.monotonic()
    results.put(
        {
            "worker": index,
            "documents": documents,
            "passages": len(passages),
            "vectors": int(vectors.shape[0]),
            "load_s": load_s,
            "trees_passages_s": t1 - t0,
            "embed_s": t2 - t1,
            "busy_s": t2 - t0,
            "cpu_s": time.process_time() - cpu0,
            "end": time.time(),
        }
    )


def run(corpus: Path, workers: int) -> dict:
    """Shard the corpus folder-wise into `workers` folders (links), run them at once."""
    files = sorted(corpus.glob("*.md"))
    shards_root = Path(tempfile.mkdtemp(prefix=f"shards{workers}-", dir=corpus.parent))
    shards = [shards_root / f"shard-{i}" for i in range(workers)]
    for folder in shards:
        folder.mkdir()
    for i, path in enumerate(files):  # round robin: every shard gets the same mix of sizes
        (shards[i % workers] / path.name).symlink_to(path)
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(workers + 1)
    results = ctx.Queue()
    processes = [ctx.Process(target=worker, args=(str(shards[i]), i, barrier, results)) for i in range(workers)]
    spawned = time.monotonic()
    for p in processes:
        p.start()
    barrier.wait()  # every worker has loaded its model
    ready = time.monotonic()
    begin = time.time()
    per_worker = [results.get() for _ in processes]
    for p in processes:
        p.join()
    if any(p.exitcode for p in processes):
        raise SystemExit(f"a worker failed: exit codes {[p.exitcode for p in processes]}")
    wall = max(r["end"] for r in per_worker) - begin
    documents = sum(r["documents"] for r in per_worker)
    return {
        "workers": workers,
        "documents": documents,
        "passages": sum(r["passages"] for r in per_worker),
        "startup_s": ready - spawned,
        "wall_s": wall,
        "docs_per_s": documents / wall,
        "per_worker_docs_per_s": [r["documents"] / r["busy_s"] for r in per_worker],
        # per CPU-second: what the worker did with the CPU it got (on a shared machine other
        # processes take part of each core, which wall time counts and CPU time does not)
        "per_worker_docs_per_cpu_s": [r["documents"] / r["cpu_s"] for r in per_worker],
        "embed_share": sum(r["embed_s"] for r in per_worker) / sum(r["busy_s"] for r in per_worker),
        "cpu_share": sum(r["cpu_s"] for r in per_worker) / sum(r["busy_s"] for r in per_worker),
        "detail": per_worker,
    }


def hours(seconds: float) -> str:
    return f"{seconds / 3600:,.1f} h" if seconds >= 3600 else f"{seconds / 60:,.1f} min"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=120, help="generated documents (default 120; 100000 at scale)")
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts (default 1,2)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out" / "scale_out.json")
    args = parser.parse_args()
    counts = sorted({int(w) for w in args.workers.split(",") if w.strip()})
    if not counts or counts[0] < 1 or args.docs < max(counts):
        parser.error("--workers must be positive counts, and --docs at least the largest of them")

    with tempfile.TemporaryDirectory(prefix="scale-out-") as tmp:
        corpus = Path(tmp) / "corpus"
        t = time.monotonic()
        write_corpus(corpus, args.docs)
        print(f"corpus: {args.docs} Markdown documents (~4 KB) written in {time.monotonic() - t:.1f} s")
        print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
        runs = [run(corpus, w) for w in counts]

    base = runs[0]["docs_per_s"] / runs[0]["workers"]
    print()
    print(
        "| workers | documents | passages | wall s | docs/s | ratio to 1 | per-worker docs/s | "
        "per-worker docs per CPU-s | CPU share | embedding share |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        per = ", ".join(f"{x:.2f}" for x in r["per_worker_docs_per_s"])
        per_cpu = ", ".join(f"{x:.2f}" for x in r["per_worker_docs_per_cpu_s"])
        print(
            f"| {r['workers']} | {r['documents']} | {r['passages']} | {r['wall_s']:.1f} | {r['docs_per_s']:.2f} | "
            f"{r['docs_per_s'] / base:.2f}x | {per} | {per_cpu} | {r['cpu_share']:.0%} | {r['embed_share']:.0%} |"
        )
    print(
        "\n(model load + process start per worker, paid once: "
        + ", ".join(f"{r['startup_s']:.0f} s" for r in runs)
        + ")"
    )

    # Extrapolation: N workers at the per-worker rate measured with the most workers that fit the
    # cores (so the contention between workers on one machine is in it), by wall clock as measured
    # here and per CPU-second (a dedicated core).
    fitting = [r for r in runs if r["workers"] <= (os.cpu_count() or 1)] or runs
    widest = fitting[-1]
    wall_rate = widest["docs_per_s"] / widest["workers"]
    cpu_rate = sum(widest["per_worker_docs_per_cpu_s"]) / widest["workers"]
    print(
        f"\n{WIKIPEDIA_PAGES:,} pages on N workers, at {wall_rate:.2f} docs/s per worker (wall, this machine) | "
        f"{cpu_rate:.2f} docs per CPU-second per worker (a dedicated core), measured with {widest['workers']} workers:"
    )
    for n in (1, 8, 32, 128, 512):
        print(
            f"  {n:>4} workers: {hours(WIKIPEDIA_PAGES / (wall_rate * n))} | {hours(WIKIPEDIA_PAGES / (cpu_rate * n))}"
        )
    efficiency = widest["docs_per_s"] / (base * widest["workers"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"docs": args.docs, "runs": runs, "efficiency": efficiency}, indent=2))
    print(f"\nwritten {args.out}")


if __name__ == "__main__":
    main()
