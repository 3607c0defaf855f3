"""The structure of company filings (10-K, 10-Q): Parts, Items, financial statements, notes.

A filing states its outline in words: "PART II", "Item 7. Management's Discussion and
Analysis", "Consolidated Statements of Cash Flows", "Note 7 — Debt". Set bold, larger or in
capitals at the start of a line, such a line is a heading even where it ends with a period
("Item 1. Business."), and in a document with several Items its level is fixed by what it is:
Part 1, Item 2, statement (or the notes' heading) 3, note 4; the document's other headings
rank below them by style.
"""

from __future__ import annotations

import re

from rag_assets.core.corpus.blocks import BlockKind
from rag_assets.core.corpus.parsers.pdf_draft import Draft
from rag_assets.core.corpus.parsers.pdf_lines import Line

PART, ITEM, SECTION, NOTE = 1, 2, 3, 4
_PART = re.compile(r"^PART\s+(?:I{1,3}|IV|[1-4])\b\.?(?:\s*[—–-]\s*.*|\s+[A-Z].*)?$", re.IGNORECASE)
_ITEM = re.compile(r"^ITEM\s+\d{1,2}[A-C]?\b\s*[.:—–-]?", re.IGNORECASE)
_NOTE = re.compile(r"^NOTE\s+\d{1,2}[A-Z]?\b\s*[.:—–-]?\s*\S", re.IGNORECASE)
_STATEMENT = re.compile(
    r"^(?:(?:CONDENSED\s+)?(?:CONSOLIDATED|COMBINED)\s+)?(?:STATEMENTS?\s+OF\s+\w|BALANCE\s+SHEETS?\b)"
    r"|^NOTES\s+TO\s+(?:THE\s+)?(?:\w+\s+){0,3}FINANCIAL\s+STATEMENTS\b|^REPORT\s+OF\s+INDEPENDENT\s+REGISTERED",
    re.IGNORECASE,
)
_LABEL = re.compile(r"^(?:PART\s+(?:I{1,3}|IV|[1-4])|ITEM\s+\d{1,2}[A-C]?|NOTE\s+\d{1,2})\.?$", re.IGNORECASE)
_MAX_WORDS = 20
MIN_ITEMS = 3  # Items a document must head to be read as a filing


def filing_rank(text: str) -> int | None:
    """PART, ITEM, SECTION (a financial statement, the notes to them, the auditor's report) or
    NOTE for a line that opens one of them, else None."""
    text = text.strip()
    if len(text.split()) > _MAX_WORDS:
        return None
    if _PART.match(text):
        return PART
    if _ITEM.match(text):
        return ITEM
    if _NOTE.match(text):
        return NOTE
    if _STATEMENT.match(text) and not text.endswith("."):
        return SECTION
    return None


def join_label(text: str) -> str:
    """ "ITEM 1.<TAB>Business" (a label set at a tab stop before its title) as one heading text."""
    parts = text.split("\t")
    if len(parts) == 2 and _LABEL.match(parts[0].strip()):
        return f"{parts[0].strip()} {parts[1].strip()}"
    return text


def filing_levels(ranks: list[int | None], styles: list[tuple]) -> list[int] | None:
    """Levels of a filing's headings (`ranks` from `filing_rank`; `styles` sort the first-level
    style first, `pdf_headings.filing_style`), or None when the document heads fewer than
    `MIN_ITEMS` Items: Parts, Items, statements and notes at their own levels, the other headings
    below them in their style order."""
    if sum(rank == ITEM for rank in ranks) < MIN_ITEMS:
        return None
    others = sorted({style for rank, style in zip(ranks, styles, strict=True) if rank is None})
    below = {style: NOTE + 1 + index for index, style in enumerate(others)}
    return [rank if rank is not None else below[style] for rank, style in zip(ranks, styles, strict=True)]


# "Item 4. Controls and Procedures." in the body's own type: the label, a period, a capital
_PLAIN_ITEM = re.compile(r"^(?i:ITEM)\s+\d{1,2}[A-C]?\.\s+[A-Z]")
_TITLE_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]{3,}")
_MAX_TITLE_LINES = 2


def opens_item(line: Line) -> bool:
    """Whether a line opens with an Item's label and a capital ("Item 1A. Risk Factors."), set in
    any type: after a sentence's end such a line starts a new block."""
    return bool(_PLAIN_ITEM.match(line.text.strip()))


def _item_title_lines(draft: Draft) -> int:
    """How many of a paragraph's first lines are an Item's title set in the body's type (0: none):
    the paragraph opens with "Item N." and a title in capitalised words that ends with a period
    on its first or second line ("Item 3. Quantitative and Qualitative Disclosures About" /
    "Market Risk."), or the paragraph is that title alone."""
    if draft.kind is not BlockKind.PARAGRAPH or not opens_item(draft.lines[0]):
        return 0
    title = ""
    for count, line in enumerate(draft.lines[:_MAX_TITLE_LINES], start=1):
        title = f"{title} {line.text.strip()}".strip()
        if title.endswith(".") or count == len(draft.lines):
            words = _TITLE_WORD.findall(title.split(".", 1)[1])
            capitalised = sum(word[0].isupper() for word in words)
            fits = len(title.split()) <= _MAX_WORDS and "\t" not in title
            return count if fits and words and capitalised >= 0.6 * len(words) else 0
    return 0


def plain_item_headings(drafts: list[Draft]) -> list[Draft]:
    """A filing that sets some Items in the body's own type (JPMorgan's 10-Qs: "Item 4. Controls
    and Procedures." opening a paragraph, neither bold nor larger): each becomes a heading of its
    own, the rest of its paragraph the text under it. Only where the document heads at least
    `MIN_ITEMS` Items in all, so a paragraph that happens to open with an Item's name in a
    document that is no filing stays a paragraph."""
    titles = [_item_title_lines(draft) for draft in drafts]
    styled = sum(1 for d in drafts if d.kind is BlockKind.HEADING and filing_rank(d.lines[0].text) == ITEM)
    if not any(titles) or styled + sum(1 for count in titles if count) < MIN_ITEMS:
        return drafts
    out: list[Draft] = []
    for draft, count in zip(drafts, titles, strict=True):
        if not count:
            out.append(draft)
            continue
        out.append(Draft(BlockKind.HEADING, draft.lines[:count]))
        if draft.lines[count:]:
            out.append(Draft(BlockKind.PARAGRAPH, draft.lines[count:]))
    return out


_PAGE_REFERENCE = re.compile(r"(?:\t|\s)(?:\d{1,3}|[A-Z]-\d{1,3})$")


def _texts(lines: list[Line]) -> list[str]:
    """A page's line texts, a table's rows as "label<TAB>values" (a contents page is often read as one)."""
    texts: list[str] = []
    for line in lines:
        if line.table is None:
            texts.append(line.text)
        else:
            texts.extend("\t".join([label, *values]).strip() for label, values in line.table.rows)
    return texts


def contents_pages(pages: list[list[Line]]) -> set[int]:
    """1-based numbers of the pages that list a filing's contents: at least three lines that
    open a Part or an Item and end with a page number ("Item 7. Management's Discussion ... 31")."""
    found = set()
    for number, lines in enumerate(pages, start=1):
        entries = sum(
            1
            for text in _texts(lines)
            if filing_rank(text.split("\t")[0]) in (PART, ITEM) and _PAGE_REFERENCE.search(text)
        )
        if entries >= MIN_ITEMS:
            found.add(number)
    return found


def flatten_cover(drafts: list[Draft]) -> None:
    """A filing's cover page (page 1, before its first Part or Item) heads the document with its
    largest lines ("FORM 10-K", the company); its other styled lines (the check boxes' report
    kinds, the registrant's details) are the cover's text, not a cascade of headings."""
    ranked = [d for d in drafts if d.kind is BlockKind.HEADING and filing_rank(d.lines[0].text) in (PART, ITEM)]
    if sum(filing_rank(d.lines[0].text) == ITEM for d in ranked) < MIN_ITEMS or ranked[0].lines[0].page == 1:
        return
    cover = [d for d in drafts if d.kind is BlockKind.HEADING and d.lines[0].page == 1]
    if not cover:
        return
    largest = max(d.lines[0].size for d in cover)
    for draft in cover:
        if draft.lines[0].size < largest - 0.5:
            draft.kind = BlockKind.PARAGRAPH
