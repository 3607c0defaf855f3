"""Which PDF lines are headings, and at what level, when the layout alone says so."""

from __future__ import annotations

import re
from itertools import pairwise

from rag_assets.core.corpus.blocks import BlockKind
from rag_assets.core.corpus.parsers.pdf_draft import BULLET, Draft
from rag_assets.core.corpus.parsers.pdf_filing import filing_levels, filing_rank
from rag_assets.core.corpus.parsers.pdf_lines import HEADING_SCALE, SENTENCE_END, Line

_MAX_HEADING_WORDS = 18
_NUMBERED = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){0,5})\.?\s+\S")


def is_heading_line(line: Line, body: float) -> bool:
    text = line.text.strip()
    words = len(text.split())
    if not text or words > _MAX_HEADING_WORDS or "\t" in text or not any(c.isalpha() for c in text):
        return False
    if text.startswith("(") and text.endswith(")"):
        return False  # "(Dollars in millions)": a table's caption
    if filing_rank(text) is not None and (line.bold or line.size >= body * HEADING_SCALE or text.isupper()):
        return True  # "Item 1. Business.", "PART II", "Note 7 — Debt"
    if line.size >= body * HEADING_SCALE:
        return not (words > 8 and text.endswith("."))
    return line.bold and line.size >= body * 0.95 and not SENTENCE_END.search(text) and not BULLET.match(text)


def heading_levels(drafts: list[Draft]) -> None:
    """Level by style rank (larger, then bold, first); numbered headings by their numbering."""
    headings = [d for d in drafts if d.kind is BlockKind.HEADING]
    styles = sorted({(round(d.lines[0].size * 2) / 2, d.lines[0].bold) for d in headings}, reverse=True)
    rank = {style: index + 1 for index, style in enumerate(styles)}
    numbered = [(d, _NUMBERED.match(d.lines[0].text)) for d in headings]
    numbered_count = sum(1 for _, match in numbered if match)
    # Numbering decides when the document numbers its sections; the styles above the first-level
    # numbered headings (a title, part headings) stay above them.
    base = min(
        (rank[(round(d.lines[0].size * 2) / 2, d.lines[0].bold)] for d, m in numbered if m and "." not in m.group(1)),
        default=1,
    )
    for draft, match in numbered:
        style_level = rank[(round(draft.lines[0].size * 2) / 2, draft.lines[0].bold)]
        if match and numbered_count >= 2:
            draft.level = base - 1 + match.group(1).count(".") + 1
        else:
            draft.level = style_level
    ranks = [filing_rank(d.lines[0].text) for d in headings]
    capitals = [d.lines[0].text.isupper() for d in headings]
    levels = filing_levels(ranks, [d.level for d in headings], capitals)
    for draft, level in zip(headings, levels or [], strict=False):
        draft.level = level


def promote_lead_lines(drafts: list[Draft], body: float) -> None:
    """A lone short line at body size that opens a paragraph below it ("History and
    standardization" above its text) is a heading one level below the styled ones, unless the
    paragraph is set right under it (a list's lines, the first one short, not a heading)."""
    lowest = max((d.level for d in drafts if d.kind is BlockKind.HEADING), default=0)
    for draft, following in pairwise(drafts):
        line = draft.lines[0]
        text = line.text.strip()
        if (
            draft.kind is BlockKind.PARAGRAPH
            and len(draft.lines) == 1
            and following.kind is BlockKind.PARAGRAPH
            and not following.after_break
            and len(following.lines) >= 2
            and following.lines[0].page == line.page
            and abs(line.size - body) < 0.6
            and abs(following.lines[0].x0 - line.x0) < line.size
            and len(text.split()) <= 8
            and text[:1].isupper()
            and not SENTENCE_END.search(text)
            and line.x1 - line.x0 < 0.6 * (max(ln.x1 for ln in following.lines) - following.lines[0].x0)
        ):
            draft.kind, draft.level = BlockKind.HEADING, lowest + 1
