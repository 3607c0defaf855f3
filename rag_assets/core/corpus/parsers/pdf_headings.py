"""Which PDF lines are headings, and at what level, when the layout alone says so."""

from __future__ import annotations

import re
from itertools import pairwise

from rag_assets.core.corpus.blocks import BlockKind
from rag_assets.core.corpus.parsers.pdf_draft import BULLET, Draft
from rag_assets.core.corpus.parsers.pdf_filing import filing_levels, filing_rank
from rag_assets.core.corpus.parsers.pdf_lines import HEADING_SCALE, SENTENCE_END, Line

_MAX_HEADING_WORDS = 18
_SMALL_CAPS_SCALE = 0.75  # small capitals are set at about 70-80% of the body's size
_ONE_WORD_TITLE_LETTERS = 6
_LETTERED = re.compile(r"^\((?:[a-z]{1,2}|\d{1,2})\)\s+[A-Z]")
_NUMBERED = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){0,5})\.?\s+\S")


def is_heading_line(line: Line, body: float) -> bool:
    text = line.text.strip()
    words = len(text.split())
    if not text or words > _MAX_HEADING_WORDS or "\t" in text or not any(c.isalpha() for c in text):
        return False
    if sum(c.isalnum() for c in text) < 2:
        return False  # a check box's mark on a filing's cover ("x", "o", "ý"), not a heading
    if text.startswith("(") and text.endswith(")"):
        return False  # "(Dollars in millions)": a table's caption
    if filing_rank(text) is not None and (line.bold or line.size >= body * HEADING_SCALE or text.isupper()):
        return True  # "Item 1. Business.", "PART II", "Note 7 — Debt"
    if line.size >= body * HEADING_SCALE:
        return not (words > 8 and text.endswith("."))
    emphasised = line.bold or line.italic  # a body-size heading set in bold or italic
    # a bold "(c) Applicability" heads a paragraph of a regulation; other marked lines are items
    # (set in the rule's own type, which may be smaller than the body)
    lettered = line.bold and _LETTERED.match(text) and words <= 8 and line.size >= body * 0.85
    if lettered and not SENTENCE_END.search(text):
        return True
    if SENTENCE_END.search(text):
        return False
    # A title set in capitals, or in small capitals (capitals a size or two below the body's), is
    # a heading by its type, bold or not: two words at least, or one long word in bold
    # ("INTRODUCTION"; "NONE", "NOTE" are labels), opening with a letter or digit (a cover's
    # "☐ TRANSITION REPORT ..." is a check box's label); numbered or not ("1. A SECTION").
    one_word_title = emphasised and sum(c.isalpha() for c in text) >= _ONE_WORD_TITLE_LETTERS
    if (
        capitals(text)
        and (words >= 2 or one_word_title)
        and text[:1].isalnum()
        and line.size >= body * _SMALL_CAPS_SCALE
    ):
        return True
    return emphasised and line.size >= body * 0.95 and not BULLET.match(text)


def capitals(text: str) -> bool:
    """Whether the text is set in capitals: four letters at least, none of them lower case."""
    return text.isupper() and sum(c.isalpha() for c in text) >= 4


def italics_are_emphasis(pages: list[list[Line]], body: float) -> bool:
    """Whether the document sets its body-size headings in bold: its italics are then emphasis
    (a product name, a term), not headings; a document without bold headings may set them in italic."""
    return any(
        line.bold and not line.italic and abs(line.size - body) < 0.6 and is_heading_line(line, body)
        for lines in pages
        for line in lines
    )


def _style(line: Line) -> tuple[float, bool, bool, bool]:
    """A heading's style, ranked larger first, then in capitals, then bold, then italic."""
    return round(line.size * 2) / 2, capitals(line.text), line.bold, line.italic


def filing_style(line: Line) -> tuple[float, bool, bool, bool]:
    """A filing heading's style, ranked larger first, then in capitals, then bold, then italic: a
    filing's sections are set in capitals over its bold sub-sections of the same size
    ("CONSOLIDATED RESULTS OF OPERATIONS" over "Business Developments", both 12 pt, at JPMorgan)."""
    return -round(line.size * 2) / 2, not line.text.isupper(), not line.bold, not line.italic


def heading_levels(drafts: list[Draft]) -> None:
    """Level by style rank (larger, then bold, first); numbered headings by their numbering."""
    headings = [d for d in drafts if d.kind is BlockKind.HEADING]
    styles = sorted({_style(d.lines[0]) for d in headings}, reverse=True)
    rank = {style: index + 1 for index, style in enumerate(styles)}
    numbered = [(d, _NUMBERED.match(d.lines[0].text)) for d in headings]
    numbered_count = sum(1 for _, match in numbered if match)
    # Numbering decides when the document numbers its sections; the styles above the first-level
    # numbered headings (a title, part headings) stay above them.
    base = min(
        (rank[_style(d.lines[0])] for d, m in numbered if m and "." not in m.group(1)),
        default=1,
    )
    for draft, match in numbered:
        style_level = rank[_style(draft.lines[0])]
        if match and numbered_count >= 2:
            draft.level = base - 1 + match.group(1).count(".") + 1
        else:
            draft.level = style_level
    ranks = [filing_rank(d.lines[0].text) for d in headings]
    levels = filing_levels(ranks, [filing_style(d.lines[0]) for d in headings])
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
