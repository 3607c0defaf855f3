"""Reading order and paragraph integrity against paragraphs labelled by hand.

A truth file (benchmarks/data/reading_order/*.json) names a PDF and its paragraphs in reading
order, each by page, its first words (`start`) and its last words (`end`); `"ordered": false` marks
one whose place is a convention (a footnote) and is judged whole, not placed. Texts are compared
as benchmarks/heading_truth.py's `key` compares them (case, spaces, punctuation and hyphens aside,
so a word hyphenated at a line end still matches). Over an engine's text blocks in its reading
order:

- found: the paragraph's first words appear in a block;
- whole: one block holds its first words and, after them, its last words (not cut in two);
- merged: that block also holds another labelled paragraph's first words (run into a neighbour);
- in order: found after the previous ordered paragraph that was found (by block, then by place
  in the block); an out-of-order paragraph is an order fault.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from benchmarks.heading_truth import key
from benchmarks.pdf_engine_outputs import TextBlock


@dataclass(frozen=True)
class Paragraph:
    page: int
    start: str
    end: str
    ordered: bool = True


@dataclass(frozen=True)
class ReadingTruth:
    pdf: Path
    paragraphs: list[Paragraph]


@dataclass(frozen=True)
class ReadingScore:
    paragraphs: int
    found: int
    whole: int
    merged: int
    ordered: int  # paragraphs whose place is judged
    in_order: int

    @property
    def order_faults(self) -> int:
        return self.ordered - self.in_order


def load_truth(path: Path) -> ReadingTruth:
    """A truth file: its PDF (beside it) and its paragraphs."""
    data = json.loads(path.read_text())
    paragraphs = [
        Paragraph(int(p["page"]), p["start"], p["end"], bool(p.get("ordered", True))) for p in data["paragraphs"]
    ]
    return ReadingTruth(path.parent / data["pdf"], paragraphs)


def _place(keys: list[str], words: str) -> tuple[int, int] | None:
    """(block, offset) where `words` first appear, None where nowhere."""
    for index, text in enumerate(keys):
        offset = text.find(words)
        if offset >= 0:
            return index, offset
    return None


def score_reading(blocks: list[TextBlock], paragraphs: list[Paragraph]) -> ReadingScore:
    """`blocks` (an engine's reading order) against the labelled `paragraphs`."""
    keys = [key(block.text) for block in blocks]
    starts = [key(p.start) for p in paragraphs]
    found = whole = merged = ordered = in_order = 0
    last: tuple[int, int] | None = None
    for number, paragraph in enumerate(paragraphs):
        place = _place(keys, starts[number])
        ordered += paragraph.ordered
        if place is None:
            continue
        found += 1
        block, offset = place
        if keys[block].find(key(paragraph.end), offset + len(starts[number])) >= 0:
            whole += 1
        if any(other != number and s in keys[block] for other, s in enumerate(starts)):
            merged += 1
        if paragraph.ordered:
            in_order += last is None or place > last
            last = place
    return ReadingScore(len(paragraphs), found, whole, merged, ordered, in_order)
