"""Table scores of the field: detection by region overlap, structure by adjacency relations.

Detection (a table found where the truth has one): each truth region and each found region
is a page and a box; a found region matches a truth region on the same page when their
intersection over union is at least `MIN_IOU` (0.5), each region matched at most once (greedy,
largest overlap first). Precision = matched / found, recall = matched / truth.

Structure (the ICDAR 2013 competition's adjacency relations, Göbel et al. 2012): every
non-empty cell is related to its nearest non-empty cell to the right (in any grid row it
spans) and its nearest non-empty cell below (in any grid column it spans); a relation is the
pair of the two contents and its direction. Contents are compared with all whitespace
removed (line breaks inside a cell differ between readers), after Unicode NFKC. Found and truth
relations are matched as multisets: precision = matched / found, recall = matched / truth.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rag_assets.core.corpus.parsers.pdf_table import GridCell

MIN_IOU = 0.5


@dataclass(frozen=True, slots=True)
class Region:
    """A table's place: 1-based page and box (x0, y0, x1, y1) in one coordinate system."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def area(self) -> float:
        return max(self.x1 - self.x0, 0.0) * max(self.y1 - self.y0, 0.0)


@dataclass(frozen=True, slots=True)
class Counts:
    """Matched, found and truth counts, with the scores they give."""

    matched: int
    found: int
    truth: int

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.matched + other.matched, self.found + other.found, self.truth + other.truth)

    @property
    def precision(self) -> float:
        return self.matched / self.found if self.found else 0.0

    @property
    def recall(self) -> float:
        return self.matched / self.truth if self.truth else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def iou(a: Region, b: Region) -> float:
    """Intersection over union of two regions (0 on different pages)."""
    if a.page != b.page:
        return 0.0
    inter = Region(a.page, max(a.x0, b.x0), max(a.y0, b.y0), min(a.x1, b.x1), min(a.y1, b.y1))
    if inter.x1 <= inter.x0 or inter.y1 <= inter.y0:
        return 0.0
    union = a.area + b.area - inter.area
    return inter.area / union if union > 0 else 0.0


def detection_counts(truth: Sequence[Region], found: Sequence[Region], min_iou: float = MIN_IOU) -> Counts:
    """Found regions matched one-to-one to truth regions with IoU ≥ `min_iou`, largest first."""
    pairs = sorted(
        ((iou(t, f), ti, fi) for ti, t in enumerate(truth) for fi, f in enumerate(found)),
        reverse=True,
    )
    used_truth: set[int] = set()
    used_found: set[int] = set()
    for overlap, ti, fi in pairs:
        if overlap < min_iou:
            break
        if ti not in used_truth and fi not in used_found:
            used_truth.add(ti)
            used_found.add(fi)
    return Counts(len(used_truth), len(found), len(truth))


def normalise(text: str) -> str:
    """A cell's content as relations compare it: NFKC, no whitespace at all."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def adjacency_relations(cells: Iterable[GridCell]) -> Counter[tuple[str, str, str]]:
    """(direction, content, neighbour's content) of each non-empty cell and its nearest
    non-empty neighbour to the right and below, counted once per pair of cells."""
    filled = [c for c in cells if normalise(c.text)]
    at: dict[tuple[int, int], int] = {}
    for index, cell in enumerate(filled):
        for r in range(cell.row, cell.row + cell.row_span):
            for c in range(cell.col, cell.col + cell.col_span):
                at[(r, c)] = index
    last_col = max((c for _, c in at), default=-1)
    last_row = max((r for r, _ in at), default=-1)
    pairs: set[tuple[str, int, int]] = set()
    for index, cell in enumerate(filled):
        for r in range(cell.row, cell.row + cell.row_span):
            right = next(
                (at[(r, c)] for c in range(cell.col + cell.col_span, last_col + 1) if (r, c) in at),
                None,
            )
            if right is not None:
                pairs.add(("right", index, right))
        for c in range(cell.col, cell.col + cell.col_span):
            below = next(
                (at[(r, c)] for r in range(cell.row + cell.row_span, last_row + 1) if (r, c) in at),
                None,
            )
            if below is not None:
                pairs.add(("below", index, below))
    return Counter((kind, normalise(filled[a].text), normalise(filled[b].text)) for kind, a, b in pairs)


def adjacency_counts(truth: Iterable[Iterable[GridCell]], found: Iterable[Iterable[GridCell]]) -> Counts:
    """Relations of the found tables matched against the truth tables' (one document's tables
    each pooled, so no pairing of tables is needed)."""
    want: Counter[tuple[str, str, str]] = Counter()
    for table in truth:
        want += adjacency_relations(table)
    got: Counter[tuple[str, str, str]] = Counter()
    for table in found:
        got += adjacency_relations(table)
    return Counts(sum((want & got).values()), sum(got.values()), sum(want.values()))
