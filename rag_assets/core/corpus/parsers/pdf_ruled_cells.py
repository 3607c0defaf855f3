"""A ruled table's cells checked against the text the page prints in them.

pdfplumber's cells are the rectangles the rules draw, and producers often rule less than the
table holds: columns ruled but not the rows between them (one cell then holds a column of
values, one per line), or rows ruled but not the columns (one cell holds a whole row's values,
set apart by gaps that line up with the columns ruled above). Three general rules split such
cells by the positions of the page's own text runs (`Line.cells`):

- a ruled row whose cells each print their lines at most of the same heights, at least
  `MIN_LINE_ROWS` of them, and one of whose cells prints a figure on every line, is that many
  rows (text wrapped inside a cell fails "most cells, most heights" or, as a header wrapped
  over three lines in every column does, "a figure on every line");
- a cell over several grid columns whose runs fall in different columns is one cell per column
  (a title centred over its columns, on one line or wrapped over several that all cross one
  column edge, keeps its span); the grid's columns are the ruled ones and the text columns set
  apart by space inside them (`_text_columns`). Columns are split before rows: a ruled header
  over a body ruled as one box gives that box one cell per column, which the rows then cut;
- a row whose column of figures prints on fewer lines than the row holds is one row per figure
  when each other line continues a cell wrapped over it (it prints in fewer than half the cells
  the figures' lines print in: an expense's description on a second line under its record).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import pairwise

from rag_assets.core.corpus.parsers.pdf_lines import Line

Box = tuple[float, float, float, float, str]  # x0, top, x1, bottom, text
Run = tuple[float, float, float, float, str]

MIN_LINE_ROWS = 3
# a figure as tables print it: 1,234.5 (12%) -3 0.44 — a digit, and only number marks around it
_FIGURE = re.compile(r"^[-–−+(]?[$€£]?\s*\d[\d\s.,]*%?\)?(?:\s*\(\s*\d[\d.,]*\s*%?\))?$")
_FILLED_SHARE = 2 / 3  # share of the row's line heights every non-empty cell must print on


def _runs_in(box: Box, runs: list[Run]) -> list[Run]:
    x0, top, x1, bottom, _ = box
    return [r for r in runs if x0 <= (r[0] + r[2]) / 2 <= x1 and top <= (r[1] + r[3]) / 2 <= bottom]


def _heights(runs: list[Run]) -> list[float]:
    """The distinct text-line tops among runs (tops within half a line of each other are one)."""
    tops: list[float] = []
    for run in sorted(runs, key=lambda r: r[1]):
        if not tops or run[1] - tops[-1] > 0.5 * (run[3] - run[1]):
            tops.append(run[1])
    return tops


def _text(runs: list[Run]) -> str:
    return " ".join(r[4] for r in sorted(runs, key=lambda r: (round(r[1]), r[0])))


def _row_starts(heights: list[float], inside: list[list[Run]], filled: list[list[Run]]) -> list[float] | None:
    """The text-line tops each of the row's rows starts at: every line, when every non-empty
    cell prints on most of them; else the lines of its column of figures (the one printing on
    most lines), when every other line continues a cell wrapped over it (it prints in fewer than
    half of the cells the figures' lines print in: a record's description on a second line); else
    None (one row)."""
    figures = [found for found in filled if all(_FIGURE.match(r[4].strip()) for r in found)]
    if not figures:
        return None
    if all(len(_heights(found)) >= _FILLED_SHARE * len(heights) for found in filled):
        return heights
    starts = _heights(max(figures, key=lambda found: len(_heights(found))))
    if len(starts) < MIN_LINE_ROWS:
        return None

    def printing(top: float) -> int:
        return sum(1 for found in inside if any(abs(r[1] - top) <= 0.5 * (r[3] - r[1]) for r in found))

    least = min(printing(top) for top in starts)
    if any(2 * printing(top) >= least for top in heights if min(abs(top - s) for s in starts) > 0.5):
        return None
    return starts


def _split_rows(row: list[Box], runs: list[Run]) -> list[Box] | None:
    """The row's cells cut above each line a row starts at (`_row_starts`), or None when the row
    is one row (see the module's rule)."""
    inside = [_runs_in(box, runs) for box in row]
    heights = _heights([r for found in inside for r in found])
    filled = [found for found in inside if found]
    if len(heights) < MIN_LINE_ROWS or len(filled) < 2:
        return None
    starts = _row_starts(heights, inside, filled)
    if starts is None:
        return None
    top, bottom = row[0][1], row[0][3]
    above = {start: max((h for h in heights if h < start - 0.5), default=top) for start in starts[1:]}
    inner = [(above[start] + start) / 2 for start in starts[1:]]
    cuts = [top, *inner, bottom]
    cells = []
    for box, found in zip(row, inside):
        # a run belongs to the row its line's top falls in (lines set closer than their height
        # have centres past the cut between them)
        parts: list[list[Run]] = [[] for _ in starts]
        for run in found:
            parts[bisect_right(inner, run[1])].append(run)
        cells.extend((box[0], upper, box[2], lower, _text(part)) for (upper, lower), part in zip(pairwise(cuts), parts))
    return cells


def _split_columns(box: Box, runs: list[Run], xs: list[float]) -> list[Box]:
    """A cell over several grid columns as one cell per column when its runs fall in more than one."""
    inside = _runs_in(box, runs)
    edges = [x for x in xs if box[0] - 1 <= x <= box[2] + 1]
    if len(edges) < 3 or len(inside) < 2:
        return [box]
    if any(all(r[0] < x < r[2] for r in inside) for x in edges[1:-1]):
        return [box]  # every line crosses one column edge: a title over its columns, wrapped
    columns: dict[int, list[Run]] = {}
    for run in inside:
        centre = (run[0] + run[2]) / 2
        index = max(i for i in range(len(edges) - 1) if edges[i] <= centre or i == 0)
        columns.setdefault(min(index, len(edges) - 2), []).append(run)
    if len(columns) < 2:
        return [box]
    return [(edges[i], box[1], edges[i + 1], box[3], _text(columns.get(i, []))) for i in range(len(edges) - 1)]


def _text_columns(xs: list[float], runs: list[Run]) -> list[float]:
    """Edges between text columns that no rule separates: within each ruled column, the gaps no
    run crosses on any line where at least half the column's lines print text on both sides (a
    table ruled only after its label column, its figures set apart by space alone; not the
    words of a wrapped header, which only its own lines split)."""
    edges: list[float] = []
    for left, right in pairwise(xs):
        inside = sorted((r for r in runs if left <= (r[0] + r[2]) / 2 <= right), key=lambda r: r[0])
        groups: list[list[Run]] = []
        for run in inside:
            if groups and run[0] <= max(r[2] for r in groups[-1]):
                groups[-1].append(run)
            else:
                groups.append([run])
        lines = _heights(inside)
        for before, after in pairwise(groups):
            gap = (max(r[2] for r in before) + after[0][0]) / 2
            both = [t for t in lines if _prints(inside, t, 0, gap) and _prints(inside, t, gap, right + 1)]
            if 2 * len(both) >= len(lines) >= 2:
                edges.append(gap)
    return edges


def _prints(runs: list[Run], top: float, left: float, right: float) -> bool:
    """Whether a run on the line at `top` lies between `left` and `right`."""
    return any(abs(r[1] - top) <= 0.5 * (r[3] - r[1]) and left <= r[0] and r[2] <= right for r in runs)


def page_runs(lines: list[Line]) -> list[Run]:
    """Each text run of the lines (a row's cells, else the whole line) with its line's box."""
    runs = []
    for line in lines:
        for x0, x1, text in line.cells or [(line.x0, line.x1, line.text)]:
            runs.append((x0, line.top, x1, line.bottom, text))
    return runs


def split_ruled_cells(boxes: list[Box], lines: list[Line]) -> list[Box]:
    """The table's cell boxes with the cells the rules left unsplit split by the printed text."""
    runs = page_runs(lines)
    xs = sorted({round(v, 0) for box in boxes for v in (box[0], box[2])})
    xs = sorted([*xs, *_text_columns(xs, runs)])
    by_row: dict[tuple[float, float], list[Box]] = {}
    for box in boxes:
        by_row.setdefault((round(box[1]), round(box[3])), []).append(box)
    result: list[Box] = []
    for row in by_row.values():
        # columns first: a cell over the whole table holding many rows (a ruled header above a
        # body in one box) is one cell per column, which the rows then cut
        columns = [part for box in row for part in _split_columns(box, runs, xs)]
        result.extend(_split_rows(columns, runs) or columns)
    return [_spaced(box, runs) for box in result]


def _spaced(box: Box, runs: list[Run]) -> Box:
    """The cell with the page's own runs as its text where they print the same characters:
    pdfplumber joins words set tightly ("DOCUMENTNO."), PDFium keeps the space it printed."""
    text = _text(_runs_in(box, runs))
    return (*box[:4], text) if text and "".join(text.split()) == "".join(box[4].split()) else box
