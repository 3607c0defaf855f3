"""A Markdown file of 20,000 headings with a few words under every other one (the reliability
drill's hostile file): nodes, passages and the embedding time of its passages, with the small
passages merged (`passages.min_words`, default 5) against each indexed alone (min_words 0), and
against the built-in corpus's passages (the good files), all embedded in the same run.

    .venv/bin/python -m benchmarks.heading_flood [--headings 20000]

Prints the file's size, its nodes, both passage counts with their mean length, and the seconds
to embed each set, with the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import time

from rag_assets.core.corpus.parsers import parse_blocks
from rag_assets.core.corpus.sources import BUILTIN_PYTHON_REFERENCE, CollectionSpec, ingest
from rag_assets.core.corpus.tree import build_tree
from rag_assets.core.corpus.tree_building import build_trees
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.index.passages import cut_passages
from rag_assets.core.index.vector_index import search_text


def flood(headings: int) -> str:
    """`headings` headings, two per part, with one four-word note under each second one."""
    return "".join(f"# Part {i}\n\n## Item {i}\n\nnote number {i} here\n\n" for i in range(headings // 2))


def embed_seconds(embedder: Embedder, passages: list) -> float:
    started = time.perf_counter()
    embedder.encode([search_text(p.heading_path, p.text) for p in passages], progress=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--headings", type=int, default=20_000)
    args = parser.parse_args()
    text = flood(args.headings)
    tree = build_tree("Flood", parse_blocks("markdown", text))
    sets = {
        "flood, merged (min_words 5)": cut_passages("flood", tree.nodes, tree.text),
        "flood, alone (min_words 0)": cut_passages("flood", tree.nodes, tree.text, min_words=0),
    }
    builtin = build_trees(ingest(CollectionSpec("builtin", BUILTIN_PYTHON_REFERENCE)).documents)
    sets["built-in corpus (79 documents)"] = [
        p for doc, built in builtin.trees for p in cut_passages(doc.doc_id, built.nodes, built.text)
    ]
    print(f"flood file: {len(text.encode()) / 1024:.0f} KB, {args.headings} headings, {len(tree.nodes)} nodes")
    embedder = Embedder(progress=False)
    embedder.encode(["warm up"], progress=False)
    seconds = {name: embed_seconds(embedder, passages) for name, passages in sets.items()}
    for name, passages in sets.items():
        chars = statistics.fmean(len(p.text) for p in passages)
        print(f"{name}: {len(passages)} passages, {chars:.0f} chars on average, embedded in {seconds[name]:.1f} s")
    merged, alone, good = seconds.values()
    print(f"ratio alone / merged: {alone / merged:.1f}x; merged flood / built-in corpus: {merged / good:.2f}x")


if __name__ == "__main__":
    main()
