"""Slide decks printed to PDF (PowerPoint, Impress, Keynote, Beamer): one heading per slide, its
title, and nothing else on the slide a heading.

A deck is told by its pages: every one landscape, few lines on each, and text set large for the
page (the body's size at least a thirty-fifth of the page's height: slides set 18 to 28 points on
a 540-point page, Beamer 11 on 273; a landscape report sets 10 on 612). On a slide the
layout rules that find a document's headings misfire: a chart's labels, a bold call-out or a big
figure ("17,81,841 crore") are set larger than the bullets, and a title in the deck's own type is
no larger than another slide's text. So each slide's title is the largest text in its top third
(larger than the deck's body), else, on a section slide, its largest text anywhere if half again
the body's size; the title is a level-1 heading and every other line of the slide is content.
"""

from __future__ import annotations

import statistics

from rag_assets.core.corpus.blocks import BlockKind
from rag_assets.core.corpus.parsers.pdf_draft import Draft
from rag_assets.core.corpus.parsers.pdf_lines import HEADING_SCALE, Line

MIN_ASPECT = 1.2  # width over height: 4:3 is 1.33, 16:9 1.78
MIN_BODY_SHARE = 1 / 35  # the body's size over the page's height
MAX_LINES = 40  # a slide's lines (median over the deck)
_TITLE_BAND = 1 / 3  # of the page's height, from its top
_SECTION_SCALE = 1.5  # a section slide's lone title, anywhere on the slide


def is_slide_deck(pages: list[list[Line]], sizes: list[tuple[float, float]], body: float) -> bool:
    """Whether the PDF is a printed slide deck: two pages or more, all landscape, their body text
    large for the page and a median of at most `MAX_LINES` lines a page."""
    if len(pages) < 2 or body <= 0 or any(width < MIN_ASPECT * height for width, height in sizes):
        return False
    height = statistics.median(height for _, height in sizes)
    return body >= MIN_BODY_SHARE * height and statistics.median(len(lines) for lines in pages) <= MAX_LINES


def slide_title(lines: list[Line], height: float, body: float) -> Line | None:
    """The line that titles a slide (see the module), or None for a slide without one."""
    large = [line for line in lines if line.size >= HEADING_SCALE * body and line.table is None]
    top = [line for line in large if line.top < _TITLE_BAND * height]
    candidates = top or [line for line in large if line.size >= _SECTION_SCALE * body]
    if not candidates:
        return None
    return min(candidates, key=lambda line: (-line.size, line.top))


def slide_headings(drafts: list[Draft], pages: list[list[Line]], heights: list[float], body: float) -> None:
    """Each slide's title draft becomes its one heading (level 1); its other headings, content."""
    titles = {
        id(title) for lines, height in zip(pages, heights, strict=True) if (title := slide_title(lines, height, body))
    }
    for draft in drafts:
        if any(id(line) in titles for line in draft.lines):
            draft.kind, draft.level = BlockKind.HEADING, 1
        elif draft.kind is BlockKind.HEADING:
            draft.kind = BlockKind.PARAGRAPH
