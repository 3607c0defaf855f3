"""Document Structure Tree build speed: docs/s and MB/s per core.

(a) the 33 Samsung manuals of ../shared/datasets/emanual, when present;
(b) a generated corpus of Wikipedia-like Markdown documents (~4 KB, 2-5 heading levels).

Reference points printed beside the figures: the paper's 5.82M Wikipedia pages in ~20 minutes on
8 cores (~600 docs/s per core) and this project's target of 2,000 docs/s per core on (b). Per-core
rates are measured in CPU time of this (single-threaded) process; wall time is printed too.

    .venv/bin/python -m benchmarks.dst_build [--docs 20000] [--datasets ../shared/datasets]
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from rag_assets.core.corpus.parsers import parse_blocks
from rag_assets.core.corpus.sources import CollectionSpec, ingest
from rag_assets.core.corpus.tree import build_tree

PAPER_DOCS_PER_CORE = 5_820_000 / (20 * 60) / 8
TARGET_DOCS_PER_CORE = 2_000

WORDS = [
    "the",
    "of",
    "and",
    "in",
    "to",
    "was",
    "is",
    "for",
    "on",
    "as",
    "by",
    "with",
    "he",
    "at",
    "from",
    "his",
    "an",
    "were",
    "are",
    "which",
    "this",
    "also",
    "be",
    "has",
    "or",
    "had",
    "first",
    "one",
    "their",
    "its",
    "after",
    "new",
    "who",
    "they",
    "two",
    "her",
    "she",
    "been",
    "other",
    "when",
    "there",
    "all",
    "during",
    "into",
    "school",
    "time",
    "may",
    "years",
    "more",
    "most",
    "only",
    "over",
    "city",
    "some",
    "world",
    "would",
    "where",
    "later",
    "up",
    "such",
    "used",
    "many",
    "can",
    "state",
    "about",
    "national",
    "out",
    "known",
    "university",
    "united",
    "then",
    "made",
    "river",
    "century",
    "war",
]


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 22))]
    return " ".join(words).capitalize() + "."


def markdown_document(rng: random.Random, index: int, target_bytes: int = 4096) -> str:
    """A Wikipedia-like article: lead, sections 2-5 levels deep, lists, a table, an infobox."""
    depth = rng.randint(2, 5)
    parts = [
        f"# Article {index}\n",
        " ".join(sentence(rng) for _ in range(3)) + "\n",
        "| field | value |\n|---|---|\n| born | 1901 |\n| died | 1977 |\n",
    ]
    level = 2
    while sum(map(len, parts)) < target_bytes:
        parts.append(f"{'#' * level} Section {len(parts)}\n")
        parts.append(" ".join(sentence(rng) for _ in range(rng.randint(2, 5))) + "\n")
        if rng.random() < 0.4:
            parts.append("".join(f"- {sentence(rng)}\n" for _ in range(rng.randint(2, 4))))
        level = rng.randint(2, depth + 1) if level > 2 else min(level + 1, depth + 1)
    return "\n".join(parts)


def measure(name: str, docs: list[tuple[str, str, str]]) -> tuple[float, float]:
    """Parse + build every (format, title, text); returns (docs/s, MB/s) on one core.

    Per-core figures use this process's CPU time (`time.process_time()`): the loop is single
    threaded, and on a shared machine wall time also counts the time other processes hold the
    core. Wall time is printed beside it.
    """
    megabytes = sum(len(text.encode("utf-8")) for _, _, text in docs) / 1e6
    wall_start, cpu_start = time.perf_counter(), time.process_time()
    nodes = 0
    for fmt, title, text in docs:
        nodes += len(build_tree(title, parse_blocks(fmt, text)).nodes)
    seconds = time.process_time() - cpu_start
    wall = time.perf_counter() - wall_start
    rate, mbps = len(docs) / seconds, megabytes / seconds
    print(
        f"{name}: {len(docs)} docs, {megabytes:.1f} MB, {nodes} nodes in {seconds:.2f} s CPU "
        f"({wall:.2f} s wall, {len(docs) / wall:,.0f} docs/s wall) "
        f"-> {rate:,.0f} docs/s/core, {mbps:.2f} MB/s/core"
    )
    return rate, mbps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=20_000, help="generated Markdown documents")
    parser.add_argument("--datasets", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "datasets")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    manuals = args.datasets / "emanual" / "manuals"
    if manuals.is_dir():
        result = ingest(CollectionSpec("emanual", str(manuals), format="manual_json"))
        measure("(a) emanual manuals", [(d.format, d.title, d.text) for d in result.documents])
    else:
        print(f"(a) skipped: {manuals} is absent")

    rng = random.Random(args.seed)
    generated = [("markdown", f"Article {i}", markdown_document(rng, i)) for i in range(args.docs)]
    rate, _ = measure("(b) generated Markdown", generated)
    print(
        f"(b) vs target {TARGET_DOCS_PER_CORE} docs/s/core: {rate / TARGET_DOCS_PER_CORE:.2f}x; "
        f"vs the paper's ~{PAPER_DOCS_PER_CORE:.0f} docs/s/core: {rate / PAPER_DOCS_PER_CORE:.2f}x"
    )


if __name__ == "__main__":
    main()
