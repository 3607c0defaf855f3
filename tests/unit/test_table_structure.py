"""The table scores of the field (`core/evaluation/table_structure`) on hand-made grids and
boxes, each expected figure counted by hand below; the cell grids the PDF reader's tables
keep (`pdf_table_grid`): merged cells as spans, empty cells kept empty, header paths; and the
ruled cells split by the text printed in them (`pdf_ruled_cells`)."""

from __future__ import annotations

import pytest

from rag_assets.core.corpus.parsers.pdf_lines import Line
from rag_assets.core.corpus.parsers.pdf_ruled_cells import split_ruled_cells
from rag_assets.core.corpus.parsers.pdf_ruled_tables import closing_sides
from rag_assets.core.corpus.parsers.pdf_table import GridCell
from rag_assets.core.corpus.parsers.pdf_table_grid import box_grid, grid_rows, ruled_grid, unruled_grid
from rag_assets.core.evaluation.table_structure import (
    Region,
    adjacency_counts,
    adjacency_relations,
    detection_counts,
    iou,
)

pytestmark = pytest.mark.unit


def test_iou_of_two_half_overlapping_boxes_and_of_boxes_on_other_pages() -> None:
    a, b = Region(1, 0, 0, 10, 10), Region(1, 5, 0, 15, 10)
    assert iou(a, b) == pytest.approx(50 / 150)  # 5x10 shared, 100 + 100 - 50 in all
    assert iou(a, Region(2, 0, 0, 10, 10)) == 0.0


def test_detection_matches_one_to_one_at_half_overlap() -> None:
    truth = [Region(1, 0, 0, 10, 10), Region(1, 0, 20, 10, 30)]
    found = [
        Region(1, 0, 0, 10, 8),  # IoU 0.8 with the first: a match
        Region(2, 0, 20, 10, 30),  # the second's box on another page: none
        Region(1, 0, 20, 10, 24),  # IoU 0.4 with the second: under 0.5, none
        Region(1, 0, 0, 10, 9),  # IoU 0.9 with the first, which the better one takes first
    ]
    counts = detection_counts(truth, found)
    # the 0.9 box takes the first truth region; the 0.8 box then has none left
    assert (counts.matched, counts.found, counts.truth) == (1, 4, 2)
    assert counts.precision == pytest.approx(1 / 4)
    assert counts.recall == pytest.approx(1 / 2)
    assert counts.f1 == pytest.approx(2 * (1 / 4) * (1 / 2) / (1 / 4 + 1 / 2))


# A two-level header ("Year" over 2019 and 2020) with an empty corner and two empty body cells:
#         | Year        |
#   Name  | 2019 | 2020 |
#   A     | 1    |      |
#   B     |      | 4    |
TRUTH = [
    GridCell(0, 0, ""),
    GridCell(0, 1, "Year", 1, 2),
    GridCell(1, 0, "Name"),
    GridCell(1, 1, "2019"),
    GridCell(1, 2, "2020"),
    GridCell(2, 0, "A"),
    GridCell(2, 1, "1"),
    GridCell(2, 2, ""),
    GridCell(3, 0, "B"),
    GridCell(3, 1, ""),
    GridCell(3, 2, "4"),
]


def test_adjacency_relations_skip_empty_cells_and_follow_spans() -> None:
    assert adjacency_relations(TRUTH) == {
        ("below", "Year", "2019"): 1,  # the spanning cell is above both of its columns
        ("below", "Year", "2020"): 1,
        ("right", "Name", "2019"): 1,
        ("below", "Name", "A"): 1,
        ("right", "2019", "2020"): 1,
        ("below", "2019", "1"): 1,
        ("below", "2020", "4"): 1,  # past the empty cell under 2020
        ("right", "A", "1"): 1,
        ("below", "A", "B"): 1,
        ("right", "B", "4"): 1,  # past the empty cell right of B
    }


def test_adjacency_scores_a_misread_grid() -> None:
    # "Year" read over 2019 only, "2020" read as "20 20" (whitespace does not count), "4" filed
    # one column left: relations Year-2020, 2020-4 are lost, 1-4 (below) is wrong
    found = [
        GridCell(0, 1, "Year"),
        GridCell(1, 0, "Name"),
        GridCell(1, 1, "2019"),
        GridCell(1, 2, "20 20"),
        GridCell(2, 0, "A"),
        GridCell(2, 1, "1"),
        GridCell(3, 0, "B"),
        GridCell(3, 1, "4"),
    ]
    counts = adjacency_counts([TRUTH], [found])
    # found: Year-2019, Name-2019, Name-A, 2019-2020, 2019-1, A-1, A-B, 1-4 (below), B-4 (right)
    assert (counts.matched, counts.found, counts.truth) == (8, 9, 10)
    assert counts.f1 == pytest.approx(2 * (8 / 9) * (8 / 10) / (8 / 9 + 8 / 10))


def test_ruled_grid_reads_merged_cells_as_spans() -> None:
    # pdfplumber's rows: None where a merged cell covers the slot
    rows = [["A", None, "B"], ["C", "D", None], [None, "E", ""]]
    assert ruled_grid(rows) == [
        GridCell(0, 0, "A", 1, 2),  # A covers the slot to its right
        GridCell(0, 2, "B", 2, 1),  # B covers the slot below it
        GridCell(1, 0, "C", 2, 1),
        GridCell(1, 1, "D"),
        GridCell(2, 1, "E"),
        GridCell(2, 2, ""),  # an empty cell keeps its place
    ]


def test_unruled_grid_puts_labels_first_and_keeps_header_levels() -> None:
    header_rows = [[(0, 1, "2019")], [(0, 0, "Sales"), (1, 1, "Margin")]]
    rows = [("Cars", ["5", ""]), ("Note", [])]
    assert unruled_grid(header_rows, "Millions", rows, 2) == [
        GridCell(0, 1, "2019", 1, 2),
        GridCell(1, 0, "Millions"),
        GridCell(1, 1, "Sales"),
        GridCell(1, 2, "Margin"),
        GridCell(2, 0, "Cars"),
        GridCell(2, 1, "5"),
        GridCell(2, 2, ""),
        GridCell(3, 0, "Note"),
        GridCell(3, 1, ""),
        GridCell(3, 2, ""),
    ]


def test_box_grid_reads_spans_from_the_cells_edges() -> None:
    # A over two columns, B down two rows, C and D under A; D's left edge drawn 0.4 pt off
    boxes = [
        (0.0, 0.0, 20.0, 10.0, "A"),
        (20.0, 0.0, 30.0, 20.0, "B"),
        (0.0, 10.0, 10.0, 20.0, "C"),
        (10.4, 10.0, 20.0, 20.0, ""),
    ]
    assert box_grid(boxes) == [
        GridCell(0, 0, "A", 1, 2),
        GridCell(0, 2, "B", 2, 1),
        GridCell(1, 0, "C"),
        GridCell(1, 1, ""),
    ]


def _line(top: float, runs: list[tuple[float, float, str]]) -> Line:
    return Line(runs[0][0], top, runs[-1][1], top + 8, 8.0, False, "\t".join(r[2] for r in runs), 1, cells=runs)


def test_a_ruled_row_holding_a_column_of_figures_per_cell_is_split_into_rows() -> None:
    # only the columns are ruled: one cell holds three countries, the next their three figures
    boxes = [(0.0, 0.0, 50.0, 10.0, "Country"), (50.0, 0.0, 100.0, 10.0, "Value")]
    boxes += [(0.0, 10.0, 50.0, 40.0, "A B C"), (50.0, 10.0, 100.0, 40.0, "1 2 3")]
    lines = [
        _line(top, [(2, 20, name), (60, 70, figure)])
        for top, name, figure in [(12, "A", "1"), (22, "B", "2"), (32, "C", "3")]
    ]
    # cut halfway between the lines' tops: 17 and 27
    assert sorted(split_ruled_cells(boxes, lines)) == sorted(
        [
            (0.0, 0.0, 50.0, 10.0, "Country"),
            (50.0, 0.0, 100.0, 10.0, "Value"),
            (0.0, 10.0, 50.0, 17.0, "A"),
            (0.0, 17.0, 50.0, 27.0, "B"),
            (0.0, 27.0, 50.0, 40.0, "C"),
            (50.0, 10.0, 100.0, 17.0, "1"),
            (50.0, 17.0, 100.0, 27.0, "2"),
            (50.0, 27.0, 100.0, 40.0, "3"),
        ]
    )


def test_a_header_wrapped_over_three_lines_in_every_column_stays_one_row() -> None:
    boxes = [(0.0, 10.0, 50.0, 40.0, "share of total sales"), (50.0, 10.0, 100.0, 40.0, "value of food sales")]
    lines = [
        _line(top, [(2, 40, a), (55, 95, b)])
        for top, a, b in [(12, "share", "value"), (22, "of total", "of food"), (32, "sales", "sales")]
    ]
    assert split_ruled_cells(boxes, lines) == boxes


def test_a_ruled_cell_over_several_columns_is_split_where_its_runs_fall() -> None:
    # the header rules three columns; the body row is one cell whose three runs sit under them
    boxes = [(0.0, 0.0, 50.0, 10.0, "Country"), (50.0, 0.0, 75.0, 10.0, "n"), (75.0, 0.0, 100.0, 10.0, "%")]
    boxes.append((0.0, 10.0, 100.0, 20.0, "Austria 109 0.9"))
    # the title over the three columns is a single run: it keeps its span
    boxes.append((0.0, 20.0, 100.0, 30.0, "Total of all"))
    lines = [_line(11, [(2, 30, "Austria"), (55, 65, "109"), (80, 90, "0.9")]), _line(21, [(30, 70, "Total of all")])]
    assert split_ruled_cells(boxes, lines) == [
        *boxes[:3],
        (0.0, 10.0, 50.0, 20.0, "Austria"),
        (50.0, 10.0, 75.0, 20.0, "109"),
        (75.0, 10.0, 100.0, 20.0, "0.9"),
        (0.0, 20.0, 100.0, 30.0, "Total of all"),
    ]


def test_grid_rows_give_each_column_its_header_path_and_leave_out_empty_slivers() -> None:
    grid = [
        GridCell(0, 0, "Country", 2, 1),  # two rows tall: the header is two rows deep
        GridCell(0, 1, "2007", 1, 2),
        GridCell(0, 3, "", 3, 1),  # an empty sliver between double rules
        GridCell(1, 1, "n"),
        GridCell(1, 2, "%Pos"),
        GridCell(2, 0, "Austria"),
        GridCell(2, 1, "109"),
        GridCell(2, 2, ""),
    ]
    assert grid_rows(grid) == (["Country", "2007 / n", "2007 / %Pos"], [["Austria", "109", ""]])


def _edge(orientation: str, x0: float, top: float, x1: float, bottom: float) -> dict[str, object]:
    return {"orientation": orientation, "x0": x0, "top": top, "x1": x1, "bottom": bottom}


def test_tables_ruled_only_between_columns_are_closed_at_their_rules_ends() -> None:
    # two tables, one above the other: rules drawn in pieces from x 70 to 524, a vertical rule
    # between columns inside each table, none across the caption between them
    edges = []
    for top in (100, 116, 132, 200, 216):
        edges += [_edge("h", 70, top, 300, top), _edge("h", 300, top, 524, top)]
    edges += [_edge("v", 276, 100, 276, 116), _edge("v", 276, 116, 276, 132), _edge("v", 276, 200, 276, 216)]
    page = type("Page", (), {"edges": edges})()
    sides = {(line["x0"], line["top"], line["bottom"]) for line in closing_sides(page)}
    assert sides == {(70.0, 100, 132), (524.0, 100, 132), (70.0, 200, 216), (524.0, 200, 216)}


def test_figures_set_apart_by_space_inside_one_ruled_column_become_columns() -> None:
    # ruled only after the label column: the header and each row print two figures apart
    boxes = [(0.0, 0.0, 50.0, 10.0, ""), (50.0, 0.0, 200.0, 10.0, "Freq. Percent")]
    boxes += [(0.0, 10.0, 50.0, 20.0, "A"), (50.0, 10.0, 200.0, 20.0, "1 2")]
    boxes += [(0.0, 20.0, 50.0, 30.0, "B"), (50.0, 20.0, 200.0, 30.0, "3 4")]
    lines = [
        _line(1, [(60, 80, "Freq."), (120, 150, "Percent")]),
        _line(11, [(2, 10, "A"), (60, 70, "1"), (130, 140, "2")]),
        _line(21, [(2, 10, "B"), (60, 70, "3"), (130, 140, "4")]),
    ]
    # the gap between x 80 and 120 is empty on every line: a column edge at 100
    assert split_ruled_cells(boxes, lines) == [
        (0.0, 0.0, 50.0, 10.0, ""),
        (50.0, 0.0, 100.0, 10.0, "Freq."),
        (100.0, 0.0, 200.0, 10.0, "Percent"),
        (0.0, 10.0, 50.0, 20.0, "A"),
        (50.0, 10.0, 100.0, 20.0, "1"),
        (100.0, 10.0, 200.0, 20.0, "2"),
        (0.0, 20.0, 50.0, 30.0, "B"),
        (50.0, 20.0, 100.0, 30.0, "3"),
        (100.0, 20.0, 200.0, 30.0, "4"),
    ]


def test_box_grid_merges_edges_no_text_fits_between_and_drops_empty_slivers() -> None:
    # a shaded header cell set 5 pt in from the body's edge, the 5 pt sliver beside it empty
    boxes = [(0.0, 0.0, 5.0, 10.0, ""), (5.0, 0.0, 100.0, 10.0, "Head"), (0.0, 10.0, 100.0, 20.0, "Body")]
    assert box_grid(boxes) == [GridCell(0, 0, "Head"), GridCell(1, 0, "Body")]
