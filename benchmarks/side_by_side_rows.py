"""Side-by-side blocks read as rows: in a folder of PDFs nobody labelled (pdf.js's test files,
unstructured's examples), how many content nodes join a line of prose with what stands beside it
("4 Experimental Setup | amples in the dataset and the actual questions used for"): a node of
" | "-joined cells of which one is prose (seven words or more, mostly letters) and another holds
three words or more. A table's description column is counted too, so the count is an upper
bound on the faults; compare two runs of it (`--write` one, `--against` it from the other) to see
what a reader change fixed and broke, file by file, with the words each changed file gained and
lost (a row's repeated header text is a lost word when the row becomes a paragraph).

    .venv/bin/python -m benchmarks.side_by_side_rows --folder DIR [--write before.json]
    .venv/bin/python -m benchmarks.side_by_side_rows --folder DIR --against before.json

Each PDF is read as `rag tree` reads it, in a worker process with a time limit (a file that
does not finish, or is rejected, is listed and left out of the counts).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
from collections import Counter
from pathlib import Path

from rag_assets.core.corpus.sources import CollectionSpec, ingest
from rag_assets.core.corpus.tree_building import document_tree


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


def _words(nodes: list[tuple[str, str, str]]) -> Counter[str]:
    return Counter(word for _, _, text in nodes for word in text.replace(" | ", " ").split())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, required=True, help="PDFs to read (searched recursively)")
    parser.add_argument("--seconds", type=float, default=60.0, help="time limit per file")
    parser.add_argument("--write", type=Path, help="save this run's trees as JSON (for --against)")
    parser.add_argument("--against", type=Path, help="a run saved with --write, to compare with")
    parser.add_argument("--show", type=int, default=2, help="example nodes printed per file")
    args = parser.parse_args()
    trees, skipped = read_folder(args.folder, args.seconds)
    if args.write:
        args.write.write_text(json.dumps(trees))
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
    if args.against:
        before = {name: [tuple(node) for node in nodes] for name, nodes in json.loads(args.against.read_text()).items()}
        changed = [name for name in trees if name in before and before[name] != trees[name]]
        previous = sum(1 for nodes in before.values() for _, _, text in nodes if side_by_side(text))
        print(
            f"\nagainst {args.against}: {previous} side-by-side rows before, {total} now; {len(changed)} files changed"
        )
        print("| file | nodes before | nodes now | rows before | rows now | words lost | words gained |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name in changed:
            old, new = _words(before[name]), _words(trees[name])
            rows_before = sum(1 for _, _, text in before[name] if side_by_side(text))
            print(
                f"| {name} | {len(before[name])} | {len(trees[name])} | {rows_before} | {len(counts[name])} "
                f"| {sum((old - new).values())} | {sum((new - old).values())} |"
            )


if __name__ == "__main__":
    main()
