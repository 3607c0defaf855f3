"""Seconds per file to read the public sample slides, workbooks, CSV files, e-books and saved
pages (tests/fixtures/formats) into their trees, and what the saved-page extraction keeps.

For each sample: the median of `--repeats` reads (bytes -> layout text at ingestion, then the
tree), its node count, its headings and table rows. For the saved page: the nodes, words and
hand-labelled chrome strings (the test's list) in the page read whole by the HTML parser and in
trafilatura's main content, and the seconds each takes. Prints a table; changes nothing.

    .venv/bin/python -m benchmarks.office_formats [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from rag_assets.core.corpus.parsers import binary_format, extract_binary, parse_blocks
from rag_assets.core.corpus.parsers.html import parse_html
from rag_assets.core.corpus.tree import build_tree

SAMPLES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "formats"
CHROME = [  # as labelled by hand in tests/unit/test_parsers_ebooks_pages.py
    "Skip to main content",
    "Search form",
    "Who We Are",
    "Planned Giving",
    "Donate",
    "File Attachments:",
    "Tags",
    "1400 16th Street NW",
]


def read(path: Path, fmt: str) -> int:
    data = path.read_bytes()
    if fmt == "csv":
        text = data.decode("utf-8")
    else:
        text, _ = extract_binary(fmt, data, name=path.name)
    return len(build_tree(path.stem, parse_blocks(fmt, text)).nodes)


def timed(work: object, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = work()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    import trafilatura  # noqa: F401  (its import, once, is not a file's cost)

    print(f"{'file':45} {'format':8} {'KB':>6} {'nodes':>6} {'s/file':>8}")
    for path in sorted(SAMPLES.iterdir()):
        if path.suffix in (".md",):
            continue
        fmt = (
            "csv" if path.suffix == ".csv" else binary_format(path.name, b"", has_assets_folder=path.suffix == ".html")
        )
        if fmt is None:
            continue
        seconds, nodes = timed(lambda p=path, f=fmt: read(p, f), args.repeats)
        print(f"{path.name:45} {fmt:8} {path.stat().st_size / 1024:6.0f} {nodes:6} {seconds:8.3f}")
    page = (SAMPLES / "example-with-scripts.html").read_bytes()
    whole_s, whole = timed(lambda: parse_html(page.decode("utf-8")), args.repeats)
    kept_s, (content, _) = timed(lambda: extract_binary("web_page", page, name="page.html"), args.repeats)
    kept = parse_html(content)  # type: ignore[arg-type]
    print()
    print(f"{'saved page':24} {'nodes':>6} {'words':>7} {'chrome strings':>15} {'s':>7}")
    for name, blocks, seconds in (("whole page (html)", whole, whole_s), ("trafilatura (web_page)", kept, kept_s)):
        words = sum(len(b.text.split()) for b in blocks)  # type: ignore[attr-defined]
        chrome = sum(any(b.text.startswith(c) for b in blocks) for c in CHROME)  # type: ignore[attr-defined]
        print(f"{name:24} {len(blocks):6} {words:7} {f'{chrome} of {len(CHROME)}':>15} {seconds:7.3f}")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
