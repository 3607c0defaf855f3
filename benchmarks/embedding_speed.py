"""Embedding speed of the default embedder against the previous defaults, in the same run.

A seeded sample of a materialized collection's passages (as `passage_index` embeds them: heading
path and text) is embedded by
- the baseline: float32, 64 texts per forward pass (the defaults before the device rules),
- float32 at the device's batch size (to tell the two changes apart),
- the default `Embedder()` (precision and batch size by device, `core/index/embedding.py`),
in alternating rounds (the best round of each is kept). Printed: passages/s and the ratio against
the baseline; how close the vectors are (cosine against the baseline's); and whether search ranks
alike: for the collection's questions, the overlap of the top 10 passages of the sample by the
baseline's vectors and by the default's (queries embedded the same way as their passages) and the
share whose first passage is the same; and one question's embedding time (each question alone,
as a search embeds it).

    RAG_DATA_DIR=dagster_home/data-datasets .venv/bin/python -m benchmarks.embedding_speed \
        -c financebench [--passages 2000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from rag_assets.core.index.embedding import Embedder
from rag_assets.core.index.vector_index import search_text
from rag_assets.core.settings import catalogue_file
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.passage_table import load_passages
from rag_assets.core.store.question_table import load_question_rows


def timed(embedder: Embedder, texts: list[str]) -> tuple[float, np.ndarray]:
    embedder.encode(texts[:32], progress=False)  # warm: first-call allocations are not the rate
    started = time.perf_counter()
    vectors = embedder.encode(texts, progress=False)
    return len(texts) / (time.perf_counter() - started), vectors


def query_ms(embedder: Embedder, questions: list[str]) -> float:
    embedder.encode_query(questions[0])
    started = time.perf_counter()
    for question in questions:
        embedder.encode_query(question)
    return (time.perf_counter() - started) / len(questions) * 1000


def top(queries: np.ndarray, passages: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(-(queries @ passages.T), axis=1)[:, :k]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-c", "--collection", default="financebench")
    parser.add_argument("--passages", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with catalogue_connection(catalogue_file(), read_only=True) as con:
        passages = load_passages(con, args.collection)
        questions = [q.query for q in load_question_rows(con, args.collection)]
    if not passages or not questions:
        raise SystemExit(f"collection {args.collection!r} has no passages or no questions in {catalogue_file()}")
    random.Random(0).shuffle(passages)
    texts = [search_text(p.heading_path, p.text) for p in passages[: args.passages]]
    default = Embedder(progress=False)
    embedders = {
        "float32, 64 a batch (baseline)": Embedder(precision="float32", batch_size=64, progress=False),
        f"float32, {default.batch_size} a batch": Embedder(
            precision="float32", batch_size=default.batch_size, progress=False
        ),
        f"default ({default.precision}, {default.batch_size} a batch)": default,
    }
    rates: dict[str, float] = {}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.rounds):
        for name, embedder in embedders.items():
            rate, vectors[name] = timed(embedder, texts)
            rates[name] = max(rate, rates.get(name, 0.0))
    base_name = next(iter(embedders))
    base = vectors[base_name]
    base_top = top(embedders[base_name].encode(questions, progress=False), base, 10)
    print(f"{args.collection}: {len(texts)} passages, {len(questions)} questions, device {default.device}")
    print("| embedder | passages/s | vs baseline | cosine min / mean | top-10 overlap | same first | query ms |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for name, embedder in embedders.items():
        cosine = (vectors[name] * base).sum(axis=1)
        ranked = top(embedder.encode(questions, progress=False), vectors[name], 10)
        overlap = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ranked, base_top)])
        same_first = np.mean(ranked[:, 0] == base_top[:, 0])
        print(
            f"| {name} | {rates[name]:.1f} | {rates[name] / rates[base_name]:.2f}x | "
            f"{cosine.min():.5f} / {cosine.mean():.5f} | {overlap:.3f} | {same_first:.3f} | "
            f"{query_ms(embedder, questions):.1f} |"
        )


if __name__ == "__main__":
    main()
