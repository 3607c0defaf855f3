"""Headings recovered from real company filings, scored against the filings' own bookmarks.

The FinanceBench filings whose bookmarks are a real outline (ten entries or more) are copied
without their outline, so the reader must find the headings from the layout alone; the bookmarks
are the truth, scored as benchmarks/heading_truth.py says (precision, recall, parent accuracy).
An entry whose title is not printed on its target page (spaces, punctuation and case aside) does
not count: the reader cannot find what the page does not print.

Needs `qpdf` (a Debian package) and ../shared/datasets/financebench.

    .venv/bin/python -m benchmarks.pdf_headings --datasets ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.heading_truth import (
    HeadingTotals,
    bookmarks,
    outlined_filings,
    parent_faults,
    printed,
    score_headings,
    without_outline,
)
from benchmarks.pdf_engine_outputs import read_tree, tree_headings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    parser.add_argument("--only", help="score only the filings whose file name contains this")
    parser.add_argument("--parent-faults", action="store_true", help="also count why parents are wrong, per filing")
    args = parser.parse_args()
    folder = args.datasets / "financebench" / "pdfs"
    if not folder.is_dir():
        sys.exit(f"no FinanceBench filings at {folder}")
    files = [p for p in outlined_filings(folder) if args.only is None or args.only in p.name]
    print(
        "| filing | bookmarks | counted | headings | matched | precision | at the outline's levels | recall "
        "| parent accuracy | read s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    total = HeadingTotals()
    faults: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as temp:
        for path in files:
            started = time.perf_counter()
            tree = read_tree(without_outline(path, Path(temp)))
            seconds = time.perf_counter() - started
            row = score_headings(tree_headings(tree), path)
            total.add(row)
            if args.parent_faults and not row.flat:  # a flat outline's parents are not scored
                entries = bookmarks(path)
                faults[path.stem] = parent_faults(tree_headings(tree), entries, printed(entries, path))
            parents = "flat" if row.flat else f"{row.parents / max(row.matched, 1):.3f}"
            print(
                f"| {path.stem} | {row.entries} | {row.counted} | {row.headings} | {row.matched} | "
                f"{row.matched / max(row.headings, 1):.3f} | {row.matched / max(row.at_levels, 1):.3f} | "
                f"{row.matched / max(row.counted, 1):.3f} | "
                f"{parents} | {seconds:.1f} |",
                flush=True,
            )
    print(
        f"| all {total.filings} | | {total.counted} | {total.headings} | {total.matched} | "
        f"{total.precision:.3f} | {total.precision_at_levels:.3f} | {total.recall:.3f} | "
        f"{total.parent_accuracy:.3f} | |"
    )
    if faults:
        print("\n| filing | wrong parents: under a sibling | too shallow | elsewhere |\n|---|---:|---:|---:|")
        for stem, counts in faults.items():
            print(f"| {stem} | {counts['under a sibling']} | {counts['too shallow']} | {counts['elsewhere']} |")


if __name__ == "__main__":
    main()
