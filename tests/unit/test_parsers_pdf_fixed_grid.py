"""Tables set in a monospaced font (their columns made of spaces) read as rows naming their
columns, not as one code blob; code with aligned comments stays code. The pages are drawn here as
a terminal report or a slide of scores sets them (the public case, pdfminer.six's
samples/nonfree/nlp2004slides.pdf pp. 17 and 19, may not be copied: SOURCES.md names it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.core.corpus.parsers.pdf_fixed_grid import fixed_pitch_grid, header_cells
from tests.unit.test_parsers_pdf import make_pdf, tree_of

pytestmark = pytest.mark.unit

SIZE = 9
ADVANCE = SIZE * 0.6  # Courier's glyphs are 0.6 em wide


def mono(lines: list[str], top: float) -> list[tuple[float, float, float, str, str]]:
    """Courier lines as a terminal sets them: every run of text at its character column."""
    runs = []
    for k, line in enumerate(lines):
        column = 0
        for word in line.split(" "):
            if word:
                runs.append((72 + column * ADVANCE, top + k * 12, SIZE, word, "Courier"))
            column += len(word) + 1
    return runs


SCORES = [
    "0.000    unicameral       adj       9",
    "0.000     gruffly         adv       6",
    "0.000      kingly         adj       4",
    "0.000    windsocks       noun      2",
    "0.000    metformin      PRODUCT    12",
]


def test_a_monospaced_table_under_a_proportional_header_names_its_columns(tmp_path: Path) -> None:
    page = [
        (72, 60, 16, "Lowest-scored words", True),
        (72, 100, 10, "Score", False),
        (140, 100, 10, "Word", False),
        (230, 100, 10, "Kind", False),
        (290, 100, 10, "Count", False),
        *mono(SCORES, 118),
        (72, 200, 10, "Most of them are rare adjectives.", False),
    ]
    (tmp_path / "scores.pdf").write_bytes(make_pdf([page]))
    tree = tree_of(tmp_path / "scores.pdf")
    assert [(n.block, n.text) for n in tree.nodes[1:]] == [
        ("table_row", "Score | Word | Kind | Count"),
        ("table_row", "0.000 | Word: unicameral | Kind: adj | Count: 9"),
        ("table_row", "0.000 | Word: gruffly | Kind: adv | Count: 6"),
        ("table_row", "0.000 | Word: kingly | Kind: adj | Count: 4"),
        ("table_row", "0.000 | Word: windsocks | Kind: noun | Count: 2"),
        ("table_row", "0.000 | Word: metformin | Kind: PRODUCT | Count: 12"),
        ("paragraph", "Most of them are rare adjectives."),
    ]


def test_a_terminal_report_with_its_own_header_line_nests_its_rows_under_it(tmp_path: Path) -> None:
    report = [
        "Region      Units   Revenue",
        "North         120    $1,450",
        "South          85      $990",
        "East Coast    210    $2,610",
    ]
    page = [(72, 60, 16, "Quarterly sales", True), *mono(report, 100)]
    (tmp_path / "report.pdf").write_bytes(make_pdf([page]))
    tree = tree_of(tmp_path / "report.pdf")
    assert [(n.depth, n.block, n.text) for n in tree.nodes[1:]] == [
        (1, "paragraph", "Region | Units | Revenue"),
        (2, "table_row", "North | Units: 120 | Revenue: $1,450"),
        (2, "table_row", "South | Units: 85 | Revenue: $990"),
        (2, "table_row", "East Coast | Units: 210 | Revenue: $2,610"),
    ]


def test_code_with_aligned_comments_or_ragged_lines_stays_code(tmp_path: Path) -> None:
    listing = [
        "width = 80       # columns",
        "height = 24      # rows",
        "title = 'demo'   # shown on top",
    ]
    page = [(72, 60, 16, "Settings", True), *mono(listing, 100)]
    (tmp_path / "code.pdf").write_bytes(make_pdf([page]))
    tree = tree_of(tmp_path / "code.pdf")
    assert [(n.block, n.text) for n in tree.nodes[1:]] == [("code", "\n".join(listing))]
    # no column of figures; cells that share no character column; too few lines
    assert fixed_pitch_grid(listing) is None
    assert fixed_pitch_grid(["a  1", "bbbbbbbbbbb  2", "c  3"]) is None
    assert fixed_pitch_grid(SCORES[:2]) is None
    grid = fixed_pitch_grid(["", *SCORES[:3]])
    assert grid is not None and grid.lines == [1, 2, 3] and grid.rows[1] == ["0.000", "gruffly", "adv", "6"]


def test_only_a_row_of_names_heads_a_monospaced_table() -> None:
    assert header_cells("Score | Word | Kind | Count", 4) == ["Score", "Word", "Kind", "Count"]
    assert header_cells("Score | Word | Kind", 4) is None  # another shape
    assert header_cells("Revenue | 2022: 1,234 | 2021: 1,100 | Change: 12%", 4) is None  # a row of another table
    assert header_cells("North | 120 | East | 85", 4) is None  # figures are no column names
