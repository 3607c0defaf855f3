"""What a change to the PDF reader's page rules does to a collection's trees, before re-indexing
it: every PDF's stored layout (what extraction kept in the catalogue) is parsed into its tree by
the reader of this checkout and, in the same run, by the reader of `--baseline` (a commit, taken
from git), and the documents whose trees differ are listed with their nodes and table rows before
and after and the first changed nodes. Extraction is not run again (seconds, not the minutes of
reading the pages): a change to extraction itself (OCR, the text runs, the ruled cells pdfplumber
finds) shows only after a re-index.

    .venv/bin/python -m benchmarks.stored_layout_changes -c financebench --baseline COMMIT \\
        [--catalogue dagster_home/data-datasets/catalogue.duckdb] [--show 3]

The catalogue is opened read-only: stop a run that writes it first (or pass a copy).
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path

from rag_assets.core.corpus.tree_building import document_tree
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.document_tables import load_documents

Node = tuple[str, str]  # (block, text)


def stored_trees(catalogue: Path, collection: str) -> dict[str, list[Node]]:
    """doc id -> (block, text) of each node of the tree this checkout's reader builds from the
    document's stored PDF layout."""
    with catalogue_connection(catalogue, read_only=True) as con:
        documents = [doc for doc in load_documents(con, collection) if doc.format == "pdf"]
    return {doc.doc_id: [(node.block, node.text) for node in document_tree(doc).nodes] for doc in documents}


def _rows(nodes: list[Node]) -> int:
    return sum(1 for block, _ in nodes if block == "table_row")


def compare(before: dict[str, list[Node]], now: dict[str, list[Node]], show: int) -> int:
    """Print the documents whose trees changed; the number of them."""
    changed = [doc_id for doc_id in now if doc_id in before and before[doc_id] != now[doc_id]]
    print(f"{len(now)} PDFs, {len(changed)} trees changed")
    print("| document | nodes before | nodes now | table rows before | table rows now | nodes changed |")
    print("|---|---:|---:|---:|---:|---:|")
    examples = []
    for doc_id in changed:
        old, new = [t for _, t in before[doc_id]], [t for _, t in now[doc_id]]
        diff = [line for line in difflib.unified_diff(old, new, lineterm="", n=0) if line[:1] in "+-"]
        diff = [line for line in diff if not line.startswith(("+++", "---"))]
        print(
            f"| {doc_id} | {len(old)} | {len(new)} | {_rows(before[doc_id])} | {_rows(now[doc_id])} "
            f"| {sum(1 for line in diff if line.startswith('+'))} |"
        )
        examples += [f"{doc_id}: {line[:200]}" for line in diff[: 2 * show]]
    if examples:
        print("\nfirst changed nodes (- before, + now):")
        print("\n".join(examples))
    return len(changed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-c", "--collection", required=True)
    parser.add_argument("--catalogue", type=Path, default=Path("dagster_home/data-datasets/catalogue.duckdb"))
    parser.add_argument("--baseline", help="the commit whose reader the trees are compared with")
    parser.add_argument("--show", type=int, default=3, help="changed nodes printed per document (each side)")
    parser.add_argument("--json-out", type=Path, help="only write the trees as JSON here (the baseline's run)")
    args = parser.parse_args()
    if not args.catalogue.exists():
        sys.exit(f"no catalogue at {args.catalogue}")
    now = stored_trees(args.catalogue.resolve(), args.collection)
    if args.json_out:
        args.json_out.write_text(json.dumps(now))
        return
    if not args.baseline:
        sys.exit("--baseline COMMIT is needed: the reader to compare this checkout's with")
    from benchmarks.git_baseline import run_at_commit

    arguments = ["-c", args.collection, "--catalogue", str(args.catalogue.resolve())]
    found = run_at_commit(args.baseline, __file__, arguments)
    before = {doc_id: [tuple(node) for node in nodes] for doc_id, nodes in found.items()}
    compare(before, now, args.show)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
