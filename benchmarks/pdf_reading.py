"""Reading PDFs on worker processes against reading them in one process, in the same run.

`ingest` over the same files twice: `read_workers=1` (the step's own process) and
`read_workers=N` (spawned workers, `core/corpus/reading_pool.py`); prints pages, seconds and the
speed-up, and checks both give the same documents.

    .venv/bin/python -m benchmarks.pdf_reading --datasets ../shared/datasets [--files 12] [--workers 0]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rag_assets.core.corpus.reading_pool import worker_count
from rag_assets.core.corpus.sources import CollectionSpec, ingest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, required=True)
    parser.add_argument("--files", type=int, default=12, help="the first N FinanceBench filings (by name)")
    parser.add_argument("--workers", type=int, default=0, help="0: one per core")
    args = parser.parse_args()
    pdfs = sorted((args.datasets / "financebench" / "pdfs").glob("*.pdf"))[: args.files]
    with tempfile.TemporaryDirectory() as tmp:
        for pdf in pdfs:  # a folder of links: the chosen files only
            (Path(tmp) / pdf.name).symlink_to(pdf.resolve())
        spec = CollectionSpec("reading", tmp, "pdf")
        timings = {}
        results = {}
        for workers in (1, args.workers):
            started = time.perf_counter()
            results[workers] = ingest(spec, read_workers=workers)
            timings[workers] = time.perf_counter() - started
    one, many = results[1], results[args.workers]
    assert [d.text for d in one.documents] == [d.text for d in many.documents], "the pooled reading differs"
    pages = sum(d.text.count('"w":') for d in one.documents)
    print(f"{len(pdfs)} filings, {pages:,} pages, {worker_count(args.workers)} workers")
    print(f"one process: {timings[1]:.1f} s ({pages / timings[1]:.0f} pages/s)")
    print(f"workers:     {timings[args.workers]:.1f} s ({pages / timings[args.workers]:.0f} pages/s)")
    print(f"speed-up: {timings[1] / timings[args.workers]:.2f}x")


if __name__ == "__main__":
    main()
