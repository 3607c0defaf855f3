"""The query service against the bare engines, measured in one run on a materialized project.

1. Warm hybrid search through `rag serve` (HTTP, p50/p95) against LanceDB's own hybrid query for
   the same query (query embedding + `table.search(query_type="hybrid")`, same k, same version);
   goal: p50 within 2x and under 150 ms on 2 cores.
2. Warm `ask` through the service (p50/p95) for rag-hybrid and rdr2 against the reader's bare
   generation on the very prompt the answer's reader saw (same engine, same token budget);
   goal: within 1.3x (rdr2 also routes: its ratio includes the router's calls).
3. Ask throughput with 1, 4 and 8 concurrent clients (rag-hybrid); goal: >= 2.5x at 8.
4. Cold CLI without a service: `rag --help` and `rag search --mode bm25` CPU seconds and peak
   RSS (resource.getrusage of the child), and a hybrid `rag search` as the in-process baseline;
   goal: BM25 search <= 1.5 CPU-s and <= 300 MiB. Then a hybrid search through the service
   (RAG_SERVICE_URL): what a CLI call costs when a service runs.

    DAGSTER_HOME=/tmp/svc_home .venv/bin/python -m benchmarks.service [--searches 30] [--asks 5] [--parts search]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

QUERIES = [
    "What does the with statement do?",
    "How are default parameter values evaluated?",
    "What is a generator expression?",
    "When is __init__ called?",
    "What does the global statement do?",
    "How does the for loop use the iterator protocol?",
    "What happens when an exception is not handled?",
    "What is the difference between is and ==?",
    "How do decorators work on functions?",
    "What does yield from do?",
]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def line(label: str, values: list[float], unit: str = "ms", scale: float = 1000.0) -> str:
    return f"{label:<44} p50 {pct(values, 0.5) * scale:8.1f} {unit}  p95 {pct(values, 0.95) * scale:8.1f} {unit}"


def http(url: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Content-Type": "application/json"} if body is not None else {},
    )
    with urllib.request.urlopen(request, timeout=1800) as response:
        return json.loads(response.read())


def search_latency(url: str, rounds: int, collection: str) -> tuple[list[float], list[float]]:
    """(service seconds, bare LanceDB hybrid seconds) per query, alternating, all warm."""
    from lancedb.rerankers import RRFReranker

    from rag_assets.core.store.publication import pin_index
    from rag_assets.serving.catalogue_reads import LanceTables, read_catalogue
    from resources.project import project_resources

    embedder = project_resources(progress=False)["embedder"].get()
    with read_catalogue() as con:
        version = pin_index(con, collection).version
    table = LanceTables().at(version).table
    served, bare = [], []
    for i in range(rounds + 3):
        query = QUERIES[i % len(QUERIES)]
        t0 = time.perf_counter()
        http(f"{url}/search?{urllib.parse.urlencode({'q': query, 'k': 5, 'collection': collection})}")
        t1 = time.perf_counter()
        text = " ".join(re.sub(r"[^\w\s]+", " ", query).split())  # as retrieval.search cleans it
        (
            table.search(query_type="hybrid", vector_column_name="vector", fts_columns="search_text")
            .vector(embedder.encode_query(query))
            .text(text)
            .distance_type("cosine")
            .rerank(RRFReranker())
            .where(f"collection IN ('{collection}')", prefilter=True)
            .limit(5)
            .to_list()
        )
        t2 = time.perf_counter()
        if i >= 3:  # the first rounds warm both paths
            served.append(t1 - t0)
            bare.append(t2 - t1)
    return served, bare


def ask_latency(url: str, strategy: str, rounds: int, collection: str) -> tuple[list[float], list[float]]:
    """(service seconds per ask, the reader's bare generation seconds on the same prompt)."""
    from rag_assets.core.answering.reader_prompts import reader_messages, reader_style
    from resources.project import project_resources

    engine = project_resources(progress=False)["llm"].engine()
    served, bare = [], []
    for i in range(rounds + 1):
        t0 = time.perf_counter()
        result = http(
            f"{url}/ask", {"question": QUERIES[i % len(QUERIES)], "strategy": strategy, "collection": collection}
        )
        elapsed = time.perf_counter() - t0
        row = result["answer"]
        style = reader_style(result["answer_style"])
        chat = reader_messages(row["question"], row["evidence"], style.name)
        t1 = time.perf_counter()
        engine.generate([chat], max_new_tokens=style.max_new_tokens)
        if i >= 1:
            served.append(elapsed)
            bare.append(time.perf_counter() - t1)
    return served, bare


def throughput(url: str, clients: int, asks: int, collection: str) -> float:
    def one(i: int) -> None:
        http(f"{url}/ask", {"question": QUERIES[i % len(QUERIES)], "strategy": "rag-hybrid", "collection": collection})

    t0 = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, range(asks)))
    return asks / (time.perf_counter() - t0)


def cold_cli(*args: str, service: str = "") -> tuple[float, float, float]:
    """(CPU seconds, peak RSS MiB, wall seconds) of one `rag ...` in a fresh process (through the
    service at `service`, else in process)."""
    probe = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True); "
        "w = time.perf_counter() - t; r = resource.getrusage(resource.RUSAGE_CHILDREN); "
        "print(r.ru_utime + r.ru_stime, r.ru_maxrss / 1024, w)"
    )
    env = {**os.environ, "RAG_SERVICE_URL": service}
    rag = [sys.executable, "-m", "rag_assets.cli", *args]
    out = subprocess.run([sys.executable, "-c", probe, *rag], capture_output=True, text=True, env=env, check=True)
    cpu, rss, wall = (float(x) for x in out.stdout.split())
    return cpu, rss, wall


def cold_cli_part(collection: str) -> None:
    print("\n4. cold CLI, no service (fresh process each)")
    for label, cli_args in (
        ("rag --help", ["--help"]),
        ("rag search --mode bm25", ["search", "with statement", "--mode", "bm25", "-c", collection]),
        ("rag search (hybrid, in-process baseline)", ["search", "with statement", "-c", collection]),
    ):
        cpu, rss, wall = cold_cli(*cli_args)
        print(f"{label:<44} {cpu:6.2f} CPU-s  {rss:6.0f} MiB peak  {wall:6.1f} s wall")


def through_service_part(url: str, collection: str) -> None:
    cpu, rss, wall = cold_cli("search", "with statement", "-c", collection, service=url)
    label = "rag search (hybrid) via RAG_SERVICE_URL"
    print(f"{label:<44} {cpu:6.2f} CPU-s  {rss:6.0f} MiB peak  {wall:6.1f} s wall")


def search_part(url: str, searches: int, collection: str) -> None:
    served, bare = search_latency(url, searches, collection)
    print(f"\n1. warm hybrid search, {searches} queries, k=5")
    print(line("service (HTTP, rag serve)", served))
    print(line("LanceDB hybrid query (+ query embedding)", bare))
    print(f"{'ratio service / LanceDB (p50)':<44} {pct(served, 0.5) / pct(bare, 0.5):.2f}x")


def ask_part(url: str, asks: int, collection: str) -> None:
    print(f"\n2. warm ask, {asks} questions each")
    for strategy in ("rag-hybrid", "rdr2"):
        served, bare = ask_latency(url, strategy, asks, collection)
        print(line(f"{strategy}: service", served, "s", 1.0))
        print(line(f"{strategy}: reader's bare generation", bare, "s", 1.0))
        print(f"{strategy + ': ratio (p50)':<44} {pct(served, 0.5) / pct(bare, 0.5):.2f}x")


def throughput_part(url: str, collection: str) -> None:
    print("\n3. ask throughput (rag-hybrid)")
    single = None
    for clients in (1, 4, 8):
        rate = throughput(url, clients, max(clients * 2, 4), collection)
        single = single or rate
        print(f"{clients} client(s){'':<34} {rate:6.3f} asks/s  {rate / single:5.2f}x one client's")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--searches", type=int, default=30)
    parser.add_argument("--asks", type=int, default=5)
    parser.add_argument("--collection", default="python-reference")
    parser.add_argument("--url", default="", help="A running service (default: start one here).")
    parser.add_argument("--parts", default="cli,search,ask,throughput", help="measurements to make, e.g. cli,search")
    args = parser.parse_args()
    from rag_assets.core.settings import data_dir
    from tests.integration.served_project import running_service

    env = {"RAG_DATA_DIR": str(data_dir()), "DAGSTER_HOME": os.environ.get("DAGSTER_HOME", ""), "RAG_SERVICE_URL": ""}
    print(f"project: {data_dir()}; collection {args.collection}; {os.cpu_count()} CPU cores")
    parts = set(args.parts.split(","))
    if "cli" in parts:
        cold_cli_part(args.collection)

    def measured(url: str) -> None:
        if "cli" in parts:
            through_service_part(url, args.collection)
        if "search" in parts:
            search_part(url, args.searches, args.collection)
        if "ask" in parts:
            ask_part(url, args.asks, args.collection)
        if "throughput" in parts:
            throughput_part(url, args.collection)

    if args.url:
        measured(args.url)
    else:
        with running_service(env, "--max-asks", "16") as url:
            measured(url)


if __name__ == "__main__":
    main()
