"""The engine benchmark's converters and scores (benchmarks/pdf_engine_outputs.py, heading_truth.py,
reading_order.py) on small hand-made inputs: opendataloader-pdf JSON and markdown pages become the
same (page, level, heading) and (page, block) lists, and the scores count what the labels say."""

from __future__ import annotations

import sys

import pypdfium2 as pdfium
import pytest

from benchmarks.heading_truth import (
    Entry,
    Heading,
    at_matched_levels,
    heading_parents,
    key,
    match,
    parent_correct,
    parent_faults,
)
from benchmarks.pdf_engine_outputs import (
    TextBlock,
    markdown_blocks,
    markdown_headings,
    opendataloader_blocks,
    opendataloader_headings,
)
from benchmarks.pdf_engines import TRUTH_FOLDER, EngineFailed, measured_child
from benchmarks.reading_order import Paragraph, load_truth, score_reading

pytestmark = pytest.mark.unit

# the shape opendataloader-pdf 2.5 writes (`-f json`): a heading, a list with a nested item, a table
OPENDATALOADER = {
    "file name": "f.pdf",
    "number of pages": 2,
    "kids": [
        {"type": "heading", "heading level": 1, "page number": 1, "content": "PART  I"},
        {"type": "paragraph", "page number": 1, "content": "Intro text\nwrapped."},
        {
            "type": "list",
            "page number": 1,
            "list items": [
                {
                    "type": "list item",
                    "page number": 1,
                    "content": "• first",
                    "kids": [{"type": "heading", "heading level": 3, "page number": 1, "content": "Nested"}],
                },
                {"type": "list item", "page number": 1, "content": "• second", "kids": []},
            ],
        },
        {"type": "image", "page number": 2},
        {"type": "heading", "heading level": 2, "page number": 2, "content": "Item 1. Business"},
        {
            "type": "table",
            "page number": 2,
            "rows": [
                {
                    "type": "table row",
                    "cells": [
                        {"type": "table cell", "kids": [{"type": "paragraph", "page number": 2, "content": "Revenue"}]},
                        {"type": "table cell", "kids": [{"type": "paragraph", "page number": 2, "content": "1,234"}]},
                    ],
                }
            ],
        },
    ],
}


def test_opendataloader_json_gives_headings_with_levels_and_pages() -> None:
    assert opendataloader_headings(OPENDATALOADER) == [
        Heading(1, 1, "PART I"),
        Heading(1, 3, "Nested"),
        Heading(2, 2, "Item 1. Business"),
    ]


def test_opendataloader_json_gives_every_text_in_reading_order() -> None:
    assert opendataloader_blocks(OPENDATALOADER) == [
        TextBlock(1, "PART I"),
        TextBlock(1, "Intro text wrapped."),
        TextBlock(1, "• first"),
        TextBlock(1, "Nested"),
        TextBlock(1, "• second"),
        TextBlock(2, "Item 1. Business"),
        TextBlock(2, "Revenue"),
        TextBlock(2, "1,234"),
    ]


# pymupdf4llm's page chunks: bold headings, a trailing space, a closing `#`, a name with `_`
PAGES = [
    "## **PART I** \n\n### **ITEM 1. BUSINESS**\n\nWe make *shoes*\nand apparel.\n\n",
    "#### _Risk_ factors ##\n\nSee file_name.txt for more.\n\n####### not a heading\n",
]


def test_markdown_pages_give_headings_by_hash_count() -> None:
    assert markdown_headings(PAGES) == [
        Heading(1, 2, "PART I"),
        Heading(1, 3, "ITEM 1. BUSINESS"),
        Heading(2, 4, "Risk factors"),
    ]


def test_markdown_pages_give_blank_line_blocks_without_marks() -> None:
    assert markdown_blocks(PAGES) == [
        TextBlock(1, "PART I"),
        TextBlock(1, "ITEM 1. BUSINESS"),
        TextBlock(1, "We make shoes and apparel."),
        TextBlock(2, "Risk factors"),
        TextBlock(2, "See file_name.txt for more."),
        TextBlock(2, "####### not a heading"),
    ]


def test_a_heading_parent_is_the_nearest_earlier_smaller_level() -> None:
    headings = [Heading(1, 1, "A"), Heading(1, 2, "B"), Heading(1, 3, "C"), Heading(2, 2, "D"), Heading(2, 1, "E")]
    assert heading_parents(headings) == [None, 0, 1, 0, None]


def test_matching_uses_page_and_words_and_parents_follow_matched_ancestors() -> None:
    entries = [
        Entry(0, 1, "Part I", 1, None),
        Entry(1, 2, "Item 1. Business", 1, 0),
        Entry(2, 3, "General", 2, 1),  # its parent "Item 1" is matched
        Entry(3, 2, "Item 2. Properties", 3, 0),  # on page 3, printed on page 4 by the engine: unmatched
    ]
    headings = [
        Heading(1, 1, "PART I"),
        Heading(1, 2, "Item 1. Business."),  # a period more: still the same words
        Heading(2, 2, "General"),  # a sibling of Item 1, not its child: wrong parent
        Heading(4, 2, "Item 2. Properties"),
    ]
    matched = match(headings, entries)
    assert matched == {0: 0, 1: 1, 2: 2}
    by_index = {e.index: e for e in entries}
    parents = heading_parents(headings)
    assert [parent_correct(entries[i], matched, parents, by_index) for i in (0, 1, 2)] == [True, True, False]


PARAGRAPHS = [
    Paragraph(1, "Alpha starts here", "alpha ends"),
    Paragraph(1, "Beta starts", "beta ends"),
    Paragraph(1, "Gamma starts", "gamma ends"),
    Paragraph(1, "Delta starts", "delta ends"),
    Paragraph(1, "Note one", "note ends", ordered=False),
]


def test_reading_score_counts_whole_merged_and_out_of_order_paragraphs() -> None:
    blocks = [
        TextBlock(1, "Note one, a footnote read first; note ends."),  # unordered: its place is not judged
        TextBlock(1, "Alpha starts here and runs on; al-pha ends."),  # hyphenated at a line end: whole
        TextBlock(1, "Gamma starts and gamma ends. Delta starts, delta ends."),  # two run together, early
        TextBlock(1, "Beta starts and is cut"),  # its end sits in the next block
        TextBlock(1, "beta ends."),
    ]
    score = score_reading(blocks, PARAGRAPHS)
    assert (score.paragraphs, score.found, score.whole, score.merged) == (5, 5, 4, 2)
    # alpha, gamma, delta in order after one another; beta after gamma's block: gamma was placed
    # before beta, so gamma is the fault (read before the paragraph that precedes it)
    assert (score.ordered, score.in_order, score.order_faults) == (4, 3, 1)


def test_reading_score_of_a_missing_paragraph() -> None:
    score = score_reading([TextBlock(1, "Alpha starts here, alpha ends.")], PARAGRAPHS[:2])
    assert (score.found, score.whole, score.merged, score.in_order, score.order_faults) == (1, 1, 0, 1, 1)


@pytest.mark.parametrize("path", sorted(TRUTH_FOLDER.glob("*.json")), ids=lambda p: p.stem)
def test_reading_truth_tells_its_paragraphs_apart(path) -> None:
    """Each labelled paragraph's first words are printed once in its PDF (so they find that
    paragraph and no other), and its last words follow them there (they are scored after them, so
    last words that overlap the first would never be found)."""
    truth = load_truth(path)
    document = pdfium.PdfDocument(truth.pdf)
    text = key("".join(page.get_textpage().get_text_range() for page in document))
    document.close()
    assert [p.start for p in truth.paragraphs if text.count(key(p.start)) != 1] == []
    ends = [text.find(key(p.end), text.find(key(p.start)) + len(key(p.start))) for p in truth.paragraphs]
    assert [p.end for p, end in zip(truth.paragraphs, ends, strict=True) if not key(p.end) or end < 0] == []


def test_a_child_is_measured_and_its_failure_named(tmp_path) -> None:
    """Seconds and peak memory come from the engine's own process; a failing one raises with its
    exit status and the end of what it wrote to stderr."""
    grow = "x = bytearray(64 * 1024 * 1024); x[::4096] = b'1' * len(x[::4096])"
    wall, cpu, peak_mb = measured_child([sys.executable, "-c", grow], tmp_path / "ok.txt")
    assert wall > 0 and cpu > 0 and peak_mb >= 64
    with pytest.raises(EngineFailed, match=r"failed \(3\): .*no such page"):
        measured_child(
            [sys.executable, "-c", "import sys; sys.stderr.write('no such page'); sys.exit(3)"], tmp_path / "bad.txt"
        )


def test_precision_at_the_outlines_levels_leaves_out_deeper_headings() -> None:
    # bookmarks list "Item 7" and "Item 8" (found at level 2); the reader also found "Overview"
    # and "Results" below them (level 3) and a cover title (level 1) the bookmarks leave out
    headings = [
        Heading(1, 1, "Annual Report"),
        Heading(2, 2, "Item 7. Management's Discussion"),
        Heading(2, 3, "Overview"),
        Heading(3, 3, "Results"),
        Heading(4, 2, "Item 8. Financial Statements"),
    ]
    entries = [
        Entry(0, 1, "Item 7. Management's Discussion", 2, None),
        Entry(1, 1, "Item 8. Financial Statements", 4, None),
    ]
    matched = match(headings, entries)
    assert matched == {0: 1, 1: 4}
    assert at_matched_levels(headings, matched) == 2  # the level-2 headings only: precision 2 / 2


def test_wrong_parents_are_told_apart_by_where_the_heading_went() -> None:
    # Bookmarks: Item 8 > {Report, Statements, Notes to the statements, Note 1}; Note 1 is a
    # sibling of "Notes to the statements" there. The reader sets "Statements" at Item 8's level
    # (too shallow: under nothing), so "Notes to the statements" falls under "Statements" (a
    # sibling), and nests Note 1 under "Notes to the statements" (a sibling); the Report is right.
    entries = [
        Entry(0, 1, "Item 8. Financial Statements", 50, None),
        Entry(1, 2, "Report of the Auditors", 51, 0),
        Entry(2, 2, "Consolidated Statements", 53, 0),
        Entry(3, 2, "Notes to the statements", 55, 0),
        Entry(4, 2, "Note 1. Basis of presentation", 55, 0),
    ]
    headings = [
        Heading(50, 1, "Item 8. Financial Statements"),
        Heading(51, 2, "Report of the Auditors"),
        Heading(53, 1, "Consolidated Statements"),
        Heading(55, 2, "Notes to the statements"),
        Heading(55, 3, "Note 1. Basis of presentation"),
    ]
    assert parent_faults(headings, entries, entries) == {"under a sibling": 2, "too shallow": 1, "elsewhere": 0}
