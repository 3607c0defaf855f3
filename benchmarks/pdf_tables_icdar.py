"""Tables found in the ICDAR 2013 table competition's PDFs, scored against their truth.

The 27 EU documents of ../shared/datasets/icdar2013_tables (eu-009b's truth has no PDF): each
`NAME-reg.xml` gives each table's regions (1-based page, box in PDF points from the page's
bottom-left), each `NAME-str.xml` their cells (start/end row and column, content). Candidates,
each run on the same files in the same run:

- reader: this project's PDF reader (`extract_pdf`, then the grids it builds, `pdf_table_grids`);
- camelot lattice and camelot stream (camelot-py 2.0, MIT; the `bench` extra);
- pdfplumber: `Page.find_tables()` with its default (ruled lines) settings.

Scores (`rag_assets/core/evaluation/table_structure.py`): table detection precision, recall
and F1, a found region matching a truth region on the same page at IoU ≥ 0.5, one to one;
adjacency-relation precision, recall and F1 (the competition's: each non-empty cell with its
nearest non-empty right and lower neighbour, both contents equal with whitespace removed),
pooled over all documents, every found table's relations counted; seconds per page (the
candidate's whole read of a document over its pages). The last columns are ratios to camelot
lattice's figures measured in the same run.

    .venv/bin/python -m benchmarks.pdf_tables_icdar --datasets ../shared/datasets
"""

from __future__ import annotations

import argparse
import io
import logging
import sys
import time
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium

from rag_assets.core.corpus.parsers.pdf_extract import extract_pdf
from rag_assets.core.corpus.parsers.pdf_ruled_tables import cell_boxes
from rag_assets.core.corpus.parsers.pdf_table import GridCell
from rag_assets.core.corpus.parsers.pdf_table_grid import box_grid
from rag_assets.core.corpus.parsers.pdf_table_grids import pdf_table_grids
from rag_assets.core.evaluation.table_structure import Counts, Region, adjacency_counts, detection_counts

Found = tuple[list[Region], list[list[GridCell]]]  # regions (PDF points, bottom-left) and grids


@dataclass
class Totals:
    detection: Counts = field(default_factory=lambda: Counts(0, 0, 0))
    adjacency: Counts = field(default_factory=lambda: Counts(0, 0, 0))
    seconds: float = 0.0
    pages: int = 0
    failed: list[str] = field(default_factory=list)


def truth_regions(path: Path) -> list[Region]:
    """The regions of `NAME-reg.xml`, one per table and page."""
    regions = []
    for region in ET.parse(path).getroot().iter("region"):
        box = region.find("bounding-box")
        assert box is not None, f"{path}: a region without a bounding-box"
        x1, y1, x2, y2 = (float(box.get(k, "0")) for k in ("x1", "y1", "x2", "y2"))
        regions.append(Region(int(region.get("page", "0")), min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)))
    return regions


def truth_grids(path: Path) -> list[list[GridCell]]:
    """The cells of `NAME-str.xml`, one grid per table region."""
    grids = []
    for region in ET.parse(path).getroot().iter("region"):
        cells = []
        for cell in region.iter("cell"):
            row, col = int(cell.get("start-row", "0")), int(cell.get("start-col", "0"))
            end_row, end_col = int(cell.get("end-row", row)), int(cell.get("end-col", col))
            content = cell.find("content")
            text = content.text if content is not None and content.text else ""
            cells.append(GridCell(row, col, text, end_row - row + 1, end_col - col + 1))
        grids.append(cells)
    return grids


def page_heights(path: Path) -> list[float]:
    document = pdfium.PdfDocument(path)
    try:
        return [document[i].get_height() for i in range(len(document))]
    finally:
        document.close()


def _from_top(page: int, box: tuple[float, float, float, float], heights: list[float]) -> Region:
    x0, top, x1, bottom = box
    height = heights[page - 1]
    return Region(page, x0, height - bottom, x1, height - top)


def read_reader(path: Path, heights: list[float]) -> Found:
    grids = pdf_table_grids(extract_pdf(path.read_bytes()).layout)
    return [_from_top(g.page, g.box, heights) for g in grids], [g.cells for g in grids]


def _camelot(flavor: str) -> Callable[[Path, list[float]], Found]:
    def read(path: Path, heights: list[float]) -> Found:
        import camelot  # the `bench` extra: only this benchmark needs it

        tables = camelot.read_pdf(str(path), pages="all", flavor=flavor)
        regions, grids = [], []
        for table in tables:
            x0, y0, x1, y1 = table._bbox
            regions.append(Region(int(table.page), x0, y0, x1, y1))
            grids.append([GridCell(r, c, str(text)) for r, row in enumerate(table.data) for c, text in enumerate(row)])
        return regions, grids

    return read


def read_pdfplumber(path: Path, heights: list[float]) -> Found:
    import pdfplumber

    regions, grids = [], []
    with pdfplumber.open(io.BytesIO(path.read_bytes())) as pdf:
        for number, page in enumerate(pdf.pages, start=1):
            for table in page.find_tables():
                regions.append(_from_top(number, table.bbox, heights))
                grids.append(box_grid(cell_boxes(table)))
            page.close()
    return regions, grids


CANDIDATES: dict[str, Callable[[Path, list[float]], Found]] = {
    "reader": read_reader,
    "camelot lattice": _camelot("lattice"),
    "camelot stream": _camelot("stream"),
    "pdfplumber": read_pdfplumber,
}


def score(folder: Path, names: list[str], candidates: list[str], verbose: bool) -> dict[str, Totals]:
    totals = {name: Totals() for name in candidates}
    for stem in names:
        path = folder / f"{stem}.pdf"
        heights = page_heights(path)
        regions = truth_regions(folder / f"{stem}-reg.xml")
        grids = truth_grids(folder / f"{stem}-str.xml")
        for name in candidates:
            started = time.perf_counter()
            try:
                found, cells = CANDIDATES[name](path, heights)
            except Exception as err:  # a candidate that fails on a file scores nothing there
                totals[name].failed.append(f"{stem}: {type(err).__name__}: {err}")
                found, cells = [], []
            total = totals[name]
            total.seconds += time.perf_counter() - started
            total.pages += len(heights)
            detection, adjacency = detection_counts(regions, found), adjacency_counts(grids, cells)
            total.detection += detection
            total.adjacency += adjacency
            if verbose:
                print(
                    f"  {stem} {name}: tables {detection.matched}/{detection.found} of {detection.truth}, "
                    f"relations {adjacency.matched}/{adjacency.found} of {adjacency.truth}",
                    flush=True,
                )
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    parser.add_argument("--only", help="score only the documents whose name contains this")
    parser.add_argument(
        "--candidates", default=",".join(CANDIDATES), help=f"comma-separated, of: {', '.join(CANDIDATES)}"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print each document's counts")
    args = parser.parse_args()
    folder = args.datasets / "icdar2013_tables"
    if not folder.is_dir():
        sys.exit(f"no ICDAR 2013 tables at {folder}")
    candidates = [c.strip() for c in args.candidates.split(",") if c.strip()]
    unknown = [c for c in candidates if c not in CANDIDATES]
    if unknown:
        sys.exit(f"unknown candidates {unknown}; known: {list(CANDIDATES)}")
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    logging.getLogger("camelot").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="camelot")  # "No tables found in table area", per page
    names = sorted(p.stem for p in folder.glob("*.pdf") if args.only is None or args.only in p.stem)
    totals = score(folder, names, candidates, args.verbose)
    base = totals.get("camelot lattice")
    print(f"{len(names)} documents, {sum(len(truth_regions(folder / f'{n}-reg.xml')) for n in names)} table regions")
    print(
        "| candidate | tables found | det. P | det. R | det. F1 | adj. P | adj. R | adj. F1 | s/page "
        "| det. F1 vs lattice | adj. F1 vs lattice |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, t in totals.items():
        d, a = t.detection, t.adjacency
        ratios = (
            f"{d.f1 / base.detection.f1:.2f} | {a.f1 / base.adjacency.f1:.2f}"
            if base is not None and base.detection.f1 and base.adjacency.f1
            else "– | –"
        )
        print(
            f"| {name} | {d.found} | {d.precision:.3f} | {d.recall:.3f} | {d.f1:.3f} | {a.precision:.3f} | "
            f"{a.recall:.3f} | {a.f1:.3f} | {t.seconds / max(t.pages, 1):.3f} | {ratios} |"
        )
    for name, t in totals.items():
        for failure in t.failed:
            print(f"{name} failed on {failure}")


if __name__ == "__main__":
    main()
