"""OCR words become the runs the text layer gives: one per line, the font size implied by the
words' ink heights, the box of the font's ascent and descent around the baseline, a wide gap
between words starting a new run (a table cell). Words placed by hand, in points."""

from __future__ import annotations

import pytest

from rag_assets.core.corpus.parsers.pdf_ocr import Word, words_to_runs

pytestmark = pytest.mark.unit


def test_a_line_of_words_is_one_run_sized_by_its_letters() -> None:
    # 10-point type with its baseline at y=100: "Pump" has a capital and a descender (0.91 em of
    # ink), "the" an ascender (0.70 em), "on" neither (0.50 em): each implies 10 points
    line = (1, 1, 1)
    words = [
        Word(72.0, 93.0, 95.0, 102.1, "Pump", line),
        Word(98.0, 93.0, 110.0, 100.0, "the", line),
        Word(113.0, 95.0, 123.0, 100.0, "on", line),
    ]
    assert words_to_runs(words) == [[72.0, 90.7, 123.0, 102.5, 10.0, False, "Pump the on", False, False]]


def test_a_wide_gap_parts_cells_and_lines_stay_apart() -> None:
    words = [
        Word(72.0, 93.0, 100.0, 100.0, "Total", (1, 1, 1)),
        Word(300.0, 93.0, 330.0, 100.0, "1,234", (1, 1, 1)),  # 200 points on: another cell
        Word(72.0, 113.0, 100.0, 120.0, "Net", (1, 1, 2)),
    ]
    runs = words_to_runs(words)
    assert [(run[0], run[6]) for run in runs] == [(72.0, "Total"), (300.0, "1,234"), (72.0, "Net")]
    assert {run[4] for run in runs} == {10.0}
