"""Where each PDF line's column starts and ends: the left margin and right edge that tell a
wrapped line from one the text broke (a list item, an address) and an indent from a margin."""

from __future__ import annotations

from collections import Counter

from rag_assets.core.corpus.parsers.pdf_columns import crosses, gutters, text_columns
from rag_assets.core.corpus.parsers.pdf_lines import HEADING_SCALE, Line


def _columns(lines: list[Line], width: float) -> list[float]:
    """The page's column gutters, as reading order finds them (none on a one-column page)."""
    found = gutters(lines, width) if len(lines) >= 6 and width > 0 else []
    return found if found and text_columns(lines, found, width) else []


def _margins(lines: list[Line], width: float) -> list[tuple[float, float]]:
    """(left margin, right edge) of each line's column: the commonest start, and the furthest end
    of its text lines, in its column (one column pages: the whole page). Lines that share a start
    and mostly end together (a justified block set in from the margins: an abstract, a quote)
    have their own right edge."""
    bounds = _columns(lines, width)

    def column(line: Line) -> int:
        """The line's column, or -1 for a line across a gutter (a title): those form a group of their own."""
        if crosses(line, bounds):
            return -1
        return sum(gutter <= (line.x0 + line.x1) / 2 for gutter in bounds)

    groups: dict[int, list[Line]] = {}
    for line in lines:
        groups.setdefault(column(line), []).append(line)
    edges = {index: (_left_margin(group), _right_edge(group)) for index, group in groups.items()}
    justified = _justified_edges(lines)
    return [(edges[column(ln)][0], justified.get(round(ln.x0), edges[column(ln)][1])) for ln in lines]


def _justified_edges(lines: list[Line]) -> dict[int, float]:
    """start -> right edge of the lines starting there, where at least three do and half of them
    end within 0.4 em of the furthest (a final hyphen is narrower): a justified block's own edge."""
    starts: dict[int, list[Line]] = {}
    for line in lines:
        starts.setdefault(round(line.x0), []).append(line)
    edges: dict[int, float] = {}
    for start, group in starts.items():
        furthest = max(ln.x1 for ln in group)
        if len(group) >= 3 and sum(furthest - ln.x1 < 0.4 * ln.size for ln in group) * 2 >= len(group):
            edges[start] = furthest
    return edges


def _right_edge(lines: list[Line]) -> float:
    """Where the column's text lines end: the furthest end among lines not set larger than its
    commonest size (a title may span both columns) and not monospaced (code printed from a web
    page may overflow its box), unless there are no such lines."""
    common = Counter(round(ln.size) for ln in lines).most_common(1)[0][0]
    text = [ln.x1 for ln in lines if not ln.mono and ln.size < common * HEADING_SCALE]
    return max(text or [ln.x1 for ln in lines])


def _left_margin(lines: list[Line]) -> float:
    """The leftmost start shared by several lines (a tenth of them, at least two): on a page of
    lists the commonest start is the items' indent, not the margin."""
    starts = Counter(round(ln.x0) for ln in lines)
    shared = [x for x, n in starts.items() if n >= max(2, len(lines) / 10)]
    return min(shared) if shared else starts.most_common(1)[0][0]


def page_margins(pages: list[list[Line]], widths: list[float]) -> dict[int, tuple[float, float]]:
    """id(line) -> (left margin, right edge) of its column, for every line of every page."""
    margins: dict[int, tuple[float, float]] = {}
    for lines, width in zip(pages, widths, strict=True):
        if lines:
            margins.update(zip(map(id, lines), _margins(lines, width), strict=True))
    return margins
