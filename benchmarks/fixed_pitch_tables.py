"""Which monospaced blocks of a folder of PDFs the reader reads as tables (`parsers/pdf_fixed_grid`).

Every PDF under `--folder` is read as a collection would read it; each monospaced block the rule
turns into a grid is printed (file, rows x columns, its first lines), with the count of code
blocks left as code. A grid in a code listing is a false table: read the lines printed.

    .venv/bin/python -m benchmarks.fixed_pitch_tables --folder /tmp/pdfs

The rule is wrapped to record what it returns (the reader itself is unchanged).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import rag_assets.core.corpus.parsers.pdf_draft as pdf_draft
from rag_assets.core.corpus.parsers.pdf_fixed_grid import FixedGrid
from rag_assets.core.corpus.sources import CollectionSpec, ingest
from rag_assets.core.corpus.tree import CONTENT
from rag_assets.core.corpus.tree_building import document_tree


def recording(rule: Callable[[list[str]], FixedGrid | None], found: list[tuple[FixedGrid, list[str]]]):
    def grid(lines: list[str]) -> FixedGrid | None:
        result = rule(lines)
        if result is not None:
            found.append((result, lines))
        return result

    return grid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, required=True, help="PDFs to read (searched recursively)")
    args = parser.parse_args()
    files = sorted(args.folder.rglob("*.pdf"))
    found: list[tuple[FixedGrid, list[str]]] = []
    pdf_draft.fixed_pitch_grid = recording(pdf_draft.fixed_pitch_grid, found)
    grids = code = 0
    for path in files:
        before = len(found)
        with tempfile.TemporaryDirectory() as folder:
            shutil.copy(path, folder)
            result = ingest(CollectionSpec("bench", folder, "pdf"))
            trees = [document_tree(document) for document in result.documents]
        code += sum(n.kind == CONTENT and n.block == "code" for tree in trees for n in tree.nodes)
        for grid, lines in found[before:]:
            grids += 1
            first = " / ".join(lines[i].strip() for i in grid.lines[:2])
            print(f"{path.relative_to(args.folder)}: {len(grid.rows)} x {len(grid.rows[0])}: {first}", flush=True)
    print(f"{len(files)} PDFs: {grids} monospaced blocks read as tables, {code} code blocks left as code")


if __name__ == "__main__":
    main()
