"""Headings recovered from real company filings, scored against the filings' own bookmarks.

The FinanceBench filings whose bookmarks are a real outline (ten entries or more) are copied
without their outline (`qpdf --empty --pages IN -- OUT` keeps the pages and drops the
bookmarks), so the reader must find the headings from the layout alone; the bookmarks are the
truth. An entry whose title is not printed on its target page (spaces, punctuation and case
aside) does not count: the reader cannot find what the page does not print.

- heading precision: recovered headings that match a counted bookmark (on its page, the same
  words, or one a prefix of the other: "Item 1. Business." for "Item 1. Business");
- heading recall: counted bookmarks matched by a recovered heading;
- parent accuracy: matched bookmarks whose nearest matched ancestor in the recovered tree is the
  heading matched to the bookmark's parent (none for a top-level bookmark); not measured on a
  flat outline (every entry at level 1: it states no parents, so "Item 1" under "Part I" would
  count as wrong).

Needs `qpdf` (a Debian package) and ../shared/datasets/financebench.

    .venv/bin/python -m benchmarks.pdf_headings --datasets ../shared/datasets
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium

from rag_assets.core.corpus.parsers.pdf import parse_pdf
from rag_assets.core.corpus.parsers.pdf_extract import extract_pdf
from rag_assets.core.corpus.tree import DocumentTree, TreeNode, build_tree

MIN_ENTRIES = 10
_KEY = re.compile(r"[\W_]+")
_MIN_PREFIX = 8


@dataclass(frozen=True)
class Entry:
    index: int
    level: int
    title: str
    page: int  # 1-based
    parent: int | None  # index of the parent entry


def _key(text: str) -> str:
    return _KEY.sub("", text.casefold())


def bookmarks(path: Path) -> list[Entry]:
    """The outline's entries with their parents (the nearest earlier entry one level up)."""
    document = pdfium.PdfDocument(path)
    try:
        raw = []
        for bookmark in document.get_toc(max_depth=16):
            dest = bookmark.get_dest()
            page = dest.get_index() if dest is not None else None
            title = " ".join(bookmark.get_title().split())
            if title and page is not None:
                raw.append((bookmark.level + 1, title, page + 1))
    finally:
        document.close()
    entries: list[Entry] = []
    open_levels: list[Entry] = []
    for index, (level, title, page) in enumerate(raw):
        while open_levels and open_levels[-1].level >= level:
            open_levels.pop()
        entry = Entry(index, level, title, page, open_levels[-1].index if open_levels else None)
        entries.append(entry)
        open_levels.append(entry)
    return entries


def printed(entries: list[Entry], path: Path) -> list[Entry]:
    """The entries whose title is printed on their page."""
    document = pdfium.PdfDocument(path)
    try:
        texts: dict[int, str] = {}
        kept = []
        for entry in entries:
            if entry.page not in texts:
                textpage = document[entry.page - 1].get_textpage()
                texts[entry.page] = _key(textpage.get_text_range())
                textpage.close()
            if _key(entry.title) and _key(entry.title) in texts[entry.page]:
                kept.append(entry)
        return kept
    finally:
        document.close()


def _same(heading: str, title: str) -> bool:
    a, b = _key(heading), _key(title)
    if a == b:
        return True
    shorter, longer = sorted((a, b), key=len)
    return len(shorter) >= _MIN_PREFIX and longer.startswith(shorter)


def match(tree: DocumentTree, entries: list[Entry]) -> dict[int, TreeNode]:
    """entry index -> the recovered heading matched to it: in document order, each heading and
    entry used once, on the entry's page."""
    headings = [n for n in tree.nodes[1:] if n.kind == "structure"]
    used: set[int] = set()
    matched: dict[int, TreeNode] = {}
    for entry in entries:
        for node in headings:
            if node.node_id not in used and node.page_start == entry.page and _same(node.text, entry.title):
                matched[entry.index] = node
                used.add(node.node_id)
                break
    return matched


def parent_correct(tree: DocumentTree, entry: Entry, matched: dict[int, TreeNode], entries: dict[int, Entry]) -> bool:
    """Whether the matched heading's nearest matched ancestor is the entry parent's heading."""
    by_node = {node.node_id: index for index, node in matched.items()}
    node = matched[entry.index]
    parent_id = node.parent_id
    while parent_id is not None and parent_id not in by_node:
        parent_id = tree.nodes[parent_id].parent_id
    found = by_node.get(parent_id) if parent_id is not None else None
    expected = entry.parent
    while expected is not None and expected not in matched:
        # a parent the reader could not match: judge against the nearest matched ancestor
        expected = entries[expected].parent
    return found == expected


def without_outline(source: Path, folder: Path) -> Path:
    target = folder / source.name
    subprocess.run(["qpdf", "--empty", "--pages", str(source), "--", str(target)], check=True)
    return target


def score(path: Path, folder: Path) -> dict[str, float]:
    entries = bookmarks(path)
    counted = printed(entries, path)
    by_index = {entry.index: entry for entry in entries}
    started = time.perf_counter()
    layout = extract_pdf(without_outline(path, folder).read_bytes()).layout
    tree = build_tree(path.stem, parse_pdf(layout))
    seconds = time.perf_counter() - started
    matched = match(tree, counted)
    headings = sum(1 for n in tree.nodes[1:] if n.kind == "structure")
    flat = all(entry.level == 1 for entry in entries)
    parents = sum(parent_correct(tree, entry, matched, by_index) for entry in counted if entry.index in matched)
    return {
        "flat": flat,
        "entries": len(entries),
        "counted": len(counted),
        "headings": headings,
        "matched": len(matched),
        "parents": parents,
        "seconds": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    parser.add_argument("--only", help="score only the filings whose file name contains this")
    args = parser.parse_args()
    folder = args.datasets / "financebench" / "pdfs"
    if not folder.is_dir():
        sys.exit(f"no FinanceBench filings at {folder}")
    files = [p for p in sorted(folder.glob("*.pdf")) if len(bookmarks(p)) >= MIN_ENTRIES]
    files = [p for p in files if args.only is None or args.only in p.name]
    print("| filing | bookmarks | counted | headings | matched | precision | recall | parent accuracy | read s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    total = {"counted": 0, "headings": 0, "matched": 0, "parents": 0, "parented": 0}
    with tempfile.TemporaryDirectory() as temp:
        for path in files:
            row = score(path, Path(temp))
            for key in ("counted", "headings", "matched"):
                total[key] += int(row[key])
            if not row["flat"]:
                total["parents"] += int(row["parents"])
                total["parented"] += int(row["matched"])
            parents = "flat" if row["flat"] else f"{row['parents'] / max(row['matched'], 1):.3f}"
            print(
                f"| {path.stem} | {row['entries']:.0f} | {row['counted']:.0f} | {row['headings']:.0f} | "
                f"{row['matched']:.0f} | {row['matched'] / max(row['headings'], 1):.3f} | "
                f"{row['matched'] / max(row['counted'], 1):.3f} | {parents} | {row['seconds']:.1f} |",
                flush=True,
            )
    print(
        f"| all {len(files)} | | {total['counted']} | {total['headings']} | {total['matched']} | "
        f"{total['matched'] / max(total['headings'], 1):.3f} | {total['matched'] / max(total['counted'], 1):.3f} | "
        f"{total['parents'] / max(total['parented'], 1):.3f} | |"
    )


if __name__ == "__main__":
    main()
