"""Side-by-side blocks read as rows: in a folder of PDFs nobody labelled (pdf.js's test files,
unstructured's examples), how many content nodes join a line of prose with what stands beside it
("4 Experimental Setup | amples in the dataset and the actual questions used for"): a node of
" | "-joined cells of which one is prose (seven words or more, mostly letters) and another holds
three words or more. A table's description column is counted too, so the count is an upper
bound on the faults. With `--baseline`, the same folder is read in the same run by the reader of
BASELINE_COMMIT (page-wide gutters, before side-by-side blocks were read apart; from git), and
the files whose trees changed are listed with the words each gained and lost (a row's repeated
header text is a lost word when the row becomes a paragraph) and the files one reader rejects
and the other reads.

    .venv/bin/python -m benchmarks.side_by_side_rows --folder DIR [--baseline]

Each PDF is read as `rag tree` reads it, in a worker process with a time limit (a file that
does not finish, or is rejected, is listed and left out of the counts).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
from collections import Counter
from pathlib import Path

from benchmarks.git_baseline import run_at_commit
from rag_assets.core.corpus.sources import CollectionSpec, ingest
from rag_assets.core.corpus.tree_building import document_tree

BASELINE_COMMIT = "1e3e079"  # the reader before side-by-side blocks were read apart


def _prose(cell: str) -> bool:
    return len(cell.split()) >= 7 and sum(c.isalpha() for c in cell) > 0.6 * len(cell)


def side_by_side(text: str) -> bool:
    """Whether a node's text joins a cell of prose with another cell of three words or more."""
    cells = text.split(" | ")
    return (
        len(cells) >= 2 and any(_prose(c) for c in cells) and any(len(c.split()) >= 3 for c in cells if not _prose(c))
    )


def read_nodes(path: str) -> list[tuple[str, str, str]]:
    """(block, pages, text) of every node of the PDF's tree; [] for a rejected file."""
    result = ingest(CollectionSpec("side-by-side", path, "pdf"))
    if not result.documents:
        return []
    return [(n.block, n.pages, n.text) for n in document_tree(result.documents[0]).nodes]


def read_folder(folder: Path, seconds: float) -> tuple[dict[str, list[tuple[str, str, str]]], list[str]]:
    """Every PDF under `folder` read in a worker process; one over the time limit is stopped (its
    worker is replaced) and listed with those the reader rejects."""
    trees: dict[str, list[tuple[str, str, str]]] = {}
    skipped: list[str] = []
    pool = multiprocessing.Pool(1)
    try:
        for path in sorted(folder.rglob("*.pdf")):
            try:
                nodes = pool.apply_async(read_nodes, (str(path),)).get(timeout=seconds)
            except multiprocessing.TimeoutError:
                skipped.append(f"{path.name} (over {seconds:.0f} s)")
                pool.terminate()
                pool = multiprocessing.Pool(1)
                continue
            except Exception as error:  # a file the reader cannot open is listed, not fatal
                skipped.append(f"{path.name} ({type(error).__name__})")
                continue
            if nodes:
                trees[path.name] = [tuple(node) for node in nodes]
            else:
                skipped.append(f"{path.name} (rejected)")
    finally:
        pool.terminate()
    return trees, skipped


def baseline_trees(folder: Path, seconds: float) -> dict[str, list[tuple[str, str, str]]]:
    """The folder read by the reader of BASELINE_COMMIT, its sources taken from git."""
    arguments = ["--folder", str(folder), "--seconds", str(seconds)]
    found = run_at_commit(BASELINE_COMMIT, __file__, arguments)
    return {name: [tuple(node) for node in nodes] for name, nodes in found.items()}


def _words(nodes: list[tuple[str, str, str]]) -> Counter[str]:
    return Counter(word for _, _, text in nodes for word in text.replace(" | ", " ").split())


def compare(before: dict[str, list[tuple[str, str, str]]], trees: dict[str, list[tuple[str, str, str]]]) -> None:
    """The baseline's count, and the files whose trees changed, read by only one of the two."""
    changed = [name for name in trees if name in before and before[name] != trees[name]]
    previous = sum(1 for nodes in before.values() for _, _, text in nodes if side_by_side(text))
    print(
        f"\nbaseline ({BASELINE_COMMIT}): {len(before)} files read, {previous} side-by-side rows; {len(changed)} files changed"
    )
    print("| file | nodes before | nodes now | rows before | rows now | words lost | words gained |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in changed:
        old, new = _words(before[name]), _words(trees[name])
        rows = [sum(1 for _, _, text in nodes if side_by_side(text)) for nodes in (before[name], trees[name])]
        print(
            f"| {name} | {len(before[name])} | {len(trees[name])} | {rows[0]} | {rows[1]} "
            f"| {sum((old - new).values())} | {sum((new - old).values())} |"
        )
    print("read by the baseline only: " + (", ".join(sorted(set(before) - set(trees))) or "none"))
    print("read now only: " + (", ".join(sorted(set(trees) - set(before))) or "none"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, required=True, help="PDFs to read (searched recursively)")
    parser.add_argument("--seconds", type=float, default=60.0, help="time limit per file")
    parser.add_argument(
        "--baseline", action="store_true", help=f"also read the folder with the reader of {BASELINE_COMMIT}"
    )
    parser.add_argument("--show", type=int, default=2, help="example nodes printed per file")
    parser.add_argument("--json-out", type=Path, help="only write the trees as JSON here (the baseline's run)")
    args = parser.parse_args()
    trees, skipped = read_folder(args.folder, args.seconds)
    if args.json_out:
        args.json_out.write_text(json.dumps(trees))
        return
    counts = {name: [text for _, _, text in nodes if side_by_side(text)] for name, nodes in trees.items()}
    print("| file | nodes | side-by-side rows | example |\n|---|---:|---:|---|")
    for name, found in sorted(counts.items()):
        if found:
            example = "; ".join(text[:100].replace("|", "\\|") for text in found[: args.show])
            print(f"| {name} | {len(trees[name])} | {len(found)} | {example} |")
    total = sum(len(found) for found in counts.values())
    print(f"\n{len(trees)} files read, {sum(1 for f in counts.values() if f)} with side-by-side rows, {total} rows")
    rejected = [name for name in skipped if name.endswith("(rejected)")]
    failed = [name for name in skipped if not name.endswith("(rejected)")]
    print(f"rejected by the reader (no text, damaged, encrypted): {len(rejected)}")
    if failed:
        print("not read: " + ", ".join(failed))
    if args.baseline:
        compare(baseline_trees(args.folder, args.seconds), trees)


if __name__ == "__main__":
    main()
