"""The service's latency while `rag index` builds FinanceBench filings on the same cores, in one run.

1. `rag index` of the first N FinanceBench filings (sorted by name) into a fresh data folder, alone:
   its wall time is the baseline for the index's slowdown.
2. A warm `rag serve` on the project's materialized catalogue (the built-in corpus by default):
   hybrid searches and rag-hybrid asks through HTTP, one every `--pause` seconds, on a quiet
   machine (p50/p95).
3. For each pipeline niceness asked (`--niceness 0,10`: 0 is the normal priority, the behaviour
   without `RAG_PIPELINE_NICE`), the same `rag index` into another fresh folder while searches and
   asks go on through the service until the index ends.

Goals: search p50 <= 3x quiet and p95 <= 300 ms, ask p50 <= 1.5x quiet, and the index no more than
1.5x slower than alone. Needs ../shared/datasets/financebench and a materialized project (`make run`).

    .venv/bin/python -m benchmarks.serving_beside_indexing --datasets ../shared/datasets [--filings 20]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

from benchmarks.records import add_record_option, keep_figures
from benchmarks.service import QUERIES, http, line, pct
from rag_assets.core.settings import data_dir
from tests.integration.served_project import running_service

REPO = Path(__file__).resolve().parents[1]


def filings_folder(datasets: Path, count: int, root: Path) -> Path:
    """A folder of links to the first `count` FinanceBench filings, by name."""
    pdfs = sorted((datasets / "financebench" / "pdfs").glob("*.pdf"))[:count]
    if not pdfs:
        raise SystemExit(f"{datasets / 'financebench' / 'pdfs'}: no PDFs (is --datasets the shared datasets folder?)")
    folder = root / "filings"
    folder.mkdir()
    for pdf in pdfs:
        (folder / pdf.name).symlink_to(pdf)
    return folder


def start_index(folder: Path, root: Path, niceness: int) -> subprocess.Popen:
    """`rag index` of `folder` into a fresh DAGSTER_HOME and data folder under `root`."""
    home = root / "home"
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text((REPO / "dagster_home" / "dagster.yaml").read_text())
    collections = root / "collections.yaml"
    collections.write_text(f"collections:\n  - name: filings\n    path: {folder}\n")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "RAG_DATA_DIR": str(root / "data"),
        "RAG_COLLECTIONS": str(collections),
        "RAG_PIPELINE_NICE": str(niceness),
        "RAG_SERVICE_URL": "",
    }
    log = (root / "index.log").open("w")
    return subprocess.Popen(
        [sys.executable, "-m", "rag_assets.cli", "index"], env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT
    )


def finished(process: subprocess.Popen, root: Path) -> None:
    if process.wait() != 0:
        raise SystemExit(f"rag index failed:\n{(root / 'index.log').read_text()[-3000:]}")


def one_search(url: str, i: int, collection: str) -> float:
    query = urllib.parse.urlencode({"q": QUERIES[i % len(QUERIES)], "k": 5, "collection": collection})
    t0 = time.perf_counter()
    http(f"{url}/search?{query}")
    return time.perf_counter() - t0


def one_ask(url: str, i: int, collection: str) -> float:
    t0 = time.perf_counter()
    http(f"{url}/ask", {"question": QUERIES[i % len(QUERIES)], "strategy": "rag-hybrid", "collection": collection})
    return time.perf_counter() - t0


def measure(
    url: str, collection: str, searches: int, asks: int, pause: float, beside: subprocess.Popen | None
) -> tuple[list, list]:
    """Rounds of `searches` searches then `asks` asks, `pause` seconds apart (people asking, not a
    load test: a saturated service would leave the pipeline nothing), one round on a quiet
    machine, else rounds until the index run `beside` has ended (at least one)."""
    searched: list[float] = []
    asked: list[float] = []
    while True:
        for i in range(searches):
            searched.append(one_search(url, i, collection))
            time.sleep(pause)
        for i in range(asks):
            asked.append(one_ask(url, i, collection))
            time.sleep(pause)
        if beside is None or beside.poll() is not None:
            return searched, asked


def report(label: str, searched: list[float], asked: list[float], quiet: tuple[list, list] | None) -> None:
    print(line(f"{label}: search", searched))
    print(line(f"{label}: ask (rag-hybrid)", asked, "s", 1.0))
    if quiet is not None:
        search_ratio = pct(searched, 0.5) / pct(quiet[0], 0.5)
        ask_ratio = pct(asked, 0.5) / pct(quiet[1], 0.5)
        p95 = pct(searched, 0.95) * 1000
        print(
            f"{label + ': vs quiet':<44} search p50 {search_ratio:.2f}x (goal <= 3), p95 {p95:.0f} ms (goal <= 300), "
            f"ask p50 {ask_ratio:.2f}x (goal <= 1.5)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", type=Path, default=REPO.parent / "shared" / "datasets")
    parser.add_argument("--filings", type=int, default=20)
    parser.add_argument("--searches", type=int, default=20, help="searches per round")
    parser.add_argument("--asks", type=int, default=3, help="asks per round")
    parser.add_argument("--pause", type=float, default=0.5, help="seconds between two requests")
    parser.add_argument("--collection", default="python-reference", help="the served collection")
    parser.add_argument("--niceness", default="0,10", help="pipeline niceness values to measure, e.g. 0,10")
    parser.add_argument("--service-threads", type=int, default=1, help="`rag serve --threads` (torch threads per call)")
    add_record_option(parser)
    args = parser.parse_args()
    arms = [int(value) for value in args.niceness.split(",")]
    env = {"RAG_DATA_DIR": str(data_dir()), "DAGSTER_HOME": os.environ.get("DAGSTER_HOME", ""), "RAG_SERVICE_URL": ""}
    print(
        f"served: {data_dir()} ({args.collection}, {args.service_threads} thread(s) a call); "
        f"indexed: {args.filings} filings; {os.cpu_count()} CPU cores"
    )
    with tempfile.TemporaryDirectory(prefix="beside-index-") as tmp:
        root = Path(tmp)
        folder = filings_folder(args.datasets, args.filings, root)
        t0 = time.perf_counter()
        process = start_index(folder, root / "alone", arms[0])
        finished(process, root / "alone")
        alone = time.perf_counter() - t0
        print(f"\n1. rag index alone: {alone:.0f} s")
        with running_service(env, "--max-asks", "16", "--threads", str(args.service_threads)) as url:
            measure(url, args.collection, 3, 1, 0.0, None)  # warm both paths
            quiet = measure(url, args.collection, args.searches, args.asks, args.pause, None)
            print("\n2. quiet machine")
            report("quiet", *quiet, None)
            print("\n3. beside rag index")
            figures: list[tuple[str, float | str]] = [
                ("quiet: search p50 ms", round(pct(quiet[0], 0.5) * 1000)),
                ("quiet: ask p50 s", round(pct(quiet[1], 0.5), 2)),
                ("rag index alone s", round(alone)),
            ]
            for niceness in arms:
                t0 = time.perf_counter()
                process = start_index(folder, root / f"nice-{niceness}", niceness)
                ended: list[float] = []  # when the index ended, not when the round noticed it
                waiter = threading.Thread(target=lambda p=process, e=ended: (p.wait(), e.append(time.perf_counter())))
                waiter.start()
                loaded = measure(url, args.collection, args.searches, args.asks, args.pause, process)
                waiter.join()
                finished(process, root / f"nice-{niceness}")
                took = ended[0] - t0
                report(f"niceness {niceness}", *loaded, quiet)
                print(f"{f'niceness {niceness}: rag index':<44} {took:.0f} s, {took / alone:.2f}x alone (goal <= 1.5)")
                figures += [
                    (f"niceness {niceness}: search p50 / quiet", round(pct(loaded[0], 0.5) / pct(quiet[0], 0.5), 2)),
                    (f"niceness {niceness}: search p95 ms", round(pct(loaded[0], 0.95) * 1000)),
                    (f"niceness {niceness}: ask p50 / quiet", round(pct(loaded[1], 0.5) / pct(quiet[1], 0.5), 2)),
                    (f"niceness {niceness}: rag index / alone", round(took / alone, 2)),
                ]
    if args.record:
        threads = f"{args.service_threads} service thread(s), "
        keep_figures("benchmarks.serving_beside_indexing", [(threads + name, value) for name, value in figures])


if __name__ == "__main__":
    main()
