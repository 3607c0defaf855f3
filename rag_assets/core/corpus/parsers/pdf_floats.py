"""Figure captions and footnotes set between a paragraph and the rest of it.

A paragraph that runs on into the next column or onto the next page is often cut by what the
page sets in between: a figure's caption at the foot of a column, the page's footnotes, the
venue line under a paper's first page. Read in order, they split one paragraph in two, and
neither half carries the whole sentence. They are moved after the paragraph, which then reads
whole; their own text is kept as their own blocks (the footnotes come after the body).
"""

from __future__ import annotations

import re

from rag_assets.core.corpus.blocks import BlockKind
from rag_assets.core.corpus.parsers.pdf_draft import Draft
from rag_assets.core.corpus.parsers.pdf_lines import SENTENCE_END, Line, opens_next_column

_CAPTION = re.compile(r"^(?:Figure|Fig\.|Table|Exhibit|Chart)\s+[0-9IVX]+[.:]?(?:\s|$)", re.IGNORECASE)
_SMALLER = 0.6  # points below the body size that make a line a footnote's, not the body's


def is_caption(text: str) -> bool:
    """A figure's or table's caption ("Figure 1: Part of the literature graph.")."""
    return bool(_CAPTION.match(text))


def _floating(draft: Draft, body: float) -> bool:
    """A caption, or text set smaller than the body (footnotes, a venue line): not the flow."""
    if draft.kind not in (BlockKind.PARAGRAPH, BlockKind.LIST_ITEM, BlockKind.HEADING):
        return False
    if any(line.table is not None for line in draft.lines):
        return False
    return is_caption(draft.lines[0].text) or all(line.size < body - _SMALLER for line in draft.lines)


def _resumes(before: Line, after: Line) -> bool:
    """Whether `after` is the first line of the next column or page, set like `before`."""
    if abs(after.size - before.size) > _SMALLER or after.bold != before.bold:
        return False
    return after.page == before.page + 1 or opens_next_column(before, after)


def float_past_breaks(drafts: list[Draft], body: float) -> list[Draft]:
    """`drafts` with every paragraph cut by captions or footnotes at a column or page break joined
    to its rest, the captions and footnotes after it (several breaks in a row are followed)."""
    drafts = list(drafts)
    i = 0
    while i < len(drafts):
        draft = drafts[i]
        j = i + 1
        while j < len(drafts) and _floating(drafts[j], body):
            j += 1
        if (
            j > i + 1
            and j < len(drafts)
            and draft.kind is BlockKind.PARAGRAPH
            and drafts[j].kind is BlockKind.PARAGRAPH
            and not _floating(draft, body)
            and not SENTENCE_END.search(draft.lines[-1].text)
            and _resumes(draft.lines[-1], drafts[j].lines[0])
        ):
            draft.lines.extend(drafts.pop(j).lines)  # the floats now stand after the whole paragraph
            continue
        i += 1
    return drafts
